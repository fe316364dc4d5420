"""Peak memory of a stage: the high-water mark of resident memory (VmHWM) of the driver and of
every worker process while the stage's tasks ran.

Linux keeps one high-water mark per process for its whole life; writing 5 to
/proc/self/clear_refs sets it back to the current size, so a stage (in the driver) and each
task (in its worker) measure their own peak. Elsewhere, or where that file cannot be written,
the figure is the peak since the process started, which only over-states.
"""
from __future__ import annotations

import resource
import sys


def reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_bytes() -> int:
    """This process's resident high-water mark, in bytes."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024  # bytes on macOS, KiB on Linux
