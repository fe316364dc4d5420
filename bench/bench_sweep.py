"""A sweep (substring lengths or MinHash thresholds) vs one rerun at one value (issue 15), alternated.

The work folder W is a finished run (e.g. `sadedup run --input real60.jsonl --output o.jsonl
--workdir W --set stages=substring --workers 1 --executor inline`). Each round times, as child
processes (wall, and user + system CPU from getrusage): `sadedup sweep W --min-length LENGTHS`
for every tree given (name=PYTHONPATH, "" for the installed one, so a commit can be compared
with another), then a rerun: W copied (not timed) and `sadedup run --workdir COPY --set
substring.min_length=RERUN`, which redoes candidates, build, repeats, remove and export.

    python bench/bench_sweep.py W --lengths 200,300 --rerun 200 --trees now= --repeat 5

With --minhash-thresholds the sweep is `sadedup sweep W --minhash-threshold THRESHOLDS`
(its own `seconds.minhash_threshold` figure, and its `cpu_seconds`, are kept beside the
command's wall time), and the
rerun is `sadedup minhash COPY --set minhash.threshold=RERUN` (with --rerun-executor, e.g.
inline: no process pool to start inside the stage's timer), whose stage timers (`seconds`:
signatures, banding, verify, cluster, database, total; and `cpu_seconds`) are read from the
copy's database.
Only what the minhash stage reads is copied (ingest, exact, minhash, the database, state.json).

    python bench/bench_sweep.py W --minhash-thresholds 0.6,0.7,0.8,0.9,0.95 --rerun 0.7 \
        --rerun-executor inline --trees before=PIN,after= --repeat 5
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ONE = ["--workers", "1", "--executor", "inline"]


def timed(cmd: list[str], env: dict) -> tuple[dict, str]:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    # not in the caller's folder: `python -m` puts it first on sys.path, and run from a clone
    # every tree would import the clone's sadedup whatever its PYTHONPATH says
    p = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise SystemExit(p.stderr)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"wall": round(wall, 2), "cpu": round(cpu, 2), "load": round(load, 2)}, p.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workdir", type=Path)
    ap.add_argument("--lengths", default="200,300")
    ap.add_argument("--minhash-thresholds", default="", help="sweep these minhash thresholds instead of lengths")
    ap.add_argument("--rerun", default="200", help="the length (or threshold) of the rerun ('' for none)")
    ap.add_argument("--rerun-executor", default="", help="--executor of a minhash rerun ('' = the folder's)")
    ap.add_argument("--trees", default="now=", help="name=PYTHONPATH,... ('' = the installed sadedup)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    args.workdir = args.workdir.resolve()
    trees = dict(t.split("=", 1) for t in args.trees.split(","))
    setting, values = ("minhash_threshold", args.minhash_thresholds) if args.minhash_thresholds else \
        ("min_length", args.lengths)
    rows: list[dict] = []
    for rep in range(args.repeat):
        for name, pp in trees.items():
            env = {**os.environ, "CI": "1", **({"PYTHONPATH": pp} if pp else {})}
            m, out = timed([sys.executable, "-m", "sadedup.cli", "sweep", str(args.workdir),
                            "--" + setting.replace("_", "-"), values, "--format", "json", *ONE], env)
            got = json.loads(out)
            ans = {r["value"]: {k: r.get(k) for k in ("kept", "dropped", "removed_chars", "clusters")}
                   for r in got[setting]}
            own_cpu = got.get("cpu_seconds", {}).get(setting)   # sweeps before 2026-12-01 kept none
            rows.append({"what": f"sweep {values} ({name})", "rep": rep, **m, "own": got["seconds"][setting],
                         **({"own_cpu": round(sum(own_cpu.values()), 3)} if own_cpu else {}), "answers": ans})
            print(json.dumps(rows[-1]), flush=True)
        if args.rerun:
            copy = args.workdir.with_name(args.workdir.name + "-rerun")
            shutil.rmtree(copy, ignore_errors=True)
            if setting == "min_length":
                shutil.copytree(args.workdir, copy)
                m, _ = timed([sys.executable, "-m", "sadedup.cli", "run", "--workdir", str(copy), "--set",
                              f"substring.min_length={args.rerun}", *ONE], {**os.environ, "CI": "1"})
                rows.append({"what": f"rerun at {args.rerun}", "rep": rep, **m})
            else:
                copy.mkdir()
                for part in ("ingest", "exact", "minhash", "sadedup.db", "state.json"):
                    if (args.workdir / part).is_dir():
                        shutil.copytree(args.workdir / part, copy / part)
                    elif (args.workdir / part).exists():
                        shutil.copy2(args.workdir / part, copy / part)
                ex = ["--executor", args.rerun_executor] if args.rerun_executor else []
                m, _ = timed([sys.executable, "-m", "sadedup.cli", "minhash", str(copy), "--set",
                              f"minhash.threshold={args.rerun}", *ex], {**os.environ, "CI": "1"})
                from sadedup.workspace import Workspace

                ws = Workspace(copy, readonly=True)
                d = ws.stage_detail("minhash")
                ws.engine.dispose()
                rows.append({"what": f"minhash rerun at {args.rerun}", "rep": rep, **m, "own": d["seconds"]["total"],
                             "own_cpu": round(sum(d["cpu_seconds"].values()), 3), "parts": d["seconds"],
                             "answers": {"dropped": d["dropped"], "clusters": d["clusters"]}})
            print(json.dumps(rows[-1]), flush=True)
    for what in dict.fromkeys(r["what"] for r in rows):
        got = [r for r in rows if r["what"] == what]
        own = [r["own"] for r in got if "own" in r]
        own_cpu = [r["own_cpu"] for r in got if "own_cpu" in r]
        print(f"{what}: median wall {statistics.median(r['wall'] for r in got)} s, "
              f"CPU {statistics.median(r['cpu'] for r in got)} s"
              + (f", its own timer {statistics.median(own)} s" if own else "")
              + (f" (CPU {statistics.median(own_cpu)} s)" if own_cpu else ""))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
