"""Reading a work folder: status, read-only SQL and per-document explanations."""
from __future__ import annotations

import json
import math
import re
import sqlite3
from pathlib import Path
from typing import Any

from . import reference
from .db import DB_NAME, open_readonly
from .errors import SadedupError
from .store import TextStore


def _ro(workdir: str | Path) -> sqlite3.Connection:
    if not (Path(workdir) / DB_NAME).exists():
        from .workspace import no_database

        raise no_database(Path(workdir))
    con = open_readonly(Path(workdir))
    # a value that is not UTF-8 (CAST(x'ff' AS TEXT)) is shown with U+FFFD, never a crash
    con.text_factory = lambda b: b.decode("utf-8", "replace")
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as e:
        con.close()
        if isinstance(e, sqlite3.OperationalError):  # the disk or the permissions, not the file
            raise
        raise SadedupError(f"{Path(workdir) / DB_NAME} is not a readable sadedup database ({e}); "
                           f"`--restart` starts the work folder over") from e
    return con


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
        out.append({"stage": stage, "shard": None if shard < 0 else shard, "status": st, "started_at": started,
                    "finished_at": finished, "error": error, "detail": public(json.loads(detail or "{}"))})
    return out


def public(detail: dict[str, Any]) -> dict[str, Any]:
    """A stage's detail without the bookkeeping a stage reads back (its key and stamps)."""
    return {k: v for k, v in detail.items() if k not in ("key", "stamps")}


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


FORMATS = ("table", "csv", "json", "jsonl")


def plain(value: Any) -> Any:
    """A value as JSON has it: a BLOB as its hex literal X'0a1b' (as SQLite's quote() writes
    it), NaN and infinities as null; dicts, lists and tuples value by value."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"X'{bytes(value).hex().upper()}'"
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def to_json(obj: Any, indent: int | None = None) -> str:
    """JSON text of plain(obj), UTF-8 as it is (no ASCII escapes), ending in a newline."""
    return json.dumps(plain(obj), ensure_ascii=False, indent=indent) + "\n"


def _names(cols: list[str]) -> list[str]:
    """Column names as object keys: a repeated name gets _2, _3, ... (SELECT 1 AS a, 2 AS a)."""
    seen: dict[str, int] = {}
    out = []
    for c in cols:
        n = seen[c] = seen.get(c, 0) + 1
        out.append(c if n == 1 else f"{c}_{n}")
    return out


def _csv_field(value: Any) -> str:
    """RFC 4180, with NULL an empty field and the empty string "" (so they differ)."""
    if value is None:
        return ""
    text = repr(value) if isinstance(value, float) else str(plain(value))
    if text == "" or any(c in text for c in ',"\r\n') or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


_LOOKS_QUOTED = re.compile(r"\s*(null|'.*'|x'[0-9a-f]*')\s*", re.I | re.S)


def display(value: Any, blob_bytes: int = 32) -> str:
    """A value for the table format. NULL is `NULL`; a text that reads as NULL, or as a quoted
    or BLOB literal, is shown quoted ('NULL'), so the two never look alike. A BLOB is its hex
    literal, cut after `blob_bytes` bytes with its length."""
    if value is None:
        return "NULL"
    if isinstance(value, (bytes, bytearray, memoryview)):
        b = bytes(value)
        if len(b) <= blob_bytes:
            return plain(b)
        return f"X'{b[:blob_bytes].hex().upper()}'... ({len(b)} bytes)"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'" if _LOOKS_QUOTED.fullmatch(value) else value
    if isinstance(value, float):
        return repr(value)
    return str(value)


def format_rows(cols: list[str], rows: list[tuple], fmt: str) -> str:
    """Rows as csv (a header line, LF line ends), json (one array of objects) or jsonl (one
    object per line). Every format ends with a newline."""
    if fmt == "json":
        names = _names(cols)
        return to_json([dict(zip(names, r)) for r in rows], indent=1)
    if fmt == "jsonl":
        names = _names(cols)
        return "".join(to_json(dict(zip(names, r))) for r in rows)
    if fmt == "csv":
        return "".join(",".join(_csv_field(v) for v in r) + "\n" for r in [tuple(cols), *rows])
    raise SadedupError(f"unknown format {fmt!r} ({', '.join(FORMATS)})")


def _text(workdir: Path, doc_id: int) -> str:
    return TextStore(workdir).text(doc_id)


def _source_text(workdir: str | Path | None, doc_id: int, start: int | None, end: int | None) -> str | None:
    """The characters [start, end) of a source document; None when its folder (a reference
    that was moved or deleted) no longer has it."""
    if workdir is None:
        return None
    try:
        return _text(Path(workdir), doc_id)[start:end]
    except (OSError, IndexError, ValueError):
        return None


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
        refs = {r["ref_id"]: r["workdir"] for r in con.execute("SELECT ref_id, workdir FROM refs")}
        # a reference rerun, moved or deleted since the decisions: its texts are not shown (another
        # document's would be), and the note says why
        gone = reference.unread(workdir, con, ("substring",)) if refs else {}
        for s in con.execute("SELECT * FROM spans WHERE doc_id = ? ORDER BY char_start, span_id", (doc_id,)):
            src_text, item = None, None
            if s["src_doc_id"] is not None and s["src_ref"] not in gone:
                # a source in a reference (--reference) is read from the reference's own texts
                where = workdir if s["src_ref"] is None else refs.get(s["src_ref"])
                src_text = _source_text(where, s["src_doc_id"], s["src_char_start"], s["src_char_end"])
            if s["src_item_id"] is not None:
                found = con.execute("SELECT * FROM eval_items WHERE item_id = ?", (s["src_item_id"],)).fetchone()
                item = dict(found) if found is not None else None
            spans.append({**dict(s), "text": text[s["char_start"]:s["char_end"]], "source_text": src_text,
                          "eval_item": item})
        # kept_ref: the reference (refs) the kept document is in, NULL when it is in this
        # folder (a cluster's only reference member is its kept one)
        clusters = [dict(r) for r in con.execute(
            "SELECT c.cluster_id, c.method, c.size, c.kept_doc_id, c.keep_rule, m.similarity, "
            "(SELECT k.src_ref FROM cluster_members k WHERE k.cluster_id = c.cluster_id AND k.src_ref IS NOT NULL "
            "LIMIT 1) AS kept_ref FROM cluster_members m JOIN clusters c USING (cluster_id) "
            "WHERE m.doc_id = ? AND m.src_ref IS NULL", (doc_id,))]
        why = [gone[r] for r in sorted(gone) if r in {s["src_ref"] for s in spans}]
        for c in clusters:  # a cluster kept by a reference document: of the reference its stage read?
            if c["kept_ref"] is not None:
                what = reference.unread(workdir, con, (c["method"],)).get(c["kept_ref"])
                if what is not None and what not in why:
                    why.append(what)
        if why:
            note = "; ".join([*([note] if note else []), *why])
        return {"document": dict(row), "spans": spans, "clusters": clusters, "note": note}
    finally:
        con.close()
