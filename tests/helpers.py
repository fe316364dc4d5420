from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def db_rows(workdir: Path, query: str, args: tuple = ()) -> list[tuple]:
    con = sqlite3.connect(Path(workdir) / "sadedup.db")
    try:
        return con.execute(query, args).fetchall()
    finally:
        con.close()


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def spans_by_doc(workdir: Path) -> dict[int, list[tuple]]:
    out: dict[int, list[tuple]] = {}
    for row in db_rows(workdir, "SELECT doc_id, tok_start, tok_end, src_doc_id, src_tok_start, char_start, char_end "
                                "FROM spans ORDER BY doc_id, tok_start"):
        out.setdefault(row[0], []).append(row[1:])
    return out


def stopped(pid: int) -> bool:
    """Whether process `pid` is stopped (SIGSTOP: a run held at a SADEDUP_CRASH point by
    SADEDUP_CRASH_SIGNAL=SIGSTOP)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


@contextmanager
def held_at(args: list, point: str, cwd: Path | None = None, wait: float = 120) -> Iterator[subprocess.Popen]:
    """A `sadedup ARGS` command held (SIGSTOP) at fault point `point` while the block runs, then
    let go; the block gets its Popen (stderr piped), and after the block `.communicate()` has
    been called, so its returncode and `.err` (stderr) are there to check."""
    p = subprocess.Popen([sys.executable, "-m", "sadedup.cli", *map(str, args)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, cwd=cwd,
                         env={**os.environ, "CI": "1", "SADEDUP_CRASH": point, "SADEDUP_CRASH_SIGNAL": "SIGSTOP"},
                         start_new_session=True)
    try:
        deadline = time.time() + wait
        while time.time() < deadline and not stopped(p.pid):
            time.sleep(0.02)
        yield p
    finally:
        os.killpg(p.pid, signal.SIGCONT)
        _, p.err = p.communicate(timeout=300)
