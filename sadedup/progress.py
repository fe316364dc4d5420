"""Progress bars with throughput on a terminal; silence in pipes and CI; one-line notes.

Three kinds of line: `say` (a note on stderr, silenced by -q), `warn` (a warning on stderr,
never silenced) and `result` (a command's result on stdout, never silenced, and not said twice
on a terminal that already shows it on stderr)."""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress

console = Console(stderr=True, highlight=False)
_quiet = False
_said: list[str] = []  # the notes said on stderr lately, so a result line does not repeat one


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = quiet


def quiet() -> bool:
    return _quiet


def interactive() -> bool:
    return console.is_terminal and not os.environ.get("CI") and not _quiet


def say(msg: str) -> None:
    """A line for the user on stderr (stdout stays for data such as `sql` output)."""
    if not _quiet:
        print(msg, file=sys.stderr, flush=True)
        _said.append(msg)
        del _said[:-100]


def warn(msg: str) -> None:
    """A warning on stderr, "sadedup: warning: MSG"; -q does not silence it."""
    print(f"sadedup: warning: {msg}", file=sys.stderr, flush=True)


def _same_stream() -> bool:
    """stdout and stderr are one terminal, pipe or file (what the user reads shows both)."""
    try:
        a, b = os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (a.st_dev, a.st_ino, a.st_rdev) == (b.st_dev, b.st_ino, b.st_rdev)


def result(line: str) -> None:
    """A command's result line on stdout. When the same line was just said on stderr and
    both streams go to the same place, it is not printed twice."""
    if line in _said and _same_stream():
        return
    print(line, flush=True)


class _Bar:
    def __init__(self, progress: Progress | None, task) -> None:
        self.progress, self.task = progress, task

    def advance(self, n: float = 1) -> None:
        if self.progress is not None:
            self.progress.advance(self.task, n)


@contextmanager
def bar(description: str, total: float | None, unit: str = "items"):
    """A progress bar: bytes get a transfer speed, other units a count."""
    if not interactive():
        yield _Bar(None, None)
        return
    # imported here: only a terminal shows bars, and rich.progress costs every command's start
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn, TransferSpeedColumn)

    speed = TransferSpeedColumn() if unit == "bytes" else MofNCompleteColumn()
    with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), speed,
                  TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=True) as p:
        yield _Bar(p, p.add_task(description, total=total))
