"""Tokenizers turn a document's text into token ids and map token spans back to characters.

`bytes` (the default): the UTF-8 bytes of the raw text are the tokens (vocabulary 256, uint8).
A removed token span is shrunk inward to whole characters: its start moves forward and its
end backward to the nearest UTF-8 character boundary.
"""
from __future__ import annotations

import numpy as np

from .errors import ConfigError


def _is_continuation(tokens: np.ndarray) -> np.ndarray:
    return (tokens & 0xC0) == 0x80


class ByteTokenizer:
    name = "bytes"
    slug = "bytes"
    dtype = np.dtype(np.uint8)
    vocab_size = 256

    def token_counts(self, text_offsets: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
        return text_offsets[doc_ids + 1] - text_offsets[doc_ids]

    def encode_into(self, texts: np.ndarray, text_offsets: np.ndarray, doc_ids: np.ndarray,
                    out: np.ndarray) -> None:
        """Gathers the documents' bytes into `out` (one shard), without a Python loop per byte."""
        starts = text_offsets[doc_ids]
        lens = text_offsets[doc_ids + 1] - starts
        if len(doc_ids) and np.all(starts[1:] == starts[:-1] + lens[:-1]):
            out[:] = texts[starts[0]: starts[0] + lens.sum()]
            return
        dest_starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
        idx = np.repeat(starts - dest_starts, lens) + np.arange(lens.sum())
        out[:] = texts[idx]

    def char_spans(self, tokens: np.ndarray, doc_start: np.ndarray, doc: np.ndarray, tok_start: np.ndarray,
                   tok_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Code-point offsets, within each document, of token spans shrunk inward to whole characters.

        tokens: the shard; doc_start: its documents' token offsets (ndocs+1); doc, tok_start,
        tok_end: spans as document index in the shard and token offsets in the document.
        """
        if len(doc) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        base = doc_start[doc]
        end_of_doc = doc_start[doc + 1]
        a = base + tok_start
        b = base + tok_end
        cont = _is_continuation(tokens)
        # a UTF-8 character has at most 3 continuation bytes: at most 3 steps each way
        for _ in range(3):
            step = (a < b) & cont[np.minimum(a, len(tokens) - 1)]
            a = a + step
        a = np.minimum(a, b)
        for _ in range(3):
            step = (b > a) & (b < end_of_doc) & cont[np.minimum(b, len(tokens) - 1)]
            b = b - step
        b = np.where((b < end_of_doc) & cont[np.minimum(b, len(tokens) - 1)], a, b)
        b = np.maximum(a, b)
        # code points before a byte offset = character-start bytes before it
        starts = np.zeros(len(tokens) + 1, dtype=np.int32 if len(tokens) < (1 << 31) else np.int64)
        np.cumsum(~cont, out=starts[1:])
        return (starts[a] - starts[base]).astype(np.int64), (starts[b] - starts[base]).astype(np.int64)


def get_tokenizer(spec: str):
    if spec == "bytes":
        return ByteTokenizer()
    raise ConfigError(f"substring.tokenizer {spec!r} is not available yet (use bytes)")
