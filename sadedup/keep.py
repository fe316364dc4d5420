"""What the document-level stages (exact, minhash) share: which documents they see, keep
rules, and how they record their clusters.

Keep rules (``exact.keep``, ``minhash.keep``): the document of a group that survives is

- ``first``: the earliest in input order (smallest doc_id),
- ``longest`` / ``shortest``: the most / fewest characters (n_chars of the original text),
- ``column:NAME``: the highest numeric value of the input field NAME (read by streaming the
  inputs again; a missing, null, boolean or non-numeric value ranks below every number),

ties going to the earliest in input order.

Each stage takes back its own earlier decisions when it runs (documents it dropped, its
clusters), so reruns are idempotent; cluster ids stay unique across methods (a stage numbers
its clusters after the largest id in the table). A finished stage is skipped only while its
key matches and its records are still in the database (a fresh ingest wipes them).
"""
from __future__ import annotations

import math
import sqlite3

import numpy as np
from sqlalchemy import Connection

from . import db
from .errors import SadedupError
from .readers import expand_inputs, read_records
from .workspace import Workspace

# which stage writes which reason, and the cluster method it records
STAGE_REASON = {"exact": "exact_duplicate", "minhash": "near_duplicate"}
LATER_REASONS = {"exact": ("exact_duplicate", "near_duplicate", "substring_coverage"),
                 "minhash": ("near_duplicate", "substring_coverage")}


def candidate_documents(ws: Workspace, stage: str) -> tuple[np.ndarray, np.ndarray]:
    """(doc_ids, n_chars) of the documents `stage` decides on: those no earlier stage dropped
    (kept ones, and ones dropped by this stage or a later one, which rerun after it)."""
    reasons = LATER_REASONS[stage]
    marks = ", ".join("?" * len(reasons))
    con = sqlite3.connect(ws.root / db.DB_NAME)
    try:
        rows = con.execute(f"SELECT doc_id, n_chars FROM documents WHERE status = 'kept' OR reason IN ({marks}) "
                           f"ORDER BY doc_id", reasons)
        arr = np.fromiter(rows, dtype=[("doc_id", np.int64), ("n_chars", np.int64)])
    finally:
        con.close()
    return arr["doc_id"].copy(), arr["n_chars"].copy()


def column_values(ws: Workspace, name: str, text_field: str, id_field: str) -> tuple[np.ndarray, int]:
    """Per doc_id, the numeric value of input field `name` (-inf when missing or not a number),
    and how many documents have a number there."""
    con = sqlite3.connect(ws.root / db.DB_NAME)
    try:
        n = con.execute("SELECT count(*) FROM documents").fetchone()[0]
        docs = con.execute("SELECT doc_id, source, source_row FROM documents ORDER BY doc_id")
        values = np.full(n, -np.inf)
        found = 0
        nxt = docs.fetchone()
        inputs, _ = expand_inputs([d["path"] for d in ws.read_state()["inputs"]])
        for inp in inputs:
            for rec in read_records(inp, text_field, id_field):
                if nxt is None:
                    break
                if (rec.source, rec.row) != (nxt[1], nxt[2]):
                    continue  # an input_errors row
                v = rec.obj.get(name) if rec.obj is not None else None
                if isinstance(v, (int, float)) and not isinstance(v, bool) and not (isinstance(v, float) and math.isnan(v)):
                    values[nxt[0]] = float(v)
                    found += 1
                nxt = docs.fetchone()
    finally:
        con.close()
    return values, found


def keep_rank(rule: str, doc_ids: np.ndarray, n_chars: np.ndarray, values: np.ndarray | None = None) -> np.ndarray:
    """Rank of every candidate under the keep rule: 0 is the document kept first."""
    n = len(doc_ids)
    if rule == "first":
        order = np.arange(n)
    elif rule == "longest":
        order = np.lexsort((doc_ids, -n_chars))
    elif rule == "shortest":
        order = np.lexsort((doc_ids, n_chars))
    elif rule.startswith("column:"):
        if values is None:
            raise ValueError("keep rule column:NAME needs the column's values")
        order = np.lexsort((doc_ids, -values[doc_ids]))
    else:
        raise SadedupError(f"unknown keep rule {rule!r}")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    return rank


def rule_values(ws: Workspace, rule: str, say=None) -> np.ndarray | None:
    """The column a column:NAME rule ranks by (None for the other rules)."""
    if not rule.startswith("column:"):
        return None
    name = rule.split(":", 1)[1]
    wf = ws.workflow
    values, found = column_values(ws, name, wf.input.text_field, wf.input.id_field)
    if say is not None and found < len(values):
        say(f"keep rule {rule}: {len(values) - found} of {len(values)} documents have no number in field "
            f"{name!r}; they rank last")
    return values


def records_intact(ws: Workspace, method: str, detail: dict) -> bool:
    """A finished stage's decisions are still in the database (a later ingest wipes them)."""
    con = sqlite3.connect(ws.root / db.DB_NAME)
    try:
        clusters = con.execute("SELECT count(*) FROM clusters WHERE method = ?", (method,)).fetchone()[0]
        dropped = con.execute("SELECT count(*) FROM documents WHERE reason = ?", (STAGE_REASON[method],)).fetchone()[0]
    finally:
        con.close()
    return clusters == detail.get("clusters", detail.get("groups")) and dropped == detail.get("dropped")


def record_clusters(conn: Connection, method: str, listed: tuple[str, ...], keep_rule: str,
                    kept: np.ndarray, member: np.ndarray, cluster: np.ndarray,
                    similarity: np.ndarray | None) -> dict[str, int]:
    """Replaces `method`'s decisions by these clusters (doc ids; members include the kept one).

    Also forgets the clusters of a document stage the workflow no longer lists (its drops were
    already taken back). Returns counts for the stage record."""
    reason = STAGE_REASON[method]
    gone = tuple(m for m in STAGE_REASON if m not in listed and m != method)
    for m in (method, *gone):
        conn.exec_driver_sql("DELETE FROM cluster_members WHERE cluster_id IN "
                             "(SELECT cluster_id FROM clusters WHERE method = ?)", (m,))
        conn.exec_driver_sql("DELETE FROM clusters WHERE method = ?", (m,))
    conn.exec_driver_sql("UPDATE documents SET status = 'kept', reason = NULL WHERE reason = ?", (reason,))
    base = conn.exec_driver_sql("SELECT coalesce(max(cluster_id), -1) + 1 FROM clusters").scalar()
    sizes = np.bincount(cluster, minlength=len(kept)) if len(kept) else np.zeros(0, np.int64)
    ids = base + np.arange(len(kept))
    db.bulk_insert(conn, db.clusters, ["cluster_id", "method", "size", "kept_doc_id", "keep_rule"],
                   zip(ids.tolist(), [method] * len(kept), sizes.tolist(), kept.tolist(), [keep_rule] * len(kept)))
    sims = [None] * len(member) if similarity is None else similarity.tolist()
    db.bulk_insert(conn, db.cluster_members, ["cluster_id", "doc_id", "similarity"],
                   zip(ids[cluster].tolist(), member.tolist(), sims))
    dropped = member[member != kept[cluster]] if len(member) else member
    db.bulk_update_documents(conn, ["status", "reason"], ((d, "dropped", reason) for d in dropped.tolist()))
    return {"clusters": int(len(kept)), "dropped": int(len(dropped))}
