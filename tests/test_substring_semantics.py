"""sadedup's substring stage against the brute-force reference, on real files and the real database."""
from __future__ import annotations

import random
import tempfile
from pathlib import Path

from corpus import planted_corpus, write_jsonl
from helpers import db_rows, read_jsonl, spans_by_doc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import char_cut, reference

from sadedup import pipeline
from sadedup.executor import LocalExecutor


def run_substring(tmp: Path, docs: list[str], L: int, keep: str, drop: float, shard_tokens: int = 0,
                  executor: str = "inline", workers: int = 1, prefilter: bool = True) -> Path:
    inp = write_jsonl(tmp / "in.jsonl", docs)
    work = tmp / "work"
    sets = ["stages=substring", f"substring.min_length={L}", f"substring.keep={keep}",
            f"substring.drop_fraction={drop}", f"substring.shard_tokens={shard_tokens or 'auto'}",
            f"substring.prefilter={str(prefilter).lower()}"]
    pipeline.run([inp], tmp / "out.jsonl", work, overrides=sets, executor=executor, workers=workers)
    return work


def check_against_reference(tmp: Path, docs: list[str], L: int, keep: str, drop: float) -> None:
    work = tmp / "work"
    ref = reference([d.encode("utf-8") for d in docs], L, keep, drop)
    got = spans_by_doc(work)
    status = {r[0]: r[1:] for r in db_rows(work, "SELECT doc_id, status, reason, removed_tokens, n_tokens FROM documents")}
    expected_out = []
    for d, (spans, removed, dropped) in enumerate(ref):
        mine = got.get(d, [])
        assert [s[:4] for s in mine] == spans, f"doc {d}: spans differ"
        text, char_spans = char_cut(docs[d], [(a, b) for a, b, _, _ in spans])
        assert [s[4:] for s in mine] == char_spans, f"doc {d}: character spans differ"
        st_, reason, rem, ntok = status[d]
        assert rem == removed and ntok == len(docs[d].encode())
        assert (st_, reason) == (("dropped", "substring_coverage") if dropped else ("kept", None)), f"doc {d}"
        if not dropped:
            expected_out.append((f"d{d}", text))
    rows = read_jsonl(tmp / "out.jsonl")
    assert [(r["id"], r["text"]) for r in rows] == expected_out
    assert all(r["meta"]["n"] == int(r["id"][1:]) for r in rows)  # other fields pass through


# 40 examples (was 60): each one is a whole pipeline run, about half a second plus a tenth for
# every shard, and most draws cut the corpus into 5-25 shards. Forty still draw every keep x
# prefilter pair about ten times, spread over L, drop fractions, corpus and shard sizes; the
# fixed cases below pin the rest (five shard sizes in both prefilter modes, whole copies,
# repeats inside a document, dropped documents, keep=none sources, priorities).
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 25), L=st.integers(1, 12),
       keep=st.sampled_from(["first", "none"]),
       drop=st.one_of(st.sampled_from([0.8, 1.0, 0.5]), st.floats(0.01, 1.0)),
       shard=st.integers(0, 400), prefilter=st.booleans())
def test_matches_reference(seed, n_docs, L, keep, drop, shard, prefilter):
    rng = random.Random(seed)
    docs = planted_corpus(rng, n_docs)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        run_substring(tmp, docs, L, keep, drop, shard, prefilter=prefilter)
        check_against_reference(tmp, docs, L, keep, drop)


def test_whole_corpus_copied(tmp_path):
    rng = random.Random(7)
    docs = planted_corpus(rng, 30, 200)
    docs = docs + docs
    run_substring(tmp_path, docs, 8, "first", 0.8, shard_tokens=300)
    check_against_reference(tmp_path, docs, 8, "first", 0.8)
    # every second copy of a non-trivial document is dropped whole
    dropped = {r[0] for r in db_rows(tmp_path / "work", "SELECT doc_id FROM documents WHERE status = 'dropped'")}
    assert {30 + i for i, d in enumerate(docs[:30]) if len(d.encode()) >= 8 and d not in docs[:i]} <= dropped


def test_repeat_inside_one_document(tmp_path):
    docs = ["xyz " + "the same passage here. " * 4 + "end"]
    run_substring(tmp_path, docs, 10, "first", 1.0)
    check_against_reference(tmp_path, docs, 10, "first", 1.0)
    spans = spans_by_doc(tmp_path / "work")[0]
    assert spans and all(s[2] == 0 for s in spans)  # the source is the same document, earlier


def test_dropped_document_is_never_the_kept_copy(tmp_path):
    # doc 1 is mostly a copy of doc 0 and drops; doc 2 shares a passage only with doc 1's
    # own text, which must then count as unseen: doc 2 keeps it.
    a = "alpha beta gamma delta epsilon zeta eta theta"
    own = "UNIQUE PASSAGE ONLY IN ONE"
    docs = [a, a + own, own + " tail text that is new"]
    run_substring(tmp_path, docs, 12, "first", 0.5)
    check_against_reference(tmp_path, docs, 12, "first", 0.5)
    status = db_rows(tmp_path / "work", "SELECT status FROM documents ORDER BY doc_id")
    assert [s[0] for s in status] == ["kept", "dropped", "kept"]
    assert 2 not in spans_by_doc(tmp_path / "work")


def test_output_identical_for_any_shard_size(tmp_path, monkeypatch):
    # 70 documents: 18k tokens, 70 shards of 97 tokens and ~240 spans whose source sits in
    # another shard (120 documents gave 117 and ~400, in a quarter more time)
    rng = random.Random(11)
    docs = planted_corpus(rng, 70, 300)
    outputs, dumps = [], []
    # the five runs share one pool of two workers (each run would start its own: two processes
    # importing sadedup, a second of CPU each); every task still runs on it, in parallel
    pool = KeptPool(2)
    monkeypatch.setattr(pipeline, "make_executor", lambda kind, workers, scheduler="": pool.check(kind, workers))
    try:
        for shard, prefilter in ((0, True), (2000, True), (500, True), (97, True), (500, False)):
            tmp = tmp_path / f"s{shard}{'' if prefilter else '_full'}"
            tmp.mkdir()
            run_substring(tmp, docs, 10, "first", 0.8, shard_tokens=shard, executor="local", workers=2,
                          prefilter=prefilter)
            outputs.append((tmp / "out.jsonl").read_bytes())
            dumps.append(db_rows(tmp / "work", "SELECT * FROM spans ORDER BY span_id")
                         + db_rows(tmp / "work", "SELECT doc_id, status, removed_tokens FROM documents"))
            shards = db_rows(tmp / "work", "SELECT count(*) FROM stages WHERE stage = 'build' AND shard >= 0")[0][0]
            if not prefilter:
                assert not any((tmp / "work" / "substring").glob("*/L10/shard_*/sa.npy"))
            if shard == 97:
                assert shards > 50
                # planted duplicates whose source sits in another shard
                assert cross_shard_spans(tmp / "work") > 10
    finally:
        pool.really_close()
    assert pool.maps > 5  # the runs used it
    assert all(o == outputs[0] for o in outputs)
    assert all(d == dumps[0] for d in dumps)
    check_against_reference(tmp_path / "s97", docs, 10, "first", 0.8)


class KeptPool(LocalExecutor):
    """A local pool that outlives the run that closes it (closed by the test at the end)."""

    maps = 0

    def check(self, kind: str, workers: int) -> "KeptPool":
        assert (kind, workers) == ("local", self.workers)
        return self

    def imap(self, tasks):
        self.maps += len(tasks) > 1
        return super().imap(tasks)

    def close(self, abort: bool = False) -> None:
        if abort:
            super().close(abort=True)

    def really_close(self) -> None:
        super().close()


def cross_shard_spans(work: Path) -> int:
    import numpy as np

    shard_of = {}
    for folder in (work / "substring").iterdir():
        for sdir in sorted(folder.glob("shard_*")):
            for d in np.load(sdir / "docs.npy"):
                shard_of[int(d)] = sdir.name
    return sum(1 for doc, src in db_rows(work, "SELECT doc_id, src_doc_id FROM spans")
               if shard_of[doc] != shard_of[src])


def test_keep_none_source_is_first_or_next(tmp_path):
    p = "a passage that repeats across documents"
    docs = ["head " + p, "mid " + p + " tail", p]
    run_substring(tmp_path, docs, 20, "none", 1.0)
    check_against_reference(tmp_path, docs, 20, "none", 1.0)
    spans = spans_by_doc(tmp_path / "work")
    assert spans[0][0][2] == 1 and spans[1][0][2] == 0 and spans[2][0][2] == 0


def test_priority_column_orders_the_visit(tmp_path):
    """With input.priority the copy kept is the one of highest priority (ties by input order)."""
    import json

    rng = random.Random(23)
    docs = planted_corpus(rng, 40, 200)
    prio = [rng.choice([None, 1, 2, 3, 2.5]) for _ in docs]
    inp = tmp_path / "in.jsonl"
    with open(inp, "w", encoding="utf-8") as f:
        for i, (d, p) in enumerate(zip(docs, prio)):
            row = {"id": f"d{i}", "text": d, "meta": {"n": i}}
            if p is not None:
                row["q"] = p
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    pipeline.run([inp], tmp_path / "out.jsonl", tmp_path / "work",
                 overrides=["stages=substring", "substring.min_length=8", "input.priority=q",
                            "substring.shard_tokens=700"], executor="inline")
    order = sorted(range(len(docs)), key=lambda i: (-(prio[i] if prio[i] is not None else float("-inf")), i))
    ref = reference([docs[i].encode() for i in order], 8, "first", 0.8)
    got = spans_by_doc(tmp_path / "work")
    for rank, (spans, removed, dropped) in enumerate(ref):
        d = order[rank]
        assert [s[:4] for s in got.get(d, [])] == [(a, b, order[sd], sp) for a, b, sd, sp in spans], f"doc {d}"
    # a planted copy kept in a higher-priority document makes the lower one the duplicate
    assert any(prio[s[2]] is not None and (prio[d] is None or prio[s[2]] > prio[d])
               for d, ss in got.items() for s in ss)


def test_prefilter_sorts_only_text_that_can_repeat(tmp_path):
    """The suffix arrays cover the candidate text: far less than the corpus when little of it
    repeats, yet every repeated window is found (the reference check)."""
    rng = random.Random(5)
    unique = ["".join(rng.choice("abcdefghij ") for _ in range(400)) for _ in range(40)]
    shared = "a passage that several documents share, long enough to count. "
    docs = [u + (shared if i % 5 == 0 else "") for i, u in enumerate(unique)]
    work = run_substring(tmp_path, docs, 30, "first", 0.8)
    check_against_reference(tmp_path, docs, 30, "first", 0.8)
    total, kept = db_rows(work, "SELECT json_extract(detail, '$.tokens'), json_extract(detail, '$.candidate_tokens') "
                                "FROM stages WHERE stage = 'candidates' AND shard = -1")[0]
    assert total == sum(len(d) for d in docs)
    assert kept < total / 5
    built = db_rows(work, "SELECT sum(json_extract(detail, '$.tokens')) FROM stages WHERE stage = 'build' AND shard >= 0")
    assert built[0][0] == kept
