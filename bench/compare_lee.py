"""Compare sadedup's substring dedup with Lee et al.'s deduplicate-text-datasets, byte for byte,
and time both on the same corpus.

    LEE_BIN=/path/to/dedup_dataset python bench/compare_lee.py corpus.jsonl [-L 100] [--threads N]
        [--work DIR] [--json results.json] [--repeat N]

This script only *runs* an externally built `dedup_dataset` binary (github
google-research/deduplicate-text-datasets, built outside this repository); give its path with
--lee-bin or the LEE_BIN environment variable. It never builds or vendors the tool.

What it does
------------
1. Reads the JSONL corpus the way sadedup does (BOM ignored, blank lines skipped; rows that
   sadedup would set aside as input errors -- invalid JSON, missing or non-string text,
   unpaired surrogates -- are skipped here too) and writes the tool's byte file as its
   `scripts/load_dataset.py` does: for the k-th document (k = 1, 2, ...)
   ``b"\\xff\\xff" + struct.pack("<I", k) + utf8(text)``, all concatenated, no trailing
   separator.
2. Runs the tool: ``make --data-file F``, ``self-similar --data-file F --length-threshold L
   --cache-dir C --num-threads T``, ``collect --data-file F --cache-dir C --length-threshold L``
   (stdout: the byte ranges [a, b) of F to remove, after a line ``out``).
3. Runs ``sadedup run --set stages=substring --set substring.keep=none --set
   substring.drop_fraction=1.0 --set substring.min_length=L --input corpus --output ...
   --workdir ... --workers T`` and reads ``spans(doc_id, tok_start, tok_end)`` from
   ``<workdir>/sadedup.db`` (byte offsets for the bytes tokenizer).
4. Compares the removed byte sets, document by document, and prints wall time, CPU time and
   peak memory of both, with ratios.

The exclusion: windows that touch a document boundary
------------------------------------------------------
Lee's tool sees one byte string F; a "window" is the L bytes of F at any position p, and it
is removed when the same L bytes occur at another position of F. sadedup's windows never
leave a document (DESIGN.md "Substring semantics"). The difference is exactly the windows of
F that are not contained in one document's text bytes, i.e. that overlap a separator:

- a document's tail running into the next separator: the last k < L bytes of document d plus
  the first L-k bytes of ``\\xff\\xff<index>``. Two documents ending with the same k bytes
  (a shared sign-off shorter than L) match there, since the separators share their
  ``\\xff\\xff`` and often the index's low byte;
- a separator running into a document's head: the last bytes of the 4-byte little-endian
  index (``\\x00\\x00\\x00`` for every index < 256, ``\\x00\\x00`` below 65536) plus the first
  L-j bytes of the document. Two documents starting with the same L-j bytes match there.
  (In this format the separator comes *before* each document, so a document's start borders
  a separator too: the issue's "windows that touch a document's end" covers both ends.);
- a window over a whole short document, separator bytes on both sides.

Such a *boundary window* covers only bytes among the first L-1 or the last L-1 bytes of a
document. A window that lies inside one document (an *inside window*) is what sadedup calls a
window. So the checks are:

- ``[strict]`` sadedup's removed bytes == the union of Lee's inside windows that Lee found
  duplicated, for every document, byte for byte. This is the acceptance check. Lee's windows
  are read from the tool's own ``dups_*`` files in the cache dir (every matched position;
  `collect` only merges them into ranges).
- ``[sanity]`` the union of all windows in the ``dups_*`` files == `collect`'s ranges (so the
  windows were read right).
- ``[boundary]`` `collect`'s ranges restricted to document bytes minus sadedup's removed
  bytes: every such byte must be covered by a boundary window and lie among the first or last
  L-1 bytes of its document; sadedup must remove nothing that `collect` keeps. Reported as
  counts and examples (these are the by-design differences).

Why inside windows must agree exactly: an inside window holds UTF-8 text, which has no
``\\xff`` byte; if the text also has no NUL byte (the script counts documents that do) and
there are fewer than 2**24 documents (so every index has a ``\\x00`` high byte), no other
occurrence of it can overlap a separator, so its other occurrences are inside windows too:
Lee strikes it exactly when sadedup's ``keep="none"`` does. (The tool's `self-similar` also
skips the last few suffix-array entries -- about T of them -- which are suffixes starting with
``\\xff``, i.e. separators; that matters only with fewer documents than threads.)

Timing and memory
-----------------
Each command runs as a child process; wall time, CPU time (user+sys of the child and its
reaped descendants), and peak memory of the whole process tree, sampled from /proc every
20 ms: the sum of VmRSS (includes memory-mapped file pages) and the sum of RssAnon (anonymous
memory only; mapped file pages are page cache) over the tree. Lee's "core" time is make +
self-similar + collect (files on disk in, ranges on disk out); the conversion of the JSONL to
its byte file is reported separately ("prep", done in this script). sadedup's time is the whole
`sadedup run` (JSONL in, JSONL + database out). Both get the same number of threads.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shlex
import shutil
import sqlite3
import statistics
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, asdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proctree import children_map, descendants, mem_kb  # noqa: E402

BOM = b"\xef\xbb\xbf"


# --- process-tree measurement ------------------------------------------------------------

@dataclass
class Measure:
    name: str
    cmd: list[str]
    wall: float = 0.0
    cpu: float = 0.0
    peak_rss_mb: float = 0.0
    peak_anon_mb: float = 0.0
    maxrss_mb: float = 0.0      # ru_maxrss from wait4: the largest single process of the tree
    returncode: int = 0


def measure(name: str, cmd: list[str], stdout=None, stderr=None, env=None, interval: float = 0.02) -> Measure:
    m = Measure(name, [str(c) for c in cmd])
    t0 = time.perf_counter()
    p = subprocess.Popen(m.cmd, stdout=stdout, stderr=stderr, env=env)
    peak = [0, 0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            rss = anon = 0
            for q in descendants(p.pid, children_map()):
                r, a = mem_kb(q)
                rss += r
                anon += a
            peak[0] = max(peak[0], rss)
            peak[1] = max(peak[1], anon)
            done.wait(interval)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    _, status, ru = os.wait4(p.pid, 0)
    m.wall = time.perf_counter() - t0
    done.set()
    th.join()
    p.returncode = os.waitstatus_to_exitcode(status)
    m.returncode = p.returncode
    m.cpu = ru.ru_utime + ru.ru_stime
    m.maxrss_mb = ru.ru_maxrss / 1024
    m.peak_rss_mb = peak[0] / 1024
    m.peak_anon_mb = peak[1] / 1024
    if m.returncode != 0:
        raise SystemExit(f"{name} failed (exit {m.returncode}): {' '.join(m.cmd)}")
    return m


# --- corpus -> Lee's byte file -----------------------------------------------------------

def read_docs(path: Path, text_field: str = "text"):
    """Yields the UTF-8 bytes of each document sadedup would accept, in input order."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        for row, line in enumerate(f, 1):
            if row == 1 and line.startswith(BOM):
                line = line[len(BOM):]
            line = line.rstrip(b"\r\n")
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                text = obj[text_field]
                if not isinstance(text, str):
                    raise TypeError
                yield text.encode("utf-8")
            except (ValueError, KeyError, TypeError, UnicodeEncodeError):
                continue   # sadedup puts it in input_errors


def write_lee_file(corpus: Path, out: Path, text_field: str) -> tuple[np.ndarray, np.ndarray, int]:
    """Writes the tool's format; returns (doc start offsets in F, doc lengths, #docs with NUL)."""
    starts, lens, nul = [], [], 0
    pos = 0
    with open(out, "wb", buffering=1 << 20) as f:
        for k, b in enumerate(read_docs(corpus, text_field), 1):
            sep = b"\xff\xff" + struct.pack("<I", k)
            f.write(sep)
            f.write(b)
            pos += len(sep)
            starts.append(pos)
            lens.append(len(b))
            pos += len(b)
            nul += b"\x00" in b
    return np.array(starts, dtype=np.int64), np.array(lens, dtype=np.int64), nul


# --- interval / mask helpers -------------------------------------------------------------

def merge(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint, non-touching intervals covering the union of [s, e)."""
    if len(s) == 0:
        return s.astype(np.int64), e.astype(np.int64)
    o = np.argsort(s, kind="stable")
    s, e = s[o].astype(np.int64), e[o].astype(np.int64)
    run_end = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > run_end[:-1]
    idx = np.flatnonzero(new)
    ends = np.append(idx[1:] - 1, len(s) - 1)
    return s[idx], run_end[ends]


def mask_of(s: np.ndarray, e: np.ndarray, n: int) -> np.ndarray:
    s, e = merge(s, e)
    keep = e > s
    s, e = s[keep], e[keep]
    d = np.zeros(n + 1, dtype=np.int8)
    d[s] = 1
    d[e] = -1
    return np.cumsum(d[:n], dtype=np.int8).astype(bool)


def runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d = np.diff(mask.astype(np.int8), prepend=0, append=0)
    return np.flatnonzero(d == 1), np.flatnonzero(d == -1)


def read_dups(cache: Path, name: str, width: int) -> np.ndarray:
    parts = []
    for p in sorted(cache.glob(f"dups_{name}_*")):
        raw = np.fromfile(p, dtype=np.uint8)
        assert len(raw) % width == 0, p
        b = np.zeros((len(raw) // width, 8), dtype=np.uint8)
        b[:, :width] = raw.reshape(-1, width)
        parts.append(b.view("<u8").ravel())
    return np.unique(np.concatenate(parts)).astype(np.int64) if parts else np.zeros(0, np.int64)


def read_collect(path: Path) -> tuple[np.ndarray, np.ndarray]:
    s, e = [], []
    with open(path) as f:
        for line in f:
            if line.strip() == "out":
                break
        for line in f:
            a, b = line.split()
            s.append(int(a))
            e.append(int(b))
    return np.array(s, dtype=np.int64), np.array(e, dtype=np.int64)


# --- the comparison ----------------------------------------------------------------------

@dataclass
class Result:
    corpus: str
    n_docs: int
    text_bytes: int
    L: int
    threads: int
    docs_with_nul: int
    load_before: list = field(default_factory=list)
    load_after: list = field(default_factory=list)
    lee: dict = field(default_factory=dict)
    sadedup: dict = field(default_factory=dict)
    checks: dict = field(default_factory=dict)
    examples: dict = field(default_factory=dict)


class Layout:
    def __init__(self, starts: np.ndarray, lens: np.ndarray, data: np.ndarray):
        self.starts, self.lens, self.data = starts, lens, data
        self.ends = starts + lens

    def doc_of(self, pos: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.starts, pos, side="right") - 1

    def where(self, pos: int) -> str:
        d = int(self.doc_of(np.array([pos]))[0])
        if d < 0 or pos >= self.ends[d]:
            return f"separator before doc {d + 1}"
        return f"doc {d} byte {pos - self.starts[d]}"

    def snippet(self, a: int, b: int, ctx: int = 30) -> str:
        d = int(self.doc_of(np.array([a]))[0])
        lo, hi = max(self.starts[d], a - ctx), min(self.ends[d], b + ctx)
        raw = bytes(self.data[lo:a]) + b"[[" + bytes(self.data[a:b]) + b"]]" + bytes(self.data[b:hi])
        return raw.decode("utf-8", "replace")

    def occurrences(self, window: bytes, limit: int = 4) -> list[str]:
        if not hasattr(self, "_bytes"):
            self._bytes = self.data.tobytes()
        buf = self._bytes
        out, i = [], buf.find(window)
        while i >= 0 and len(out) < limit:
            out.append(self.where(i))
            i = buf.find(window, i + 1)
        return out


def region_examples(lay: Layout, mask: np.ndarray, limit: int, why) -> list[dict]:
    s, e = runs(mask)
    out = []
    for a, b in zip(s[:limit], e[:limit]):
        d = int(lay.doc_of(np.array([a]))[0])
        ex = {"doc_id": d, "doc_bytes": [int(a - lay.starts[d]), int(b - lay.starts[d])],
              "doc_len": int(lay.lens[d]), "text": lay.snippet(int(a), int(b))}
        ex.update(why(int(a), int(b), d))
        out.append(ex)
    return out


def compare(args, work: Path) -> Result:
    corpus = args.corpus.resolve()
    L, T = args.L, args.threads
    lee_dir = work / "lee"
    shutil.rmtree(lee_dir, ignore_errors=True)
    lee_dir.mkdir(parents=True)
    data_file = lee_dir / "corpus.bin"
    cache = lee_dir / "cache"

    t0 = time.perf_counter()
    starts, lens, nul = write_lee_file(corpus, data_file, args.text_field)
    prep = time.perf_counter() - t0
    n = data_file.stat().st_size
    res = Result(str(corpus), len(starts), int(lens.sum()), L, T, nul, list(os.getloadavg()))
    if nul:
        print(f"warning: {nul} documents contain NUL bytes: inside windows may then match across "
              "separators, and [strict] can differ for that reason", file=sys.stderr)
    print(f"corpus: {len(starts)} documents, {int(lens.sum())} text bytes; Lee file {n} bytes "
          f"(prep {prep:.2f}s); L={L}, threads={T}", file=sys.stderr)

    lee_bin = args.lee_bin
    sad_cmd = shlex.split(args.sadedup)
    lee_runs, sad_runs = [], []
    for rep in range(args.repeat):
        # --- Lee et al. ---
        for p in lee_dir.glob("corpus.bin.*"):
            p.unlink()
        shutil.rmtree(cache, ignore_errors=True)
        with open(lee_dir / "make.log", "w") as log:
            mk = measure("make", [lee_bin, "make", "--data-file", data_file], stdout=log, stderr=subprocess.STDOUT)
        with open(lee_dir / "self_similar.log", "w") as log:
            ss = measure("self-similar", [lee_bin, "self-similar", "--data-file", data_file, "--length-threshold", L,
                                          "--cache-dir", cache, "--num-threads", T], stdout=log, stderr=subprocess.STDOUT)
        with open(lee_dir / "collect.txt", "w") as out, open(lee_dir / "collect.log", "w") as log:
            co = measure("collect", [lee_bin, "collect", "--data-file", data_file, "--cache-dir", cache,
                                     "--length-threshold", L], stdout=out, stderr=log)
        lee_runs.append([mk, ss, co])
        # --- sadedup ---
        sad_work = work / "sadedup"
        shutil.rmtree(sad_work, ignore_errors=True)
        sad_out = work / "sadedup_out.jsonl"
        with open(work / "sadedup.log", "w") as log:
            sd = measure("sadedup run", sad_cmd + [
                "run", "--set", "stages=substring", "--set", "substring.keep=none",
                "--set", "substring.drop_fraction=1.0", "--set", f"substring.min_length={L}",
                *[x for kv in args.set for x in ("--set", kv)],
                "--input", corpus, "--output", sad_out, "--workdir", sad_work, "--workers", T],
                stdout=log, stderr=subprocess.STDOUT)
        sad_runs.append(sd)
        print(f"run {rep + 1}/{args.repeat}: lee make {mk.wall:.2f}s self-similar {ss.wall:.2f}s "
              f"collect {co.wall:.2f}s | sadedup {sd.wall:.2f}s", file=sys.stderr)

    res.load_after = list(os.getloadavg())

    def med(xs):
        return statistics.median(xs)

    lee_steps = {}
    for i, step in enumerate(["make", "self-similar", "collect"]):
        ms = [r[i] for r in lee_runs]
        lee_steps[step] = {"wall": med([m.wall for m in ms]), "cpu": med([m.cpu for m in ms]),
                           "peak_rss_mb": max(m.peak_rss_mb for m in ms),
                           "peak_anon_mb": max(m.peak_anon_mb for m in ms),
                           "maxrss_mb": max(m.maxrss_mb for m in ms), "cmd": " ".join(ms[0].cmd)}
    res.lee = {"steps": lee_steps, "prep_wall": prep,
               "wall": med([sum(m.wall for m in r) for r in lee_runs]),
               "cpu": med([sum(m.cpu for m in r) for r in lee_runs]),
               "peak_rss_mb": max(v["peak_rss_mb"] for v in lee_steps.values()),
               "peak_anon_mb": max(v["peak_anon_mb"] for v in lee_steps.values())}
    res.sadedup = {"wall": med([m.wall for m in sad_runs]), "cpu": med([m.cpu for m in sad_runs]),
                   "peak_rss_mb": max(m.peak_rss_mb for m in sad_runs),
                   "peak_anon_mb": max(m.peak_anon_mb for m in sad_runs),
                   "maxrss_mb": max(m.maxrss_mb for m in sad_runs), "cmd": " ".join(sad_runs[0].cmd)}

    # --- Lee's result ---
    width = (data_file.parent / (data_file.name + ".table.bin")).stat().st_size // n
    P = read_dups(cache, data_file.name, width)
    cs, ce = read_collect(lee_dir / "collect.txt")
    data = np.fromfile(data_file, dtype=np.uint8)
    lay = Layout(starts, lens, data)
    d = lay.doc_of(P)
    inside = (d >= 0) & (P + L <= lay.ends[np.maximum(d, 0)])
    Pin, Pb = P[inside], P[~inside]
    lee_in = mask_of(Pin, Pin + L, n)
    lee_bd = mask_of(Pb, Pb + L, n)
    lee_all = mask_of(cs, ce, n)
    docmask = mask_of(starts, lay.ends, n)

    # --- sadedup's result ---
    db = work / "sadedup" / "sadedup.db"
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    docs = np.array(con.execute("SELECT doc_id, n_tokens FROM documents ORDER BY doc_id").fetchall(),
                    dtype=np.int64).reshape(-1, 2)
    sp = np.array(con.execute("SELECT doc_id, tok_start, tok_end FROM spans").fetchall(),
                  dtype=np.int64).reshape(-1, 3)
    n_dropped = con.execute("SELECT count(*) FROM documents WHERE status != 'kept'").fetchone()[0]
    con.close()
    if len(docs) != len(starts) or not np.array_equal(docs[:, 0], np.arange(len(starts))) \
            or not np.array_equal(docs[:, 1], lens):
        raise SystemExit("sadedup's documents table does not line up with the corpus as read here "
                         f"({len(docs)} vs {len(starts)} documents)")
    sad = mask_of(starts[sp[:, 0]] + sp[:, 1], starts[sp[:, 0]] + sp[:, 2], n)

    # --- checks ---
    c = {}
    c["sanity_dups_union_equals_collect"] = bool(np.array_equal(lee_all, lee_in | lee_bd))
    c["lee_windows"] = int(len(P))
    c["lee_inside_windows"] = int(len(Pin))
    c["lee_boundary_windows"] = int(len(Pb))
    c["sadedup_spans"] = int(len(sp))
    c["sadedup_dropped_docs"] = int(n_dropped)
    c["bytes_removed_sadedup"] = int(sad.sum())
    c["bytes_removed_lee_inside"] = int(lee_in.sum())
    c["bytes_removed_lee_collect_in_docs"] = int((lee_all & docmask).sum())
    only_lee = lee_in & ~sad
    only_sad = sad & ~lee_in
    c["strict_only_lee_bytes"] = int(only_lee.sum())
    c["strict_only_sadedup_bytes"] = int(only_sad.sum())
    c["strict_identical"] = not only_lee.any() and not only_sad.any()
    dd = lay.doc_of(np.flatnonzero(only_lee | only_sad)) if not c["strict_identical"] else np.zeros(0, np.int64)
    c["strict_docs_differing"] = int(len(np.unique(dd)))
    # boundary: collect (on document bytes) vs sadedup
    raw_only_lee = lee_all & docmask & ~sad
    raw_only_sad = sad & ~lee_all
    c["boundary_only_lee_bytes"] = int(raw_only_lee.sum())
    c["boundary_only_sadedup_bytes"] = int(raw_only_sad.sum())
    pos = np.flatnonzero(raw_only_lee)
    dpos = lay.doc_of(pos)
    off = pos - starts[dpos]
    near_edge = (off < L - 1) | (off >= lens[dpos] - (L - 1))
    c["boundary_bytes_all_covered_by_boundary_windows"] = bool(lee_bd[pos].all())
    c["boundary_bytes_all_within_L-1_of_doc_edge"] = bool(near_edge.all())
    c["boundary_docs_differing"] = int(len(np.unique(dpos)))
    c["boundary_docs_head"] = int(len(np.unique(dpos[off < L - 1])))
    c["boundary_docs_tail"] = int(len(np.unique(dpos[off >= lens[dpos] - (L - 1)])))
    c["boundary_ok"] = (c["boundary_bytes_all_covered_by_boundary_windows"]
                        and c["boundary_bytes_all_within_L-1_of_doc_edge"] and not raw_only_sad.any())
    res.checks = c

    # --- examples ---
    def why_lee(a, b, d):
        kind = "inside"
        w = Pin[(Pin <= a) & (Pin + L > a)][:1]
        if not len(w):
            kind = "boundary"
            w = Pb[(Pb <= a) & (Pb + L > a)][:1]
        if not len(w):
            return {}
        p = int(w[0])
        win = bytes(data[p:p + L])
        return {"lee_window": f"{kind} window at {lay.where(p)}", "window_occurs_at": lay.occurrences(win)}

    def why_sad(a, b, d):
        return {"window_at_span_start_occurs_at": lay.occurrences(bytes(data[a:a + L]))}

    k = args.examples
    res.examples = {
        "strict_only_lee": region_examples(lay, only_lee, k, why_lee),
        "strict_only_sadedup": region_examples(lay, only_sad, k, why_sad),
        "boundary_only_lee": region_examples(lay, raw_only_lee, k, why_lee),
        "boundary_only_sadedup": region_examples(lay, raw_only_sad, k, why_sad),
    }
    return res


def report(res: Result) -> str:
    c, lee, sd = res.checks, res.lee, res.sadedup
    lines = [f"# {res.corpus}: {res.n_docs} documents, {res.text_bytes / 1e6:.1f} MB text, "
             f"L={res.L}, threads={res.threads}"]
    lines.append(f"[sanity]   dups_* windows == collect ranges: {c['sanity_dups_union_equals_collect']} "
                 f"({c['lee_windows']} windows: {c['lee_inside_windows']} inside documents, "
                 f"{c['lee_boundary_windows']} touching a boundary)")
    verdict = "IDENTICAL" if c["strict_identical"] else "DIFFERENT"
    lines.append(f"[strict]   sadedup vs Lee's inside windows: {verdict}: {c['bytes_removed_sadedup']} bytes removed "
                 f"by sadedup ({c['sadedup_spans']} spans), {c['bytes_removed_lee_inside']} by Lee; "
                 f"only Lee {c['strict_only_lee_bytes']}, only sadedup {c['strict_only_sadedup_bytes']}, "
                 f"documents differing {c['strict_docs_differing']}")
    lines.append(f"[boundary] collect (document bytes) vs sadedup: only Lee {c['boundary_only_lee_bytes']} bytes in "
                 f"{c['boundary_docs_differing']} documents ({c['boundary_docs_head']} at a head, "
                 f"{c['boundary_docs_tail']} at a tail), only sadedup {c['boundary_only_sadedup_bytes']}; "
                 f"all from boundary windows: {c['boundary_bytes_all_covered_by_boundary_windows']}; "
                 f"all within L-1 of a document edge: {c['boundary_bytes_all_within_L-1_of_doc_edge']}")
    for key, title in [("strict_only_lee", "strict: removed by Lee only"),
                       ("strict_only_sadedup", "strict: removed by sadedup only"),
                       ("boundary_only_sadedup", "boundary: removed by sadedup, kept by collect"),
                       ("boundary_only_lee", "boundary (by design): removed by collect only")]:
        exs = res.examples.get(key) or []
        if exs:
            lines.append(f"  examples, {title}:")
            for ex in exs:
                lines.append("    " + json.dumps(ex, ensure_ascii=False))
    st = lee["steps"]
    lines.append("timings (wall s / cpu s / peak tree RSS MB / peak tree anon MB); load average before "
                 f"{res.load_before[0]:.2f}, after {res.load_after[0]:.2f} (1 min; other work on the machine skews times):")
    for k, v in st.items():
        lines.append(f"  lee {k:13s} {v['wall']:8.2f} {v['cpu']:8.2f} {v['peak_rss_mb']:9.0f} {v['peak_anon_mb']:9.0f}")
    lines.append(f"  lee core      {lee['wall']:12.2f} {lee['cpu']:8.2f} {lee['peak_rss_mb']:9.0f} {lee['peak_anon_mb']:9.0f}"
                 f"   (+ prep, JSONL -> byte file in Python: {lee['prep_wall']:.2f}s)")
    lines.append(f"  sadedup run   {sd['wall']:12.2f} {sd['cpu']:8.2f} {sd['peak_rss_mb']:9.0f} {sd['peak_anon_mb']:9.0f}")
    lines.append(f"ratios (Lee / sadedup): wall {lee['wall'] / sd['wall']:.2f}x "
                 f"(with prep {(lee['wall'] + lee['prep_wall']) / sd['wall']:.2f}x), cpu {lee['cpu'] / sd['cpu']:.2f}x, "
                 f"peak RSS {lee['peak_rss_mb'] / sd['peak_rss_mb']:.2f}x, "
                 f"peak anon {lee['peak_anon_mb'] / max(sd['peak_anon_mb'], 1e-9):.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("corpus", type=Path, help="JSONL (or .jsonl.gz) corpus")
    ap.add_argument("-L", "--length", dest="L", type=int, default=100, help="window length in bytes (default 100)")
    ap.add_argument("--lee-bin", default=os.environ.get("LEE_BIN"),
                    help="path of the built dedup_dataset binary (default: $LEE_BIN)")
    ap.add_argument("--sadedup", default="sadedup", help="sadedup command (default: sadedup)")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="extra sadedup --set, e.g. substring.shard_tokens=8000000 (many shards); repeatable")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="threads for both tools (default: all cores)")
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temp folder, removed after)")
    ap.add_argument("--text-field", default="text")
    ap.add_argument("--repeat", type=int, default=1, help="time each tool N times, report medians")
    ap.add_argument("--examples", type=int, default=5, help="examples per kind of difference")
    ap.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = ap.parse_args(argv)
    if not args.lee_bin:
        ap.error("give the dedup_dataset binary with --lee-bin or LEE_BIN")
    args.lee_bin = str(Path(args.lee_bin).resolve())
    if args.work is None:
        import tempfile
        tmp = tempfile.TemporaryDirectory(prefix="compare_lee_")
        work = Path(tmp.name)
    else:
        work = args.work.resolve()
        work.mkdir(parents=True, exist_ok=True)
    res = compare(args, work)
    print(report(res))
    if args.json:
        args.json.write_text(json.dumps(asdict(res), indent=1, ensure_ascii=False))
    ok = res.checks["strict_identical"] and res.checks["sanity_dups_union_equals_collect"] and res.checks["boundary_ok"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
