"""Repeats: every in-document L-window of the corpus gets the id of its group of equal
windows, exactly as one global suffix array would group them.

Positions here are those of the text Build sorted: the candidate text with the prefilter
(each region is contiguous in the shard, so a window is the same L tokens in both, and the
regions' starts.npy maps it back), else the shard's.

1. Per shard (parallel): walk the suffix array, keep the windows that lie inside one
   document (region), and mark where a new distinct window starts (LCP < L): {wpos,wl}.npy.
   wl[j] is window j's common prefix with window j-1, capped at L: wl < L starts a new one.
2. Across shards (native k-way merge on an LCP loser tree): the shards' sorted distinct
   windows are merged; common prefixes are carried along from wl, so tokens are read only
   where two heads tie on theirs, at most L per pair. A group seen at least twice in the
   corpus gets a dense id (in lexicographic order), a window seen once gets -1: run_gid.npy
   per shard. The key range is cut by first token into one part per worker, merged on
   threads.
3. Per shard (parallel, native): scatter the ids back to token positions: gid.npy (int32
   or int64), gid[p] = group of the window starting at p, or -1. Over candidate text it is
   2.5 times smaller than over the shard, and so is the remove stage's pass over it. The same
   pass lists, for each repeated group the shard holds, its two first positions in the
   sorted text: firsts.npy, (3, groups in the shard), int32 when the ids and positions fit
   (int64 else): group id (increasing), first, second (-1: none). keep="none" needs every
   group's first two occurrences in the corpus; merged from these lists that is a
   sequential pass per shard, not a random lookup per window (on heavily redundant text,
   most of the candidate text is such windows).
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import faults, native, reference
from ..executor import run_all
from ..workspace import file_bytes, load_npy, npy_appended, npy_in_place, save_npy, task_sums
from .base import Context, ShardJob, Stage, chain
from .build import sorted_dirs
from .candidates import window_dirs
from .sizing import usable_budget

WINDOW_FILES = ("wpos.npy", "wl.npy")
GROUP_FILES = ("gid.npy", "firsts.npy")


def valid_windows(offsets: np.ndarray, n: int, L: int) -> np.ndarray:
    """uint8 mask: 1 where an L-window starting there stays inside its document."""
    starts, ends = offsets[:-1], offsets[1:]
    ok = ends - starts >= L
    # documents (regions) never overlap, so the running sum is 0 or 1: int8 throughout, summed
    # in int8 (cumsum's default int64 accumulator and the compare after it cost twice as much)
    delta = np.zeros(n + 1, dtype=np.int8)
    np.add.at(delta, starts[ok], 1)
    np.add.at(delta, ends[ok] - L + 1, -1)
    np.cumsum(delta, out=delta, dtype=np.int8)
    return delta[:n].view(np.uint8)


def windows_shard(build_dir: str, out_dir: str, L: int) -> dict[str, Any]:
    """Task: one shard's in-document windows in suffix-array order. Over candidate text the
    regions take the place of documents."""
    bdir, odir = Path(build_dir), Path(out_dir)
    odir.mkdir(parents=True, exist_ok=True)
    offsets = np.load(bdir / "offsets.npy")
    n = int(offsets[-1])
    wpos_dtype = np.int32 if n < (1 << 31) else np.int64
    windows = distinct = 0
    with npy_appended(odir / "wpos.npy", wpos_dtype) as wpos_out, npy_appended(odir / "wl.npy", np.uint16) as wl_out:
        for wpos, wl in native.local_windows_pieces(load_npy(bdir / "sa.npy"), load_npy(bdir / "lcp.npy"),
                                                    valid_windows(offsets, n, L), L, wpos_dtype):
            wpos_out.append(wpos)
            wl_out.append(wl)
            # counted as the pieces pass, not read back: only the stream's first window opens a
            # run whatever its wl (count_runs); later pieces' first windows continue theirs
            distinct += native.count_runs(wl, L) if windows == 0 else int(np.count_nonzero(wl < L))
            windows += len(wl)
    return {"windows": windows, "distinct": distinct, **task_sums([odir / f for f in WINDOW_FILES])}


def scatter_shard(build_dir: str, out_dir: str, gid_dtype: str, L: int) -> dict[str, Any]:
    """Task: group id per token position of one shard's sorted text from its
    per-distinct-window ids."""
    bdir, odir = Path(build_dir), Path(out_dir)
    n = int(np.load(bdir / "offsets.npy")[-1])
    run_gid = load_npy(odir / "run_gid.npy")
    # the lists written by the kernel into the file's map, int32 when the ids and positions
    # fit: at 1 GB of web text an int64 array of them (2 GB, fresh pages) and its cast to
    # int32 (1 GB more) were the largest anonymous memory of the run, each page a fault
    firsts_dtype = np.int32 if gid_dtype == "int32" and n < (1 << 31) else np.int64
    with npy_in_place(odir / "gid.npy", gid_dtype, n) as gid, \
            npy_in_place(odir / "firsts.npy", firsts_dtype, (3, native.listed_runs(run_gid))) as firsts:
        gid[:] = -1  # as large as the sorted tokens
        repeated, _ = native.scatter_first_two(load_npy(odir / "wpos.npy"), load_npy(odir / "wl.npy"), L, run_gid,
                                               gid, out=firsts)
    return {"repeated_windows": repeated, **task_sums([odir / f for f in GROUP_FILES])}


def _first_at_least(tokens: np.ndarray, wpos: np.ndarray, t: int) -> int:
    """Index of the stream's first window whose first token is >= t (windows are sorted)."""
    lo, hi = 0, len(wpos)
    while lo < hi:
        mid = (lo + hi) // 2
        if int(tokens[wpos[mid]]) < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


def merge_plan(streams: list[tuple[np.ndarray, np.ndarray, np.ndarray]], L: int, parts: int) -> list[list[tuple]]:
    """Where to cut the merge into `parts` independent merges: streams (tokens, wpos, wl)
    are cut where the windows' first token reaches a pivot, so equal windows never fall in
    two parts, and the parts are balanced by window count. Per part, per stream, (i, e, ri,
    re): its windows wpos[i:e] and their distinct windows' ids run_gid[ri:re]."""
    top = max((int(t[w[-1]]) for t, w, _ in streams if len(w)), default=0)
    total = sum(len(w) for _, w, _ in streams)
    cuts = [[0] * len(streams)]
    pivot = 0
    for j in range(1, parts):
        lo, hi = pivot, top + 1  # the smallest pivot that puts j/parts of the windows below it
        while lo < hi:
            mid = (lo + hi) // 2
            if sum(_first_at_least(t, w, mid) for t, w, _ in streams) * parts >= j * total:
                hi = mid
            else:
                lo = mid + 1
        pivot = lo
        cuts.append([_first_at_least(t, w, pivot) for t, w, _ in streams])
    cuts.append([len(w) for _, w, _ in streams])
    plan = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        plan.append([(i, e, native.count_runs(wl[:i], L), native.count_runs(wl[:e], L))
                     for (_, _, wl), i, e in zip(streams, a, b)])
    return plan


def merge_parts(streams: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]], L: int, parts: int) -> int:
    """native.merge, run as `parts` independent merges (merge_plan) on threads (the kernel
    releases the GIL). Each part's group ids are shifted by the groups of the parts before
    it, so the result is the one merge's."""
    plan = merge_plan([s[:3] for s in streams], L, parts)
    pieces = [[(t, w[i:e], wl[i:e], g[ri:re]) for (t, w, wl, g), (i, e, ri, re) in zip(streams, part)]
              for part in plan]
    if parts == 1:
        return native.merge(pieces[0], L)
    with ThreadPoolExecutor(parts) as pool:
        counts = list(pool.map(lambda piece: native.merge(piece, L), pieces))
    shift = 0
    for piece, g in zip(pieces, counts):
        if shift:
            for _, _, _, run_gid in piece:
                run_gid[run_gid >= 0] += shift
        shift += g
    return shift


@dataclass(frozen=True)
class MergePart:
    """Task: part `k` of the cross-shard merge (see merge_plan). Its distinct windows' group
    ids, numbered from 0, go to a file of its own per shard (run_gid.part<k>.npy): no two
    tasks write one file, which a shared file system would not keep straight."""
    k: int
    tokens: tuple[str, ...]
    windows: tuple[str, ...]
    slices: tuple[tuple[int, int, int, int], ...]
    L: int
    # where each stream's ids go, when not beside its windows (a reference's windows are read
    # in its folder, their ids written in this one's: sadedup/reference.py)
    outs: tuple[str, ...] = ()
    # the shards' tokens read into memory instead of mapped, when the driver found they fit a
    # worker's share of the budget: the merge reads them at random (a reference's reduced
    # stream too, where heads tie), and through a file map of 4 KB pages nearly every read
    # misses the TLB, while numpy's own allocation of this size is given huge pages (256 MB
    # of web text: the merge's CPU 6.9 -> 5.2 s; see also reference.DistinctWindows)
    in_memory: bool = False
    # a reference's windows found equal to windows of this run (reference.DistinctWindows:
    # folders of qshard.npy, qrun.npy), not merged themselves: each is one more occurrence of
    # the window of this run it equals (query shard q is stream `queries[q]` of the merge),
    # counted there (native.merge's extra), and takes that window's group id, written beside
    # them (run_gid.part<k>.npy) for those of this part. The ids are those a merge of them all
    # gives: a found window is in a group with a window of this run, in the same key range.
    found: tuple[str, ...] = ()
    queries: tuple[int, ...] = ()

    def __call__(self) -> dict[str, Any]:
        outs = [Path(odir) / f"run_gid.part{self.k:05d}.npy" for odir in self.outs or self.windows]
        # the part's ids, from 0, are fewer than its distinct windows: int32 when those are
        ids = np.int32 if sum(re - ri for *_, ri, re in self.slices) < (1 << 31) else np.int64
        found = [(np.load(Path(d) / "qshard.npy"), np.load(Path(d) / "qrun.npy")) for d in self.found]
        extras: list[Any] = [None] * len(self.slices)
        picks = []  # per found folder, per query shard: (its entries in this part, their runs in the part's slice)
        for qshard, qrun in found:
            picks.append([])
            for q, s in enumerate(self.queries):
                ri, re = self.slices[s][2:]
                at = np.flatnonzero((qshard == q) & (qrun >= ri) & (qrun < re))
                if extras[s] is None:
                    extras[s] = np.zeros(re - ri, np.uint8)
                # one more, whichever references found it: a window of this run with a
                # found one is repeated, which is all the count decides
                extras[s][qrun[at] - ri] = 1
                picks[-1].append((at, qrun[at] - ri))
        wrote = 0
        with ExitStack() as stack:  # written by the kernel straight into the files' maps
            piece = [(load_npy(Path(tok), mmap=not self.in_memory), load_npy(Path(odir) / "wpos.npy")[i:e],
                      load_npy(Path(odir) / "wl.npy")[i:e], stack.enter_context(npy_in_place(out, ids, re - ri)),
                      extra)
                     for tok, odir, (i, e, ri, re), out, extra in zip(self.tokens, self.windows, self.slices, outs,
                                                                       extras)]
            groups = native.merge(piece, self.L)
            for d, per_query in zip(self.found, picks):
                # this part's entries are one stretch of the folder's (in key order, as the parts)
                at = np.concatenate([a for a, _ in per_query] + [np.zeros(0, np.int64)])
                order = np.argsort(at, kind="stable")
                got = np.concatenate([np.asarray(piece[s][3][r]) for s, (_, r) in zip(self.queries, per_query)]
                                     + [np.zeros(0, ids)])
                out = Path(d) / f"run_gid.part{self.k:05d}.npy"
                save_npy(out, got[order].astype(ids, copy=False))
                wrote += file_bytes([out])
        return {"groups": groups, "wrote": file_bytes(outs) + wrote}


@dataclass(frozen=True)
class JoinShard:
    """Task: one shard's run_gid.npy from the merge parts' files, each part's ids moved past
    the groups of the parts before it."""
    window_dir: str
    shifts: tuple[int, ...]
    # the joined ids' dtype: int32 when every group id fits (the merge's groups < 2^31 - 1,
    # as gid.npy's), half the bytes of int64 to fault in and write (600 MB at 1 GB of web text)
    ids: str = "int64"

    def __call__(self) -> dict[str, Any]:
        odir = Path(self.window_dir)
        parts = [odir / f"run_gid.part{k:05d}.npy" for k in range(len(self.shifts))]
        arrays = [np.load(p) for p in parts]
        with npy_in_place(odir / "run_gid.npy", self.ids, sum(len(a) for a in arrays)) as run_gid:
            at = 0
            for a, shift in zip(arrays, self.shifts):
                seg = run_gid[at:at + len(a)]
                seg[:] = a  # widened here when int64: a part's ids may be int32 (MergePart)
                if shift:
                    np.add(seg, shift, out=seg, where=seg >= 0)
                at += len(a)
        for p in parts:
            p.unlink()
        return {"wrote": file_bytes([odir / "run_gid.npy"])}


@dataclass(frozen=True)
class WindowsShard:
    build_dir: str
    out_dir: str
    L: int

    def __call__(self) -> dict[str, Any]:
        return windows_shard(self.build_dir, self.out_dir, self.L)


@dataclass(frozen=True)
class ScatterShard:
    build_dir: str
    out_dir: str
    gid_dtype: str
    L: int

    def __call__(self) -> dict[str, Any]:
        return scatter_shard(self.build_dir, self.out_dir, self.gid_dtype, self.L)


class Repeats(Stage):
    name = "repeats"
    records = ("windows", "merge", "groups")

    def settings(self, ctx: Context) -> Any:
        return ctx.wf.substring.window

    def _plan(self, ctx: Context, key: str):
        ws, L = ctx.ws, ctx.wf.substring.window
        built, outs = sorted_dirs(ws, ctx.wf), window_dirs(ws, L)
        wkeys = [chain(key, "windows", k, ws.checksum("build", k)) for k in range(len(outs))]
        mkey = chain(key, "merge", [ws.checksum("windows", k) for k in range(len(outs))],
                     *reference.merge_stamps(ctx))
        gkeys = [chain(key, "groups", k, ws.checksum("merge")) for k in range(len(outs))]
        return built, outs, wkeys, mkey, gkeys

    def whole(self, ctx: Context, key: str) -> bool:
        ws = ctx.ws
        built, outs, wkeys, mkey, gkeys = self._plan(ctx, key)
        merged = [o / "run_gid.npy" for o in [*(s.write for s in reference.streams(ctx)), *outs]]
        return ws.is_done("merge", mkey, files=merged) and all(
            ws.is_done("windows", wkeys[k], shard=k, files=[o / f for f in WINDOW_FILES])
            and ws.is_done("groups", gkeys[k], shard=k, files=[o / f for f in GROUP_FILES]) for k, o in enumerate(outs))

    def summary(self, d: dict[str, Any]) -> str:
        return f"repeats: {d['repeated_windows']} window(s) of {d['L']} tokens fall in {d['groups']} repeated group(s)"

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        ws = ctx.ws
        L = ctx.wf.substring.window
        built, outs, wkeys, mkey, _ = self._plan(ctx, key)
        t0 = time.perf_counter()
        todo = self.map_shards(ctx, "windows", "windows", [
            ShardJob(k, wkeys[k], [outs[k] / f for f in WINDOW_FILES], WindowsShard(str(built[k]), str(outs[k]), L))
            for k in range(len(outs))])
        # the references' sorted windows (--reference): merged as shards of their own, before
        # this run's, so group ids span both (sadedup/reference.py); their ids go to this folder
        refs = reference.sorted_text(self, ctx, key)
        t1 = time.perf_counter()
        run_gids = [o / "run_gid.npy" for o in [*(s.write for s in refs), *outs]]
        mkey = self._plan(ctx, key)[3]  # the windows just made are in it
        merged = todo or ctx.force or not ws.is_done("merge", mkey, files=run_gids)
        if merged:
            # a reference's reduced streams are not merged: each of their windows equals one
            # of this run's, counted on it and given its id (MergePart)
            mixed = [s for s in refs if not s.reduced]
            groups = self._merge(ctx, [*(s.built for s in mixed), *built], [*(s.windows for s in mixed), *outs], L,
                                 max(1, ctx.wf.run.n_workers), [*(s.write for s in mixed), *outs],
                                 [s.windows for s in refs if s.reduced])
            faults.point("repeats.merge")
            ws.mark("merge", mkey, "done", files=run_gids, groups=groups)
        else:
            groups = ws.stage_detail("merge")["groups"]
        t2 = time.perf_counter()
        gkeys = self._plan(ctx, key)[4]
        gid_dtype = "int32" if groups < (1 << 31) - 1 else "int64"
        jobs = [ShardJob(k, gkeys[k], [outs[k] / f for f in GROUP_FILES],
                         ScatterShard(str(built[k]), str(outs[k]), gid_dtype, L))
                for k in range(len(outs))]
        if merged:  # every shard's ids come from the new merge
            ctx = Context(ctx.ws, ctx.executor, force=True)
        redo = self.map_shards(ctx, "groups", "group ids", jobs)
        repeated = sum(ws.stage_detail("groups", k).get("repeated_windows", 0) for k in range(len(outs)))
        return {"groups": groups, "repeated_windows": repeated, "L": L, "shards": len(outs),
                "windows_rebuilt": len(todo), "groups_rebuilt": len(redo),
                "windows_seconds": round(t1 - t0, 3), "merge_seconds": round(t2 - t1, 3)}

    @staticmethod
    def _merge(ctx: Context, built: list[Path], outs: list[Path], L: int, parts: int,
               write: list[Path] | None = None, found: list[Path] | None = None) -> int:
        """The cross-shard merge as tasks: `parts` merges of disjoint key ranges, then per
        shard its run_gid.npy joined from the parts, each part's ids moved past the groups of
        the parts before it; the result is the one merge's. `write`: per stream, the folder
        its run_gid.npy goes to (default: its windows' folder, `outs`). `found`: folders of a
        reference's windows found equal to windows of this run's shards, the last streams of
        `outs` (MergePart): counted on those, not merged, their run_gid.npy made too."""
        plan = merge_plan([(load_npy(b / "tokens.npy"), load_npy(o / "wpos.npy"), load_npy(o / "wl.npy"))
                           for b, o in zip(built, outs)], L, parts)
        tokens, windows = tuple(str(b / "tokens.npy") for b in built), tuple(map(str, outs))
        dest = windows if write is None else tuple(map(str, write))
        in_memory = sum(os.path.getsize(t) for t in tokens) <= usable_budget(ctx.wf) // max(len(plan), 1)
        found_dirs = tuple(map(str, found or ()))
        # the query shards of the lookups are this run's shards, the last streams
        queries = tuple(range(len(outs) - len(sorted_dirs(ctx.ws, ctx.wf)), len(outs))) if found_dirs else ()
        counts = [0] * len(plan)
        for k, res in ctx.executor.imap([MergePart(k, tokens, windows, tuple(p), L, () if write is None else dest,
                                                   in_memory, found_dirs, queries) for k, p in enumerate(plan)]):
            counts[k] = res["groups"]
        shifts = tuple(int(x) for x in np.concatenate(([0], np.cumsum(counts)[:-1])))
        ids = "int32" if sum(counts) < (1 << 31) - 1 else "int64"
        run_all(ctx.executor, [JoinShard(o, shifts, ids) for o in (*dest, *found_dirs)])
        return int(sum(counts))
