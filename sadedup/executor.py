"""Executors run tasks; they know no stage.

A task is a small picklable callable (a frozen dataclass of paths and numbers, never arrays)
that returns a dict, so the same stage runs inline, on a local process pool, or on a
cluster. Executors are registered by name in EXECUTORS; `--executor NAME` picks one.
"""
from __future__ import annotations

import atexit
import itertools
import multiprocessing as mp
import os
import resource
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

Task = Callable[[], Any]


class Executor(Protocol):
    workers: int
    peak: int  # the largest resident memory a worker reached in a task since this was last set to 0
    moved: dict[str, int]  # bytes tasks wrote for others to read, by task type, since this was last emptied (tally)
    cpu: float  # CPU seconds of the processes that ran tasks, while they ran them, since this was last set to 0

    def imap(self, tasks: Sequence[Task]) -> Iterator[tuple[int, Any]]:
        """Runs every task; yields (task index, result) as each finishes."""
        ...

    def warm(self, modules: Sequence[str] = ()) -> None:
        """Gets workers ready ahead of the first task (importing `modules`), without blocking."""
        ...

    def close(self, abort: bool = False) -> None:
        """Releases workers (at once, work in flight dropped, with `abort`)."""
        ...


def tally(moved: dict[str, int], task: Task, result: Any) -> None:
    """Counts in `moved`, under the task's type, the bytes its result says it wrote to the
    work folder for other tasks (or the driver) to read: its `wrote`, else the size of the
    files it checksummed (`sums`, workspace.task_sums). The task knows what it wrote, so this
    costs a stat at most, and the count is the same on every executor."""
    if not isinstance(result, dict):
        return
    n = result.get("wrote")
    if n is None and isinstance(result.get("sums"), (tuple, list)):
        n = result["sums"][0]
    if n is not None:
        name = type(task).__name__
        moved[name] = moved.get(name, 0) + int(n)


def process_cpu() -> float:
    """CPU seconds (user and system) of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_here(executor: Any, task: Callable[..., Any], **kwargs: Any) -> Any:
    """A task run in this process (the driver): its result counted (tally) and its CPU added
    to the executor's tasks' CPU, as a worker's would be (and to `cpu_here`, which the driver's
    own CPU leaves out)."""
    c0 = process_cpu()
    result = task(**kwargs)
    if hasattr(executor, "cpu"):
        spent = process_cpu() - c0
        executor.cpu += spent
        executor.cpu_here = getattr(executor, "cpu_here", 0.0) + spent
    tally(getattr(executor, "moved", {}), task, result)
    return result


def _inline(executor: Any, tasks: Sequence[Task]) -> Iterator[tuple[int, Any]]:
    for i, task in enumerate(tasks):
        yield i, run_here(executor, task)


class InlineExecutor:
    """Every task in this process, one after another (debugging, tests, tiny inputs). Their
    memory is the driver's, measured by the stage."""
    workers = 1
    peak = 0

    def __init__(self, workers: int = 1) -> None:
        self.moved: dict[str, int] = {}
        self.cpu = 0.0

    def imap(self, tasks):
        yield from _inline(self, tasks)

    def warm(self, modules=()) -> None:
        pass

    def close(self, abort: bool = False) -> None:
        pass


def _worker_init(parent: int) -> None:
    """Pool workers are SIGKILLed when the driver dies, however it dies (Linux prctl): orphans
    would otherwise hold the terminal and burn CPU for a run nobody waits for. A Ctrl-C from
    the terminal reaches the whole process group: the driver alone answers it, so workers
    ignore SIGINT instead of each printing a traceback."""
    import ctypes

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    atexit.register(_exit_at_once)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the driver died before the call took effect
        os._exit(1)


def _exit_at_once() -> None:
    """A worker the pool lets go ends here, before the interpreter's own exit: that ran a full
    garbage collection over everything the tasks imported and made (gc_collect_main, 0.3-0.4 s
    a worker on a quiet machine, 1.5 s under load, while the driver's shutdown waited for it).
    A task's files are whole and in place before it returns, so nothing is left to flush but
    the worker's own stdout and stderr."""
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    os._exit(0)


def _import(modules: Sequence[str]) -> None:
    import importlib

    for m in modules:
        importlib.import_module(m)


async def _import_in_background(modules: Sequence[str]) -> None:
    """On a Dask worker: `_import` on a thread, off the worker's event loop. A coroutine,
    because Client.run does not wait only for those (wait=False refuses plain functions)."""
    import asyncio

    await asyncio.to_thread(_import, modules)


_TRACKER_WARNING = "ignore:resource_tracker:UserWarning"


def _quiet_resource_tracker() -> None:
    """The pool's resource tracker, a process of its own, outlives a run killed with SIGKILL
    (the OOM killer, kill -9) and frees the pool's semaphores after it, rightly, but warns
    "There appear to be N leaked semaphore objects" on the terminal after the shell's prompt.
    The tracker takes the interpreter's -W options from sys.warnoptions when it is started
    (multiprocessing.util._args_from_interpreter_flags), so the filter goes there before the
    first pool starts it; this process's own warnings are not affected."""
    if _TRACKER_WARNING not in sys.warnoptions:
        sys.warnoptions.append(_TRACKER_WARNING)


class LocalExecutor:
    """A pool of up to `workers` processes on this machine (spawned: no inherited locks or
    handles), kept for every stage of a run: starting one costs a second.

    Never more processes than tasks: a spawned pool starts a process only when a submitted
    task finds no idle one (Python 3.9+; a forked pool would start them all at once, and is
    never used here), and `imap` keeps at most min(workers, tasks) of its tasks submitted at
    a time, so `--workers 1000` on three tasks starts three processes. More workers than
    cores is said by the pipeline (a warning), not refused."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self.peak = 0
        self.moved: dict[str, int] = {}
        self.cpu = 0.0
        self._pool: ProcessPoolExecutor | None = None
        self._tasked = False  # a task of a stage was given to the pool (not only warm's imports)

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            _quiet_resource_tracker()
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=mp.get_context("spawn"),
                                             initializer=_worker_init, initargs=(os.getpid(),))
        return self._pool

    def _renew_if_a_worker_died(self) -> None:
        """Before a batch of tasks, none in flight: a pool that is broken, or one of whose
        processes is gone before the pool's own thread noticed, lost a worker while it held no
        task of ours (a worker that dies in a task fails `imap` with _worker_died), so nothing
        is lost and a new pool goes on. Submitting to the broken one failed the run as
        "internal error: BrokenProcessPool" (a worker killed between two stages)."""
        pool = self._pool
        if pool is None:
            return
        if getattr(pool, "_broken", False) or any(
                not p.is_alive() for p in list((getattr(pool, "_processes", None) or {}).values())):
            pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _submit(self, fn, *args):
        """pool.submit with SIGINT ignored meanwhile: a worker it starts inherits that (Python
        keeps a SIGINT ignored at start-up ignored), so a Ctrl-C during the worker's start-up,
        before its initializer runs, cannot print a traceback from it."""
        old = signal.signal(signal.SIGINT, signal.SIG_IGN) if threading.current_thread() is threading.main_thread() \
            else None
        try:
            return self._get_pool().submit(fn, *args)
        finally:
            if old is not None:
                signal.signal(signal.SIGINT, old)

    def imap(self, tasks):
        if self.workers == 1 or len(tasks) <= 1:
            yield from _inline(self, tasks)
            return
        # at most this many submitted at once: the pool cannot start more processes than that
        in_flight = min(self.workers, len(tasks))
        self._renew_if_a_worker_died()
        queue = iter(enumerate(tasks))
        pending = {}
        try:
            self._tasked = True
            for i, task in itertools.islice(queue, in_flight):
                pending[self._submit(_measured, task)] = i
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = pending.pop(fut)
                    try:
                        result, peak, cpu = fut.result()
                    except BrokenProcessPool:
                        raise _worker_died(tasks[i]) from None
                    self.peak, self.cpu = max(self.peak, peak), self.cpu + cpu
                    tally(self.moved, tasks[i], result)
                    for j, task in itertools.islice(queue, 1):  # the next one, before the caller works
                        pending[self._submit(_measured, task)] = j
                    yield i, result
        except (Exception, GeneratorExit):
            # the rest is not wanted; an interrupt instead kills the pool (close(abort=True)),
            # and the pool cannot mark futures failed that were cancelled
            for fut in pending:
                fut.cancel()
            raise

    def warm(self, modules=()) -> None:
        """Starts the workers now, without waiting for them: they boot and import `modules`
        on the other cores while the driver ingests."""
        if self.workers > 1:
            from .config import machine_cores

            for _ in range(min(self.workers, machine_cores())):
                self._submit(_import, tuple(modules))

    def close(self, abort: bool = False) -> None:
        if self._pool is None:
            return
        # an interrupted run: the workers' tasks are dropped, not awaited; and workers only
        # warmed (every stage was done already) hold nothing: waiting for them to finish booting
        # cost a rerun with nothing to do 0.29 s of its 1.2
        if abort or not self._tasked:
            for p in list(getattr(self._pool, "_processes", {}).values()):
                try:
                    p.kill()
                except Exception:
                    pass
            manager = getattr(self._pool, "_executor_manager_thread", None)
            self._pool.shutdown(wait=False, cancel_futures=True)
            # the pool's thread ends once it sees its workers gone, closing its wake-up pipe;
            # waited for (briefly) so the interpreter's exit hook, which writes to that pipe,
            # finds it closed instead of racing the close ("Bad file descriptor" at exit)
            if manager is not None:
                manager.join(timeout=10)
        else:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None


def run_all(executor: Executor, tasks: Sequence[Task]) -> None:
    """Runs every task, for the files they write (their results are not wanted)."""
    for _ in executor.imap(tasks):
        pass


def _worker_died(task: Task) -> Exception:
    """A worker killed mid-task (the out-of-memory killer, a kill -9): one line that says so.
    Nothing it half-wrote is trusted by a rerun (tasks write atomically), so a rerun resumes."""
    from .errors import SadedupError

    return SadedupError(f"a worker process died during its {type(task).__name__} task (killed from outside, "
                        "often by the out-of-memory killer: a smaller --memory-budget or fewer --workers helps); "
                        "rerun the command to resume from the finished work")


def _measured(task: Task) -> tuple[Any, int, float]:
    """On a worker: the task's result, the peak resident memory of its process while it ran,
    and the CPU seconds of its process meanwhile (on a Dask worker its event loop's too)."""
    from .memory import peak_bytes, reset_peak

    reset_peak()
    c0 = process_cpu()
    result = task()
    return result, peak_bytes(), process_cpu() - c0


def _call(task: Task) -> tuple[Any, int, float]:
    from . import faults

    faults.delay()
    return _measured(task)


def _can_see(root: str) -> str | None:
    """On a worker: None when it can read the work folder and write in it, else why not."""
    import uuid

    marker = os.path.join(root, ".sadedup-workdir")
    if not os.path.exists(marker):
        return f"no {marker} there"
    probe = os.path.join(root, f".probe-{uuid.uuid4().hex}")
    try:
        with open(probe, "w") as f:
            f.write("probe")
        os.unlink(probe)
    except OSError as e:
        return f"cannot write there ({e.strerror or e})"
    return None


class DaskExecutor:
    """Tasks on a Dask distributed cluster (`run.scheduler`, tcp://HOST:PORT). Tasks carry
    paths, never arrays: the work folder must be one path every worker reads and writes (a
    shared file system), which `check_workdir` makes sure of before any work. A worker that
    dies has its task run again elsewhere (Dask does), and every artifact is renamed into
    place only when whole, so a rerun never trusts a half-written file."""

    local_reads = False

    def __init__(self, workers: int, scheduler: str = "") -> None:
        from .errors import SadedupError

        try:
            from distributed import Client
        except ImportError:
            raise SadedupError("the dask executor needs Dask distributed: pip install 'sadedup[dask]'") from None
        if not scheduler:
            raise SadedupError("the dask executor needs a scheduler: --set run.scheduler=tcp://HOST:PORT")
        try:
            self.client = Client(scheduler, timeout="5s", set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise SadedupError(f"dask scheduler {scheduler} is not reachable ({e})") from None
        self.scheduler = scheduler
        threads = sum(self.client.nthreads().values())
        if not threads:
            self.client.close()
            raise SadedupError(f"dask scheduler {scheduler} has no workers")
        self.workers = threads
        self.peak = 0
        self.moved: dict[str, int] = {}
        self.cpu = 0.0
        self._pending: list = []

    def check_workdir(self, root: str) -> None:
        from .errors import SadedupError

        for worker, why in sorted(self.client.run(_can_see, os.path.abspath(root)).items()):
            if why is not None:
                raise SadedupError(f"dask worker {worker} cannot use the work folder {root}: {why}; it must be a "
                                   f"path every worker can read and write")

    def imap(self, tasks):
        from distributed import as_completed

        futures = [self.client.submit(_call, t, pure=False, key=f"sadedup-{type(t).__name__}-{os.urandom(6).hex()}")
                   for t in tasks]
        index = {f.key: i for i, f in enumerate(futures)}
        self._pending = futures
        try:
            for fut in as_completed(futures, loop=self.client.loop):
                result, peak, cpu = fut.result()
                self.peak, self.cpu = max(self.peak, peak), self.cpu + cpu
                i = index[fut.key]
                tally(self.moved, tasks[i], result)
                yield i, result
        except (Exception, GeneratorExit):
            self.client.cancel(futures)
            raise
        finally:
            self._pending = []

    def warm(self, modules=()) -> None:
        if modules:
            self.client.run(_import_in_background, tuple(modules), wait=False)

    def close(self, abort: bool = False) -> None:
        if abort and self._pending:
            self.client.cancel(self._pending)
        self.client.close()


def in_order(results: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    """(index, result) pairs that come in any order (executor.imap), given back in index
    order, each as soon as every one before it has come: the driver can append a task's part
    to a joined file while the workers still write the parts after it."""
    waiting: dict[int, Any] = {}
    nxt = 0
    for i, result in results:
        waiting[i] = result
        while nxt in waiting:
            yield nxt, waiting.pop(nxt)
            nxt += 1


def imap_reading(executor: Executor, tasks: Sequence[Callable[..., Any]], sizes: Sequence[int],
                 advance: Callable[[int], Any]) -> Iterator[tuple[int, Any]]:
    """executor.imap for tasks that read input files (`sizes` bytes each), with progress: a
    lone task runs here (on an executor whose tasks may run on this machine) and reports every
    block it reads (tasks take `on_read`), so a single large compressed file moves the bar as
    it goes; otherwise each task counts when it ends."""
    if len(tasks) == 1 and getattr(executor, "local_reads", True):
        yield 0, run_here(executor, tasks[0], on_read=advance)
        return
    for i, result in executor.imap(tasks):
        advance(sizes[i])
        yield i, result


EXECUTORS: dict[str, type] = {"local": LocalExecutor, "inline": InlineExecutor, "dask": DaskExecutor}


def make_executor(kind: str, workers: int, scheduler: str = "") -> Executor:
    if kind not in EXECUTORS:
        from .errors import SadedupError

        raise SadedupError(f"unknown executor {kind!r} (choose {', '.join(EXECUTORS)})")
    if kind == "dask":
        return DaskExecutor(workers, scheduler)
    return EXECUTORS[kind](workers)
