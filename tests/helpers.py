from __future__ import annotations

import json
import sqlite3
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
