"""The work folder: where artifacts live, what is done, and who may write.

Layout (folder names carry the configuration that made them, so changing a setting never
mixes old and new files):

    <workdir>/sadedup.db                      provenance database (DESIGN.md)
    <workdir>/state.json                      inputs and resolved workflow of the last run
    <workdir>/ingest/texts.bin, offsets.npy   UTF-8 of every document, concatenated; doc offsets
    <workdir>/substring/<tok>_<N>tps_<docs>/  token shards: shard_00000/{tokens,docs,offsets,sa,lcp}.npy
        L<L>/                                 windows and global group ids per shard

Every file is written under a temporary name and renamed into place when complete; a stage
record holds the artifact's size and xxh3 checksum, and a stage is done only while both
still match.
"""
from __future__ import annotations

import atexit
import dataclasses
import fcntl
import functools
import gc
import hashlib
import io
import json
import os
import shutil
import signal
import sqlite3
import time
from collections import namedtuple
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import xxhash

from . import __version__, db, graph, native
from .config import Workflow, workflow_from_dict
from .errors import InputsChanged, SadedupError, damaged, note_path
from .provenance import Provenance
from .locations import Url, has_glob, is_url, without_file_scheme
from .outputs import output_of, written_by
from .readers import InputFile, detect, expand_inputs

STATE = "state.json"


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:12]


_FOLD_AT_EXIT: set[Path] = set()


def _fold_at_exit() -> None:
    """db.fold_journal once the command is over, for each database unlock could not fold: the
    interrupt's traceback, which kept a closed connection's cursor alive (and so the
    connection), is garbage by then, in a cycle with its frames until a collection. The CLI
    froze every object as it finished (gc.freeze: no collection at exit): unfrozen here, the
    rare exit that needs one pays for it."""
    if not _FOLD_AT_EXIT:
        return
    gc.unfreeze()
    gc.collect()
    for path in sorted(_FOLD_AT_EXIT):
        db.fold_journal(path)


atexit.register(_fold_at_exit)


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block is done (a few milliseconds of renames
    or a journal switch that, cut halfway, would leave the folder in a state no run leaves)."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


@contextmanager
def replaced(path: Path, suffix: str = ".tmp", folder: Path | None = None) -> Iterator[BinaryIO]:
    """A file to write `path` through: opened under a temporary name beside it (or in
    `folder`, on its file system) and renamed over it when the block ends, so `path` is never
    seen half written. On a failure the temporary file goes, and a write error names it (a
    full disk: say which file)."""
    tmp = (path.parent if folder is None else folder) / (path.name + suffix)
    try:
        with open(tmp, "wb") as f:
            yield f
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        raise note_path(e, tmp) if isinstance(e, OSError) else e
    os.replace(tmp, path)


def save_npy(path: Path, arr: np.ndarray) -> None:
    """What np.save writes, through `replaced`.

    The data goes through Python's file write, not numpy's tofile: tofile reports a full
    disk without an error number ("... requested and ... written"), so it could not be told
    from any other failure; a Python write raises ENOSPC or EFBIG.

    A 2-d array whose rows are each contiguous (the first columns of a wider array) is written
    row by row: a contiguous copy of it first would be one more array as large to allocate
    (its pages zeroed by the kernel) and fill."""
    if arr.ndim == 2 and not arr.flags["C_CONTIGUOUS"] and arr.strides[1] == arr.itemsize:
        rows = list(arr)
    else:
        arr = np.ascontiguousarray(arr)
        rows = [arr.reshape(-1)]
    with replaced(path) as f:
        np.lib.format.write_array_header_1_0(f, np.lib.format.header_data_from_array_1_0(arr))
        if arr.size:
            for row in rows:
                f.write(memoryview(row).cast("B"))


def narrowed(a: np.ndarray, fits: bool) -> np.ndarray:
    """Integer array `a` as int32 when the caller knows its values fit (`fits`), else as it
    is: for artifacts that are written once and read whole, where every byte goes to the
    disk and its readers take any integer dtype."""
    return a.astype(np.int32) if fits and a.dtype != np.int32 else a


class NpyAppender:
    """A 1-d .npy written piece by piece (`npy_appended`)."""

    def __init__(self, f: BinaryIO, dtype: np.dtype) -> None:
        self.f, self.dtype, self.count = f, dtype, 0

    def append(self, arr: np.ndarray) -> None:
        if arr.dtype != self.dtype or arr.ndim != 1:
            raise TypeError(f"appending {arr.dtype} ({arr.ndim}-d) to a 1-d {self.dtype} .npy")
        if arr.size:
            self.f.write(memoryview(np.ascontiguousarray(arr)).cast("B"))
            self.count += len(arr)


def _npy_header(dtype: np.dtype, count: int) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                                              "shape": (count,)})
    return buf.getvalue()


@contextmanager
def npy_appended(path: Path, dtype) -> Iterator[NpyAppender]:
    """The .npy save_npy would write for the concatenation of the 1-d pieces the caller
    appends, written as they come, through `replaced`: a stream of unknown length needs no
    array of its final size. The header is written again at the end with the length; a 1-d
    header is 128 bytes whatever the length (numpy pads it to 64-byte blocks), so the data
    does not move."""
    dtype = np.dtype(dtype)
    with replaced(path) as f:
        head = _npy_header(dtype, 0)
        f.write(head)
        out = NpyAppender(f, dtype)
        yield out
        final = _npy_header(dtype, out.count)
        if len(final) != len(head):  # not for any length a file system holds; never silently wrong
            raise RuntimeError(f"{path}: .npy header grew from {len(head)} to {len(final)} bytes")
        f.seek(0)
        f.write(final)


def writable_npy(path: Path, dtype, shape, whole: bool = False) -> np.ndarray:
    """A new .npy file mapped for writing, its blocks reserved first: writing through a map
    onto a full disk is a SIGBUS that kills the process without a word, while a failed
    reservation is an ordinary ENOSPC that names the file.

    `whole`: the caller writes every entry, so the map's pages are faulted in for writing in
    one call (native.populate_write) rather than one fault per 4 KB page as they are first
    written: the faults cost 2-4x the CPU of the writes on this project's machines (a 94 MB
    fill: 0.10-0.23 s CPU page by page, 0.05-0.08 s populated)."""
    arr = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)
    try:
        with open(path, "r+b") as f:
            os.posix_fallocate(f.fileno(), 0, os.fstat(f.fileno()).st_size)
    except OSError as e:
        del arr
        Path(path).unlink(missing_ok=True)
        raise note_path(e, path)
    if whole:
        native.populate_write(arr)
    return arr


@contextmanager
def npy_in_place(path: Path, dtype, n: int | tuple[int, ...]) -> Iterator[np.ndarray]:
    """A new .npy of n entries (or of shape n, C order), filled whole by the caller through a
    map (no second copy in memory) and renamed into place only when the block ends without
    an error. numpy cannot map an empty file: an empty array is saved plainly."""
    shape = (n,) if isinstance(n, (int, np.integer)) else tuple(n)
    if not int(np.prod(shape, dtype=np.int64)):
        arr = np.zeros(shape, dtype=dtype)
        yield arr
        save_npy(path, arr)
        return
    tmp = path.with_name(path.name + ".tmp")
    arr = writable_npy(tmp, dtype, shape, whole=True)
    yield arr
    arr.flush()
    os.replace(tmp, path)


def append_file(dst: BinaryIO, path: Path, start: int = 0, count: int | None = None) -> None:
    """`count` bytes of `path` from `start` (default: to its end) appended to the open file
    `dst`; copy_file_range keeps them in the kernel (user space when the two are on different
    file systems or the kernel is old)."""
    with open(path, "rb") as r:
        size = os.fstat(r.fileno()).st_size - start if count is None else count
        dst.flush()
        done = 0
        try:
            while done < size:
                n = os.copy_file_range(r.fileno(), dst.fileno(), size - done, start + done)
                if n == 0:
                    break
                done += n
        except OSError:
            pass
        if done < size:
            dst.seek(0, os.SEEK_END)
            r.seek(start + done)
            left = size - done
            while left > 0 and (chunk := r.read(min(left, 1 << 22))):
                dst.write(chunk)
                left -= len(chunk)


def save_npy_bytes(path: Path, src: Path, start: int, count: int) -> None:
    """The .npy np.save would write for `count` uint8 bytes of the file `src` from `start`,
    copied in the kernel, through `replaced`."""
    with replaced(path) as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "|u1", "fortran_order": False, "shape": (count,)})
        append_file(f, src, start, count)


def join_npy(path: Path, parts: Sequence[Path], axis: int = 0) -> int:
    """The .npy np.concatenate(parts, axis) then save_npy would write (parts written by
    save_npy, of one dtype), copied file to file in the kernel (append_file) through
    `replaced`: the joined array is never in memory. Returns its length along `axis`."""
    heads = []
    for p in parts:
        with open(p, "rb") as f:
            np.lib.format.read_magic(f)
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
            heads.append((p, shape, dtype, f.tell()))
    shape, dtype = heads[0][1], heads[0][2]
    axis %= len(shape)
    total = sum(h[1][axis] for h in heads)
    with replaced(path) as out:
        np.lib.format.write_array_header_1_0(out, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                                                  "shape": (*shape[:axis], total, *shape[axis + 1:])})
        for r in range(int(np.prod(shape[:axis], dtype=np.int64))):  # C order: each part's block of row r in turn
            for p, shp, dt, start in heads:
                block = int(np.prod(shp[axis:], dtype=np.int64)) * dt.itemsize
                append_file(out, p, start + r * block, block)
    return total


def load_npy(path: Path, mmap: bool = True) -> np.ndarray:
    """Memory-mapped where the file has data (numpy cannot map an empty file)."""
    arr = np.load(path, mmap_mode=None if not mmap else "r")
    return arr


def files_checksum(paths: list[Path]) -> tuple[int, str]:
    h = xxhash.xxh3_64()
    size = 0
    # one buffer read into again and again: a new 16 MB bytes per read page-faults its memory
    # in every time (a quarter of the cost on a corpus's texts); and one that stays in the
    # CPU's cache between the kernel's copy and the hash: 16 MB took twice 1 MB's CPU
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            while n := f.readinto(buf):
                h.update(view[:n])
                size += n
    return size, h.hexdigest()


# Tries at taking a folder's lock, 10 ms apart, before a run is refused: a `status` beside it
# takes the lock shared for an instant to see whether a run holds it (Workspace.writer).
LOCK_TRIES = 20


@dataclasses.dataclass(frozen=True)
class Holder:
    """The process holding a folder's lock: its pid as it wrote it in the lock file (None:
    not written yet, or not a number). Shown as " (pid N)", or "" without one, after the
    words "sadedup run" in a refusal."""
    pid: int | None

    def __str__(self) -> str:
        return "" if self.pid is None else f" (pid {self.pid})"


def flock_or_holder(fd: int, mode: int) -> Holder | None:
    """Takes the lock `mode` on a .lock file's fd without waiting: None when taken, else the
    Holder of the lock, with the fd closed."""
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return None
    except BlockingIOError:
        other = os.pread(fd, 64, 0).decode(errors="replace").strip()
        os.close(fd)
        return Holder(int(other) if other.isdigit() else None)


def file_bytes(paths) -> int:
    """The size of files a task (or the driver) wrote, for its `wrote` count (executor.tally)."""
    return sum(os.path.getsize(p) for p in paths)


def task_sums(paths: list[Path]) -> dict[str, tuple[int, str]]:
    """For a task's result: the size and checksum of the files it wrote, made by the task
    while they are hot in its page cache, so the driver never reads them back (on a cluster
    it might not even be near them). `Workspace.mark` takes it as `sums`."""
    return {"sums": files_checksum(paths)}


MARKER = ".sadedup-workdir"


def made_by_sadedup(root: Path) -> bool:
    """A folder sadedup made: its marker, or (made before markers, or the marker lost) its
    database."""
    return (root / MARKER).exists() or (root / db.DB_NAME).is_file()


@functools.cache
def _stage_columns() -> str:
    """The stages table's columns, for `Workspace.read` (asked, not made at import: a worker
    imports this module and must not load db's SQLAlchemy schema)."""
    return ", ".join(c.name for c in db.stages.columns)


_ROW_TYPES: dict[tuple[str, ...], type] = {}


def _named_row(cursor: sqlite3.Cursor, row: tuple) -> tuple:
    """sqlite3's row factory for `Workspace.read`: a named tuple, as SQLAlchemy's rows read."""
    names = tuple(d[0] for d in cursor.description)
    cls = _ROW_TYPES.get(names)
    if cls is None:
        cls = _ROW_TYPES[names] = namedtuple("Row", names, rename=True)
    return cls(*row)


def owned_names() -> set[str]:
    """What sadedup writes at the top of a work folder: its own files and the stages' folders
    (graph.Node.folders). Made when asked, so importing this module loads no db (a worker's)."""
    own = (MARKER, db.DB_NAME, f"{db.DB_NAME}-wal", f"{db.DB_NAME}-shm", f"{db.DB_NAME}-journal", STATE,
           f"{STATE}.tmp", ".lock")
    return {*own, *(f for n in graph.NODES for f in n.folders)}


def lock_holder(root: Path) -> Holder | None:
    """The Holder of the folder's lock now, None when no process holds it;
    asked with a shared lock, taken and let go at once, so it never holds a run up."""
    try:
        fd = os.open(root / ".lock", os.O_RDONLY)
    except OSError:
        return None  # never locked (or unreadable): no run holds it
    held = flock_or_holder(fd, fcntl.LOCK_SH)
    if held is None:
        os.close(fd)
    return held


def no_database(root: Path, hint: str = "") -> SadedupError:
    """The error of a folder without a database, for a command that reads one. A run that has
    made and locked its folder but not yet its database (it checks its inputs and references
    first) is said to be starting: `status` beside it said the folder was no work folder."""
    held = lock_holder(root) if (root / MARKER).exists() else None
    if held is not None:
        return SadedupError(f"work folder {root} is being started by a sadedup run{held}: nothing is recorded "
                            f"there yet; ask again in a moment")
    return SadedupError(f"{root} is not a sadedup work folder (no {db.DB_NAME}){hint}")


class Workspace:
    """A work folder. It carries a marker file from its creation on: sadedup writes into, and
    `--restart` empties, only folders it made, and then only what it wrote there."""

    def __init__(self, root: str | Path, create: bool = False, readonly: bool = False) -> None:
        self.root = Path(root)
        self.readonly = readonly
        if create:
            if self.root.exists() and not self.root.is_dir():
                raise SadedupError(f"work folder {self.root} is a file")
            if self.root.is_dir() and not self.made_here():
                foreign = sorted(p.name for p in self.root.iterdir() if p.name != ".lock")
                if foreign:
                    raise SadedupError(f"work folder {self.root} holds files sadedup did not write ({foreign[0]}"
                                       f"{f' and {len(foreign) - 1} more' if len(foreign) > 1 else ''}); "
                                       f"give a new or empty folder as --workdir")
            self.root.mkdir(parents=True, exist_ok=True)
            if not (self.root / MARKER).exists():
                (self.root / MARKER).write_text(json.dumps({"made_by": f"sadedup {__version__}"}) + "\n")
        elif not (self.root / db.DB_NAME).exists():
            raise no_database(self.root, f"; start one with `sadedup run --input ... --output ... --workdir "
                                         f"{self.root}`")
        self._engine = None
        self._reader: sqlite3.Connection | None = None
        self._lock_fd: int | None = None
        self._released = False  # unlocked after holding the folder: its database is settled
        # is_done reads artifacts back to compare checksums (status turns it off: sizes only)
        self.verify = True

    def made_here(self) -> bool:
        return made_by_sadedup(self.root)

    @property
    def engine(self):
        if self._released and not self.readonly:
            # a writer's connection after unlock settled the database would switch it to WAL
            # again, and nothing would settle it: the next reader writes the -shm index
            raise RuntimeError(f"{self.root}: its database used after the folder was released")
        if self._engine is None:
            self._engine = db.open_db(self.root, readonly=self.readonly)
        return self._engine

    @property
    def prov(self) -> Provenance:
        """The folder's one Provenance, made on first use (every mark and decision goes through
        it), and made again only for a new engine (after `reset` disposed the old one)."""
        engine = self.engine
        prov = self.__dict__.get("_prov")
        if prov is None or prov.engine is not engine:
            prov = self._prov = Provenance(engine)
        return prov

    # ---- locking: one writer per work folder; a killed run's lock dies with its process
    def lock(self) -> None:
        for _ in range(LOCK_TRIES):
            fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
            held = flock_or_holder(fd, fcntl.LOCK_EX)
            if held is None:
                break
            time.sleep(0.01)  # `writer` (a status beside) holds the lock shared for an instant
        else:
            raise SadedupError(f"work folder {self.root} is in use by another sadedup run{held}; wait for it or "
                               f"use another --workdir")
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._lock_fd = fd
        self._released = False

    def writer(self) -> Holder | None:
        """The Holder of this folder's lock when another process holds it now, None when none
        does: `status` tells a stage a live run is running from one a dead run left `running`.
        Asked with a shared lock, taken and let go at once, so it never holds a run up."""
        if self._lock_fd is not None:
            return None  # this process holds it: a row left running is a dead run's
        return lock_holder(self.root)

    def unlock(self) -> None:
        """The end of a command that held the folder, however it ends (done, refused,
        interrupted before or during its work): the database settled first (db.settle), so a
        reading command afterwards changes no file here. A run interrupted while it configured
        the folder or opened its `runs` row left the write-ahead log beside the database, and
        the next `explain` wrote to its index."""
        if self._lock_fd is None:
            return
        try:
            if not self.readonly:
                path = self.root / db.DB_NAME
                with deferred_signals():  # the journal switched back whole, or not at all
                    if self._engine is not None:
                        folded = db.settle(self._engine, wait_ms=0)
                    else:  # stopped while the engine was made
                        folded = not path.exists() or db.fold_journal(path, wait_ms=0)
                if not folded:  # held: once more as the process ends, when what held it is gone
                    _FOLD_AT_EXIT.add(path)
        finally:
            os.close(self._lock_fd)
            self._lock_fd = None
            self._released = True

    # ---- state: inputs and workflow
    @property
    def state_path(self) -> Path:
        return self.root / STATE

    def read_state(self) -> dict | None:
        return load_state(self.state_path) if self.state_path.exists() else None

    def write_state(self, state: dict) -> None:
        body = {k: v for k, v in state.items() if k != "checksum"}
        with replaced(self.state_path) as f:
            f.write(json.dumps({**body, "checksum": _state_sum(body)}, indent=2, sort_keys=True).encode())

    def configure(self, workflow: Workflow, inputs: list[InputFile] | None, output: str | None,
                  unsupported: list[tuple[str, str]] | None = None, given: list[str] | None = None) -> None:
        """Records what this run works on; refuses inputs that changed under finished work.

        `unsupported`: (path, reason) of the entries of input folders that are not read; ingest
        records them in `input_errors`, so they are part of what the inputs are. `given`: the
        --input values `inputs` were expanded from (a folder, a glob), recorded so that a later
        command naming none lists them again (`check_inputs`): a file added to an input folder
        is a change, as it is to a fresh run over that folder. Values the
        workflow leaves to the machine (`auto` budget, every core) are resolved the first
        time and kept: a finished folder does not change under a move to another machine."""
        old = self.read_state()
        described = [describe_input(f) for f in inputs] if inputs is not None else None
        ignored = [[str(p), why] for p, why in unsupported or []] if inputs is not None else None
        read = self._ingested(old)
        if read is not None and described is not None and read.get("inputs") not in (None, described):
            raise self._inputs_changed(_what_changed(read["inputs"], described))
        if read is not None and ignored is not None and read.get("inputs") is not None:
            was = {p for p, _ in read.get("unsupported") or []}
            now = {p for p, _ in ignored}
            if was != now:
                raise self._inputs_changed(f"{min(now - was)} is new" if now - was else f"{min(was - now)} is gone")
        state = old or {}
        state["version"] = __version__
        state["workflow"] = workflow.to_dict()
        state["resolved"] = resolve_machine(workflow, state.get("resolved") or {})
        if described is not None:
            state["inputs"] = described
            state["unsupported"] = ignored
            state["given"] = [_absolute_spec(g) for g in given] if given is not None else None
        if output is not None:
            # recorded absolute, as inputs and references are: a relative one would name another
            # file when a later command (status, a rerun, a run using this folder as its reference)
            # starts in another directory, and the finished export would look stale
            state["output"] = output_of(output).absolute().spec
        self.write_state(state)

    def reset(self) -> list[str]:
        """--restart: forget every artifact and record of this folder. Only what sadedup
        wrote goes; returns the names of the other entries, which stay."""
        if not self.made_here():
            raise SadedupError(f"{self.root} was not made by sadedup (no {MARKER}): --restart empties only "
                               f"work folders sadedup made")
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        own, kept = owned_names() - {".lock", MARKER}, []
        for p in sorted(self.root.iterdir()):
            if p.name not in own:
                if p.name not in (".lock", MARKER):
                    kept.append(p.name)
                continue
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
        return kept

    @property
    def workflow(self) -> Workflow:
        # every stage key reads it, hundreds of times a run: parsed again only when state.json
        # is replaced (write_state renames a new file in, so its inode and mtime change)
        try:
            st = self.state_path.stat()
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp is None or getattr(self, "_workflow_stamp", None) != stamp:
            state = self.read_state()
            if state is None and ran_here(self.root):  # lost after a command ran here, not never made
                raise state_missing(self.state_path)
            if not state or "workflow" not in state:
                raise SadedupError(f"work folder {self.root} has no workflow yet; run `sadedup ingest` or "
                                   f"`sadedup run` first")
            try:
                wf = workflow_from_dict(state["workflow"])
            except SadedupError as e:
                raise damaged(self.state_path, e) from None
            self._workflow, self._workflow_stamp = apply_resolved(wf, state.get("resolved") or {}), stamp
        return self._workflow

    @property
    def inputs(self) -> list[InputFile]:
        state = self.read_state() or {}
        if "inputs" not in state:
            raise SadedupError(f"work folder {self.root} has no inputs yet; run `sadedup ingest --input ...` first")
        files = []
        for d in state["inputs"]:
            inp = detect(d["path"])
            assert inp is not None
            files.append(inp)
        return files

    def check_inputs(self) -> None:
        """Refuses (one line) recorded inputs that changed on disk since they were ingested.

        `configure` compares the inputs a command names; a command naming none (`run --workdir`,
        a stage command, status) uses the recorded ones, and without this a file appended to or
        rewritten under a finished folder left every stage "done": the output answered for input
        that is no longer there, unlike a fresh run over the same files."""
        read = self._ingested(self.read_state()) or {}
        recorded = read.get("inputs")
        if not recorded:
            return  # nothing was read yet: ingest reads what is there
        if read.get("given"):
            # what the --input values stand for now: a file added to (or gone from) an input
            # folder, or newly matching a glob, changes the inputs as a changed file does
            for g in read["given"]:
                if not (is_url(g) or has_glob(g) or os.path.lexists(g)):
                    raise self._inputs_changed(f"{g} is gone")
            try:
                files, unsupported = expand_inputs(read["given"], written_by(
                    self.root, read.get("output"), self.workflow.decontaminate.write_clean_eval))
                now = [describe_input(f) for f in files]
            except (SadedupError, OSError) as e:
                raise self._inputs_changed(str(e)) from None
            if now != recorded:
                raise self._inputs_changed(_what_changed(recorded, now, gone="is gone"))
            was, odd = {p for p, _ in read.get("unsupported") or []}, {p for p, _ in unsupported}
            if was != odd:
                raise self._inputs_changed(f"{min(odd - was)} is new" if odd - was else f"{min(was - odd)} is gone")
            return
        now = []
        for d in recorded:
            inp = detect(d["path"])
            try:
                if inp is None:
                    raise FileNotFoundError(d["path"])
                now.append(describe_input(inp))
            except OSError:
                raise self._inputs_changed(f"{d['path']} is gone") from None
        if now != recorded:
            raise self._inputs_changed(_what_changed(recorded, now))

    def _ingested(self, state: dict | None) -> dict | None:
        """`state` once ingest has read the inputs it names, else None: inputs may change only
        while nothing was read from them (a run stopped by a bad input)."""
        ingest = self.stage_row("ingest")
        return state if state is not None and ingest is not None and ingest.status == "done" else None

    def _inputs_changed(self, what: str) -> InputsChanged:
        return InputsChanged(f"inputs changed since work folder {self.root} was made ({what}); "
                            f"rerun with --restart to start over")

    @property
    def output(self) -> str | None:
        return (self.read_state() or {}).get("output")

    def held_apart(self) -> tuple[list[str], list[tuple[str, str]]]:
        """What an output or a report may not be written into: the inputs as named (--input
        folders and globs, else the files) and, as `claimed` entries, the files they stood for.
        Checked against the files alone, an export or a report into an input folder was let
        through and made the folder's inputs change (a file new in it, or a lock file)."""
        state = self.read_state() or {}
        files = [d["path"] for d in state.get("inputs") or []]
        return list(state.get("given") or files), [(f, "one of the inputs") for f in files]

    def read(self, sql: str, params: tuple = ()) -> list:
        """The rows of a query that only reads, each with its columns as attributes.

        A read-only folder with no engine yet (sweep, status) reads through a plain connection
        that cannot write, as its engine's would be: the engine's first use imports
        SQLAlchemy's SQLite dialect (30-70 ms of CPU, asyncio with it), more than a sweep's
        whole check of its stage records costs. A folder given an engine (a reference, opened
        immutable) reads through that."""
        if self.readonly and self._engine is None:
            if self._reader is None:
                self._reader = db.open_readonly(self.root)
                self._reader.row_factory = _named_row
            return self._reader.execute(sql, params).fetchall()
        with self.engine.connect() as c:
            return c.exec_driver_sql(sql, params).all()

    def close(self) -> None:
        """Closes the folder's database connections (a long-lived caller holds nothing open)."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._engine is not None:
            self._engine.dispose()

    # ---- stage records
    def stage_row(self, stage: str, shard: int = -1):
        rows = self.read(f"SELECT {_stage_columns()} FROM stages WHERE stage = ? AND shard = ?", (stage, shard))
        return rows[0] if rows else None

    def record_checksums(self, stages: tuple[str, ...]) -> list:
        """(stage, shard, checksum) of every finished record of `stages`: what a per-shard
        stage made, for its own checksum."""
        marks = ", ".join("?" * len(stages))
        with self.engine.connect() as c:
            return [list(r) for r in c.exec_driver_sql(
                f"SELECT stage, shard, checksum FROM stages WHERE stage IN ({marks}) AND status = 'done' "
                f"AND checksum IS NOT NULL ORDER BY stage, shard", tuple(stages))]

    def is_done(self, stage: str, key: str, shard: int = -1, files: list[Path] | None = None,
                verify: bool | None = None) -> bool:
        """Done means: recorded done under the same key, and its files still whole."""
        row = self.stage_row(stage, shard)
        if row is None or row.status != "done" or row.key != key:
            return False
        if files:
            if not all(p.exists() for p in files):
                return False
            if self.verify if verify is None else verify:
                if row.checksum is not None and files_checksum(files) != (row.size, row.checksum):
                    return False
            elif row.size is not None and sum(p.stat().st_size for p in files) != row.size:
                return False
        return True

    def mark(self, stage: str, key: str, status: str, shard: int = -1, files: list[Path] | None = None,
             artifact: Path | None = None, error: str | None = None, sums: tuple[int, str] | None = None,
             checksum: str | None = None, **detail: Any) -> None:
        """Records a stage (or shard) state; done with `files` records their size and checksum,
        `sums` when the task that wrote them made it (see `task_sums`), else read here; done
        without files records `checksum` (what a stage decided, or made over many shards)."""
        values: dict[str, Any] = {"key": key, "detail": json.dumps(detail)}
        if artifact is not None:
            values["artifact"] = str(artifact.relative_to(self.root))
        if status == "done":
            values["size"], values["checksum"] = None, checksum
        if files and status == "done":
            if sums is not None and sums[0] != sum(p.stat().st_size for p in files):
                raise RuntimeError(f"{stage} shard {shard}: the task's checksum covers other files than {files}")
            values["size"], values["checksum"] = sums if sums is not None else files_checksum(files)
        if error is not None:
            values["error"] = error
        self.prov.mark(stage, shard, status, **values)

    def checksum(self, stage: str, shard: int = -1) -> str | None:
        """The recorded checksum of a stage's files: downstream keys include it, so work built
        on an artifact is redone when the artifact is rebuilt differently."""
        row = self.stage_row(stage, shard)
        return row.checksum if row is not None else None

    def stage_detail(self, stage: str, shard: int = -1) -> dict:
        row = self.stage_row(stage, shard)
        return json.loads(row.detail) if row is not None and row.detail else {}


def resolve_machine(wf: Workflow, recorded: dict) -> dict:
    """The values `auto` stands for on this machine, or those recorded when the folder was
    first configured (kept while the workflow still says `auto`)."""
    out = {}
    if wf.run.memory_budget.strip().lower() == "auto":
        out["run.memory_budget"] = recorded.get("run.memory_budget") or str(wf.run.budget_bytes)
    if wf.run.workers == 0:
        out["run.workers"] = recorded.get("run.workers") or wf.run.n_workers
    return out


def apply_resolved(wf: Workflow, resolved: dict) -> Workflow:
    run = wf.run
    if "run.memory_budget" in resolved and run.memory_budget.strip().lower() == "auto":
        run = dataclasses.replace(run, memory_budget=str(resolved["run.memory_budget"]))
    if "run.workers" in resolved and run.workers == 0:
        run = dataclasses.replace(run, workers=int(resolved["run.workers"]))
    return dataclasses.replace(wf, run=run)


def _state_sum(body: dict) -> str:
    return xxhash.xxh3_64_hexdigest(json.dumps(body, sort_keys=True).encode())


def ran_here(root: Path) -> bool:
    """The folder's database records a command that ran (its state was configured first)."""
    if not (root / db.DB_NAME).is_file():
        return False
    try:
        con = db.open_readonly(root)
        try:
            # a run killed while it made the database leaves it without its tables: nothing ran
            if con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").fetchone() is None:
                return False
            return con.execute("SELECT EXISTS (SELECT 1 FROM runs)").fetchone()[0] == 1
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return True  # a database that cannot be read: state.json was written before it


def state_missing(path: Path) -> SadedupError:
    return SadedupError(f"{path} is missing (the folder's record of its workflow and inputs); `--restart` "
                        f"starts the work folder over")


def load_state(path: Path) -> dict:
    """A work folder's state.json, checked: it records the folder's workflow, inputs and
    output, which nothing else can rebuild, so a value changed in it (a digit, and the file
    still parses) is damage refused by name, never taken as a setting. A state without a
    checksum (an older sadedup's) is taken as it is."""
    try:
        state = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise damaged(path, str(e)) from None
    except OSError as e:  # a folder in its place, unreadable: said as before the checksum came
        raise damaged(path, e.strerror or str(e)) from None
    if not isinstance(state, dict):
        raise damaged(path, "not a JSON object")
    if "checksum" in state:
        body = {k: v for k, v in state.items() if k != "checksum"}
        if state["checksum"] != _state_sum(body):
            raise damaged(path, "its checksum does not match its contents")
    return state


def _absolute_spec(given: str | os.PathLike) -> str:
    """An --input value as recorded: a local path or glob made absolute (a later command may
    start in another directory), a URL as it is."""
    given = without_file_scheme(given)
    return str(given) if is_url(given) else os.path.abspath(given)


def describe_input(f: InputFile) -> dict:
    """What says an input is unchanged: its size and modification time, or for an object
    behind a URL its size and ETag (its modification time where the store has no ETag)."""
    st = f.path.stat()
    if isinstance(f.path, Url):
        return {"path": str(f.path), "size": st.st_size,
                **({"etag": st.etag} if st.etag else {"mtime_ns": st.st_mtime_ns})}
    return {"path": str(f.path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _what_changed(old: list[dict], new: list[dict], gone: str = "is no longer given") -> str:
    old_by = {d["path"]: d for d in old}
    new_by = {d["path"]: d for d in new}
    for p in new_by:
        if p not in old_by:
            return f"{p} is new"
    for p in old_by:
        if p not in new_by:
            return f"{p} {gone}"
    for p, d in new_by.items():
        o = old_by[p]
        if o["size"] != d["size"]:
            return f"{p} size {o['size']} -> {d['size']} bytes"
        if o.get("etag") != d.get("etag") or o.get("mtime_ns") != d.get("mtime_ns"):
            return f"{p} was modified"
    return "their order changed"
