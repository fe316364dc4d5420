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
        if "readonly" in msg or "read-only" in msg or "query_only" in msg or "authoriz" in msg:
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


def explain(workdir: str | Path, doc: str, by: str | None = None) -> dict[str, Any]:
    """Why a document was kept, cut or dropped, span by span. `doc` is a doc_id or a value of
    the input's id field; `by` ("doc_id" or "id") says which, else a number is a doc_id and
    the answer's "note" says when it is also some document's id."""
    workdir = Path(workdir)
    con = _ro(workdir)
    con.row_factory = sqlite3.Row
    try:
        number = int(doc) if doc.strip().lstrip("-").isdigit() and -(1 << 63) <= int(doc) < (1 << 63) else None
        by_doc_id = con.execute("SELECT * FROM documents WHERE doc_id = ?", (number,)).fetchone() \
            if number is not None and by != "id" else None
        # by the id field, as text or as a number (both through the index documents_ext_id)
        by_id = con.execute("SELECT * FROM documents WHERE ext_id = ? UNION SELECT * FROM documents "
                            "WHERE ext_id = ? ORDER BY doc_id LIMIT 2", (doc, number)).fetchall() \
            if by != "doc_id" else []
        note = None
        if by_doc_id is not None:
            row = by_doc_id
            if by_id and by is None:
                other = by_id[0]["doc_id"]
                note = (f"{doc} is taken as a doc_id; the document whose id is {doc} is doc_id {other} "
                        f"(use --id)" if other != row["doc_id"] else None)
        else:
            if len(by_id) > 1:
                raise SadedupError(f"id {doc!r} names several documents; give a doc_id (--doc-id)")
            row = by_id[0] if by_id else None
        if row is None:
            what = {"doc_id": "doc_id", "id": "id"}.get(by or "", "doc_id or id")
            raise SadedupError(f"no document with {what} {doc!r} in {workdir}")
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
        return {"document": dict(row), "spans": spans, "clusters": clusters, "note": note}
    finally:
        con.close()
