r"""The passages stage: words and chunks as Python's re and casefold see them, decisions equal to
a brute-force reference (every chunk pair, exact Jaccard), planted edited passages found and
unrelated text untouched, the cascade of the drop rule, the same decisions for any piece size,
worker count and executor, the real CLI (explain shows the spans with their similarity), and
the configuration guard."""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from helpers import db_rows
from nearcopies import Writer

import sadedup.stages.passages as pstage
from sadedup import native, pipeline
from sadedup.config import PassagesConfig

# LSH settings whose S-curve is ~1 at the thresholds used with them, so the stage's decisions
# are the reference's (every pair, exact Jaccard): P(candidate | J = 0.5) = 1 - 0.75^64
FULL_RECALL = ["passages.num_perm=128", "passages.bands=64", "passages.rows=2", "passages.verify=exact"]
# what finds passages edited at 5%: small chunks every few words (a copy is never more than
# 2 words off the grid), word bigrams (95% of the bigrams of a 5%-edited text survive 90%),
# a threshold and a banding below the similarity of such copies
EDITED = ["passages.words=50", "passages.stride=5", "passages.ngram=2", "passages.threshold=0.6",
          "passages.num_perm=128", "passages.bands=32", "passages.rows=4"]


def write_jsonl(path: Path, texts: list[str], extra: list[dict] | None = None) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"id": f"d{i}", "text": t, **(extra[i] if extra else {})}, ensure_ascii=False) + "\n")
    return path


def run(tmp_path: Path, texts: list[str], *sets: str, name: str = "w", executor: str = "inline",
        workers: int | None = None, extra: list[dict] | None = None) -> Path:
    inp = tmp_path / f"{name}.jsonl"
    if not inp.exists():
        write_jsonl(inp, texts, extra)
    w = tmp_path / name
    pipeline.run([inp], tmp_path / f"{name}-out.jsonl", w, None, ["stages=passages", *sets], executor=executor,
                 workers=workers)
    return w


def spans(w: Path) -> list[tuple]:
    return db_rows(w, "SELECT doc_id, char_start, char_end, src_doc_id, src_char_start, src_char_end, similarity "
                      "FROM spans WHERE method = 'passages' ORDER BY doc_id, char_start, char_end")


def dropped(w: Path) -> set[int]:
    return {d for (d,) in db_rows(w, "SELECT doc_id FROM documents WHERE reason = 'passage_coverage'")}


def settings(sets: list[str]) -> PassagesConfig:
    kw = {}
    for s in sets:
        k, v = s.split("=")
        k = k.split(".")[1]
        kw[k] = type(getattr(PassagesConfig(), k))(v)
    return PassagesConfig(**kw)


# ---- the reference: every chunk pair, exact Jaccard, in plain Python ------------------------

def words(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group().casefold()) for m in re.finditer(r"\w+", text)]


def chunks(text: str, cfg: PassagesConfig) -> list[tuple[int, int, int, frozenset]]:
    """(first word, char start, char end, shingle set) of every chunk, as the contract says."""
    w = words(text)
    n = len(w)
    if n == 0:
        return []
    k_count = 1 if n <= cfg.words else -(-(n - cfg.words) // cfg.stride) + 1
    out = []
    for k in range(k_count):
        a, b = k * cfg.stride, min(k * cfg.stride + cfg.words, n)
        f = [x[2] for x in w[a:b]]
        sh = frozenset(tuple(f[i:i + cfg.ngram]) for i in range(len(f) - cfg.ngram + 1))
        out.append((a, w[a][0], w[b - 1][1], sh))
    return out


def reference(texts: list[str], cfg: PassagesConfig, order: list[int] | None = None):
    """(spans as the stage records them, dropped doc ids): documents visited in `order`."""
    order = list(range(len(texts))) if order is None else order
    flat = [(d, *c) for d in order for c in chunks(texts[d], cfg)]
    alive: dict[int, bool] = {}
    out, gone = [], set()
    by_doc: dict[int, list[int]] = {}
    for j, c in enumerate(flat):
        by_doc.setdefault(c[0], []).append(j)
    for d in order:
        cut: list[tuple[int, int]] = []
        for j in by_doc.get(d, []):
            dj, _, sj, ej, shj = flat[j]
            best = None
            for i in range(j):
                di, _, si, ei, shi = flat[i]
                if di != d and not alive.get(di, True):
                    continue
                if di == d and sj < ei:      # overlapping chunks of one document
                    continue
                if not shi or not shj:
                    continue
                jac = len(shi & shj) / len(shi | shj)
                if jac >= cfg.threshold and (best is None or jac > best[0]):
                    best = (jac, i)
            if best is not None:
                i = best[1]
                out.append((d, sj, ej, flat[i][0], flat[i][2], flat[i][3], best[0]))
                cut.append((sj, ej))
        covered = set()
        for a, b in cut:
            covered.update(range(a, b))
        n = len(texts[d])
        alive[d] = not (n > 0 and len(covered) / n > cfg.drop_fraction)
        if not alive[d]:
            gone.add(d)
    return sorted(out), gone


# ---- corpora ----------------------------------------------------------------------------------

@dataclass
class PlantedPassages:
    texts: list[str]
    # per planted copy: (doc, char start, char end, passage, copy number: 0 is the verbatim first)
    copies: list[tuple[int, int, int, int, int]] = field(default_factory=list)


def planted_passages(seed: int, n_passages: int = 100, copies: int = 3, passage_words: int = 400,
                     rate: float = 0.05, host_words: tuple[int, int] = (100, 500)) -> PlantedPassages:
    """`n_passages` passages of English-like prose, each inserted into `copies` distinct host
    documents of their own prose (before and after it): the first copy in document order
    verbatim, the others with each word replaced with probability `rate`."""
    w = Writer(seed)
    rng = random.Random(seed)
    n_docs = n_passages * copies
    slots = list(range(n_docs))
    rng.shuffle(slots)
    texts: list[str] = [""] * n_docs
    out = PlantedPassages(texts)
    for p in range(n_passages):
        where = sorted(slots[p * copies:(p + 1) * copies])
        passage = w.document(passage_words).replace("\n\n", " ")
        for c, d in enumerate(where):
            body = passage if c == 0 else w.near_copy(passage, rate)
            before = w.document(rng.randint(*host_words))
            after = w.document(rng.randint(*host_words))
            start = len(before) + 2
            texts[d] = f"{before}\n\n{body}\n\n{after}"
            out.copies.append((d, start, start + len(body), p, c))
    return out


def mixed_corpus(seed: int) -> list[str]:
    """Small documents with every case the reference checks: passages planted verbatim and
    edited, a passage repeated inside one document, multi-byte and case-folded text (the same
    words in other cases: ß/SS, Σ/σ/ς, ﬁ/fi), documents shorter than a chunk or than an n-gram,
    empty ones, and documents that are almost all copy (the drop rule, and its cascade)."""
    w = Writer(seed)
    rng = random.Random(seed)
    pool = [w.document(rng.randint(40, 120)) for _ in range(6)]
    greek = "Σίσυφος ΣΟΦΟΣ σοφός straße STRASSE ﬁnance FINANCE İstanbul naïve Ǆemal 東京 _id_ x²"
    docs: list[str] = []
    for i in range(40):
        kind = rng.random()
        host = w.document(rng.randint(5, 80))
        if kind < 0.35:
            p = rng.choice(pool)
            body = p if rng.random() < 0.5 else w.near_copy(p, 0.03)
            docs.append(f"{host}\n{body}\n{w.document(rng.randint(1, 30))}")
        elif kind < 0.45:
            p = rng.choice(pool)
            docs.append(f"{p} {host} {p.upper()}")
        elif kind < 0.55:
            docs.append(f"{greek} {host} {greek.upper() if rng.random() < 0.5 else greek.lower()}")
        elif kind < 0.65:
            docs.append(rng.choice(pool) + " " + w.document(3))         # mostly copy: dropped
        elif kind < 0.7:
            docs.append(rng.choice(["", "   ", "one", "Two words", "!!! ..."]))
        else:
            docs.append(host)
    return docs


# ---- words and chunks -----------------------------------------------------------------------

def test_words_are_pythons_w_matches_compared_case_folded():
    tables = pstage.word_tables()
    rng = random.Random(3)
    texts = ["Hello, World! ÉCOLE straße STRASSE İstanbul ﬁne FINE Ǆ ǅ ǆ ΣΑΣ σας _x_ 42abc naïve 東京都 ok‿ok",
             "", "   ", "a", "e\u0301t\u00e9 \u0130I\u0131i \U0001D400\U0001D41A ①② ٣٤ \u0660 ۱۲",
             "x" * 50, "\u212a\u212b k å"]
    for _ in range(400):
        texts.append("".join(chr(rng.choice([rng.randrange(0x20, 0x7f), rng.randrange(0xa0, 0x2fff),
                                              rng.randrange(0x3000, 0xd7ff), rng.randrange(0x10000, 0x30000)]))
                             for _ in range(rng.randrange(0, 80))))
    by_fold: dict[str, int] = {}
    for t in texts:
        h, cs, ce = native.words(t.encode("utf-8"), tables)
        ref = words(t)
        assert list(zip(cs.tolist(), ce.tolist())) == [(a, b) for a, b, _ in ref], t
        for (_, _, f), x in zip(ref, h.tolist()):
            assert by_fold.setdefault(f, x) == x, f          # one case fold, one hash
    assert len(set(by_fold.values())) == len(by_fold)        # and distinct folds, distinct hashes


@pytest.mark.parametrize("n_words,expect", [(0, []), (1, [(0, 1)]), (7, [(0, 7)]), (10, [(0, 10)]),
                                            (11, [(0, 10), (4, 11)]), (14, [(0, 10), (4, 14)]),
                                            (15, [(0, 10), (4, 14), (8, 15)]), (18, [(0, 10), (4, 14), (8, 18)])])
def test_chunks_start_at_every_multiple_of_stride_and_the_last_ends_at_the_last_word(n_words, expect):
    cfg = PassagesConfig(words=10, stride=4, ngram=2)
    text = " ".join(f"w{i}" for i in range(n_words))
    starts = [x[0] for x in words(text)]
    ends = [x[1] for x in words(text)]
    want = [(starts[a], ends[b - 1]) for a, b in expect]
    assert [(c[1], c[2]) for c in chunks(text, cfg)] == want
    if not n_words:
        return
    data = np.frombuffer(text.encode(), dtype=np.uint8)
    s, e = np.array([0], np.int64), np.array([len(data)], np.int64)
    nw, nc = native.passage_count(data, s, e, pstage.word_tables(), cfg.words, cfg.stride)
    assert nw.tolist() == [n_words] and nc.tolist() == [len(expect)]
    sig = np.empty((len(expect), 16), dtype=np.uint32)
    _, perm = pstage.seeds(PassagesConfig(num_perm=16, bands=2, rows=8))
    nsh, cs, ce = native.passage_minhash(data, s, e, pstage.word_tables(), cfg.words, cfg.stride, cfg.ngram, 1, perm,
                                         np.array([0, len(expect)]), sig)
    assert list(zip(cs.tolist(), ce.tolist())) == want
    assert nsh.tolist() == [max(b - a - cfg.ngram + 1, 0) for a, b in expect]


def test_chunk_signatures_are_the_minima_over_each_chunks_shingles():
    """The kernel takes minima per block of stride shingles and combines them; the result must
    be the plain minimum over each chunk's own shingles, for any words / stride / ngram."""
    tables = pstage.word_tables()
    w = Writer(5)
    text = w.document(700)
    data = np.frombuffer(text.encode(), dtype=np.uint8)
    s, e = np.array([0], np.int64), np.array([len(data)], np.int64)
    for words_, stride, ngram in [(256, 128, 5), (50, 5, 2), (10, 10, 3), (33, 7, 1), (12, 5, 12), (9, 4, 11)]:
        if ngram > words_:
            continue
        cfg = PassagesConfig(words=words_, stride=stride, ngram=ngram, num_perm=24, bands=3, rows=8)
        seed, perm = pstage.seeds(cfg)
        _, nc = native.passage_count(data, s, e, tables, words_, stride)
        sig = np.empty((int(nc[0]), 24), dtype=np.uint32)
        nsh, _, _ = native.passage_minhash(data, s, e, tables, words_, stride, ngram, seed, perm,
                                           np.array([0, nc[0]]), sig)
        # the same chunks' shingle sets, from the exact-verification kernel
        k = np.arange(int(nc[0]), dtype=np.int64)
        H, offs, counts = native.passage_sets(data, s, e, tables, words_, stride, ngram, seed, np.zeros_like(k), k,
                                              np.maximum(nsh, 0))
        mult = (perm.astype(np.uint64) * np.uint64(0x9E3779B9) & np.uint64(0xFFFFFFFF)) | np.uint64(1)
        for c in range(len(k)):
            hs = (H[offs[c]:offs[c] + counts[c]] >> np.uint64(32)).astype(np.uint64)
            if not len(hs):
                assert nsh[c] == 0 and (sig[c] == 0xFFFFFFFF).all()
                continue
            x = ((hs[:, None] ^ perm.astype(np.uint64)[None, :]) * mult[None, :]) & np.uint64(0xFFFFFFFF)
            x ^= x >> np.uint64(15)
            assert (x.min(axis=0).astype(np.uint32) == sig[c]).all(), (words_, stride, ngram, c)


# ---- decisions against the reference ------------------------------------------------------------

@pytest.mark.parametrize("seed,sets", [
    (1, ["passages.words=20", "passages.stride=5", "passages.ngram=3", "passages.threshold=0.5"]),
    (2, ["passages.words=12", "passages.stride=12", "passages.ngram=1", "passages.threshold=0.7",
         "passages.drop_fraction=0.5"]),
    (3, ["passages.words=30", "passages.stride=7", "passages.ngram=2", "passages.threshold=0.55"]),
])
def test_decisions_equal_the_brute_force_reference(tmp_path, seed, sets):
    texts = mixed_corpus(seed)
    sets = sets + FULL_RECALL
    w = run(tmp_path, texts, *sets)
    want, gone = reference(texts, settings(sets))
    got = spans(w)
    assert len(want) > 20 and gone
    assert [g[:6] for g in got] == [x[:6] for x in want]
    assert np.allclose([g[6] for g in got], [x[6] for x in want], rtol=0, atol=1e-12)
    assert dropped(w) == gone
    # removed_chars: the union of the kept documents' spans
    kept = db_rows(w, "SELECT sum(n_chars) FROM documents WHERE status = 'kept'")[0][0]
    out = "".join(json.loads(x)["text"] for x in (tmp_path / "w-out.jsonl").read_text().splitlines())
    detail = json.loads(db_rows(w, "SELECT detail FROM stages WHERE stage = 'passages' AND shard = -1")[0][0])
    assert kept - len(out) == detail["removed_chars"]


def test_visiting_order_follows_the_priority_field(tmp_path):
    w_ = Writer(8)
    p = w_.document(120)
    texts = [f"{w_.document(40)} {p}", f"{w_.document(40)} {p}", f"{w_.document(40)} {p}"]
    prio = [{"score": 1}, {"score": 5}, {"score": 3}]
    sets = ["passages.words=20", "passages.stride=5", "passages.ngram=3", "input.priority=score", *FULL_RECALL]
    w = run(tmp_path, texts, *sets, extra=prio)
    want, gone = reference(texts, settings([s for s in sets if s.startswith("passages.")]), order=[1, 2, 0])
    assert [g[:6] for g in spans(w)] == [x[:6] for x in want]
    assert {g[0] for g in spans(w)} == {0, 2} and {g[3] for g in spans(w) if g[0] != 1} == {1}


def test_a_dropped_documents_chunks_make_nothing_later_a_duplicate(tmp_path):
    """B is A's text and a little more (dropped: over 80% cut); C repeats B's new part, which
    only B had: C stays whole, because a dropped document is never the copy kept."""
    w_ = Writer(9)
    a, new = w_.document(300), w_.document(40)
    texts = [a, f"{a} {new}", f"{w_.document(200)} {new}", f"{w_.document(100)} {a}"]
    sets = ["passages.words=20", "passages.stride=5", "passages.ngram=3", *FULL_RECALL]
    w = run(tmp_path, texts, *sets)
    assert dropped(w) == {1}
    by_doc = {}
    for s in spans(w):
        by_doc.setdefault(s[0], []).append(s)
    assert 0 not in by_doc and 2 not in by_doc
    assert by_doc[3] and all(s[3] == 0 for s in by_doc[3])
    want, gone = reference(texts, settings(sets))
    assert [x[:6] for x in want] == [x[:6] for x in spans(w)] and gone == {1}


# ---- planted edited passages ----------------------------------------------------------------------

def coverage(planted: PlantedPassages, w: Path) -> dict[str, float]:
    """Characters cut in the edited later copies, in the first copies, and outside any copy."""
    cut: dict[int, list[tuple[int, int]]] = {}
    for d, a, b, *_ in spans(w):
        cut.setdefault(d, []).append((a, b))
    masks = {d: np.zeros(len(planted.texts[d]), dtype=bool) for d in cut}
    for d, rs in cut.items():
        for a, b in rs:
            masks[d][a:b] = True
    edited = first = inside = 0
    edited_total = 0
    for d, a, b, _, c in planted.copies:
        m = masks.get(d)
        n = int(m[a:b].sum()) if m is not None else 0
        inside += n
        if c == 0:
            first += n
        else:
            edited += n
            edited_total += b - a
    total = sum(int(m.sum()) for m in masks.values())
    return {"recall": edited / edited_total, "precision": inside / max(total, 1), "first_cut": first,
            "cut": total}


def test_planted_edited_passages_are_cut_and_the_first_copies_stay(tmp_path):
    """The acceptance corpus: 100 passages of 400 words, each in 3 distinct documents (first
    verbatim, then 5% of the words replaced)."""
    planted = planted_passages(21)
    w = run(tmp_path, planted.texts, *EDITED, "run.workers=2", executor="local")
    m = coverage(planted, w)
    assert m["recall"] >= 0.9 and m["precision"] >= 0.9 and m["first_cut"] == 0, m
    assert not dropped(w)


def test_unrelated_text_is_untouched(tmp_path):
    w_ = Writer(13)
    texts = [w_.document(random.Random(i).randint(50, 900)) for i in range(150)]
    for sets in ([], EDITED):
        w = run(tmp_path, texts, *sets, name=f"w{len(sets)}")
        assert spans(w) == [] and not dropped(w)


# ---- the same decisions for any piece size, worker count and executor --------------------------------

def test_the_same_decisions_for_any_piece_size_and_worker_count(tmp_path, monkeypatch):
    planted = planted_passages(4, n_passages=30, passage_words=200, host_words=(20, 200))
    one = run(tmp_path, planted.texts, *EDITED, name="one")
    monkeypatch.setattr(pstage, "CHUNK_BYTES", 20_000)
    many = run(tmp_path, planted.texts, *EDITED, name="many", executor="local", workers=2)
    pieces = db_rows(many, "SELECT count(*) FROM stages WHERE stage = 'passages' AND shard >= 0")[0][0]
    assert pieces >= 5
    assert spans(many) == spans(one) and spans(one)
    assert dropped(many) == dropped(one)
    assert (tmp_path / "many-out.jsonl").read_bytes() == (tmp_path / "one-out.jsonl").read_bytes()
    a = run(tmp_path, planted.texts, *EDITED, "passages.verify=exact", name="exact-many", workers=2,
            executor="local")
    monkeypatch.setattr(pstage, "CHUNK_BYTES", 32 << 20)
    b = run(tmp_path, planted.texts, *EDITED, "passages.verify=exact", name="exact-one")
    assert spans(a) == spans(b) and spans(a)


def test_a_crash_keeps_the_finished_pieces(tmp_path, monkeypatch):
    planted = planted_passages(5, n_passages=12, passage_words=200, host_words=(20, 200))
    fresh = run(tmp_path, planted.texts, *EDITED, name="fresh")
    monkeypatch.setattr(pstage, "CHUNK_BYTES", 20_000)
    real = pstage._chunk_task
    ran: list[int] = []

    def flaky(root, folder, k, i, j, cfg):
        ran.append(k)
        if k == 3:
            raise RuntimeError("worker lost")
        return real(root, folder, k, i, j, cfg)

    monkeypatch.setattr(pstage, "_chunk_task", flaky)
    with pytest.raises(Exception, match="worker lost"):
        run(tmp_path, planted.texts, *EDITED, name="w")
    assert ran == [0, 1, 2, 3]
    ran.clear()
    monkeypatch.setattr(pstage, "_chunk_task", lambda *a: (ran.append(a[2]), real(*a))[1])
    w = run(tmp_path, planted.texts, *EDITED, name="w")
    assert ran and ran[0] == 3                 # pieces 0-2 were kept
    assert spans(w) == spans(fresh) and dropped(w) == dropped(fresh)


def test_dask_gives_the_local_pools_decisions(cli, tmp_path):
    """On a LocalCluster bound to 127.0.0.1: the signature pieces and the band tasks run on the
    cluster's workers, and the output and spans are the local pool's."""
    distributed = pytest.importorskip("distributed")
    planted = planted_passages(6, n_passages=60, host_words=(500, 900))
    inp = write_jsonl(tmp_path / "in.jsonl", planted.texts)
    # the smallest budget two workers may have: pieces of about 1 MB, so the text is several
    args = ["--set", "stages=passages", "--workers", "2", "--memory-budget", "210MB",
            *[x for s in ["passages.words=50", "passages.stride=10", "passages.ngram=2", "passages.threshold=0.6",
                          "passages.num_perm=128", "passages.bands=32", "passages.rows=4"] for x in ("--set", s)]]
    cli("run", "--input", inp, "--output", tmp_path / "local.jsonl", "--workdir", tmp_path / "wl", *args)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=":0", silence_logs=40)
    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    try:
        client.get_task_stream()  # the scheduler records its task stream from now on
        cli("run", "--input", inp, "--output", tmp_path / "dask.jsonl", "--workdir", tmp_path / "wd", *args,
            "--set", "run.executor=dask", "--set", f"run.scheduler={cluster.scheduler_address}")
        ran: dict[str, int] = {}
        for t in client.get_task_stream():
            name = str(t["key"]).split("-")
            if name[0] == "sadedup":
                ran[name[1]] = ran.get(name[1], 0) + 1
    finally:
        client.close()
        cluster.close()
    pieces = db_rows(tmp_path / "wd", "SELECT count(*) FROM stages WHERE stage = 'passages' AND shard >= 0")[0][0]
    assert pieces >= 2 and ran.get("SignaturePiece") == pieces and ran.get("BandPairs") == 32, ran
    assert (tmp_path / "dask.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert spans(tmp_path / "wd") == spans(tmp_path / "wl") and spans(tmp_path / "wl")


# ---- the command line ---------------------------------------------------------------------------

def test_cli_run_explain_and_the_stage_command(cli, tmp_path):
    planted = planted_passages(7, n_passages=5, passage_words=150, host_words=(30, 80))
    inp = write_jsonl(tmp_path / "in.jsonl", planted.texts)
    w = tmp_path / "w"
    sets = [x for s in EDITED for x in ("--set", s)]
    cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", w, "--set", "stages=passages", *sets)
    edited = next(d for d, *_, c in planted.copies if c == 1)
    text = cli("explain", w, str(edited)).stdout
    assert "cut in" in text and "(passages)" in text and "similarity 0." in text and "duplicates document" in text
    info = json.loads(cli("explain", w, str(edited), "--format", "json").stdout)
    s = info["spans"][0]
    assert s["method"] == "passages" and 0.6 <= s["similarity"] <= 1 and s["source_text"] and s["text"]
    assert s["src_doc_id"] < edited and s["tok_start"] is None
    before = spans(w)
    # the stage command, with another setting: it runs again and says so as JSON
    detail = json.loads(cli("passages", w, *sets, "--set", "passages.threshold=0.95", "--format", "json").stdout)
    assert detail["config"] == "50w_5s_2ng_32b_4r_128p_t0.95" and detail["threshold"] == 0.95
    assert 0 < detail["spans"] == len(spans(w)) < len(before)


def test_bands_times_rows_over_num_perm_is_refused_before_any_work(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", ["some text"])
    p = cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w",
            "--set", "stages=passages", "--set", "passages.bands=20", check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines()[-1] == ("sadedup: error: workflow key passages.bands: passages.bands * "
                                                 "passages.rows = 160 exceeds passages.num_perm = 112")
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("sets,key", [(["passages.stride=300"], "passages.stride"),
                                      (["passages.words=4", "passages.stride=2"], "passages.ngram"),
                                      (["passages.verify=maybe"], "passages.verify"),
                                      (["passages.threshold=0"], "passages.threshold"),
                                      (["passages.drop_fraction=1.5"], "passages.drop_fraction"),
                                      (["passages.window=3"], "passages.window")])
def test_bad_settings_name_their_key(sets, key):
    from sadedup.config import Workflow, apply_overrides
    from sadedup.errors import ConfigError

    with pytest.raises(ConfigError, match=re.escape(key)):
        apply_overrides(Workflow(), sets)
