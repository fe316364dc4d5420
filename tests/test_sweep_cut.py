"""sweeps.cut (every component's cut at once, what a MinHash sweep clusters with) makes the
clusters sadedup.lsh.cluster makes, asking for the same similarities: pure functions, no
work folder."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sadedup import lsh as mh
from sadedup.sweeps import _groups, _ranges, cut


def asked(M: np.ndarray, log: set):
    def fn(a, b):
        log.update(zip(np.asarray(a).tolist(), np.asarray(b).tolist()))
        return M[a, b]
    return fn


def as_sets(kept, member, cluster) -> set:
    return {(int(k), frozenset(member[cluster == c].tolist()) - {int(k)}) for c, k in enumerate(kept)}


@st.composite
def graphs(draw):
    n = draw(st.integers(2, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    # similarities on a grid of eighths, so ties with the floors and thresholds happen
    M = rng.integers(0, 9, (n, n)) / 8.0
    M = np.triu(M, 1)
    M = M + M.T
    np.fill_diagonal(M, 1.0)
    i, j = np.triu_indices(n, 1)
    edges = rng.random(len(i)) < draw(st.sampled_from([0.05, 0.15, 0.4, 0.9]))
    if draw(st.booleans()):                      # verified pairs only (at or above a threshold)
        edges &= M[i, j] >= draw(st.sampled_from([0.5, 0.625, 0.75]))
    ei, ej = i[edges].astype(np.int64), j[edges].astype(np.int64)
    rank = rng.integers(0, draw(st.sampled_from([3, n * 4])), n)     # ties go by node order
    if draw(st.booleans()):
        floor = draw(st.sampled_from([0.0, 0.375, 0.5, 0.625, 0.8]))
    else:
        floor = rng.integers(0, 9, n) / 8.0
    return n, ei, ej, M, rank, floor


@settings(max_examples=400, deadline=None)
@given(graphs())
def test_cut_equals_lsh_cluster(g):
    n, ei, ej, M, rank, floor = g
    want_log: set = set()
    got_log: set = set()
    want = mh.cluster(n, ei, ej, M[ei, ej], rank, asked(M, want_log), floor)
    kept, member, cluster = cut(n, ei, ej, M[ei, ej], rank, asked(M, got_log), floor)
    assert as_sets(kept, member, cluster) == as_sets(want.kept, want.member, want.cluster)
    assert got_log == want_log
    assert len(np.unique(member)) == len(member) and not np.isin(member, kept).any()


@settings(max_examples=100, deadline=None)
@given(graphs(), st.integers(2, 4))
def test_graphs_cut_as_one_equal_each_cut_alone(g, copies):
    """A sweep's thresholds cut together (their nodes numbered apart) give each one's clusters."""
    n, ei, ej, M, rank, floor = g
    rng = np.random.default_rng(len(ei))
    parts = [rng.random(len(ei)) < 0.7 for _ in range(copies)]
    fl = np.broadcast_to(floor, (n,)).astype(np.float64)
    kept, member, cluster = cut(copies * n, np.concatenate([ei[p] + q * n for q, p in enumerate(parts)]),
                                np.concatenate([ej[p] + q * n for q, p in enumerate(parts)]),
                                np.concatenate([M[ei[p], ej[p]] for p in parts]), np.tile(rank, copies),
                                lambda a, b: M[a % n, b % n], np.tile(fl, copies))
    for q, p in enumerate(parts):
        alone = mh.cluster(n, ei[p], ej[p], M[ei[p], ej[p]], rank, lambda a, b: M[a, b], floor)
        mine = kept // n == q
        at = np.flatnonzero(mine)
        sel = np.isin(cluster, at)
        remap = np.full(len(kept), -1)
        remap[at] = np.arange(len(at))
        assert as_sets(kept[mine] % n, member[sel] % n, remap[cluster[sel]]) == \
            as_sets(alone.kept, alone.member, alone.cluster)


def test_no_pairs_no_clusters():
    z = np.zeros(0, np.int64)
    assert all(len(x) == 0 for x in cut(5, z, z, np.zeros(0), np.arange(5), lambda a, b: None, 0.7))


def test_ranges_and_groups():
    assert _ranges(np.array([3, 0, 7]), np.array([5, 0, 9])).tolist() == [3, 4, 7, 8]
    assert _ranges(np.array([2]), np.array([2])).tolist() == []
    assert _groups([5, 3, 4, 9, 1], 8) == [[0, 1], [2], [3], [4]]
    assert _groups([], 8) == []
