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


def merge_pivots(streams: list[tuple[np.ndarray, np.ndarray, np.ndarray]], parts: int) -> list[int]:
    """The first tokens where the merge is cut into `parts` (merge_plan): each the smallest
    that puts j/parts of the streams' windows below it, so the parts are balanced by window
    count and equal windows never fall in two."""
    top = max((int(t[w[-1]]) for t, w, _ in streams if len(w)), default=0)
    total = sum(len(w) for _, w, _ in streams)
    pivots: list[int] = []
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
        pivots.append(pivot)
    return pivots


def merge_plan(streams: list[tuple[np.ndarray, np.ndarray, np.ndarray]], L: int, parts: int,
               pivots: list[int] | None = None) -> list[list[tuple]]:
    """Where to cut the merge into `parts` independent merges: streams (tokens, wpos, wl)
    are cut where the windows' first token reaches a pivot (merge_pivots, unless given), so
    equal windows never fall in two parts, and the parts are balanced by window count. Per
    part, per stream, (i, e, ri, re): its windows wpos[i:e] and their distinct windows' ids
    run_gid[ri:re]."""
    pivots = merge_pivots(streams, parts) if pivots is None else pivots
    cuts = [[0] * len(streams), *([_first_at_least(t, w, p) for t, w, _ in streams] for p in pivots),
            [len(w) for _, w, _ in streams]]
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
    # worker's share of the budget: the merge reads them at random (a reference's stream too,
    # where it is looked up), and through a file map of 4 KB pages nearly every read misses
    # the TLB, while numpy's own allocation of this size is given huge pages (256 MB of web
    # text: the merge's CPU 6.9 -> 5.2 s; the lookup in a reference shard 1.51-1.64 -> 1.22-1.35 s)
    in_memory: bool = False
    # a reference's sorted windows (--reference) in which this run's distinct windows (the
    # streams from `q0` on: its shards) are looked up as the merge reaches them
    # (native.merge_lookup): per reference stream, (its tokens.npy, the folder of its wpos.npy,
    # wl.npy and gid.npy, this run's folder for what it found, this part's windows of it
    # [a, b)). A window found is not merged: it is one more occurrence of the window of this run
    # it equals, and takes that one's group id. Written per part beside the ids
    # (<file>.part<k>.npy, joined by JoinShard): reference.RUN_FILES and run_gid.
    q0: int = 0
    lookups: tuple[tuple[str, str, str, int, int], ...] = ()

    def __call__(self) -> dict[str, Any]:
        outs = [Path(odir) / f"run_gid.part{self.k:05d}.npy" for odir in self.outs or self.windows]
        # the part's ids, from 0, are fewer than its distinct windows: int32 when those are
        ids = np.int32 if sum(re - ri for *_, ri, re in self.slices) < (1 << 31) else np.int64
        wrote = 0
        with ExitStack() as stack:  # written by the kernel straight into the files' maps
            piece = [(load_npy(Path(tok), mmap=not self.in_memory), load_npy(Path(odir) / "wpos.npy")[i:e],
                      load_npy(Path(odir) / "wl.npy")[i:e], stack.enter_context(npy_in_place(out, ids, re - ri)))
                     for tok, odir, (i, e, ri, re), out in zip(self.tokens, self.windows, self.slices, outs)]
            if not self.lookups:
                groups = native.merge(piece, self.L)
            else:
                refs = [(load_npy(Path(tok), mmap=not self.in_memory), load_npy(Path(src) / "wpos.npy")[a:b],
                         load_npy(Path(src) / "wl.npy")[a:b]) for tok, src, _, a, b in self.lookups]
                groups, found = native.merge_lookup(piece, self.L, self.q0, refs, ids)
                del refs
                for (_, src, odir, a, _), (heads, ends, gid) in zip(self.lookups, found):
                    wpos = load_npy(Path(src) / "wpos.npy")
                    heads += a
                    ends += a
                    kept = np.asarray(wpos[heads])
                    small = reference.index_dtype(len(wpos))
                    files = {"wpos": kept, "theirs": np.asarray(load_npy(Path(src) / "gid.npy")[kept]).astype(np.int64),
                             "heads": heads.astype(small), "ends": ends.astype(small), "run_gid": gid}
                    for name, arr in files.items():
                        out = Path(odir) / f"{name}.part{self.k:05d}.npy"
                        save_npy(out, arr)
                        wrote += file_bytes([out])
        return {"groups": groups, "wrote": file_bytes(outs) + wrote}


@dataclass(frozen=True)
class JoinShard:
    """Task: one shard's run_gid.npy from the merge parts' files, each part's ids moved past
    the groups of the parts before it. `found`: a reference stream's folder of windows looked
    up (MergePart.lookups), whose other files (reference.RUN_FILES) are joined from the parts'
    too."""
    window_dir: str
    shifts: tuple[int, ...]
    # the joined ids' dtype: int32 when every group id fits (the merge's groups < 2^31 - 1,
    # as gid.npy's), half the bytes of int64 to fault in and write (600 MB at 1 GB of web text)
    ids: str = "int64"
    found: bool = False

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
        written = [odir / "run_gid.npy"]
        if self.found:
            for f in reference.RUN_FILES:
                name = f.removesuffix(".npy")
                pieces = [odir / f"{name}.part{k:05d}.npy" for k in range(len(self.shifts))]
                save_npy(odir / f, np.concatenate([np.load(p) for p in pieces]))
                written.append(odir / f)
                parts += pieces
        for p in parts:
            p.unlink()
        return {"wrote": file_bytes(written)}


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
        merged = [o / "run_gid.npy" for o in [*(s.write for s in reference.streams(ctx)), *outs]] + \
            reference.found_files(ctx)
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
        run_gids = [o / "run_gid.npy" for o in [*(s.write for s in refs), *outs]] + reference.found_files(ctx)
        mkey = self._plan(ctx, key)[3]  # the windows just made are in it
        merged = todo or ctx.force or not ws.is_done("merge", mkey, files=run_gids)
        if merged:
            # a reference's reduced streams are not merged: this run's windows are looked up in
            # them as the merge reaches them, and a window found is counted on the one of this
            # run it equals and given its id (MergePart)
            mixed = [s for s in refs if not s.reduced]
            groups = self._merge(ctx, [*(s.built for s in mixed), *built], [*(s.windows for s in mixed), *outs], L,
                                 max(1, ctx.wf.run.n_workers), [*(s.write for s in mixed), *outs],
                                 [(s.built / "tokens.npy", s.source, s.windows) for s in refs if s.reduced])
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
               write: list[Path] | None = None, lookups: list[tuple[Path, Path, Path]] | None = None) -> int:
        """The cross-shard merge as tasks: `parts` merges of disjoint key ranges, then per
        shard its run_gid.npy joined from the parts, each part's ids moved past the groups of
        the parts before it; the result is the one merge's. `write`: per stream, the folder
        its run_gid.npy goes to (default: its windows' folder, `outs`). `lookups`: a
        reference's sorted streams, (tokens.npy, folder of wpos/wl/gid.npy, folder for what is
        found), in which this run's shards (the last streams of `outs`) are looked up by the
        merge parts (MergePart), each in the same key range of them: not merged, counted on
        the windows of this run they equal; their found windows' files joined from the parts."""
        streams = [(load_npy(b / "tokens.npy"), load_npy(o / "wpos.npy"), load_npy(o / "wl.npy"))
                   for b, o in zip(built, outs)]
        pivots = merge_pivots(streams, parts)
        plan = merge_plan(streams, L, parts, pivots)
        tokens, windows = tuple(str(b / "tokens.npy") for b in built), tuple(map(str, outs))
        dest = windows if write is None else tuple(map(str, write))
        lookups = lookups or []
        # each part reads every reference stream it looks windows up in, at random, like its own
        sizes = sum(os.path.getsize(t) for t in tokens) + sum(os.path.getsize(t) for t, _, _ in lookups)
        in_memory = sizes <= usable_budget(ctx.wf) // max(len(plan), 1)
        # the reference streams cut at the same first tokens as the merged ones
        ref_cuts = []
        for tok, src, _ in lookups:
            t, w = load_npy(tok), load_npy(src / "wpos.npy")
            ref_cuts.append([0, *(_first_at_least(t, w, p) for p in pivots), len(w)])
        # the query shards of the lookups are this run's shards, the last streams
        q0 = len(outs) - len(sorted_dirs(ctx.ws, ctx.wf))
        counts = [0] * len(plan)
        tasks = [MergePart(k, tokens, windows, tuple(p), L, () if write is None else dest, in_memory, q0,
                           tuple((str(tok), str(src), str(out), c[k], c[k + 1])
                                 for (tok, src, out), c in zip(lookups, ref_cuts)))
                 for k, p in enumerate(plan)]
        for k, res in ctx.executor.imap(tasks):
            counts[k] = res["groups"]
        shifts = tuple(int(x) for x in np.concatenate(([0], np.cumsum(counts)[:-1])))
        ids = "int32" if sum(counts) < (1 << 31) - 1 else "int64"
        run_all(ctx.executor, [*(JoinShard(o, shifts, ids) for o in dest),
                               *(JoinShard(str(out), shifts, ids, True) for _, _, out in lookups)])
        return int(sum(counts))
