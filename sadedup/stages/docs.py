"""What the document-level stages hand to the substring stage."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..workspace import Workspace
from .base import Context, chain

# the reason each stage writes on the documents it drops
REASONS = {"exact": "exact_duplicate", "minhash": "near_duplicate", "substring": "substring_coverage"}


def document_stages_key(ctx: Context) -> str:
    """Key of the document set the substring stage sees: inputs plus the document stages run."""
    from .ingest import Ingest

    wf = ctx.wf
    parts: list = [Ingest().key(ctx)]
    for s in wf.stages:
        if s in ("exact", "minhash"):
            parts.append((s, dataclasses.asdict(getattr(wf, s))))
    return chain(*parts)


def substring_candidates(ws: Workspace) -> np.ndarray:
    """doc_ids, in order, that the document-level stages kept."""
    with ws.engine.connect() as c:
        rows = c.exec_driver_sql(
            "SELECT doc_id FROM documents WHERE status = 'kept' OR reason = 'substring_coverage' ORDER BY doc_id")
        return np.fromiter((r[0] for r in rows), dtype=np.int64)
