"""Per shard: suffix array (pydivsufsort) and LCP array (native), as .npy.

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
from pathlib import Path
from typing import Any

import numpy as np
import pydivsufsort

from .. import faults, native
from ..progress import bar, say
from ..workspace import save_npy, task_sums
from .base import Context, Stage, chain
from .candidates import Candidates
from .tokenize import Tokenize

BUILD_FILES = ("sa.npy", "lcp.npy")


def build_shard(shard_dir: str, lcp_cap: int | None = None) -> dict[str, Any]:
    """Task: builds one shard's suffix and LCP arrays (capped at `lcp_cap` when given).
    Gets a path, writes files, returns counts."""
    sdir = Path(shard_dir)
    t0 = time.perf_counter()
    tokens = np.load(sdir / "tokens.npy")  # divsufsort needs a writable in-memory array
    n = len(tokens)
    if n == 0:
        sa = np.zeros(0, dtype=np.int32)
    else:
        sa = pydivsufsort.divsufsort(tokens)
        if n < (1 << 31) and sa.dtype != np.int32:
            sa = sa.astype(np.int32)
    t1 = time.perf_counter()
    save_npy(sdir / "sa.npy", sa)
    lcp = native.lcp_array(tokens, sa) if lcp_cap is None else native.lcp_capped(tokens, sa, lcp_cap)
    save_npy(sdir / "lcp.npy", lcp)
    return {"tokens": n, "sa_seconds": round(t1 - t0, 3), "lcp_seconds": round(time.perf_counter() - t1, 3),
            **task_sums([sdir / f for f in BUILD_FILES])}


class Build(Stage):
    name = "build"
    runs_after = (Candidates,)

    @staticmethod
    def source(ctx: Context) -> Stage:
        """The stage whose tokens.npy each shard's arrays sort: the candidate text, or all of it."""
        return Candidates() if Candidates().enabled(ctx) else Tokenize()

    @staticmethod
    def lcp_cap(ctx: Context) -> int | None:
        """L over candidate text (see the module docstring), None (exact) over all of it."""
        return ctx.wf.substring.window if Candidates().enabled(ctx) else None

    def key(self, ctx: Context) -> str:
        return chain("build", self.source(ctx).key(ctx), self.lcp_cap(ctx))

    def dirs(self, ctx: Context) -> list[Path]:
        """Per shard, the folder of the tokens sorted, where sa.npy and lcp.npy are written."""
        return self.source(ctx).shard_dirs(ctx)

    def run(self, ctx: Context) -> dict[str, Any]:
        ws = ctx.ws
        key = self.key(ctx)
        src = self.source(ctx)
        cap = self.lcp_cap(ctx)
        shards = src.shard_dirs(ctx)
        keys = [chain(key, k, ws.checksum(src.name, k)) for k in range(len(shards))]
        todo = [k for k, sdir in enumerate(shards)
                if ctx.force or not ws.is_done(self.name, keys[k], shard=k, files=[sdir / f for f in BUILD_FILES])]
        ws.mark(self.name, key, "running")
        t0 = time.perf_counter()
        with bar("suffix arrays", len(shards), "shards") as b:
            b.advance(len(shards) - len(todo))
            for i, result in ctx.executor.imap(build_shard, [(str(shards[k]), cap) for k in todo]):
                k = todo[i]
                ws.mark(self.name, keys[k], "done", shard=k, files=[shards[k] / f for f in BUILD_FILES],
                        artifact=shards[k], **result)
                faults.point("build.shard")
                b.advance()
        detail = {"shards": len(shards), "built": len(todo), "reused": len(shards) - len(todo),
                  "seconds": round(time.perf_counter() - t0, 3)}
        ws.mark(self.name, key, "done", **detail)
        say(f"build: suffix and LCP arrays for {len(todo)} shard(s)"
            + (f", {len(shards) - len(todo)} reused" if len(todo) < len(shards) else ""))
        return detail
