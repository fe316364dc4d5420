"""The sequences a user performs on one work folder end in the output of a fresh run, or in a
one-line refusal: a stage rerun with another setting, a workflow switched and back, an
artifact deleted or damaged, --restart among the user's files, a forgotten --input, Ctrl-C."""
from __future__ import annotations

import json
import os
import random
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import db_rows, decisions, sequence_corpus

import sadedup
from sadedup import pipeline
from sadedup.workspace import Workspace

SMALL = ["--set", "substring.min_length=20", "--workers", "1"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return sequence_corpus(tmp_path_factory.mktemp("seq") / "in.jsonl")


def sadedup_cli(cwd: Path, *args) -> subprocess.CompletedProcess:
    """The real command, as conftest's `cli` runs it, for module-scoped fixtures."""
    p = subprocess.run([sys.executable, "-m", "sadedup.cli", *map(str, args)], capture_output=True, text=True,
                       cwd=cwd, env={**os.environ, "CI": "1"}, timeout=600)
    assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def fresh(corpus, tmp_path_factory):
    """fresh(*sets): the output and decisions of a fresh run of the corpus with SMALL and these
    `section.key=value` settings. It is the oracle the sequences are held to, not what they
    test, so it runs in this process (a command costs a second of imports) and once per
    module for each setting (the default one is wanted by several tests)."""
    done: dict[tuple[str, ...], tuple[bytes, list]] = {}

    def run(*sets: str) -> tuple[bytes, list]:
        if sets not in done:
            d = tmp_path_factory.mktemp("fresh")
            sadedup.run(corpus, d / "out.jsonl", d / "work", overrides=["substring.min_length=20", *sets], workers=1,
                        quiet=True)
            done[sets] = (d / "out.jsonl").read_bytes(), decisions(d / "work")
        return done[sets]

    return run


@pytest.fixture(scope="module")
def first_run(corpus, tmp_path_factory):
    """first_run(w, *args): work folder `w` as the first command of many sequences leaves it,
    `sadedup run --input corpus --output ... --workdir w SMALL args`, made by that command once
    per module and copied; returns that run's (output, decisions). A copy is that folder (the
    paths inside it are relative to it, the input is the same file) except for the output it
    records, the original's: so every test that starts from a copy names its own --output in
    its next run, as the first run would have."""
    made: dict[tuple[str, ...], tuple[Path, bytes, list]] = {}

    def copy(w: Path, *args: str) -> tuple[bytes, list]:
        if args not in made:
            d = tmp_path_factory.mktemp("first")
            sadedup_cli(d, "run", "--input", corpus, "--output", d / "out.jsonl", "--workdir", d / "w", *SMALL, *args)
            made[args] = d / "w", (d / "out.jsonl").read_bytes(), decisions(d / "w")
        base, out, dec = made[args]
        shutil.copytree(base, w, symlinks=True)
        return out, dec

    return copy


def current(w: Path, verify: bool = False) -> bool:
    """What `sadedup status` prints as "pending: nothing" (every stage done, from
    pipeline.status), asked in this process where the status text itself is not what a test
    checks."""
    return all(s["state"] == "done" for s in pipeline.status(w, verify=verify))


def one_line_refusal(p: subprocess.CompletedProcess, *words: str) -> None:
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sadedup: error:"), p.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_a_stage_rerun_with_another_setting_makes_what_follows_stale(cli, corpus, fresh, tmp_path):
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL)
    assert "pending: nothing" in cli("status", w).stdout
    cli("minhash", w, "--set", "minhash.threshold=0.6")
    status = cli("status", w).stdout
    assert "tokenize (stale: minhash changed since it ran)" in status and "export" in status
    one_line_refusal(cli("export", w, check=False), "tokenize", "minhash changed")
    one_line_refusal(cli("remove", w, check=False), "tokenize")
    # the run brings it current: the same output as a fresh run at 0.6
    cli("run", "--workdir", w, *SMALL, "--set", "minhash.threshold=0.6")
    want, want_decisions = fresh("minhash.threshold=0.6")
    assert out.read_bytes() == want and decisions(w) == want_decisions
    assert current(w)
    # the stage commands, in order, do too
    cli("minhash", w, "--set", "minhash.threshold=0.8")
    for stage in ("tokenize", "build", "repeats", "remove"):
        cli(stage, w)
    cli("export", w)
    want, want_decisions = fresh()
    assert out.read_bytes() == want and decisions(w) == want_decisions


def shard_records(work: Path) -> list:
    return db_rows(work, "SELECT stage, shard, status FROM stages WHERE shard >= 0 ORDER BY stage, shard")


def test_a_rerun_with_fewer_shards_keeps_no_record_of_the_former_ones(cli, corpus, first_run, tmp_path):
    """Rerun with a larger shard size: every per-shard record (tokenize, anchors, candidates,
    build, windows, groups) is the fresh run's, none of the former plan's shards past the new
    count (status listed them done, and each stage's checksum counted them)."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    first_run(w, "--set", "substring.shard_tokens=8000")
    many = shard_records(w)
    cli("run", "--output", out, "--workdir", w, *SMALL, "--set", "substring.shard_tokens=60000")
    d = tmp_path / "fresh"
    d.mkdir()
    sadedup.run(corpus, d / "out.jsonl", d / "work", overrides=["substring.min_length=20",
                                                                 "substring.shard_tokens=60000"], workers=1, quiet=True)
    assert len(shard_records(d / "work")) < len(many)
    assert shard_records(w) == shard_records(d / "work")
    assert out.read_bytes() == (d / "out.jsonl").read_bytes() and decisions(w) == decisions(d / "work")


def test_an_earlier_stage_rerun_numbers_clusters_and_spans_as_a_fresh_run(cli, corpus, fresh, tmp_path):
    """explain and SQL name clusters and spans by id: a stage rerun took ids past every other
    method's, so exact's clusters came after minhash's and lines' spans after substring's,
    where a fresh run numbers them in stage order."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    stages = ["--set", "stages=exact,minhash,lines,substring", "--set", "lines.min_docs=2"]
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, *stages)
    cli("run", "--workdir", w, *SMALL, "--set", "exact.lowercase=true", "--set", "lines.min_docs=3")
    want, want_decisions = fresh("stages=exact,minhash,lines,substring", "exact.lowercase=true", "lines.min_docs=3")
    assert out.read_bytes() == want and decisions(w) == want_decisions
    methods = {r[1] for r in want_decisions if len(r) == 9} | {r[1] for r in want_decisions if len(r) == 4}
    assert {"exact", "minhash", "lines", "substring"} <= methods  # every numbering is exercised
    cli("exact", w, "--set", "exact.lowercase=false")
    cli("minhash", w)
    cli("lines", w, "--set", "lines.min_docs=2")
    cli("run", "--workdir", w, *SMALL)
    want, want_decisions = fresh("stages=exact,minhash,lines,substring", "lines.min_docs=2")
    assert out.read_bytes() == want and decisions(w) == want_decisions


def test_switching_workflows_and_back_gives_fresh_output(cli, corpus, fresh, first_run, tmp_path):
    """A --set changes the folder's workflow until a workflow is named: a rerun without one
    keeps the folder's settings (and says so), `run default` switches back."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    full, full_decisions = fresh()
    assert any(d[1] == "substring" for d in full_decisions)  # it has spans
    doc, doc_decisions = fresh("stages=exact,minhash")
    sub, sub_decisions = fresh("stages=substring")
    assert first_run(w) == (full, full_decisions)  # the first run of the sequence, its output fresh
    # (workflow named or not, --set, the fresh output it must give, whether it says the
    # folder's own workflow was kept: only when it was and differs from the default's)
    for named, sets, (want, want_decisions), note in [
            ([], ["stages=exact,minhash"], (doc, doc_decisions), False),
            ([], [], (doc, doc_decisions), True),
            (["default"], [], (full, full_decisions), False),
            ([], ["stages=substring"], (sub, sub_decisions), False),
            ([], ["stages=exact,substring"], (None, None), False),
            (["default"], ["substring.prefilter=false"], (full, full_decisions), False),
            ([], ["substring.min_length=30"], (None, None), True),  # prefilter=false is kept
            (["default"], [], (full, full_decisions), False)]:
        p = cli("run", *named, "--input", corpus, "--output", out, "--workdir", w, *SMALL,
                *(x for s in sets for x in ("--set", s)))
        if want is not None:
            assert out.read_bytes() == want and decisions(w) == want_decisions, (named, sets)
        assert current(w), (named, sets)
        assert ("recorded workflow is kept" in p.stderr) == note, (named, sets, p.stderr)


def test_a_left_out_stages_decisions_go_even_without_its_record(cli, corpus, fresh, first_run, tmp_path):
    """Leaving a stage out of the workflow takes back what the database holds of it, found by
    its rows, not by its record: a run killed between a stage's decisions and its record, or a
    record deleted by hand, left near_duplicate drops that `holding` must still see."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    first_run(w)
    assert db_rows(w, "SELECT count(*) FROM documents WHERE reason = 'near_duplicate'")[0][0] > 0
    con = sqlite3.connect(w / "sadedup.db")
    with con:
        con.execute("DELETE FROM stages WHERE stage = 'minhash'")
    con.close()
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--set", "stages=exact,substring")
    want, want_decisions = fresh("stages=exact,substring")
    assert out.read_bytes() == want and decisions(w) == want_decisions
    assert db_rows(w, "SELECT count(*) FROM clusters WHERE method = 'minhash'")[0][0] == 0


def test_no_span_stage_left_no_removed_chars(cli, corpus, fresh, first_run, tmp_path):
    """A folder switched to a workflow without span stages has removed_chars NULL, as a fresh
    run has: lines' shard records, kept for reuse, counted as a span stage still there, and
    every kept document read 0 (found by test_sequence_machine)."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    first_run(w, "--set", "stages=exact,lines,substring")
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--set", "stages=exact,minhash")
    assert db_rows(w, "SELECT count(removed_chars) FROM documents") == [(0,)]
    want, want_decisions = fresh("stages=exact,minhash")
    assert out.read_bytes() == want and decisions(w) == want_decisions


@pytest.mark.parametrize("stages", ["exact,lines,substring", "lines", "lines,passages,substring"])
def test_removed_chars_is_what_the_output_lost_whatever_cut_it(cli, corpus, fresh, tmp_path, stages):
    """documents.removed_chars is the characters the span stages cut, all told: was only the
    substring stage's (NULL with lines alone, lines' cuts left out, a substring span inside a
    cut line counted again). Through a switch of workflows and back, too."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    sets = ["--set", f"stages={stages}", "--set", "lines.keep=none", "--set", "passages.words=20",
            "--set", "passages.stride=10"]
    for extra in (sets, ["--set", "stages=exact"], sets):
        cli("run", "default", "--input", corpus, "--output", out, "--workdir", w, *SMALL, *extra)
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    rows = db_rows(w, "SELECT ext_id, n_chars, removed_chars FROM documents WHERE status = 'kept' ORDER BY doc_id")
    assert [r[0] for r in rows] == [d["id"] for d in kept]
    assert [n - r for _, n, r in rows] == [len(d["text"]) for d in kept]
    methods = {m for (m,) in db_rows(w, "SELECT DISTINCT method FROM spans")}
    assert methods == set(stages.split(",")) - {"exact"}  # every cutting stage cut something here
    if "exact" in stages:
        assert db_rows(w, "SELECT DISTINCT removed_chars FROM documents WHERE reason = 'exact_duplicate'") == [(None,)]
    dropped = db_rows(w, "SELECT count(*) FROM documents WHERE reason = 'line_coverage' AND removed_chars > 0")
    assert dropped[0][0] > 0  # those lines cut and dropped say how much was cut


def test_a_refused_stage_command_keeps_nothing_of_its_set(cli, first_run, tmp_path):
    """A stage command refused because a stage before it is not current (here made stale by
    its own --set) leaves the folder as it was: its --set is not kept for the next command."""
    w = tmp_path / "w"
    full, full_decisions = first_run(w)
    state = (w / "state.json").read_bytes()
    one_line_refusal(cli("remove", w, "--set", "substring.min_length=30", check=False), "needs")
    assert (w / "state.json").read_bytes() == state and current(w)
    out = tmp_path / "again.jsonl"
    cli("export", w, "--output", out)
    assert out.read_bytes() == full and decisions(w) == full_decisions


@pytest.mark.parametrize("damage", ["delete", "corrupt"])
@pytest.mark.parametrize("artifact", ["ingest/texts.bin", "substring/*/shard_00000/tokens.npy",
                                      "substring/*/shards.json", "substring/*/L20/shard_00000/sa.npy",
                                      "substring/*/L20/shard_00000/gid.npy"])
def test_a_rebuilt_artifact_gives_fresh_output(cli, corpus, first_run, tmp_path, artifact, damage):
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    want, want_decisions = first_run(w, "--set", "substring.shard_tokens=8000")
    assert current(w, verify=True)
    assert want_decisions and db_rows(w, "SELECT count(*) FROM spans")[0][0] > 0
    (target,) = w.glob(artifact)
    if damage == "delete":
        target.unlink()
    else:
        data = bytearray(target.read_bytes())
        data[-1] ^= 0xFF
        target.write_bytes(bytes(data))
    if damage == "delete":  # sizes are checked without --verify (the command); so with it
        assert not current(w, verify=True)
        assert "pending: nothing" not in cli("status", w).stdout
    else:  # a flipped byte, same size: --verify reads it back
        assert "pending: nothing" not in cli("status", w, "--verify").stdout
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--set", "substring.shard_tokens=8000")
    assert out.read_bytes() == want and decisions(w) == want_decisions
    assert target.exists()


def test_restart_deletes_only_what_sadedup_wrote(cli, corpus, first_run, tmp_path):
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    first_run(w)
    (w / "notes.txt").write_text("mine")
    (w / "mine").mkdir()
    # --restart forgets what the folder recorded: both missing are named in the one refusal
    # (it asked for --output, then on the next try for --input), and nothing is deleted
    files = sorted(p.name for p in w.iterdir())
    one_line_refusal(cli("run", "--workdir", w, "--restart", check=False),
                     "forgets the recorded inputs and output: pass --input PATH and --output PATH too")
    one_line_refusal(cli("run", "--workdir", w, "--restart", "--input", corpus, check=False),
                     "forgets the recorded output: pass --output PATH too")
    one_line_refusal(cli("run", "--workdir", w, "--restart", "--output", out, check=False),
                     "forgets the recorded inputs: pass --input PATH too")
    assert sorted(p.name for p in w.iterdir()) == files and not out.exists()
    p = cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--restart")
    assert (w / "notes.txt").read_text() == "mine" and (w / "mine").is_dir()
    assert "kept 2 entries" in p.stderr
    # a folder sadedup did not make is never used as a work folder, so never emptied
    mine = tmp_path / "my-folder"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    for extra in ([], ["--restart"]):
        p = cli("run", "--input", corpus, "--output", tmp_path / "o2.jsonl", "--workdir", mine, *extra, check=False)
        one_line_refusal(p, "sadedup did not write")
    # nor is the folder of the corpus itself (`--workdir .` among the data)
    (mine / "data.jsonl").write_bytes(corpus.read_bytes())
    p = cli("run", "--input", mine / "data.jsonl", "--output", tmp_path / "o2.jsonl", "--workdir", mine, "--restart",
            check=False)
    one_line_refusal(p, "inside the work folder")
    assert sorted(x.name for x in mine.iterdir()) == ["data.jsonl", "notes.txt"]
    assert not (tmp_path / "o2.jsonl").exists()


def test_restart_runs_as_on_an_empty_folder(cli, corpus, fresh, tmp_path):
    """--restart forgets the folder's settings with its work: it kept the recorded --set
    (stages=substring here), so `run --restart` gave other output than the same command on an
    empty folder, though its help says it forgets everything. It says what it forgot, -q or not."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--set", "stages=substring")
    p = cli("-q", "run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--restart")
    want, want_decisions = fresh()
    assert out.read_bytes() == want and decisions(w) == want_decisions
    assert "former settings are forgotten" in p.stderr
    # the same command again: nothing forgotten, nothing said
    p = cli("-q", "run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--restart")
    assert out.read_bytes() == want and "forgotten" not in p.stderr and "forgot" not in p.stderr


def test_restart_from_inside_a_folder_it_deletes_is_refused(corpus, first_run, tmp_path):
    """`cd work/ingest; sadedup run ... --workdir .. --restart` emptied the work folder and then
    died on the vanished current folder ("internal error: FileNotFoundError"), and so did every
    later try from there; from the work folder itself it restarts."""
    w = tmp_path / "w"
    want, _ = first_run(w)
    before = sorted(p.name for p in w.iterdir())

    def restart(cwd: Path, workdir: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "sadedup.cli", "run", "--input", str(corpus), "--output",
                               str(tmp_path / "o.jsonl"), "--workdir", workdir, *SMALL, "--restart"],
                              capture_output=True, text=True, cwd=cwd, env={**os.environ, "CI": "1"})

    one_line_refusal(restart(w / "ingest", ".."), "inside", "ingest", "--restart deletes")
    assert sorted(p.name for p in w.iterdir()) == before and current(w)
    p = restart(w, ".")
    assert p.returncode == 0 and (tmp_path / "o.jsonl").read_bytes() == want, p.stderr


def test_a_work_folder_inside_the_input_folder_is_refused(cli, corpus, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.jsonl").write_bytes(corpus.read_bytes())
    p = cli("run", "--input", data, "--output", tmp_path / "o.jsonl", "--workdir", data / "work", check=False)
    one_line_refusal(p, "inside the input folder")
    assert not (data / "work").exists()


def test_a_forgotten_input_uses_the_recorded_inputs(cli, corpus, tmp_path):
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL)
    want = out.read_bytes()
    out.unlink()
    p = cli("run", "--workdir", w, *SMALL)  # neither --input nor --output: both as recorded
    assert "sample" not in p.stdout + p.stderr
    assert out.read_bytes() == want
    other = tmp_path / "again.jsonl"
    cli("run", "--workdir", w, "--output", other, *SMALL)
    assert other.read_bytes() == want
    # nor the settings: without a workflow named, the folder keeps its own (min_length=20 here),
    # so nothing is redone and nothing changes; naming one switches to it
    res = json.loads(cli("run", "--workdir", w, "--format", "json").stdout)
    assert all(d.get("skipped") for d in res["stages"].values()) and other.read_bytes() == want
    cli("run", "default", "--workdir", w, "--output", other)
    assert db_rows(w, "SELECT json_extract(config, '$.substring.min_length') FROM runs ORDER BY run_id DESC "
                      "LIMIT 1") == [(None,)]
    # a new folder without --input is refused, never filled with the sample
    p = cli("run", "--workdir", tmp_path / "new", "--output", tmp_path / "x.jsonl", check=False)
    one_line_refusal(p, "no input given")
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("given", ["folder", "glob"])
def test_a_file_added_to_an_input_folder_is_a_change_of_the_inputs(cli, corpus, tmp_path, given):
    """`--input d` stands for d's files as they are when a command runs, not as they were at the
    first: a rerun naming no input, `status` and `export` see a file added (or one gone) as a
    fresh run over d would, and refuse instead of answering for the former files."""
    data, w, out = tmp_path / "d", tmp_path / "w", tmp_path / "out.jsonl"
    data.mkdir()
    lines = corpus.read_bytes().splitlines(keepends=True)
    (data / "a.jsonl").write_bytes(b"".join(lines[: len(lines) // 2]))
    spec = data if given == "folder" else data / "*.jsonl"
    cli("run", "--input", spec, "--output", out, "--workdir", w, *SMALL)
    (data / "b.jsonl").write_bytes(b"".join(lines[len(lines) // 2:]))
    # a stage command too, with a setting changed or not: it ran on the former text, exit 0
    # and count and locate: they answered for the former text, or advised a `run` that refuses
    for command in (("run", "--workdir", w), ("export", w), ("exact", w), ("minhash", w, "--set",
                                                                          "minhash.threshold=0.7"),
                    ("count", w, "the"), ("locate", w, "the")):
        one_line_refusal(cli(*command, check=False), f"inputs changed since work folder {w} was made "
                         f"({(data / 'b.jsonl').resolve()} is new)")
    # and status says so from ingest on, not only of the export
    assert {s["stage"]: s["state"] for s in pipeline.status(w)}["ingest"] == "stale"
    assert all(s["state"] == "stale" for s in pipeline.status(w))
    (data / "b.jsonl").unlink()
    (data / "notes.md").write_text("a file sadedup does not read is recorded as an input error: a change too")
    if given == "folder":
        one_line_refusal(cli("run", "--workdir", w, check=False), f"({data.resolve() / 'notes.md'} is new)")
    else:  # a glob's pattern does not match it
        assert current(w)
    (data / "notes.md").unlink()
    (data / "a.jsonl").rename(tmp_path / "a.jsonl")
    one_line_refusal(cli("run", "--workdir", w, check=False), "inputs changed since",
                     f"({(data / 'a.jsonl').resolve()} is gone)" if given == "folder" else "matches no file")
    (tmp_path / "a.jsonl").rename(data / "a.jsonl")
    before = out.read_bytes()
    assert current(w)
    cli("run", "--workdir", w, *SMALL)
    assert out.read_bytes() == before
    # and from another directory: the folder was recorded absolute
    p = subprocess.run([sys.executable, "-m", "sadedup.cli", "status", str(w)], capture_output=True, text=True,
                       cwd=tmp_path.parent, env={**os.environ, "CI": "1"})
    assert p.returncode == 0 and "pending: nothing" in p.stdout, p.stdout + p.stderr


def test_sadedups_own_files_never_become_inputs(cli, corpus, tmp_path):
    """An input folder or glob is listed without what sadedup writes for the folder: a glob
    that matches the output, one that covers the work folder, a relative glob over a file
    sadedup does not read. Each made the folder stale at its own export or on the next
    command. An export or a report into an input folder is refused as a run's output is."""
    data = tmp_path / "d"
    data.mkdir()
    lines = corpus.read_bytes().splitlines(keepends=True)
    (data / "a.jsonl").write_bytes(b"".join(lines[: len(lines) // 2]))
    (data / "b.jsonl").write_bytes(b"".join(lines[len(lines) // 2:]))
    (data / "notes.md").write_text("not an input")
    exact = ["--set", "stages=exact", "--workers", "1"]
    cli("run", "--input", "d/*.jsonl", "--output", "fresh.jsonl", "--workdir", "wf", *exact)
    for i, (spec, out, w) in enumerate([("d/*.jsonl", "d/out.jsonl", "w0"), ("d/**", "out1.jsonl", "d/w1"),
                                        ("d/*", "out2.jsonl", "w2")]):
        cli("run", "--input", spec, "--output", out, "--workdir", w, *exact)
        assert current(tmp_path / w), spec
        p = cli("run", "--workdir", w, "--format", "json")
        assert all(d.get("skipped") for d in json.loads(p.stdout)["stages"].values()), spec
        if i == 0:  # the output of a fresh run: its own output is not read as an input
            assert (tmp_path / out).read_bytes() == (tmp_path / "fresh.jsonl").read_bytes()
    cli("run", "--input", "d", "--output", "out3.jsonl", "--workdir", "w3", *exact)
    for command, what in ((("export", "w3", "--output", "d/x.jsonl"), "output d/x.jsonl"),
                          (("report", "w3", "-o", "d/r.html"), "report d/r.html")):
        one_line_refusal(cli(*command, check=False), f"{what} is inside the input folder {data}")
    assert current(tmp_path / "w3") and not (data / "x.jsonl").exists() and not (data / "r.html").exists()


def test_a_refused_rerun_keeps_nothing_and_a_lost_state_is_named(cli, corpus, tmp_path):
    """A rerun refused because its inputs changed keeps none of its --set; and with state.json
    deleted, every command names it missing instead of asking for a first run."""
    data, w = tmp_path / "d", tmp_path / "w"
    data.mkdir()
    shutil.copy(corpus, data / "a.jsonl")
    cli("run", "--input", data, "--output", tmp_path / "out.jsonl", "--workdir", w, "--set", "stages=exact")
    (data / "b.jsonl").write_text('{"text": "new"}\n')
    before = (w / "state.json").read_bytes()
    one_line_refusal(cli("run", "--workdir", w, "--set", "exact.lowercase=true", check=False), "inputs changed")
    assert (w / "state.json").read_bytes() == before
    (data / "b.jsonl").unlink()
    (w / "state.json").unlink()
    for command in (("status", w), ("export", w), ("exact", w), ("run", "--workdir", w)):
        one_line_refusal(cli(*command, check=False), f"{w / 'state.json'} is missing")


def test_a_run_killed_while_making_its_database_resumes(cli, corpus, fresh, tmp_path):
    """A first run killed as it made the database (the file there, none of its tables, no
    state.json yet) is resumed by the same command: it was called \"state.json is missing\",
    as if a command had run there (test_resume's random kills, once in a while)."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    p = cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, check=False,
            env={"SADEDUP_CRASH": "workdir.locked"})
    assert p.returncode == -signal.SIGKILL and not (w / "state.json").exists()
    (w / "sadedup.db").touch()
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL)
    want, want_decisions = fresh()
    assert out.read_bytes() == want and decisions(w) == want_decisions


@pytest.mark.parametrize("damage", ["empty", "drop spans"])
def test_a_database_that_lost_its_tables_is_refused_by_name(cli, corpus, fresh, first_run, tmp_path, damage):
    """An emptied sadedup.db, or one a table was dropped from: status said "internal error: no
    such table" and a run made it anew without a word, the folder's history gone. Every
    command names it damaged; --restart then gives a fresh run's output (helper-56)."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    first_run(w)
    if damage == "empty":
        os.truncate(w / "sadedup.db", 0)
    else:
        con = sqlite3.connect(w / "sadedup.db")
        con.execute("DROP TABLE spans")
        con.close()
    for command in (("status", w), ("run", "--workdir", w, "--output", out), ("export", w, "--output", out),
                    ("sql", w, "SELECT 1")):
        one_line_refusal(cli(*command, check=False), f"{w / 'sadedup.db'} is damaged", "--restart")
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--restart")
    want, want_decisions = fresh()
    assert out.read_bytes() == want and decisions(w) == want_decisions


def test_machine_values_are_resolved_once_and_recorded(cli, corpus, tmp_path):
    """`auto` values are resolved when the folder is configured and kept: a later run (on a
    machine that would resolve them differently) uses the recorded ones."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"

    def budget() -> int:
        config = db_rows(w, "SELECT config FROM runs ORDER BY run_id DESC LIMIT 1")[0][0]
        return json.loads(config)["resolved"]["run.memory_budget_bytes"]

    # every core, as run.workers = 0 resolves it, planned for and recorded; the tasks run inline
    # (the executor is not recorded, and a pool would only cost its start three times over)
    inline = ["--executor", "inline"]
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *inline)
    state = json.loads((w / "state.json").read_text())
    assert set(state["resolved"]) == {"run.memory_budget", "run.workers"}
    assert budget() == int(state["resolved"]["run.memory_budget"])
    state["resolved"]["run.memory_budget"] = "3000000000"  # as another machine would have resolved it
    Workspace(w).write_state(state)  # with its checksum: a value changed by hand is damage
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *inline)
    assert budget() == 3_000_000_000
    finished = db_rows(w, "SELECT stage, shard, finished_at, key FROM stages ORDER BY stage, shard")
    time.sleep(1.1)
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *inline)
    assert db_rows(w, "SELECT stage, shard, finished_at, key FROM stages ORDER BY stage, shard") == finished


# the substring stage alone: the kill below waits for it to start (the document stages before
# it would be done and reused either way), and its ten shards keep both workers busy
INTERRUPTED = ["--workers", "2", "--set", "stages=substring", "--set", "substring.shard_tokens=1000000"]


@pytest.fixture(scope="module")
def long_run(tmp_path_factory) -> tuple[Path, bytes]:
    """A corpus whose run lasts long enough to be interrupted (10 MB, 10 shards on two
    workers), and the output of its uninterrupted run: made once for both signals."""
    d = tmp_path_factory.mktemp("long")
    rng = random.Random(3)
    inp = d / "in.jsonl"
    with open(inp, "w") as f:
        for i in range(4000):
            f.write(json.dumps({"id": i, "text": " ".join(rng.choice(["alpha", "beta", "gamma", "delta"])
                                                          for _ in range(400))}) + "\n")
    sadedup_cli(d, "run", "--input", inp, "--output", d / "o.jsonl", "--workdir", d / "w", *INTERRUPTED)
    return inp, (d / "o.jsonl").read_bytes()


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_run_says_so_and_resumes(tmp_path, long_run, sig, code):
    """Ctrl-C or a kill ends the run with one line and 130/143, workers quiet, and the rerun
    finishes with the output of an uninterrupted run."""
    inp, uninterrupted = long_run
    args = [sys.executable, "-m", "sadedup.cli", "run", "--input", str(inp), "--output", str(tmp_path / "o.jsonl"),
            "--workdir", str(tmp_path / "w"), *INTERRUPTED]
    env = {**os.environ, "CI": "1"}
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and not (tmp_path / "w" / "substring").exists():
        time.sleep(0.05)
    time.sleep(0.3)
    os.killpg(p.pid, sig)  # the whole group, as a terminal's Ctrl-C does
    _, err = p.communicate(timeout=120)
    assert p.returncode == code, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("sadedup: interrupted") and "resume" in last
    status = subprocess.run([sys.executable, "-m", "sadedup.cli", "status", str(tmp_path / "w")],
                            capture_output=True, text=True, env=env)
    assert status.returncode == 0 and "pending: nothing" not in status.stdout
    assert subprocess.run(args, capture_output=True, env=env).returncode == 0
    assert (tmp_path / "o.jsonl").read_bytes() == uninterrupted


# the command, started as the `sadedup` script starts it, with SIGINT sent to itself right after
# the import that brings in `module` returns: in the middle of the command's loading, at the
# same point on every machine (watching -X importtime from outside raced a fast start-up,
# which had finished the command before the signal came)
INTERRUPT_AT_IMPORT = """
import builtins, os, signal, sys, runpy
module, sys.argv = sys.argv[1], ["sadedup", *sys.argv[2:]]
# Ctrl-C answered as in a terminal, whatever the test runner's own disposition: a job started
# in the background of a shell without job control inherits SIGINT ignored, and the command
# rightly keeps an ignored SIGINT ignored (as a pool worker does)
signal.signal(signal.SIGINT, signal.default_int_handler)
load = builtins.__import__
def interrupting(*args, **kwargs):
    m = load(*args, **kwargs)
    if module in sys.modules and builtins.__import__ is interrupting:
        builtins.__import__ = load
        os.kill(os.getpid(), signal.SIGINT)
    return m
builtins.__import__ = interrupting
runpy.run_module("sadedup.cli", run_name="__main__")
"""


@pytest.mark.parametrize("module", ["typer.colors", "sqlalchemy.util"])
def test_ctrl_c_while_the_command_loads_is_one_line_and_130(tmp_path, module):
    """Ctrl-C while a command's modules load: the CLI's own (typer, before main() set its
    handler) printed Python's KeyboardInterrupt traceback; inside a lazily loaded module
    (sqlalchemy under sadedup.db) the import machinery dropped the interrupt and the command
    died on the half-loaded module, "internal error: ImportError: cannot import name
    'DB_NAME'", exit 1."""
    p = subprocess.run([sys.executable, "-c", INTERRUPT_AT_IMPORT, module, "status", str(tmp_path / "w")],
                       capture_output=True, text=True, env={**os.environ, "CI": "1"}, timeout=60)
    assert p.returncode == 130 and p.stderr.splitlines() == [
        "sadedup: interrupted (Ctrl-C); rerun the same command to resume"], (p.returncode, p.stderr)


def test_a_database_of_an_older_sadedup_is_brought_up_to_date(cli, corpus, first_run, tmp_path):
    """Schema 1 (no spans.method, no stages.key, user_version 0): opened for writing, it gets
    the new columns and indexes, and the next run redoes what it cannot vouch for."""
    import sqlite3

    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    want, _ = first_run(w)
    spans = db_rows(w, "SELECT doc_id, tok_start, tok_end, char_start, char_end FROM spans ORDER BY span_id")
    con = sqlite3.connect(w / "sadedup.db")
    con.executescript("""
        DROP INDEX documents_ext_id; DROP INDEX documents_source_row;
        DROP INDEX documents_status_reason;
        ALTER TABLE spans DROP COLUMN method; ALTER TABLE stages DROP COLUMN key; PRAGMA user_version = 0;
    """)
    con.close()
    (w / ".sadedup-workdir").unlink()  # made before markers: its database says it is sadedup's
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL)
    assert out.read_bytes() == want
    assert db_rows(w, "PRAGMA user_version") == [(3,)]
    assert db_rows(w, "SELECT DISTINCT method FROM spans") == [("substring",)]
    assert db_rows(w, "SELECT doc_id, tok_start, tok_end, char_start, char_end FROM spans ORDER BY span_id") == spans
    # schema 3 lifted NOT NULL from the token offsets (stages that cut characters leave them NULL)
    assert [r[3] for r in db_rows(w, "PRAGMA table_info(spans)") if r[1] == "tok_start"] == [0]
    assert db_rows(w, "SELECT count(*) FROM stages WHERE status = 'done' AND key IS NULL") == [(0,)]
    assert {r[0] for r in db_rows(w, "SELECT name FROM sqlite_master WHERE type = 'index'")} >= {
        "documents_ext_id", "documents_source_row", "documents_status_reason"}
    assert (w / ".sadedup-workdir").exists()


def test_a_damaged_state_or_database_is_one_line_and_restart_recovers(cli, corpus, first_run, tmp_path):
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    want, _ = first_run(w)
    for name in ("state.json", "sadedup.db"):
        (w / name).write_bytes(b"garbage, not what sadedup wrote")
        for f in w.glob("sadedup.db-*"):
            f.unlink()
        p = cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, check=False)
        one_line_refusal(p, name, "--restart")
        cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--restart")
        assert out.read_bytes() == want


def test_a_damaged_record_of_the_folders_workflow_is_refused_not_replaced(cli, corpus, first_run, tmp_path):
    """The folder's workflow (SMALL's --set, not the default's) is what a rerun without --set
    uses. Its marker lost, the database still says the folder is sadedup's and the rerun keeps
    the workflow; a state.json that reads as JSON but not as a workflow, or a database whose
    first page reads well and whose tables do not, is one line naming the file: a rerun going
    on with the default workflow in its place gave another output with no word."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    want, want_decisions = first_run(w)
    (w / ".sadedup-workdir").unlink()
    cli("run", "--workdir", w, "--output", out)  # a copy: its recorded output is the original's
    assert out.read_bytes() == want and decisions(w) == want_decisions
    state = json.loads((w / "state.json").read_text())
    state["workflow"]["minhash"]["ngrams"] = state["workflow"]["minhash"].pop("ngram")  # one byte changed
    Workspace(w).write_state(state)  # its checksum made again: the workflow in it is what is damaged
    before = (w / "state.json").read_bytes()
    one_line_refusal(cli("run", "--workdir", w, check=False), "state.json is damaged", "ngrams", "--restart")
    one_line_refusal(cli("run", "default", "--workdir", w, check=False), "state.json is damaged")
    assert (w / "state.json").read_bytes() == before
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--restart")
    assert out.read_bytes() == want and decisions(w) == want_decisions
    # one digit changed, and the file still parses: the checksum says it is not what was written
    text = (w / "state.json").read_text()
    assert '"ngram": 5' in text
    (w / "state.json").write_text(text.replace('"ngram": 5', '"ngram": 4', 1))
    one_line_refusal(cli("run", "--workdir", w, check=False), "state.json is damaged", "checksum", "--restart")
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--restart")
    assert out.read_bytes() == want and decisions(w) == want_decisions
    # a folder in its place: damaged, said by name with --restart
    (w / "state.json").unlink()
    (w / "state.json").mkdir()
    one_line_refusal(cli("run", "--workdir", w, check=False), "state.json is damaged", "--restart")
    (w / "state.json").rmdir()
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--restart")
    assert out.read_bytes() == want and decisions(w) == want_decisions
    # state.json deleted: the next run went on with the default workflow, the folder's own
    # settings forgotten without a word; the database says a command ran here, so it was lost
    (w / "state.json").unlink()
    for named in ([], ["default"]):
        one_line_refusal(cli("run", *named, "--input", corpus, "--output", out, "--workdir", w, check=False),
                         "state.json is missing", "--restart")
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--restart")
    assert out.read_bytes() == want and decisions(w) == want_decisions
    page = 4096
    db = bytearray((w / "sadedup.db").read_bytes())
    assert db[16:18] == page.to_bytes(2, "big") and len(db) > 4 * page
    db[page:] = bytes(len(db) - page)  # every page after the schema's zeroed
    (w / "sadedup.db").write_bytes(bytes(db))
    one_line_refusal(cli("run", "--workdir", w, check=False), "sadedup.db is damaged", "--restart")
    cli("run", "--input", corpus, "--output", out, "--workdir", w, *SMALL, "--restart")
    assert out.read_bytes() == want and decisions(w) == want_decisions


def test_every_command_leaves_the_database_settled(cli, first_run, tmp_path):
    """After each command the database is one file, its journal back to a plain rollback one:
    a reading command afterwards (sql, status, explain) writes nothing in the folder. A stage
    command's check of its prerequisites opened a second connection, never closed, so every
    stage command left sadedup.db-wal and -shm, and the next `sql` wrote the index."""
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    first_run(w)
    for command in (["exact", w], ["repeats", w, "--set", "substring.min_length=20"], ["export", w, "--output", out],
                    ["status", w], ["sql", w, "SELECT count(*) FROM spans"]):
        cli(*command)
        assert sorted(p.name for p in w.glob("sadedup.db*")) == ["sadedup.db"], command
        assert db_rows(w, "PRAGMA journal_mode") == [("delete",)], command


def test_export_to_another_output_becomes_the_folders_output(cli, corpus, tmp_path):
    w, out, other = tmp_path / "w", tmp_path / "out.jsonl", tmp_path / "other.jsonl"
    cli("ingest", "--input", corpus, "--workdir", w, *SMALL)
    cli("run", "--workdir", w, "--output", out, *SMALL)
    cli("export", w, "--output", other)
    assert other.read_bytes() == out.read_bytes()
    assert "pending: nothing" in cli("status", w).stdout
    other.unlink()
    cli("run", "--workdir", w, *SMALL)  # the recorded output is the last one exported to
    assert other.read_bytes() == out.read_bytes()
    p = cli("export", w, "--output", tmp_path / "missing" / "x.jsonl", check=False)
    one_line_refusal(p, "does not exist")


def test_a_worker_killed_mid_task_is_one_line_and_the_rerun_resumes(cli, corpus, fresh, tmp_path):
    """A pool worker killed during its task (the out-of-memory killer, kill -9): one line that
    says what happened and how to go on, not "internal error", and the rerun gives a fresh
    run's output. Two input files make ingest two tasks, so the pool runs them."""
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(lines[:len(lines) // 2]), encoding="utf-8")
    b.write_text("".join(lines[len(lines) // 2:]), encoding="utf-8")
    args = ["run", "--input", a, "--input", b, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w",
            "--set", "substring.min_length=20", "--workers", "2", "--executor", "local"]
    p = cli(*args, check=False, env={"SADEDUP_CRASH": "ingest.row"})
    one_line_refusal(p, "worker process died", "IngestPiece", "rerun")
    cli(*args)
    assert ((tmp_path / "out.jsonl").read_bytes(), decisions(tmp_path / "w")) == fresh()


ADVICE = re.compile(r"run `sadedup ([^`]+)`")


def followed(cli, *command: str, steps: int = 12) -> subprocess.CompletedProcess:
    """Runs `command`; while it is refused with an advice ("run `sadedup ...`"), runs the advised
    command, which must itself succeed (an advice that is refused in turn lies), and asks again."""
    for _ in range(steps):
        p = cli(*command, check=False)
        if p.returncode == 0:
            return p
        one_line_refusal(p)
        advice = ADVICE.search(p.stderr)
        assert advice, p.stderr
        q = cli(*shlex.split(advice.group(1)), check=False)
        assert q.returncode == 0, f"{p.stderr.strip()}\n-> sadedup {advice.group(1)}: {q.stderr.strip()}"
    raise AssertionError(f"sadedup {' '.join(command)} still refused after {steps} advices")


@pytest.mark.parametrize("command", [("count", "{w}", "the"), ("remove", "{w}")])
def test_every_advice_names_a_command_that_runs(cli, corpus, fresh, tmp_path, command):
    """Known leftover (a): `count` on a folder ingested only advised `sadedup tokenize`, which
    refused (tokenize needs exact first); `remove` there advised `sadedup candidates`, no
    command (build runs it). Following each advice from an ingested folder must
    reach the answer of a finished folder, every advised command succeeding on the way."""
    w = tmp_path / "w"
    cli("ingest", "--input", corpus, "--workdir", w, *SMALL)
    p = followed(cli, *(a.format(w=w) for a in command))
    if command[0] == "count":
        d = tmp_path / "whole"
        cli("run", "--input", corpus, "--output", tmp_path / "out.jsonl", "--workdir", d, *SMALL)
        assert p.stdout == cli("count", d, "the").stdout
    else:
        assert decisions(w) == fresh()[1]


def test_a_second_work_folder_never_writes_over_the_first_ones_output(cli, corpus, first_run, tmp_path):
    """Known leftover (b): `sadedup run ... --output out.jsonl --workdir b/` replaced the output of
    work folder a/ without a word (a/ then showed its export stale; rerun, it replaced b's).
    Refused in one line while a/ records that output; a/ keeps its own, and resumes; once a/
    writes elsewhere (or is gone) the path is free."""
    probe = tmp_path / "probe"
    probe.write_text("")
    try:
        os.setxattr(probe, "user.sadedup.probe", b"1")
    except OSError:
        pytest.skip(f"{tmp_path}'s file system keeps no user attributes: outputs there are not guarded (README)")
    a, out = tmp_path / "a", tmp_path / "out.jsonl"
    want, _ = first_run(a)
    cli("export", a, "--output", out)
    other = tmp_path / "other.jsonl"
    other.write_text("".join(corpus.read_text().splitlines(keepends=True)[::2]))  # b's output differs
    b = tmp_path / "b"
    one_line_refusal(cli("run", "--input", other, "--output", out, "--workdir", b, *SMALL, check=False),
                     f"output {out} is the output of work folder {a}")
    assert out.read_bytes() == want
    cli("run", "--input", other, "--output", tmp_path / "b.jsonl", "--workdir", b, *SMALL)
    for args in (["run", "--workdir", b, "--output", out], ["export", b, "--output", out]):
        one_line_refusal(cli(*args, check=False), f"output {out} is the output of work folder {a}")
        assert out.read_bytes() == want
    assert current(a) and (b / "state.json").exists() and "b.jsonl" in (b / "state.json").read_text()
    cli("run", "--input", corpus, "--workdir", a, "--restart", "--output", out, *SMALL)  # its own: rewritten
    assert out.read_bytes() == want
    cli("export", a, "--output", tmp_path / "a2.jsonl")  # a now writes elsewhere: out is free
    cli("export", b, "--output", out)
    assert out.read_bytes() == (tmp_path / "b.jsonl").read_bytes() != want


def visible(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


def test_an_export_of_parts_killed_midway_leaves_the_former_parts_whole(cli, corpus, fresh, tmp_path):
    """Parts are one output: an export killed after it wrote part 0 and before part 1 must
    not leave part 0 new beside an old part 1 (a reader of the glob would take rows of two
    runs as one output); the former parts stay as they were until every new one is written."""
    lines = corpus.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    inputs = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    inputs[0].write_bytes(b"".join(lines[:half]))
    inputs[1].write_bytes(b"".join(lines[half:]))
    w, out = tmp_path / "w", tmp_path / "out"
    out.mkdir()
    pattern = out / "part-{shard:05d}.jsonl"
    cli("run", "--input", inputs[0], "--input", inputs[1], "--output", pattern, "--workdir", w, *SMALL)
    parts = visible(out)
    former = [p.read_bytes() for p in parts]
    assert [p.name for p in parts] == ["part-00000.jsonl", "part-00001.jsonl"]
    p = cli("run", "--workdir", w, *SMALL, "--set", "substring.min_length=30", check=False,
            env={"SADEDUP_CRASH": f"export.row:{half + 5}"})
    assert p.returncode != 0
    # (the hidden lock file and staging folder beside them are no reader's)
    assert visible(out) == parts and [p.read_bytes() for p in parts] == former
    cli("run", "--workdir", w, *SMALL, "--set", "substring.min_length=30")
    assert b"".join(p.read_bytes() for p in visible(out)) == fresh("substring.min_length=30")[0]
    assert former[0] != parts[0].read_bytes()  # the setting changed part 0: the check above could fail
