"""Conventions a user expects of a command-line tool and of a Python library: --version, global
flags anywhere, -q that keeps warnings, help without type noise and with examples, output
scripts can read (JSON, JSONL, CSV), NULL and BLOBs shown safely, short results from the stage
commands, a Python API that takes one path, a dict or a Workflow and returns a typed result,
dedup() of a table in memory, the process's own CPU and memory limits, and the sample run's
files where the README says (and ignored by git)."""
from __future__ import annotations

import csv
import io
import json
import os
import random
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pytest
from corpus import random_text, write_jsonl
from helpers import db_rows

import sadedup
from sadedup import config

REPO = Path(__file__).resolve().parent.parent
# --workers 1: these runs are a few documents, and a pool of two would cost more than the run
# (two processes importing sadedup, ~2.5 s of CPU a command); the pool itself is exercised by
# test_cli's piece tests, test_substring_semantics, test_sequences' interrupts, test_dask and
# test_conventions' worker count
SMALL = ["--set", "stages=exact,substring", "--set", "substring.min_length=20", "--workers", "1"]
COMMANDS = ["run", "ingest", "exact", "minhash", "tokenize", "build", "repeats", "remove", "export", "status", "sql",
            "explain"]
STAGES = ["exact", "minhash", "tokenize", "build", "repeats", "remove"]


def docs(n=40, seed=5):
    """Distinct documents, every fourth quoting one passage, and one exact copy of the first."""
    rng = random.Random(seed)
    shared = random_text(rng, 80)
    out = []
    for i in range(n):
        t = f"document {i}: " + random_text(rng, 200)
        out.append(t[:50] + shared + t[50:] if i % 4 == 1 else t)
    return out + [out[0]]


@pytest.fixture
def done(cli, tmp_path):
    """A finished run: (work folder, input)."""
    inp = write_jsonl(tmp_path / "in.jsonl", docs())
    cli("run", "--input", inp, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w", *SMALL)
    return tmp_path / "w", inp


# ---- 1. --version, global flags after the command, -q keeps warnings, help

def test_version(cli):
    p = cli("--version")
    assert p.stdout == f"sadedup {sadedup.__version__}\n"


def test_the_command_line_leaves_its_objects_to_the_exit():
    """The CLI's process freezes its objects when the command ends: the interpreter's exit
    then skips the full garbage collection it ran over them (half a second or more after a
    run). Read by an exit hook registered before the command, which runs after it."""
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
            "from sadedup.cli import main\n"
            "sys.argv = ['sadedup', '--version']\n"
            "main()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == "frozen True", out.stdout + out.stderr


def test_global_flags_after_the_command(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", docs(20))
    w = tmp_path / "w"
    p = cli("run", "-q", "--input", inp, "--output", tmp_path / "out.jsonl", "--workdir", w, *SMALL)
    assert "ingest:" not in p.stderr and "exact:" not in p.stderr  # the notes are gone
    assert "output:" in p.stdout  # the result is not
    loud = cli("exact", w, "--set", "exact.lowercase=true")
    assert "exact:" in loud.stderr
    quiet = cli("exact", w, "--set", "exact.lowercase=false", "--quiet")
    assert quiet.stderr == "" and quiet.stdout.startswith("exact:")
    assert cli("status", w, "--debug").returncode == 0
    assert cli("--debug", "status", w).returncode == 0
    # --debug after the command shows the traceback of a failure, and without it there is none
    (w / "sadedup.db").write_bytes(b"not a database at all" * 10)
    plain = cli("status", w, check=False)
    debug = cli("status", w, "--debug", check=False)
    assert plain.returncode == debug.returncode == 2
    assert "Traceback" not in plain.stderr and "Traceback" in debug.stderr
    assert plain.stderr.strip().splitlines() == [debug.stderr.strip().splitlines()[-1]]
    assert "is not a readable sadedup database" in plain.stderr


def test_quiet_keeps_warnings(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", docs(10))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    p = cli("run", "--input", inp, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w", "-q",
            "--workers", str(cores + 3), "--set", "stages=exact", "--executor", "inline")
    lines = p.stderr.strip().splitlines()
    assert lines and all(line.startswith("sadedup: warning: ") for line in lines), p.stderr
    assert any(f"run.workers={cores + 3}" in line for line in lines)


def test_help_has_no_type_noise_and_an_example_per_command(command_help):
    top = command_help()  # the real command at 200 columns, each help run once per session
    assert "<bool>" not in top and "--version" in top
    for c in COMMANDS:
        out = command_help(c)
        assert "<bool>" not in out, c
        assert f"Example: sadedup {c} " in out, c
        assert "--quiet" in out and "--debug" in out, c  # global flags are listed where they work
    run = command_help("run")
    assert "Give --input, --output and --workdir together" in run
    for opt in ("--output", "--workdir"):
        line = next(line for line in run.splitlines() if f"{opt} " in line and "with --input" in line)
        assert line


def test_output_and_workdir_go_with_input(cli, tmp_path):
    p = cli("run", "--output", tmp_path / "x.jsonl", check=False)
    assert p.returncode == 2 and "--output goes with --input" in p.stderr
    assert not (tmp_path / "sadedup-sample-work").exists() and not (tmp_path / "x.jsonl").exists()
    p = cli("run", "--input", tmp_path / "x.jsonl", check=False)
    assert p.returncode == 2 and "--input goes with --workdir" in p.stderr


# ---- 2. machine-readable output

def test_sql_formats_for_scripts(cli, done):
    w, _ = done
    q = "SELECT doc_id, status, reason FROM documents ORDER BY doc_id LIMIT 3"
    jsonl = cli("sql", w, q, "--format", "jsonl").stdout
    lines = jsonl.splitlines()
    assert len(lines) == 3 and jsonl.endswith("\n")
    assert [json.loads(line)["doc_id"] for line in lines] == [0, 1, 2]
    assert json.loads(lines[0])["reason"] is None
    js = cli("sql", w, q, "--format", "json").stdout
    assert js.endswith("]\n") and [r["doc_id"] for r in json.loads(js)] == [0, 1, 2]
    assert cli("sql", w, "SELECT 1 WHERE 0", "--format", "json").stdout == "[]\n"
    assert cli("sql", w, "SELECT 1 WHERE 0", "--format", "jsonl").stdout == ""
    out = subprocess.run([sys.executable, "-m", "sadedup.cli", "sql", str(w), q, "--format", "csv"],
                         capture_output=True, env={**os.environ, "CI": "1"}).stdout
    assert b"\r" not in out and out.count(b"\n") == 4
    assert list(csv.reader(io.StringIO(out.decode())))[0] == ["doc_id", "status", "reason"]
    p = cli("sql", w, q, "--format", "yaml", check=False)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


def test_null_is_not_the_text_null_and_blobs_print(cli, done):
    w, _ = done
    q = "SELECT NULL AS a, 'NULL' AS b, '' AS c, x'00ff10' AS d, CAST(x'ff41' AS TEXT) AS e, '[bold]x[/]' AS f"
    table = cli("sql", w, q).stdout
    row = table.strip().splitlines()[-1]
    cells = [c.strip() for c in row.split("│")]
    assert cells == ["NULL", "'NULL'", "", "X'00FF10'", "\ufffdA", "[bold]x[/]"]
    (obj,) = [json.loads(line) for line in cli("sql", w, q, "--format", "jsonl").stdout.splitlines()]
    assert obj == {"a": None, "b": "NULL", "c": "", "d": "X'00FF10'", "e": "\ufffdA", "f": "[bold]x[/]"}
    assert json.loads(cli("sql", w, q, "--format", "json").stdout) == [obj]
    csv_lines = cli("sql", w, q, "--format", "csv").stdout.splitlines()
    assert csv_lines[1] == ',NULL,"",X\'00FF10\',\ufffdA,[bold]x[/]'
    big = cli("sql", w, "SELECT randomblob(1000) AS b").stdout
    assert "(1000 bytes)" in big


def test_status_and_explain_as_json(cli, done):
    w, _ = done
    st = json.loads(cli("status", w, "--format", "json").stdout)
    assert st["stages"] == sadedup.pipeline.status(w)
    assert [s["stage"] for s in st["stages"]][:2] == ["ingest", "exact"]
    assert all(set(s) == {"stage", "state", "why"} and s["state"] == "done" for s in st["stages"])
    whole = {r["stage"]: r for r in st["records"] if r["shard"] is None}
    assert whole["exact"]["status"] == "done" and whole["exact"]["detail"]["dropped"] == 1
    assert "key" not in whole["exact"]["detail"] and "stamps" not in whole["exact"]["detail"]
    cut = db_rows(w, "SELECT doc_id FROM spans ORDER BY doc_id LIMIT 1")[0][0]
    info = json.loads(cli("explain", w, str(cut), "--doc-id", "--format", "json").stdout)
    assert info["document"]["doc_id"] == cut and info["spans"]
    assert all(s["text"] and "source_text" in s for s in info["spans"])
    dup = db_rows(w, "SELECT doc_id FROM documents WHERE reason = 'exact_duplicate'")[0][0]
    info = json.loads(cli("explain", w, str(dup), "--format", "json").stdout)
    assert info["document"]["status"] == "dropped" and info["clusters"][0]["method"] == "exact"


# ---- 3. the stage commands say what they did in one line

def test_stage_commands_print_one_short_line(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", docs(30))
    w = tmp_path / "w"
    outs = {"ingest": cli("ingest", "--input", inp, "--workdir", w, "--set", "substring.min_length=20",
                          "--workers", "1")}  # recorded: the stage commands run without a pool too
    for stage in STAGES:
        outs[stage] = cli(stage, w)
    outs["export"] = cli("export", w, "--output", tmp_path / "out.jsonl")
    for stage, p in outs.items():
        lines = p.stdout.splitlines()
        assert len(lines) == 1 and lines[0].startswith(stage), (stage, p.stdout)
        assert "seconds" not in lines[0] and "{" not in lines[0] and "=" not in lines[0].split("drop_fraction")[0], \
            (stage, lines[0])
    assert "1 exact duplicate(s) dropped" in outs["exact"].stdout
    again = cli("exact", w).stdout.splitlines()
    assert len(again) == 1 and again[0].endswith("(done before, nothing redone)")
    detail = json.loads(cli("exact", w, "--format", "json").stdout)
    assert detail["dropped"] == 1 and detail["skipped"] is True and "stamps" not in detail
    detail = json.loads(cli("remove", w, "--format", "json", "--set", "substring.drop_fraction=0.9").stdout)
    assert {"spans", "removed_tokens", "dropped", "cut"} <= set(detail) and not detail.get("skipped")


def test_a_result_line_is_not_said_twice_on_one_stream(tmp_path):
    """stdout and stderr to one place (a terminal, `2>&1`): the stage's summary once."""
    inp = write_jsonl(tmp_path / "in.jsonl", docs(10))
    base = [sys.executable, "-m", "sadedup.cli"]
    env = {**os.environ, "CI": "1"}
    p = subprocess.run([*base, "ingest", "--input", str(inp), "--workdir", str(tmp_path / "w")], cwd=tmp_path,
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert p.returncode == 0
    assert sum(line.startswith("ingest:") for line in p.stdout.splitlines()) == 1, p.stdout


# ---- 4. the Python API

def test_run_takes_one_path_a_dict_and_a_workflow(tmp_path, capfd):
    inp = write_jsonl(tmp_path / "in.jsonl", docs(20))
    w = tmp_path / "w"
    res = sadedup.run(str(inp), tmp_path / "out.jsonl", w, overrides={"stages": ["exact"]}, executor="inline",
                      quiet=True)
    assert capfd.readouterr().err == ""
    assert isinstance(res, sadedup.RunResult) and isinstance(res, Mapping)
    assert res.documents == 21 and res.kept == 20 and res.dropped == {"exact_duplicate": 1}
    assert res.output == tmp_path / "out.jsonl" and res.workdir == w and res.input_errors == 0
    assert res["export"]["rows"] == 20 and not res["exact"].get("skipped") and list(res) == ["ingest", "exact", "export"]
    assert json.loads(json.dumps(res.to_dict()))["kept"] == 20
    again = sadedup.run(Path(inp), None, w, overrides=["stages=exact"], executor="inline", quiet=True)
    assert again["exact"].get("skipped") and again.skipped == ["ingest", "exact", "export"]
    # a Workflow object, and nested overrides on top of it
    wf = sadedup.load_workflow("keep_first", ["stages=exact,minhash"])
    res = sadedup.run([inp], tmp_path / "o2.jsonl", tmp_path / "w2", workflow=wf,
                      overrides={"minhash": {"threshold": 0.7}, "exact.lowercase": True}, executor="inline",
                      quiet=True)
    cfg = json.loads(db_rows(tmp_path / "w2", "SELECT config FROM runs ORDER BY run_id DESC LIMIT 1")[0][0])
    assert cfg["stages"] == ["exact", "minhash"] and cfg["minhash"]["threshold"] == 0.7
    assert cfg["exact"]["lowercase"] is True and list(res) == ["ingest", "exact", "minhash", "export"]
    with pytest.raises(sadedup.SadedupError, match="sadedup.dedup"):
        sadedup.run(pa.table({"text": ["a"]}), tmp_path / "o3.jsonl", tmp_path / "w3")


def test_the_package_ships_its_type_hints():
    from importlib import resources

    assert (resources.files("sadedup") / "py.typed").is_file()
    assert '"sadedup" = ["py.typed"]' in (REPO / "pyproject.toml").read_text()
    assert "Returns:" in sadedup.run.__doc__ and "RunResult" in sadedup.run.__doc__


def test_dedup_a_table_in_memory(tmp_path):
    texts = docs(30)
    table = pa.table({"id": pa.array([f"d{i}" for i in range(len(texts))]),
                      "text": pa.array(texts, type=pa.large_string()),
                      "score": pa.array(range(len(texts)), type=pa.int32()),
                      "meta": pa.array([{"n": i} for i in range(len(texts))])})
    w = tmp_path / "work"
    out = sadedup.dedup(table, w, overrides={"stages": "exact,substring", "substring.min_length": 20},
                        executor="inline", quiet=True)
    assert isinstance(out, pa.Table) and out.schema == table.schema
    kept = db_rows(w, "SELECT ext_id FROM documents WHERE status = 'kept' ORDER BY doc_id")
    assert out.column("id").to_pylist() == [k[0] for k in kept] and out.num_rows == len(texts) - 1
    cut = db_rows(w, "SELECT d.ext_id FROM documents d WHERE removed_chars > 0 AND status = 'kept'")
    assert cut, "the planted corpus has repeated passages"
    rows = {r["id"]: r for r in out.to_pylist()}
    for (ext_id,) in cut:
        i = int(ext_id[1:])
        assert len(rows[ext_id]["text"]) < len(texts[i]) and rows[ext_id]["meta"] == {"n": i}
        assert rows[ext_id]["score"] == i
    assert not (w / "input.parquet").exists()  # beside the work folder, not in it
    # the same table again reuses the work; another one needs restart=True
    again = sadedup.dedup(table, w, overrides={"stages": "exact,substring", "substring.min_length": 20},
                          executor="inline", quiet=True)
    assert again.equals(out)
    small = sadedup.dedup(table.slice(0, 5), w, overrides={"stages": "exact,substring", "substring.min_length": 20},
                          executor="inline", quiet=True, restart=True)
    assert small.num_rows <= 5
    with pytest.raises(sadedup.SadedupError, match=r"pass restart=True"):  # the API's words, not the CLI's
        sadedup.dedup(table, w, overrides={"stages": "exact,substring", "substring.min_length": 20},
                      executor="inline", quiet=True)
    with pytest.raises(TypeError):
        sadedup.dedup([{"text": "a"}], w)


def test_dedup_a_hugging_face_dataset(tmp_path):
    """A Dataset in, a Dataset out: the kept rows in order, every column (and its type) kept,
    the text cut as the database says, the database beside it; the same rows as the Table."""
    datasets = pytest.importorskip("datasets")  # in the test extra
    texts = docs(30)
    ds = datasets.Dataset.from_dict({"id": [f"d{i}" for i in range(len(texts))], "text": texts,
                                     "score": list(range(len(texts))), "meta": [{"n": i} for i in range(len(texts))]},
                                    split="train")
    w = tmp_path / "work"
    sets = {"stages": "exact,substring", "substring.min_length": 20}
    out = sadedup.dedup(ds, w, overrides=sets, executor="inline", quiet=True)
    assert isinstance(out, datasets.Dataset)
    assert out.column_names == ds.column_names and out.features == ds.features and out.split == ds.split
    # the provenance database is the work folder's, and it says what was kept and cut
    assert (w / "sadedup.db").is_file() and not (w / "input.parquet").exists()
    kept = [k[0] for k in db_rows(w, "SELECT ext_id FROM documents WHERE status = 'kept' ORDER BY doc_id")]
    assert out["id"] == kept and len(out) == len(texts) - 1  # the exact copy of d0 went
    assert db_rows(w, "SELECT ext_id, reason FROM documents WHERE status = 'dropped'") == [
        (f"d{len(texts) - 1}", "exact_duplicate")]
    cut = {k for (k,) in db_rows(w, "SELECT ext_id FROM documents WHERE removed_chars > 0 AND status = 'kept'")}
    assert cut, "the planted corpus has repeated passages"
    for row in out:
        i = int(row["id"][1:])
        assert row["score"] == i and row["meta"] == {"n": i}  # the other columns as they were
        if row["id"] in cut:
            assert len(row["text"]) < len(texts[i]) and row["text"] != texts[i]
        else:
            assert row["text"] == texts[i]
    n_chars = dict(db_rows(w, "SELECT ext_id, n_chars - removed_chars FROM documents WHERE status = 'kept'"))
    assert {r["id"]: len(r["text"]) for r in out} == n_chars  # cut by exactly what the database says
    # the same rows as the pyarrow.Table route
    table = sadedup.dedup(ds.data.table, tmp_path / "work-table", overrides=sets, executor="inline", quiet=True)
    assert out.data.table.select(ds.column_names).to_pylist() == table.to_pylist()


# ---- 5. the process's CPU and memory limits

def test_memory_from_the_control_group(tmp_path, monkeypatch):
    phys = config.physical_memory()
    root = tmp_path / "cgroup"
    proc = tmp_path / "proc_cgroup"
    monkeypatch.setattr(config, "CGROUP_ROOT", root)
    monkeypatch.setattr(config, "PROC_CGROUP", proc)
    # v2: the process's group, under a parent with a tighter limit
    proc.write_text("0::/app/job\n")
    (root / "app" / "job").mkdir(parents=True)
    (root / "app" / "job" / "memory.max").write_text("max\n")
    assert config.cgroup_memory_limit() is None and config.machine_memory() == phys
    (root / "app" / "memory.max").write_text(f"{phys // 4}\n")
    assert config.machine_memory() == phys // 4
    assert config.parse_size("auto", "run.memory_budget") == int(phys // 4 * 0.4)
    (root / "app" / "job" / "memory.max").write_text(f"{phys // 8}\n")
    assert config.machine_memory() == phys // 8
    # a limit above the machine's memory: the machine's
    (root / "app" / "job" / "memory.max").write_text(f"{phys * 4}\n")
    (root / "app" / "memory.max").write_text("max\n")
    assert config.machine_memory() == phys
    # v1: memory.limit_in_bytes, "unlimited" spelled as a number near 2^63
    proc.write_text("4:memory:/docker/abc\n1:cpu,cpuacct:/docker/abc\n")
    v1 = root / "memory" / "docker" / "abc"
    v1.mkdir(parents=True)
    (v1 / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (root / "app" / "job" / "memory.max").unlink()
    assert config.cgroup_memory_limit() is None
    (root / "memory" / "memory.limit_in_bytes").write_text(f"{2 << 30}\n")
    assert config.cgroup_memory_limit() == 2 << 30
    # no /proc/self/cgroup: the mount's own files still count
    proc.unlink()
    assert config.cgroup_memory_limit() == 2 << 30


def test_cores_from_the_affinity(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert config.machine_cores() == 1
    assert config.RunConfig().n_workers == 1 and config.RunConfig(workers=3).n_workers == 3


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two cores to restrict to one")
def test_a_run_on_one_allowed_core_plans_one_worker(tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", docs(10))
    one = min(os.sched_getaffinity(0))
    p = subprocess.run([sys.executable, "-m", "sadedup.cli", "run", "--input", str(inp), "--output",
                        str(tmp_path / "out.jsonl"), "--workdir", str(tmp_path / "w"), "--set", "stages=exact"],
                       cwd=tmp_path, env={**os.environ, "CI": "1"}, capture_output=True, text=True,
                       preexec_fn=lambda: os.sched_setaffinity(0, {one}))
    assert p.returncode == 0, p.stderr
    cfg = json.loads(db_rows(tmp_path / "w", "SELECT config FROM runs")[0][0])
    assert cfg["resolved"]["run.workers"] == 1


def test_more_workers_than_tasks_start_no_more_processes_than_tasks(tmp_path, monkeypatch, capfd):
    """--workers far above the cores and the tasks: a warning, and the pool starts no more
    processes than the largest map it ran has tasks (counted where multiprocessing starts
    them, so a pool that started every worker up front would fail here)."""
    import multiprocessing.context as mpc

    from sadedup import executor

    started, maps = [], []
    start = mpc.SpawnProcess.start
    monkeypatch.setattr(mpc.SpawnProcess, "start", lambda self: (started.append(self), start(self))[1])
    imap = executor.LocalExecutor.imap
    monkeypatch.setattr(executor.LocalExecutor, "imap", lambda self, tasks: (maps.append(len(tasks)),
                                                                              imap(self, tasks))[1])
    workers = config.machine_cores() + 14
    inp = write_jsonl(tmp_path / "in.jsonl", docs(40))
    # the MinHash banding is a task per band: 3 tasks; the rest of this small corpus is one task each
    sadedup.run(inp, tmp_path / "out.jsonl", tmp_path / "w", executor="local", workers=workers, quiet=True,
                overrides={"stages": "exact,minhash", "minhash.bands": 3,
                           "run.memory_budget": f"{(workers + 2) * 64 + 64}MB"})
    assert f"run.workers={workers} but this machine gives" in capfd.readouterr().err
    assert max(maps) == 3
    assert 1 <= len(started) <= max(maps) < workers
    assert not any(p.is_alive() for p in started)  # and the run closed its pool


def test_a_pool_worker_let_go_skips_the_interpreters_exit(tmp_path):
    """The pool's workers end at once when it closes: the interpreter's own exit ran a full
    garbage collection in each (0.3-1.5 s that the driver's close waited for at the end of
    every run). A collection during a worker's exit would touch a file here."""
    import functools

    from sadedup.executor import LocalExecutor, run_all

    mark = tmp_path / "collected"
    code = ("import gc, os, sys\n"
            "gc.callbacks.append(lambda phase, info, done=sys.is_finalizing, o=os.open, c=os.close, "
            f"p={str(mark)!r}, f=os.O_CREAT | os.O_WRONLY: done() and c(o(p, f)))")
    pool = LocalExecutor(2)
    try:
        run_all(pool, [functools.partial(exec, code, {}) for _ in range(2)])
    finally:
        pool.close()
    assert not mark.exists()


def test_status_checks_what_it_is_told_and_leaves_the_workspace_as_it_was(done):
    """standing(ws, verify) checks artifacts as its argument says without touching ws.verify,
    and a Workspace has one Provenance (made again only for a new engine)."""
    from sadedup import pipeline
    from sadedup.workspace import Workspace

    w, _ = done
    ws = Workspace(w)
    prov = ws.prov
    assert ws.prov is prov and prov.engine is ws.engine
    target = w / "ingest" / "texts.bin"  # damaged without changing its size: only a checksum sees it
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    for own in (False, True):
        ws.verify = own
        assert all(s["state"] == "done" for s in pipeline.standing(ws, verify=False)), own
        ingest = pipeline.standing(ws, verify=True)[0]
        assert ingest["stage"] == "ingest" and ingest["state"] == "stale" and "damaged" in ingest["why"], own
        assert ws.verify is own
    assert [s["state"] for s in pipeline.status(w, verify=True)][0] == "stale"
    assert all(s["state"] == "done" for s in pipeline.status(w))
    ws.reset()  # disposes the engine: the next Provenance is the new engine's
    assert ws.prov is not prov and ws.prov.engine is ws.engine and ws.prov is ws.prov


def test_standing_of_some_stages_is_what_the_whole_standing_says_of_them(done):
    """standing(ws, of=...) (what a stage command and a sweep ask) gives those stages and the
    ones they depend on exactly as the whole standing does, current or stale."""
    from sadedup import graph, pipeline
    from sadedup.workspace import Workspace

    w, _ = done
    ws = Workspace(w)
    names = [n.name for n in graph.plan(ws.workflow)]
    target = w / "ingest" / "texts.bin"  # damaged without changing its size: only a checksum sees it
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    for verify in (False, True):   # all done; then ingest stale, and every stage after it
        whole = pipeline.standing(ws, verify=verify)
        assert [s["stage"] for s in whole] == names
        assert {s["state"] for s in whole} == ({"stale"} if verify else {"done"})
        for name in names:
            wanted = {name, *graph.before(name, ws.workflow)}
            assert pipeline.standing(ws, verify=verify, of=[name]) == [s for s in whole if s["stage"] in wanted]
        assert pipeline.standing(ws, verify=verify, of=["exact", "repeats"]) == \
            [s for s in whole if s["stage"] in {"exact", "repeats", *graph.before("repeats", ws.workflow)}]
        assert pipeline.standing(ws, of=[]) == []


def test_candidate_documents_are_the_documents_tables_in_any_batch(done, monkeypatch):
    """keep.candidate_documents reads doc_ids and n_chars a range at a time (group_concat):
    the same arrays as one plain query, whatever the batch."""
    import sqlite3

    import numpy as np

    from sadedup import graph, keep
    from sadedup.workspace import Workspace

    w, _ = done
    ws = Workspace(w, readonly=True)
    con = sqlite3.connect(w / "sadedup.db")
    con.execute("UPDATE documents SET status = 'dropped', reason = 'substring_coverage' WHERE doc_id % 7 = 3")
    con.commit()
    for batch in (1 << 20, 5, 1):
        monkeypatch.setattr(keep, "CANDIDATE_BATCH", batch)
        for n in graph.NODES:
            reasons = keep.later_reasons(n.name)
            want = con.execute(f"SELECT doc_id, n_chars FROM documents WHERE status = 'kept' OR reason IN "
                               f"({', '.join('?' * len(reasons))}) ORDER BY doc_id", reasons).fetchall()
            ids, chars = keep.candidate_documents(ws, n.name)
            assert ids.dtype == chars.dtype == np.int64 and list(zip(ids.tolist(), chars.tolist())) == want, n.name
    con.execute("DELETE FROM documents")
    con.commit()
    assert [len(a) for a in keep.candidate_documents(ws, "exact")] == [0, 0]
    con.close()


# ---- 6. the sample run: where the README says, ignored by git

def test_the_sample_run_writes_where_the_readme_says_and_git_ignores_it(sample_run):
    cwd, p = sample_run  # `sadedup run` in an empty folder (test_minhash reads the same run)
    assert sorted(x.name for x in cwd.iterdir()) == ["sadedup-sample-work", "sadedup-sample.jsonl.gz"]
    assert "sadedup-sample.jsonl.gz and sadedup-sample-work/ in the current folder" in p.stderr
    assert "output: sadedup-sample.jsonl.gz" in p.stdout
    readme = (REPO / "README.md").read_text()
    assert "`sadedup-sample.jsonl.gz`" in readme and "`sadedup-sample-work/`" in readme
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    for path in ("sadedup-sample.jsonl.gz", "sadedup-sample-work/sadedup.db", "tests/sadedup-sample-work/state.json"):
        r = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO)
        assert r.returncode == 0, f"git does not ignore {path}"


def test_a_pool_worker_imports_no_database_layer():
    """A spawned worker imports the main module again (sadedup.cli) and its tasks' modules; a
    run's workers each paid a second of CPU for SQLAlchemy and the API before their first task,
    which the incremental run's exact stage waited for. One process, as a worker starts."""
    stages = [f"sadedup.stages.{p.stem}" for p in (REPO / "sadedup" / "stages").glob("*.py") if p.stem != "__init__"]
    assert loaded_after("import importlib, sadedup.cli, sadedup.executor\n"
                        f"for m in {stages!r}: importlib.import_module(m)",
                        "sqlalchemy", "sadedup.api", "sadedup.pipeline", "sadedup.inspect") == []


def loaded_after(code: str, *modules: str) -> list[str]:
    """Which of `modules` a fresh interpreter has executed after running `code` (a module
    loaded lazily and not used yet does not count)."""
    probe = (f"import json, sys\n{code}\n"
             f"print(json.dumps(sorted(m for m in {modules!r} if m in sys.modules "
             "and type(sys.modules[m]).__name__ != '_LazyModule')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    return json.loads(out.stdout)


def test_the_command_line_is_built_without_the_database_layer():
    """typer reads every command's options whatever command runs (`--help`, a refusal, a stage
    command): building them imported SQLAlchemy through an option's list of choices, a third
    of a second of every invocation before it did anything."""
    assert loaded_after("import typer.main, sadedup.cli\ntyper.main.get_command(sadedup.cli.app)",
                        "sqlalchemy", "sadedup.inspect", "sadedup.api") == []


def test_a_command_parses_its_options_without_pydantic():
    """Typer 0.2x coerces every option value through pydantic adapters it builds on first use:
    importing pydantic and building them cost every command 0.44G instructions before it did
    anything. sadedup's options (text, lists, a parser's folder, a number, flags) are coerced
    without it (cli._PlainCoercion), to the values typer's own coercion gives."""
    argv = ["sadedup", "--quiet", "run", "--input", "a.jsonl", "-i", "b.jsonl", "--output", "o.jsonl", "--workdir",
            "file:///tmp/w", "--reference", "/tmp/r", "--set", "a.b=1", "--workers", "2", "--restart", "-m", "4GB"]
    code = ("import sys, typer.core, sadedup.cli as cli\n"
            "got = {}\n"
            "cli._Command.invoke = lambda self, ctx: got.update(ctx.params)\n"
            f"sys.argv = {argv!r}\n"
            "cli.main()\n"
            "print(repr(sorted(got.items())), file=sys.stderr)")
    assert loaded_after(code, "pydantic") == []
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}).stderr
    got = dict(eval(out, {"PosixPath": Path}))
    assert got["input"] == ["a.jsonl", "b.jsonl"] and got["output"] == "o.jsonl" and got["set"] == ["a.b=1"]
    assert got["workdir"] == Path("/tmp/w") and got["reference"] == [Path("/tmp/r")] and got["workers"] == 2
    assert got["restart"] is True and got["memory_budget"] == "4GB" and got["workflow"] is None


def test_every_public_name_resolves():
    """The package's names load on first use (sadedup/__init__.py): each one listed resolves to
    the object its module defines, and an unknown one is an AttributeError."""
    import importlib

    for name in sadedup.__all__:
        value = getattr(sadedup, name)
        if name != "__version__":
            assert value is getattr(importlib.import_module(f"sadedup.{sadedup._FROM[name]}"), name)
    with pytest.raises(AttributeError):
        sadedup.no_such_name  # noqa: B018


def test_a_run_works_with_the_collector_on_and_its_imports_frozen(tmp_path):
    """The command's work runs with the garbage collector on and the imports' objects frozen
    out of its walks (sadedup/cli.py, _collect_after_imports), at most one full collection in
    a run; the option values still arrive: two inputs in order, the work folder, --workers,
    --memory-budget and --set as recorded."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl(a, ["one two three"])
    write_jsonl(b, ["four five six"])
    code = ("import sys; from sadedup.cli import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "import gc\n"
            "print(gc.isenabled(), gc.get_freeze_count() > 10_000, gc.get_stats()[2]['collections'] <= 1)")
    out = subprocess.run([sys.executable, "-c", code, "--quiet", "run", "--input", str(a), "--input", str(b), "--output",
                          str(tmp_path / "out.jsonl"), "--workdir", str(tmp_path / "w"), "--workers", "1",
                          "--memory-budget", "512MB", "--set", "stages=exact"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO), "CI": "1"}, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip().splitlines()[-1] == "True True True", \
        out.stdout + out.stderr
    assert [r["text"] for r in map(json.loads, (tmp_path / "out.jsonl").read_text().splitlines())] == \
        ["one two three", "four five six"]
    config_row = json.loads(db_rows(tmp_path / "w", "SELECT config FROM runs")[0][0])
    assert config_row["stages"] == ["exact"] and config_row["resolved"]["run.workers"] == 1
    assert config_row["resolved"]["run.memory_budget_bytes"] == 512_000_000
