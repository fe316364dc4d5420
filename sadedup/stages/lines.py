"""Lines: repeated lines cut out of the documents that reach the stage.

A line is a document's text up to and including a ``\\n`` (or the end of the text); its key
is the line without its ``\\n``, ``str.strip()``-ed, NFC-normalized. A line whose key is empty
never matches. Keys are compared by a 64-bit hash (see native/lines.c); two distinct keys
share one with probability about n^2 / 2^65 for n distinct keys in the corpus (3e-6 for 10
million).

- ``keep = "first"`` (C4): in document order (sadedup.keep.visiting_order), a line goes when
  its key occurred in an earlier line of a surviving document, the document's own earlier
  lines included; a document is dropped when its removed characters are more than
  ``drop_fraction`` of its characters, and a dropped document's lines count for no later one.
- ``keep = "none"``: a line goes from every document when its key occurs in at least
  ``min_docs`` distinct documents (per source: ``[[sources]] lines.min_docs``) among those
  that reach the stage; then the drop rule.

Removed characters are whole lines with their ``\\n``. Adjacent removed lines make one span
when their sources are adjacent lines of one document too, so a copied block is one span
beside the block it copies. A span's source is the first line's: for ``first`` the earlier
surviving occurrence; for ``none`` the key's first occurrence in document order in another
document (the first occurrence, or for the document that holds it, the first one in a
second document), so a source always shows the text in a second place.

Out of core, in phases (tasks on the executor unless said):

1. scan, per chunk of documents (about CHUNK_BYTES of text, in document order): the native
   kernel finds every line, keys and hashes the ones it can (ASCII and the other characters
   NFC never changes; their strip is done in C), and hands back the rest, whose keys Python
   makes (NFC) and the kernel hashes. Written per chunk: ``line.npy`` (int64 rows per line
   with a key: document's place in document order, first and end code point), the chunk's
   distinct hashes, sorted, with their counts (occurrences for ``first``, documents for
   ``none``) and the bounds of the hash-range partitions (``u.npy``, ``c.npy``,
   ``cut.npy``), and each line's index among the distinct hashes (``inv.npy``);
2. count, per partition: the counts of every chunk summed; the keys that can matter (twice
   or more for ``first``, in the fewest ``min_docs`` documents for ``none``) are kept, so the
   rest of the stage holds only repeated keys: ``repeated.npy`` (sorted) and ``counts.npy``;
3. group ids, per chunk: each line's index in ``repeated.npy`` or -1 (``gid.npy``), looked up
   for the chunk's distinct hashes, which are sorted, and spread to the lines by ``inv.npy``;
4. on the driver, chunks in document order: the native keep-first pass (state per repeated
   key: its first surviving occurrence) with the drop rule and its cascade, or for ``none``
   a pass for every key's first two occurrences and then the strike; spans per chunk.

Memory: a chunk of text and its lines per task, a partition's keys per count task, and on
the driver 24 bytes (``first``) or 48 (``none``) per repeated key, in a file when that would
take more than a quarter of the memory budget.
"""
from __future__ import annotations

import dataclasses
import shutil
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from .. import native
from ..executor import run_all
from ..keep import source_values
from ..progress import bar
from ..store import TextStore
from ..workspace import load_npy, save_npy, task_sums, writable_npy
from .base import Context, ShardJob, chain
from .exact import text_chunks
from .sizing import usable_budget
from .spans import Cuts, SpanStage, over_fraction

# text per scan task: at most, and at least (a corpus is cut into a few chunks per worker)
CHUNK_BYTES = 64 << 20
MIN_CHUNK_BYTES = 4 << 20
# text per count partition (its distinct keys are fewer than its lines): partitions are
# hash ranges, a power of two of them, at most MAX_PARTS
PART_BYTES = 64 << 20
MAX_PARTS = 4096
# changes when keys, hashing or the rules change, so old results are not reused
VERSION = 1
SCAN_FILES = ("line.npy", "inv.npy", "u.npy", "c.npy", "cut.npy")


def line_keys(texts: np.ndarray, starts: np.ndarray, ends: np.ndarray,
              doc_base: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Every line with a non-empty key of the documents texts[starts[d]:ends[d]]: (key hash,
    rows of (doc_base + d, first code point, end code point), lines keyed in Python)."""
    h, line, slow = native.line_scan(texts, starts, ends, doc_base)
    if not len(slow):
        return h, line, 0
    # the lines with characters NFC may change: keyed here, in one pass over their joined
    # text (no line holds a '\n'), and hashed by the same kernel as the rest
    joined = native.gather_lines(texts, slow).decode("utf-8")
    nfc = unicodedata.normalize
    keys = "\n".join([nfc("NFC", s.strip()) for s in joined.split("\n")]).encode("utf-8")
    hs, empty = native.hash_pieces(keys, len(slow))
    h[slow[:, 0]] = hs
    if empty.any():  # whitespace only (Unicode spaces): no key
        keep = np.ones(len(h), dtype=bool)
        keep[slow[empty, 0]] = False
        h, line = h[keep], line[keep]
    return h, line, len(slow)


def partition_bits(total_bytes: int) -> int:
    """log2 of the number of count partitions for a corpus of `total_bytes` bytes of text."""
    parts = min(MAX_PARTS, max(1, -(-total_bytes // PART_BYTES)))
    return (parts - 1).bit_length()


def distinct_counts(h: np.ndarray, doc: np.ndarray,
                    per_document: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct hashes of a chunk's lines, sorted, with how many lines (or, with
    per_document, how many documents) hold each, and each line's index among them."""
    if not len(h):
        return np.zeros(0, np.uint64), np.zeros(0, np.int64), np.zeros(0, np.int32)
    order = np.argsort(h)
    hs = h[order]
    new = np.empty(len(hs), dtype=bool)
    new[0] = True
    np.not_equal(hs[1:], hs[:-1], out=new[1:])
    first = np.flatnonzero(new)
    run = np.cumsum(new) - 1
    counts = np.diff(np.append(first, len(hs)))
    if per_document and (counts > 1).any():
        # documents, not lines: only keys seen twice in the chunk need their (key, document)
        # pairs told apart, so only those are sorted again
        at = np.flatnonzero(counts[run] > 1)
        r, d = run[at], doc[order[at]]
        o = np.lexsort((d, r))
        r, d = r[o], d[o]
        pair = np.empty(len(r), dtype=bool)
        pair[0] = True
        pair[1:] = (r[1:] != r[:-1]) | (d[1:] != d[:-1])
        counts = np.where(counts > 1, np.bincount(r[pair], minlength=len(first)), counts)
    inv = np.empty(len(h), dtype=np.int32 if len(first) < 2**31 else np.int64)
    inv[order] = run
    return hs[first], counts.astype(np.int64), inv


def partition_cuts(u: np.ndarray, bits: int) -> np.ndarray:
    """Where each hash range (the top `bits` bits) starts in the sorted hashes u, and the end."""
    if bits == 0:
        return np.array([0, len(u)], dtype=np.int64)
    edges = (np.arange(1, 1 << bits, dtype=np.uint64) << np.uint64(64 - bits))
    return np.concatenate(([0], np.searchsorted(u, edges), [len(u)])).astype(np.int64)


@dataclass(frozen=True)
class ScanChunk:
    """Task: the lines of documents i..j (rows of docs.npy, in document order) into chunk_k."""
    root: str
    folder: str
    k: int
    i: int
    j: int
    per_document: bool
    bits: int

    def __call__(self) -> dict[str, Any]:
        store = TextStore(Path(self.root))
        ids = np.asarray(np.load(Path(self.folder) / "docs.npy", mmap_mode="r")[self.i:self.j])
        h, line, slow = line_keys(store.data, store.offsets[ids], store.offsets[ids + 1], self.i)
        u, c, inv = distinct_counts(h, line[:, 0], self.per_document)
        out = Path(self.folder) / f"chunk_{self.k:05d}"
        out.mkdir(exist_ok=True)
        for name, arr in zip(SCAN_FILES, (line, inv, u, c, partition_cuts(u, self.bits))):
            save_npy(out / name, arr)
        return {"documents": self.j - self.i, "lines": len(h), "python_lines": slow, "distinct": len(u),
                **task_sums([out / f for f in SCAN_FILES])}


@dataclass(frozen=True)
class CountPartition:
    """Task: partition q's keys over every chunk, their counts summed; those counted at least
    `least` times into part_q.npz-like files (repeated.npy, counts.npy)."""
    dirs: tuple[str, ...]
    q: int
    least: int
    out: str

    def __call__(self) -> dict[str, Any]:
        us, cs = [np.zeros(0, np.uint64)], [np.zeros(0, np.int64)]
        for d in map(Path, self.dirs):
            a, b = load_npy(d / "cut.npy", mmap=False)[self.q:self.q + 2]
            if b > a:
                us.append(np.asarray(load_npy(d / "u.npy")[a:b]))
                cs.append(np.asarray(load_npy(d / "c.npy")[a:b]))
        u, c = np.concatenate(us), np.concatenate(cs)
        if len(u):
            order = np.argsort(u)
            u, c = u[order], c[order]
            new = np.empty(len(u), dtype=bool)
            new[0] = True
            np.not_equal(u[1:], u[:-1], out=new[1:])
            first = np.flatnonzero(new)
            u, c = u[first], np.add.reduceat(c, first)
        keep = c >= self.least
        out = Path(self.out)
        out.mkdir(exist_ok=True)
        save_npy(out / "repeated.npy", u[keep])
        save_npy(out / "counts.npy", c[keep])
        return {"keys": len(u), "repeated": int(keep.sum())}


@dataclass(frozen=True)
class GroupIds:
    """Task: each line of chunk dir's index in the sorted repeated keys (-1: not repeated),
    found for the chunk's distinct keys (sorted: one merge-like pass) and spread to its
    lines through inv.npy."""
    dir: str
    repeated: str

    def __call__(self) -> dict[str, Any]:
        d = Path(self.dir)
        u = load_npy(d / "u.npy", mmap=False)
        rep = load_npy(Path(self.repeated), mmap=False)
        of_u = np.full(len(u), -1, dtype=np.int64)
        if len(rep) and len(u):
            at = np.searchsorted(rep, u)
            hit = at < len(rep)
            hit[hit] = rep[at[hit]] == u[hit]
            of_u[hit] = at[hit]
        gid = of_u[load_npy(d / "inv.npy", mmap=False)]
        save_npy(d / "gid.npy", gid)
        return {"repeated_lines": int((gid >= 0).sum())}


def runs_to_spans(rm: np.ndarray, line: np.ndarray, src: np.ndarray) -> tuple[np.ndarray, ...]:
    """Removed lines (rows of line, their source rows) as spans: adjacent removed lines whose
    sources are adjacent lines of one document too are one span, sourced at its first line's
    source and ending at its last line's. (doc, start, end, src doc, src start, src end),
    documents as places in document order."""
    idx = np.flatnonzero(rm)
    L, S = line[idx], src[idx]
    join = ((L[1:, 0] == L[:-1, 0]) & (L[1:, 1] == L[:-1, 2])
            & (S[1:, 0] == S[:-1, 0]) & (S[1:, 1] == S[:-1, 2]))
    first = np.flatnonzero(np.r_[True, ~join]) if len(idx) else np.zeros(0, np.int64)
    last = np.r_[first[1:] - 1, len(idx) - 1].astype(np.int64) if len(idx) else first
    return L[first, 0], L[first, 1], L[last, 2], S[first, 0], S[first, 1], S[last, 2]


class Lines(SpanStage):
    name = "lines"
    version = VERSION

    def settings(self, ctx: Context) -> Any:
        wf = ctx.wf
        out: dict[str, Any] = dataclasses.asdict(wf.lines)  # document order: SpanStage.key
        if wf.lines.keep == "none" and any(s.lines_min_docs is not None for s in wf.sources):
            out["sources"] = [[s.match, s.lines_min_docs] for s in wf.sources]
        return out

    def folder(self, ctx: Context, key: str) -> Path:
        return ctx.ws.root / "lines" / key[:8]

    def summary(self, d: dict[str, Any]) -> str:
        return (f"lines (keep={d['keep']}): {d['removed_lines']} of {d['lines']} line(s) cut, {d['spans']} span(s) "
                f"in {d['cut']} document(s), {d['dropped']} dropped (of {d['documents']})")

    def decide(self, ctx: Context, key: str, doc_ids: np.ndarray, n_chars: np.ndarray) -> Cuts:
        ws, cfg = ctx.ws, ctx.wf.lines
        times: dict[str, float] = {}
        folder = self.folder(ctx, key)
        if folder.parent.exists():
            for other in folder.parent.iterdir():  # another configuration's: never read again
                if other != folder:
                    shutil.rmtree(other, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        none = cfg.keep == "none"
        min_docs = source_values(ws, "lines_min_docs", cfg.min_docs) if none else None
        # the fewest occurrences (first) or documents (none) that can make a line go
        least = min([cfg.min_docs] + [s.lines_min_docs for s in ctx.wf.sources if s.lines_min_docs]) if none else 2

        t0 = time.perf_counter()
        dirs, chunks, scanned, bits = self._scan(ctx, key, folder, doc_ids, none)
        times["scan"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        groups, counts = self._count(ctx, folder, dirs, bits, least)
        times["count"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        tasks = [GroupIds(str(d), str(folder / "repeated.npy")) for d in dirs]
        repeated_lines = sum(r["repeated_lines"] for _, r in ctx.executor.imap(tasks))
        times["group_ids"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        per_doc_min = (np.full(len(doc_ids), cfg.min_docs, dtype=np.int64) if min_docs is None
                       else min_docs[doc_ids].astype(np.int64)) if none else None
        spans, removed, dropped, removed_lines = self._select(ctx, folder, dirs, chunks, n_chars, groups, counts,
                                                              per_doc_min)
        times["select"] = time.perf_counter() - t0
        shutil.rmtree(folder, ignore_errors=True)  # what the scan wrote is read by no later stage

        d, cs, ce, sd, scs, sce = spans
        return Cuts(doc_ids[d], cs, ce, doc_ids[sd], scs, sce, doc_ids[dropped],
                    removed_chars=int(removed.sum() - removed[dropped].sum()),
                    detail={"keep": cfg.keep, "min_docs": cfg.min_docs, "drop_fraction": cfg.drop_fraction,
                            "lines": scanned["lines"], "python_lines": scanned["python_lines"],
                            "repeated_keys": int(groups), "repeated_lines": int(repeated_lines),
                            "removed_lines": removed_lines, "chunks": len(chunks),
                            "partitions": 1 << bits,
                            "seconds": {k: round(v, 3) for k, v in times.items()}})

    def _scan(self, ctx: Context, key: str, folder: Path, doc_ids: np.ndarray,
              none: bool) -> tuple[list[Path], list[tuple[int, int]], dict[str, int], int]:
        """1. Every chunk's lines, a task per chunk; chunks already scanned under this key
        are kept (an interrupted run resumes)."""
        ws = ctx.ws
        store = TextStore(ws.root)
        docs_key = xxhash.xxh3_64_hexdigest(doc_ids.tobytes())
        if not (folder / "docs.npy").exists() or not np.array_equal(np.load(folder / "docs.npy"), doc_ids):
            save_npy(folder / "docs.npy", doc_ids)
        total = int(store.nbytes(doc_ids).sum()) if len(doc_ids) else 0
        size = max(MIN_CHUNK_BYTES, min(CHUNK_BYTES, total // max(1, 2 * ctx.executor.workers) + 1))
        chunks = list(text_chunks(store.offsets, doc_ids, size))
        bits = partition_bits(total)
        dirs = [folder / f"chunk_{k:05d}" for k in range(len(chunks))]
        self.map_shards(ctx, self.name, "lines", [
            ShardJob(k, chain(key, docs_key, k, i, j, bits), [dirs[k] / f for f in SCAN_FILES],
                     ScanChunk(str(ws.root), str(folder), k, i, j, none, bits))
            for k, (i, j) in enumerate(chunks)])
        scanned = {"lines": 0, "python_lines": 0}
        for k in range(len(chunks)):
            detail = ws.stage_detail(self.name, k)
            scanned["lines"] += int(detail.get("lines", 0))
            scanned["python_lines"] += int(detail.get("python_lines", 0))
        return dirs, chunks, scanned, bits

    @staticmethod
    def _count(ctx: Context, folder: Path, dirs: list[Path], bits: int, least: int) -> tuple[int, np.ndarray]:
        """2. The repeated keys, a task per hash range; joined in range order, which is the
        keys' order."""
        tasks = [CountPartition(tuple(map(str, dirs)), q, least, str(folder / f"part_{q:05d}"))
                 for q in range(1 << bits)]
        run_all(ctx.executor, tasks)
        reps = [load_npy(Path(t.out) / "repeated.npy", mmap=False) for t in tasks]
        cnts = [load_npy(Path(t.out) / "counts.npy", mmap=False) for t in tasks]
        save_npy(folder / "repeated.npy", np.concatenate(reps + [np.zeros(0, np.uint64)]))
        counts = np.concatenate(cnts + [np.zeros(0, np.int64)])
        for t in tasks:
            shutil.rmtree(t.out, ignore_errors=True)
        return len(counts), counts

    def _select(self, ctx: Context, folder: Path, dirs: list[Path], chunks: list[tuple[int, int]],
                n_chars: np.ndarray, groups: int, counts: np.ndarray, per_doc_min: np.ndarray | None):
        """4. The keep rule over the chunks in document order, on the driver: spans, and per
        document its removed characters and the drop rule's verdict."""
        cfg = ctx.wf.lines
        width = 3 if per_doc_min is None else 6
        state = self._state(ctx, folder, groups, width)
        removed = np.zeros(len(n_chars), dtype=np.int64)
        dropped = np.zeros(len(n_chars), dtype=bool)
        parts: list[tuple[np.ndarray, ...]] = []
        removed_lines = 0
        with bar("lines", len(chunks) * (1 if per_doc_min is None else 2), "chunks") as b:
            if per_doc_min is not None:  # keep="none": every key's first two occurrences first
                for d in dirs:
                    native.lines_first_two(load_npy(d / "gid.npy"), load_npy(d / "line.npy"), state)
                    b.advance()
            for d, (i, j) in zip(dirs, chunks):
                gid, line = load_npy(d / "gid.npy"), load_npy(d / "line.npy")
                if per_doc_min is None:
                    rm, src, rem, drp = native.lines_first(gid, line, i, n_chars[i:j], cfg.drop_fraction, state)
                else:
                    rm, src, rem, drp = native.lines_none(gid, line, i, n_chars[i:j], per_doc_min[i:j], counts,
                                                          cfg.drop_fraction, state)
                removed[i:j], dropped[i:j] = rem, drp
                removed_lines += int(rm.sum())
                parts.append(runs_to_spans(rm, np.asarray(line), src))
                b.advance()
        # the cascade needs each verdict inside the native pass, before the next document: it
        # must be the drop rule every span stage applies
        assert np.array_equal(dropped, over_fraction(removed, n_chars, cfg.drop_fraction)), "drop rule differs"
        spans = tuple(np.concatenate([p[c] for p in parts] + [np.zeros(0, np.int64)]) for c in range(6))
        return spans, removed, np.flatnonzero(dropped), removed_lines

    @staticmethod
    def _state(ctx: Context, folder: Path, groups: int, width: int) -> np.ndarray:
        """Per repeated key, `width` int64 of state, -1 to start; in a file when it would take
        more than a quarter of the usable memory budget (it is read about in key order of the
        lines, so the page cache copes)."""
        if groups * width * 8 <= usable_budget(ctx.wf) // 4:
            return np.full((groups, width), -1, dtype=np.int64)
        arr = writable_npy(folder / "state.npy", np.int64, (groups, width))
        arr[:] = -1
        return arr
