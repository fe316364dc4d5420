"""Edges found by trying sadedup as a user would: each ends in a clear one-line result."""
from __future__ import annotations

import fcntl
import json
import os
import random
import subprocess

import pytest
from corpus import planted_corpus
from helpers import db_rows

SMALL = ["--set", "substring.min_length=20", "--workers", "1"]


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """A finished work folder (ids "d0", "d1", ... and doc 7's id is the number 3)."""
    d = tmp_path_factory.mktemp("edges")
    docs = planted_corpus(random.Random(4), 60, 200)
    inp = d / "in.jsonl"
    with open(inp, "w", encoding="utf-8") as f:
        for i, t in enumerate(docs):
            f.write(json.dumps({"id": 3 if i == 7 else f"d{i}", "text": t}, ensure_ascii=False) + "\n")
    w = d / "w"
    p = subprocess.run(["python", "-m", "sadedup.cli", "run", "--input", inp, "--output", d / "out.jsonl",
                        "--workdir", w, *SMALL], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return inp, w


def refused(p: subprocess.CompletedProcess, *words: str) -> str:
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("sadedup: error: "), p.stderr
    for w in words:
        assert w in line, line
    return line


def test_sql_never_creates_a_file(cli, done, tmp_path):
    _, w = done
    before = sorted(os.listdir(w))
    for q in (f"ATTACH DATABASE '{tmp_path}/x.db' AS x", f"VACUUM INTO '{tmp_path}/y.db'",
              "PRAGMA journal_mode = DELETE", "DELETE FROM documents", "CREATE TABLE t (x)"):
        refused(cli("sql", w, q, check=False), "read-only")
    assert not list(tmp_path.glob("*.db")) and sorted(os.listdir(w)) == before
    assert cli("sql", w, "PRAGMA user_version").stdout.split()[-1] == "3"


def test_a_folder_one_cannot_write_can_be_audited(cli, done, tmp_path):
    """A read-only mount (as a reader without write permission sees it): sql, status and
    explain work, and nothing is written."""
    _, w = done
    ro = tmp_path / "ro"
    ro.mkdir()
    p = subprocess.run(["mount", "--bind", str(w), str(ro)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {p.stderr.strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True)
        assert not os.access(ro, os.W_OK)
        assert int(cli("sql", ro, "SELECT count(*) FROM documents", "--format", "csv").stdout.split()[-1]) == 60
        assert "pending: nothing" in cli("status", ro).stdout
        assert "document 5" in cli("explain", ro, "5").stdout
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)


def test_explain_takes_any_number_and_says_which_document_it_means(cli, done):
    _, w = done
    refused(cli("explain", w, "99999999999999999999999", check=False), "no document")
    refused(cli("explain", w, "-1", check=False), "no document with doc_id or id '-1'")
    p = cli("explain", w, "3")
    assert p.stdout.startswith("note: 3 is taken as a doc_id; the document whose id is 3 is doc_id 7 (use --id)")
    assert "document 3 " in p.stdout
    assert cli("explain", w, "3", "--id").stdout.startswith("document 7 ")
    assert cli("explain", w, "d4", "--id").stdout.startswith("document 4 ")
    refused(cli("explain", w, "d4", "--doc-id", check=False), "no document with doc_id 'd4'")


def test_two_exports_to_one_output_the_second_is_told(cli, done, tmp_path):
    _, w = done
    out = tmp_path / "o.jsonl"
    lock = tmp_path / ".o.jsonl.sadedup-lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as an export from another work folder holds it
    os.pwrite(fd, b"4242", 0)
    try:
        refused(cli("export", w, "--output", out, check=False), "being written by another sadedup run (pid 4242)")
        assert not out.exists()
    finally:
        os.close(fd)
    cli("export", w, "--output", out)
    assert out.exists() and not lock.exists()


def test_a_killed_run_is_marked_interrupted_by_the_next(cli, done, tmp_path):
    inp, _ = done
    w = tmp_path / "w"
    p = cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", w, *SMALL, check=False,
            env={"SADEDUP_CRASH": "remove.db"})
    assert p.returncode < 0
    assert db_rows(w, "SELECT status FROM runs") == [("running",)]
    cli("status", w)  # a reader changes nothing
    assert db_rows(w, "SELECT status FROM runs") == [("running",)]
    cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", w, *SMALL)
    assert db_rows(w, "SELECT status FROM runs ORDER BY run_id") == [("interrupted",), ("done",)]


@pytest.mark.parametrize("args, words", [
    (["--set", "minhash.num_perm=99999999999", "--set", "minhash.bands=1", "--set", "minhash.rows=1"],
     ["minhash.num_perm=99999999999 needs", "lower it or raise the budget"]),
    (["--set", "exact.keep=column:nosuchcol"], ["keep rule column:nosuchcol", "no document has a number in field 'nosuchcol'"]),
])
def test_settings_that_cannot_work_are_refused(cli, done, tmp_path, args, words):
    inp, _ = done
    p = cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", *args, check=False)
    refused(p, *words)
    assert not (tmp_path / "o.jsonl").exists()


def test_more_workers_or_memory_than_the_machine_has_is_said(cli, done, tmp_path):
    inp, _ = done
    p = cli("ingest", "--input", inp, "--workdir", tmp_path / "w", "--workers", "64", "--memory-budget", "64GB")
    assert "run.workers=64 but this machine gives" in p.stderr
    assert "more than this machine's" in p.stderr


def test_an_output_folder_one_cannot_write_is_refused_before_any_work(cli, done, tmp_path):
    inp, _ = done
    # /proc takes no new file, though access() tells root it may write there: that was found
    # only by the export, in a line naming its lock file
    p = cli("run", "--input", inp, "--output", "/proc/sadedup-o.jsonl", "--workdir", tmp_path / "w", check=False)
    refused(p, "output /proc/sadedup-o.jsonl: cannot write in /proc")
    assert not (tmp_path / "w").exists()
    ro = tmp_path / "ro"
    ro.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        p = cli("run", "--input", inp, "--output", ro / "o.jsonl", "--workdir", tmp_path / "w", check=False)
        refused(p, "cannot write in", "read-only")
        assert not (tmp_path / "w").exists()
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)


def test_a_lone_surrogate_in_the_id_sets_the_row_aside(cli, tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_bytes(b'{"id": "\\ud800", "text": "the first document"}\n'
                    b'{"id": {"k": "a\\udc00"}, "text": "the second document"}\n'
                    b'{"id": "ok", "text": "the third document", "meta": "\\udc00x"}\n')
    out = tmp_path / "o.jsonl"
    cli("run", "--input", inp, "--output", out, "--workdir", tmp_path / "w", "--workers", "1")  # no pool to start
    assert db_rows(tmp_path / "w", "SELECT source_row, error FROM input_errors ORDER BY source_row") == [
        (1, "id field 'id' has an unpaired surrogate at character 0"),
        (2, "id field 'id' has an unpaired surrogate at character 8")]
    assert out.read_bytes() == b'{"id": "ok", "text": "the third document", "meta": "\\udc00x"}\n'
