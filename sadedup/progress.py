"""Progress bars with throughput on a terminal; silence in pipes and CI; one-line notes."""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn, TransferSpeedColumn)

console = Console(stderr=True, highlight=False)
_quiet = False


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = quiet


def interactive() -> bool:
    return console.is_terminal and not os.environ.get("CI") and not _quiet


def say(msg: str) -> None:
    """A line for the user on stderr (stdout stays for data such as `sql` output)."""
    if not _quiet:
        print(msg, file=sys.stderr, flush=True)


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
    speed = TransferSpeedColumn() if unit == "bytes" else MofNCompleteColumn()
    with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), speed,
                  TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=True) as p:
        yield _Bar(p, p.add_task(description, total=total))
