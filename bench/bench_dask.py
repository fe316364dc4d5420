"""The default workflow on a 2-worker Dask LocalCluster against the local process pool (issue 13):
same corpus, same session, alternated, with medians, a byte-for-byte check of the outputs and
databases, peak memory, and the bytes moved between tasks per stage per GB of text.

    python bench/bench_dask.py --size 50MB --repeat 2                 # a look, ~2 min
    python bench/bench_dask.py --size 1GB --kind crawl --repeat 2 --json /work/ext/bench/dask-crawl/1g.json

The corpus is real text from this machine's files, made once by bench/corpora.py (`--kind crawl`
or `real`, `--size`, `--seed`) and kept in `--folder`. The script starts a LocalCluster itself:
`--workers` worker processes of one thread each, scheduler and workers bound to 127.0.0.1, no
dashboard. Then, per repeat, one run of each executor, taking turns (local, dask, then dask,
local, ...: neither always runs first on a warm page cache):

    python -m sadedup.cli -q run --input CORPUS --output FOLDER/out.jsonl --workdir FOLDER/work \\
        --workers N [--executor dask --set run.scheduler=tcp://127.0.0.1:PORT] [--set ...]

the real CLI with the default workflow (exact, minhash, substring), from a new, empty work folder
each time (the same path and output path for both executors, so the stage keys, which hold the
output path, compare). Before a Dask run the cluster's workers are restarted (Client.restart,
not timed): they start cold, as the local pool's processes do in every run. Before every run
dirty pages are flushed (`sync`) and the script waits up to --quiet-wait seconds for the
1-minute load average to fall under --quiet-load; the load at the start and end of each run is
reported (the machine is shared: compare the medians and the ratio of one invocation).

Measured per run: wall seconds of the command; CPU seconds of the command and its children
(the local pool), plus, for Dask, the workers' own CPU (their getrusage before and after) and
this process's (the scheduler runs in its event loop); each stage's own timer and its detail's
peak_memory_of (driver, busiest worker) and moved_bytes (the bytes each task type, and the
driver, wrote to the work folder for other tasks to read: executor.tally).

Checked after every run against the first: the output file (sha256); the database: every row of
documents, spans, clusters, cluster_members and input_errors, and of the stages table stage,
shard, status, key, artifact, size and checksum (every artifact's size and checksum); and the
moved_bytes of every stage. A difference stops the script.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TABLES = ("documents", "spans", "clusters", "cluster_members", "input_errors")
STAGE_COLUMNS = "stage, shard, status, key, artifact, size, checksum"


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def wait_quiet(limit: float, load: float) -> None:
    t0 = time.time()
    while time.time() - t0 < limit and os.getloadavg()[0] > load:
        time.sleep(2)


def digest_file(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()[:16]


def digest_db(db: Path) -> str:
    """The decision tables' rows and the stages' keys and artifacts (see the docstring)."""
    h = hashlib.sha256()
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        for table in TABLES:
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
            h.update(f"{table}:{cols}".encode())
            for row in con.execute(f"SELECT * FROM {table} ORDER BY {', '.join(map(str, range(1, len(cols) + 1)))}"):
                h.update(repr(row).encode())
        for row in con.execute(f"SELECT {STAGE_COLUMNS} FROM stages ORDER BY stage, shard"):
            h.update(repr(row).encode())
    finally:
        con.close()
    return h.hexdigest()[:16]


def stage_facts(db: Path) -> dict:
    """Per stage (in run order): its seconds, peak_memory_of, moved_bytes and cpu_seconds (of the
    driver, and of the tasks wherever they ran); the text's bytes."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT stage, detail FROM stages WHERE shard = -1 ORDER BY rowid").fetchall()
    finally:
        con.close()
    out: dict = {"seconds": {}, "peak": {}, "moved": {}, "stage_cpu": {}, "text_bytes": 0}
    for stage, detail in rows:
        d = json.loads(detail or "{}")
        if "moved_bytes" not in d:  # a record of a stage's part (anchors, merge, ...), not a stage
            continue
        s = d.get("seconds")
        out["seconds"][stage] = float(s["total"] if isinstance(s, dict) else s)
        out["peak"][stage] = d.get("peak_memory_of", {})
        out["moved"][stage] = d["moved_bytes"]
        out["stage_cpu"][stage] = d.get("cpu_seconds", {})
        if stage == "ingest":
            out["text_bytes"] = int(d.get("bytes", 0))
    return out


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_once(kind: str, a, corpus: Path, client, address: str) -> dict:
    work, out = a.folder / "work", a.folder / "out.jsonl"
    shutil.rmtree(work, ignore_errors=True)
    out.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "sadedup.cli", "-q", "run", "--input", str(corpus), "--output", str(out),
           "--workdir", str(work), "--workers", str(a.workers)]
    if kind == "dask":
        cmd += ["--executor", "dask", "--set", f"run.scheduler={address}"]
        client.restart()
    for kv in a.set:
        cmd += ["--set", kv]
    subprocess.run(["sync"], check=False)
    wait_quiet(a.quiet_wait, a.quiet_load)
    load0 = os.getloadavg()
    w0 = sum(client.run(_cpu).values()) if kind == "dask" else 0.0
    c0, s0 = resource.getrusage(resource.RUSAGE_CHILDREN), _cpu()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])})
    wall = time.perf_counter() - t0
    c1, s1 = resource.getrusage(resource.RUSAGE_CHILDREN), _cpu()
    load1 = os.getloadavg()
    if p.returncode:
        raise SystemExit(f"{kind}: exit {p.returncode}: {p.stderr[-3000:]}")
    cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
    if kind == "dask":  # the workers' CPU, and the scheduler's (this process's event loop)
        cpu += sum(client.run(_cpu).values()) - w0 + (s1 - s0)
    m = {"kind": kind, "wall": round(wall, 3), "cpu": round(cpu, 3), "load": [round(load0[0], 2), round(load1[0], 2)],
         **stage_facts(work / "sadedup.db"), "output": digest_file(out), "db": digest_db(work / "sadedup.db"),
         "output_bytes": out.stat().st_size}
    shutil.rmtree(work, ignore_errors=True)
    out.unlink(missing_ok=True)
    return m


def med(xs) -> float:
    return statistics.median(list(xs))


def report(runs: dict[str, list[dict]]) -> list[str]:
    """The results as markdown lines: times, per-stage times and memory, bytes moved per GB."""
    local, dask = runs["local"], runs["dask"]
    stages = list(local[0]["seconds"])
    lines = ["| executor | wall s (runs) | median wall s | median CPU s | load at start / end |",
             "| --- | --- | ---: | ---: | --- |"]
    for kind, rs in runs.items():
        walls = ", ".join(f"{r['wall']:.1f}" for r in rs)
        loads = ", ".join(f"{r['load'][0]}/{r['load'][1]}" for r in rs)
        lines.append(f"| {kind} | {walls} | {med(r['wall'] for r in rs):.1f} | {med(r['cpu'] for r in rs):.1f} | "
                     f"{loads} |")
    ratio = med(r["wall"] for r in dask) / med(r["wall"] for r in local)
    cpu_ratio = med(r["cpu"] for r in dask) / med(r["cpu"] for r in local)
    lines += ["", f"dask / local, median wall: **{ratio:.3f}x**; median CPU: {cpu_ratio:.3f}x", ""]
    lines += [("| stage | local s | dask s | dask / local | CPU s local: driver / tasks | dask: driver / tasks "
              "| peak MB local: driver / worker | dask: driver / worker |"),
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]

    def peak(rs, s, who):
        return med(r["peak"][s].get(who, 0) for r in rs) / 1e6

    def cpu(rs, s, who):
        return med(r["stage_cpu"][s].get(who, 0) for r in rs)

    for s in stages:
        ls, ds = med(r["seconds"][s] for r in local), med(r["seconds"][s] for r in dask)
        lines.append(f"| {s} | {ls:.1f} | {ds:.1f} | {ds / max(ls, 1e-9):.2f} | {cpu(local, s, 'driver'):.1f} / "
                     f"{cpu(local, s, 'tasks'):.1f} | {cpu(dask, s, 'driver'):.1f} / {cpu(dask, s, 'tasks'):.1f} | "
                     f"{peak(local, s, 'driver'):,.0f} / {peak(local, s, 'worker'):,.0f} | "
                     f"{peak(dask, s, 'driver'):,.0f} / {peak(dask, s, 'worker'):,.0f} |")
    text = local[0]["text_bytes"]
    gb = max(text, 1) / 1e9
    lines += ["", f"bytes moved between tasks ({text:,} bytes of text ingested; the same in every run):", "",
              "| stage | written by | bytes | MB per GB of text |", "| --- | --- | ---: | ---: |"]
    total = driver = 0
    for s, parts in local[0]["moved"].items():
        for who, n in parts.items():
            lines.append(f"| {s} | {who} | {n:,} | {n / 1e6 / gb:,.0f} |")
            total += n
            driver += n if who == "driver" else 0
        if not parts:
            lines.append(f"| {s} | (nothing) | 0 | 0 |")
    lines.append(f"| **all** | | **{total:,}** | **{total / 1e6 / gb:,.0f}** |")
    lines.append(f"| of which the driver | | {driver:,} | {driver / 1e6 / gb:,.0f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--size", default="1GB")
    ap.add_argument("--kind", default="crawl", choices=("crawl", "real"))
    ap.add_argument("--seed", default="0")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each executor")
    ap.add_argument("--workers", type=int, default=2, help="local pool processes, and Dask worker processes")
    ap.add_argument("--folder", type=Path, default=Path("/work/ext/bench/dask-crawl"),
                    help="the corpus (kept), and the work folder and output of the runs (removed after each)")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="for every run")
    ap.add_argument("--first", choices=("local", "dask"), default="local", help="the executor of the first run")
    ap.add_argument("--quiet-wait", type=float, default=30)
    ap.add_argument("--quiet-load", type=float, default=0.8)
    ap.add_argument("--json", type=Path, help="also write every run as JSON here")
    a = ap.parse_args(argv)
    a.folder.mkdir(parents=True, exist_ok=True)
    corpus = a.folder / f"{a.kind}{a.size}_{a.seed}.jsonl"
    if not corpus.exists():
        subprocess.run([sys.executable, str(REPO / "bench" / "corpora.py"), "--size", a.size, "--kind", a.kind,
                        "--seed", a.seed, "-o", str(corpus)], check=True)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])  # the workers too
    sys.path.insert(0, str(REPO))
    from distributed import Client, LocalCluster

    times = [uptime()]
    print(f"corpus {corpus} ({corpus.stat().st_size:,} bytes); {times[0]}", flush=True)
    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, silence_logs=logging.ERROR)
    client = Client(cluster.scheduler_address, set_as_default=False)
    started = time.perf_counter() - t0
    print(f"LocalCluster {cluster.scheduler_address}: {a.workers} workers x 1 thread, started in {started:.2f} s",
          flush=True)
    runs: dict[str, list[dict]] = {"local": [], "dask": []}
    first = None
    try:
        for rep in range(a.repeat):
            order = ("local", "dask") if a.first == "local" else ("dask", "local")
            for kind in order if rep % 2 == 0 else order[::-1]:
                m = run_once(kind, a, corpus, client, cluster.scheduler_address)
                runs[kind].append(m)
                print(f"rep {rep + 1} {kind}: {m['wall']:.2f} s wall, {m['cpu']:.2f} s CPU, load {m['load'][0]} -> "
                      f"{m['load'][1]}; " + ", ".join(f"{k} {v:.1f}" for k, v in m["seconds"].items()), flush=True)
                if first is None:
                    first = m
                elif (m["output"], m["db"]) != (first["output"], first["db"]):
                    raise SystemExit(f"{kind} rep {rep + 1}: output or database differs ({m['output']}, {m['db']} "
                                     f"vs {first['output']}, {first['db']})")
                elif m["moved"] != first["moved"]:
                    raise SystemExit(f"{kind} rep {rep + 1}: moved_bytes differ: {m['moved']} vs {first['moved']}")
    finally:
        client.close()
        cluster.close()
    times.append(uptime())
    print(f"\noutputs and databases identical in every run (output sha256 {first['output']}..., "
          f"{first['output_bytes']:,} bytes; db {first['db']}); {times[1]}\n")
    lines = report(runs)
    print("\n".join(lines))
    if a.json:
        a.json.write_text(json.dumps({"argv": argv or sys.argv[1:], "corpus": str(corpus), "uptime": times,
                                      "cluster_start_seconds": round(started, 3), "runs": runs, "report": lines},
                                     indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
