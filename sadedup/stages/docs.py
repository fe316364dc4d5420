"""What the document-level stages hand to the substring stage."""
from __future__ import annotations

import numpy as np

from ..workspace import Workspace


def substring_candidates(ws: Workspace) -> np.ndarray:
    """doc_ids, in order, that the document-level stages kept."""
    with ws.engine.connect() as c:
        rows = c.exec_driver_sql(
            "SELECT doc_id FROM documents WHERE status = 'kept' OR reason = 'substring_coverage' ORDER BY doc_id")
        return np.fromiter((r[0] for r in rows), dtype=np.int64)
