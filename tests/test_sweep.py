"""`sadedup sweep`: what other settings would decide, from the stored artifacts, equals what a
run with that setting decides (fresh work folders), and the sweep changes nothing it reads."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import db_rows
from nearcopies import planted_corpus, write_jsonl

import sadedup

ONE = ["--workers", "1", "--executor", "inline"]   # cheap and the same on any machine


def cli(cwd: Path, *args, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "sadedup.cli", *map(str, args)], capture_output=True, text=True,
                       cwd=cwd, env={**os.environ, "CI": "1"}, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(f"sadedup {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr}")
    return p


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """Planted near-copies at several word-substitution rates: MinHash similarities spread
    from 0.3 to 1, and repeated passages of every length from a few words to whole texts."""
    root = tmp_path_factory.mktemp("sweep")
    write_jsonl(root / "in.jsonl", planted_corpus(4, 36, words=(40, 160)).docs)
    return root


def fresh(root: Path, name: str, *sets: str, workers: int = 1) -> Path:
    """A finished run on a new work folder, made once per module and name (through the API:
    the command's own pipeline, without starting an interpreter per run; the sweeps go
    through the real command)."""
    w = root / name
    if not (w / "sadedup.db").exists():
        sadedup.run(root / "in.jsonl", root / f"{name}.jsonl", w, overrides=[*sets, f"run.workers={workers}"],
                    executor="inline", quiet=True)
    return w


base = fresh


def sweep_json(root: Path, w: Path, *args: str) -> dict:
    return json.loads(cli(root, "sweep", w, *args, "--format", "json", *ONE).stdout)


def minhash_decisions(w: Path) -> dict:
    """What the minhash stage of a finished folder decided, counted in SQL."""
    seen = db_rows(w, "SELECT count(*) FROM documents WHERE reason IS NULL OR reason != 'exact_duplicate'")[0][0]
    dropped, chars = db_rows(w, "SELECT count(*), coalesce(sum(n_chars), 0) FROM documents "
                                "WHERE reason = 'near_duplicate'")[0]
    clusters = db_rows(w, "SELECT count(*) FROM clusters WHERE method = 'minhash'")[0][0]
    return {"documents": seen, "kept": seen - dropped, "dropped": dropped, "removed_chars": chars,
            "clusters": clusters}


def substring_decisions(w: Path) -> dict:
    """What the substring stage decided: over the documents it tokenized, the ones it dropped
    lose all their characters, the others the characters cut from them."""
    n, dropped, chars, cut, tokens = db_rows(w, """
        SELECT count(*), sum(reason = 'substring_coverage'),
               sum(CASE WHEN reason = 'substring_coverage' THEN n_chars ELSE removed_chars END),
               sum(reason IS NULL AND removed_tokens > 0), sum(removed_tokens)
        FROM documents WHERE n_tokens IS NOT NULL""")[0]
    spans = db_rows(w, "SELECT count(*) FROM spans WHERE method = 'substring'")[0][0]
    return {"documents": n, "kept": n - dropped, "dropped": dropped, "removed_chars": chars, "cut": cut,
            "spans": spans, "removed_tokens": tokens}


def folder_state(w: Path) -> dict[str, str]:
    """Every file of a work folder with its checksum (the lock file excepted: it holds a pid)."""
    return {str(p.relative_to(w)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(w.rglob("*")) if p.is_file() and p.name != ".lock"}


@pytest.mark.parametrize("verify", ["estimate", "exact"])
def test_minhash_thresholds_equal_real_runs(root, verify):
    w = base(root, f"mh-{verify}", "stages=exact,minhash", f"minhash.verify={verify}")
    before = folder_state(w)
    res = sweep_json(root, w, "--minhash-threshold", "0.9,0.6,0.75")
    assert folder_state(w) == before  # nothing read was changed, nothing left behind
    assert [r["value"] for r in res["minhash_threshold"]] == [0.6, 0.75, 0.9]
    assert res["as_run"] == {"minhash_threshold": 0.8} and res["unanswered"] == [] and res["min_length"] == []
    # its time as a stage's detail gives it: wall seconds, and CPU of its tasks and of the driver
    assert res["seconds"]["minhash_threshold"] > 0 and set(res["cpu_seconds"]) == {"minhash_threshold"}
    assert set(res["cpu_seconds"]["minhash_threshold"]) == {"driver", "tasks"}
    got = {r["value"]: r for r in res["minhash_threshold"]}
    for t in (0.6, 0.75, 0.9):
        real = minhash_decisions(fresh(root, f"mh-{verify}-{t}", "stages=exact,minhash", f"minhash.verify={verify}",
                                       f"minhash.threshold={t}"))
        assert {k: got[t][k] for k in real} == real, t
    drops = [got[t]["dropped"] for t in (0.6, 0.75, 0.9)]
    assert drops[0] > drops[1] > drops[2] > 0, drops  # the corpus tells the thresholds apart


def test_minhash_thresholds_with_per_source_settings(root):
    """A source with a threshold of its own (pairs verify at the stricter of their two
    documents') and a priority (the copy kept): changing minhash.threshold moves the others."""
    docs = [json.loads(line) for line in (root / "in.jsonl").read_text().splitlines()]
    half = len(docs) // 2
    for name, part in (("a.jsonl", docs[:half]), ("b.jsonl", docs[half:])):
        (root / name).write_text("".join(json.dumps(d) + "\n" for d in part))
    flow = root / "flow.toml"
    flow.write_text('stages = ["exact", "minhash"]\n\n[[sources]]\nmatch = "*b.jsonl"\nminhash.threshold = 0.9\n'
                    'priority = 1\n')

    def run(name: str, *sets: str) -> Path:
        sadedup.run([root / "a.jsonl", root / "b.jsonl"], root / f"{name}.jsonl", root / name, workflow=flow,
                    overrides=[*sets, "run.workers=1"], executor="inline", quiet=True)
        return root / name

    w = run("mh-sources")
    detail = json.loads(db_rows(w, "SELECT detail FROM stages WHERE stage = 'minhash' AND shard = -1")[0][0])
    assert detail["source_thresholds"] == [0.8, 0.9]
    got = {r["value"]: r for r in sadedup.sweep(w, "0.6,0.75,0.95")["minhash_threshold"]}
    for t in (0.6, 0.75, 0.95):
        real = minhash_decisions(run(f"mh-sources-{t}", f"minhash.threshold={t}"))
        assert {k: got[t][k] for k in real} == real, t
    assert got[0.6]["dropped"] > got[0.75]["dropped"]


def test_minhash_sweep_of_a_folder_that_kept_no_pairs(root):
    """A minhash stage that ran before the candidate pairs were kept: they are made again from
    its band hashes and signatures, with the same answers."""
    w = base(root, "mh-estimate", "stages=exact,minhash", "minhash.verify=estimate")
    old = root / "mh-old"
    shutil.copytree(w, old)
    folder = next((old / "minhash").iterdir())
    for f in ("pairs.npy", "pair_similarity.npy"):
        (folder / f).unlink()
    a = sadedup.sweep(w, "0.6,0.9", workers=1, executor="inline")
    b = sadedup.sweep(old, [0.6, 0.9], workers=1, executor="inline")
    assert a["minhash_threshold"] == b["minhash_threshold"]
    assert not (folder / "pairs.npy").exists()  # and the sweep did not write them into the stage's folder


def test_min_lengths_equal_real_runs_with_the_prefilter(root):
    w = base(root, "sub-first", "stages=substring")
    before = folder_state(w)
    p = cli(root, "sweep", w, "--min-length", "300,150,50,100", *ONE)
    # the length below the run's own cannot be answered from candidate text: named, not guessed
    assert "min_length 50: not answered:" in p.stdout and "prefilter" in p.stdout
    assert "100 (as run)" in p.stdout
    assert folder_state(w) == before
    res = sadedup.sweep(w, min_lengths=[300, 150, 50, 100], workers=1, executor="inline")
    assert res["unanswered"] == [{"setting": "min_length", "values": [50], "why": res["unanswered"][0]["why"]}]
    got = {r["value"]: r for r in res["min_length"]}
    assert sorted(got) == [100, 150, 300]
    assert {k: got[100][k] for k in substring_decisions(w)} == substring_decisions(w)  # the run's own
    for L in (150, 300):
        real = substring_decisions(fresh(root, f"sub-first-{L}", "stages=substring", f"substring.min_length={L}"))
        assert {k: got[L][k] for k in real} == real, L
    assert got[100]["removed_chars"] > got[150]["removed_chars"] > got[300]["removed_chars"] > 0
    # with the full-text suffix arrays of `sadedup index`, shorter lengths are answered too
    indexed = root / "sub-first-indexed"
    shutil.copytree(w, indexed)
    sadedup.index(indexed, executor="inline", quiet=True)
    res = sadedup.sweep(indexed, min_lengths=[50], workers=1, executor="inline")
    assert res["unanswered"] == []
    real = substring_decisions(fresh(root, "sub-first-50", "stages=substring", "substring.min_length=50"))
    assert {k: res["min_length"][0][k] for k in real} == real


def test_min_lengths_equal_real_runs_over_all_the_text(root):
    """keep = none, suffix arrays over all the text: shorter lengths than the run's answer too."""
    w = base(root, "sub-none", "stages=substring", "substring.keep=none", "substring.prefilter=false")
    res = sadedup.sweep(w, min_lengths="60,200", workers=1, executor="inline")
    assert res["unanswered"] == []
    got = {r["value"]: r for r in res["min_length"]}
    for L in (60, 200):  # the fresh runs prefilter (the default): the decisions must not depend on it
        real = substring_decisions(fresh(root, f"sub-none-{L}", "stages=substring", "substring.keep=none",
                                         f"substring.min_length={L}"))
        assert {k: got[L][k] for k in real} == real, L
    assert got[60]["dropped"] > got[200]["dropped"]


def test_min_lengths_over_several_shards_and_merge_parts(root):
    """Shards of about 20k tokens and a cross-shard merge in two parts: the answers are those
    of one-shard runs."""
    w = fresh(root, "sub-shards", "stages=substring", "substring.shard_tokens=20000", workers=2)
    assert db_rows(w, "SELECT json_extract(detail, '$.shards') FROM stages WHERE stage = 'tokenize' AND shard = -1")[0][0] >= 3
    got = {r["value"]: r for r in sadedup.sweep(w, min_lengths="100,150", executor="inline")["min_length"]}
    for L in (100, 150):
        real = substring_decisions(fresh(root, f"sub-first-{L}" if L != 100 else "sub-first", "stages=substring",
                                         *([f"substring.min_length={L}"] if L != 100 else [])))
        assert {k: got[L][k] for k in real} == real, L


def test_a_sweep_reads_stage_records_without_the_engine_and_still_sees_an_edit(root, monkeypatch):
    """A read-only folder's stage records come through a plain connection: the sweep opens no
    SQLAlchemy engine (whose first use imports the SQLite dialect, 30-70 ms of its own time),
    reads the rows the engine reads, and a decision edited by hand still makes the stage stale."""
    from sadedup import db
    from sadedup.workspace import Workspace

    w = base(root, "mh-estimate", "stages=exact,minhash", "minhash.verify=estimate")
    with monkeypatch.context() as m:
        def no_engine(*args, **kwargs):
            raise AssertionError("the sweep opened an engine")
        m.setattr(db, "open_db", no_engine)
        assert sadedup.sweep(w, "0.7", workers=1, executor="inline")["minhash_threshold"][0]["dropped"] > 0
    ro, rw = Workspace(w, readonly=True), Workspace(w)
    try:
        for stage in ("ingest", "exact", "minhash", "nothing"):
            a, b = ro.stage_row(stage), rw.stage_row(stage)
            assert (a is None and b is None) or (tuple(a) == tuple(b) and a.detail == b.detail and a.key == b.key)
        assert ro._engine is None
    finally:
        ro.close()
        rw.close()
    edited = root / "mh-edited"
    shutil.copytree(w, edited)
    con = sqlite3.connect(edited / "sadedup.db")
    with con:
        con.execute("UPDATE documents SET status = 'kept', reason = NULL WHERE doc_id = "
                    "(SELECT min(doc_id) FROM documents WHERE reason = 'near_duplicate')")
    con.close()
    stale = "stage minhash is stale (its files are missing or damaged)"
    with pytest.raises(sadedup.SadedupError, match=re.escape(stale)):
        sadedup.sweep(edited, "0.7", workers=1, executor="inline")


def test_what_cannot_be_swept_is_one_line(root):
    w = base(root, "sub-first", "stages=substring")
    p = cli(root, "sweep", w, "--min-length", "50,80", "--minhash-threshold", "0.7", check=False)
    assert p.returncode == 2 and p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sadedup: error: sweep: minhash_threshold 0.7: not answered: "
                                                   "the work folder's workflow has no minhash stage"), p.stderr
    assert "min_length 50, 80: not answered: the stored arrays cover only the text that can hold a repeated " \
           "100-token window" in lines[0]
    for kw, words in (({}, "name at least one setting"),
                      ({"minhash_thresholds": "1.5"}, "--minhash-threshold: 1.5 is not in (0, 1]"),
                      ({"minhash_thresholds": "0.5,x"}, "--minhash-threshold: 'x' is not a number"),
                      ({"min_lengths": "20.5"}, "--min-length: '20.5' is not a whole number"),
                      ({"min_lengths": [0]}, "--min-length: 0 is not from 1 to 65535")):
        with pytest.raises(sadedup.SadedupError, match=re.escape(words)):
            sadedup.sweep(w, **kw)
    with pytest.raises(sadedup.SadedupError, match="not a sadedup work folder"):
        sadedup.sweep(root / "nowhere", min_lengths="200")
