"""Process-tree memory for the benchmarks: peak memory is summed over a command's whole tree
(workers included), read from /proc."""
from __future__ import annotations

import os


def children_map() -> dict[int, list[int]]:
    """ppid -> pids, for every process."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                s = f.read()
        except OSError:
            continue
        rest = s[s.rfind(b")") + 2:].split()
        kids.setdefault(int(rest[1]), []).append(int(d))
    return kids


def descendants(pid: int, kids: dict[int, list[int]]) -> list[int]:
    """pid and every process below it."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, ()))
    return out


def mem_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, RssAnon) of one process in KiB; (0, 0) once it is gone. RssAnon leaves out
    memory-mapped file pages, which are page cache."""
    rss = anon = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("RssAnon:"):
                    anon = int(line.split()[1])
                    break
    except OSError:
        pass
    return rss, anon
