"""The decontaminate stage against a brute force written here: Python's re and str.casefold
over every n-gram of every text.

A planted corpus holds verbatim leaks of eval texts (in other case and punctuation, in
multi-byte scripts whose case folding changes their length), texts with one word edited,
eval texts whose words are a corpus passage shuffled, texts too short for an n-gram and a
document that is nearly all leak. The real CLI runs on real files; the per-item counts, the
verdicts, the spans, their sources, the drops and the output are compared with the reference.
"""
from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

from helpers import db_rows, read_jsonl
from sadedup import native

N = 13
WORD = re.compile(r"\w+")


# ---- the reference


def words(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group().casefold()) for m in WORD.finditer(text)]


def ngrams(text: str, n: int) -> list[tuple[int, int, tuple[str, ...]]]:
    w = words(text)
    return [(w[i][0], w[i + n - 1][1], tuple(x[2] for x in w[i:i + n])) for i in range(len(w) - n + 1)]


def reference(docs: list[str], items: list[str], n: int = N, margin: int = 0, contaminated_at: float = 0.5,
              drop_fraction: float = 0.8) -> dict:
    """Spans per document (start, end, source item), dropped documents, and per item
    (n_ngrams, n_matched, overlap, verdict, matched_docs), by brute force."""
    first: dict[tuple, int] = {}
    for i, t in enumerate(items):
        for _, _, g in ngrams(t, n):
            first.setdefault(g, i)
    spans: dict[int, list[list[int]]] = {}
    found: set[tuple] = set()
    docs_of: dict[tuple, set[int]] = {}
    dropped = set()
    for d, text in enumerate(docs):
        out: list[list[int]] = []
        for s, e, g in ngrams(text, n):
            if g not in first:
                continue
            found.add(g)
            docs_of.setdefault(g, set()).add(d)
            s, e = max(0, s - margin), min(len(text), e + margin)
            if out and s <= out[-1][1]:
                out[-1][1] = max(out[-1][1], e)
            else:
                out.append([s, e, first[g]])
        if out:
            spans[d] = out
            if sum(e - s for s, e, _ in out) / len(text) > drop_fraction:
                dropped.add(d)
    per_item = []
    for t in items:
        gs = {g for _, _, g in ngrams(t, n)}
        got = gs & found
        overlap = len(got) / len(gs) if gs else None
        verdict = ("clean" if not overlap else "contaminated" if overlap >= contaminated_at else "partial")
        per_item.append((len(gs), len(got), overlap, verdict, len(set().union(*(docs_of[g] for g in got)))))
    return {"spans": spans, "dropped": dropped, "items": per_item}


# ---- the word kernel is Python's \w+ and str.casefold

# every kind of code point that decides a word's extent or fold: ASCII, the underscore, digits
# and numbers of other scripts (Arabic-Indic, superscripts, Roman numerals, fractions),
# combining marks (not word characters in Python), letters whose fold is longer (ß, İ, ﬁ,
# ΐ), title case, final sigma, CJK, emoji, joiners, spaces of every kind
SPECIAL = ("aZ_09 \t\n.,-'\u0301\u0307\u0903\u0663\u00b2\u2167\u00bd\u00df\u0130\u0131\ufb01\u0390\u01c5"
           "\u03a3\u03c2\u00e9\u6771\U0001F600\u200d\u00a0\u3000\u00ad\u2028\u1e9e\u0345\u24b6")
TEXT = st.text(st.one_of(st.sampled_from(SPECIAL), st.characters(exclude_categories=("Cs",))), max_size=60)


def native_words(texts: list[str]) -> list[list[tuple[int, int, str]]]:
    enc = [t.encode("utf-8", "surrogatepass") for t in texts]
    ends = np.cumsum([len(b) for b in enc]).astype(np.int64)
    buf = np.frombuffer(b"".join(enc), dtype=np.uint8)
    off, cs, ce, _, fold, foff = native.dc_words(buf, ends - [len(b) for b in enc], ends)
    return [[(int(cs[i]), int(ce[i]), "".join(map(chr, fold[foff[i]:foff[i + 1]]))) for i in range(off[d], off[d + 1])]
            for d in range(len(texts))]


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=4))
def test_native_words_are_python_words(texts):
    assert native_words(texts) == [words(t) for t in texts]


def test_native_words_on_every_code_point():
    """Every code point, among its neighbours in code point order: which are word characters
    and what each one folds to."""
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    chunks = [every[i:i + 5000] for i in range(0, len(every), 5000)]
    assert native_words(chunks) == [words(t) for t in chunks]


def test_lone_surrogates_of_eval_text_are_not_words():
    t = "ab\ud800cd \udfff e"
    assert native_words([t]) == [words(t)] and [w[2] for w in words(t)] == ["ab", "cd", "e"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "B", "ß", "SS", "İ", "i\u0307", "x1", "_"]), max_size=8),
                min_size=2, max_size=6), st.integers(1, 3))
def test_ngram_keys_and_comparison_agree_with_python(texts, n):
    """Equal keys exactly for equal folded n-grams here (no collision in such a small set),
    and the comparison kernel says the same."""
    texts = [" ".join(t) for t in texts]
    enc = [t.encode() for t in texts]
    ends = np.cumsum([len(b) for b in enc]).astype(np.int64)
    buf = np.frombuffer(b"".join(enc), dtype=np.uint8)
    off, _, _, h, fold, foff = native.dc_words(buf, ends - [len(b) for b in enc], ends)
    keys, key_off = native.dc_ngram_keys(h, off, n)
    grams, firsts = [], []
    for d, t in enumerate(texts):
        ws = [w[2] for w in words(t)]
        for i in range(len(ws) - n + 1):
            grams.append(tuple(ws[i:i + n]))
            firsts.append(off[d] + i)
    assert len(keys) == len(grams) and list(np.diff(key_off)) == [max(len(words(t)) - n + 1, 0) for t in texts]
    for i in range(len(grams)):
        for j in range(len(grams)):
            assert (keys[i] == keys[j]) == (grams[i] == grams[j])
            assert native.dc_ngram_same(fold, foff, [firsts[i]], [firsts[j]], n)[0] == (grams[i] == grams[j])


# ---- a planted corpus

VOCAB = ("river stone apple window garden silver paper winter summer engine castle bridge forest market "
         "yellow purple doctor teacher pencil basket ladder camera rocket planet ocean desert island valley "
         "mountain village harbor lantern mirror candle blanket jacket helmet saddle wagon barrel anchor "
         "compass feather marble copper velvet cotton").split()
# upper() of each is folded as the word itself is (not so for ΐ, whose upper case is three code points)
MULTI = "Straße İstanbul ΣΟΦΊΑ σοφία Москва улица 東京 大阪 ﬁnal naïve Ærøskøbing café e\u0301t\u00e9 ǅemal".split()


def sentence(rng: random.Random, k: int, pool=VOCAB) -> str:
    return " ".join(rng.choice(pool) for _ in range(k))


def planted(seed: int = 7) -> tuple[list[str], list[dict], list[str]]:
    """(documents, eval rows {question, answer}, eval texts in item order)."""
    rng = random.Random(seed)
    leak = sentence(rng, 30)                                   # verbatim, in other case and punctuation
    edited = sentence(rng, 30)                                 # the corpus has it with one word changed
    multi = sentence(rng, 20, MULTI + VOCAB)                   # multi-byte, folded to other lengths
    twice = sentence(rng, 16)                                  # in two documents
    whole = sentence(rng, 40)                                  # nearly all of one document
    passage = sentence(rng, 40)                                # shuffled into a clean eval text
    shuffled = passage.split()
    rng.shuffle(shuffled)
    e_words = edited.split()
    e_words[15] = "zzzedited"
    docs = [sentence(rng, rng.randint(20, 200)) for _ in range(60)]
    docs[3] = sentence(rng, 50) + ", " + ", ".join(w.upper() for w in leak.split()) + "! " + sentence(rng, 20)
    docs[8] = sentence(rng, 40) + " " + " ".join(e_words) + " " + sentence(rng, 40)
    docs[12] = "Начало: " + multi.upper().replace("STRASSE", "STRAẞE") + " — " + sentence(rng, 30) + " " + leak
    docs[20] = "x " + twice + " and " + sentence(rng, 10)
    docs[21] = sentence(rng, 30) + " " + twice.title()
    docs[30] = "intro " + whole + "."
    docs[40] = sentence(rng, 30) + " " + passage + " " + sentence(rng, 30)
    docs[44] = ""                                             # empty documents are never dropped
    rows = [
        {"id": 0, "question": leak, "answer": "short answer"},
        {"id": 1, "question": edited, "answer": sentence(rng, 14)},
        {"id": 2, "question": multi, "answer": twice},
        {"id": 3, "question": " ".join(shuffled), "answer": "no"},
        {"id": 4, "question": whole, "answer": leak.title()},   # the same n-grams as item 0: its spans cite item 0
        {"id": 5, "question": sentence(rng, 25), "answer": sentence(rng, 3)},  # clean
    ]
    items = [t for r in rows for t in (r["question"], r["answer"])]
    return docs, rows, items


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def corpus_files(tmp_path: Path, seed: int = 7):
    docs, rows, items = planted(seed)
    write_jsonl(tmp_path / "corpus.jsonl", [{"id": f"doc-{i}", "text": t} for i, t in enumerate(docs)])
    write_jsonl(tmp_path / "eval.jsonl", rows)
    return docs, rows, items


SETS = ["--set", "stages=decontaminate", "--set", "decontaminate.eval=eval.jsonl",
        "--set", "decontaminate.text_fields=question,answer"]


def check_against_reference(work: Path, docs: list[str], items: list[str], rows: list[dict], **kw) -> dict:
    ref = reference(docs, items, **kw)
    got = db_rows(work, "SELECT n_ngrams, n_matched, overlap, verdict, matched_docs FROM eval_items ORDER BY item_id")
    assert [tuple(r) for r in got] == [(a, b, pytest.approx(c) if c is not None else None, d, e)
                                       for a, b, c, d, e in ref["items"]]
    meta = db_rows(work, "SELECT item_id, eval_row, field FROM eval_items ORDER BY item_id")
    assert meta == [(i, i // 2 + 1, ("question", "answer")[i % 2]) for i in range(len(items))]
    spans: dict[int, list[list[int]]] = {}
    for d, s, e, item, src, tok in db_rows(work, "SELECT doc_id, char_start, char_end, src_item_id, src_doc_id, "
                                                 "tok_start FROM spans WHERE method = 'decontaminate' "
                                                 "ORDER BY doc_id, char_start"):
        assert src is None and tok is None
        spans.setdefault(d, []).append([s, e, item])
    assert spans == ref["spans"]
    dropped = {d for (d,) in db_rows(work, "SELECT doc_id FROM documents WHERE reason = 'contamination'")}
    assert dropped == ref["dropped"]
    return ref


def cut(text: str, spans: list[list[int]]) -> str:
    out, at = [], 0
    for s, e, _ in spans:
        out.append(text[at:s])
        at = e
    return "".join(out) + text[at:]


def test_planted_corpus_by_the_cli(cli, tmp_path):
    docs, rows, items = corpus_files(tmp_path)
    cli("run", "--input", "corpus.jsonl", "--output", "out.jsonl", "--workdir", "work", *SETS,
        "--write-clean-eval", "clean.jsonl")
    work = tmp_path / "work"
    ref = check_against_reference(work, docs, items, rows)
    # what was planted is what was found
    verdicts = [v for _, _, _, v, _ in ref["items"]]
    assert verdicts[0] == "contaminated" and verdicts[1] == "clean"          # leak; answer too short
    assert verdicts[2] == "partial" and verdicts[4] == "contaminated"       # one word edited; multi-byte
    assert verdicts[5] == "contaminated" and verdicts[6] == "clean"         # in two documents; shuffled
    assert ref["items"][5][4] == 2 and ref["items"][1][2] is None
    assert verdicts[10:] == ["clean", "clean"] and ref["dropped"] == {30}
    assert ref["spans"][30][0][2] == 8  # doc 30 is nearly all of item 8 (row 5's question)
    # the output is the input minus the spans, dropped documents left out
    out = {r["id"]: r["text"] for r in read_jsonl(tmp_path / "out.jsonl")}
    assert out == {f"doc-{d}": cut(t, ref["spans"].get(d, [])) for d, t in enumerate(docs) if d not in ref["dropped"]}
    # the clean eval rows, byte for byte: those whose question and answer are both clean
    lines = (tmp_path / "eval.jsonl").read_bytes().splitlines(keepends=True)
    clean = [lines[r] for r in range(len(rows)) if verdicts[2 * r] == verdicts[2 * r + 1] == "clean"]
    assert (tmp_path / "clean.jsonl").read_bytes() == b"".join(clean) and len(clean) == 2  # rows 4 and 6
    # sql and explain show them
    p = cli("sql", "work", "SELECT verdict, count(*) AS n FROM eval_items GROUP BY verdict ORDER BY verdict",
            "--format", "json")
    assert json.loads(p.stdout) == [{"verdict": v, "n": verdicts.count(v)} for v in sorted(set(verdicts))]
    p = cli("explain", "work", "doc-3", "--format", "json")
    info = json.loads(p.stdout)
    assert [s["eval_item"]["item_id"] for s in info["spans"]] == [0]
    assert info["spans"][0]["method"] == "decontaminate"
    assert info["spans"][0]["text"].casefold().split(", ") == rows[0]["question"].split()
    assert info["spans"][0]["eval_item"]["eval_file"] == str(tmp_path / "eval.jsonl")
    p = cli("explain", "work", "doc-3")
    assert "matches eval item" in p.stdout and "row 1 field 'question'" in p.stdout.replace("\n", "")


def test_changed_eval_set_makes_the_stage_stale(cli, tmp_path):
    docs, rows, items = corpus_files(tmp_path, seed=3)
    cli("run", "--input", "corpus.jsonl", "--output", "out.jsonl", "--workdir", "work", *SETS, "--set",
        "decontaminate.margin=2")
    check_against_reference(tmp_path / "work", docs, items, rows, margin=2)
    # the eval set was named relative to the folder the run started in: it is recorded absolute,
    # so commands run from elsewhere read the same file
    state = json.loads((tmp_path / "work" / "state.json").read_text())
    assert [Path(p).is_absolute() for p in state["workflow"]["decontaminate"]["eval"]] == [True]
    rows = rows + [{"id": 9, "question": docs[50], "answer": "late addition to the set"}]
    items = items + [docs[50], "late addition to the set"]
    write_jsonl(tmp_path / "eval.jsonl", rows)
    st = json.loads(cli("status", "work", "--format", "json").stdout)["stages"]
    assert {"stage": "decontaminate", "state": "stale", "why": "its settings changed since it ran"} in st
    p = cli("export", "work", check=False)
    assert p.returncode == 2 and "decontaminate" in p.stderr
    p = cli("decontaminate", "work", "--format", "json")
    detail = json.loads(p.stdout)
    assert detail["eval_items"] == len(items) and detail["contaminated"] >= 3
    ref = check_against_reference(tmp_path / "work", docs, items, rows, margin=2)
    assert ref["items"][-2][3] == "contaminated"


def test_no_output_writes_over_an_input_an_eval_file_or_another_output(cli, tmp_path):
    """The clean eval rows' file and the export's output are each refused, before any work,
    when they name a corpus input, an eval file, the other one or a file in the work folder:
    `decontaminate --write-clean-eval corpus.jsonl` wrote the clean rows over the corpus, and
    `export --output eval.jsonl` the documents over the eval set the next run then read."""
    corpus_files(tmp_path)
    cli("run", "--input", "corpus.jsonl", "--output", "out.jsonl", "--workdir", "work", *SETS)
    mine = {n: (tmp_path / n).read_bytes() for n in ("corpus.jsonl", "eval.jsonl", "out.jsonl")}
    state = (tmp_path / "work" / "state.json").read_bytes()
    for args, said in [(("decontaminate", "work", "--write-clean-eval", "corpus.jsonl"), "is one of the inputs"),
                       (("run", "--workdir", "work", "--write-clean-eval", "out.jsonl"), "is the work folder's output"),
                       (("decontaminate", "work", "--write-clean-eval", "work/clean.jsonl"), "inside the work folder"),
                       (("export", "work", "--output", "eval.jsonl"), "is one of the eval files")]:
        p = cli(*args, check=False)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and said in lines[0], (args, p.stderr)
        assert {n: (tmp_path / n).read_bytes() for n in mine} == mine, args
    assert (tmp_path / "work" / "state.json").read_bytes() == state  # nothing of the refused settings kept
    assert not (tmp_path / "work" / "clean.jsonl").exists()


def test_results_do_not_depend_on_chunks_or_workers(tmp_path, monkeypatch):
    """Many chunk tasks on two worker processes decide as one chunk inline does, and both as
    the reference does."""
    import sadedup
    from sadedup.stages import decontaminate as dc

    docs, rows, items = corpus_files(tmp_path, seed=11)
    sets = {"stages": "decontaminate", "decontaminate.eval": str(tmp_path / "eval.jsonl"),
            "decontaminate.text_fields": "question,answer", "decontaminate.margin": 1,
            "decontaminate.drop_fraction": 0.5}
    found = []
    for name, executor, workers, chunk in (("one", "inline", 1, 1 << 30), ("many", "local", 2, 1)):
        monkeypatch.setattr(dc, "MIN_CHUNK_BYTES", chunk)
        monkeypatch.setattr(dc, "CHUNK_BYTES", chunk)
        res = sadedup.run(tmp_path / "corpus.jsonl", tmp_path / f"{name}.jsonl", tmp_path / name, overrides=sets,
                          executor=executor, workers=workers, quiet=True)
        assert res["decontaminate"]["documents"] == len(docs)
        check_against_reference(tmp_path / name, docs, items, rows, margin=1, drop_fraction=0.5)
        found.append([db_rows(tmp_path / name, q) for q in (
            "SELECT span_id, doc_id, char_start, char_end, src_item_id FROM spans ORDER BY span_id",
            "SELECT * FROM eval_items ORDER BY item_id", "SELECT doc_id, status, reason FROM documents")])
    assert found[0] == found[1]
    chunks = db_rows(tmp_path / "many", "SELECT count(*) FROM stages WHERE stage = 'decontaminate' AND shard >= 0")
    assert chunks[0][0] > 5


def test_parquet_eval_set_and_its_clean_rows(cli, tmp_path):
    docs, rows, items = corpus_files(tmp_path, seed=5)
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "eval.parquet")
    cli("run", "--input", "corpus.jsonl", "--output", "out.jsonl", "--workdir", "work", "--set",
        "stages=decontaminate", "--set", "decontaminate.eval=eval.parquet", "--set",
        "decontaminate.text_fields=question,answer", "--write-clean-eval", "clean.parquet")
    ref = check_against_reference(tmp_path / "work", docs, items, rows)
    verdicts = [v for _, _, _, v, _ in ref["items"]]
    clean = pq.read_table(tmp_path / "clean.parquet")
    assert clean.schema == pq.read_schema(tmp_path / "eval.parquet")
    assert clean.to_pylist() == [r for i, r in enumerate(rows) if verdicts[2 * i] == verdicts[2 * i + 1] == "clean"]
    # the clean file keeps the eval files' format
    p = cli("decontaminate", "work", "--write-clean-eval", "clean.jsonl", check=False)
    assert p.returncode == 2 and "name it .parquet" in p.stderr


def test_eval_rows_that_are_not_texts_stop_the_run(cli, tmp_path):
    corpus_files(tmp_path)
    with open(tmp_path / "eval.jsonl", "a") as f:
        f.write('{"id": 7, "question": "fine"}\n')
    p = cli("run", "--input", "corpus.jsonl", "--output", "out.jsonl", "--workdir", "work", *SETS, check=False)
    assert p.returncode == 2
    # the eval set named relative to the folder the run started in is named by its absolute path
    assert p.stderr.strip().splitlines()[-1] == (f"sadedup: error: eval file {tmp_path / 'eval.jsonl'} row 7: "
                                                 f"no field 'answer' "
                                                 f"(every row needs each of decontaminate.text_fields)")
    p = cli("run", "--input", "corpus.jsonl", "--output", "out.jsonl", "--workdir", "work2", "--set",
            "stages=decontaminate", check=False)
    assert p.returncode == 2 and "decontaminate.eval: must name at least one eval file" in p.stderr
