"""Alternated before/after runs of one sadedup command on several source trees, with medians,
stage times and a byte-for-byte check of what they made.

    python bench/bench_ab.py --tree before=/work/ext/base --tree after=/work/ext/pin-X \\
        --input crawl60.jsonl --scratch /work/ext/bench/ab --repeat 3 \\
        --set stages=substring --set substring.keep=none --set substring.drop_fraction=1.0 \\
        --set substring.min_length=100

Each tree is a checkout with its native module built in place (`git worktree add` or `git
archive C | tar -x`, then `python setup.py build_ext --inplace`); it runs as
``PYTHONPATH=TREE python -m sadedup.cli -q run TREE/workflows/default.toml --input ... --output
... --workdir ... --workers N --set ...`` in TREE (`python -m` puts the working directory
ahead of PYTHONPATH), from an empty work folder, the trees taking turns
(before, after, after, before, ... so neither always runs first on a warm cache). Before each
run the page cache's dirty pages are flushed (`sync`) and the script waits up to --quiet-wait
seconds for the 1-minute load to fall under --quiet-load: the machine is shared, so compare
the medians of one invocation, not seconds across invocations.

Reported per tree: wall seconds of every run and their median, CPU seconds (the children's
user + system), and the median of each stage's own timer (`stages.detail.seconds`). Checked
after every run: the output file and the database's `documents` and `spans` rows (the
columns README.md lists, in key order) hash the same for every tree and every run; a
difference stops the script.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path


def wait_quiet(limit: float, load: float) -> None:
    t0 = time.time()
    while time.time() - t0 < limit and os.getloadavg()[0] > load:
        time.sleep(2)


# The columns README.md makes a contract of (a newer tree may add columns of its own).
DOC_COLUMNS = ("doc_id, source, source_row, ext_id, n_chars, n_bytes, n_tokens, status, reason, removed_tokens, "
               "coverage, removed_chars")
SPAN_COLUMNS = ("span_id, method, doc_id, tok_start, tok_end, char_start, char_end, src_doc_id, src_tok_start, "
                "src_char_start, src_char_end")


def digest_db(db: Path) -> str:
    """The documents and spans rows (the contract's columns), in key order."""
    h = hashlib.sha256()
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        for table, cols, key in (("documents", DOC_COLUMNS, "doc_id"), ("spans", SPAN_COLUMNS, "doc_id, tok_start")):
            for row in con.execute(f"SELECT {cols} FROM {table} ORDER BY {key}"):
                h.update(repr(row).encode())
    finally:
        con.close()
    return h.hexdigest()[:16]


def digest_file(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()[:16]


def stage_seconds(db: Path) -> dict[str, float]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out = {}
        for stage, detail in con.execute("SELECT stage, detail FROM stages WHERE shard = -1"):
            d = json.loads(detail or "{}")
            if "seconds" in d:  # minhash times its steps: a dict with their total
                s = d["seconds"]
                out[stage] = float(s["total"] if isinstance(s, dict) else s)
            for k, v in d.items():  # sub-steps timed inside a stage (windows_seconds, ...)
                if k.endswith("_seconds") and isinstance(v, (int, float)):
                    out[f"{stage}.{k[:-8]}"] = float(v)
        for stage, detail in con.execute("SELECT stage, detail FROM stages WHERE stage = 'build' AND shard >= 0"):
            d = json.loads(detail or "{}")
            for k in ("sa_seconds", "lcp_seconds"):
                if k in d:
                    out[f"build.{k[:-8]} (sum)"] = out.get(f"build.{k[:-8]} (sum)", 0.0) + float(d[k])
        return out
    finally:
        con.close()


def run_once(tree: Path, a, work: Path, out: Path) -> dict:
    shutil.rmtree(work, ignore_errors=True)
    out.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "sadedup.cli", "-q", "run", str(tree / "workflows" / "default.toml"),
           "--input", str(a.input.resolve()), "--output", str(out.resolve()), "--workdir", str(work.resolve()),
           "--workers", str(a.workers)]
    for kv in a.set:
        cmd += ["--set", kv]
    env = dict(os.environ, PYTHONPATH=str(tree))
    subprocess.run(["sync"], check=False)
    wait_quiet(a.quiet_wait, a.quiet_load)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # run from the tree: `python -m` puts the working directory ahead of PYTHONPATH, so from a
    # checkout every tree ran that checkout's sadedup
    p = subprocess.run(cmd, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise SystemExit(f"{tree}: exit {p.returncode}: {p.stderr[-2000:]}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"wall": round(wall, 3), "cpu": round(cpu, 3), "stages": stage_seconds(work / "sadedup.db"),
            "output": digest_file(out), "db": digest_db(work / "sadedup.db"),
            "load": round(os.getloadavg()[0], 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--tree", action="append", required=True, metavar="NAME=PATH")
    ap.add_argument("--input", type=Path, required=True)
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    ap.add_argument("--scratch", type=Path, required=True, help="work folders and outputs (removed after)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--quiet-wait", type=float, default=30)
    ap.add_argument("--quiet-load", type=float, default=0.8)
    ap.add_argument("--keep", action="store_true", help="keep the last work folder of each tree")
    ap.add_argument("--json", type=Path, help="also write every run as JSON here")
    a = ap.parse_args(argv)
    trees = []
    for t in a.tree:
        name, _, path = t.partition("=")
        trees.append((name, Path(path).resolve()))
    a.input = a.input.resolve()
    a.scratch.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[dict]] = {n: [] for n, _ in trees}
    ref = None
    for rep in range(a.repeat):
        order = trees if rep % 2 == 0 else trees[::-1]
        for name, tree in order:
            work, out = a.scratch / f"w-{name}", a.scratch / f"out-{name}{''.join(a.input.suffixes)}"
            m = run_once(tree, a, work, out)
            runs[name].append(m)
            print(f"rep {rep + 1} {name}: {m['wall']:.2f} s wall, {m['cpu']:.2f} s CPU, load {m['load']}; "
                  + ", ".join(f"{k} {v:.2f}" for k, v in m["stages"].items() if "." not in k), flush=True)
            if ref is None:
                ref = (m["output"], m["db"])
            elif (m["output"], m["db"]) != ref:
                raise SystemExit(f"{name} rep {rep + 1}: output or database differs ({m['output']}, {m['db']} "
                                 f"vs {ref[0]}, {ref[1]})")
            if not (a.keep and rep == a.repeat - 1):
                shutil.rmtree(work, ignore_errors=True)
            out.unlink(missing_ok=True)
    print(f"\noutputs and databases identical across trees and runs (output {ref[0]}, db {ref[1]})")
    med = {}
    for name, _ in trees:
        rs = runs[name]
        med[name] = {"wall": statistics.median(r["wall"] for r in rs), "cpu": statistics.median(r["cpu"] for r in rs)}
        keys = sorted({k for r in rs for k in r["stages"]})
        med[name]["stages"] = {k: statistics.median(r["stages"].get(k, 0.0) for r in rs) for k in keys}
        walls = ", ".join(f"{r['wall']:.2f}" for r in rs)
        print(f"{name}: wall {walls} (median {med[name]['wall']:.2f}), CPU median {med[name]['cpu']:.2f}")
        print("   stages (median s): " + ", ".join(f"{k} {v:.2f}" for k, v in med[name]["stages"].items()))
    if len(trees) > 1:
        b = trees[0][0]
        for name, _ in trees[1:]:
            print(f"{b} / {name}: wall {med[b]['wall'] / med[name]['wall']:.2f}x")
    if a.json:
        a.json.write_text(json.dumps({"argv": argv or sys.argv[1:], "runs": runs, "medians": med}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
