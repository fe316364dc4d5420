"""What every stage shares: its key, whether it is current, and the lifecycle of a run
(skip when done, mark running, time, mark done with the digest of what it made, say it).

A stage writes only its work (`work`); per-shard work goes through `map_shards`, which
skips finished shards, runs the rest on the executor, records each one's checksum and
moves the progress bar.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import faults, graph, reference
from ..config import Workflow
from ..errors import Interrupted
from ..executor import Executor, InlineExecutor, process_cpu
from ..memory import peak_bytes, reset_peak
from ..progress import bar, say
from ..provenance import Provenance
from ..workspace import Workspace, digest, file_bytes


@dataclass
class Context:
    ws: Workspace
    executor: Executor = field(default_factory=InlineExecutor)
    force: bool = False

    @property
    def wf(self) -> Workflow:
        return self.ws.workflow


def chain(*parts: Any) -> str:
    return digest(list(parts))


def driver_wrote(ctx: Context, paths: Sequence[Path]) -> None:
    """Counts files the driver wrote for tasks to read (the stage detail's moved_bytes,
    under "driver"; the tasks' own are counted from their results, executor.tally)."""
    moved = getattr(ctx.executor, "moved", None)
    if moved is not None:
        moved["driver"] = moved.get("driver", 0) + file_bytes(paths)


@dataclass(frozen=True)
class ShardJob:
    """One shard's task: the key its record must carry, the files it writes (checked and
    checksummed), and the task to run when they are missing or stale."""
    shard: int
    key: str
    files: list[Path]
    task: Callable[[], dict]


class Stage:
    name = "stage"
    # bumped when the stage's algorithm changes, so old results are not reused
    version = 1
    # stages its command runs first, as one step (the build command finds the candidates)
    runs_after: tuple[str, ...] = ()
    # the records (stage names in the `stages` table) its shards are written under
    records: tuple[str, ...] = ()

    # ---- what a stage declares
    def settings(self, ctx: Context) -> Any:
        """The settings its result depends on (beyond what it reads)."""
        return None

    def files(self, ctx: Context) -> list[Path]:
        """Files whose checksum is the stage's record (checked before it is skipped)."""
        return []

    def whole(self, ctx: Context, key: str) -> bool:
        """Beyond its record: its artifacts are all there and intact (per-shard stages)."""
        return True

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        """The stage's work; returns the detail to record. A "digest" entry, when given, is
        the checksum of what it decided (stages that write only to the database)."""
        raise NotImplementedError

    def summary(self, detail: dict[str, Any]) -> str | None:
        return None

    # ---- derived from the graph
    def upstream(self, ctx: Context) -> list[str]:
        return graph.upstream(self.name, ctx.wf)

    def stamps(self, ctx: Context) -> list:
        """What this stage read, as recorded: each upstream stage's key and output checksum
        (None for one that is not done)."""
        out = []
        for u in self.upstream(ctx):
            row = ctx.ws.stage_row(u)
            out.append([u, None] if row is None or row.status != "done" else [u, row.key, row.checksum])
        # and what it reads from the references (--reference), so a reference that changed
        # makes it stale; nothing for a stage that reads none, or a run without references
        return out + reference.stamps(ctx, self.name)

    def key(self, ctx: Context) -> str:
        return chain(self.name, self.version, self.settings(ctx), self.stamps(ctx))

    def done(self, ctx: Context, key: str | None = None) -> bool:
        """Recorded done under the current key, with its files and artifacts intact."""
        key = key or self.key(ctx)
        ws = ctx.ws
        if not ws.is_done(self.name, key, files=self.files(ctx) or None):
            return False
        if graph.node(self.name).decides and not Provenance.intact(ws.read, self.name, ws.stage_detail(self.name)):
            return False
        return self.whole(ctx, key)

    # ---- the lifecycle
    def run(self, ctx: Context) -> dict[str, Any]:
        ws = ctx.ws
        key = self.key(ctx)
        if not ctx.force and self.done(ctx, key):
            return ws.stage_detail(self.name) | {"skipped": True}
        # the pid: `status` calls the row running only while this process holds the folder (a
        # sweep or a count holding it beside a dead run's row is not that run)
        ws.mark(self.name, key, "running", pid=os.getpid())
        t0 = time.perf_counter()
        reset_peak()
        ctx.executor.peak = 0
        ctx.executor.moved = {}
        ctx.executor.cpu = ctx.executor.cpu_here = 0.0
        c0 = process_cpu()
        try:
            detail = self.work(ctx, key)
        except BaseException as e:
            why = "interrupted" if isinstance(e, (KeyboardInterrupt, Interrupted)) else f"{type(e).__name__}: {e}"
            try:
                ws.mark(self.name, key, "failed", error=why)
            except Exception:
                pass
            raise
        decided = detail.pop("digest", None)
        detail.setdefault("seconds", round(time.perf_counter() - t0, 3))
        # peak resident memory while the stage ran: of the driver, of the busiest worker, the larger
        of = {"driver": peak_bytes(), "worker": ctx.executor.peak}
        detail["peak_memory"], detail["peak_memory_of"] = max(of.values()), of
        # bytes written to the work folder for other tasks (or the driver) to read, by the
        # type of the task that wrote them and "driver", in this run: what a cluster's shared
        # file system carries between tasks; {} for a stage that hands nothing on by files
        moved = getattr(ctx.executor, "moved", None)
        if moved is not None:
            detail["moved_bytes"] = dict(sorted(moved.items()))
        # CPU seconds while the stage ran: of its tasks (wherever they ran) and of the driver
        # besides them; what a cluster's machines would share, and what stays on one
        here = getattr(ctx.executor, "cpu_here", 0.0)  # the tasks run in this process
        detail["cpu_seconds"] = {"driver": round(process_cpu() - c0 - here, 3),
                                 "tasks": round(getattr(ctx.executor, "cpu", 0.0), 3)}
        files = self.files(ctx)
        ws.mark(self.name, key, "done", files=files or None, checksum=decided or self._shards_digest(ctx),
                stamps=self.stamps(ctx), **detail)
        line = self.summary(detail)
        if line:
            say(line)
        return detail

    def _shards_digest(self, ctx: Context) -> str | None:
        """The checksum of a per-shard stage: of its records' checksums."""
        if not self.records:
            return None
        return chain(ctx.ws.record_checksums(self.records))

    def map_shards(self, ctx: Context, record: str, label: str, jobs: Sequence[ShardJob]) -> list[int]:
        """Runs the jobs (every shard of `record`) whose shard is not recorded done under its
        key with its files intact; records each as it finishes. Returns the shards that ran."""
        ws = ctx.ws
        # the jobs are all of the record's shards: any other record of it is a former plan's
        ws.prov.forget_shards(record, [j.shard for j in jobs])
        todo = [j for j in jobs if ctx.force or not ws.is_done(record, j.key, shard=j.shard, files=j.files)]
        with bar(label, len(jobs), "shards") as b:
            b.advance(len(jobs) - len(todo))
            for i, res in ctx.executor.imap([j.task for j in todo]):
                j = todo[i]
                ws.mark(record, j.key, "done", shard=j.shard, files=j.files, artifact=j.files[0].parent, **res)
                faults.point(f"{record}.shard")
                b.advance()
        return [j.shard for j in todo]
