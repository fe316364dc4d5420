"""Candidates: the parts of each shard that can hold a repeated L-window, so that suffix
arrays are built over those parts only (`substring.prefilter`, on by default).

Winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003). Every L-window holds w = L-k+1
k-grams; its *anchor* is the one with the smallest hash, the leftmost on ties. The anchor
depends on the window's tokens alone, so two equal windows at p != q have anchors at
p+r and q+r with the same hash. A window containing the k-gram at a starts in
[a+k-L, a], so

    every window that occurs twice lies inside [a+k-L, a+L) of an anchor a whose hash
    is carried by two or more anchor positions of the corpus.

The candidate text of a shard is the union of those intervals, cut at document ends. It
holds every repeated window whole, so the groups found in it are exactly those of the full
text; a hash collision only keeps more text, never less. Anchors are about 2/(w+1) of the
positions, so counting their hashes across shards is cheap next to a suffix sort; with
k = 2L/3 (w = 34 for L=100) that is about 6%.

1. Per shard (parallel, native): anchors in text order, anchors_{pos,hash}.npy, and their
   hashes sorted, anchors_sorted.npy.
2. Across shards: the hashes carried by two or more anchors, sorted: repeated.npy, by
   merging the shards' sorted hashes a range of values at a time (sized to the budget). With
   references (sadedup/reference.py) a hash one of their anchors carries is repeated too.
3. Per shard (parallel, native): the candidate regions and their tokens, in order:
   tokens.npy (what Build sorts), offsets.npy (region bounds in it; a window never crosses
   one) and starts.npy (where each region starts in the shard): candidate token q of
   region r is shard token starts[r] + q - offsets[r].
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import native, reference
from ..workspace import (
    file_bytes,
    load_npy,
    narrowed,
    npy_in_place,
    save_npy,
    task_sums,
)
from .base import Context, ShardJob, Stage, chain, driver_wrote
from .sizing import usable_budget
from .tokenize import folder_of, shard_dirs

# The repeated-hash merge works a range of hashes at a time, and more ranges cost nothing:
# it holds at most this much, so its peak does not grow with the corpus.
REPEATED_MEMORY = 256 << 20
ANCHOR_FILES = ("anchors_hash.npy", "anchors_pos.npy", "anchors_sorted.npy")
CANDIDATE_FILES = ("tokens.npy", "offsets.npy", "starts.npy")


def anchor_length(L: int) -> int:
    """k for windows of L tokens: long k-grams repeat by chance less often (fewer false
    candidates), short ones give sparser anchors; 2L/3 balances the two."""
    return max(1, (2 * L) // 3)


def anchor_shard(shard_dir: str, out_dir: str, L: int) -> dict[str, Any]:
    """Task: one shard's anchors in text order, and their hashes sorted."""
    sdir, odir = Path(shard_dir), Path(out_dir)
    odir.mkdir(parents=True, exist_ok=True)
    tokens = load_npy(sdir / "tokens.npy")
    pos, hashes = native.anchors(tokens, np.load(sdir / "offsets.npy"), anchor_length(L), L)
    save_npy(odir / "anchors_hash.npy", hashes)
    save_npy(odir / "anchors_pos.npy", narrowed(pos, len(tokens) < (1 << 31)))  # read back as int64 (regions)
    hashes.sort()  # here, in parallel, so the driver only merges sorted runs
    save_npy(odir / "anchors_sorted.npy", hashes)
    return {"anchors": len(pos), **task_sums([odir / f for f in ANCHOR_FILES])}


def hash_cuts(arrays: list[np.ndarray], memory: int, parts: int) -> list[int | None]:
    """Bounds of hash ranges [cuts[i], cuts[i+1]) (None: open) that hold at most about
    `memory` bytes each while `parts` of them are merged at once, and at least `parts` of
    them. Anchor hashes are minima of w hashes, so they crowd the low end of the range (most
    have their top four bits zero): the ranges are cut at quantiles of a sample, not at top
    bits, or one range would hold nearly all of them."""
    total = sum(len(a) for a in arrays)
    # a range holds its hashes, their merged copy and the comparison flags: ~24 bytes each
    n = int(min(max(parts, -(-total * 24 * parts // max(memory, 1))), max(total, 1), 1 << 16))
    step = max(1, total // (n * 64))
    sample = np.sort(np.concatenate([np.asarray(a[::step]) for a in arrays] + [np.zeros(0, np.uint64)]))
    return [None, *(int(sample[len(sample) * i // n]) for i in range(1, n) if len(sample)), None]


def sorted_slice(arrays: list[np.ndarray], lo: int | None, hi: int | None) -> np.ndarray:
    """The values in [lo, hi) of sorted hash arrays, merged and sorted (None: unbounded)."""
    lo_v = None if lo is None else np.uint64(lo)
    hi_v = None if hi is None else np.uint64(hi)
    chunk = [np.asarray(a[0 if lo_v is None else np.searchsorted(a, lo_v):
                          len(a) if hi_v is None else np.searchsorted(a, hi_v)]) for a in arrays]
    h = np.concatenate(chunk) if chunk else np.zeros(0, np.uint64)
    if len(chunk) > 1:
        h.sort(kind="stable")  # timsort: merges the shards' sorted runs in linear passes
    return h


def distinct(h: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array."""
    return h[np.concatenate(([True], h[1:] != h[:-1]))] if len(h) else h


def repeated_in_range(arrays: list[np.ndarray], lo: int | None, hi: int | None) -> np.ndarray:
    """Sorted distinct hashes in [lo, hi) that occur at least twice over the sorted arrays
    (equal hashes share a range)."""
    h = sorted_slice(arrays, lo, hi)
    return distinct(h[1:][h[1:] == h[:-1]])


@dataclass(frozen=True)
class RepeatedRange:
    """Task: the repeated hashes of one range of values, over every shard's sorted anchors."""
    files: tuple[str, ...]
    lo: int | None
    hi: int | None
    out: str

    def __call__(self) -> dict[str, Any]:
        found = repeated_in_range([load_npy(Path(f)) for f in self.files], self.lo, self.hi)
        save_npy(Path(self.out), found)
        return {"hashes": len(found), "wrote": file_bytes([self.out])}


def repeated_hashes(sorted_files: list[Path], memory: int, parts: int = 1, executor=None,
                    folder: Path | None = None) -> np.ndarray:
    """Sorted distinct hashes that occur at least twice over all the files (each sorted),
    merged a range of hash values at a time (see hash_cuts), `parts` ranges at once: as
    tasks on `executor` (each writes its range to `folder`), else here one after another."""
    arrays = [load_npy(p) for p in sorted_files]
    cuts = hash_cuts(arrays, memory, parts)
    if executor is not None:
        files = tuple(map(str, sorted_files))
        return range_tasks(executor, folder, cuts, lambda lo, hi, out: RepeatedRange(files, lo, hi, out))
    found = [repeated_in_range(arrays, cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1)]
    return np.concatenate(found) if found else np.zeros(0, np.uint64)


def range_tasks(executor, folder: Path, cuts: list, task) -> np.ndarray:
    """The hashes `task(lo, hi, out)` writes to `out` for each range of `cuts`, run as tasks
    on `executor` (their files in `folder`, gone once read), concatenated in range order."""
    outs = [folder / f"repeated_{i:05d}.npy" for i in range(len(cuts) - 1)]
    for _ in executor.imap([task(cuts[i], cuts[i + 1], str(outs[i])) for i in range(len(outs))]):
        pass
    found = [np.load(o) for o in outs]
    for o in outs:
        o.unlink()
    return np.concatenate(found) if found else np.zeros(0, np.uint64)


def candidate_shard(shard_dir: str, out_dir: str, repeated_path: str, L: int) -> dict[str, Any]:
    """Task: one shard's candidate regions: their tokens, bounds and starts in the shard."""
    sdir, odir = Path(shard_dir), Path(out_dir)
    tokens = load_npy(sdir / "tokens.npy")
    offsets = np.load(sdir / "offsets.npy").astype(np.int64)
    repeated = load_npy(Path(repeated_path))
    hit = native.member(load_npy(odir / "anchors_hash.npy"), repeated)
    anchors = load_npy(odir / "anchors_pos.npy")[hit]
    starts, ends = native.regions(anchors, offsets, anchor_length(L), L)
    lengths = ends - starts
    region_offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=region_offsets[1:])
    m = int(region_offsets[-1])
    with npy_in_place(odir / "tokens.npy", tokens.dtype, m) as out:
        native.gather_regions(tokens, starts, ends, out)
    save_npy(odir / "offsets.npy", region_offsets)
    save_npy(odir / "starts.npy", starts)
    return {"tokens": len(tokens), "candidate_tokens": m, "regions": len(starts),
            "repeated_anchors": int(np.count_nonzero(hit)), **task_sums([odir / f for f in CANDIDATE_FILES])}


@dataclass(frozen=True)
class AnchorShard:
    shard_dir: str
    out_dir: str
    L: int

    def __call__(self) -> dict[str, Any]:
        return anchor_shard(self.shard_dir, self.out_dir, self.L)


@dataclass(frozen=True)
class CandidateShard:
    shard_dir: str
    out_dir: str
    repeated_path: str
    L: int

    def __call__(self) -> dict[str, Any]:
        return candidate_shard(self.shard_dir, self.out_dir, self.repeated_path, self.L)


def window_folder(ws, L: int) -> Path:
    """Everything built for windows of L tokens, beside the shards: the candidate text, its
    arrays, the groups."""
    return folder_of(ws) / f"L{L}"


def window_dirs(ws, L: int) -> list[Path]:
    folder = window_folder(ws, L)
    return [folder / s.name for s in shard_dirs(ws)]


class Candidates(Stage):
    name = "candidates"
    records = ("anchors", "repeated", "candidates")

    def settings(self, ctx: Context) -> Any:
        L = ctx.wf.substring.window
        return [L, anchor_length(L)]

    def whole(self, ctx: Context, key: str) -> bool:
        ws, L = ctx.ws, ctx.wf.substring.window
        outs = window_dirs(ws, L)
        return ws.is_done("repeated", self._repeated_key(ctx, key, len(outs)),
                          files=[window_folder(ws, L) / "repeated.npy"]) and \
            all(ws.is_done(self.name, self._cand_key(ctx, key, k), shard=k, files=[o / f for f in CANDIDATE_FILES])
                for k, o in enumerate(outs))

    @staticmethod
    def _repeated_key(ctx: Context, key: str, n: int) -> str:
        return chain(key, "repeated", [ctx.ws.checksum("anchors", k) for k in range(n)])

    @staticmethod
    def _cand_key(ctx: Context, key: str, k: int) -> str:
        ws = ctx.ws
        return chain(key, k, ws.checksum("tokenize", k), ws.checksum("repeated"))

    def summary(self, d: dict[str, Any]) -> str:
        return (f"candidates: {d['candidate_tokens']} of {d['tokens']} tokens "
                f"({d['candidate_tokens'] / max(d['tokens'], 1):.1%}) can hold a repeated {d['L']}-token window")

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        ws = ctx.ws
        L = ctx.wf.substring.window
        shards = shard_dirs(ws)
        outs = window_dirs(ws, L)
        folder = window_folder(ws, L)
        repeated_path = folder / "repeated.npy"
        t0 = time.perf_counter()
        anchored = self.map_shards(ctx, "anchors", "anchors", [
            ShardJob(k, chain(key, "anchors", k, ws.checksum("tokenize", k)), [outs[k] / f for f in ANCHOR_FILES],
                     AnchorShard(str(shards[k]), str(outs[k]), L)) for k in range(len(shards))])
        t1 = time.perf_counter()
        repeated_key = self._repeated_key(ctx, key, len(shards))
        if anchored or ctx.force or not ws.is_done("repeated", repeated_key, files=[repeated_path]):
            folder.mkdir(parents=True, exist_ok=True)
            memory, parts = min(usable_budget(ctx.wf) // 2, REPEATED_MEMORY), max(1, ctx.wf.run.n_workers)
            if ctx.wf.run.reference:  # a hash a reference's anchor carries is repeated too
                repeated = reference.repeated_hashes(self, ctx, key, [o / "anchors_sorted.npy" for o in outs], memory,
                                                     parts, folder)
            else:
                repeated = repeated_hashes([o / "anchors_sorted.npy" for o in outs], memory, parts, ctx.executor,
                                           folder)
            save_npy(repeated_path, repeated)
            driver_wrote(ctx, [repeated_path])
            ws.mark("repeated", repeated_key, "done", files=[repeated_path], artifact=folder, hashes=len(repeated))
        t2 = time.perf_counter()
        redone = self.map_shards(ctx, self.name, "candidate text", [
            ShardJob(k, self._cand_key(ctx, key, k), [outs[k] / f for f in CANDIDATE_FILES],
                     CandidateShard(str(shards[k]), str(outs[k]), str(repeated_path), L)) for k in range(len(shards))])
        per_shard = [ws.stage_detail(self.name, k) for k in range(len(shards))]
        return {"tokens": sum(d.get("tokens", 0) for d in per_shard),
                "candidate_tokens": sum(d.get("candidate_tokens", 0) for d in per_shard), "k": anchor_length(L), "L": L,
                "anchors": sum(ws.stage_detail("anchors", k).get("anchors", 0) for k in range(len(shards))),
                "anchors_rebuilt": len(anchored), "candidates_rebuilt": len(redone), "shards": len(shards),
                "anchors_seconds": round(t1 - t0, 3), "repeated_seconds": round(t2 - t1, 3)}
