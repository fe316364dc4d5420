"""What the document-level stages (exact, minhash) share: which documents they see, keep
rules, and how they record their clusters.

Keep rules (``exact.keep``, ``minhash.keep``): the document of a group that survives is

- ``first``: the earliest in input order (smallest doc_id),
- ``longest`` / ``shortest``: the most / fewest characters (n_chars of the original text),
- ``column:NAME``: the highest numeric value of the input field NAME (read by streaming the
  inputs again; a missing, null, boolean or non-numeric value ranks below every number),

ties going to the earliest in input order.

Each stage's decisions are written (and taken back) by sadedup.provenance.
"""
from __future__ import annotations

import math
import sqlite3

import numpy as np
import xxhash

from . import db, graph
from .errors import SadedupError
from .readers import expand_inputs, read_records
from .workspace import Workspace

def later_reasons(stage: str) -> tuple[str, ...]:
    """The reasons written by `stage` and the stages after it."""
    names = [n.name for n in graph.NODES]
    return tuple(n.reason for n in graph.NODES[names.index(stage):] if n.reason)


def candidate_documents(ws: Workspace, stage: str) -> tuple[np.ndarray, np.ndarray]:
    """(doc_ids, n_chars) of the documents `stage` decides on: those no earlier stage dropped
    (kept ones, and ones dropped by this stage or a later one, which rerun after it)."""
    reasons = later_reasons(stage)
    marks = ", ".join("?" * len(reasons))
    con = sqlite3.connect(ws.root / db.DB_NAME)
    try:
        rows = con.execute(f"SELECT doc_id, n_chars FROM documents WHERE status = 'kept' OR reason IN ({marks}) "
                           f"ORDER BY doc_id", reasons)
        arr = np.fromiter(rows, dtype=[("doc_id", np.int64), ("n_chars", np.int64)])
    finally:
        con.close()
    return arr["doc_id"].copy(), arr["n_chars"].copy()


def visiting_order(ws: Workspace, doc_ids: np.ndarray) -> np.ndarray | None:
    """The order in which keep-first rules visit `doc_ids` (sorted): input order (None), or
    by input.priority, highest first, ties and documents without a number by input order."""
    wf = ws.workflow
    if not wf.input.priority:
        return None
    values, _ = column_values(ws, wf.input.priority, wf.input.text_field, wf.input.id_field)
    return np.lexsort((doc_ids, -values[doc_ids]))


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
    if found == 0 and len(values):
        raise SadedupError(f"keep rule {rule}: no document has a number in field {name!r}; name a numeric field "
                           f"of the input")
    if say is not None and found < len(values):
        say(f"keep rule {rule}: {len(values) - found} of {len(values)} documents have no number in field "
            f"{name!r}; they rank last")
    return values


def decisions_digest(*arrays: np.ndarray) -> str:
    """The checksum of what a stage decided: later stages' keys carry it, so they are redone
    exactly when these decisions change."""
    h = xxhash.xxh3_64()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()
