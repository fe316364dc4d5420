"""Reading a work folder: status, read-only SQL and per-document explanations."""
from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

from .db import DB_NAME, open_readonly
from .errors import SadedupError
from .store import TextStore


def _ro(workdir: str | Path) -> sqlite3.Connection:
    if not (Path(workdir) / DB_NAME).exists():
        raise SadedupError(f"{workdir} is not a sadedup work folder (no {DB_NAME})")
    return open_readonly(Path(workdir))


def status(workdir: str | Path) -> list[dict[str, Any]]:
    """Every stage and shard record: done, running (or interrupted), failed with its error."""
    con = _ro(workdir)
    try:
        rows = con.execute("SELECT stage, shard, status, started_at, finished_at, error, detail FROM stages "
                           "ORDER BY rowid").fetchall()
    finally:
        con.close()
    out = []
    for stage, shard, st, started, finished, error, detail in rows:
        d = json.loads(detail or "{}")
        d.pop("key", None)
        d.pop("stamps", None)
        out.append({"stage": stage, "shard": None if shard < 0 else shard, "status": st, "started_at": started,
                    "finished_at": finished, "error": error, "detail": d})
    return out


def sql(workdir: str | Path, query: str) -> tuple[list[str], list[tuple]]:
    """Runs one read-only statement; SQLite refuses anything that writes."""
    con = _ro(workdir)
    try:
        cur = con.execute(query)
        cols = [d[0] for d in cur.description or []]
        return cols, cur.fetchall()
    except sqlite3.Error as e:
        msg = str(e)
        if "readonly" in msg or "read-only" in msg or "query_only" in msg:
            msg = "the database is opened read-only: statements that write are refused"
        raise SadedupError(f"sql: {msg}") from None
    finally:
        con.close()


def format_rows(cols: list[str], rows: list[tuple], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([dict(zip(cols, r)) for r in rows], ensure_ascii=False, indent=1)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(cols)
        w.writerows(rows)
        return buf.getvalue()
    raise SadedupError(f"unknown format {fmt!r} (table, csv or json)")


def _text(workdir: Path, doc_id: int) -> str:
    return TextStore(workdir).text(doc_id)


def explain(workdir: str | Path, doc: str) -> dict[str, Any]:
    """Why a document (doc_id, or its id field) was kept, cut or dropped, span by span."""
    workdir = Path(workdir)
    con = _ro(workdir)
    con.row_factory = sqlite3.Row
    try:
        row = None
        number = int(doc) if doc.lstrip("-").isdigit() and -(1 << 63) <= int(doc) < (1 << 63) else None
        if number is not None:
            row = con.execute("SELECT * FROM documents WHERE doc_id = ?", (number,)).fetchone()
        if row is None:  # by the id field, as text or as a number (both through documents_ext_id)
            found = con.execute("SELECT * FROM documents WHERE ext_id = ? UNION SELECT * FROM documents "
                                "WHERE ext_id = ? ORDER BY doc_id LIMIT 2", (doc, number)).fetchall()
            if len(found) > 1:
                raise SadedupError(f"id {doc!r} names several documents; give a doc_id")
            row = found[0] if found else None
        if row is None:
            raise SadedupError(f"no document with doc_id or id {doc!r} in {workdir}")
        doc_id = row["doc_id"]
        text = _text(workdir, doc_id)
        spans = []
        for s in con.execute("SELECT * FROM spans WHERE doc_id = ? ORDER BY tok_start", (doc_id,)):
            src_text = None
            if s["src_doc_id"] is not None:
                src_text = _text(workdir, s["src_doc_id"])[s["src_char_start"]:s["src_char_end"]]
            spans.append({**dict(s), "text": text[s["char_start"]:s["char_end"]], "source_text": src_text})
        clusters = [dict(r) for r in con.execute(
            "SELECT c.cluster_id, c.method, c.size, c.kept_doc_id, c.keep_rule, m.similarity FROM cluster_members m "
            "JOIN clusters c USING (cluster_id) WHERE m.doc_id = ?", (doc_id,))]
        return {"document": dict(row), "spans": spans, "clusters": clusters}
    finally:
        con.close()
