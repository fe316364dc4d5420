"""The one exception type users see: its message is the one line the CLI prints."""
from __future__ import annotations

import errno
import sqlite3
from pathlib import Path


class SadedupError(Exception):
    """A problem with the user's input, configuration or environment, said in one line."""


def damaged(what: object, why: object) -> SadedupError:
    """A record of the work folder that nothing can rebuild (state.json, sadedup.db) is damaged:
    one line, the same wherever it is found, with the way out."""
    return SadedupError(f"{what} is damaged ({why}); `--restart` starts the work folder over")


class ConfigError(SadedupError):
    """A workflow key is unknown, has the wrong type, or a value is out of range."""


class InputsChanged(SadedupError):
    """An input of a work folder changed (or one was added to or gone from an input folder)
    since it was read: what was made from it is stale."""


class WriteError(SadedupError):
    """The disk refused a write (full, over quota, over the file size limit, or failing).
    Nothing finished is lost: every artifact is renamed into place only when complete, so
    the same command, rerun once the disk has room, resumes."""


_RESUME = "rerun the same command to resume"
_SPACE = {
    errno.ENOSPC: ("no space left on the device", f"free space and {_RESUME}"),
    errno.EDQUOT: ("disk quota exceeded", f"free space and {_RESUME}"),
    errno.EFBIG: ("file too large", f"raise the file size limit (ulimit -f) or free space, and {_RESUME}"),
}


def note_path(e: BaseException, path: str | Path) -> BaseException:
    """Names the file a failed write was to (a write on an open file says no name), on the
    error and on the errors it happened while handling (a close that failed to flush)."""
    for x in _chain(e):
        if isinstance(x, OSError) and x.filename is None:
            x.filename = str(path)
    return e


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and those it happened while handling, outermost first."""
    seen: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and not any(e is s for s in seen):
        seen.append(e)
        e = e.__cause__ if e.__cause__ is not None else None if e.__suppress_context__ else e.__context__
    return seen


_DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")


def environment_error(exc: BaseException, workdir: str | Path | None = None) -> SadedupError | None:
    """A one-line SadedupError for a failure of the disk or the file system, or None.

    The original failure wins over failures it caused on the way out (a full disk that also
    refuses to record the failure in the database is reported as the file that first failed).
    """
    chain = _chain(exc)
    for e in reversed(chain):
        if isinstance(e, OSError) and e.errno in _SPACE:
            what, hint = _SPACE[e.errno]
            where = e.filename or (f"a file in the work folder {workdir}" if workdir else "a file")
            return WriteError(f"{what} while writing {where}: {hint}")
    for e in reversed(chain):
        orig = getattr(e, "orig", e)
        if isinstance(orig, sqlite3.OperationalError):
            name = getattr(orig, "sqlite_errorname", "") or ""
            where = Path(workdir) / "sadedup.db" if workdir else "the work folder's database sadedup.db"
            if name == "SQLITE_FULL":
                what, hint = _SPACE[errno.ENOSPC]
                return WriteError(f"{what} while writing {where}: {hint}")
            if name.startswith("SQLITE_IOERR"):
                return WriteError(f"disk I/O error ({name}) while writing {where}: check that the disk has room "
                                  f"and works, and {_RESUME}")
            if name == "SQLITE_READONLY" or name.startswith("SQLITE_READONLY_") or name == "SQLITE_CANTOPEN":
                return WriteError(f"cannot write {where} ({orig}): check its permissions")
        if isinstance(orig, sqlite3.DatabaseError) and getattr(orig, "sqlite_errorname", "") in _DAMAGED:
            # a page found damaged by a query after the database opened (its first pages read well)
            where = Path(workdir) / "sadedup.db" if workdir else "the work folder's database sadedup.db"
            return damaged(where, orig)
    for e in reversed(chain):
        if isinstance(e, OSError) and e.filename is not None and e.strerror:
            return SadedupError(f"{e.strerror}: {e.filename}")
    return None


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: the run stops where it is, resumable (not an Exception, so
    nothing on the way out mistakes it for a failure to handle)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
