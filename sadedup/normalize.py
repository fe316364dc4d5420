"""Text normalization for the document-level stages (exact hashes, MinHash shingles).

The normalized form of a text is, in this order:

1. Unicode NFC,
2. lower-cased (Python's ``str.lower``) when the stage says so (``exact.lowercase``, default
   off; ``minhash.lowercase``, default on),
3. every run of whitespace (what ``str.isspace`` accepts) replaced by one space, and the
   leading and trailing whitespace removed.

``normalize()`` is that definition in plain Python. The stages get the same bytes faster:
``prepare()`` hands the C kernels the ingest texts as they are for pure-ASCII documents (NFC
and lower-casing of ASCII are trivial, the kernels do them on the fly) and gives them a
Python-normalized copy (steps 1-2) only of the documents with a non-ASCII byte; whitespace
(step 3) is always done in C. Words, for word shingles, are the space-separated tokens of the
normalized text (punctuation stays attached to its word).
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np

from . import native


def normalize(text: str, lowercase: bool = False) -> str:
    """The reference definition (see the module docstring)."""
    t = unicodedata.normalize("NFC", text)
    if lowercase:
        t = t.lower()
    return " ".join(t.split())


def words(text: str, lowercase: bool = True) -> list[str]:
    """The words of the normalized text, as word shingles see them."""
    t = normalize(text, lowercase)
    return t.split(" ") if t else []


@dataclass
class DocBytes:
    """Documents as the kernels take them: byte ranges into A (the ingest texts) or into B."""
    A: np.ndarray | bytes
    B: bytes
    starts: np.ndarray
    ends: np.ndarray

    @property
    def args(self) -> tuple:
        return self.A, self.B, self.starts, self.ends

    def __len__(self) -> int:
        return len(self.starts)


def prepare(texts: np.ndarray, offsets: np.ndarray, doc_ids: np.ndarray, lowercase: bool) -> DocBytes:
    """The documents `doc_ids` of the ingest texts, NFC (and lower-cased) where not pure ASCII."""
    ids = np.asarray(doc_ids, dtype=np.int64)
    starts = np.asarray(offsets[ids], dtype=np.int64).copy()
    ends = np.asarray(offsets[ids + 1], dtype=np.int64).copy()
    A = texts if len(texts) else b""
    nonascii = np.flatnonzero(native.doc_nonascii(A, b"", starts, ends)) if len(ids) else np.zeros(0, np.int64)
    if not len(nonascii):
        return DocBytes(A, b"", starts, ends)
    base = len(texts)
    pieces: list[bytes] = []
    pos = 0
    for k in nonascii.tolist():
        t = unicodedata.normalize("NFC", bytes(texts[starts[k]:ends[k]]).decode("utf-8"))
        if lowercase:
            t = t.lower()
        data = t.encode("utf-8")
        pieces.append(data)
        starts[k] = base + pos
        ends[k] = base + pos + len(data)
        pos += len(data)
    return DocBytes(A, b"".join(pieces), starts, ends)


def normalized_texts(docs: DocBytes, lowercase: bool) -> tuple[np.ndarray, np.ndarray]:
    """The normalized UTF-8 of every document, concatenated, with ndocs+1 offsets."""
    return native.doc_normalize(*docs.args, lower=lowercase)
