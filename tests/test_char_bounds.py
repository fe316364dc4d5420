"""The character bounds a subword tokenizer's shards keep (tokenizers.CHARS_FILES): packing,
the native reader and the spans read from them, against the definition."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sadedup import native
from sadedup.tokenizers import ShardChars, pack_char_bounds, shrink_to_chars


def brute_span(s: list[int], e: list[int], ts: int, te: int) -> tuple[int, int]:
    """The removed tokens' extent, shrunk inward past every character a kept token also
    covers, as shrink_to_chars has always computed it: the extent's ends are the running
    minimum of the starts from ts on and the running maximum of the ends up to te-1 (for
    tokens in order, s[ts] and e[te-1]; the same for every real tokenizer's offsets)."""
    a = max([min(s[ts:])] + [e[i] for i in range(ts)])
    b = min([max(e[:te])] + [s[i] for i in range(te, len(s))])
    return a, max(a, b)


# a token's extent: mostly short, sometimes a jump of hundreds of characters (a normalizer
# dropping text, a long whitespace token), which the one-byte deltas must escape
extent = st.tuples(st.integers(0, 3).map(lambda x: x) | st.integers(200, 900), st.integers(0, 4) | st.integers(250, 700))


@st.composite
def shard(draw):
    docs = []
    for _ in range(draw(st.integers(0, 6))):
        toks, at = [], 0
        for gap, width in draw(st.lists(extent, max_size=30)):
            # mostly in order, sometimes overlapping or going back (NFKC, byte fallback)
            start = max(0, at + gap - (draw(st.integers(0, 3)) if draw(st.booleans()) else 0))
            toks.append((start, start + width))
            at = start + width
        docs.append(toks)
    return docs


def packed(docs):
    counts = np.array([len(d) for d in docs], np.int64)
    cs = np.array([t[0] for d in docs for t in d], np.int64)
    ce = np.array([t[1] for d in docs for t in d], np.int64)
    doc_start = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return pack_char_bounds(cs, ce, counts), doc_start


@settings(max_examples=300, deadline=None)
@given(docs=shard(), data=st.data())
def test_spans_from_kept_bounds_match_the_definition(docs, data):
    (deltas, exc), doc_start = packed(docs)
    assert deltas.dtype == np.uint8 and deltas.shape == (2, int(doc_start[-1]))
    chars = ShardChars(deltas, exc, doc_start)
    spans = []
    for d, toks in enumerate(docs):
        for _ in range(data.draw(st.integers(0, 4)) if toks else 0):
            ts = data.draw(st.integers(0, len(toks) - 1))
            spans.append((d, ts, data.draw(st.integers(ts + 1, len(toks)))))
    data.draw(st.randoms()).shuffle(spans)   # any order: sources come unsorted
    doc = np.array([x[0] for x in spans], np.int64)
    ts = np.array([x[1] for x in spans], np.int64)
    te = np.array([x[2] for x in spans], np.int64)
    cs, ce = chars.spans(doc, ts, te)
    for i, (d, a, b) in enumerate(spans):
        s = [t[0] for t in docs[d]]
        e = [t[1] for t in docs[d]]
        assert (cs[i], ce[i]) == brute_span(s, e, a, b)
        ref = shrink_to_chars(np.array(s), np.array(e), np.array([a]), np.array([b]))
        assert (cs[i], ce[i]) == (ref[0][0], ref[1][0])


@settings(max_examples=200, deadline=None)
@given(docs=shard(), data=st.data())
def test_char_values_equal_a_running_sum(docs, data):
    (deltas, exc), doc_start = packed(docs)
    n = deltas.shape[1]
    if n == 0:
        return
    for row in (0, 1):
        full = deltas[row].astype(np.int64)
        m = exc[1] == row
        full[exc[0][m]] = exc[2][m]
        assert np.all(deltas[row][exc[0][m]] == native.CHAR_ESCAPE)
        ref = np.zeros(n, np.int64)
        for d in range(len(doc_start) - 1):  # reset at every document start
            ref[doc_start[d]:doc_start[d + 1]] = np.cumsum(full[doc_start[d]:doc_start[d + 1]])
        q = np.sort(np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=20)), np.int64))
        got = native.char_values(np.ascontiguousarray(deltas[row]), doc_start[:-1], exc[0][m], exc[2][m], q)
        assert got.tolist() == ref[q].tolist()


def test_char_values_refuses_bad_queries():
    (deltas, exc), doc_start = packed([[(0, 1), (1, 300), (300, 301)]])
    z = np.zeros(0, np.int64)
    with pytest.raises(ValueError, match="sorted"):
        native.char_values(np.ascontiguousarray(deltas[0]), doc_start[:-1], z, z, np.array([2, 1]))
    with pytest.raises(ValueError, match="sorted"):
        native.char_values(np.ascontiguousarray(deltas[0]), doc_start[:-1], z, z, np.array([3]))
    with pytest.raises(ValueError, match="exception"):  # P's jump of 299 is escaped: drop its entry
        native.char_values(np.ascontiguousarray(deltas[1]), doc_start[:-1], z, z, np.array([2]))


def test_pack_refuses_inverted_extents():
    with pytest.raises(ValueError):
        pack_char_bounds(np.array([3]), np.array([2]), np.array([1]))
