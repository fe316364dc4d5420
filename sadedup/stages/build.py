"""Per shard: suffix array (libsais for one-byte tokens, pydivsufsort for wider ones) and LCP
array (native), as .npy.

Both are int32 when the shard has fewer than 2^31 tokens, else int64, and are kept after
the run (DESIGN.md): sa[i] is the start of the i-th smallest suffix of the shard's token
stream (documents concatenated without separators), lcp[0] = 0 and lcp[i] is the length
of the longest common prefix of the suffixes at sa[i-1] and sa[i], counted across document
ends; callers cap it at the distance to the end of the document.

Over the whole text (`substring.prefilter` off) the LCP array is exact (Phi algorithm), so
it answers questions about any length. Over candidate text it is capped at L, min(LCP, L),
as uint8 (L <= 255) or uint16: that text only holds the repeats of L tokens or more, the
windows need no more, and a direct comparison of neighbours makes it in one pass at about
half Phi's time, with a quarter of the bytes to write.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pydivsufsort

from .. import native
from ..workspace import load_npy, npy_in_place, save_npy, task_sums
from .base import Context, ShardJob, Stage, chain
from .candidates import window_dirs
from .tokenize import shard_dirs

BUILD_FILES = ("sa.npy", "lcp.npy")


def save_suffix_array(tokens: np.ndarray, path: Path) -> np.ndarray:
    """sa.npy of `tokens` (int32 below 2^31 tokens, else int64), returned mapped. One-byte
    tokens are sorted by libsais straight into the file's map (native.suffix_array: no
    array of 4 bytes a token to zero, fill and copy into the page cache); wider ones by
    pydivsufsort, which sorts them as big-endian bytes and needs them writable in memory."""
    n = len(tokens)
    if 0 < n < (1 << 31) - 1 and tokens.dtype == np.uint8:
        with npy_in_place(path, np.int32, n) as sa:
            native.suffix_array(tokens, out=sa)
    else:
        sa = pydivsufsort.divsufsort(np.array(tokens)) if n else np.zeros(0, dtype=np.int32)
        if n < (1 << 31) and sa.dtype != np.int32:  # half the bytes to store and to map
            sa = sa.astype(np.int32)
        save_npy(path, sa)
    return load_npy(path)


def build_shard(shard_dir: str, lcp_cap: int | None = None) -> dict[str, Any]:
    """Task: builds one shard's suffix and LCP arrays (capped at `lcp_cap` when given).
    Gets a path, writes files, returns counts."""
    sdir = Path(shard_dir)
    t0 = time.perf_counter()
    tokens = load_npy(sdir / "tokens.npy")
    n = len(tokens)
    sa = save_suffix_array(tokens, sdir / "sa.npy")
    t1 = time.perf_counter()
    with npy_in_place(sdir / "lcp.npy", sa.dtype if lcp_cap is None else native.capped_lcp_dtype(lcp_cap), n) as lcp:
        if lcp_cap is None:
            native.lcp_array(tokens, sa, out=lcp)
        else:
            native.lcp_capped(tokens, sa, lcp_cap, out=lcp)
    return {"tokens": n, "sa_seconds": round(t1 - t0, 3), "lcp_seconds": round(time.perf_counter() - t1, 3),
            **task_sums([sdir / f for f in BUILD_FILES])}


@dataclass(frozen=True)
class BuildShard:
    shard_dir: str
    lcp_cap: int | None = None

    def __call__(self) -> dict[str, Any]:
        return build_shard(self.shard_dir, self.lcp_cap)


def sorted_dirs(ws, wf) -> list[Path]:
    """Per shard, the folder of the tokens Build sorts (where sa.npy and lcp.npy are): the
    candidate text, or all of it with the prefilter off."""
    return window_dirs(ws, wf.substring.window) if wf.substring.prefilter else shard_dirs(ws)


class Build(Stage):
    name = "build"
    runs_after = ("candidates",)
    records = ("build",)

    @staticmethod
    def lcp_cap(ctx: Context) -> int | None:
        """L over candidate text (see the module docstring), None (exact) over all of it."""
        return ctx.wf.substring.window if ctx.wf.substring.prefilter else None

    def settings(self, ctx: Context) -> Any:
        return self.lcp_cap(ctx)

    def _jobs(self, ctx: Context, key: str) -> list[ShardJob]:
        ws = ctx.ws
        src = "candidates" if ctx.wf.substring.prefilter else "tokenize"
        cap = self.lcp_cap(ctx)
        return [ShardJob(k, chain(key, k, ws.checksum(src, k)), [d / f for f in BUILD_FILES], BuildShard(str(d), cap))
                for k, d in enumerate(sorted_dirs(ws, ctx.wf))]

    def whole(self, ctx: Context, key: str) -> bool:
        return all(ctx.ws.is_done(self.name, j.key, shard=j.shard, files=j.files) for j in self._jobs(ctx, key))

    def summary(self, d: dict[str, Any]) -> str:
        return (f"build: suffix and LCP arrays for {d['built']} shard(s)"
                + (f", {d['reused']} reused" if d["reused"] else ""))

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        jobs = self._jobs(ctx, key)
        built = self.map_shards(ctx, self.name, "suffix arrays", jobs)
        return {"shards": len(jobs), "built": len(built), "reused": len(jobs) - len(built)}
