"""The provenance database: one SQLite file per work folder, written through SQLAlchemy.

The tables and columns below are a contract (DESIGN.md): users write SQL against them.
Only the driver process writes; workers hand back files. Bulk writes go through the DBAPI
executemany in one transaction, with WAL journaling, so millions of span rows cost seconds.
"""
from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from sqlalchemy import (Column, Connection, Engine, Float, Index, Integer, MetaData, String, Table, Text,
                        create_engine, event, exc, text)

from .errors import Interrupted, SadedupError, damaged
from .store import column_rows  # noqa: F401  (db.column_rows: the rows bulk_insert takes)

metadata = MetaData()

runs = Table(
    "runs", metadata,
    Column("run_id", Integer, primary_key=True, autoincrement=True),
    Column("command", String),
    Column("started_at", String),
    Column("finished_at", String),
    Column("status", String),           # running, done, failed
    Column("config", Text),             # JSON of the whole resolved workflow
    Column("inputs", Text),             # JSON: paths with size and mtime
    Column("version", String),
    Column("tokenizer", String),        # a tokenizer trained on the corpus: its file in the work folder
    Column("error", Text),
)

documents = Table(
    "documents", metadata,
    Column("doc_id", Integer, primary_key=True, autoincrement=False),
    Column("source", String, nullable=False),
    Column("source_row", Integer, nullable=False),
    Column("ext_id", String),
    Column("n_chars", Integer, nullable=False),
    Column("n_bytes", Integer, nullable=False),  # UTF-8 bytes of the text
    Column("n_tokens", Integer),                 # set by the substring stage
    Column("status", String, nullable=False),    # kept / dropped
    Column("reason", String),                    # NULL, exact_duplicate, near_duplicate, substring_coverage
    Column("removed_tokens", Integer),
    Column("coverage", Float),
    Column("removed_chars", Integer),
    Index("documents_ext_id", "ext_id"),
    Index("documents_source_row", "source", "source_row"),
    Index("documents_status_reason", "status", "reason"),
)

spans = Table(
    "spans", metadata,
    Column("span_id", Integer, primary_key=True, autoincrement=False),
    Column("method", String, nullable=False, server_default="substring"),  # the stage that made it
    Column("doc_id", Integer, nullable=False),
    Column("tok_start", Integer),       # token offsets: NULL for stages that work on characters
    Column("tok_end", Integer),
    Column("char_start", Integer, nullable=False),
    Column("char_end", Integer, nullable=False),
    Column("src_doc_id", Integer),
    Column("src_tok_start", Integer),
    Column("src_char_start", Integer),  # the source's text (of the same token length), for explain
    Column("src_char_end", Integer),
    Column("similarity", Float),        # passages: the verified similarity to the source chunk
    Column("src_item_id", Integer),     # decontaminate: the eval item it matched (eval_items)
    Column("src_ref", Integer),         # the source is in a reference run (refs), not this folder
    Index("spans_doc", "doc_id"),
    Index("spans_src", "src_doc_id"),
)

clusters = Table(
    "clusters", metadata,
    Column("cluster_id", Integer, primary_key=True, autoincrement=False),
    Column("method", String, nullable=False),
    Column("size", Integer, nullable=False),
    Column("kept_doc_id", Integer, nullable=False),
    Column("keep_rule", String, nullable=False),
)

cluster_members = Table(
    "cluster_members", metadata,
    Column("cluster_id", Integer, nullable=False),
    Column("doc_id", Integer, nullable=False),
    Column("similarity", Float),
    Column("src_ref", Integer),         # the member is a document of a reference run (refs)
    Index("cluster_members_cluster", "cluster_id"),
    Index("cluster_members_doc", "doc_id"),
)

stages = Table(
    "stages", metadata,
    Column("stage", String, primary_key=True),
    Column("shard", Integer, primary_key=True),   # -1 for a whole-stage record
    Column("status", String, nullable=False),     # pending, running, done, failed
    Column("key", String),                        # what the result depends on: settings and upstream stamps
    Column("started_at", String),
    Column("finished_at", String),
    Column("artifact", String),                   # folder of the stage's files, relative to the work folder
    Column("size", Integer),                      # bytes of the artifact files
    Column("checksum", String),                   # xxh3-64 of the artifact files
    Column("detail", Text),                       # JSON: counts and settings the stage reports
    Column("error", Text),
)

input_errors = Table(
    "input_errors", metadata,
    Column("error_id", Integer, primary_key=True, autoincrement=True),
    Column("source", String, nullable=False),
    Column("source_row", Integer),
    Column("error", Text, nullable=False),
    Index("input_errors_source", "source", "source_row"),
)

refs = Table(
    "refs", metadata,  # finished work folders a run deduplicates against (--reference)
    Column("ref_id", Integer, primary_key=True, autoincrement=False),
    Column("workdir", String, nullable=False),
    Column("run_id", Integer),          # the reference's last finished run
)

eval_items = Table(
    "eval_items", metadata,  # decontaminate: one row per eval text, with its verdict
    Column("item_id", Integer, primary_key=True, autoincrement=False),
    Column("eval_file", String, nullable=False),
    Column("eval_row", Integer, nullable=False),
    Column("field", String, nullable=False),
    Column("n_ngrams", Integer, nullable=False),
    Column("n_matched", Integer, nullable=False),
    Column("overlap", Float),           # n_matched / n_ngrams; NULL for a text shorter than one n-gram
    Column("verdict", String, nullable=False),  # contaminated, partial, clean
    Column("matched_docs", Integer, nullable=False),
)

DB_NAME = "sadedup.db"
# PRAGMA user_version of the schema above; older work folders are brought up to it on open
SCHEMA_VERSION = 3
# columns added since a version: (table, column, SQL type and default)
_ADDED = {2: [("spans", "method", "TEXT NOT NULL DEFAULT 'substring'"), ("stages", "key", "TEXT")],
          3: [("cluster_members", "src_ref", "INTEGER")]}
# tables whose columns changed in a way ALTER TABLE cannot make (a NOT NULL lifted): copied over
_REBUILT = {3: ["spans"]}
# indexes a version no longer has
_DROPPED = ("spans_method",)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


def _not_an_interrupt(record: logging.LogRecord) -> bool:
    """Whether a pool's log record is kept: not when it reports a Ctrl-C or SIGTERM that came
    while a connection was being closed or reset. The pool logs what it caught with its
    traceback ("Exception closing connection") and then raises it again when it is not an
    Exception, so the command still stops with its one line; only the traceback goes."""
    exc_type = record.exc_info[0] if record.exc_info else None
    return not (exc_type is not None and issubclass(exc_type, (Interrupted, KeyboardInterrupt)))


def quiet_pool_interrupts(engine: Engine) -> Engine:
    """`engine`, its pool's log made to drop interrupts' tracebacks (_not_an_interrupt)."""
    logger = logging.getLogger(f"{type(engine.pool).__module__}.{type(engine.pool).__name__}")
    if _not_an_interrupt not in logger.filters:
        logger.addFilter(_not_an_interrupt)
    return engine


def open_db(workdir: Path, create: bool = True, readonly: bool = False) -> Engine:
    """The work folder's database; creates the schema (or brings an older one up to date)
    when asked. A file that is not a SQLite database is a one-line error. `readonly`: a
    connection that cannot write (see open_readonly), for reading a folder one may not write."""
    path = Path(workdir) / DB_NAME
    if readonly:
        return quiet_pool_interrupts(create_engine("sqlite://", creator=lambda: open_readonly(Path(workdir))))
    engine = quiet_pool_interrupts(create_engine(f"sqlite:///{path}"))
    event.listen(engine, "connect", _pragmas)
    if create:
        try:
            _migrate(engine)
        except BaseException as e:  # an interrupt too: no connection of it may outlive it (settle)
            engine.dispose()
            if not isinstance(e, exc.DatabaseError):
                raise
            orig = getattr(e, "orig", e)
            if isinstance(orig, sqlite3.OperationalError):  # the disk or the permissions, not the file
                raise
            raise SadedupError(f"{path} is not a readable sadedup database ({orig}); "
                               f"`--restart` starts the work folder over") from None
    return engine


def settle(engine: Engine, wait_ms: int = 2000) -> bool:
    """At the end of a command: the write-ahead log folded into the database and the journal
    back to a plain rollback file, so a reader afterwards (sql, status, explain) creates no
    file in the work folder. Writers switch to WAL again when they connect."""
    engine.dispose()
    return fold_journal(Path(engine.url.database), wait_ms)


def fold_journal(path: Path, wait_ms: int = 2000) -> bool:
    """The database at `path` back to a plain rollback journal, its write-ahead log folded in
    (and a rollback journal a killed writer left, rolled back), by a connection of its own:
    settle's second half, for a command stopped before its engine was made. False when a
    connection still holds it after `wait_ms` (a reader elsewhere; or one of this process's
    that an interrupt cut off inside a statement, closed but kept alive by the traceback that
    holds its cursor, until the traceback goes)."""
    try:
        con = sqlite3.connect(path, timeout=wait_ms / 1000)
        try:
            return con.execute("PRAGMA journal_mode=DELETE").fetchone()[0].lower() == "delete"
        finally:
            con.close()
    except sqlite3.Error:
        return False


def check_schema(path: Path, version: int, existing: set[str]) -> None:
    """Refuses, by name, a database that lost what sadedup made in it: a table gone from one at
    this schema version, or an empty file where the folder's stages have run (its ingest
    folder is there). Either was made anew without a word, the folder's history with it, and
    a reader failed with "internal error: no such table"."""
    if version == SCHEMA_VERSION and existing:
        gone = sorted(set(metadata.tables) - existing)
        if gone:
            raise damaged(path, f"its table {gone[0]} is gone")
    if not existing and version == 0 and (Path(path).parent / "ingest").exists():
        raise damaged(path, "it is empty, and the folder's stages have run")


def _migrate(engine: Engine) -> None:
    with engine.begin() as c:
        version = c.exec_driver_sql("PRAGMA user_version").scalar()
        if version > SCHEMA_VERSION:
            raise SadedupError(f"{engine.url.database} was written by a newer sadedup (schema {version}, this one "
                               f"reads {SCHEMA_VERSION}); upgrade sadedup")
        existing = {r[0] for r in c.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'")}
        check_schema(Path(engine.url.database), version, existing)
        if existing and version < SCHEMA_VERSION:
            for v in range(version + 1, SCHEMA_VERSION + 1):
                for table, column, decl in _ADDED.get(v, []):
                    cols = {r[1] for r in c.exec_driver_sql(f"PRAGMA table_info({table})")}
                    if table in existing and column not in cols:
                        c.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
                for table in _REBUILT.get(v, []):
                    if table in existing:
                        _rebuild(c, metadata.tables[table])
        for name in _DROPPED:  # an index on a column of a handful of values costs more than it gives
            c.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")
        metadata.create_all(c)
        if version != SCHEMA_VERSION:
            c.exec_driver_sql(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _rebuild(c: Connection, table: Table) -> None:
    """`table` created anew from the schema above and its rows copied in (the columns both have)."""
    old = f"{table.name}_old"
    cols = [r[1] for r in c.exec_driver_sql(f"PRAGMA table_info({table.name})")]
    for index in table.indexes:
        c.exec_driver_sql(f"DROP INDEX IF EXISTS {index.name}")
    c.exec_driver_sql(f"ALTER TABLE {table.name} RENAME TO {old}")
    table.create(c)
    shared = ", ".join(col for col in cols if col in table.c)
    c.exec_driver_sql(f"INSERT INTO {table.name} ({shared}) SELECT {shared} FROM {old}")
    c.exec_driver_sql(f"DROP TABLE {old}")


# statements a read-only query may not make: ATTACH creates a file, VACUUM INTO writes one
_DENIED = {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH}


def _read_only_authorizer(action: int, arg1, arg2, db_name, trigger) -> int:
    if action in _DENIED or (action == sqlite3.SQLITE_PRAGMA and arg2 is not None):  # PRAGMA x = value
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _uri(path: Path, immutable: bool) -> str:
    from urllib.parse import quote

    return f"file:{quote(str(path.resolve()))}?mode=ro" + ("&immutable=1" if immutable else "")


def readonly_uri(workdir: Path) -> str:
    """A read-only URI of the database. A reader who cannot write the folder cannot make the
    WAL's shared-memory file, so the database is opened immutable there (no writer can be at
    work in a folder nobody may write)."""
    path = Path(workdir) / DB_NAME
    return _uri(path, not os.access(path.parent, os.W_OK))


def open_readonly(workdir: Path, immutable: bool = False) -> sqlite3.Connection:
    """A connection that cannot write, anywhere: SQLite refuses write statements, and the
    statements that would create or write other files (ATTACH, VACUUM INTO) are denied.
    `immutable`: opened as a file nobody writes (no lock, no journal or WAL files looked at or
    made), for a reference folder this run only reads while it holds it against writers."""
    uri = _uri(Path(workdir) / DB_NAME, True) if immutable else readonly_uri(Path(workdir))
    conn = sqlite3.connect(uri, uri=True)
    conn.execute("PRAGMA query_only=ON")
    conn.set_authorizer(_read_only_authorizer)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError:
        return conn  # not a database at all: said by the first query, as it always was
    try:
        check_schema(Path(workdir) / DB_NAME, version, tables)
    except BaseException:
        conn.close()
        raise
    return conn


def bulk_insert(conn: Connection, table: Table, columns: Sequence[str], rows: Iterable[Sequence],
                constants: dict[str, str] | None = None) -> int:
    """executemany of plain tuples straight to the driver: 10x faster than ORM-style dicts.
    `constants`: columns with one text value for every row, bound once in the statement."""
    constants = constants or {}
    names = [*constants, *columns]
    values = [*(f"'{v}'" for v in constants.values()), *("?" * len(columns))]
    sql = f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join(values)})"
    n = 0
    for chunk in _chunks(rows, 50_000):
        conn.exec_driver_sql(sql, chunk)
        n += len(chunk)
    return n


def bulk_replace(conn: Connection, table: Table, columns: Sequence[str], rows: Iterable[Sequence],
                 where: str = "1", params: tuple = (), constants: dict[str, str] | None = None) -> int:
    """Replaces the rows of `table` matching `where` by `rows`. When they are all of its
    rows, its indexes are dropped meanwhile and built again after: one sort per index
    instead of a random B-tree insert per row."""
    others = conn.exec_driver_sql(f"SELECT 1 FROM {table.name} WHERE NOT ({where}) LIMIT 1", params).first()
    if others is not None:
        conn.exec_driver_sql(f"DELETE FROM {table.name} WHERE {where}", params)
        return bulk_insert(conn, table, columns, rows, constants)
    for index in table.indexes:
        index.drop(conn, checkfirst=True)
    conn.exec_driver_sql(f"DELETE FROM {table.name}")
    n = bulk_insert(conn, table, columns, rows, constants)
    for index in table.indexes:
        index.create(conn)
    return n


def span_union_sql(method: bool) -> str:
    """SQL for (doc_id, cut): per document, the characters its spans cover (of one method, the
    `?` parameter, with `method`): spans in order of start, each adding what lies past the
    furthest end before it."""
    where = "WHERE method = ?" if method else ""
    return ("SELECT doc_id, sum(max(0, b - max(a, coalesce(prev, a)))) AS cut FROM ("
            "SELECT doc_id, char_start AS a, char_end AS b, max(char_end) OVER (PARTITION BY doc_id "
            "ORDER BY char_start, char_end ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev "
            f"FROM spans {where}) GROUP BY doc_id")


def bulk_update_documents(conn: Connection, columns: Sequence[str], rows: Iterable[Sequence]) -> None:
    """Updates documents by doc_id through a temporary table and one UPDATE ... FROM."""
    conn.exec_driver_sql("DROP TABLE IF EXISTS temp.doc_update")
    conn.exec_driver_sql(f"CREATE TEMP TABLE doc_update (doc_id INTEGER PRIMARY KEY, {', '.join(columns)})")
    cols = ["doc_id", *columns]
    sql = f"INSERT INTO temp.doc_update ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
    for chunk in _chunks(rows, 50_000):
        conn.exec_driver_sql(sql, chunk)
    sets = ", ".join(f"{c} = u.{c}" for c in columns)
    conn.exec_driver_sql(f"UPDATE documents SET {sets} FROM temp.doc_update AS u WHERE documents.doc_id = u.doc_id")
    conn.exec_driver_sql("DROP TABLE temp.doc_update")


class Columns:
    """Rows as equal-length numpy columns, which bulk_insert and bulk_update_documents turn
    into lists of tuples a chunk at a time (one zip over the chunk's `tolist()`s): a million
    spans went through a generator step and a list append per row, a third of remove's
    database write (1.5 of 4.5 s at 1 GB of web text) with both workers idle."""

    def __init__(self, columns: Sequence[np.ndarray]) -> None:
        self.columns = list(columns)

    def __len__(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def __iter__(self) -> Iterator[tuple]:
        return column_rows(self.columns)

    def prepended(self, column: np.ndarray) -> "Columns":
        return Columns([column, *self.columns])

    def chunks(self, size: int) -> Iterator[list]:
        for i in range(0, len(self), size):
            yield list(zip(*(c[i:i + size].tolist() for c in self.columns)))


def _chunks(rows: Iterable[Sequence], size: int) -> Iterator[list]:
    if isinstance(rows, Columns):
        yield from rows.chunks(size)
        return
    buf: list = []
    for r in rows:
        buf.append(r)
        if len(buf) >= size:
            yield buf
            buf = []
    if buf:
        yield buf


@contextmanager
def transaction(engine: Engine):
    with engine.begin() as conn:
        yield conn


def set_stage(conn: Connection, stage: str, shard: int, status: str, **values) -> None:
    """Upserts one stage (or shard) record."""
    row = {"stage": stage, "shard": shard, "status": status, **values}
    if status == "running":
        row.setdefault("started_at", now())
        row.setdefault("finished_at", None)
        row.setdefault("error", None)
    if status in ("done", "failed"):
        row.setdefault("finished_at", now())
    cols = list(row)
    updates = ", ".join(f"{c} = excluded.{c}" for c in cols if c not in ("stage", "shard"))
    conn.execute(text(f"INSERT INTO stages ({', '.join(cols)}) VALUES ({', '.join(':' + c for c in cols)}) "
                      f"ON CONFLICT (stage, shard) DO UPDATE SET {updates}"), row)
