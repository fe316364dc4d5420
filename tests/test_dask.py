"""The Dask executor on a LocalCluster bound to 127.0.0.1: the same output and database as
the local pool, tasks seen by the scheduler, a killed worker changing nothing but time, and
one clear line for what cannot work."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from corpus import planted_corpus
from helpers import db_rows
from tokenizer_fixtures import hf_byte_bpe

distributed = pytest.importorskip("distributed")

SMALL = ["--set", "substring.min_length=20", "--set", "substring.shard_tokens=4000"]


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0",
                     silence_logs=40)
    client = Client(c.scheduler_address, set_as_default=False)
    client.get_task_stream()  # the scheduler records its task stream from now on
    yield c.scheduler_address, client
    client.close()
    c.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("dask")
    path = d / "in.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i, t in enumerate(planted_corpus(random.Random(11), 300, 400)):
            f.write(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n")
        f.write("{not json\n")
    return path


def dump(w: Path) -> list:
    return [db_rows(w, q) for q in (
        "SELECT doc_id, source_row, status, reason, n_tokens, removed_tokens, removed_chars FROM documents ORDER BY 1",
        "SELECT * FROM spans ORDER BY span_id", "SELECT * FROM clusters ORDER BY cluster_id",
        "SELECT * FROM cluster_members ORDER BY cluster_id, doc_id", "SELECT source_row, error FROM input_errors")]


def on_dask(address: str) -> list[str]:
    return ["--set", "run.executor=dask", "--set", f"run.scheduler={address}"]


def sadedup_run(d: Path, corpus: Path, *args: str) -> None:
    p = subprocess.run([sys.executable, "-m", "sadedup.cli", "run", "--input", str(corpus), *SMALL, "--workers", "2",
                        "--output", str(d / "out.jsonl"), "--workdir", str(d / "w"), *args],
                       check=False, capture_output=True, text=True, cwd=d, env={**os.environ, "CI": "1"})
    assert p.returncode == 0, p.stderr


@pytest.fixture(scope="module")
def local_run(corpus, tmp_path_factory) -> tuple[bytes, list, Path]:
    """The output, database and work folder of the local pool (SMALL, two workers) that the
    Dask runs with the bytes tokenizer must equal: made once, by the command, for the tests
    that compare."""
    d = tmp_path_factory.mktemp("local")
    sadedup_run(d, corpus)
    return (d / "out.jsonl").read_bytes(), dump(d / "w"), d / "w"


@pytest.fixture(scope="module")
def dask_run(cluster, corpus, tmp_path_factory) -> tuple[bytes, list, Path, dict[str, int]]:
    """The same run on the LocalCluster (made once): output, database, work folder, and the
    tasks the scheduler's task stream shows it ran, by type."""
    address, client = cluster
    d = tmp_path_factory.mktemp("dask")
    since = time.time()
    sadedup_run(d, corpus, *on_dask(address))
    return (d / "out.jsonl").read_bytes(), dump(d / "w"), d / "w", sadedup_tasks(client, since)


def sadedup_tasks(client, since: float) -> dict[str, int]:
    """Tasks of sadedup's that the scheduler's task stream shows ran since `since`, by type."""
    out: dict[str, int] = {}
    for t in client.get_task_stream(start=since):
        name = str(t["key"]).split("-")
        if name[0] == "sadedup":
            out[name[1]] = out.get(name[1], 0) + 1
    return out


@pytest.mark.parametrize("variant", ["bytes", "hf", "keep-none"])
def test_dask_gives_the_local_pools_output_and_database(request, cli, cluster, corpus, local_run, tmp_path,
                                                        variant):
    address, client = cluster
    if variant == "bytes":  # the runs the killed-worker and moved-bytes tests compare with too
        local, local_dump, _ = local_run
        out, out_dump, wd, ran = request.getfixturevalue("dask_run")
    else:
        extra = ["--set", "substring.keep=none"] if variant == "keep-none" else \
            ["--set", f"substring.tokenizer=hf:{hf_byte_bpe(tmp_path / 'bpe.json')}", "--set", "substring.min_length=8"]
        cli("run", "--input", corpus, "--output", tmp_path / "local.jsonl", "--workdir", tmp_path / "wl", *SMALL,
            *extra, "--workers", "2")
        local, local_dump = (tmp_path / "local.jsonl").read_bytes(), dump(tmp_path / "wl")
        since = time.time()
        cli("run", "--input", corpus, "--output", tmp_path / "dask.jsonl", "--workdir", tmp_path / "wd", *SMALL,
            *extra, "--workers", "2", *on_dask(address))
        out, out_dump, wd, ran = (tmp_path / "dask.jsonl").read_bytes(), dump(tmp_path / "wd"), tmp_path / "wd", \
            sadedup_tasks(client, since)
    assert out == local
    assert out_dump == local_dump
    shards = db_rows(wd, "SELECT count(*) FROM stages WHERE stage = 'build' AND shard >= 0")[0][0]
    assert shards >= 4 and all(ran.get(t, 0) == shards for t in ("AnchorShard", "CandidateShard", "BuildShard",
                                                                  "WindowsShard", "ScatterShard")), ran
    assert ran.get("IngestPiece") and ran.get("SignatureChunk") and ran.get("ExportPart"), ran
    # the cross-shard phases of exact and minhash: grouping by hash range, verification per partition
    assert ran.get("GroupRange") and ran.get("BandPairs") and ran.get("VerifyPart"), ran
    tokenized = db_rows(wd, "SELECT count(*) FROM stages WHERE stage = 'tokenize' AND shard >= 0")[0][0]
    assert ran.get("WriteShard") == tokenized and bool(ran.get("EncodePiece")) == (variant == "hf"), ran
    # the remove passes: the ordered keep-first walk as one task, keep="none" a select per shard
    select = {"FirstTwo": 1, "SelectNone": shards} if variant == "keep-none" else {"SelectFirst": 1}
    assert all(ran.get(t) == n for t, n in select.items()) and ran.get("SpanChars"), ran
    assert db_rows(wd, "SELECT count(*) FROM spans")[0][0] > 0


def test_a_killed_worker_changes_nothing_but_time(cluster, corpus, local_run, tmp_path):
    address, client = cluster
    env = {**os.environ, "CI": "1"}
    base = [sys.executable, "-m", "sadedup.cli", "run", "--input", str(corpus), *SMALL, "--workers", "2"]
    local, local_dump, _ = local_run
    client.run(os.environ.__setitem__, "SADEDUP_SLOW_TASKS", "0.2")  # a task is surely running when we kill
    p = subprocess.Popen([*base, "--output", str(tmp_path / "dask.jsonl"), "--workdir", str(tmp_path / "wd"),
                          *on_dask(address)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 60
    while time.time() < deadline and not list((tmp_path / "wd").glob("substring/*/L20")):
        time.sleep(0.05)
    pids = client.run(os.getpid)
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert (tmp_path / "dask.jsonl").read_bytes() == local
    assert dump(tmp_path / "wd") == local_dump
    client.wait_for_workers(2, timeout=60)
    client.run(os.environ.pop, "SADEDUP_SLOW_TASKS", None)


STAGES = ["ingest", "exact", "minhash", "tokenize", "candidates", "build", "repeats", "remove", "export"]


def moved_bytes(w: Path) -> dict[str, dict[str, int] | None]:
    """Each stage's moved_bytes, as its detail records it."""
    return {s: json.loads(d).get("moved_bytes") for s, d in db_rows(w, "SELECT stage, detail FROM stages WHERE shard = -1")
            if s in STAGES}


def test_bytes_moved_between_tasks_are_counted_per_stage_and_equal_on_dask(local_run, dask_run):
    """Each stage's detail counts the bytes its tasks (by type) and the driver wrote for
    others to read, from what each task says it wrote: the same on the local pool and on
    Dask, and what the work folder holds."""
    w = local_run[2]
    moved = moved_bytes(w)
    assert moved == moved_bytes(dask_run[2])
    assert sorted(moved) == sorted(STAGES) and None not in moved.values(), moved
    writers = {"ingest": {"IngestPiece", "driver"}, "exact": {"HashChunk", "GroupRange", "driver"},
               "minhash": {"SignatureChunk", "BandPairs", "VerifyPart", "driver"}, "tokenize": {"WriteShard", "driver"},
               "candidates": {"AnchorShard", "RepeatedRange", "CandidateShard", "driver"}, "build": {"BuildShard"},
               "repeats": {"WindowsShard", "MergePart", "JoinShard", "ScatterShard"}, "remove": {"SelectFirst", "SpanChars", "driver"},
               "export": {"ExportPart", "driver"}}
    for stage in STAGES:
        assert set(moved[stage]) <= writers[stage] and all(n > 0 for n in moved[stage].values()), (stage, moved)
    assert {"IngestPiece", "HashChunk", "GroupRange", "SignatureChunk", "BandPairs", "VerifyPart", "CandidateShard",
            "MergePart", "ExportPart"} <= \
        {t for m in moved.values() for t in m}
    # the files they say they wrote, as the work folder holds them (a stat each)
    def size(*patterns: str) -> int:
        return sum(p.stat().st_size for pattern in patterns for p in w.glob(pattern))

    assert moved["build"]["BuildShard"] == size("substring/*/L20/shard_*/sa.npy", "substring/*/L20/shard_*/lcp.npy")
    assert moved["tokenize"]["WriteShard"] == size("substring/*/shard_*/*.npy")
    assert moved["export"]["ExportPart"] == len(local_run[0])


def test_an_unreachable_scheduler_is_one_line_before_any_work(cli, corpus, tmp_path):
    p = cli("run", "--input", corpus, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w",
            *on_dask("tcp://127.0.0.1:9"), check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("sadedup: error: dask scheduler tcp://127.0.0.1:9 is not reachable"), p.stderr
    assert not (tmp_path / "w" / "ingest").exists()


def test_workers_that_cannot_use_the_work_folder_are_named(cluster, tmp_path):
    from sadedup.errors import SadedupError
    from sadedup.executor import DaskExecutor

    address, _ = cluster
    ex = DaskExecutor(2, address)
    try:
        (tmp_path / "w").mkdir()
        with pytest.raises(SadedupError, match=r"dask worker tcp://127\.0\.0\.1:\d+ cannot use the work folder .*"
                                               r"no .*\.sadedup-workdir there"):
            ex.check_workdir(str(tmp_path / "w"))
        (tmp_path / "w" / ".sadedup-workdir").write_text("{}")
        ex.check_workdir(str(tmp_path / "w"))
    finally:
        ex.close()


def test_without_distributed_it_says_how_to_install_it(corpus, tmp_path):
    code = ("import sys; sys.modules['distributed'] = None; from sadedup.cli import main; "
            f"sys.argv = ['sadedup', 'run', '--input', {str(corpus)!r}, '--output', {str(tmp_path / 'o.jsonl')!r}, "
            f"'--workdir', {str(tmp_path / 'w')!r}, '--set', 'run.executor=dask', '--set', "
            f"'run.scheduler=tcp://127.0.0.1:9']; main()")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines()[-1] == ("sadedup: error: the dask executor needs Dask distributed: "
                                                 "pip install 'sadedup[dask]'")
