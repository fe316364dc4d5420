"""Incremental run against a reference vs one combined run (issue 14, item 3).

One corpus of real text (bench/corpora.py, `--kind crawl` or `real`) is cut by rows into an
old dump (the first 1 - `--new` of its documents) and a new one (the rest). The old dump is
run once (the reference, not timed in the ratio); then, alternated `--repeat` times on fresh
work folders, the new dump against the reference (`--reference`) and one run over both dumps
(the combined run). Every run is the real CLI with the default workflow (exact, minhash,
substring) and the same settings. Reported: wall and CPU seconds per run, their medians, the
ratio incremental / combined (issue 14's target: at most 0.3 for a 20% new dump), the stage
times, and a check that the new dump's decisions (status, reason, spans with their sources
and offsets) and output rows are those of the combined run.

    python bench/bench_reference.py --size 100MB --kind crawl --new 0.2 --repeat 2 --folder /tmp/bref
"""
from __future__ import annotations

import argparse
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

REPO = Path(__file__).resolve().parent.parent


def sh(*args: str | Path, env: dict | None = None) -> dict:
    """Runs one sadedup command; its wall and CPU seconds (the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "sadedup.cli", "-q", *map(str, args)], capture_output=True, text=True,
                       env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"sadedup {' '.join(map(str, args))} failed:\n{p.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": round(wall, 2), "cpu": round(cpu, 2), "load": round(os.getloadavg()[0], 1)}


def split(corpus: Path, new: float, old_path: Path, new_path: Path) -> tuple[int, int, int, int]:
    lines = corpus.read_bytes().splitlines(keepends=True)
    cut = int(round(len(lines) * (1 - new)))
    old_path.write_bytes(b"".join(lines[:cut]))
    new_path.write_bytes(b"".join(lines[cut:]))
    size = lambda ls: sum(len(json.loads(x)["text"].encode()) for x in ls)  # noqa: E731
    return cut, len(lines) - cut, size(lines[:cut]), size(lines[cut:])


def stage_seconds(workdir: Path) -> dict[str, float]:
    con = sqlite3.connect(f"file:{workdir / 'sadedup.db'}?mode=ro", uri=True)
    try:
        out = {}
        for stage, detail in con.execute("SELECT stage, detail FROM stages WHERE shard = -1"):
            s = json.loads(detail or "{}").get("seconds")
            out[stage] = round(s["total"] if isinstance(s, dict) else (s or 0.0), 2)
        return out
    finally:
        con.close()


def decisions(workdir: Path, first: int, n_old: int | None) -> tuple[list, list]:
    """The new dump's documents and spans, renumbered from 0, sources as (where, doc):
    "ref" for the old dump's documents (a reference's, or doc_id < n_old in a combined run)."""
    con = sqlite3.connect(f"file:{workdir / 'sadedup.db'}?mode=ro", uri=True)
    try:
        docs = con.execute("SELECT doc_id - ?, status, reason FROM documents WHERE doc_id >= ? ORDER BY doc_id",
                           (first, first)).fetchall()
        spans = []
        for d, m, ts, te, cs, ce, sd, st, scs, sce, ref in con.execute(
                "SELECT doc_id, method, tok_start, tok_end, char_start, char_end, src_doc_id, src_tok_start, "
                "src_char_start, src_char_end, src_ref FROM spans WHERE doc_id >= ? ORDER BY doc_id, tok_start",
                (first,)):
            where = ("ref", sd) if ref is not None or (n_old is not None and sd < n_old) else ("here", sd - first)
            spans.append((d - first, m, ts, te, cs, ce, where, st, scs, sce))
        return docs, spans
    finally:
        con.close()


def output_rows(path: Path, ids: set | None) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line for line in f if ids is None or json.loads(line)["id"] in ids]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="100MB")
    ap.add_argument("--kind", default="crawl", choices=("crawl", "real"))
    ap.add_argument("--seed", default="0")
    ap.add_argument("--new", type=float, default=0.2, help="share of the corpus's documents in the new dump")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--folder", type=Path, default=Path("/tmp/bench_reference"))
    ap.add_argument("--set", action="append", default=[], help="extra workflow keys, for every run")
    args = ap.parse_args()
    folder = args.folder
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / f"{args.kind}{args.size}_{args.seed}.jsonl"
    if not corpus.exists():
        subprocess.run([sys.executable, str(REPO / "bench" / "corpora.py"), "--size", args.size, "--kind", args.kind,
                        "--seed", args.seed, "-o", str(corpus)], check=True)
    old, new = folder / "old.jsonl", folder / "new.jsonl"
    n_old, n_new, b_old, b_new = split(corpus, args.new, old, new)
    print(f"corpus {corpus.name}: old dump {n_old} documents ({b_old / 1e6:.1f} MB of text), new dump {n_new} "
          f"({b_new / 1e6:.1f} MB, {b_new / (b_old + b_new):.1%} of the bytes)")
    sets = [x for s in [f"run.workers={args.workers}", *args.set] for x in ("--set", s)]
    ref = folder / "ref"
    shutil.rmtree(ref, ignore_errors=True)
    r = sh("run", "--input", old, "--output", folder / "ref.jsonl", "--workdir", ref, *sets)
    print(f"reference run (old dump): {r['wall']} s wall, {r['cpu']} s CPU, load {r['load']}")
    runs: dict[str, list[dict]] = {"incremental": [], "combined": []}
    for i in range(args.repeat):
        for name in ("incremental", "combined"):
            w = folder / name
            shutil.rmtree(w, ignore_errors=True)
            if name == "incremental":
                res = sh("run", "--input", new, "--output", folder / "inc.jsonl", "--workdir", w, "--reference", ref,
                         *sets)
            else:
                res = sh("run", "--input", old, "--input", new, "--output", folder / "comb.jsonl", "--workdir", w,
                         *sets)
            res["stages"] = stage_seconds(w)
            runs[name].append(res)
            print(f"  {name} #{i + 1}: {res['wall']} s wall, {res['cpu']} s CPU, load {res['load']}; "
                  + ", ".join(f"{k} {v}" for k, v in res["stages"].items()))
    med = {k: {m: statistics.median(x[m] for x in v) for m in ("wall", "cpu")} for k, v in runs.items()}
    print(f"median wall: incremental {med['incremental']['wall']} s, combined {med['combined']['wall']} s, ratio "
          f"{med['incremental']['wall'] / med['combined']['wall']:.3f}")
    print(f"median CPU:  incremental {med['incremental']['cpu']} s, combined {med['combined']['cpu']} s, ratio "
          f"{med['incremental']['cpu'] / med['combined']['cpu']:.3f}")
    got = decisions(folder / "incremental", 0, None)
    want = decisions(folder / "combined", n_old, n_old)
    same_docs, same_spans = got[0] == want[0], got[1] == want[1]
    ids = {json.loads(x)["id"] for x in new.read_text(encoding="utf-8").splitlines()}
    same_out = output_rows(folder / "inc.jsonl", None) == output_rows(folder / "comb.jsonl", ids)
    dropped = sum(1 for _, s, _ in got[0] if s == "dropped")
    print(f"new dump: {len(got[0])} documents, {dropped} dropped, {len(got[1])} spans "
          f"({sum(1 for s in got[1] if s[6][0] == 'ref')} with their source in the reference); equal to the combined "
          f"run's: documents {same_docs}, spans {same_spans}, output rows {same_out}")
    if not (same_docs and same_spans and same_out) and not any(x.startswith("stages=") and "minhash" not in x
                                                                for x in args.set):
        # the combined run's MinHash may cluster a reference document the reference run kept
        # with an earlier one (a new document bridging them) and drop it, which a reference
        # never is; the equality promised is for exact and substring decisions
        print("  (MinHash is in the workflow: a combined run may drop a document the reference kept; "
              "--set stages=exact,substring checks the equality the incremental run promises)")
    (folder / "result.json").write_text(json.dumps({"runs": runs, "median": med, "equal": [same_docs, same_spans,
                                                                                           same_out]}, indent=1))


if __name__ == "__main__":
    main()
