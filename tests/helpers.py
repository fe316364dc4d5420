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


def decisions(work: Path) -> list:
    """The documents' decisions, the spans and the clusters with their ids: `explain` and SQL
    name spans and clusters by id, so a folder brought current must number them as a fresh run."""
    return (db_rows(work, "SELECT doc_id, status, reason, n_tokens, removed_tokens, removed_chars FROM documents ORDER BY doc_id")
            + db_rows(work, "SELECT span_id, method, doc_id, tok_start, tok_end, char_start, char_end, src_doc_id, "
                            "src_tok_start FROM spans ORDER BY doc_id, tok_start")
            + db_rows(work, "SELECT c.cluster_id, c.method, m.doc_id, c.kept_doc_id FROM cluster_members m JOIN "
                            "clusters c USING (cluster_id) ORDER BY c.method, m.doc_id"))


def sequence_corpus(path: Path) -> Path:
    """The corpus of the sequence tests, written to `path` (JSONL): near copies at several edit
    rates (so a MinHash threshold moves decisions) followed by documents with repeated passages
    (so the substring stage cuts); a whole run of it takes about a second."""
    import random

    from corpus import planted_corpus as substring_corpus
    from nearcopies import planted_corpus as near_corpus

    near = near_corpus(3, 40, rates=(0.02, 0.1, 0.2), words=(60, 200)).docs
    docs = near + substring_corpus(random.Random(9), 120, 300)
    with open(path, "w", encoding="utf-8") as f:
        for i, t in enumerate(docs):
            f.write(json.dumps({"id": f"d{i}", "text": t}, ensure_ascii=False) + "\n")
    return path


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
