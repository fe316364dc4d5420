"""Group ids at a longer window length from those at a shorter one by pairing (sweeps.py,
paired_gids): equal to numbering the longer windows from scratch, as the repeats stage does
(dense ids of the windows seen twice or more, in lexicographic order, -1 elsewhere)."""
from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sadedup.sweeps import paired_gids, paired_ids, pairing_steps


def brute_gid(tokens: list[int], offsets: list[int], L: int) -> tuple[np.ndarray, int]:
    """The group id of the L-window at every position, from the windows themselves."""
    n = len(tokens)
    key: list[tuple[int, ...] | None] = [None] * n
    for a, b in zip(offsets[:-1], offsets[1:]):
        for p in range(a, b - L + 1):
            key[p] = tuple(tokens[p:p + L])
    seen = Counter(k for k in key if k is not None)
    ids = {k: i for i, k in enumerate(sorted(k for k, c in seen.items() if c >= 2))}
    return np.array([ids.get(k, -1) if k is not None else -1 for k in key], dtype=np.int64), len(ids)


# few distinct tokens and short documents, so that windows repeat, across documents too
corpora = st.lists(st.lists(st.integers(0, 2), min_size=0, max_size=30), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(corpora, st.integers(1, 6), st.integers(1, 6), st.booleans(), st.booleans())
def test_pairing_equals_numbering_the_longer_windows(docs, La, extra, use_native, wide):
    L = La + min(extra, La)  # La < L <= 2 La: the two parts overlap, or touch at L = 2 La
    tokens = [t for d in docs for t in d]
    offsets = np.concatenate(([0], np.cumsum([len(d) for d in docs]))).astype(np.int64)
    gid, groups = brute_gid(tokens, offsets.tolist(), La)
    got, n = paired_gids(gid.astype(np.int64 if wide else np.int32), offsets, La, L, groups) if use_native else \
        paired_ids(gid, L - La, groups, offsets, L if L - La >= La else 0, use_native=False)
    want, m = brute_gid(tokens, offsets.tolist(), L)
    assert n == m
    assert got.tolist() == want.tolist()


@settings(max_examples=100, deadline=None)
@given(corpora, st.integers(1, 4), st.lists(st.integers(1, 30), min_size=1, max_size=3))
def test_chained_pairing_reaches_any_longer_length(docs, L0, lengths):
    """Lengths past twice the run's go through halfway lengths (pairing_steps)."""
    lengths = [L0 + x for x in lengths]
    tokens = [t for d in docs for t in d]
    offsets = np.concatenate(([0], np.cumsum([len(d) for d in docs]))).astype(np.int64)
    gid, groups = brute_gid(tokens, offsets.tolist(), L0)
    answered = {}
    for La, L, ans in pairing_steps(L0, lengths):
        assert La < L <= 2 * La
        gid, groups = paired_gids(gid, offsets, La, L, groups)
        if ans:
            answered[L] = (gid.tolist(), groups)
    assert sorted(answered) == sorted(set(lengths))
    for L, (got, n) in answered.items():
        want, m = brute_gid(tokens, offsets.tolist(), L)
        assert (got, n) == (want.tolist(), m), L


def test_pairing_steps():
    assert pairing_steps(100, [100, 200, 300]) == [(100, 200, True), (200, 300, True)]
    assert pairing_steps(100, [450]) == [(100, 113, False), (113, 225, False), (225, 450, True)]
    assert pairing_steps(100, [150, 150, 99]) == [(100, 150, True)]


def test_native_pairing_equals_numpy_on_large_buckets():
    """Buckets of thousands of pairs (the sort past insertion sort), ids in int64 too."""
    rng = np.random.default_rng(7)
    for groups, n in ((1, 5000), (3, 100_000), (1000, 200_000)):
        gid = rng.integers(-1, groups, n)
        for d in (1, 5):
            offsets = np.array([0, n // 3, n // 3 + 7, n], dtype=np.int64)
            for w in (0, d + 3):
                want = paired_ids(gid, d, groups, offsets, w, use_native=False)
                for dtype in (np.int32, np.int64):
                    got = paired_ids(gid.astype(dtype), d, groups, offsets, w)
                    assert got[1] == want[1] and np.array_equal(got[0], want[0]), (groups, n, d, w, dtype)


def test_pairing_refuses_ids_past_the_groups():
    import pytest

    from sadedup import native

    with pytest.raises(ValueError, match="past groups"):
        native.pair_gid(np.array([0, 5, 0, 5], np.int32), 1, 3)
    with pytest.raises(ValueError, match="offsets"):
        native.pair_gid(np.array([0, 1, 0, 1], np.int32), 1, 3, np.array([0, 3], np.int64), 2)


def test_pairing_in_mapped_files_equals_in_memory(tmp_path):
    rng = np.random.default_rng(3)
    gid = rng.integers(-1, 50, 20_000).astype(np.int32)
    offsets = np.array([0, 9_000, 20_000], dtype=np.int64)
    for d, w in ((3, 0), (4, 8)):
        want = paired_ids(gid, d, 50, offsets, w)
        got = paired_ids(gid, d, 50, offsets, w, scratch=tmp_path / f"p{d}")
        assert got[1] == want[1] and np.array_equal(got[0], want[0])
        assert (tmp_path / f"p{d}" / "gid.npy").exists()
