"""Substring stage: sadedup against raw pydivsufsort + kasai, Lee et al.'s deduplicate-text-datasets
and infini-gram's indexer, on the same data, in one run.

    pip install -e '.[bench]'                       # matplotlib, infini-gram (and the MinHash peers)
    LEE_BIN=/work/ext/deduplicate-text-datasets/target/release/dedup_dataset \\
        python bench/bench_substring.py --write     # full run (about 45 min on 2 cores), rewrites the
                                                    # section of bench/RESULTS.md and bench/substring_*.png
    python bench/bench_substring.py --sizes 64MB --adversarial '' --repeat 1      # a quick look
    python bench/bench_substring.py --report-only --write                         # tables and plots again
                                                                                  # from the saved JSON

To keep ongoing edits of the tree out of the numbers, measure a pinned, non-editable install and run
the script with that venv's Python (it has pydivsufsort for raw SA+LCP; add infini-gram, matplotlib):

    git archive HEAD | tar -x -C /work/ext/pin-$C; python3.11 -m venv /work/ext/venv-$C
    /work/ext/venv-$C/bin/pip install /work/ext/pin-$C infini-gram matplotlib
    /work/ext/venv-$C/bin/python bench/bench_substring.py --write \\
        --sadedup /work/ext/venv-$C/bin/sadedup --sadedup-commit $C

Everything large lives under --scratch (default /work/ext/bench/substring, outside the
repository): the corpora (made once with bench/corpora.py, no downloads, kept for the next
run), the work folders and the peers' files (removed as soon as a corpus is done), and
results.json (every measurement, read again by --report-only). Lee et al.'s tool is only
*run* (LEE_BIN / --lee-bin, its checkout's scripts/ next to it): never built or vendored here.

Corpora
-------
``web`` at --sizes (default 64MB, 256MB, 1GB of UTF-8 text), plus the adversarial ones at
--adversarial-size (default 64MB, compared per byte with the web corpus of that size):
``repeated`` (the web corpus of a quarter the size written 4 times: every suffix shares a
prefix of a quarter of the corpus with three others) and ``runs`` (web pages between long
runs of one character). Each is a JSONL file; every tool starts from files on disk and leaves its
result on disk.

What is timed (every command its own process tree, same threads: --threads, default 2)
---------------------------------------------------------------------------------------
- ``sadedup run``: ``sadedup run --set stages=substring --set substring.min_length=100 --input
  X.jsonl --output Y.jsonl --workdir W --workers 2`` from an empty W: JSONL in, JSONL and
  database out (bytes tokenizer, keep="first", the default memory budget).
- ``sadedup run @2GB``: the same with ``--set run.memory_budget=2GB``, at every web size: the
  memory-flatness target (peak memory within 20% when the corpus grows 4x) and "a 1 GB corpus
  runs under a 2 GB budget".
- ``sadedup build (prefilter)``: what the run really does for its suffix-array step, with the
  run's own settings (``substring.prefilter`` on, the default): ``sadedup build W --workers 2``
  on the work folder the run left, after deleting ``W/substring/*/L100/`` entirely, so it
  redoes the ``candidates`` stage (winnowing anchors per shard, the repeated anchor hashes,
  each shard's candidate text written to L100/shard_XXXXX/tokens.npy + origin.npy +
  offsets.npy) and then the suffix + LCP arrays over that candidate text (sa.npy, lcp.npy in
  the L100 shard folders). Whole command: start-up, database records and checksums included.
  The ``candidates`` stage row (shard -1: tokens, candidate_tokens, anchors_seconds,
  repeated_seconds, seconds) and the ``build`` rows (sa_seconds, lcp_seconds) are recorded.
- ``sadedup build``: the suffix + LCP stage alone over the shards' FULL text, the same tokens as
  ``raw SA+LCP``: ``sadedup build W --workers 2 --set substring.prefilter=false`` on the same
  work folder, measured after the prefilter build above (that --set is stored in the work
  folder), after deleting the shards' ``substring/*/shard_*/sa.npy, lcp.npy``; it reads each
  shard's tokens.npy and writes sa.npy, lcp.npy beside it (whole command, as above).
- ``raw SA+LCP``: the same shards' tokens.npy, in a fresh Python process: np.load,
  pydivsufsort.divsufsort, pydivsufsort.kasai, np.save of both (shards on a pool of --threads
  processes, as sadedup does). Target: ``sadedup build`` (prefilter off, same tokens) within
  1.3x of this.
- ``Lee single``: ``dedup_dataset make`` + ``self-similar --length-threshold 100 --num-threads
  2`` + ``collect`` on the tool's byte file (for document k: b"\\xff\\xff" + <I k + its UTF-8
  bytes, as its scripts/load_dataset.py writes; the conversion is "prep", done here, untimed
  and reported). Target: ``sadedup run`` >= 3x faster at 64 MB (the issue's 60 MB).
- ``Lee multi-part``: its scripts/make_suffix_array.py (parts with ``make-part``, then
  ``merge``, then cat), run from a scratch folder whose target/debug/dedup_dataset is a link
  to the release binary (the script calls ./target/debug/dedup_dataset and writes ./tmp/),
  then the same ``self-similar`` + ``collect``; at sizes up to --lee-multi-max (256MB; at 1 GB
  and up the script starts 96 parts at once).
  Target: ``sadedup run`` >= 5x faster at 256 MB.
- ``infini-gram``: ``python -m infini_gram.indexing --token_dtype u8 --cpus 2 --mem 9 ...``
  (the PyPI package's v4 indexer: make-part, merge, concat in its bundled rust_indexing). Its
  step 1 (reading JSON and tokenizing) imports transformers even for bytes and downloads a
  Hugging Face tokenizer otherwise, so it gets its input pre-tokenized, as its own step 1 would
  write it (tokenized.0: b"\\xff" + UTF-8 bytes per document, offset.0), and step 1 skips
  itself; the conversion is "prep", untimed. It builds a suffix array only (no LCP, no
  duplicate search): compare it with ``raw SA+LCP`` / ``sadedup build``. Up to --infini-max
  (default 256MB: at 1 GB it alone adds about five minutes).
- uint16 tokens (--u16-sizes, default 64MB and 256MB of text): a sadedup work folder tokenized
  with a BPE tokenizer trained on the corpus (``substring.tokenizer=train:bpe:32000``, untimed
  setup), then ``sadedup build`` (``--set substring.prefilter=false``: all the shards' tokens),
  ``raw SA+LCP`` and infini-gram (``--token_dtype u16``, b"\\xff\\xff" separators) on those
  same tokens.

Measurement
-----------
Wall time; CPU time (user+sys: the larger of wait4's total for the process and its reaped
descendants and the sum over every process seen in the tree, polled); peak memory over the
whole process tree, polled from /proc every 50 ms: the sum of RssAnon (anonymous memory,
the number quoted; memory-mapped file pages are page cache) and the sum of VmRSS. Runs are
repeated and interleaved across tools, and medians are quoted: --repeat (3) runs below 100 MB,
--repeat-mid (1) from 100 MB, --repeat-large (1) from 1 GB, at most --repeat-slow (1) of Lee's
multi-part route, infini-gram and the fixed-budget run, --repeat-adversarial (1). Before each
command the script waits (up to --quiet-wait, 15 s) for other work on the machine to settle,
and it records the CPU other work used during each run ("others' cores"). A sadedup command
that fails to import (the tree is being edited) is retried a minute later. On adversarial
corpora a command is stopped after --adv-timeout-factor (2.5) times the same tool's median on
web text of the same size (at least 60 s), which already answers "at most 2x per byte"; a
stopped run is reported as "> N s".
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import signal
import sqlite3
import statistics
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import corpora  # noqa: E402  (bench/corpora.py: corpus generator)
from compare_lee import read_docs  # noqa: E402  (reads JSONL as sadedup does)
from proctree import descendants, mem_kb  # noqa: E402

MB = 1e6
CLK = os.sysconf("SC_CLK_TCK")
SECTION_BEGIN, SECTION_END = "<!-- substring:begin -->", "<!-- substring:end -->"


# ---------------------------------------------------------------------------------------------
# process-tree measurement

def _proc_table() -> dict[int, tuple[int, int, float]]:
    """pid -> (ppid, starttime, cpu seconds) for every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                s = f.read()
        except OSError:
            continue
        rest = s[s.rfind(b")") + 2:].split()
        # fields after the name: state(3) ppid(4) ... utime(14) stime(15) ... starttime(22)
        out[int(d)] = (int(rest[1]), int(rest[19]), (int(rest[11]) + int(rest[12])) / CLK)
    return out


def cpu_busy_seconds() -> float:
    """CPU seconds the whole machine has been busy (all cores), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / CLK


def wait_quiet(max_wait: float, threshold: float = 0.3) -> tuple[float, float]:
    """Waits until other work uses less than `threshold` of a core (1 s samples), at most max_wait s.

    Returns (seconds waited, cores busy in the last sample)."""
    t0 = time.perf_counter()
    while True:
        b0, w0 = cpu_busy_seconds(), time.perf_counter()
        time.sleep(1.0)
        busy = (cpu_busy_seconds() - b0) / (time.perf_counter() - w0)
        if busy < threshold or time.perf_counter() - t0 >= max_wait:
            return round(time.perf_counter() - t0, 1), round(busy, 2)


def measure(cmd: list, *, cwd=None, env=None, timeout: float | None = None, stdout=None,
            interval: float = 0.05) -> dict:
    """Runs cmd in its own process group; wall, CPU and peak tree memory. Never raises on failure."""
    cmd = [str(c) for c in cmd]
    out = stdout if stdout is not None else subprocess.DEVNULL
    busy0 = cpu_busy_seconds()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.PIPE, start_new_session=True)
    peak = [0, 0]
    cpu_seen: dict[tuple[int, int], float] = {}
    done = threading.Event()
    timed_out = [False]

    def sample():
        while not done.is_set():
            table = _proc_table()
            kids: dict[int, list[int]] = {}
            for pid, (ppid, _, _) in table.items():
                kids.setdefault(ppid, []).append(pid)
            rss = anon = 0
            for q in descendants(p.pid, kids):
                if q in table:
                    cpu_seen[(q, table[q][1])] = table[q][2]
                r, a = mem_kb(q)
                rss += r
                anon += a
            peak[0] = max(peak[0], rss)
            peak[1] = max(peak[1], anon)
            if timeout is not None and time.perf_counter() - t0 > timeout and not timed_out[0]:
                timed_out[0] = True
                try:
                    os.killpg(p.pid, signal.SIGKILL)   # the group this call started
                except OSError:
                    pass
            done.wait(interval)

    err_chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: err_chunks.append(p.stderr.read()), daemon=True)
    reader.start()
    th = threading.Thread(target=sample, daemon=True)
    th.start()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    busy = cpu_busy_seconds() - busy0
    done.set()
    th.join()
    reader.join()
    try:  # leftovers of a killed group
        os.killpg(p.pid, signal.SIGKILL) if timed_out[0] else None
    except OSError:
        pass
    rc = os.waitstatus_to_exitcode(status)
    cpu = max(ru.ru_utime + ru.ru_stime, sum(cpu_seen.values()))
    err = b"".join(err_chunks).decode("utf-8", "replace").strip()
    # other work on the machine during the run, in cores (a noisy neighbour shows here)
    others = max(0.0, busy - cpu) / max(wall, 1e-9)
    return {"cmd": " ".join(cmd), "wall": round(wall, 3), "cpu": round(cpu, 3), "others_cores": round(others, 2),
            "peak_anon_mb": round(peak[1] / 1024, 1), "peak_rss_mb": round(peak[0] / 1024, 1),
            "rc": rc, "timed_out": timed_out[0], "stderr_tail": err[-600:] if rc != 0 else ""}


def ok(m: dict) -> bool:
    return m["rc"] == 0 and not m["timed_out"]


def combine(steps: dict[str, dict]) -> dict:
    """A sequence of commands: times add up, the peak is the largest step's."""
    vals = list(steps.values())
    wall = sum(v["wall"] for v in vals)
    others = sum(v.get("others_cores", 0) * v["wall"] for v in vals) / max(wall, 1e-9)
    return {"wall": round(wall, 3), "cpu": round(sum(v["cpu"] for v in vals), 3), "others_cores": round(others, 2),
            "peak_anon_mb": max(v["peak_anon_mb"] for v in vals), "peak_rss_mb": max(v["peak_rss_mb"] for v in vals),
            "rc": next((v["rc"] for v in vals if v["rc"] != 0), 0), "timed_out": any(v["timed_out"] for v in vals),
            "steps": steps, "stderr_tail": next((v["stderr_tail"] for v in vals if v.get("stderr_tail")), "")}


SADEDUP_COMMIT: str | None = None   # --sadedup-commit: the commit of a pinned install given with --sadedup


def sadedup_commit() -> str:
    """HEAD of the repository, marked when sadedup's sources differ from it (other work edits them);
    or the commit the pinned install under test was made from (--sadedup-commit)."""
    if SADEDUP_COMMIT:
        return SADEDUP_COMMIT
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "sadedup", "native"],
                           capture_output=True, text=True).stdout.strip()
    return head + ("+uncommitted changes" if dirty else "")


def free_gb() -> float:
    st = os.statvfs("/work" if os.path.exists("/work") else "/")
    return st.f_bavail * st.f_frsize / 1e9


# ---------------------------------------------------------------------------------------------
# raw baseline (runs in a child process: bench_substring.py --raw-worker OUT SHARD...)

def _raw_one(args: tuple[str, str]) -> dict:
    import pydivsufsort

    sdir, out = Path(args[0]), Path(args[1])
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    tokens = np.load(sdir / "tokens.npy")
    t1 = time.perf_counter()
    sa = pydivsufsort.divsufsort(tokens)
    t2 = time.perf_counter()
    lcp = pydivsufsort.kasai(tokens, sa)
    t3 = time.perf_counter()
    np.save(out / "sa.npy", sa)
    np.save(out / "lcp.npy", lcp)
    t4 = time.perf_counter()
    return {"tokens": int(len(tokens)), "load": round(t1 - t0, 3), "divsufsort": round(t2 - t1, 3),
            "kasai": round(t3 - t2, 3), "save": round(t4 - t3, 3)}


def raw_worker(out: str, shards: list[str], threads: int) -> None:
    tasks = [(s, str(Path(out) / f"{i:05d}")) for i, s in enumerate(shards)]
    if threads > 1 and len(tasks) > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(min(threads, len(tasks))) as pool:
            res = pool.map(_raw_one, tasks, chunksize=1)
    else:
        res = [_raw_one(t) for t in tasks]
    print(json.dumps(res))


# ---------------------------------------------------------------------------------------------
# inputs of the peers

def make_corpus(path: Path, kind: str, size: int, seed: int = 0) -> dict:
    meta = path.with_suffix(".meta.json")
    if path.exists() and meta.exists():
        return json.loads(meta.read_text())
    tmp = path.with_name(path.name + ".tmp")
    t0 = time.perf_counter()
    n, nbytes = corpora.write_jsonl(tmp, corpora.generate(size, kind, seed, 4))
    tmp.replace(path)
    info = {"docs": n, "text_bytes": nbytes, "jsonl_bytes": path.stat().st_size, "kind": kind, "seed": seed,
            "seconds": round(time.perf_counter() - t0, 1)}
    meta.write_text(json.dumps(info))
    return info


def write_peer_files(corpus: Path, lee_file: Path, ig_dir: Path) -> dict:
    """Lee's byte file and infini-gram's pre-tokenized bytes (tokenized.0, offset.0), one pass."""
    ig_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    offs = []
    pos = 0
    with open(lee_file, "wb", buffering=1 << 22) as fl, open(ig_dir / "tokenized.0", "wb", buffering=1 << 22) as fi:
        for k, b in enumerate(read_docs(corpus), 1):
            fl.write(b"\xff\xff" + struct.pack("<I", k))
            fl.write(b)
            offs.append(pos)
            fi.write(b"\xff")
            fi.write(b)
            pos += 1 + len(b)
    np.array(offs, dtype=np.uint64).tofile(ig_dir / "offset.0")
    return {"prep_seconds": round(time.perf_counter() - t0, 2), "lee_bytes": lee_file.stat().st_size,
            "infini_bytes": pos}


def write_ig_from_shards(shards: list[Path], ig_dir: Path) -> dict:
    """infini-gram input from sadedup's token shards (uint16: b"\\xff\\xff" before each document)."""
    ig_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    offs = []
    pos = 0
    with open(ig_dir / "tokenized.0", "wb", buffering=1 << 22) as f:
        for s in shards:
            tok = np.load(s / "tokens.npy", mmap_mode="r")
            o = np.load(s / "offsets.npy")
            w = tok.dtype.itemsize
            sep = b"\xff" * w
            for a, b in zip(o[:-1].tolist(), o[1:].tolist()):
                offs.append(pos)
                f.write(sep)
                f.write(tok[a:b].tobytes())
                pos += w * (1 + b - a)
    np.array(offs, dtype=np.uint64).tofile(ig_dir / "offset.0")
    return {"prep_seconds": round(time.perf_counter() - t0, 2), "infini_bytes": pos}


# ---------------------------------------------------------------------------------------------
# the tools

class Bench:
    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        self.T = a.threads
        self.scratch = a.scratch
        self.env = dict(os.environ, OMP_NUM_THREADS=str(self.T), RAYON_NUM_THREADS=str(self.T),
                        TOKENIZERS_PARALLELISM="true", TQDM_DISABLE="1", HF_HUB_OFFLINE="1",
                        TRANSFORMERS_OFFLINE="1")
        if a.sadedup:
            self.sadedup = a.sadedup.split()
        elif (Path(sys.executable).parent / "sadedup").exists():   # the console script of this Python
            self.sadedup = [str(Path(sys.executable).parent / "sadedup")]
        else:
            self.sadedup = [sys.executable, "-c", "from sadedup.cli import main; main()"]
        self.results = {"runs": [], "corpora": {}, "stages": {}, "checks": {}}

    # -- bookkeeping --
    def record(self, corpus: str, tool: str, rep: int, m: dict, **extra) -> dict:
        row = {"corpus": corpus, "tool": tool, "rep": rep, **m, **extra,
               "commit": sadedup_commit(), "time": time.strftime("%Y-%m-%d %H:%M:%S")}
        self.results["runs"].append(row)
        state = "ok" if ok(m) else ("TIMEOUT" if m["timed_out"] else f"FAILED rc={m['rc']}")
        print(f"  {corpus:16s} {tool:22s} rep {rep}: wall {m['wall']:8.2f}s cpu {m['cpu']:8.2f}s "
              f"anon {m['peak_anon_mb']:8.0f}MB rss {m['peak_rss_mb']:8.0f}MB {state}"
              + (f"  {m['stderr_tail'][-300:]!r}" if not ok(m) and m.get("stderr_tail") else ""), flush=True)
        self.save()
        return row

    def save(self) -> None:
        (self.scratch / "results.json").write_text(json.dumps(self.results, indent=1))

    def median_of(self, corpus: str, tool: str) -> float | None:
        w = [r["wall"] for r in self.results["runs"] if r["corpus"] == corpus and r["tool"] == tool and ok(r)]
        return statistics.median(w) if w else None

    def quiet(self) -> None:
        """Before each timed command: flush the last command's writes to disk (each tool writes
        gigabytes; the next one should not pay for their writeback), then let a busy
        neighbour's burst pass (at most --quiet-wait s)."""
        os.sync()
        if self.a.quiet_wait > 0:
            waited, busy = wait_quiet(self.a.quiet_wait)
            if waited >= self.a.quiet_wait:
                print(f"    (machine still busy after {waited:.0f} s: {busy:.2f} cores in use by other work)", flush=True)

    # -- sadedup --
    BROKEN = ("ImportError", "ModuleNotFoundError", "undefined symbol", "SyntaxError", "IndentationError",
              "cannot import name")

    def sadedup_measure(self, cmd: list, prepare, timeout=None) -> dict:
        """sadedup is the editable install of a tree other work edits: a run that fails to import
        (a half-written edit, a native module being rebuilt) is retried after a minute."""
        for attempt in range(self.a.import_retries + 1):
            prepare()
            self.quiet()
            m = measure(cmd, env=self.env, timeout=timeout)
            if m["rc"] == 0 or not any(b in m["stderr_tail"] for b in self.BROKEN) or attempt == self.a.import_retries:
                return m
            print(f"    sadedup does not import right now ({m['stderr_tail'].splitlines()[-1][:200]}); "
                  "retrying in 60 s", flush=True)
            time.sleep(60)
        return m

    def sadedup_run(self, corpus: Path, work: Path, out: Path, sets: list[str] = (), timeout=None) -> dict:
        def prepare():
            shutil.rmtree(work, ignore_errors=True)
            out.unlink(missing_ok=True)
        cmd = [*self.sadedup, "--quiet", "run", "--set", "stages=substring", "--set", "substring.min_length=100",
               *[x for s in sets for x in ("--set", s)],
               "--input", corpus, "--output", out, "--workdir", work, "--workers", self.T]
        return self.sadedup_measure(cmd, prepare, timeout)

    @staticmethod
    def stages(work: Path) -> list[dict]:
        con = sqlite3.connect(f"file:{work / 'sadedup.db'}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT stage, shard, status, started_at, finished_at, detail FROM stages "
                               "ORDER BY rowid").fetchall()
            summary = con.execute("SELECT count(*), sum(status = 'kept'), sum(removed_tokens), sum(n_tokens) "
                                  "FROM documents").fetchone()
        finally:
            con.close()
        out = [{"stage": r[0], "shard": r[1], "status": r[2], "started_at": r[3], "finished_at": r[4],
                "detail": json.loads(r[5] or "{}")} for r in rows]
        out.append({"stage": "_documents", "docs": summary[0], "kept": summary[1], "removed_tokens": summary[2],
                    "tokens": summary[3]})
        return out

    @staticmethod
    def shard_dirs(work: Path) -> list[Path]:
        return sorted(p.parent for p in work.glob("substring/*/shard_*/tokens.npy"))

    def sadedup_build(self, work: Path, timeout=None, prefilter: bool = False) -> dict:
        """prefilter=False: suffix + LCP arrays over the shards' full tokens.npy (the same tokens as raw
        SA+LCP). prefilter=True: the run's own build step, candidates stage included (its L100 folders
        are deleted first, so it redoes them)."""
        def prepare():
            if prefilter:
                for d in work.glob("substring/*/L[0-9]*"):
                    if d.is_dir():
                        shutil.rmtree(d)
            for s in self.shard_dirs(work):
                for f in ("sa.npy", "lcp.npy"):
                    (s / f).unlink(missing_ok=True)
        cmd = [*self.sadedup, "--quiet", "build", work, "--workers", self.T]
        if not prefilter:
            cmd += ["--set", "substring.prefilter=false"]
        m = self.sadedup_measure(cmd, prepare, timeout)
        if ok(m):
            st = self.stages(work)
            m["build_detail"] = [r["detail"] for r in st if r["stage"] == "build"]
            if prefilter:
                m["candidates_detail"] = next((r["detail"] for r in st if r["stage"] == "candidates"
                                               and r.get("shard") == -1), None)
        return m

    def raw(self, shards: list[Path], out: Path, timeout=None) -> dict:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        log = out.parent / (out.name + ".json")
        self.quiet()
        with open(log, "w") as f:
            m = measure([sys.executable, __file__, "--raw-worker", out, *shards, "--threads", self.T],
                        env=self.env, timeout=timeout, stdout=f)
        if ok(m):
            m["raw_detail"] = json.loads(log.read_text())
        shutil.rmtree(out, ignore_errors=True)
        log.unlink(missing_ok=True)
        return m

    # -- Lee et al. --
    def lee_core(self, data: Path, cache: Path, timeout=None) -> dict[str, dict]:
        lee = self.a.lee_bin
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        steps = {}
        steps["self-similar"] = measure([lee, "self-similar", "--data-file", data, "--length-threshold", 100,
                                         "--cache-dir", cache, "--num-threads", self.T], env=self.env, timeout=timeout)
        if not ok(steps["self-similar"]):
            return steps
        with open(cache.parent / "collect.txt", "w") as f:
            steps["collect"] = measure([lee, "collect", "--data-file", data, "--cache-dir", cache,
                                        "--length-threshold", 100], env=self.env, timeout=timeout, stdout=f)
        return steps

    def collect_summary(self, path: Path) -> dict:
        n = nbytes = 0
        with open(path) as f:
            for line in f:
                if line.strip() == "out":
                    break
            for line in f:
                a, b = line.split()
                n += 1
                nbytes += int(b) - int(a)
        return {"ranges": n, "bytes": nbytes}

    def lee_single(self, data: Path, work: Path, timeout=None) -> dict:
        Path(str(data) + ".table.bin").unlink(missing_ok=True)
        self.quiet()
        steps = {"make": measure([self.a.lee_bin, "make", "--data-file", data], env=self.env, timeout=timeout)}
        if ok(steps["make"]):
            steps.update(self.lee_core(data, work / "cache", timeout))
        m = combine(steps)
        if ok(m):
            m["collect"] = self.collect_summary(work / "collect.txt")
        return m

    def lee_multi(self, data: Path, work: Path, timeout=None) -> dict:
        run_dir = work / "multi"
        shutil.rmtree(run_dir, ignore_errors=True)
        (run_dir / "target" / "debug").mkdir(parents=True)
        (run_dir / "tmp").mkdir()
        os.symlink(self.a.lee_bin, run_dir / "target" / "debug" / "dedup_dataset")
        for p in data.parent.glob(data.name + ".part.*"):
            p.unlink()
        Path(str(data) + ".table.bin").unlink(missing_ok=True)
        script = Path(self.a.lee_bin).resolve().parents[2] / "scripts" / "make_suffix_array.py"
        self.quiet()
        with open(work / "multi.log", "w") as f:
            steps = {"make_suffix_array.py": measure([sys.executable, script, data], cwd=run_dir, env=self.env,
                                                     timeout=timeout, stdout=f)}
        for p in data.parent.glob(data.name + ".part.*"):
            p.unlink()
        shutil.rmtree(run_dir, ignore_errors=True)
        if ok(steps["make_suffix_array.py"]):
            left = None if timeout is None else max(1.0, timeout - steps["make_suffix_array.py"]["wall"])
            steps.update(self.lee_core(data, work / "cache", left))
        m = combine(steps)
        if ok(m):
            m["collect"] = self.collect_summary(work / "collect.txt")
        return m

    # -- infini-gram --
    def infini(self, prepared: Path, work: Path, dtype: str, timeout=None) -> dict:
        save = work / "ig_index"
        data_dir = work / "ig_empty_data_dir"
        shutil.rmtree(save, ignore_errors=True)
        save.mkdir(parents=True)
        data_dir.mkdir(parents=True, exist_ok=True)
        for f in ("tokenized.0", "offset.0"):
            os.link(prepared / f, save / f)   # its step 1 finds its output there and skips itself
        cmd = [sys.executable, "-m", "infini_gram.indexing", "--data_dir", data_dir, "--save_dir", save,
               "--token_dtype", dtype, "--cpus", self.T, "--mem", self.a.infini_mem, "--shards", 1, "--workers", 1,
               # it raises its open-files limit to this (default 2^20, above this machine's hard limit)
               "--ulimit", resource.getrlimit(resource.RLIMIT_NOFILE)[1]]
        self.quiet()
        with open(work / "infini.log", "w") as f:
            m = measure(cmd, env=self.env, timeout=timeout, stdout=f)
        table = save / "table.0"
        if ok(m) and not table.exists():
            m["rc"] = -1
            m["stderr_tail"] = "no table.0 written"
        if ok(m):
            m["table_bytes"] = table.stat().st_size
        shutil.rmtree(save, ignore_errors=True)
        return m

    # -----------------------------------------------------------------------------------------
    def corpus_path(self, kind: str, size: int) -> tuple[str, Path]:
        name = f"{kind}-{fmt_size(size)}"
        return name, self.scratch / f"{name}.jsonl"

    def run_corpus(self, kind: str, size: int, reps: int, slow_reps: int, web_ref: str | None) -> None:
        a = self.a
        name, path = self.corpus_path(kind, size)
        print(f"== {name}: preparing", flush=True)
        info = make_corpus(path, kind, size)
        work = self.scratch / f"work-{name}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        lee_file = work / "lee.bin"
        peer = write_peer_files(path, lee_file, work / "ig_prepared")
        self.results["corpora"][name] = {**info, **peer, "size": size, "kind": kind}
        print(f"   {info['docs']} documents, {info['text_bytes']} text bytes; peers' files in {peer['prep_seconds']}s; "
              f"disk free {free_gb():.0f} GB", flush=True)

        def tmo(tool: str) -> float | None:
            if web_ref is None:
                return a.timeout
            ref = self.median_of(web_ref, tool)
            return None if ref is None else max(60.0, a.adv_timeout_factor * ref)

        tools = a.tools
        for rep in range(reps):
            W = work / "sadedup"
            if "sadedup" in tools or "build" in tools or "prefilter" in tools or "raw" in tools:
                m = self.sadedup_run(path, W, work / "out.jsonl", timeout=tmo("sadedup run"))
                if ok(m):
                    st = self.stages(W)
                    self.results["stages"][name] = st
                    doc = st[-1]
                    m["removed_tokens"], m["tokens"], m["kept"] = doc["removed_tokens"], doc["tokens"], doc["kept"]
                self.record(name, "sadedup run", rep, m)
                (work / "out.jsonl").unlink(missing_ok=True)
                if ok(m) and "prefilter" in tools:   # first: the prefilter=false build below is stored in W
                    self.record(name, "sadedup build (prefilter)", rep,
                                self.sadedup_build(W, timeout=tmo("sadedup build (prefilter)"), prefilter=True),
                                shards=len(self.shard_dirs(W)))
                if ok(m) and "build" in tools:
                    self.record(name, "sadedup build", rep, self.sadedup_build(W, timeout=tmo("sadedup build")),
                                shards=len(self.shard_dirs(W)))
                if ok(m) and "raw" in tools:
                    shards = self.shard_dirs(W)
                    self.record(name, "raw SA+LCP", rep, self.raw(shards, work / "raw_out", timeout=tmo("raw SA+LCP")),
                                shards=len(shards))
                shutil.rmtree(W, ignore_errors=True)
            if "budget" in tools and kind == "web" and rep < slow_reps:
                m = self.sadedup_run(path, W, work / "out.jsonl", sets=[f"run.memory_budget={a.budget}"])
                if ok(m):
                    st = self.stages(W)
                    self.results["stages"][name + f" @{a.budget}"] = st
                    m["shards"] = len(self.shard_dirs(W))
                self.record(name, f"sadedup run @{a.budget}", rep, m)
                shutil.rmtree(W, ignore_errors=True)
                (work / "out.jsonl").unlink(missing_ok=True)
            if "lee" in tools:
                self.record(name, "Lee single", rep, self.lee_single(lee_file, work, timeout=tmo("Lee single")))
            if "lee-multi" in tools and size <= a.lee_multi_max and rep < slow_reps:
                self.record(name, "Lee multi-part", rep, self.lee_multi(lee_file, work, timeout=tmo("Lee multi-part")))
            if "infini" in tools and size <= a.infini_max and rep < slow_reps:
                self.record(name, "infini-gram", rep,
                            self.infini(work / "ig_prepared", work, "u8", timeout=tmo("infini-gram")))
            for p in [Path(str(lee_file) + ".table.bin"), work / "collect.txt"]:
                p.unlink(missing_ok=True)
            shutil.rmtree(work / "cache", ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)

    def run_u16(self, size: int, reps: int) -> None:
        name, path = self.corpus_path("web", size)
        info = make_corpus(path, "web", size)
        cname = f"u16 {name}"
        print(f"== {cname}: preparing (sadedup ingest + tokenize with {self.a.u16_tokenizer})", flush=True)
        work = self.scratch / f"work-u16-{name}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        W = work / "sadedup"
        sets = ["--set", "stages=substring", "--set", f"substring.tokenizer={self.a.u16_tokenizer}"]
        t0 = time.perf_counter()
        for attempt in range(self.a.import_retries + 1):
            shutil.rmtree(W, ignore_errors=True)
            rcs = []
            for cmd in ([*self.sadedup, "--quiet", "ingest", "--input", path, "--workdir", W, *sets],
                        [*self.sadedup, "--quiet", "tokenize", W, "--workers", self.T]):
                r = subprocess.run([str(c) for c in cmd], env=self.env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
                rcs.append(r.returncode)
                if r.returncode:
                    break
            if not any(rcs):
                break
            if attempt == self.a.import_retries or not any(b in r.stderr for b in self.BROKEN):
                raise SystemExit(f"sadedup setup of the uint16 corpus failed: {r.stderr[-500:]}")
            time.sleep(60)
        shards = self.shard_dirs(W)
        dtype = np.load(shards[0] / "tokens.npy", mmap_mode="r").dtype
        ntok = sum(len(np.load(s / "tokens.npy", mmap_mode="r")) for s in shards)
        if dtype != np.uint16:
            print(f"   tokens are {dtype}, not uint16: skipping the uint16 comparison", flush=True)
            shutil.rmtree(work, ignore_errors=True)
            return
        peer = write_ig_from_shards(shards, work / "ig_prepared")
        self.results["corpora"][cname] = {**info, **peer, "size": size, "kind": "web", "tokens": ntok,
                                          "dtype": str(dtype), "setup_seconds": round(time.perf_counter() - t0, 1),
                                          "shards": len(shards)}
        print(f"   {ntok} uint16 tokens in {len(shards)} shard(s)", flush=True)
        for rep in range(reps):
            if "build" in self.a.tools:
                self.record(cname, "sadedup build", rep, self.sadedup_build(W, timeout=self.a.timeout, prefilter=False),
                            shards=len(shards))
            if "raw" in self.a.tools:
                self.record(cname, "raw SA+LCP", rep, self.raw(shards, work / "raw_out", timeout=self.a.timeout),
                            shards=len(shards))
            if "infini" in self.a.tools:
                self.record(cname, "infini-gram", rep, self.infini(work / "ig_prepared", work, "u16",
                                                                    timeout=self.a.timeout))
        shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# report

def fmt_size(n: int) -> str:
    if n >= 10**9 and n % 10**9 == 0:
        return f"{n // 10**9}GB"
    return f"{n // 10**6}MB"


def med(rows: list[dict], key: str) -> float | None:
    v = [r[key] for r in rows if ok(r) and key in r]
    return statistics.median(v) if v else None


def cell(x: float | None, nd: int = 2) -> str:
    return "—" if x is None else f"{x:,.{nd}f}"


def summarize(results: dict) -> dict[tuple[str, str], dict]:
    by: dict[tuple[str, str], list[dict]] = {}
    for r in results["runs"]:
        by.setdefault((r["corpus"], r["tool"]), []).append(r)
    out = {}
    for k, rows in by.items():
        good = [r for r in rows if ok(r)]
        s = {"n": len(good), "runs": len(rows), "wall": med(rows, "wall"), "cpu": med(rows, "cpu"),
             "anon": med(rows, "peak_anon_mb"), "rss": med(rows, "peak_rss_mb"),
             "others": med(rows, "others_cores"),
             "timed_out": any(r["timed_out"] for r in rows), "failed": [r for r in rows if not ok(r)]}
        if not good and s["timed_out"]:
            s["wall_floor"] = max(r["wall"] for r in rows if r["timed_out"])
        if good:
            best = sorted(good, key=lambda r: r["wall"])[len(good) // 2]
            s["median_run"] = best
        out[k] = s
    return out


TOOLS_ORDER = ["sadedup run", "sadedup run @2GB", "sadedup build (prefilter)", "sadedup build", "raw SA+LCP", "Lee single", "Lee multi-part",
               "infini-gram"]
TOOL_WHAT = {
    "sadedup run": "JSONL in → JSONL + database out (ingest, tokenize, build, repeats, remove, export)",
    "sadedup build (prefilter)": "the run's own build step: candidates stage (winnowing anchors, repeated "
                                 "anchors, candidate text) + suffix + LCP arrays over the candidate text",
    "sadedup build": "suffix + LCP arrays of the shards' full text, `--set substring.prefilter=false` "
                     "(tokens.npy in → sa.npy, lcp.npy out; the same tokens as raw SA+LCP)",
    "raw SA+LCP": "pydivsufsort.divsufsort + kasai on the same shards, np.load → np.save",
    "Lee single": "make + self-similar + collect (byte file in → byte ranges out)",
    "Lee multi-part": "make_suffix_array.py (make-part ×4 + merge) + self-similar + collect",
    "infini-gram": "indexer: make-part + merge + concat (suffix array only)",
}


def wall_str(s: dict | None) -> str:
    if s is None:
        return "—"
    if s["wall"] is None:
        return f"> {s['wall_floor']:.0f} (stopped)" if s.get("wall_floor") else "failed"
    return cell(s["wall"])


def ratio(a: float | None, b: float | None) -> str:
    return "—" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def report(results: dict, meta: dict) -> str:
    S = summarize(results)
    corp = results["corpora"]
    budget = meta.get("budget", "2GB")
    web = sorted([c for c, i in corp.items() if i["kind"] == "web" and not c.startswith("u16")],
                 key=lambda c: corp[c]["size"])
    adv = [c for c, i in corp.items() if i["kind"] != "web"]
    u16 = [c for c in corp if c.startswith("u16")]
    L = []
    commits = sorted({r.get("commit") or meta["commit"] for r in results["runs"]})
    L.append(f"`{meta['command']}` ({meta['date']}, sadedup {', '.join(commits)}; {meta['threads']} threads for "
             f"every tool on a {os.cpu_count()}-core machine; load average before {meta['load_before']:.2f}, "
             f"after {meta.get('load_after', float('nan')):.2f}). The script's docstring defines each "
             "measurement; Lee et al.'s tool is the release build described in the Lee comparison above, "
             f"infini-gram is the PyPI package {meta.get('infini_version', '?')}.")
    if meta.get("note"):
        L.append("")
        L.append(meta["note"])
    L.append("")
    L.append("Medians of the repeated runs (n = runs that finished), wall and CPU seconds, peak memory of the "
             "whole process tree in MB (anonymous = RssAnon summed over the tree; RSS adds mapped file pages). "
             "*others' cores*: CPU the rest of the machine used during the run, in cores (the machine is "
             "shared; each command waits up to 15 s for other work to settle before it starts).")
    L.append("")
    L.append("Corpora: " + "; ".join(
        f"{c}: {corp[c]['docs']:,} docs, {corp[c]['text_bytes'] / MB:,.0f} MB of text" for c in web + adv) + ".")
    L.append("")
    # main table
    L.append("| corpus | tool | n | wall s | CPU s | peak anon MB | peak RSS MB | MB/s (text) | others' cores |")
    L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c in web + adv:
        first = True
        for t in TOOLS_ORDER:
            t2 = t.replace("@2GB", f"@{budget}")
            s = S.get((c, t2))
            if s is None:
                continue
            mbps = corp[c]["text_bytes"] / MB / s["wall"] if s["wall"] else None
            L.append(f"| {c if first else ''} | {t2} | {s['n']}/{s['runs']} | {wall_str(s)} | {cell(s['cpu'])} | "
                     f"{cell(s['anon'], 0)} | {cell(s['rss'], 0)} | {cell(mbps, 1)} | {cell(s['others'], 2)} |")
            first = False
    L.append("")
    L.append("What each row times: " + "; ".join(f"*{k}*: {v}" for k, v in TOOL_WHAT.items()) + ". "
             "Not timed: making the peers' input files from the JSONL (Lee's byte file and infini-gram's "
             "tokenized.0 in one Python pass: " + ", ".join(
                 f"{c} {corp[c]['prep_seconds']:.1f} s" for c in web + adv) + ").")
    L.append("")
    if u16:
        L.append("uint16 tokens (BPE trained on the corpus by sadedup, `substring.tokenizer="
                 f"{meta.get('u16_tokenizer')}`; the same tokens for all three):")
        L.append("")
        L.append("| corpus | tokens | tool | n | wall s | CPU s | peak anon MB | peak RSS MB | M tokens/s |")
        L.append("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for c in u16:
            first = True
            for t in ["sadedup build", "raw SA+LCP", "infini-gram"]:
                s = S.get((c, t))
                if s is None:
                    continue
                tps = corp[c]["tokens"] / 1e6 / s["wall"] if s["wall"] else None
                L.append(f"| {c if first else ''} | {corp[c]['tokens']:,} | {t} | {s['n']}/{s['runs']} | {wall_str(s)} | "
                         f"{cell(s['cpu'])} | {cell(s['anon'], 0)} | {cell(s['rss'], 0)} | {cell(tps, 1)} |")
                first = False
        L.append("")
    # targets
    L.append("### Against issue 6's targets")
    L.append("")

    def g(c, t, k="wall"):
        s = S.get((c, t))
        return None if s is None else s[k]

    def split(c):
        """Seconds inside the median runs, summed over shards: sadedup's SA / LCP, raw's divsufsort / kasai."""
        sb, sr = S.get((c, "sadedup build"), {}).get("median_run", {}), S.get((c, "raw SA+LCP"), {}).get("median_run", {})
        bd = [d for d in sb.get("build_detail", []) if "sa_seconds" in d]
        rd = sr.get("raw_detail", [])
        if not bd or not rd:
            return ""
        return (f"; inside: sadedup SA {sum(d['sa_seconds'] for d in bd):.1f} s + LCP "
                f"{sum(d['lcp_seconds'] for d in bd):.1f} s, raw divsufsort {sum(d['divsufsort'] for d in rd):.1f} s"
                f" + kasai {sum(d['kasai'] for d in rd):.1f} s, summed over {len(rd)} shard(s)")

    rows = []
    for c in web + u16:
        b, r = g(c, "sadedup build"), g(c, "raw SA+LCP")
        if b and r:
            rows.append(f"| SA+LCP: sadedup build / raw pydivsufsort+kasai, {c} | ≤ 1.30x | {b / r:.2f}x "
                        f"({b:.2f} s / {r:.2f} s{split(c)}) | {'met' if b / r <= 1.3 else 'missed'} |")
    c64 = next((c for c in web if corp[c]["size"] <= 70e6), None)
    if c64:
        lee, sd = g(c64, "Lee single"), g(c64, "sadedup run")
        if lee and sd:
            rows.append(f"| end to end vs Lee make+self-similar+collect, {c64} | ≥ 3x faster | {lee / sd:.2f}x "
                        f"({lee:.2f} s / {sd:.2f} s) | {'met' if lee / sd >= 3 else 'missed'} |")
    c256 = next((c for c in web if 200e6 <= corp[c]["size"] <= 300e6), None)
    if c256:
        s = S.get((c256, "Lee multi-part"))
        sd = g(c256, "sadedup run")
        if s and sd:
            if s["wall"]:
                rows.append(f"| end to end vs Lee multi-part route, {c256} | ≥ 5x faster | {s['wall'] / sd:.2f}x "
                            f"({s['wall']:.2f} s / {sd:.2f} s) | {'met' if s['wall'] / sd >= 5 else 'missed'} |")
            elif s.get("wall_floor"):
                rows.append(f"| end to end vs Lee multi-part route, {c256} | ≥ 5x faster | > {s['wall_floor'] / sd:.1f}x "
                            f"(stopped at {s['wall_floor']:.0f} s) | met |")
    # memory flatness
    bt = f"sadedup run @{budget}"
    def shards(c):
        s = S.get((c, bt))
        return (s.get("median_run") or {}).get("shards") if s else None

    def shard_tokens(c):
        """shard_tokens the @budget run's tokenize stage chose (the budget's shard size, or less)."""
        return next((r["detail"].get("shard_tokens") for r in results["stages"].get(f"{c} @{budget}", [])
                     if r["stage"] == "tokenize" and r.get("shard") == -1), None)

    wb = [(c, g(c, bt, "anon"), g(c, bt, "rss")) for c in web if g(c, bt, "anon")]
    for (c1, a1, r1), (c2, a2, r2) in zip(wb, wb[1:]):
        grow = corp[c2]["size"] / corp[c1]["size"]
        if 3.5 <= grow <= 4.5:
            what = (f"{(a2 / a1 - 1) * 100:+.0f}% ({a1:.0f} → {a2:.0f} MB; RSS {r1:.0f} → {r2:.0f} MB; "
                    f"{shards(c1)} → {shards(c2)} shards)")
            t1, t2 = shard_tokens(c1), shard_tokens(c2)
            if shards(c1) == 1:
                verdict = ("not a test: the smaller corpus is one shard smaller than the budget allows, so its peak "
                           "is set by the corpus, not the budget")
            elif t1 and t2 and t1 < 0.9 * t2:
                verdict = (f"not a test: the smaller corpus's shards ({t1 / 1e6:.1f} M tokens, one per worker) are "
                           f"smaller than the budget allows ({t2 / 1e6:.1f} M at the larger size), so its peak is set "
                           "by the corpus, not the budget")
            else:
                verdict = "met" if a2 <= 1.2 * a1 else "missed"
            rows.append(f"| peak anon memory at `run.memory_budget={budget}`, {c1} → {c2} | within +20% | "
                        f"{what} | {verdict} |")
    big = [c for c in web if corp[c]["size"] >= 1e9]
    for c in big:
        s = S.get((c, bt))
        if s:
            lim = parse_size(budget) / 1e6
            fine = s["n"] > 0 and s["anon"] <= lim
            rows.append(f"| {c} under `run.memory_budget={budget}` | finishes, peak ≤ {lim:.0f} MB | "
                        f"{'finished' if s['n'] else 'failed'}, peak anon {cell(s['anon'], 0)} MB, RSS "
                        f"{cell(s['rss'], 0)} MB | {'met' if fine else 'missed'} |")
    # adversarial per byte
    for c in adv:
        ref = next((w for w in web if corp[w]["size"] == corp[c]["size"]), None)
        if not ref:
            continue
        for t in ["sadedup run", "sadedup build"]:
            x, y = g(c, t), g(ref, t)
            if x and y:
                per = (x / corp[c]["text_bytes"]) / (y / corp[ref]["text_bytes"])
                rows.append(f"| adversarial per byte, {t}: {c} vs {ref} | ≤ 2x | {per:.2f}x ({x:.2f} s vs {y:.2f} s) | "
                            f"{'met' if per <= 2 else 'missed'} |")
            elif S.get((c, t)) and S[(c, t)].get("wall_floor") and y:
                rows.append(f"| adversarial per byte, {t}: {c} vs {ref} | ≤ 2x | > {S[(c, t)]['wall_floor'] / y:.1f}x "
                            "(stopped) | missed |")
    L.append("| target | goal | measured | |")
    L.append("| --- | --- | --- | --- |")
    L.extend(rows)
    L.append("")
    # peers on adversarial input
    if adv:
        L.append("Per byte, adversarial corpus time / web time of the same size, every tool (a stopped run gives a "
                 "lower bound):")
        L.append("")
        L.append("| tool | " + " | ".join(adv) + " |")
        L.append("| --- | " + " | ".join("---:" for _ in adv) + " |")
        for t in TOOLS_ORDER:
            cells = []
            for c in adv:
                ref = next((w for w in web if corp[w]["size"] == corp[c]["size"]), None)
                s, y = S.get((c, t)), g(ref, t) if ref else None
                if s is None or not y:
                    cells.append("—")
                elif s["wall"]:
                    cells.append(f"{(s['wall'] / corp[c]['text_bytes']) / (y / corp[ref]['text_bytes']):.2f}x")
                elif s.get("wall_floor"):
                    cells.append(f"> {(s['wall_floor'] / corp[c]['text_bytes']) / (y / corp[ref]['text_bytes']):.1f}x")
                else:
                    cells.append("failed")
            if any(x != "—" for x in cells):
                L.append(f"| {t} | " + " | ".join(cells) + " |")
        L.append("")
    # ratios table
    L.append("Ratios, peer wall time / sadedup wall time (above 1: sadedup faster):")
    L.append("")
    L.append("| corpus | Lee single / sadedup run | Lee multi-part / sadedup run | infini-gram / sadedup build | "
             "raw SA+LCP / sadedup build | sadedup build / sadedup build (prefilter) | "
             "Lee single peak anon / sadedup run peak anon |")
    L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c in web + adv:
        sd, bd = g(c, "sadedup run"), g(c, "sadedup build")
        L.append(f"| {c} | {ratio(g(c, 'Lee single'), sd)} | {ratio(g(c, 'Lee multi-part'), sd)} | "
                 f"{ratio(g(c, 'infini-gram'), bd)} | {ratio(g(c, 'raw SA+LCP'), bd)} | "
                 f"{ratio(bd, g(c, 'sadedup build (prefilter)'))} | "
                 f"{ratio(g(c, 'Lee single', 'anon'), g(c, 'sadedup run', 'anon'))} |")
    L.append("")
    # where sadedup spends its time
    L.append("Where `sadedup run` spends its time (the last run on each corpus; `sadedup sql W \"select stage, "
             "shard, detail from stages\"`; stage seconds from the stage's own timer where it has one, else from "
             "started_at/finished_at, 1 s resolution):")
    L.append("")
    L.append("| corpus | shards | ingest | tokenize | candidates | candidate text % | build (SA / LCP summed over "
             "shards) | repeats (windows / merge) | remove | export | removed |")
    L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c, st in results["stages"].items():
        L.append(stage_row(c, st))
    L.append("")
    pre = [(c, S[(c, "sadedup build (prefilter)")]) for c in web + adv if S.get((c, "sadedup build (prefilter)"))]
    if pre:
        L.append("Inside *sadedup build (prefilter)* (its median run; `candidates` stage row, shard -1, and the `build` "
                 "rows): the candidate text is what the suffix arrays sort instead of all the shards' tokens.")
        L.append("")
        L.append("| corpus | wall s | candidates s (anchors / repeated / candidate text) | tokens | candidate tokens | "
                 "candidate text % | SA / LCP s (summed over shards) | sadedup build (full text) wall s |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for c, sm in pre:
            mr = sm.get("median_run") or {}
            cd = mr.get("candidates_detail") or {}
            bd = [d for d in mr.get("build_detail", []) if "sa_seconds" in d]
            if cd.get("seconds") is not None:
                a_s, r_s, t_s = cd.get("anchors_seconds", 0), cd.get("repeated_seconds", 0), cd["seconds"]
                csec = f"{t_s:.1f} ({a_s:.1f} / {r_s:.1f} / {t_s - a_s - r_s:.1f})"
            else:
                csec = "—"
            pct = (f"{cd['candidate_tokens'] / cd['tokens'] * 100:.1f}%" if cd.get("tokens") else "—")
            L.append(f"| {c} | {wall_str(sm)} | {csec} | {cd.get('tokens', 0):,} | {cd.get('candidate_tokens', 0):,} | "
                     f"{pct} | {sum(d['sa_seconds'] for d in bd):.1f} / {sum(d['lcp_seconds'] for d in bd):.1f} | "
                     f"{wall_str(S.get((c, 'sadedup build')))} |")
        L.append("")
    # sanity
    L.append("Sanity: " + sanity(results, web + adv))
    L.append("")
    L.append("Notes:")
    L.append("")
    chosen = {c: r["detail"]["shard_tokens"] for c, st in results["stages"].items() if "@" not in c
              for r in st if r["stage"] == "tokenize" and r.get("shard") == -1 and "shard_tokens" in r["detail"]}
    auto = max(chosen.values(), default=None)
    L.append("- *sadedup run* uses the default memory budget (`run.memory_budget=auto`, 40% of this machine's "
             "memory" + (f": shards of up to {auto / 1e6:.0f} M bytes" if auto else "") + ", and no more shards "
             "than workers when the text fits: " + ", ".join(f"{c} {v / 1e6:.1f} M" for c, v in chosen.items())
             + "; two built at once); *@" + budget + "* fixes it. *sadedup build (prefilter)*, *sadedup build* "
             "and *raw SA+LCP* work on the shards that run made, two processes at a time.")
    L.append("- Lee's multi-part route is not run at 1 GB: above 1e9 bytes its make_suffix_array.py starts 96 "
             "`make-part` jobs at once and merges 96 parts. Its route below 1 GB is 4 parts, built 4 at once.")
    L.append("- infini-gram runs `python -m infini_gram.indexing` (its v4 indexer; v6 imports transformers at "
             "start). Its step 1 (JSON to tokens) imports transformers even for bytes and fetches a Hugging Face "
             "tokenizer for anything else, so the script writes that step's output itself (untimed) and the "
             "indexer skips it; nothing is downloaded. It stops after the suffix array: no LCP, no duplicates.")
    L.append("- The *repeated* corpus is no harder than web text for Lee's tool: its separator carries the "
             "document's index (`\\xff\\xff` + 4 bytes), so copies of a document differ right after it and suffix "
             "comparisons end there. infini-gram's separator is a bare `\\xff`, so copies stay equal across "
             "documents and its merge (derived from Lee's) compares suffixes that long. sadedup's shards have no separators at all (windows are cut at document ends afterwards), so "
             "divsufsort sorts suffixes that share prefixes as long as a copy; it does not go quadratic.")
    L.append("- Lee's multi-part merge and infini-gram's merge compare whole suffixes; runs of one character make "
             "those comparisons thousands of bytes long.")
    spread = []
    for (c, t), sm in S.items():
        w = [r["wall"] for r in results["runs"] if r["corpus"] == c and r["tool"] == t and ok(r)]
        if len(w) >= 3:
            spread.append(max(w) / min(w))
    L.append("- The machine is shared (*others' cores*: other work's CPU during each run)"
             + (f"; between repeated runs of one command, the slowest took {min(spread):.2f}x to "
                f"{max(spread):.2f}x the fastest (median {statistics.median(spread):.2f}x)" if spread else "")
             + ". Single runs (1 GB, adversarial, the slow peers) carry that noise.")
    L.append("")
    L.append("![time vs corpus size](substring_time.png)")
    L.append("![peak memory vs corpus size](substring_memory.png)")
    return "\n".join(L)


def _secs(r: dict) -> float | None:
    d = r["detail"]
    if "seconds" in d:
        return float(d["seconds"])
    from datetime import datetime
    if r.get("started_at") and r.get("finished_at"):
        return (datetime.fromisoformat(r["finished_at"]) - datetime.fromisoformat(r["started_at"])).total_seconds()
    return None


def stage_row(c: str, st: list[dict]) -> str:
    top = {r["stage"]: r for r in st if r.get("shard") == -1}
    docs = next((r for r in st if r["stage"] == "_documents"), {})
    shards = [r for r in st if r["stage"] == "build" and r.get("shard", -1) >= 0]
    sa = sum(r["detail"].get("sa_seconds", 0) for r in shards)
    lcp = sum(r["detail"].get("lcp_seconds", 0) for r in shards)

    def s(name):
        return cell(_secs(top[name]), 1) if name in top and _secs(top[name]) is not None else "—"

    rep = top.get("repeats", {}).get("detail", {})

    def num(x):
        return "—" if x is None else f"{float(x):.1f}"
    rm = (f"{docs['removed_tokens'] / docs['tokens'] * 100:.1f}%" if docs.get("tokens") else "—")
    cd = top.get("candidates", {}).get("detail", {})
    cand = (f"{cd['candidate_tokens'] / cd['tokens'] * 100:.1f}%" if cd.get("tokens") and "candidate_tokens" in cd
            else "—")
    return (f"| {c} | {len(shards)} | {s('ingest')} | {s('tokenize')} | {s('candidates')} | {cand} | "
            f"{s('build')} ({sa:.1f} / {lcp:.1f}) | "
            f"{s('repeats')} ({num(rep.get('windows_seconds'))} / {num(rep.get('merge_seconds'))}) | {s('remove')} | "
            f"{s('export')} | {rm} |")


def sanity(results: dict, names: list[str]) -> str:
    out = []
    for c in names:
        rs = [r for r in results["runs"] if r["corpus"] == c]
        lee = {r["tool"]: r["collect"] for r in rs if ok(r) and "collect" in r}
        sd = next((r for r in rs if r["tool"] == "sadedup run" and ok(r) and r.get("tokens")), None)
        bits = []
        if sd:
            bits.append(f"sadedup removed {sd['removed_tokens'] / sd['tokens'] * 100:.1f}% of the bytes (keep=first)")
        if "Lee single" in lee:
            bits.append(f"Lee's collect {lee['Lee single']['bytes'] / results['corpora'][c]['lee_bytes'] * 100:.1f}% "
                        "of its file (every copy struck, boundary windows)")
        if "Lee single" in lee and "Lee multi-part" in lee:
            bits.append("multi-part route's ranges " + ("identical to" if lee["Lee single"] == lee["Lee multi-part"]
                                                         else "DIFFERENT from") + " the single-file route's")
        if bits:
            out.append(f"{c}: " + ", ".join(bits))
    return "; ".join(out) + ". (Byte-for-byte agreement with Lee is bench/compare_lee.py's job.)"


def parse_size(s: str) -> int:
    return corpora.parse_size(s)


def plots(results: dict, meta: dict, outdir: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    S = summarize(results)
    corp = results["corpora"]
    web = sorted([c for c, i in corp.items() if i["kind"] == "web" and not c.startswith("u16")],
                 key=lambda c: corp[c]["size"])
    budget = meta.get("budget", "2GB")
    tools = [t.replace("@2GB", f"@{budget}") for t in TOOLS_ORDER]
    label = {"sadedup run": "sadedup run (auto budget)"}
    style = {"sadedup run": ("C0", "o", "-"), f"sadedup run @{budget}": ("C0", "s", "--"),
             "sadedup build (prefilter)": ("C2", "<", "--"), "sadedup build": ("C2", "^", "-"), "raw SA+LCP": ("C7", "v", ":"), "Lee single": ("C3", "D", "-"),
             "Lee multi-part": ("C1", "P", "--"), "infini-gram": ("C4", "X", "-.")}
    paths = []
    for key, ylabel, fname in [("wall", "wall time, s (median)", "substring_time.png"),
                               ("anon", "peak anonymous memory of the process tree, MB", "substring_memory.png")]:
        fig, ax = plt.subplots(figsize=(7.5, 5))
        for t in tools:
            xs, ys = [], []
            for c in web:
                s = S.get((c, t))
                if s and s[key]:
                    xs.append(corp[c]["text_bytes"] / MB)
                    ys.append(s[key])
            if xs:
                col, mk, ls = style.get(t, ("k", "o", "-"))
                ax.plot(xs, ys, marker=mk, linestyle=ls, color=col, label=label.get(t, t))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("corpus size, MB of UTF-8 text (synthetic web pages, bench/corpora.py)")
        ax.set_ylabel(ylabel)
        if key == "anon":
            ax.axhline(parse_size(budget) / MB, color="C0", linewidth=0.8, alpha=0.5)
            ax.text(ax.get_xlim()[0] * 1.05, parse_size(budget) / MB * 1.05, f"run.memory_budget={budget}",
                    color="C0", fontsize=8)
        ax.set_xticks([corp[c]["text_bytes"] / MB for c in web])
        ax.set_xticklabels([c.split("-", 1)[1] for c in web])
        ax.minorticks_off()
        ax.grid(True, which="major", alpha=0.3)
        ax.set_title(f"Substring stage: sadedup vs peers ({meta['threads']} threads, {meta['date']})", fontsize=10)
        ax.legend(fontsize=8)
        fig.tight_layout()
        p = outdir / fname
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    return paths


def write_section(md: str) -> None:
    path = REPO / "bench" / "RESULTS.md"
    text = path.read_text()
    section = "\n".join([SECTION_BEGIN, "## Substring stage: sadedup vs peers", "", md, SECTION_END])
    if SECTION_BEGIN in text and SECTION_END in text:
        text = text[: text.index(SECTION_BEGIN)] + section + text[text.index(SECTION_END) + len(SECTION_END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


# ---------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--raw-worker":
        rest = argv[1:]
        threads = 1
        if "--threads" in rest:
            i = rest.index("--threads")
            threads = int(rest[i + 1])
            rest = rest[:i] + rest[i + 2:]
        raw_worker(rest[0], rest[1:], threads)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--scratch", type=Path, default=Path("/work/ext/bench/substring"))
    ap.add_argument("--sizes", default="64MB,256MB,1GB", help="web corpus sizes (text bytes)")
    ap.add_argument("--adversarial", default="repeated,runs", help="adversarial kinds ('' for none)")
    ap.add_argument("--adversarial-size", default="64MB")
    ap.add_argument("--u16-sizes", default="64MB,256MB", help="sizes for the uint16-token comparison ('' for none)")
    ap.add_argument("--u16-tokenizer", default="train:bpe:32000")
    ap.add_argument("--repeat", type=int, default=3, help="runs per tool on corpora under 100 MB (and uint16)")
    ap.add_argument("--repeat-mid", type=int, default=1, help="runs per tool on corpora of 100 MB to 1 GB")
    ap.add_argument("--repeat-large", type=int, default=1, help="runs per tool on corpora of 1 GB and more")
    ap.add_argument("--repeat-slow", type=int, default=1,
                    help="at most this many runs of the slow ones: Lee multi-part, infini-gram, sadedup @budget")
    ap.add_argument("--repeat-adversarial", type=int, default=1)
    ap.add_argument("--budget", default="2GB", help="fixed memory budget of the 'sadedup run @budget' rows")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tools", default="sadedup,prefilter,build,raw,budget,lee,lee-multi,infini")
    ap.add_argument("--lee-bin", default=os.environ.get("LEE_BIN",
                                                        "/work/ext/deduplicate-text-datasets/target/release/dedup_dataset"))
    ap.add_argument("--lee-multi-max", default="256MB", help="largest corpus for Lee's multi-part route")
    ap.add_argument("--infini-max", default="256MB", help="largest corpus for infini-gram (1GB: ~5 more minutes)")
    ap.add_argument("--infini-mem", type=int, default=9, help="infini-gram's --mem in GiB (sadedup's auto budget "
                                                              "is 40%% of memory)")
    ap.add_argument("--sadedup", default=None, help="sadedup command (default: this Python's sadedup package)")
    ap.add_argument("--sadedup-commit", default=None,
                    help="commit a pinned --sadedup install was made from (recorded instead of this repository's HEAD)")
    ap.add_argument("--timeout", type=float, default=1800, help="per command, on web corpora")
    ap.add_argument("--adv-timeout-factor", type=float, default=2.5)
    ap.add_argument("--quiet-wait", type=float, default=15,
                    help="before each timed command, wait up to this long for other work to settle (0: never)")
    ap.add_argument("--import-retries", type=int, default=10,
                    help="retries, a minute apart, of a sadedup command that fails to import (ongoing edits)")
    ap.add_argument("--write", action="store_true", help="rewrite the section of bench/RESULTS.md and the plots")
    ap.add_argument("--report-only", action="store_true", help="no runs: report from --scratch/results.json")
    ap.add_argument("--append", action="store_true",
                    help="add this run's measurements to --scratch/results.json instead of starting afresh")
    a = ap.parse_args(argv)
    global SADEDUP_COMMIT
    SADEDUP_COMMIT = a.sadedup_commit
    a.scratch = a.scratch.resolve()
    a.scratch.mkdir(parents=True, exist_ok=True)
    a.tools = set(t.strip() for t in a.tools.split(",") if t.strip())
    a.lee_bin = str(Path(a.lee_bin).resolve())
    a.lee_multi_max = parse_size(a.lee_multi_max)
    a.infini_max = parse_size(a.infini_max)
    if ("lee" in a.tools or "lee-multi" in a.tools) and not Path(a.lee_bin).exists():
        ap.error(f"Lee et al.'s dedup_dataset not found at {a.lee_bin}: pass --lee-bin or LEE_BIN, or drop lee from --tools")

    if a.report_only:
        saved = json.loads((a.scratch / "results.json").read_text())
        results, meta = saved, saved["meta"]
    else:
        b = Bench(a)
        try:
            import importlib.metadata as im
            ig_version = im.version("infini-gram")
        except Exception:
            ig_version = "not installed"
        meta = {"command": shlex.join(["python", "bench/bench_substring.py", *argv]), "date": time.strftime("%Y-%m-%d"),
                "commit": sadedup_commit(), "threads": a.threads,
                "load_before": os.getloadavg()[0], "budget": a.budget, "infini_version": ig_version,
                "u16_tokenizer": a.u16_tokenizer}
        if a.append and (a.scratch / "results.json").exists():
            old = json.loads((a.scratch / "results.json").read_text())
            for k in ("runs", "corpora", "stages", "checks"):
                if isinstance(old.get(k), list):
                    b.results[k] = old[k] + b.results[k]
                elif isinstance(old.get(k), dict):
                    b.results[k] = {**old[k], **b.results[k]}
            meta["command"] = old["meta"]["command"] + "; then " + meta["command"]
            meta["load_before"] = old["meta"]["load_before"]
        b.results["meta"] = meta
        t0 = time.perf_counter()
        sizes = [parse_size(s) for s in a.sizes.split(",") if s.strip()]
        for size in sizes:
            reps = a.repeat_large if size >= 10**9 else a.repeat_mid if size >= 10**8 else a.repeat
            b.run_corpus("web", size, reps, min(reps, a.repeat_slow), None)
        for kind in [k.strip() for k in a.adversarial.split(",") if k.strip()]:
            size = parse_size(a.adversarial_size)
            ref = f"web-{fmt_size(size)}" if size in sizes else None
            b.run_corpus(kind, size, a.repeat_adversarial, min(a.repeat_adversarial, a.repeat_slow), ref)
        for s in [x for x in a.u16_sizes.split(",") if x.strip()]:
            b.run_u16(parse_size(s), a.repeat)
        meta["load_after"] = os.getloadavg()[0]
        meta["total_seconds"] = round(time.perf_counter() - t0, 1)
        b.save()
        results = b.results
        print(f"total {meta['total_seconds']:.0f} s", flush=True)
    md = report(results, meta)
    print(md)
    if a.write:
        plots(results, meta, REPO / "bench")
        write_section(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
