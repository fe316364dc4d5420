"""Executors run per-shard tasks; stages never know which one they run on.

A task is a top-level function and picklable arguments (paths and numbers, never arrays),
so the same stage can run inline, on a local process pool, or on a distributed cluster.
"""
from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, Protocol


class Executor(Protocol):
    workers: int

    def imap(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> Iterator[tuple[int, Any]]:
        """Runs fn(*task) for every task; yields (task index, result) as each finishes."""
        ...

    def warm(self) -> None:
        """Gets workers ready ahead of the first task, without blocking (may do nothing)."""
        ...

    def close(self) -> None:
        """Releases workers; the executor may not be used afterwards."""
        ...


class InlineExecutor:
    workers = 1

    def imap(self, fn, tasks):
        for i, args in enumerate(tasks):
            yield i, fn(*args)

    def warm(self) -> None:
        pass

    def close(self) -> None:
        pass


def _die_with_parent(parent: int) -> None:
    """Pool workers are SIGKILLed when the driver dies, however it dies (Linux prctl);
    orphans would otherwise hold the terminal and burn CPU for a run nobody waits for."""
    import ctypes
    import os
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the driver died before the call took effect
        os._exit(1)


def _import_stages() -> None:
    import sadedup.stages.build  # noqa: F401  (numpy, pydivsufsort, the native core)
    import sadedup.stages.repeats  # noqa: F401


class LocalExecutor:
    """A pool of `workers` processes on this machine (spawned: no inherited locks or handles),
    started on first use and kept for every stage of a run: starting one costs a second."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            import os

            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=mp.get_context("spawn"),
                                             initializer=_die_with_parent, initargs=(os.getpid(),))
        return self._pool

    def imap(self, fn, tasks):
        if self.workers == 1 or len(tasks) <= 1:
            yield from InlineExecutor().imap(fn, tasks)
            return
        pool = self._get_pool()
        pending = {pool.submit(fn, *args): i for i, args in enumerate(tasks)}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = pending.pop(fut)
                    yield i, fut.result()
        finally:
            for fut in pending:
                fut.cancel()

    def warm(self) -> None:
        """Starts the workers now, without waiting for them: they boot and import the stages
        on the other cores while the driver ingests."""
        if self.workers > 1:
            pool = self._get_pool()
            for _ in range(self.workers):
                pool.submit(_import_stages)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def imap_reading(executor: Executor, fn: Callable[..., Any], tasks: Sequence[tuple], sizes: Sequence[int],
                 advance: Callable[[int], Any]) -> Iterator[tuple[int, Any]]:
    """executor.imap for tasks that read input files (`sizes` bytes each), with progress: a
    lone task runs here and reports every block it reads (fn takes `on_read`), so a single
    large compressed file moves the bar as it goes; otherwise each task counts when it ends."""
    if len(tasks) == 1:
        yield 0, fn(*tasks[0], on_read=advance)
        return
    for i, result in executor.imap(fn, tasks):
        advance(sizes[i])
        yield i, result


def make_executor(kind: str, workers: int) -> Executor:
    if kind == "local":
        return LocalExecutor(workers)
    if kind == "inline":
        return InlineExecutor()
    from .errors import SadedupError
    raise SadedupError(f"unknown executor {kind!r} (choose local or inline)")
