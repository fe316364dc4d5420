"""native.cluster_cut (what a MinHash sweep clusters with) makes the clusters
sadedup.lsh.cluster makes, in its order, with the same similarities, asking for as many of
them: lsh.cluster is the reference, its similarity function the brute-force one of the same
kind (signature agreement, or exact Jaccard of shingle sets). Pure functions, no work folder."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sadedup import lsh as mh
from sadedup import native


@st.composite
def graphs(draw):
    """A graph with a similarity of every pair, of one kind: signatures of 8 values from a
    small alphabet (similarities in eighths, so ties with the floors and thresholds happen),
    or small shingle sets; edges some pairs (or only those at or above a threshold)."""
    n = draw(st.integers(2, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        sig = rng.integers(0, draw(st.integers(1, 4)), (n, 8)).astype(np.uint32)
        source = {"signatures": sig}
        def sim(a, b):
            return mh.estimate_pairs(sig, a, b)
    else:
        sets = [np.flatnonzero(rng.random(12) < rng.random()).astype(np.uint64) for _ in range(n)]
        counts = np.array([len(s) for s in sets], np.int64)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        hashes = np.concatenate(sets + [np.zeros(0, np.uint64)])
        source = {"sets": (hashes, starts, counts)}
        def sim(a, b):
            return native.jaccard_pairs(hashes, starts, counts, a, b)
    i, j = np.triu_indices(n, 1)
    i, j = i.astype(np.int64), j.astype(np.int64)
    edges = rng.random(len(i)) < draw(st.sampled_from([0.05, 0.15, 0.4, 0.9]))
    if draw(st.booleans()):                      # verified pairs only (at or above a threshold)
        edges &= sim(i, j) >= draw(st.sampled_from([0.5, 0.625, 0.75]))
    ei, ej = i[edges], j[edges]
    rank = rng.integers(0, draw(st.sampled_from([3, n * 4])), n)     # ties go by node order
    if draw(st.booleans()):
        floor = draw(st.sampled_from([0.0, 0.375, 0.5, 0.625, 0.8]))
    else:
        floor = rng.integers(0, 9, n) / 8.0
    return n, ei, ej, rank, floor, sim, source


def reference(n, ei, ej, rank, floor, sim):
    asked: list = []

    def logged(a, b):
        asked.extend(zip(np.asarray(a).tolist(), np.asarray(b).tolist()))
        return sim(a, b)

    return mh.cluster(n, ei, ej, sim(ei, ej), rank, logged, floor), asked


@settings(max_examples=400, deadline=None)
@given(graphs())
def test_cluster_cut_equals_lsh_cluster(g):
    n, ei, ej, rank, floor, sim, source = g
    want, asked = reference(n, ei, ej, rank, floor, sim)
    kept, member, cluster, similarity, count = native.cluster_cut(n, ei, ej, sim(ei, ej), rank, floor,
                                                                  rows=np.arange(n), **source)
    assert kept.tolist() == want.kept.tolist()
    assert member.tolist() == want.member.tolist()
    assert cluster.tolist() == want.cluster.tolist()
    assert similarity.tolist() == want.similarity.tolist()
    assert count == len(asked) == len(set(asked))


@settings(max_examples=60, deadline=None)
@given(graphs())
def test_cluster_cut_without_a_similarity_says_so_when_one_is_needed(g):
    """A caller makes the signatures or sets only for a cut that asks (sweeps.threshold_answers)."""
    n, ei, ej, rank, floor, sim, source = g
    want, asked = reference(n, ei, ej, rank, floor, sim)
    if asked:
        with pytest.raises(native.NeedSimilarity):
            native.cluster_cut(n, ei, ej, sim(ei, ej), rank, floor)
    else:
        assert native.cluster_cut(n, ei, ej, sim(ei, ej), rank, floor)[1].tolist() == want.member.tolist()


def test_rows_only_for_the_nodes_that_may_be_asked():
    """Node 3 is in a pair of its own (never asked): it needs no row; a node asked without one
    is an error, not a read past the arrays."""
    sig = np.array([[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 0, 0]], np.uint32)
    ei, ej = np.array([0, 1, 3]), np.array([1, 2, 4])
    esim = np.array([0.75, 0.75, 0.9])
    rows = np.array([0, 1, 2, -1, -1])
    kept, member, cluster, similarity, asked = native.cluster_cut(5, ei, ej, esim, np.arange(5), 0.5, rows=rows,
                                                                  signatures=sig)
    assert kept.tolist() == [0, 3] and member.tolist() == [0, 1, 2, 3, 4] and cluster.tolist() == [0, 0, 0, 1, 1]
    assert similarity.tolist() == [1.0, 0.75, 0.5, 1.0, 0.9] and asked == 1
    with pytest.raises(ValueError, match="without a row"):
        native.cluster_cut(5, ei, ej, esim, np.arange(5), 0.5, rows=np.array([0, 1, -1, -1, -1]), signatures=sig)
    with pytest.raises(ValueError, match="outside"):
        native.cluster_cut(5, ei, ej, esim, np.arange(5), 0.5, rows=np.array([0, 1, 5, -1, -1]), signatures=sig)
    for by_rank in ([0, 0, 1, 2, 3], [0, 1, 2, 3, 5]):
        with pytest.raises(ValueError, match="not an order of the nodes"):
            native.cluster_cut(5, ei, ej, esim, np.arange(5), 0.5, rows=rows, signatures=sig, by_rank=np.array(by_rank))


def test_no_pairs_no_clusters():
    z = np.zeros(0, np.int64)
    assert all(len(x) == 0 for x in native.cluster_cut(5, z, z, np.zeros(0), np.arange(5), 0.7)[:4])
