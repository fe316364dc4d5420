"""Near-duplicate detection, text to clusters: sadedup's MinHash stage against datasketch and rensa.

    pip install -e '.[bench]'
    python bench/bench_minhash.py                         # 100 MB corpus made on the spot, every method
    python bench/bench_minhash.py --size 20MB --only sadedup-exact,rensa-lsh
    python bench/bench_minhash.py --write                 # also rewrites the MinHash section of bench/RESULTS.md

The corpus (tests/nearcopies.py: English-like prose with near-copies planted at word-
substitution rates 0.5%, 2%, 5%, 10%, 20%, the exact word-5-gram Jaccard of every planted pair
as truth) is made once and cached next to --corpus. Every method runs in its own process,
single-threaded (RAYON_NUM_THREADS=1 and friends, `run.workers=1`), same settings: word
5-grams of the lower-cased text, 112 permutations, 14 bands x 8 rows, threshold 0.8, verified
candidates, union-find, the first document of a cluster kept.

The whole process is the same job for every method: the JSONL file in, the kept rows out as
a JSONL file (their lines as read, in input order), interpreter start and imports included.
The peers parse the rows with orjson, the parser sadedup uses (json when it is missing), and
their time ends when the output file is closed (the child says so on stdout; the clusters it
then writes for the accuracy check are not timed, nor is its exit). sadedup's is the command
from start to exit, and it also writes its database (documents, clusters, members, stage
records: work the peers do not do). CPU seconds are user + system of the process (for the
peers up to the same point). The sadedup package is byte-compiled first (`compileall`), as
an installed package is: with PYTHONDONTWRITEBYTECODE set, every run would otherwise compile
its sources again. Methods are run in turn, --repeat times (A B C A B C ...); the table gives
medians; each run writes its output and work folder afresh (the last run's are removed before
the timer starts). Peak memory is the process's maximum resident set (wait4). Accuracy, on
the same truth for all:

- recall: share of planted pairs with Jaccard >= 0.85 that end in one cluster,
- precision: share of the documents dropped as near-duplicates whose Jaccard with the
  document kept for their cluster is >= 0.7 (a union-find chain that drifts counts as an error).

Methods:

- sadedup-exact / sadedup-estimate: `sadedup run --set stages=minhash --set minhash.verify=...`
  (ingest, MinHash stage, database, export of the kept rows: the whole command);
- datasketch: MinHash (xxhash32 of each shingle, update_batch) + MinHashLSH(params=(14, 8)),
  candidates verified on the estimated Jaccard;
- rensa-lsh: RMinHash (update with the shingle list) + RMinHashLSH(num_bands=14), verified on
  the estimated Jaccard;
- rensa-bulk: the same with rensa's bulk calls (RMinHash.from_token_sets, insert_many,
  query_all), its fastest Python path;
- rensa-dedup: RMinHashDeduplicator(use_lsh=True, num_bands=14), streaming keep-first.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

NUM_PERM, BANDS, ROWS, NGRAM, THRESHOLD = 112, 14, 8, 5, 0.8
METHODS = ["sadedup-exact", "sadedup-estimate", "rensa-bulk", "rensa-lsh", "rensa-dedup", "datasketch"]
SINGLE = {"RAYON_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
          "NUMEXPR_NUM_THREADS": "1", "POLARS_MAX_THREADS": "1", "CI": "1"}


# ---- the baselines (run in a child process: `bench_minhash.py --worker METHOD CORPUS OUT`) -------

def _texts(corpus: Path) -> list[str]:
    with open(corpus, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def _rows(corpus: Path) -> tuple[list[bytes], list[str]]:
    """The lines of the JSONL file (to write the kept ones as they were) and their texts."""
    try:
        from orjson import loads
    except ImportError:
        loads = json.loads
    with open(corpus, "rb") as f:
        lines = f.readlines()
    return lines, [loads(line)["text"] for line in lines]


def _write_kept(lines: list[bytes], dropped: set[int], out: Path) -> None:
    with open(out, "wb", buffering=1 << 20) as f:
        f.writelines(line for i, line in enumerate(lines) if i not in dropped)


def _shingles(text: str) -> list[str]:
    w = text.lower().split()
    return [" ".join(w[i:i + NGRAM]) for i in range(len(w) - NGRAM + 1)]


class _UF:
    def __init__(self) -> None:
        self.p: dict[int, int] = {}

    def find(self, x: int) -> int:
        p = self.p
        while p.get(x, x) != x:
            p[x] = p.get(p[x], p[x])
            x = p[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        self.p.setdefault(ra, ra)
        self.p.setdefault(rb, rb)
        if ra != rb:
            self.p[max(ra, rb)] = min(ra, rb)

    def clusters(self) -> dict[int, int]:
        """doc -> root (the smallest doc of its cluster: keep first)."""
        return {x: self.find(x) for x in list(self.p)}


def _run_datasketch(texts: list[str]) -> dict[int, int]:
    import xxhash
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, params=(BANDS, ROWS))
    sigs = []
    for i, text in enumerate(texts):
        sh = _shingles(text)
        m = MinHash(num_perm=NUM_PERM, hashfunc=xxhash.xxh32_intdigest)
        m.update_batch([s.encode("utf-8") for s in sh])
        sigs.append(m if sh else None)
        if sh:
            lsh.insert(i, m)
    uf = _UF()
    for i, m in enumerate(sigs):
        if m is None:
            continue
        for j in lsh.query(m):
            if j != i and m.jaccard(sigs[j]) >= THRESHOLD:
                uf.union(i, j)
    return uf.clusters()


def _run_rensa_lsh(texts: list[str]) -> dict[int, int]:
    from rensa import RMinHash, RMinHashLSH

    lsh = RMinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, num_bands=BANDS)
    sigs = []
    for i, text in enumerate(texts):
        sh = _shingles(text)
        m = RMinHash(num_perm=NUM_PERM, seed=42)
        m.update(sh)
        sigs.append(m if sh else None)
        if sh:
            lsh.insert(i, m)
    uf = _UF()
    for i, m in enumerate(sigs):
        if m is None:
            continue
        for j in lsh.query(m):
            if j != i and m.jaccard(sigs[j]) >= THRESHOLD:
                uf.union(i, j)
    return uf.clusters()


def _run_rensa_bulk(texts: list[str]) -> dict[int, int]:
    from rensa import RMinHash, RMinHashLSH

    lsh = RMinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, num_bands=BANDS)
    sigs: list = []
    keys: list[int] = []
    batch: list[list[str]] = []
    bkeys: list[int] = []

    def flush() -> None:
        ms = RMinHash.from_token_sets(batch, NUM_PERM, 42)
        for k, m in zip(bkeys, ms):
            lsh.insert(k, m)
        sigs.extend(ms)
        keys.extend(bkeys)
        batch.clear()
        bkeys.clear()

    for i, text in enumerate(texts):
        sh = _shingles(text)
        if sh:
            batch.append(sh)
            bkeys.append(i)
        if len(batch) >= 2048:
            flush()
    if batch:
        flush()
    by_key = dict(zip(keys, sigs))
    uf = _UF()
    for i, cands in zip(keys, lsh.query_all(sigs)):
        m = by_key[i]
        for j in cands:
            if j != i and m.jaccard(by_key[j]) >= THRESHOLD:
                uf.union(i, j)
    return uf.clusters()


def _run_rensa_dedup(texts: list[str]) -> dict[int, int]:
    from rensa import RMinHash, RMinHashDeduplicator

    dd = RMinHashDeduplicator(threshold=THRESHOLD, num_perm=NUM_PERM, use_lsh=True, num_bands=BANDS)
    out: dict[int, int] = {}
    for i, text in enumerate(texts):
        sh = _shingles(text)
        if not sh:
            continue
        m = RMinHash(num_perm=NUM_PERM, seed=42)
        m.update(sh)
        dups = dd.get_duplicates(m)
        if dups:
            k = min(int(d) for d in dups)
            out[i] = k
            out.setdefault(k, k)
        else:
            dd.add(str(i), m)
    return out


WORKERS = {"datasketch": _run_datasketch, "rensa-lsh": _run_rensa_lsh, "rensa-bulk": _run_rensa_bulk,
           "rensa-dedup": _run_rensa_dedup}


def _worker(method: str, corpus: str, out: str, kept: str) -> None:
    t = time.perf_counter()
    lines, texts = _rows(Path(corpus))
    t1 = time.perf_counter()
    cl = WORKERS[method](texts)
    t2 = time.perf_counter()
    _write_kept(lines, {d for d, k in cl.items() if d != k}, Path(kept))
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"done {ru.ru_utime + ru.ru_stime}", flush=True)  # the end of the timed work
    Path(out).write_text(json.dumps({"cluster": {str(k): v for k, v in cl.items()},
                                     "read_seconds": t1 - t, "seconds": t2 - t1, "write_seconds": time.perf_counter() - t2}))


# ---- the driver --------------------------------------------------------------------------

def _measure(cmd: list[str], env: dict, says_done: bool = False) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds, peak RSS (MB) and exit status of one child process: to its
    exit, or with `says_done` to the line "done CPU" it prints when its timed work is over."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE if says_done else subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    wall = cpu = None
    if says_done:
        for line in p.stdout:
            if line.startswith(b"done "):
                wall, cpu = time.perf_counter() - t, float(line.split()[1])
                break
    _, status, ru = os.wait4(p.pid, 0)
    if wall is None:
        wall, cpu = time.perf_counter() - t, ru.ru_utime + ru.ru_stime
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        print(err, file=sys.stderr)
    return wall, cpu, ru.ru_maxrss / 1024, p.returncode


def _sadedup_clusters(workdir: Path) -> tuple[dict[int, int], dict]:
    con = sqlite3.connect(workdir / "sadedup.db")
    rows = con.execute("SELECT m.doc_id, c.kept_doc_id FROM cluster_members m JOIN clusters c USING (cluster_id) "
                       "WHERE c.method = 'minhash'").fetchall()
    detail = json.loads(con.execute("SELECT detail FROM stages WHERE stage = 'minhash' AND shard = -1").fetchone()[0])
    con.close()
    return {d: k for d, k in rows}, detail


def run_method(method: str, corpus: Path, work: Path) -> dict:
    env = {**os.environ, **SINGLE}
    extra: dict = {}
    if method.startswith("sadedup"):
        verify = method.split("-", 1)[1]
        wd, kept = work / f"work-{verify}", work / f"out-{verify}.jsonl"
        # every method writes its output afresh: the last run's files are removed untimed
        shutil.rmtree(wd, ignore_errors=True)
        kept.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "sadedup.cli", "--quiet", "run", "--input", str(corpus),
               "--output", str(kept), "--workdir", str(wd), "--restart",
               "--set", "stages=minhash", "--set", f"minhash.verify={verify}", "--set", "run.workers=1"]
        load = _load()
        wall, cpu, rss, rc = _measure(cmd, env)
        if rc:
            raise SystemExit(f"{method} failed")
        cl, detail = _sadedup_clusters(wd)
        extra = {"text_seconds": detail["seconds"]["total"], "stage": detail["seconds"]}
    else:
        out, kept = work / f"{method}.json", work / f"out-{method}.jsonl"
        kept.unlink(missing_ok=True)
        cmd = [sys.executable, __file__, "--worker", method, str(corpus), str(out), str(kept)]
        load = _load()
        wall, cpu, rss, rc = _measure(cmd, env, says_done=True)
        if rc:
            raise SystemExit(f"{method} failed")
        got = json.loads(out.read_text())
        cl = {int(k): v for k, v in got["cluster"].items()}
        extra = {"text_seconds": got["seconds"], "read_seconds": got["read_seconds"]}
    return {"method": method, "wall": wall, "cpu": cpu, "rss_mb": rss, "load": load, "clusters": cl, **extra}


def _load() -> float:
    """The 1-minute load average when a run starts (the machine may be shared)."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def combine(runs: list[dict]) -> dict:
    """One method's repeated runs: medians of the times, the largest peak memory, every
    run's wall, CPU and load kept for the record; the clusters of the last run (they are
    the same in every run)."""
    r = dict(runs[-1])
    for k in ("wall", "cpu", "text_seconds"):
        r[k] = _median([x[k] for x in runs])
    r["rss_mb"] = max(x["rss_mb"] for x in runs)
    r["walls"] = [x["wall"] for x in runs]
    r["cpus"] = [x["cpu"] for x in runs]
    r["loads"] = [x["load"] for x in runs]
    if "stage" in r:
        r["stage"] = {k: _median([x["stage"][k] for x in runs]) for k in r["stage"]}
    return r


def evaluate(corpus: Path, results: list[dict]) -> None:
    from nearcopies import evaluate as ev

    truth = json.loads(Path(str(corpus) + ".truth.json").read_text())
    docs = list(_texts(corpus))
    for r in results:
        cl = r.pop("clusters")
        kept_of = {d: k for d, k in cl.items() if d != k}
        r.update(ev(docs, truth["pairs"], cl, kept_of))


def table(results: list[dict]) -> str:
    by = {r["method"]: r for r in results}
    bases = [m for m in ("sadedup-exact", "sadedup-estimate") if m in by]
    lines = ["| method | text to clusters s | whole process s | whole process CPU s | peak RSS MB | recall (J >= 0.85) | "
             "precision (J >= 0.7 with kept) | dropped | text to clusters vs sadedup-exact | "
             + "".join(f"whole process vs {b} | " for b in bases),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(bases)]
    for r in results:
        rel = f"{r['text_seconds'] / by['sadedup-exact']['text_seconds']:.1f}x" if "sadedup-exact" in by else ""
        whole = "".join(f"{r['wall'] / by[b]['wall']:.1f}x | " for b in bases)
        lines.append(f"| {r['method']} | {r['text_seconds']:.2f} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rss_mb']:.0f} | "
                     f"{r['recall']:.4f} ({r['found']}/{r['pairs']}) | {r['precision']:.4f} "
                     f"({r['precise']}/{r['dropped']}) | {r['dropped']} | {rel} | {whole}")
    return "\n".join(lines)


def runs_line(results: list[dict]) -> str:
    """Every run's wall / CPU seconds and the load average at its start, per method."""
    return "\n".join(f"- {r['method']}: " + ", ".join(f"{w:.2f} / {c:.2f} s (load {l:.1f})"
                                                    for w, c, l in zip(r["walls"], r["cpus"], r["loads"]))
                     for r in results)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(*sys.argv[2:6])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="/tmp/sadedup-bench/minhash-100MB.jsonl")
    ap.add_argument("--size", default="100MB", help="text size of the corpus when it has to be made")
    ap.add_argument("--only", default=",".join(METHODS), help="comma-separated methods")
    ap.add_argument("--write", action="store_true", help="rewrite the MinHash section of bench/RESULTS.md")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each method, in turn; medians are reported")
    a = ap.parse_args()
    # bytecode as an installed package has it (see the docstring)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "sadedup")], check=True,
                   stdout=subprocess.DEVNULL)
    corpus = Path(a.corpus)
    corpus.parent.mkdir(parents=True, exist_ok=True)
    if not corpus.exists() or not Path(str(corpus) + ".truth.json").exists():
        subprocess.run([sys.executable, str(REPO / "tests" / "nearcopies.py"), "--size", a.size, "-o", str(corpus)],
                       check=True)
    truth = json.loads(Path(str(corpus) + ".truth.json").read_text())
    work = corpus.parent / "work"
    work.mkdir(exist_ok=True)
    methods = a.only.split(",")
    runs: dict[str, list[dict]] = {m: [] for m in methods}
    for i in range(a.repeat):
        for m in methods:
            print(f"running {m} ({i + 1}/{a.repeat}) ...", file=sys.stderr, flush=True)
            r = run_method(m, corpus, work)
            runs[m].append(r)
            print(f"  {r['wall']:.2f} s wall, {r['cpu']:.2f} s CPU, {r['rss_mb']:.0f} MB, load {r['load']:.1f}",
                  file=sys.stderr, flush=True)
    results = [combine(runs[m]) for m in methods]
    evaluate(corpus, results)
    size_mb = truth["bytes"] / 1e6
    md = table(results)
    head = (f"Corpus: {truth['documents']} documents, {size_mb:.1f} MB of text, {len(truth['pairs'])} planted "
            f"pairs ({sum(1 for p in truth['pairs'] if p[3] >= 0.85)} with Jaccard >= 0.85); "
            f"{os.cpu_count()} CPUs, one thread per method.")
    print(head)
    print(md)
    print(runs_line(results))
    for r in results:
        if "stage" in r:
            print(f"{r['method']} stage: " + ", ".join(f"{k} {v:.2f} s" for k, v in r["stage"].items()))
    if a.write:
        write_results(head, md, results, a)


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def targets(results: list[dict]) -> str:
    """Issue 3's targets (4x rensa's fastest, 8x datasketch, recall and precision >= 0.99) and
    issue 18's (the whole process >= 4x rensa's equivalent pipeline)."""
    by = {r["method"]: r for r in results}
    me = by.get("sadedup-exact")
    if me is None:
        return ""
    rensa = [r for r in results if r["method"].startswith("rensa")]
    lines = ["Against issue 3's targets (sadedup-exact, the `verify=exact` run the targets are about):", ""]
    if rensa:
        fast = min(rensa, key=lambda r: r["text_seconds"])
        lines.append(f"- vs rensa's fastest ({fast['method']}): text to clusters {fast['text_seconds'] / me['text_seconds']:.1f}x "
                     f"faster (target 4x).")
    if "datasketch" in by:
        d = by["datasketch"]
        lines.append(f"- vs datasketch: text to clusters {d['text_seconds'] / me['text_seconds']:.1f}x faster (target 8x); "
                     f"whole process {d['wall'] / me['wall']:.1f}x.")
    lines.append(f"- recall {me['recall']:.4f}, precision {me['precision']:.4f} (targets 0.99 and 0.99).")
    if rensa:
        fastw = min(rensa, key=lambda r: r["wall"])
        lines += ["", f"Against issue 18's target (the whole process >= 4x rensa's equivalent pipeline; rensa's "
                      f"fastest whole process: {fastw['method']}, {fastw['wall']:.2f} s wall, {fastw['cpu']:.2f} s CPU):", ""]
        for m in ("sadedup-exact", "sadedup-estimate"):
            if m in by:
                r = by[m]
                lines.append(f"- {m}: {fastw['wall'] / r['wall']:.2f}x wall, {fastw['cpu'] / r['cpu']:.2f}x CPU "
                             f"({r['wall']:.2f} s wall, {r['cpu']:.2f} s CPU; {r['wall'] - r['text_seconds']:.2f} s "
                             f"of it outside the MinHash stage).")
    return "\n".join(lines)


def write_results(head: str, md: str, results: list[dict], a) -> None:
    path = REPO / "bench" / "RESULTS.md"
    begin, end = "<!-- minhash:begin -->", "<!-- minhash:end -->"
    cmd = "python bench/bench_minhash.py --write" + (f" --size {a.size}" if a.size != "100MB" else "") + \
        (f" --repeat {a.repeat}" if a.repeat != 3 else "")
    stages = "\n".join(f"- {r['method']}: " + ", ".join(f"{k} {v:.2f} s" for k, v in r["stage"].items())
                       for r in results if "stage" in r)
    section = "\n".join([
        begin, "## MinHash: text to clusters", "",
        f"`{cmd}` ({time.strftime('%Y-%m-%d')}, sadedup commit {_commit()}); the methods and settings are in "
        "the script's docstring.", "",
        head, "", md, "",
        "*Text to clusters*: for sadedup, the MinHash stage (the ingested texts in the work folder to the "
        "clusters in the database, signatures written to disk, records written); for the others, their "
        "pipeline from a list of Python strings (JSON already parsed) to clusters. *Whole process*: the "
        "same job for every method, JSONL file in, the kept rows out as a JSONL file, interpreter start "
        "and imports included (medians of the alternated runs below); for sadedup the command from start "
        "to exit: ingest (JSON parsing, texts.bin, documents table), the stage, the export, and its "
        "database, which the others do not write; for the others up to their output file closed "
        "(parsing with orjson, the parser sadedup uses).", "",
        f"Every run, wall / CPU seconds (load average at its start), {a.repeat} per method in turn:", "",
        runs_line(results), "",
        "The sadedup MinHash stage, step by step (medians):", "", stages, "", targets(results), end])
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if begin in text and end in text:
        text = text[: text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)
    print(f"wrote {path}")


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
