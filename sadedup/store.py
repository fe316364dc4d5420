"""The ingest store: every document's UTF-8 text, concatenated in doc_id order, memory-mapped.

    <workdir>/ingest/texts.bin     the bytes
    <workdir>/ingest/offsets.npy   int64, ndocs+1: document d is texts[offsets[d]:offsets[d+1]]
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np


class TextStore:
    """The ingest store: every document's UTF-8 text, memory-mapped."""

    def __init__(self, root: Path) -> None:
        self.path = root / "ingest" / "texts.bin"
        # mapped, not read: a task reads the offsets of the documents it works on, not all of
        # them (8 bytes a document: 3.3 GB at 1 TB of crawl text, read by every task)
        self.offsets = np.load(root / "ingest" / "offsets.npy", mmap_mode="r")
        self.data = np.memmap(self.path, dtype=np.uint8, mode="r") if self.offsets[-1] > 0 else np.zeros(0, np.uint8)

    def nbytes(self, doc_ids: np.ndarray) -> np.ndarray:
        return self.offsets[doc_ids + 1] - self.offsets[doc_ids]

    def text(self, doc_id: int) -> str:
        a, b = int(self.offsets[doc_id]), int(self.offsets[doc_id + 1])
        return bytes(self.data[a:b]).decode("utf-8")

    def raw(self, doc_ids) -> list[bytes]:
        """The documents' UTF-8 bytes, undecoded (for tokenizers that take bytes)."""
        doc_ids = np.asarray(doc_ids, dtype=np.int64)
        if not len(doc_ids):
            return []
        lo, hi = int(doc_ids.min()), int(doc_ids.max())
        o = (np.asarray(self.offsets[lo:hi + 2]) - int(self.offsets[lo])).tolist()
        block = bytes(self.data[int(self.offsets[lo]):int(self.offsets[hi + 1])])
        return [block[o[d - lo]:o[d - lo + 1]] for d in doc_ids.tolist()]

    def texts(self, doc_ids) -> list[str]:
        return [self.text(int(d)) for d in doc_ids]


def column_rows(columns: Sequence[np.ndarray], chunk: int = 50_000) -> Iterator[tuple]:
    """Rows of equal-length numpy columns as tuples of Python values, converted a chunk at a
    time: a million rows of ten columns as Python objects would cost hundreds of MB. (Here,
    not in db, which has it too: an export worker reads rows and must not load SQLAlchemy.)"""
    n = len(columns[0]) if columns else 0
    for i in range(0, n, chunk):
        yield from zip(*(c[i:i + chunk].tolist() for c in columns))
