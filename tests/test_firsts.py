"""keep="none"'s first two occurrences per group, from the scatter pass's lists (firsts.npy)
instead of a lookup per window: the kernel and the merge across shards against brute force."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sadedup import native


@st.composite
def stream(draw):
    """A shard's sorted stream of windows: runs of equal windows (wl >= L inside a run), each
    run with its group id (-1: occurs once in the corpus), positions distinct."""
    L = draw(st.integers(1, 5))
    n_runs = draw(st.integers(0, 12))
    sizes = [draw(st.integers(1, 4)) for _ in range(n_runs)]
    nw = sum(sizes)
    pos = draw(st.permutations(list(range(nw + draw(st.integers(0, 5))))))[:nw]
    wl, run_gid, g = [], [], 0
    for i, k in enumerate(sizes):
        wl += [0 if i == 0 else draw(st.integers(0, L - 1))] + [L] * (k - 1)
        if draw(st.booleans()):
            run_gid.append(g)
            g += draw(st.integers(1, 3))
        else:
            run_gid.append(-1)
    n = max(pos, default=-1) + 1
    return (L, np.array(pos, np.int32), np.array(wl, np.uint16), np.array(run_gid, np.int64), n, sizes)


@settings(max_examples=200, deadline=None)
@given(s=stream())
def test_scatter_first_two_matches_brute_force(s):
    L, wpos, wl, run_gid, n, sizes = s
    gid_a = np.full(n, -1, np.int32)
    gid_b = np.full(n, -1, np.int32)
    written_a = native.scatter(wpos, wl, L, run_gid, gid_a)
    written_b, firsts = native.scatter_first_two(wpos, wl, L, run_gid, gid_b)
    assert written_a == written_b and gid_a.tolist() == gid_b.tolist()
    want, at = [], 0
    for k, g in zip(sizes, run_gid.tolist()):
        p = sorted(wpos[at:at + k].tolist())
        at += k
        if g >= 0:
            want.append((g, p[0], p[1] if len(p) > 1 else -1))
    assert [tuple(c) for c in firsts.T.tolist()] == want
    # int32 ids in, int32 lists out (repeats.scatter_shard writes them into firsts.npy's map)
    gid_c = np.full(n, -1, np.int32)
    out = np.full((3, native.listed_runs(run_gid)), 7, np.int32)
    written_c, narrow = native.scatter_first_two(wpos, wl, L, run_gid.astype(np.int32), gid_c, out=out)
    assert narrow is out and written_c == written_a and gid_c.tolist() == gid_a.tolist()
    gid_d = np.full(n, -1, np.int32)  # run_gid.npy is int32 when the groups fit (repeats.JoinShard)
    assert native.scatter(wpos, wl, L, run_gid.astype(np.int32), gid_d) == written_a
    assert gid_d.tolist() == gid_a.tolist()
    assert [tuple(c) for c in narrow.T.tolist()] == want


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_first_two_from_lists_equals_the_pass_over_every_window(data):
    """Shards of candidate regions, gid over them; the lists merged as remove's FirstTwo task
    merges them (native.merge_first_two) give native.first_two's first and second position
    of every group."""
    groups = data.draw(st.integers(1, 6))
    first_a, second_a = np.full(groups, -1, np.int64), np.full(groups, -1, np.int64)
    first_b, second_b = first_a.copy(), second_a.copy()
    base = 0
    for _ in range(data.draw(st.integers(1, 4))):
        n_shard = data.draw(st.integers(1, 40))
        # regions: disjoint increasing ranges of the shard (the prefilter), or the whole shard
        if data.draw(st.booleans()):
            cuts = sorted(set(data.draw(st.lists(st.integers(0, n_shard), min_size=2, max_size=8))))
            starts = np.array(cuts[0::2][:len(cuts) // 2], np.int64)
            ends = np.array(cuts[1::2], np.int64)
            lens = ends - starts
            offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
            runs = (starts, offsets)
            m = int(offsets[-1])
        else:
            runs, m = None, n_shard
        gid = np.array(data.draw(st.lists(st.integers(-1, groups - 1), min_size=m, max_size=m)), np.int32)
        native.first_two(gid, n_shard, base, first_a, second_a, runs=runs)
        # the scatter pass's list: per group, its two smallest sorted-text positions
        g_ids = sorted(set(gid[gid >= 0].tolist()))
        lists = np.full((3, len(g_ids)), -1, np.int64)
        for i, g in enumerate(g_ids):
            q = np.nonzero(gid == g)[0]
            lists[:, i] = (g, q[0], q[1] if len(q) > 1 else -1)
        # as scatter_first_two writes them: int32 when the ids and positions fit, read as they are
        lists = lists.astype(data.draw(st.sampled_from([np.int32, np.int64])))
        native.merge_first_two(lists, runs, n_shard, base, first_b, second_b)
        base += n_shard
    assert first_a.tolist() == first_b.tolist() and second_a.tolist() == second_b.tolist()
