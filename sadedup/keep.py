"""What the document-level stages (exact, minhash) share: which documents they see, keep
rules, and how they record their clusters.

Document order (``visiting_order``, the one place that defines it): input order, unless the
workflow's ``[[sources]]`` entries give priorities or ``input.priority`` names a numeric field.
Then documents come by the priority of the first ``[[sources]]`` entry matching their input
file (higher first; 0 where none matches), then by the field (higher first; a missing value
last), then in input order. Every keep-first rule follows it: exact and MinHash ``first``, the
span stages, and the substring stage's tokenized shards.

Keep rules (``exact.keep``, ``minhash.keep``): the document of a group that survives is

- ``first``: the earliest in document order,
- ``longest`` / ``shortest``: the most / fewest characters (n_chars of the original text),
- ``column:NAME``: the highest numeric value of the input field NAME (read by streaming the
  inputs again; a missing, null, boolean or non-numeric value ranks below every number),

ties going to the earliest in document order.

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

# doc_ids a query of candidate_documents covers (some 16 MB of text to parse)
CANDIDATE_BATCH = 1 << 20


def later_reasons(stage: str) -> tuple[str, ...]:
    """The reasons written by `stage` and the stages after it."""
    names = [n.name for n in graph.NODES]
    return tuple(n.reason for n in graph.NODES[names.index(stage):] if n.reason)


def _deciding(stage: str) -> tuple[str, tuple[str, ...]]:
    """The SQL condition on `documents` (and its parameters) for the documents `stage` decides
    on: those no earlier stage dropped (kept ones, and ones dropped by this stage or a later
    one, which rerun after it)."""
    reasons = later_reasons(stage)
    return f"status = 'kept' OR reason IN ({', '.join('?' * len(reasons))})", reasons


def candidate_documents(ws: Workspace, stage: str) -> tuple[np.ndarray, np.ndarray]:
    """(doc_ids, n_chars) of the documents `stage` decides on: those no earlier stage dropped
    (kept ones, and ones dropped by this stage or a later one, which rerun after it)."""
    where, reasons = _deciding(stage)
    ids, chars = [], []
    con = sqlite3.connect(ws.root / db.DB_NAME)
    try:
        top = con.execute("SELECT coalesce(max(doc_id), -1) FROM documents").fetchone()[0]
        # a range of doc_ids at a time, each as two strings SQLite joins and numpy parses: a
        # Python tuple per document took twice as long (32,546 documents: 45 -> 20 ms)
        for lo in range(0, top + 1, CANDIDATE_BATCH):
            a, b = con.execute(f"SELECT group_concat(doc_id, ' '), group_concat(n_chars, ' ') FROM (SELECT doc_id, "
                               f"n_chars FROM documents WHERE doc_id >= ? AND doc_id < ? AND ({where}) ORDER BY doc_id)",
                               (lo, lo + CANDIDATE_BATCH, *reasons)).fetchone()
            ids.append(np.fromstring(a or "", dtype=np.int64, sep=" "))
            chars.append(np.fromstring(b or "", dtype=np.int64, sep=" "))
    finally:
        con.close()
    doc_ids, n_chars = np.concatenate(ids + [np.zeros(0, np.int64)]), np.concatenate(chars + [np.zeros(0, np.int64)])
    if len(doc_ids) != len(n_chars):
        raise SadedupError(f"{ws.root / db.DB_NAME}: the documents table is damaged (an empty doc_id or n_chars)")
    if len(doc_ids) > 1 and not (doc_ids[1:] > doc_ids[:-1]).all():  # group_concat's order is SQLite's to choose
        order = np.argsort(doc_ids, kind="stable")
        doc_ids, n_chars = doc_ids[order], n_chars[order]
    return doc_ids, n_chars


def candidate_bytes(ws: Workspace, stage: str) -> int:
    """UTF-8 bytes of the documents `stage` decides on (candidate_documents' set), summed
    by SQLite: what sizes a stage's work, without a row per document in Python."""
    where, reasons = _deciding(stage)
    con = sqlite3.connect(ws.root / db.DB_NAME)
    try:
        return int(con.execute(f"SELECT coalesce(sum(n_bytes), 0) FROM documents WHERE {where}", reasons).fetchone()[0])
    finally:
        con.close()


def source_entries(ws: Workspace) -> np.ndarray | None:
    """Per doc_id, the index of the first [[sources]] entry whose `match` fits the document's
    input file (-1: none); None when the workflow has no entries."""
    sources = ws.workflow.sources
    if not sources:
        return None
    con = sqlite3.connect(ws.root / db.DB_NAME)
    try:
        n = con.execute("SELECT coalesce(max(doc_id), -1) + 1 FROM documents").fetchone()[0]
        out = np.full(n, -1, dtype=np.int32)
        # a file's documents are one range of doc_ids (they are numbered in input order), so
        # this is one row per input file, not per document
        for source, lo, hi, count in con.execute("SELECT source, min(doc_id), max(doc_id), count(*) FROM documents "
                                                 "GROUP BY source"):
            k = next((i for i, s in enumerate(sources) if s.matches(source)), -1)
            if k < 0:
                continue
            if hi - lo + 1 == count:
                out[lo:hi + 1] = k
            else:
                ids = np.fromiter((r[0] for r in con.execute("SELECT doc_id FROM documents WHERE source = ?",
                                                             (source,))), dtype=np.int64)
                out[ids] = k
    finally:
        con.close()
    return out


def source_values(ws: Workspace, name: str, default: float | int) -> np.ndarray | None:
    """Per doc_id, the [[sources]] setting `name` (a SourceConfig field) of the entry that
    applies to it, `default` where none applies or the entry leaves it unset; None when no
    entry sets it."""
    sources = ws.workflow.sources
    given = [getattr(s, name) for s in sources]
    if all(v is None or v == default for v in given):
        return None
    entry = source_entries(ws)
    table = np.array([default if v is None else v for v in given] + [default])
    return table[entry]  # entry -1 picks the default at the end


def order_settings(wf) -> list | None:
    """What document order depends on beyond input order, for the keys of the stages that
    follow it (None: input order, so keys made before priorities existed stay as they were)."""
    entries = [[s.match, s.priority] for s in wf.sources] if any(s.priority for s in wf.sources) else []
    if not wf.input.priority and not entries:
        return None
    return [wf.input.priority, entries]


def visiting_order(ws: Workspace, doc_ids: np.ndarray) -> np.ndarray | None:
    """The order in which keep-first rules visit `doc_ids` (sorted), as positions into it:
    None for input order; else by the priority of the documents' [[sources]] entry, highest
    first, then by the input.priority field, highest first (a document without a number
    last), ties by input order."""
    wf = ws.workflow
    priority = source_values(ws, "priority", 0)
    if not wf.input.priority and priority is None:
        return None
    keys = [doc_ids]
    if wf.input.priority:
        values, _ = column_values(ws, wf.input.priority, wf.input.text_field, wf.input.id_field)
        keys.append(-values[doc_ids])
    if priority is not None:
        keys.append(-priority[doc_ids])
    return np.lexsort(keys)


def visiting_rank(ws: Workspace, doc_ids: np.ndarray) -> np.ndarray | None:
    """Per document of `doc_ids` (sorted), its place in document order (None: input order)."""
    order = visiting_order(ws, doc_ids)
    if order is None:
        return None
    rank = np.empty(len(doc_ids), dtype=np.int64)
    rank[order] = np.arange(len(doc_ids))
    return rank


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


def keep_rank(rule: str, doc_ids: np.ndarray, n_chars: np.ndarray, values: np.ndarray | None = None,
              visit: np.ndarray | None = None) -> np.ndarray:
    """Rank of every candidate under the keep rule: 0 is the document kept first. `visit` is
    each candidate's place in document order (visiting_rank; None: input order): `first`
    follows it, and it breaks the other rules' ties."""
    n = len(doc_ids)
    tie = doc_ids if visit is None else visit
    if rule == "first":
        order = np.arange(n) if visit is None else np.argsort(visit, kind="stable")
    elif rule == "longest":
        order = np.lexsort((tie, -n_chars))
    elif rule == "shortest":
        order = np.lexsort((tie, n_chars))
    elif rule.startswith("column:"):
        if values is None:
            raise ValueError("keep rule column:NAME needs the column's values")
        order = np.lexsort((tie, -values[doc_ids]))
    else:
        raise SadedupError(f"unknown keep rule {rule!r}")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    return rank


def candidate_ranks(ws: Workspace, rule: str, doc_ids: np.ndarray, n_chars: np.ndarray, needed: bool = True,
                    say=None) -> np.ndarray:
    """keep_rank of every candidate under `rule`, its column read for a column:NAME rule and
    ties broken in document order. Not `needed` (no group or cluster to keep one from): zeros,
    and nothing read (a column: rule has no column to rank by then)."""
    if not needed:
        return np.zeros(len(doc_ids), np.int64)
    return keep_rank(rule, doc_ids, n_chars, rule_values(ws, rule, say), visiting_rank(ws, doc_ids))


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
