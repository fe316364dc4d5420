"""Crash points for the resume tests.

With SADEDUP_CRASH=NAME:N in the environment, the process SIGKILLs itself the N-th time it
passes point NAME (N defaults to 1): no cleanup, no finally blocks, exactly what a power cut
or the OOM killer does. Without the variable a point costs one dictionary lookup.
"""
from __future__ import annotations

import os
import signal

_spec = os.environ.get("SADEDUP_CRASH")
_name, _, _n = (_spec or "").partition(":")
_left = int(_n or 1)
# SADEDUP_CRASH_SIGNAL=SIGINT, SIGTERM or SIGSTOP: the point sends that signal to its whole
# process group instead, once (what a terminal's Ctrl-C or a service manager's stop does; SIGSTOP
# holds the run there for a test to look at the folder beside it, until SIGCONT)
_signal = getattr(signal, os.environ.get("SADEDUP_CRASH_SIGNAL") or "SIGKILL")


def _fire() -> None:
    if _signal == signal.SIGKILL:
        os.kill(os.getpid(), signal.SIGKILL)
    else:
        os.killpg(os.getpgid(0), _signal)


def point(name: str) -> None:
    global _left
    if _spec and name == _name:
        _left -= 1
        if _left == 0:
            _fire()


def points(name: str, n: int) -> None:
    """point(name) passed n times at once (rows handled a block at a time)."""
    global _left
    if _spec and name == _name and n > 0:
        _left -= n
        if _left <= 0 and _left + n > 0:
            _fire()


def delay() -> None:
    """With SADEDUP_SLOW_TASKS=SECONDS in a worker's environment, every task it runs sleeps
    that long first: the tests kill a Dask worker while it surely holds a task."""
    seconds = os.environ.get("SADEDUP_SLOW_TASKS")
    if seconds:
        import time

        time.sleep(float(seconds))
