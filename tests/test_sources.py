"""Per-source settings ([[sources]] in a workflow file): priorities decide which copy every
keep-first rule keeps, a MinHash pair is a near duplicate at the stricter of its two
documents' thresholds, lines.min_docs per source; on real files and the real database."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from corpus import write_jsonl
from helpers import db_rows, read_jsonl

import sadedup
from sadedup import ConfigError, pipeline
from sadedup.config import load_workflow


def words(tag: str, n: int) -> list[str]:
    return [f"{tag}w{i}" for i in range(n)]


def text(ws: list[str]) -> str:
    return " ".join(ws)


def write(path: Path, docs: list[str]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": f"{path.stem}{i}", "text": d}, ensure_ascii=False) + "\n")
    return path


def status(work: Path) -> dict[str, tuple]:
    return {r[0]: r[1:] for r in db_rows(work, "SELECT ext_id, status, reason FROM documents")}


def spans(work: Path, method: str) -> list[tuple]:
    return db_rows(work, "SELECT d.ext_id, s.ext_id FROM spans JOIN documents d USING (doc_id) "
                         "JOIN documents s ON s.doc_id = spans.src_doc_id WHERE method = ? ORDER BY span_id",
                   (method,))


def test_priority_decides_the_kept_copy_for_every_stage(cli, tmp_path):
    """b.jsonl comes second but has the higher priority: its copy is the one kept by exact,
    minhash, lines and substring alike."""
    rng = random.Random(3)

    def uniq(tag: str, n: int) -> str:
        return " ".join(f"{tag}{rng.randrange(10**9)}" for _ in range(n))

    same = uniq("x", 80)
    near = words("near", 200)
    near_edit = near[:100] + ["changed"] + near[101:]
    line = "Shared navigation line"  # shorter than substring's window: only lines sees it
    passage = "a passage of text quoted in one long line by both of the documents here"
    a = write(tmp_path / "a.jsonl", [same, text(near_edit), f"{uniq('a', 30)}\n{line}\n{uniq('a', 30)}",
                                     f"{uniq('a', 20)} {passage} {uniq('a', 20)}"])
    b = write(tmp_path / "b.jsonl", [same, text(near), f"{uniq('b', 30)}\n{line}\n{uniq('b', 30)}",
                                     f"{uniq('b', 20)} {passage} {uniq('b', 20)}"])
    flow = tmp_path / "flow.toml"
    flow.write_text('stages = ["exact", "minhash", "lines", "substring"]\n[substring]\nmin_length = 40\n\n'
                    '[[sources]]\nmatch = "*/b.jsonl"\npriority = 5\n')
    work, out = tmp_path / "work", tmp_path / "out.jsonl"
    cli("run", flow, "--input", a, "--input", b, "--output", out, "--workdir", work, "--workers", "1")
    st = status(work)
    assert st["a0"] == ("dropped", "exact_duplicate") and st["a1"] == ("dropped", "near_duplicate")
    assert all(st[f"b{i}"] == ("kept", None) for i in range(4))
    assert spans(work, "lines") == [("a2", "b2")]
    assert spans(work, "substring") == [("a3", "b3")]
    assert db_rows(work, "SELECT kept_doc_id, method FROM clusters ORDER BY method") == [(4, "exact"), (5, "minhash")]
    rows = {r["id"]: r["text"] for r in read_jsonl(out)}
    assert line not in rows["a2"] and line in rows["b2"] and passage not in rows["a3"] and passage in rows["b3"]

    # without the entry, input order decides: the copies in b go
    plain = tmp_path / "plain.toml"
    plain.write_text('stages = ["exact", "minhash", "lines", "substring"]\n[substring]\nmin_length = 40\n')
    pipeline.run([a, b], tmp_path / "out2.jsonl", tmp_path / "w2", workflow=str(plain), executor="inline", workers=1)
    st = status(tmp_path / "w2")
    assert st["b0"] == ("dropped", "exact_duplicate") and st["b1"] == ("dropped", "near_duplicate")
    assert spans(tmp_path / "w2", "lines") == [("b2", "a2")] and spans(tmp_path / "w2", "substring") == [("b3", "a3")]


def pair(tag: str, n: int, shared: int) -> tuple[str, str]:
    """Two texts of n distinct words sharing `shared`: word Jaccard shared / (2n - shared)."""
    w = words(tag, 2 * n)
    return text(w[:n]), text(w[:shared] + w[n:2 * n - shared])


def test_pair_threshold_is_the_stricter_sources(tmp_path):
    loose_a, loose_b = pair("l", 100, 75)      # J = 0.6
    strict_a, strict_b = pair("s", 100, 95)    # J = 0.905
    strict_c, strict_d = pair("t", 100, 99)    # J = 0.98
    cross_a, cross_b = pair("c", 100, 95)      # J = 0.905, one document in each
    close_a, close_b = pair("k", 100, 99)      # J = 0.98, one in each
    other_a, other_b = pair("o", 100, 92)      # J = 0.852
    mid_a, mid_b = pair("m", 100, 83)          # J = 0.709, other and loose
    loose = write(tmp_path / "loose.jsonl", [loose_a, loose_b, cross_a, close_a, mid_b])
    strict = write(tmp_path / "strict.jsonl", [strict_a, strict_b, strict_c, strict_d, cross_b, close_b])
    other = write(tmp_path / "other.jsonl", [other_a, other_b, mid_a])
    flow = tmp_path / "flow.toml"
    flow.write_text('stages = ["minhash"]\n[minhash]\nngram = 1\nbands = 20\nrows = 2\nverify = "exact"\n'
                    'threshold = 0.8\n\n'
                    '[[sources]]\nmatch = "loose.jsonl"\nminhash.threshold = 0.5\n\n'
                    '[[sources]]\nmatch = "*strict*"\nminhash.threshold = 0.95\n\n'
                    '[[sources]]\nmatch = "*"\npriority = 0\n')  # matches the rest: its threshold is minhash's
    work = tmp_path / "work"
    res = pipeline.run([loose, strict, other], tmp_path / "out.jsonl", work, workflow=str(flow),
                       executor="inline", workers=1)
    dropped = {k for k, (s, _) in status(work).items() if s == "dropped"}
    # loose-loose at 0.6 >= 0.5; strict-strict only at 0.98; across loose and strict only
    # at 0.98; other-other at 0.852 >= 0.8; other-loose at 0.709 < 0.8
    assert dropped == {"loose1", "strict3", "strict5", "other1"}
    assert res["minhash"]["source_thresholds"] == [0.5, 0.8, 0.95]


def test_lines_min_docs_per_source(tmp_path):
    footer = "Shared footer line"
    a = write(tmp_path / "a.jsonl", [f"a story\n{footer}\n"])
    b = write(tmp_path / "b.jsonl", [f"b story one\n{footer}\n", f"b story two\n{footer}\n"])
    flow = tmp_path / "flow.toml"
    flow.write_text('stages = ["lines"]\n[lines]\nkeep = "none"\nmin_docs = 3\ndrop_fraction = 1.0\n\n'
                    '[[sources]]\nmatch = "*b.jsonl"\nlines.min_docs = 4\n')
    work = tmp_path / "work"
    pipeline.run([a, b], tmp_path / "out.jsonl", work, workflow=str(flow), executor="inline", workers=1)
    # in 3 documents: struck where 3 is enough (a, the workflow's min_docs), kept in b (4)
    assert spans(work, "lines") == [("a0", "b0")]
    assert [r["text"] for r in read_jsonl(tmp_path / "out.jsonl")] == \
        ["a story\n", f"b story one\n{footer}\n", f"b story two\n{footer}\n"]


def test_order_ties_first_match_and_the_priority_field(tmp_path):
    line = "the same line everywhere"
    files = []
    for name, q in (("c1", 1), ("c2", 9), ("c3", 5), ("c4", 7)):
        p = tmp_path / f"{name}.jsonl"
        p.write_text(json.dumps({"id": name, "text": f"{name} own\n{line}\n", "q": q}) + "\n")
        files.append(p)
    flow = tmp_path / "flow.toml"
    # c3 and c4 share the top priority (c4's entry comes second but c4 matches the first
    # entry too); within it, input.priority (q) orders them: c4 (7) before c3 (5)
    flow.write_text('stages = ["lines"]\n[input]\npriority = "q"\n[lines]\ndrop_fraction = 1.0\n\n'
                    '[[sources]]\nmatch = "*c[34].jsonl"\npriority = 2\n\n'
                    '[[sources]]\nmatch = "*c4*"\npriority = -5\n')
    work = tmp_path / "work"
    pipeline.run(files, tmp_path / "out.jsonl", work, workflow=str(flow), executor="inline", workers=1)
    # document order: c4, c3, then c2 (q 9), c1 (q 1): c4's line is the one kept
    assert spans(work, "lines") == [("c1", "c4"), ("c2", "c4"), ("c3", "c4")]
    # the kept output is still in input order
    assert [r["id"] for r in read_jsonl(tmp_path / "out.jsonl")] == ["c1", "c2", "c3", "c4"]


def test_a_new_priority_makes_the_stages_stale(tmp_path):
    a = write(tmp_path / "a.jsonl", ["x\nsame\n"])
    b = write(tmp_path / "b.jsonl", ["y\nsame\n"])
    flow = tmp_path / "flow.toml"
    flow.write_text('stages = ["exact", "lines"]\n')
    work = tmp_path / "work"
    pipeline.run([a, b], tmp_path / "out.jsonl", work, workflow=str(flow), executor="inline", workers=1)
    assert spans(work, "lines") == [("b0", "a0")]
    flow.write_text('stages = ["exact", "lines"]\n[[sources]]\nmatch = "*b.jsonl"\npriority = 1\n')
    pipeline.run([a, b], tmp_path / "out.jsonl", work, workflow=str(flow), executor="inline", workers=1)
    assert spans(work, "lines") == [("a0", "b0")]
    runs = db_rows(work, "SELECT config FROM runs ORDER BY run_id")
    assert json.loads(runs[-1][0])["sources"] == [{"match": "*b.jsonl", "priority": 1}]


def test_sources_errors_name_the_key(tmp_path):
    flow = tmp_path / "flow.toml"
    flow.write_text('[[sources]]\nmatch = "*"\nminhash.ngram = 3\n')
    with pytest.raises(ConfigError, match=r"unknown workflow key 'minhash.ngram' in \[\[sources\]\] #1 of .*flow.toml"):
        load_workflow(str(flow))
    flow.write_text('[[sources]]\nmatch = "*"\n[[sources]]\nmatch = "x"\nminhash.threshold = 1.5\n')
    with pytest.raises(ConfigError, match=r"^workflow key \[\[sources\]\] #2 minhash.threshold: must be in \(0, 1\]"):
        load_workflow(str(flow))
    flow.write_text('[[sources]]\npriority = 3\n')
    with pytest.raises(ConfigError, match=r"\[\[sources\]\] #1: needs match"):
        load_workflow(str(flow))
    flow.write_text('[[sources]]\nmatch = "x"\nlines.min_docs = 1\n')
    with pytest.raises(ConfigError, match=r"#1 lines.min_docs: must be >= 2"):
        load_workflow(str(flow))
    with pytest.raises(ConfigError, match=r"--set cannot give \[\[sources\]\]"):
        load_workflow(None, ["sources.match=*"])
    flow.write_text('[[sources]]\nmatch = "x"\npriority = 2\n')
    wf = load_workflow(str(flow))
    with pytest.raises(ConfigError, match="pass the path of the workflow file"):
        sadedup.run(write_jsonl(tmp_path / "in.jsonl", ["x"]), tmp_path / "o.jsonl", tmp_path / "w", workflow=wf)


def test_an_entry_that_fits_no_input_file_is_warned_of(cli, tmp_path):
    """A typo in a match glob (`*b.jsnl`) applied its priority to no document without a word;
    now one warning names the entry. The matching entry, by path or by name, is not named."""
    a = write(tmp_path / "a.jsonl", ["x\nsame\n"])
    b = write(tmp_path / "b.jsonl", ["y\nsame\n"])
    flow = tmp_path / "flow.toml"
    flow.write_text('stages = ["exact", "lines"]\n[[sources]]\nmatch = "*b.jsnl"\npriority = 1\n'
                    '[[sources]]\nmatch = "*/a.jsonl"\npriority = 2\n[[sources]]\nmatch = "b.jsonl"\npriority = 3\n')
    p = cli("run", flow, "--input", a, "--input", b, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w")
    warned = [line for line in p.stderr.splitlines() if line.startswith("sadedup: warning:")]
    assert warned == ["sadedup: warning: [[sources]] #1 match = '*b.jsnl' fits none of the input files, so its "
                      "settings apply to no document"]
