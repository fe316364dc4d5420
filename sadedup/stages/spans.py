"""What the span stages share (lines, passages, decontaminate, substring's remove).

A span stage decides on the documents that reach it (no earlier stage dropped them), in
document order (input order, or the workflow's priority first). It cuts character spans out
of the documents' *original* text, applies its own drop rule, and a document it drops reaches
no later stage; export cuts the union of every span stage's spans. A span stage writes only
through the provenance writer, and records a digest of what it decided so that the stages
reading it are redone exactly when its decisions change.

A concrete stage implements `decide` and returns `Cuts`; this base turns them into `spans`
rows (method = the stage's workflow entry, token offsets NULL: these stages work on
characters) and drops, and reports the counts every span stage reports.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import db
from ..keep import candidate_documents, decisions_digest, order_settings, visiting_order
from .base import Context, Stage, chain

# columns of a span row a stage may fill beyond its extent and its source
EXTRA_COLUMNS = ("similarity", "src_item_id", "src_ref")


@dataclass
class Cuts:
    """A span stage's decisions. Offsets are code points of the original text, each span a
    half-open [char_start, char_end); a source of -1 is NULL (no earlier text: an eval item,
    a frequent line). `extra` holds any of EXTRA_COLUMNS, one value per span (NaN or -1 for
    NULL). `detail` is added to what the stage records."""
    doc_id: np.ndarray
    char_start: np.ndarray
    char_end: np.ndarray
    src_doc_id: np.ndarray
    src_char_start: np.ndarray
    src_char_end: np.ndarray
    dropped: np.ndarray                     # doc_ids the stage's drop rule dropped
    removed_chars: int = 0                  # characters cut from the documents it kept
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.extra) - set(EXTRA_COLUMNS)
        assert not unknown, f"unknown span columns {unknown}"


def over_fraction(removed: np.ndarray, total: np.ndarray, fraction: float) -> np.ndarray:
    """The drop rule every span stage applies: more than `fraction` of a document removed, in
    IEEE double precision; an empty document is never dropped."""
    removed = np.asarray(removed, dtype=np.float64)
    total = np.asarray(total, dtype=np.float64)
    return (total > 0) & (removed / np.maximum(total, 1.0) > fraction)


def union_length(doc_id: np.ndarray, start: np.ndarray, end: np.ndarray, n_docs_ids: np.ndarray) -> np.ndarray:
    """Per document of `n_docs_ids` (sorted doc ids), the characters covered by the union of
    its spans (spans may overlap and come in any order)."""
    out = np.zeros(len(n_docs_ids), np.int64)
    if not len(doc_id):
        return out
    order = np.lexsort((start, doc_id))
    d, s, e = doc_id[order], start[order], end[order]
    # the furthest end so far within each document (a running max restarted per document by
    # lifting each document above the last): a span adds only what lies past it
    new_doc = np.r_[True, d[1:] != d[:-1]]
    lift = (np.cumsum(new_doc) - 1) * (int(e.max()) + 1)
    reach = np.maximum.accumulate(e + lift) - lift
    before = np.where(new_doc, s, np.r_[s[:1], reach[:-1]])
    added = np.maximum(e - np.maximum(s, before), 0)
    np.add.at(out, np.searchsorted(n_docs_ids, d), added)
    return out


class SpanStage(Stage):
    """A stage that cuts spans out of the documents that reach it."""

    def key(self, ctx: Context) -> str:
        """Every span stage visits documents in document order: what that order depends on
        ([[sources]] priorities, input.priority) is part of its key, so a new priority makes it
        stale even when no stage it reads changed (none of them may use the order)."""
        key = super().key(ctx)
        order = order_settings(ctx.wf)
        return key if order is None else chain(key, order)

    def documents(self, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
        """(doc_ids in the order the stage visits them, their n_chars)."""
        doc_ids, n_chars = candidate_documents(ctx.ws, self.name)
        order = visiting_order(ctx.ws, doc_ids)
        if order is not None:
            doc_ids, n_chars = doc_ids[order], n_chars[order]
        return doc_ids, n_chars

    def decide(self, ctx: Context, key: str, doc_ids: np.ndarray, n_chars: np.ndarray) -> Cuts:
        raise NotImplementedError

    def summary(self, d: dict[str, Any]) -> str:
        return (f"{self.name}: {d['spans']} span(s) cut from {d['cut']} document(s), {d['dropped']} dropped "
                f"(of {d['documents']})")

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        doc_ids, n_chars = self.documents(ctx)
        c = self.decide(ctx, key, doc_ids, n_chars)
        order = np.lexsort((c.char_start, c.doc_id))
        cols = {"doc_id": c.doc_id, "char_start": c.char_start, "char_end": c.char_end, "src_doc_id": c.src_doc_id,
                "src_char_start": c.src_char_start, "src_char_end": c.src_char_end, **c.extra}
        cols = {k: np.asarray(v)[order] for k, v in cols.items()}
        decided = np.sort(np.asarray(doc_ids, dtype=np.int64))
        ctx.ws.prov.replace_spans(self.name, list(cols), _nullable_rows(cols), [], [],
                                  np.asarray(c.dropped, dtype=np.int64),
                                  removed=(decided, union_length(cols["doc_id"], cols["char_start"], cols["char_end"],
                                                                 decided)))
        dropped = set(np.asarray(c.dropped).tolist())
        cut_docs = {d for d in np.unique(c.doc_id).tolist() if d not in dropped}
        return {"documents": int(len(doc_ids)), "spans": int(len(c.doc_id)), "cut": len(cut_docs),
                "dropped": len(dropped), "removed_chars": int(c.removed_chars), **c.detail,
                "digest": decisions_digest(*cols.values(), np.sort(np.asarray(c.dropped, dtype=np.int64)))}


def _nullable_rows(cols: dict[str, np.ndarray], chunk: int = 50_000):
    """Rows for the spans table with -1 sources and NaN similarities as NULL. A column with
    such values becomes an object column with None there, a column at a time: a test per
    value in Python cost more than writing the rows (millions of line spans)."""
    out = []
    for name, arr in cols.items():
        arr = np.asarray(arr)
        if name.startswith("src_") or name == "similarity":
            null = arr == -1
            if arr.dtype.kind == "f":
                null |= np.isnan(arr)
            if null.any():
                arr = arr.astype(object)
                arr[null] = None
        out.append(arr)
    return db.column_rows(out, chunk)
