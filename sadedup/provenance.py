"""The one writer of the provenance database: every write to sadedup.db goes through here.

Each producer replaces only its own rows: a deciding stage its drops (documents.reason),
its clusters (clusters.method) or its spans (spans.method). The invariant that keeps a work
folder honest: whenever a stage's decisions are taken back (a new ingest, a workflow that no
longer lists the stage), its record in `stages` goes in the same transaction, so a stage is
never "done" while its decisions are missing.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from . import db, graph

if TYPE_CHECKING:  # SQLAlchemy is imported with db, on first use (sadedup/__init__.py)
    from sqlalchemy import Connection, Engine


def deciding_stages() -> list[str]:
    return [n.name for n in graph.NODES if n.decides]


class Provenance:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # ---- runs
    def start_run(self, command: str, version: str, config: str, inputs: str) -> int:
        """A new `runs` row. Called under the folder's lock, so a row still `running` is one
        whose process died without a word (SIGKILL, power): it is marked so."""
        with self.engine.begin() as c:
            c.exec_driver_sql("UPDATE runs SET status = 'interrupted', error = 'the process ended without finishing' "
                              "WHERE status = 'running'")
            return c.execute(db.runs.insert().values(command=command, started_at=db.now(), status="running",
                                                     version=version, config=config, inputs=inputs)
                             ).inserted_primary_key[0]

    def finish_run(self, run_id: int, status: str, error: str | None) -> None:
        with self.engine.begin() as c:
            c.execute(db.runs.update().where(db.runs.c.run_id == run_id).values(
                finished_at=db.now(), status=status, error=error))

    def note_tokenizer(self, path: str) -> None:
        """The tokenizer a run trained on the corpus, on the run that trained it."""
        with self.engine.begin() as c:
            c.exec_driver_sql("UPDATE runs SET tokenizer = ? WHERE run_id = (SELECT max(run_id) FROM runs)", (path,))

    # ---- stage records
    def mark(self, stage: str, shard: int, status: str, conn: Connection | None = None, **values: Any) -> None:
        if conn is not None:
            db.set_stage(conn, stage, shard, status, **values)
            return
        with self.engine.begin() as c:
            db.set_stage(c, stage, shard, status, **values)

    def forget_shards(self, stage: str, shards: Iterable[int]) -> None:
        """The shard records of `stage` but those of `shards`, the shards it now has: a former
        plan's (more shards, or others), which `status` would list as done and the stage's
        checksum (of its records) would count."""
        with self.engine.begin() as c:
            c.exec_driver_sql("DELETE FROM stages WHERE stage = ? AND shard >= 0 AND shard NOT IN "
                              "(SELECT value FROM json_each(?))", (stage, json.dumps(sorted(set(shards)))))

    @staticmethod
    def _forget(conn: Connection, stages: Sequence[str]) -> None:
        """The whole-stage records of `stages` (their shards' artifacts stay reusable)."""
        if stages:
            marks = ", ".join("?" * len(stages))
            conn.exec_driver_sql(f"DELETE FROM stages WHERE shard = -1 AND stage IN ({marks})", tuple(stages))

    # ---- documents: ingest
    @contextmanager
    def new_documents(self) -> Iterator["DocumentWriter"]:
        """Replaces every document and input error, and so takes back every decision, in one
        transaction; the documents' indexes are built once at the end."""
        with self.engine.begin() as conn:
            owned = [db.metadata.tables[t] for n in graph.NODES for t in n.owns]
            for t in (db.spans, db.cluster_members, db.clusters, db.documents, db.input_errors, *owned):
                conn.execute(t.delete())
            self._forget(conn, [*deciding_stages(), "export"])
            for index in db.documents.indexes:
                index.drop(conn, checkfirst=True)
            yield DocumentWriter(conn)
            for index in db.documents.indexes:
                index.create(conn)

    # ---- the references a run deduplicates against
    def replace_refs(self, rows: Sequence[tuple[int, str, int | None]]) -> None:
        """The `refs` table: (ref_id, workdir, run_id) of every reference the workflow names
        (a write only when it changes, so a command without references writes nothing here)."""
        with self.engine.begin() as conn:
            now = [tuple(r) for r in conn.exec_driver_sql("SELECT ref_id, workdir, run_id FROM refs ORDER BY ref_id")]
            if now != [tuple(r) for r in rows]:
                conn.execute(db.refs.delete())
                db.bulk_insert(conn, db.refs, ["ref_id", "workdir", "run_id"], rows)

    # ---- decisions of document stages
    def replace_clusters(self, stage: str, keep_rule: str, kept: np.ndarray, member: np.ndarray,
                         cluster: np.ndarray, similarity: np.ndarray | None,
                         kept_ref: np.ndarray | None = None, member_ref: np.ndarray | None = None) -> dict[str, int]:
        """Replaces `stage`'s clusters and drops by these (doc ids; members include the kept
        one). Cluster ids stay unique across methods: new ones follow the largest id.

        `kept_ref`/`member_ref` (per cluster / member: the ref_id of a reference document, -1
        for one of this folder) when a run reads references: a reference document is written
        with its src_ref and is never dropped (it is always its cluster's kept document)."""
        reason = graph.node(stage).reason
        with self.engine.begin() as conn:
            self._take_back(conn, stage)
            base = conn.exec_driver_sql("SELECT coalesce(max(cluster_id), -1) + 1 FROM clusters").scalar()
            sizes = np.bincount(cluster, minlength=len(kept)) if len(kept) else np.zeros(0, np.int64)
            ids = base + np.arange(len(kept))
            db.bulk_insert(conn, db.clusters, ["cluster_id", "method", "size", "kept_doc_id", "keep_rule"],
                           zip(ids.tolist(), [stage] * len(kept), sizes.tolist(), kept.tolist(),
                               [keep_rule] * len(kept)))
            sims = [None] * len(member) if similarity is None else similarity.tolist()
            if member_ref is None:
                db.bulk_insert(conn, db.cluster_members, ["cluster_id", "doc_id", "similarity"],
                               zip(ids[cluster].tolist(), member.tolist(), sims))
                dropped = member[member != kept[cluster]] if len(member) else member
            else:
                refs = [None if r < 0 else r for r in member_ref.tolist()]
                db.bulk_insert(conn, db.cluster_members, ["cluster_id", "doc_id", "similarity", "src_ref"],
                               zip(ids[cluster].tolist(), member.tolist(), sims, refs))
                is_kept = (member == kept[cluster]) & (member_ref == kept_ref[cluster])
                assert not (member_ref[~is_kept] >= 0).any(), "a reference document would be dropped"
                dropped = member[~is_kept]
            db.bulk_update_documents(conn, ["status", "reason"], ((d, "dropped", reason) for d in dropped.tolist()))
            _in_fresh_order(conn, "clusters", "cluster_id", graph.METHODS, members="cluster_members")
        return {"clusters": int(len(kept)), "dropped": int(len(dropped))}

    # ---- decisions of span stages
    def replace_spans(self, stage: str, columns: Sequence[str], rows: Iterable[Sequence],
                      doc_columns: Sequence[str], doc_rows: Iterable[Sequence], dropped: np.ndarray,
                      removed: tuple[np.ndarray, np.ndarray]) -> None:
        """Replaces `stage`'s spans, its per-document results (doc_columns, by doc_id) and its
        drops (the documents `dropped`, with the stage's reason). Only the dropped documents'
        status changes, so the (status, reason) index is touched for them alone. `removed`:
        (doc_ids, characters) of every document the stage decided on, with the characters its
        own spans cover, for `documents.removed_chars` (`_count_removed`).

        Without a span_id column the spans are numbered after every other method's, then every
        method's moved into the order a fresh run numbers them (_in_fresh_order), like cluster ids."""
        n = graph.node(stage)
        method = n.method or stage
        with self.engine.begin() as conn:
            self._take_back(conn, stage, keep_spans=True)
            if "span_id" not in columns:
                base = conn.exec_driver_sql("SELECT coalesce(max(span_id), -1) + 1 FROM spans WHERE method != ?",
                                            (method,)).scalar()
                columns = ["span_id", *columns]
                rows = rows.prepended(np.arange(base, base + len(rows), dtype=np.int64)) \
                    if isinstance(rows, db.Columns) else ((base + i, *r) for i, r in enumerate(rows))
            db.bulk_replace(conn, db.spans, columns, rows, where="method = ?", params=(method,),
                            constants={"method": method})
            # the stage's own characters are every document's count when no other method has
            # spans (_count_removed): written with its columns, one pass through the temporary
            # table instead of two (0.06 s of web-60MB's remove)
            along = isinstance(doc_rows, db.Columns) and bool(doc_columns) and _alone(conn, method) and \
                np.array_equal(doc_rows.columns[0], removed[0])
            if along:
                conn.exec_driver_sql("UPDATE documents SET removed_chars = NULL WHERE removed_chars IS NOT NULL")
                db.bulk_update_documents(conn, [*doc_columns, "removed_chars"],
                                         db.Columns([*doc_rows.columns, np.asarray(removed[1])]))
            elif doc_columns:
                db.bulk_update_documents(conn, doc_columns, doc_rows)
            db.bulk_update_documents(conn, ["status", "reason"], ((d, "dropped", n.reason) for d in dropped.tolist()))
            if not along:
                _count_removed(conn, method, removed)
            _in_fresh_order(conn, "spans", "span_id", graph.SPAN_METHODS)

    def replace_eval_items(self, columns: Sequence[str], rows: Iterable[Sequence]) -> None:
        """The decontaminate stage's verdicts, one row per eval text (its spans point at them)."""
        with self.engine.begin() as conn:
            db.bulk_replace(conn, db.eval_items, columns, rows)

    @staticmethod
    def intact(read: Callable[[str, tuple], list], stage: str, detail: dict) -> bool:
        """A finished deciding stage's decisions are still in the database as it recorded
        them (counts of its drops and of its clusters or spans): an edit by hand is noticed.
        `read`: the work folder's `Workspace.read` (a read-only folder needs no engine for it)."""
        n = graph.node(stage)
        dropped, clusters, spans = read(
            "SELECT (SELECT count(*) FROM documents WHERE status = 'dropped' AND reason = ?), "
            "(SELECT count(*) FROM clusters WHERE method = ?), (SELECT count(*) FROM spans WHERE method = ?)",
            (n.reason, stage, n.method))[0]
        made = detail.get("spans", 0) if "spans" in detail else detail.get("clusters", detail.get("groups", 0))
        return dropped == detail.get("dropped") and made == (spans if "spans" in detail else clusters)

    # ---- taking decisions back
    def holding(self, stages: Sequence[str]) -> list[str]:
        """Those of `stages` that anything in the database is of: a stage record, clusters,
        spans, documents with its reason, its document columns filled, rows in its tables. A
        stage the workflow leaves out holds nothing in most folders, and taking back nothing
        cost a transaction and two renumbering scans per stage (0.16 s of a 1.2 s rerun)."""
        if not stages:
            return []
        with self.engine.connect() as c:
            def values(sql: str) -> set:
                return {r[0] for r in c.exec_driver_sql(sql)}

            def any_row(sql: str) -> bool:
                return c.exec_driver_sql(sql).first() is not None

            recorded = values("SELECT DISTINCT stage FROM stages WHERE shard = -1")
            methods = values("SELECT DISTINCT method FROM spans") | values("SELECT DISTINCT method FROM clusters")
            reasons = values("SELECT DISTINCT reason FROM documents WHERE reason IS NOT NULL")

            def holds(n: graph.Node) -> bool:
                return bool({n.name, n.method or n.name} & (recorded | methods)) or n.reason in reasons or \
                    any(any_row(f"SELECT 1 FROM documents WHERE {col} IS NOT NULL LIMIT 1") for col in n.doc_columns) \
                    or any(any_row(f"SELECT 1 FROM {t} LIMIT 1") for t in n.owns)

            return [s for s in stages if holds(graph.node(s))]

    def retract(self, stage: str) -> None:
        """Takes back every decision of `stage` and its record (a workflow that no longer
        runs it)."""
        n = graph.node(stage)
        with self.engine.begin() as conn:
            # taking back a span stage that ran changes what the span stages cut, all told
            ran = n.spans and conn.exec_driver_sql(
                "SELECT EXISTS (SELECT 1 FROM stages WHERE stage = ?) OR EXISTS (SELECT 1 FROM spans WHERE "
                "method = ?)", (stage, n.method or stage)).scalar()
            self._take_back(conn, stage)
            self._forget(conn, [stage])
            if ran:
                _count_removed(conn, None, None)
            _in_fresh_order(conn, "clusters", "cluster_id", graph.METHODS, members="cluster_members")
            _in_fresh_order(conn, "spans", "span_id", graph.SPAN_METHODS)

    @staticmethod
    def _take_back(conn: Connection, stage: str, keep_spans: bool = False) -> None:
        n = graph.node(stage)
        conn.exec_driver_sql("DELETE FROM cluster_members WHERE cluster_id IN "
                             "(SELECT cluster_id FROM clusters WHERE method = ?)", (stage,))
        conn.exec_driver_sql("DELETE FROM clusters WHERE method = ?", (stage,))
        if not keep_spans:
            conn.exec_driver_sql("DELETE FROM spans WHERE method = ?", (n.method or stage,))
        if n.reason:
            conn.exec_driver_sql("UPDATE documents SET status = 'kept', reason = NULL WHERE reason = ?", (n.reason,))
        if n.doc_columns:  # the per-document columns the stage fills
            sets = ", ".join(f"{c} = NULL" for c in n.doc_columns)
            conn.exec_driver_sql(f"UPDATE documents SET {sets} WHERE {n.doc_columns[0]} IS NOT NULL")
        for table in n.owns:
            conn.exec_driver_sql(f"DELETE FROM {table}")


def _alone(conn: Connection, method: str | None) -> bool:
    """No method but `method` has spans."""
    return conn.exec_driver_sql("SELECT 1 FROM spans WHERE method != ? LIMIT 1", (method,)).first() is None


def _count_removed(conn: Connection, method: str | None, own: tuple[np.ndarray, np.ndarray] | None) -> None:
    """documents.removed_chars, the characters the span stages cut from each document: the
    union of its spans of every method, 0 for a document that reached the span stages and was
    not cut, NULL for one dropped before them (or when no span stage ran). A pure function of
    the spans and the decisions, recounted whenever a span stage's spans change, so a value
    never mixes a stage's former spans with another's new ones.

    `own`: (doc_ids, characters) of the documents the stage of `method` decided on, covered by
    its own spans; when no other method has spans that is the answer, and the union over every
    span (a sort of all of them in SQL, seconds at a million spans) is not needed."""
    conn.exec_driver_sql("UPDATE documents SET removed_chars = NULL WHERE removed_chars IS NOT NULL")
    span_stages = tuple(s.name for s in graph.NODES if s.spans)
    if own is not None and _alone(conn, method):
        db.bulk_update_documents(conn, ["removed_chars"], db.Columns([np.asarray(own[0]), np.asarray(own[1])]))
        return
    if own is None and conn.exec_driver_sql(
            # the stages' own records: a shard's (lines keeps them for its reuse) outlives them
            f"SELECT 1 FROM stages WHERE shard = -1 AND stage IN ({', '.join('?' * len(span_stages))}) LIMIT 1",
            span_stages).first() is None:
        return  # no span stage left: nothing was cut
    reasons = tuple(s.reason for s in graph.NODES if s.spans)
    conn.exec_driver_sql("DROP TABLE IF EXISTS temp.span_union")
    conn.exec_driver_sql("CREATE TEMP TABLE span_union (doc_id INTEGER PRIMARY KEY, cut INTEGER)")
    conn.exec_driver_sql(f"INSERT INTO temp.span_union {db.span_union_sql(False)}")
    conn.exec_driver_sql(
        "UPDATE documents SET removed_chars = coalesce((SELECT cut FROM temp.span_union u WHERE u.doc_id = "
        f"documents.doc_id), 0) WHERE status = 'kept' OR reason IN ({', '.join('?' * len(reasons))})", reasons)
    conn.exec_driver_sql("DROP TABLE temp.span_union")


def _in_fresh_order(conn: Connection, table: str, key: str, methods: Sequence[str], members: str | None = None) -> None:
    """Renumbers `table`'s ids (and `members`' references to them) as a fresh run numbers them:
    each method's rows in one stretch, the methods in the stage graph's order from 0. A stage
    rerun alone (another setting, a workflow switched and back) numbered its rows after the
    largest id, so a folder brought current answered `explain` and SQL with other ids than a
    fresh run over the same inputs. A method's rows are always one stretch (written at once,
    base + 0..n-1), so a method moves by one offset; a run writing methods in graph order moves
    none. Through negative ids, because a moved method's new ids may be another's old ones."""
    start, moves = 0, []
    rows = {m: (lo, hi, n) for m, lo, hi, n in conn.exec_driver_sql(
        f"SELECT method, min({key}), max({key}), count(*) FROM {table} GROUP BY method")}
    for m in [*methods, *sorted(set(rows) - set(methods))]:
        if m not in rows:
            continue
        lo, hi, n = rows[m]
        if hi - lo + 1 != n:
            return  # not one stretch (no writer of this version leaves that): left as it is
        if lo != start:
            moves.append((m, start - lo))
        start += n
    for m, delta in moves:
        if members:
            conn.exec_driver_sql(f"UPDATE {members} SET {key} = -1 - ({key} + ?) WHERE {key} IN "
                                 f"(SELECT {key} FROM {table} WHERE method = ?)", (delta, m))
        conn.exec_driver_sql(f"UPDATE {table} SET {key} = -1 - ({key} + ?) WHERE method = ?", (delta, m))
    if moves:
        for t in ([members] if members else []) + [table]:
            conn.exec_driver_sql(f"UPDATE {t} SET {key} = -1 - {key} WHERE {key} < 0")


class DocumentWriter:
    """Adds documents and input errors inside ingest's transaction."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def documents(self, rows: Iterable[Sequence]) -> None:
        db.bulk_insert(self.conn, db.documents, ["doc_id", "source", "source_row", "ext_id", "n_chars", "n_bytes",
                                                 "status"], rows)

    def errors(self, rows: Iterable[Sequence]) -> None:
        db.bulk_insert(self.conn, db.input_errors, ["source", "source_row", "error"], rows)
