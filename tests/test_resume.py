"""Killed at any point and rerun, a run gives the same output, reuses what it had finished,
and loses no row. Crashes are real SIGKILLs, at points named through SADEDUP_CRASH."""
from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from corpus import planted_corpus, write_jsonl
from helpers import db_rows, held_at, stopped

from sadedup import pipeline

# 26 shards of the corpus below (143k tokens), at least 10 for the crash points and the reuse
# counts; a shard costs its files and records whatever its size, so the 54 shards of 3000
# tokens this once had made every run of this file twice as long
KILLS = 3  # SIGKILLs per random-kill run before the run left to finish
ARGS = ["--set", "stages=substring", "--set", "substring.min_length=12", "--set", "substring.shard_tokens=6000"]


def dump(work: Path) -> list:
    return (db_rows(work, "SELECT doc_id, source_row, status, reason, removed_tokens FROM documents ORDER BY doc_id")
            + db_rows(work, "SELECT * FROM spans ORDER BY span_id")
            + db_rows(work, "SELECT source, source_row, error FROM input_errors ORDER BY error_id"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("resume")
    docs = planted_corpus(random.Random(42), 300, 400)
    inp = write_jsonl(d / "in.jsonl", docs)
    with open(inp, "a") as f:
        f.write("{broken json\n")
    ref = d / "ref.jsonl"
    seconds = timed_run(inp, ref, d / "refwork", ARGS)
    shards = db_rows(d / "refwork", "SELECT count(*) FROM stages WHERE stage = 'build' AND shard >= 0")[0][0]
    assert shards >= 10
    return inp, ref, dump(d / "refwork"), seconds


def timed_run(inp: Path, out: Path, work: Path, args: list[str]) -> float:
    """Wall seconds of a whole uninterrupted run (what test_random_kills draws its kill times from)."""
    t = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "sadedup.cli", "run", "--input", inp, "--output", out, "--workdir",
                        work, *args], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return time.monotonic() - t


def ref_shards(work: Path) -> list[int]:
    return [r[0] for r in db_rows(work, "SELECT shard FROM stages WHERE stage = 'candidates' AND shard >= 0")]


def sa_mtimes(work: Path) -> dict[int, int]:
    """mtime of sa.npy of every shard whose build was recorded done (the suffix arrays sit in
    the L<L> folder, beside the candidate text)."""
    out = {}
    done = {r[0] for r in db_rows(work, "SELECT shard FROM stages WHERE stage = 'build' AND shard >= 0 AND status = 'done'")}
    for sdir in sorted((work / "substring").glob("*/L*/shard_*")):
        k = int(sdir.name.split("_")[1])
        if k in done and (sdir / "sa.npy").exists():
            out[k] = (sdir / "sa.npy").stat().st_mtime_ns
    return out


@pytest.mark.parametrize("point", ["ingest.row:100", "tokenize.shard:4", "candidates.shard:4", "build.shard:4",
                                   "repeats.merge",
                                   "remove.db", "export.row:120"])
def test_killed_then_rerun_is_identical(cli, corpus, tmp_path, point):
    inp, ref, ref_dump, _ = corpus
    out, work = tmp_path / "out.jsonl", tmp_path / "work"
    p = cli("run", "--input", inp, "--output", out, "--workdir", work, *ARGS, check=False,
            env={"SADEDUP_CRASH": point})
    assert p.returncode == -signal.SIGKILL, p.stderr
    # the pool's resource tracker outlives the killed run and cleans up after it; its warning
    # of "leaked semaphore objects" came after the shell's prompt, as if from nowhere
    assert "resource_tracker" not in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not out.exists()
    before = sa_mtimes(work)
    cli("run", "--input", inp, "--output", out, "--workdir", work, *ARGS)
    assert out.read_bytes() == ref.read_bytes()
    assert dump(work) == ref_dump
    after = sa_mtimes(work)
    assert all(after[k] == t for k, t in before.items()), "a finished shard was rebuilt"
    if point.startswith("build"):
        assert len(before) >= 3
        assert db_rows(work, "SELECT json_extract(detail, '$.reused') FROM stages WHERE stage = 'build' "
                             "AND shard = -1")[0][0] >= 3
    if point.startswith("candidates"):
        assert db_rows(work, "SELECT json_extract(detail, '$.candidates_rebuilt'), json_extract(detail, "
                             "'$.anchors_rebuilt') FROM stages WHERE stage = 'candidates' AND shard = -1")[0] == (
            len(ref_shards(work)) - 4, 0)
    if point.startswith("tokenize"):
        assert db_rows(work, "SELECT json_extract(detail, '$.reused') FROM stages WHERE stage = 'tokenize' "
                             "AND shard = -1")[0][0] >= 4
    # what `sadedup status` prints as "pending: nothing", asked here (its text is tested elsewhere)
    assert all(s["state"] == "done" for s in pipeline.status(work))


def test_corrupt_artifacts_rebuild_just_them(cli, corpus, tmp_path):
    inp, ref, ref_dump, _ = corpus
    out, work = tmp_path / "out.jsonl", tmp_path / "work"
    # the reference run's folder is this run with ARGS: copied, not made again (it records the
    # reference's output, so the rerun names its own)
    shutil.copytree(Path(inp).parent / "refwork", work, symlinks=True)
    folder = next((work / "substring").glob("*tps_*"))
    mt = sa_mtimes(work)

    def flip(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[-1] ^= 0xFF
        path.write_bytes(bytes(data))

    lfolder = next(folder.glob("L*"))
    flip(lfolder / "shard_00002" / "sa.npy")
    flip(folder / "shard_00005" / "tokens.npy")
    flip(lfolder / "shard_00001" / "gid.npy")
    cli("run", "--input", inp, "--output", out, "--workdir", work, *ARGS)
    assert out.read_bytes() == ref.read_bytes()
    assert dump(work) == ref_dump
    detail = lambda stage, key: db_rows(work, f"SELECT json_extract(detail, '$.{key}') FROM stages "  # noqa: E731
                                              f"WHERE stage = '{stage}' AND shard = -1")[0][0]
    assert detail("build", "built") == 1
    assert detail("tokenize", "rebuilt") == 1
    assert detail("repeats", "groups_rebuilt") == 1 and detail("repeats", "windows_rebuilt") == 0
    after = sa_mtimes(work)
    assert [k for k in mt if after[k] != mt[k]] == [2]


@pytest.mark.parametrize("all_stages", [False, True])
def test_random_kills(corpus, tmp_path, all_stages):
    """SIGKILL at random moments until a run completes: the result is still the reference."""
    inp, ref, ref_dump, seconds = corpus
    args = ARGS
    if all_stages:  # exact, minhash and substring, many shards
        args = ARGS[2:]
        ref = tmp_path / "ref.jsonl"
        seconds = timed_run(inp, ref, tmp_path / "refwork", args)
        ref_dump = dump(tmp_path / "refwork")
        assert db_rows(tmp_path / "refwork", "SELECT count(*) FROM documents WHERE reason = 'exact_duplicate'")[0][0]
    out, work = tmp_path / "out.jsonl", tmp_path / "work"
    rng = random.Random(3 + all_stages)
    cmd = [sys.executable, "-m", "sadedup.cli", "run", "--input", str(inp), "--output", str(out), "--workdir",
           str(work), *args]
    # kill moments drawn over a whole run's length, measured on this machine, so that the kills
    # land all through the run whatever its speed (fixed seconds either missed the late stages on
    # a slow machine or cost a dozen restarts), then one run left to finish
    # a run faster than the one timed (that one under a burst of load) can finish before its
    # first kill: then the folder is made afresh and the moments drawn over half the time
    kills = 0
    for _ in range(4):
        shutil.rmtree(work, ignore_errors=True)
        for timeout in [rng.uniform(0.1, 0.6) * seconds for _ in range(KILLS)] + [None]:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                kills += 1
                continue
            assert proc.returncode == 0, proc.stderr.read()
            break
        if kills:
            break
        seconds /= 2
    assert kills, "the run finished before it could be killed"
    assert out.read_bytes() == ref.read_bytes()
    assert dump(work) == ref_dump


def test_second_run_is_refused_and_stale_lock_taken_over(cli, corpus, tmp_path):
    inp, ref, _, _ = corpus
    work = tmp_path / "work"
    work.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(work / '.lock')!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "os.write(fd, str(os.getpid()).encode())\n"
        "print('locked', flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    p = cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", work, *ARGS, check=False)
    assert p.returncode != 0 and "in use by another sadedup run" in p.stderr and str(holder.pid) in p.stderr
    holder.kill()
    holder.wait()
    cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", work, *ARGS)
    assert (tmp_path / "o.jsonl").read_bytes() == ref.read_bytes()


def slowed(cli_args: list, seconds: int) -> subprocess.Popen:
    """The real command with every worker task slowed by `seconds` (faults.delay), so that it
    surely holds its folder's lock while a test asks `status` (a second or two) beside it."""
    return subprocess.Popen([sys.executable, "-m", "sadedup.cli", *map(str, cli_args)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "CI": "1", "SADEDUP_SLOW_TASKS": str(seconds)})


def test_status_of_a_stage_running_now_says_running_not_interrupted(cli, corpus, tmp_path):
    """`sadedup status` beside a live run said its running stage was "interrupted": a record
    left `running` by a dead run and one a live run is writing read the same. Now the folder's
    lock says which, and the record the pid of the run that wrote it. A real SIGKILL (in the
    export, after the decisions a sweep reads) leaves the record. Known leftover (c): status
    beside a process holding the lock as `sadedup sweep`, report or count do called the dead
    run's record running now; it is interrupted, and only a live run's own record is running,
    with its pid (a real run, its tasks slowed so that status surely asks while it runs)."""
    inp = corpus[0]
    work = tmp_path / "work"
    p = cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", work, *ARGS, check=False,
            env={"SADEDUP_CRASH": "export.row"})
    assert p.returncode == -signal.SIGKILL

    def states() -> dict[str, tuple]:
        got = json.loads(cli("status", work, "--format", "json").stdout)["stages"]
        return {s["stage"]: (s["state"], s["why"]) for s in got}

    def asked_while_held(proc: subprocess.Popen, ask: Callable[[], Any]) -> Any:
        """ask() while `proc` holds the folder's lock (and still does after the answer), until
        it answers something: a run holds the lock between its stages too, and from before it
        marks its first one (asked then, no stage is running: seen once in a loaded suite)."""
        try:
            for _ in range(600):
                fd = os.open(work / ".lock", os.O_RDONLY)
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    fcntl.flock(fd, fcntl.LOCK_UN)
                except BlockingIOError:
                    got = ask()
                    if got and proc.poll() is None:
                        return got
                finally:
                    os.close(fd)
                assert proc.poll() is None, proc.stderr.read()
                time.sleep(0.05)
            raise AssertionError("the command never held the folder")
        finally:
            assert proc.wait(timeout=600) == 0, proc.stderr.read()

    assert states()["export"] == ("interrupted", "interrupted")
    holder = subprocess.Popen([sys.executable, "-c", (  # holds the folder as a sweep, report or count does
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(work / '.lock')!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "os.ftruncate(fd, 0)\n"
        "os.write(fd, str(os.getpid()).encode())\n"
        "print('locked', flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert states()["export"] == ("interrupted", "interrupted")
        shown = cli("status", work).stdout
        assert "export (interrupted: interrupted)" in shown and "running" not in shown.split("pending:")[0]
    finally:
        holder.kill()
        holder.wait()
    # another min_length: the build stage's shard tasks run again, each a second or two
    run = slowed(["run", "--workdir", work, "--workers", "2", "--set", "substring.min_length=13"], 2)
    running = asked_while_held(run, lambda: [s for s in states().items() if s[1][0] == "running"])
    assert running and running[0][1] == ("running", f"running now (sadedup (pid {run.pid}) holds the folder)")
    assert all(s == ("done", None) for s in states().values())


def test_commands_beside_a_run_starting_say_so_then_it_finishes(cli, corpus, tmp_path):
    """A run that has made and locked its folder but not yet its database (it checks inputs
    and references first): `status`, `sql`, `explain` and `report` beside it said "is not a
    sadedup work folder (no sadedup.db)". The run is held there for real (SADEDUP_CRASH with
    SIGSTOP at workdir.locked); each says a run is starting, with its pid, and once let go the
    run ends with the reference output."""
    inp, ref, ref_dump, _ = corpus
    out, work = tmp_path / "out.jsonl", tmp_path / "work"
    with held_at(["run", "-q", "--input", inp, "--output", out, "--workdir", work, *ARGS], "workdir.locked") as p:
        assert stopped(p.pid) and not (work / "sadedup.db").exists()
        for args in (["status"], ["sql", "SELECT 1"], ["explain", "1"], ["report", "-o", tmp_path / "r.html"]):
            got = cli(args[0], work, *args[1:], check=False)
            assert got.returncode == 2 and got.stderr.strip().splitlines() == [
                f"sadedup: error: work folder {work} is being started by a sadedup run (pid {p.pid}): nothing is "
                f"recorded there yet; ask again in a moment"], (args, got.stderr)
    assert p.returncode == 0, p.err
    assert out.read_bytes() == ref.read_bytes() and dump(work) == ref_dump


def _pool_workers(driver: int) -> list[int]:
    """The pids of a driver's pool workers (its children running multiprocessing's spawn_main,
    not its resource tracker)."""
    found = []
    for d in Path("/proc").iterdir():
        try:
            stat = (d / "stat").read_text()
            cmdline = (d / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == driver and b"spawn_main" in cmdline:
            found.append(int(d.name))
    return found


def test_a_pool_worker_killed_between_tasks_changes_nothing_but_time(corpus, tmp_path):
    """A pool worker SIGKILLed while it holds no task (here once the driver has recorded the
    last shard of build: the run held there by SIGSTOP, one worker killed, the run let go): the
    repeats stage's first submit went to the broken pool and the run failed with "internal
    error: BrokenProcessPool", exit 1. Nothing was lost, so a new pool goes on and the run ends
    with the reference output and rows."""
    inp, ref, ref_dump, _ = corpus
    out, work = tmp_path / "out.jsonl", tmp_path / "work"
    last = f"build.shard:{len(ref_shards(Path(inp).parent / 'refwork'))}"
    p = subprocess.Popen([sys.executable, "-m", "sadedup.cli", "run", "-q", "--input", str(inp), "--output", str(out),
                          "--workdir", str(work), *ARGS, "--workers", "2"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "CI": "1", "SADEDUP_CRASH": last, "SADEDUP_CRASH_SIGNAL": "SIGSTOP"},
                         start_new_session=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not stopped(p.pid):
            time.sleep(0.02)
        assert stopped(p.pid)
        workers = _pool_workers(p.pid)
        assert len(workers) == 2, workers
        os.kill(workers[0], signal.SIGKILL)
    finally:
        os.killpg(p.pid, signal.SIGCONT)
        _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert out.read_bytes() == ref.read_bytes() and dump(work) == ref_dump


def test_a_status_asking_the_lock_never_refuses_a_run_starting(tmp_path):
    """`status` takes the folder's lock shared for an instant to see whether a run holds it; a
    run taking the lock in that instant waits it out instead of being refused as if another
    run held the folder. Here the shared lock is held for 50 ms, far longer than status does."""
    import fcntl
    import threading

    from sadedup.workspace import Workspace

    ws = Workspace(tmp_path / "w", create=True)
    fd = os.open(tmp_path / "w" / ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_SH)
    threading.Timer(0.05, lambda: os.close(fd)).start()
    ws.lock()  # refused at once before
    try:
        other = os.open(tmp_path / "w" / ".lock", os.O_RDONLY)
        with pytest.raises(BlockingIOError):  # and it holds the lock now
            fcntl.flock(other, fcntl.LOCK_SH | fcntl.LOCK_NB)
        os.close(other)
    finally:
        ws.unlock()


def test_changed_input_stops_until_restart(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", ["one document here", "another"])
    cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", *ARGS)
    time.sleep(0.01)
    write_jsonl(inp, ["one document here", "another", "and a new one"])
    p = cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", *ARGS, check=False)
    assert p.returncode != 0 and "inputs changed" in p.stderr and "--restart" in p.stderr
    cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", *ARGS, "--restart")
    assert len((tmp_path / "o.jsonl").read_text().splitlines()) == 3


def test_changed_input_stops_commands_that_name_none(cli, tmp_path):
    """The commands that use the recorded inputs (run --workdir alone, export, status) check
    them too: they found a finished output current over a file grown or gone since, unlike a
    fresh run over the same files."""
    inp = write_jsonl(tmp_path / "in.jsonl", ["one document here", "another"])
    w = tmp_path / "w"
    cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", w, *ARGS)
    before = (tmp_path / "o.jsonl").read_bytes()
    with open(inp, "a") as f:
        f.write(json.dumps({"id": "x", "text": "and a new one"}) + "\n")
    for args in (["run", "--workdir", w, *ARGS], ["export", w]):
        p = cli(*args, check=False)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert f"inputs changed since work folder {w} was made ({inp} size" in p.stderr, p.stderr
    export = json.loads(cli("status", w, "--format", "json").stdout)["stages"][-1]
    assert export["state"] != "done" and "inputs changed" in export["why"], export
    inp.rename(tmp_path / "moved.jsonl")
    p = cli("run", "--workdir", w, *ARGS, check=False)
    assert p.returncode == 2 and f"({inp} is gone)" in p.stderr, p.stderr
    assert (tmp_path / "o.jsonl").read_bytes() == before


def test_checksums_made_by_the_tasks_are_those_of_the_files(corpus):
    """Per-shard tasks checksum what they wrote (the driver never reads it back): the recorded
    size and checksum of every shard artifact equal the files' own."""
    from sadedup.stages.build import BUILD_FILES
    from sadedup.stages.candidates import ANCHOR_FILES, CANDIDATE_FILES
    from sadedup.stages.repeats import GROUP_FILES, WINDOW_FILES
    from sadedup.workspace import files_checksum

    work = Path(corpus[0]).parent / "refwork"
    files = {"anchors": ANCHOR_FILES, "candidates": CANDIDATE_FILES, "build": BUILD_FILES, "windows": WINDOW_FILES,
             "groups": GROUP_FILES}
    rows = db_rows(work, "SELECT stage, shard, artifact, size, checksum FROM stages WHERE shard >= 0 AND stage IN "
                         "('anchors', 'candidates', 'build', 'windows', 'groups')")
    assert {r[0] for r in rows} == set(files) and len(rows) >= 50
    for stage, shard, artifact, size, checksum in rows:
        assert files_checksum([work / artifact / f for f in files[stage]]) == (size, checksum), (stage, shard)


def test_a_subword_tokenize_interrupted_while_encoding_keeps_the_waves_before(corpus, tmp_path, monkeypatch):
    """Interrupted while encoding a later wave of pieces, the shards the earlier waves closed
    are on disk and recorded, and the rerun keeps them. Pieces of a few KB (BATCH_BYTES and
    PIECE_BYTES made small, in this process, on the inline executor) make many waves."""
    import sadedup
    from sadedup.stages import tokenize
    from tokenizer_fixtures import hf_byte_bpe

    inp, _, _, _ = corpus
    tok = hf_byte_bpe(tmp_path / "bpe.json")
    sets = ["stages=substring", "substring.min_length=12", "substring.shard_tokens=3000",
            f"substring.tokenizer=hf:{tok}"]
    monkeypatch.setattr(tokenize, "BATCH_BYTES", 2048)
    monkeypatch.setattr(tokenize, "PIECE_BYTES", 2048)
    sadedup.run(inp, tmp_path / "fresh.jsonl", tmp_path / "fresh", overrides=sets, executor="inline", quiet=True)
    calls = {"n": 0}
    encode = tokenize.EncodePiece.__call__

    def interrupted(self):
        calls["n"] += 1
        if calls["n"] == 40:
            raise KeyboardInterrupt
        return encode(self)

    monkeypatch.setattr(tokenize.EncodePiece, "__call__", interrupted)
    w = tmp_path / "w"
    with pytest.raises(KeyboardInterrupt):
        sadedup.run(inp, tmp_path / "out.jsonl", w, overrides=sets, executor="inline", quiet=True)
    kept = db_rows(w, "SELECT count(*) FROM stages WHERE stage = 'tokenize' AND shard >= 0 AND status = 'done'")[0][0]
    assert kept >= 3, "the waves before the interrupt closed no shard"
    monkeypatch.setattr(tokenize.EncodePiece, "__call__", encode)
    sadedup.run(inp, tmp_path / "out.jsonl", w, overrides=sets, executor="inline", quiet=True)
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "fresh.jsonl").read_bytes()
    assert dump(w) == dump(tmp_path / "fresh")
    assert db_rows(w, "SELECT json_extract(detail, '$.reused') FROM stages WHERE stage = 'tokenize' "
                      "AND shard = -1")[0][0] == kept


def test_an_interrupt_while_the_pool_closes_a_connection_prints_no_traceback(tmp_path):
    """SIGTERM can arrive while SQLAlchemy's pool closes a connection (found by
    test_sequence_machine's long search: a kill during a run printed "Exception closing
    connection" and a traceback above the interrupted line). The pool logs what it caught and
    raises it again: the command's one line is all that is printed, and it exits 143."""
    script = f"""
import signal, sys
from pathlib import Path
from sadedup import cli, db
from sadedup.errors import Interrupted

def main_work():
    engine = db.open_db(Path({str(tmp_path)!r}))
    with engine.connect() as c:
        c.exec_driver_sql("SELECT 1")
    def close(_):
        cli._on_signal(signal.SIGTERM, None)  # as if the signal came inside the close
    engine.dialect.do_close = close
    engine.dispose()

try:
    main_work()
except Interrupted as e:
    cli._interrupted(e.signum)
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert p.returncode == 128 + signal.SIGTERM, p.stderr
    assert p.stderr.strip().splitlines() == ["sadedup: interrupted (SIGTERM); rerun the same command to resume"], \
        p.stderr


INSIDE_THE_SCHEMA_CHECK = """
from sqlalchemy.engine import default
execute = default.DefaultDialect.do_execute
def interrupted(self, cursor, statement, parameters, context=None):
    execute(self, cursor, statement, parameters, context)
    if "user_version" in statement:  # the first statement of the first connection
        raise Interrupted(signal.SIGTERM)
default.DefaultDialect.do_execute = interrupted
"""
AFTER_THE_SCHEMA_CHECK = """
migrate = db._migrate
def interrupted(engine):
    migrate(engine)  # the schema checked through a connection in WAL mode, then the signal
    raise Interrupted(signal.SIGTERM)
db._migrate = interrupted
"""


@pytest.mark.parametrize("where", [AFTER_THE_SCHEMA_CHECK, INSIDE_THE_SCHEMA_CHECK], ids=["after", "inside"])
def test_an_interrupt_while_the_database_opens_leaves_no_write_ahead_log(cli, tmp_path, where):
    """A run interrupted while its database was being opened (found by test_sequence_machine:
    SIGTERM during the schema check of a rerun) left sadedup.db-wal and -shm beside the
    database, because the folder was released without settling a database whose engine was
    never made; the next `explain` then wrote to the -shm index. Released now, the folder
    holds the database alone, and a read-only command changes no file. Inside a statement,
    the connection the interrupt cut off stays open (closed, but its cursor is held by the
    traceback) until the process ends: the database is settled then."""
    corpus = tmp_path / "in.jsonl"
    corpus.write_text("".join(json.dumps({"id": str(i), "text": f"document {i % 7} " * 40}) + "\n" for i in range(30)))
    w = tmp_path / "w"
    cli("run", "-q", "--input", corpus, "--output", tmp_path / "out.jsonl", "--workdir", w, "--set", "stages=exact")
    # the command as the CLI runs it: its end freezes every object (no collection at exit),
    # which kept the cut-off connection alive past the fold at exit
    script = f"""
import signal, sys
from sadedup import cli, db
from sadedup.errors import Interrupted
{where}
sys.argv = ["sadedup", "-q", "run", "--workdir", {str(w)!r}]
cli.main()
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert p.returncode == 128 + signal.SIGTERM, p.stderr
    assert p.stderr.strip().splitlines() == ["sadedup: interrupted (SIGTERM); rerun the same command to resume"]
    assert not [f.name for f in w.iterdir() if f.name.startswith("sadedup.db-")]
    before = {f.name: f.read_bytes() for f in w.iterdir() if f.is_file()}
    cli("explain", "-q", w, "0")
    assert {f.name: f.read_bytes() for f in w.iterdir() if f.is_file()} == before
