"""Dedup against a reference (--reference): the real CLI on real files.

The contract checked: a run B over a new dump with --reference A (A: a finished run over the
earlier dump) decides every new document as one combined run over both dumps decides it
(status, reason, spans and their sources, the output rows), while A's folder is not touched,
byte for byte; a reference that is unfinished or made with other settings is refused in one
line; provenance names the reference (refs, src_ref) and explain shows its text.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from corpus import planted_corpus, random_text
from nearcopies import Writer

# small, so the examples take seconds: one process, no pool
FAST = ["--set", "run.workers=1", "--set", "run.executor=inline"]


def write(path: Path, prefix: str, docs: list[str]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": f"{prefix}{i}", "text": d}, ensure_ascii=False) + "\n")
    return path


def new_dump(rng: random.Random, earlier: list[str], n: int, writer: Writer | None = None) -> list[str]:
    """A later dump with cross-dump copies of `earlier`: exact copies, copies that differ only
    in whitespace (the same normalized text), passages quoted from earlier documents (and from
    this dump's own), near copies (word substitutions, prose only), fresh text."""
    docs: list[str] = []
    prose = [d for d in earlier if d.count(" ") > 30]
    for _ in range(n):
        r = rng.random()
        if r < 0.15:
            docs.append(rng.choice(earlier))
        elif r < 0.22:
            docs.append(rng.choice(earlier).replace(" ", "  ") + " ")
        elif r < 0.62:
            pool = earlier if not docs or rng.random() < 0.75 else docs
            src = rng.choice(pool)
            a = rng.randint(0, len(src))
            b = rng.randint(a, min(len(src), a + rng.randint(0, 90)))
            t = random_text(rng, rng.randint(0, 80))
            c = rng.randint(0, len(t))
            docs.append(t[:c] + src[a:b] + t[c:])
        elif r < 0.75 and writer is not None and prose:
            docs.append(writer.near_copy(rng.choice(prose), 0.01))
        elif writer is not None and r < 0.85:
            docs.append(writer.document(rng.randint(40, 160)))
        else:
            t = random_text(rng, rng.randint(0, 120))
            if t and rng.random() < 0.2:
                t = t + t[len(t) // 2:]
            docs.append(t)
    return docs


def first_dump(rng: random.Random, n: int, writer: Writer | None = None) -> list[str]:
    docs = planted_corpus(rng, n)
    if writer is not None:  # distinct prose originals (their near copies come in later dumps)
        docs += [writer.document(rng.randint(40, 160)) for _ in range(n // 3)]
        rng.shuffle(docs)
    return docs


def rows(workdir: Path, query: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{workdir / 'sadedup.db'}?mode=ro", uri=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def decisions(workdir: Path, bases: list[int], first: int) -> tuple[dict, dict]:
    """Per document from doc_id `first` on (renumbered from 0): (status, reason), and its
    spans with their sources as (where, doc): where is the reference index for a source among
    the earlier dumps, "here" for one in the same dump. `bases`: the doc_id each earlier
    dump starts at, in a combined run (empty: the folder has references, src_ref says)."""
    docs = {d - first: (s, r) for d, s, r in rows(workdir, "SELECT doc_id, status, reason FROM documents")
            if d >= first}
    spans: dict[int, list] = {}
    for d, m, ts, te, cs, ce, sd, st, scs, sce, ref in rows(
            workdir, "SELECT doc_id, method, tok_start, tok_end, char_start, char_end, src_doc_id, src_tok_start, "
                     "src_char_start, src_char_end, src_ref FROM spans ORDER BY doc_id, tok_start"):
        if d < first:
            continue
        if ref is not None:
            src = (ref, sd)
        elif sd < first:
            k = max(i for i, b in enumerate(bases) if b <= sd)
            src = (k, sd - bases[k])
        else:
            src = ("here", sd - first)
        spans.setdefault(d - first, []).append((m, ts, te, cs, ce, src, st, scs, sce))
    return docs, spans


def output_texts(path: Path, prefix: str) -> list[tuple[str, str]]:
    with open(path, encoding="utf-8") as f:
        return [(r["id"], r["text"]) for r in map(json.loads, f) if r["id"].startswith(prefix)]


def snapshot(folder: Path) -> dict[str, str]:
    """Every file of a folder with the sha256 of its bytes (the lock file included)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def check_incremental(cli, tmp: Path, dumps: list[list[str]], sets: list[str],
                      first_sets: tuple[str, ...] = (), fast: tuple[str, ...] = tuple(FAST)) -> tuple[list[Path], Path]:
    """Runs each dump against every earlier one (chained; `first_sets` for the first), and one
    combined run over all the dumps; the last dump's decisions and output rows must be equal
    in both, and no reference folder may change by a byte. Returns (the incremental folders,
    the combined one)."""
    files = [write(tmp / f"dump{i}.jsonl", f"d{i}-", d) for i, d in enumerate(dumps)]
    works: list[Path] = []
    shots: list[dict[str, str]] = []
    for i, f in enumerate(files):
        w = tmp / f"work{i}"
        refs = [x for p in works for x in ("--reference", str(p))]
        cli("run", "-q", "--input", f, "--output", tmp / f"out{i}.jsonl", "--workdir", w, *refs, *sets,
            *(first_sets if i == 0 else ()), *fast)
        works.append(w)
        shots.append(snapshot(w))
    assert [snapshot(w) for w in works[:-1]] == shots[:-1], "a reference folder changed"
    combined = tmp / "combined"
    cli("run", "-q", *[x for f in files for x in ("--input", f)], "--output", tmp / "combined.jsonl",
        "--workdir", combined, *sets, *fast)
    bases = [sum(len(d) for d in dumps[:i]) for i in range(len(dumps))]
    got = decisions(works[-1], [], 0)
    want = decisions(combined, bases, bases[-1])
    assert got[0] == want[0], "document decisions differ from the combined run's"
    for d in want[1]:
        assert got[1].get(d) == want[1][d], f"document {d}: spans differ from the combined run's"
    assert got[1].keys() == want[1].keys()
    last = f"d{len(dumps) - 1}-"
    assert output_texts(tmp / f"out{len(dumps) - 1}.jsonl", last) == output_texts(tmp / "combined.jsonl", last)
    return works, combined


@pytest.mark.parametrize("seed, L, shard, keep, prefilter, parts", [
    (1, 12, None, "first", True, 1),
    (2, 9, 700, "first", False, 1),   # several shards here and there; the reference without anchors
    (3, 10, 900, "none", True, 1),
    # the merge in three key ranges (a task each, run.workers=3): the reference's windows found
    # equal to this run's (several shards of both) counted and numbered part by part
    (4, 11, 600, "first", True, 3),
    (5, 8, 500, "none", True, 3),
])
def test_incremental_equals_combined(cli, tmp_path, seed, L, shard, keep, prefilter, parts):
    """Exact and substring decisions of a new dump against a reference equal those of one
    run over both dumps, with the first dump's documents first."""
    rng = random.Random(seed)
    d1 = first_dump(rng, 90)
    d2 = new_dump(rng, d1, 50)
    sets = ["--set", "stages=exact,substring", "--set", f"substring.min_length={L}", "--set",
            f"substring.keep={keep}"]
    if shard:
        sets += ["--set", f"substring.shard_tokens={shard}"]
    fast = ("--set", f"run.workers={parts}", "--set", "run.executor=inline")
    # the reference may have been built either way: its anchors are made here when it has none
    (ref, b), _ = check_incremental(cli, tmp_path, [d1, d2], sets,
                                    ("--set", f"substring.prefilter={str(prefilter).lower()}"), fast)
    refs = rows(b, "SELECT ref_id, workdir, run_id FROM refs")
    assert refs == [(0, str(ref.resolve()), rows(ref, "SELECT max(run_id) FROM runs WHERE status = 'done'")[0][0])]
    # sources that are in the reference, and exact duplicates of its documents, say so
    assert rows(b, "SELECT count(*) FROM spans WHERE src_ref = 0")[0][0] > 0
    assert rows(b, "SELECT count(*) FROM cluster_members WHERE src_ref = 0")[0][0] > 0
    # what the tasks reading the reference wrote for others to read is counted, file by file
    moved = {s: json.loads(d)["moved_bytes"] for s, d in rows(b, "SELECT stage, detail FROM stages WHERE shard = -1")
             if s in ("candidates", "repeats")}
    size = lambda pattern: sum(p.stat().st_size for p in b.glob(pattern))  # noqa: E731
    assert moved["candidates"]["CrossRange"] > 0
    # the merge parts look this run's windows up in the reference's (MergePart); the files of the
    # reference windows found (wpos, theirs, heads, ends) are joined from the parts with every
    # stream's run_gid.npy (JoinShard)
    assert moved["repeats"]["MergePart"] > 0
    assert moved["repeats"]["JoinShard"] == size("substring/*/L*/**/run_gid.npy") + \
        size("substring/*/L*/ref0_shard_*/[wthe]*.npy") > size("substring/*/L*/**/run_gid.npy")


def test_incremental_equals_combined_sentencepiece(cli, tmp_path):
    """The same with a sentencepiece model: the sources found in the reference get their
    characters from the bounds the reference's shards keep (chars.npy)."""
    from tokenizer_fixtures import sp_model

    rng = random.Random(4)
    d1 = first_dump(rng, 90)
    d2 = new_dump(rng, d1, 50)
    spec = f"sp:{sp_model(tmp_path / 'uni.model')}"
    sets = ["--set", "stages=exact,substring", "--set", "substring.min_length=8", "--set",
            f"substring.tokenizer={spec}", "--set", "substring.shard_tokens=600"]
    (ref, b), _ = check_incremental(cli, tmp_path, [d1, d2], sets, ())
    assert list(ref.glob("substring/*/shard_*/chars.npy"))
    assert rows(b, "SELECT count(*) FROM spans WHERE src_ref = 0 AND src_char_end > src_char_start")[0][0] > 0


def test_chained_references_and_minhash(cli, tmp_path):
    """Three dumps of prose and random text through the default workflow (exact, minhash,
    substring): the third against the first two equals one run over all three, and its near
    copies of a reference document join that document's cluster."""
    rng = random.Random(7)
    w = Writer(7)
    d0 = first_dump(rng, 45, w)
    d1 = new_dump(rng, d0, 35, w)
    d2 = new_dump(rng, d0 + d1, 40, w)
    works, _ = check_incremental(cli, tmp_path, [d0, d1, d2], ["--set", "substring.min_length=16"])
    b = works[-1]
    near = rows(b, "SELECT m.doc_id, k.src_ref, k.doc_id FROM cluster_members m JOIN clusters c USING (cluster_id) "
                   "JOIN cluster_members k ON k.cluster_id = c.cluster_id AND k.doc_id = c.kept_doc_id "
                   "AND k.src_ref IS NOT NULL WHERE c.method = 'minhash' AND m.src_ref IS NULL")
    assert near, "no near copy of a reference document was found"
    for doc, ref, kept in near:
        assert rows(b, f"SELECT reason FROM documents WHERE doc_id = {doc}") == [("near_duplicate",)]
        assert ref in (0, 1)
    # every reference member of a cluster is its kept one
    assert rows(b, "SELECT count(*) FROM cluster_members m JOIN clusters c USING (cluster_id) "
                   "WHERE m.src_ref IS NOT NULL AND m.doc_id != c.kept_doc_id")[0][0] == 0
    # explain shows the reference's text beside a span it duplicated
    doc = rows(b, "SELECT doc_id FROM spans WHERE src_ref IS NOT NULL LIMIT 1")[0][0]
    info = json.loads(cli("explain", b, str(doc), "--doc-id", "--format", "json").stdout)
    span = next(s for s in info["spans"] if s["src_ref"] is not None)
    assert isinstance(span["source_text"], str) and span["source_text"]
    text = cli("explain", b, str(doc), "--doc-id").stdout
    assert "of reference" in text
    # one stage redone against the references in another order rewrites `refs`: the spans
    # the remove stage made name reference 0 as it was then, so explain shows none of the
    # text refs now names (it showed the other reference's document of that doc_id)
    cli("exact", "-q", b, "--set", f"run.reference={works[1]},{works[0]}", *FAST)
    info = json.loads(cli("explain", b, str(doc), "--doc-id", "--format", "json").stdout)
    assert all(s["source_text"] is None for s in info["spans"] if s["src_ref"] is not None)
    assert "is not the one this folder's remove decisions read" in info["note"]


def test_refused_in_one_line(cli, tmp_path):
    """An unfinished reference, one made with settings its artifacts depend on set otherwise,
    a stage that cannot read one, or a folder that is no work folder: one line, exit 2, and
    nothing written for the new run."""
    rng = random.Random(5)
    d1 = first_dump(rng, 30)
    f1 = write(tmp_path / "d1.jsonl", "a", d1)
    f2 = write(tmp_path / "d2.jsonl", "b", new_dump(rng, d1, 10))
    ref = tmp_path / "ref"
    cli("run", "-q", "--input", f1, "--output", tmp_path / "a.jsonl", "--workdir", ref, *FAST)
    half = tmp_path / "half"
    cli("ingest", "-q", "--input", f1, "--workdir", half, *FAST)
    exact_only = tmp_path / "exact_only"
    cli("run", "-q", "--input", f1, "--output", tmp_path / "e.jsonl", "--workdir", exact_only, "--set", "stages=exact",
        *FAST)

    def refused(*args: str) -> str:
        new = tmp_path / "new"
        p = cli("run", "--input", f2, "--output", tmp_path / "b.jsonl", "--workdir", new, *args, *FAST, check=False)
        assert p.returncode == 2, p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("sadedup: error: "), p.stderr
        assert not new.exists(), "the refused run wrote its work folder"
        return lines[0]

    assert "is not finished" in refused("--reference", str(half))
    line = refused("--reference", str(ref), "--set", "substring.min_length=50")
    assert "substring.min_length = 100 there, 50 here" in line
    line = refused("--reference", str(ref), "--set", "minhash.num_perm=128", "--set", "minhash.bands=16")
    assert "minhash.num_perm = 112 there, 128 here" in line and "minhash.bands = 14 there, 16 here" in line
    assert "exact.lowercase" in refused("--reference", str(ref), "--set", "exact.lowercase=true")
    assert "lines stage" in refused("--reference", str(ref), "--set", "stages=exact,lines,substring")
    assert "not a sadedup work folder" in refused("--reference", str(tmp_path))
    assert "no such folder" in refused("--reference", str(tmp_path / "nowhere"))
    (tmp_path / "a-file").write_text("")
    assert "a-file: a file, not a folder" in refused("--reference", str(tmp_path / "a-file"))  # not "no such folder"
    assert "did not run the minhash stage" in refused("--reference", str(exact_only))
    assert "given twice" in refused("--reference", str(ref), "--reference", str(ref))
    # a reference database that is damaged or of another schema version: one line (it was an
    # internal error), and never brought up to date there
    bad = tmp_path / "bad"
    shutil.copytree(ref, bad)
    (bad / "sadedup.db").write_bytes(b"garbage")
    assert "is not a readable sadedup database" in refused("--reference", str(bad))
    shutil.rmtree(bad)
    shutil.copytree(ref, bad)
    con = sqlite3.connect(bad / "sadedup.db")
    con.execute("PRAGMA user_version = 2")
    con.close()
    assert "its database has schema version 2, this sadedup reads" in refused("--reference", str(bad))
    # a cycle: the reference rerun against a folder made against it is refused, not written
    # (it was accepted, rewrote the reference, and left each folder saying the other is unfinished)
    new = tmp_path / "new"
    cli("run", "-q", "--input", f2, "--output", tmp_path / "b.jsonl", "--workdir", new, "--reference", ref, *FAST)
    shot = snapshot(ref)
    p = cli("run", "--workdir", ref, "--reference", new, *FAST, check=False)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "is itself deduplicated against this work folder" in p.stderr
    # a work folder or an output inside the reference: refused (the work folder was made there)
    for workdir, out in ((ref / "inner", tmp_path / "c.jsonl"), (tmp_path / "other", ref / "c.jsonl")):
        p = cli("run", "--input", f2, "--output", out, "--workdir", workdir, "--reference", ref, *FAST, check=False)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert "is inside reference" in p.stderr
    # the reference's own output: refused (it was overwritten, and the reference left unfinished)
    before = (tmp_path / "a.jsonl").read_bytes()
    p = cli("run", "--input", f2, "--output", tmp_path / "a.jsonl", "--workdir", tmp_path / "other", "--reference",
            ref, *FAST, check=False)
    assert p.returncode == 2 and "is the output of reference" in p.stderr, p.stderr
    assert (tmp_path / "a.jsonl").read_bytes() == before
    assert snapshot(ref) == shot
    # the reference's signatures deleted: its minhash stage is not done (it stayed done, the
    # run failed halfway on a missing .npy, and no command made them again)
    next(ref.glob("minhash/*/chunk_00000/sig.npy")).unlink()
    p = cli("run", "--input", f2, "--output", tmp_path / "d.jsonl", "--workdir", tmp_path / "w3", "--reference", ref,
            *FAST, check=False)
    assert p.returncode == 2 and "its minhash stage is stale" in p.stderr and not (tmp_path / "w3").exists(), p.stderr


def test_reference_changed_makes_stale(cli, tmp_path):
    """The reference's keys are in the stages that read it: rerun the reference with another
    setting and the new run's stages are stale, naming the reference; `run` brings them back."""
    rng = random.Random(11)
    d1 = first_dump(rng, 40)
    f1 = write(tmp_path / "d1.jsonl", "a", d1)
    f2 = write(tmp_path / "d2.jsonl", "b", new_dump(rng, d1, 20))
    ref, new = tmp_path / "ref", tmp_path / "new"
    sets = ["--set", "substring.min_length=12", "--set", "stages=exact,substring"]
    cli("run", "-q", "--input", f1, "--output", tmp_path / "a.jsonl", "--workdir", ref, *sets, *FAST)
    cli("run", "-q", "--input", f2, "--output", tmp_path / "b.jsonl", "--workdir", new, "--reference", ref, *sets,
        *FAST)
    status = json.loads(cli("status", new, "--format", "json").stdout)["stages"]
    assert all(s["state"] == "done" for s in status)
    cli("run", "-q", "--workdir", ref, "--set", "substring.drop_fraction=0.3", *FAST)
    status = json.loads(cli("status", new, "--format", "json").stdout)["stages"]
    stale = {s["stage"]: s["why"] for s in status if s["state"] != "done"}
    assert "remove" in stale and f"reference {ref.resolve()} changed since it ran" in stale["remove"]
    assert "exact" not in stale  # what exact reads from the reference did not change
    cli("run", "-q", "--workdir", new, *FAST)
    status = json.loads(cli("status", new, "--format", "json").stdout)["stages"]
    assert all(s["state"] == "done" for s in status)
    # naming a workflow keeps the folder's references, as it keeps its inputs (switching to
    # one that names none made the run forget them and keep what they drop)
    before = rows(new, "SELECT doc_id, status, reason FROM documents ORDER BY doc_id")
    cli("run", "default", "-q", "--workdir", new, *sets, *FAST)
    assert rows(new, "SELECT workdir FROM refs") == [(str(ref.resolve()),)]
    assert rows(new, "SELECT doc_id, status, reason FROM documents ORDER BY doc_id") == before
    # a run writing the reference (its lock held): status says so, instead of reading it
    # halfway (while a --restart emptied it: "no such table", "not a sadedup work folder")
    fd = os.open(ref / ".lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        status = json.loads(cli("status", new, "--format", "json").stdout)["stages"]
    finally:
        os.close(fd)
    assert any("is in use by another sadedup run" in (s["why"] or "") for s in status), status
    # the reference restarted over other inputs: its doc_ids name other documents now, so
    # explain shows no reference text (it showed another document's) and says why, and the
    # report is refused in one line
    doc = rows(new, "SELECT doc_id FROM spans WHERE src_ref IS NOT NULL LIMIT 1")[0][0]
    # --restart without the inputs it forgets is refused before, not after, emptying the folder
    shot = snapshot(ref)
    p = cli("run", "--restart", "--output", tmp_path / "a.jsonl", "--workdir", ref, *FAST, check=False)
    assert p.returncode == 2 and "--input" in p.stderr and snapshot(ref) == shot, p.stderr
    cli("run", "-q", "--restart", "--input", f2, "--input", f1, "--output", tmp_path / "a.jsonl", "--workdir", ref,
        *sets, *FAST)
    info = json.loads(cli("explain", new, str(doc), "--doc-id", "--format", "json").stdout)
    assert all(s["source_text"] is None for s in info["spans"] if s["src_ref"] is not None)
    assert "changed since this folder's decisions read it" in info["note"]
    p = cli("report", new, "-o", tmp_path / "r.html", check=False)
    assert p.returncode == 2 and "reference 0" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


@pytest.mark.parametrize("seed", range(20))
def test_least_of_runs_in_chunks(seed):
    """The least counted position per run of windows, read a chunk of windows at a time (a
    run longer than a chunk, runs of one window), against plain Python."""
    import numpy as np

    from sadedup.reference import _NONE, _least_of_runs

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    wpos = rng.permutation(n).astype(np.int32)
    counted = rng.random(n) < 0.6
    cuts = np.unique(np.concatenate(([0, n], rng.integers(0, n, size=int(rng.integers(0, n + 1))))))
    a, b = cuts[:-1], cuts[1:]
    pick = rng.random(len(a)) < 0.7  # some runs only, as for the runs read window by window
    a, b = a[pick], b[pick]
    want = [min([int(q) for q in wpos[x:y] if counted[q]], default=_NONE) for x, y in zip(a, b)]
    for chunk in (1, 2, 3, 7, n):
        got = _least_of_runs(wpos, a, b, lambda q: (q, counted[q]), chunk)
        assert got.tolist() == want, chunk


def test_first_kept_occurrence_after_dropped_ones(cli, tmp_path):
    """A passage whose first occurrences in the reference are all in documents its drop rule
    dropped (their own repeats), and a later one in a kept document: a new copy's source is
    that kept one, as in the combined run (the reference's first two occurrences do not
    count, so its windows are read one by one)."""
    rng = random.Random(3)
    alphabet = list("abcdefghij")
    passage = random_text(rng, 25, alphabet)
    fresh = [random_text(rng, 40, alphabet) for _ in range(6)]
    old = [passage * 6, "zz" + passage * 6, fresh[0] + passage + fresh[1], fresh[2]]
    new = [fresh[3] + passage + fresh[4], fresh[5]]
    sets = ["--set", "stages=exact,substring", "--set", "substring.min_length=10"]
    (ref, b), _ = check_incremental(cli, tmp_path, [old, new], sets)
    assert rows(ref, "SELECT doc_id, status, reason FROM documents ORDER BY doc_id")[:3] == [
        (0, "dropped", "substring_coverage"), (1, "dropped", "substring_coverage"), (2, "kept", None)]
    assert rows(b, "SELECT src_ref, src_doc_id FROM spans WHERE doc_id = 0") == [(0, 2)]


def test_relative_output_from_another_directory(cli, tmp_path):
    """A relative --output names one file whatever directory a later command starts in: it was
    kept as typed and resolved again by each command, so from another directory the reference's
    finished export looked stale and the new run was refused ("reference ... is not finished")."""
    import subprocess
    import sys

    rng = random.Random(4)
    d1 = first_dump(rng, 30)
    f1 = write(tmp_path / "d1.jsonl", "a", d1)
    f2 = write(tmp_path / "d2.jsonl", "b", new_dump(rng, d1, 15))
    cli("run", "-q", "--input", f1, "--output", "a.jsonl", "--workdir", "ref", "--set", "stages=exact", *FAST)
    (tmp_path / "sub").mkdir()

    def elsewhere(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "sadedup.cli", *map(str, args)], capture_output=True, text=True,
                              cwd=tmp_path / "sub", env={**os.environ, "CI": "1"}, timeout=600)

    assert json.loads(elsewhere("status", "../ref", "--format", "json").stdout)["stages"][-1]["state"] == "done"
    p = elsewhere("run", "-q", "--input", f2, "--output", "../b.jsonl", "--workdir", "../new", "--reference", "../ref",
                  "--set", "stages=exact", *FAST)
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "sub" / "a.jsonl").exists() and (tmp_path / "b.jsonl").exists()


@pytest.mark.parametrize("seed", range(30))
def test_bounds_place_like_searchsorted(seed):
    """The piece (region, document) of many positions at once, by the bucket table and its
    steps (short pieces, empty ones, buckets with many starts, one piece), against numpy's
    binary search."""
    import numpy as np

    from sadedup.reference import BUCKET_BITS, _Bounds

    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 400))
    # lengths from empty to several buckets long, so some buckets hold many starts
    scale = [1, 3, 1 << BUCKET_BITS, 5 << BUCKET_BITS][seed % 4]
    lengths = rng.integers(0, scale + 1, size=k)
    lengths[rng.integers(0, k)] += 1  # at least one position
    bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    q = rng.integers(0, bounds[-1], size=int(rng.integers(1, 3000))).astype(np.int64)
    q[:2] = [0, bounds[-1] - 1]
    assert np.array_equal(_Bounds(bounds)(q), np.searchsorted(bounds, q, side="right") - 1)


def test_a_reference_of_a_reference_not_given_is_warned(cli, tmp_path):
    """A folder made against another is its own kept documents only: naming it alone as the
    reference does not see what it dropped as copies of its own reference, and the run says so
    (naming both, it does not, and those copies are dropped)."""
    rng = random.Random(11)
    d0 = [random_text(rng, 400) for _ in range(20)]
    d1 = [random_text(rng, 400) for _ in range(10)] + d0[:8]
    a, b = write(tmp_path / "a.jsonl", "a", d0), write(tmp_path / "b.jsonl", "b", d1)
    sets = ["--set", "stages=exact", *FAST]
    cli("run", "-q", "--input", a, "--output", tmp_path / "oa.jsonl", "--workdir", tmp_path / "wa", *sets)
    cli("run", "-q", "--input", b, "--output", tmp_path / "ob.jsonl", "--workdir", tmp_path / "wb",
        "--reference", tmp_path / "wa", *sets)
    assert rows(tmp_path / "wb", "SELECT count(*) FROM documents WHERE status = 'dropped'") == [(8,)]
    # the same dump again, against wb alone: d0's copies that wb dropped are not in wb's kept text
    p = cli("run", "-q", "--input", b, "--output", tmp_path / "oc.jsonl", "--workdir", tmp_path / "wc",
            "--reference", tmp_path / "wb", *sets)
    assert f"reference {tmp_path / 'wb'} was deduplicated against {tmp_path / 'wa'}, which is not a reference " \
           f"here" in p.stderr, p.stderr
    assert f"add --reference {tmp_path / 'wa'}" in p.stderr
    assert rows(tmp_path / "wc", "SELECT count(*) FROM documents WHERE status = 'kept'") == [(8,)]
    p = cli("run", "-q", "--input", b, "--output", tmp_path / "od.jsonl", "--workdir", tmp_path / "wd",
            "--reference", tmp_path / "wb", "--reference", tmp_path / "wa", *sets)
    assert "warning" not in p.stderr, p.stderr
    assert rows(tmp_path / "wd", "SELECT status, count(*) FROM documents GROUP BY 1") == [("dropped", 18)]


def test_restart_forgets_the_references_and_says_so(cli, tmp_path):
    """--restart starts the folder over as an empty one, references included; what those would
    have dropped is kept now, so that is a warning, even with -q."""
    rng = random.Random(12)
    d0 = [random_text(rng, 400) for _ in range(10)]
    a, b = write(tmp_path / "a.jsonl", "a", d0), write(tmp_path / "b.jsonl", "b", d0[:4] + d0[:2])
    sets = ["--set", "stages=exact", *FAST]
    cli("run", "-q", "--input", a, "--output", tmp_path / "oa.jsonl", "--workdir", tmp_path / "wa", *sets)
    w = tmp_path / "wb"
    cli("run", "-q", "--input", b, "--output", tmp_path / "ob.jsonl", "--workdir", w, "--reference", tmp_path / "wa",
        *sets)
    assert rows(w, "SELECT count(*) FROM documents WHERE status = 'dropped'") == [(6,)]
    p = cli("run", "-q", "--input", b, "--output", tmp_path / "ob.jsonl", "--workdir", w, "--restart", *sets)
    assert f"--restart forgot the references of {w} ({tmp_path / 'wa'})" in p.stderr, p.stderr
    assert rows(w, "SELECT count(*) FROM documents WHERE status = 'dropped'") == [(2,)]  # as on an empty folder
    assert rows(w, "SELECT count(*) FROM refs") == [(0,)]
