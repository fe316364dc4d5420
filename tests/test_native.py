"""Each native kernel against a plain-Python reference, on random and adversarial inputs."""
from __future__ import annotations

import numpy as np
import pydivsufsort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sadedup import native
from sadedup.stages.repeats import valid_windows


def naive_lcp(T, sa):
    out = [0] * len(sa)
    for i in range(1, len(sa)):
        a, b = sa[i - 1], sa[i]
        h = 0
        while a + h < len(T) and b + h < len(T) and T[a + h] == T[b + h]:
            h += 1
        out[i] = h
    return out


tokens = st.sampled_from([np.uint8, np.uint16, np.uint32]).flatmap(
    lambda dt: st.lists(st.integers(0, 3), min_size=1, max_size=300).map(lambda xs: np.array(xs, dtype=dt)))


@settings(max_examples=300, deadline=None)
@given(T=st.one_of(st.binary(max_size=400), st.lists(st.sampled_from(b"ab"), max_size=400).map(bytes)))
def test_suffix_array_is_sorted_suffixes(T):
    """libsais' suffix array is the sorted suffixes (Python's own sort of them), on random
    bytes and on two-letter text full of tandem repeats."""
    want = sorted(range(len(T)), key=lambda i: T[i:])
    assert native.suffix_array(np.frombuffer(T, dtype=np.uint8)).tolist() == want


def test_suffix_array_on_runs_and_periods():
    """The same array as libdivsufsort's (pydivsufsort), which sadedup used before, on long
    runs and periods."""
    for T in (b"a" * 5000, b"ab" * 3000 + b"a", bytes(range(256)) * 40, b"abcabcabd" * 700):
        arr = np.frombuffer(T, dtype=np.uint8)
        assert np.array_equal(native.suffix_array(arr), pydivsufsort.divsufsort(arr.copy()))
    with pytest.raises(TypeError, match="uint8"):
        native.suffix_array(np.zeros(5, np.uint16))


@settings(max_examples=200, deadline=None)
@given(T=tokens)
def test_lcp_matches_naive(T):
    sa = pydivsufsort.divsufsort(T.copy()).astype(np.int32)
    assert native.lcp_array(T, sa).tolist() == naive_lcp(T.tolist(), sa.tolist())
    assert native.lcp_array(T, sa.astype(np.int64)).tolist() == naive_lcp(T.tolist(), sa.tolist())


@settings(max_examples=200, deadline=None)
@given(T=tokens, cap=st.integers(0, 20))
def test_lcp_capped_matches_naive(T, cap):
    sa = pydivsufsort.divsufsort(T.copy()).astype(np.int32)
    want = [min(h, cap) for h in naive_lcp(T.tolist(), sa.tolist())]
    assert native.lcp_capped(T, sa, cap).tolist() == want
    assert native.lcp_capped(T, sa.astype(np.int64), cap).tolist() == want
    assert native.lcp_capped(T, sa, cap).dtype == np.uint8


@settings(max_examples=150, deadline=None)
@given(block=st.lists(st.integers(0, 3), min_size=1, max_size=300), at=st.integers(0, 299), cap=st.integers(0, 255),
       dt=st.sampled_from([np.uint8, np.uint16, np.uint32]))
def test_lcp_capped_on_long_common_prefixes(block, at, cap, dt):
    """Suffixes that agree for up to 300 tokens and then differ at any offset: the capped
    LCP compares 16 bytes a step where it can (SSE2), then 8, then one, so the first
    difference must be found in every lane of every step and at every cap (the test above
    caps at 20, where the 16-byte steps are barely reached)."""
    changed = list(block)
    changed[at % len(block)] = 4  # a token the block does not hold: the copies differ there
    T = np.array(block + changed + block, dtype=dt)
    sa = pydivsufsort.divsufsort(T.copy()).astype(np.int32)
    want = [min(h, cap) for h in naive_lcp(T.tolist(), sa.tolist())]
    assert native.lcp_capped(T, sa, cap).tolist() == want
    assert native.lcp_capped(T, sa, cap + 256).tolist() == [min(h, cap + 256) for h in naive_lcp(T.tolist(), sa.tolist())]


def test_lcp_capped_widths_and_windows_over_them():
    """Capped at up to 255 the LCP is uint8, above that uint16; the windows read every width
    and find the same windows as from the exact LCP."""
    T = np.frombuffer(b"abcabcabd" * 300 + b"x" * 700, dtype=np.uint8).copy()
    sa = pydivsufsort.divsufsort(T.copy()).astype(np.int32)
    exact = native.lcp_array(T, sa)
    valid = valid_windows(np.array([0, 1000, len(T)]), len(T), 1)
    for cap, dtype in ((100, np.uint8), (255, np.uint8), (256, np.uint16), (3000, np.uint16)):
        capped = native.lcp_capped(T, sa, cap)
        assert capped.dtype == dtype and capped.tolist() == np.minimum(exact, cap).tolist()
        valid = valid_windows(np.array([0, 1000, len(T)]), len(T), cap)
        want = native.local_windows(sa, exact, valid, cap)
        got = native.local_windows(sa, capped, valid, cap)
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    with pytest.raises(ValueError, match="lcp must be"):
        native.local_windows(sa, native.lcp_capped(T, sa, 300), valid_windows(np.array([0, len(T)]), len(T), 100), 100)
    with pytest.raises(ValueError, match="cap"):
        native.lcp_capped(T, sa, 70000)


def test_lcp_on_runs_of_one_token():
    T = np.zeros(5000, dtype=np.uint8)
    sa = pydivsufsort.divsufsort(T.copy()).astype(np.int32)
    assert native.lcp_array(T, sa).tolist() == list(range(5000))  # sa = 4999, 4998, ..., 0
    assert native.lcp_capped(T, sa, 100).tolist() == [min(h, 100) for h in range(5000)]


def windows_reference(shards, L):
    """Global groups of equal in-document windows, by brute force: {(shard, pos): group key}."""
    occ = {}
    for k, (T, offsets) in enumerate(shards):
        for a, b in zip(offsets[:-1], offsets[1:]):
            for p in range(a, b - L + 1):
                occ.setdefault(tuple(T[p:p + L].tolist()), []).append((k, p))
    return {w: o for w, o in occ.items() if len(o) >= 2}


@settings(max_examples=150, deadline=None)
@given(data=st.data(), L=st.integers(1, 20), k=st.integers(1, 6), dt=st.sampled_from([np.uint8, np.uint16, np.uint32]))
def test_windows_merge_scatter_match_brute_force(data, L, k, dt):
    # L beyond 8 tokens: the merge's cached 8-byte keys tie and it reads on from the text
    shards = []
    for _ in range(k):
        docs = data.draw(st.lists(st.lists(st.integers(0, 2), max_size=40), max_size=5))
        T = np.array([t for d in docs for t in d], dtype=dt)
        if dt is np.uint32:
            T = T + 70_000
        offsets = np.concatenate(([0], np.cumsum([len(d) for d in docs]))).astype(np.int64)
        shards.append((T, offsets))
    streams, outs = [], []
    for T, offsets in shards:
        n = len(T)
        sa = pydivsufsort.divsufsort(T.copy()).astype(np.int32) if n else np.zeros(0, np.int32)
        lcp = native.lcp_array(T, sa)
        wpos, wl = native.local_windows(sa, lcp, valid_windows(offsets, n, L), L)
        run_gid = np.full(native.count_runs(wl, L), -7, dtype=np.int64)
        streams.append((T, wpos, wl, run_gid))
    G = native.merge(streams, L)
    # into int32 ids (what the repeats stage's merge tasks write when they fit): the same ids
    narrow = [(T, wpos, wl, np.full(len(g), -7, dtype=np.int32)) for T, wpos, wl, g in streams]
    assert native.merge(narrow, L) == G
    assert all(np.array_equal(a[3], b[3]) for a, b in zip(narrow, streams))
    got: dict[int, list] = {}
    for k_, ((T, offsets), (_, wpos, wl, run_gid)) in enumerate(zip(shards, streams)):
        assert (run_gid >= -1).all()
        gid = np.full(len(T), -1, dtype=np.int32)
        native.scatter(wpos, wl, L, run_gid, gid)
        for p in np.nonzero(gid >= 0)[0]:
            got.setdefault(int(gid[p]), []).append((k_, int(p)))
    want = windows_reference(shards, L)
    assert G == len(want)
    assert sorted(sorted(v) for v in got.values()) == sorted(sorted(v) for v in want.values())
    # ids are dense and in lexicographic order of the windows
    keys = {tuple(shards[v[0][0]][0][v[0][1]:v[0][1] + L].tolist()): g for g, v in got.items()}
    assert [keys[w] for w in sorted(keys)] == list(range(G))


def sorted_stream(T, offsets, L):
    """(tokens, wpos, wl) of one shard, as the repeats stage makes them."""
    sa = pydivsufsort.divsufsort(T.copy()).astype(np.int32) if len(T) else np.zeros(0, np.int32)
    wpos, wl = native.local_windows(sa, native.lcp_array(T, sa), valid_windows(offsets, len(T), L), L)
    return T, wpos, wl


def check_merge_lookup(streams, q0, refs, L):
    """merge_lookup against the windows compared one by one: `streams` ((tokens, wpos, wl) of
    each shard merged; streams[q0:] this run's, whose windows are looked up) and `refs` (the
    references' sorted windows). A window's group counts its occurrences in every stream and
    one more when a query stream holds it and any reference does; the groups of those counted
    twice or more are numbered densely in the windows' order, as merge numbers them. Each
    reference's runs of windows equal to a query window come in order with their group."""
    occ: dict[tuple, int] = {}
    for T, wpos, _ in streams:
        for p in wpos.tolist():
            w = tuple(T[p:p + L].tolist())
            occ[w] = occ.get(w, 0) + 1
    queried = {tuple(T[p:p + L].tolist()) for T, wpos, _ in streams[q0:] for p in wpos.tolist()}
    held = [{tuple(T[p:p + L].tolist()) for p in wpos.tolist()} for T, wpos, _ in refs]
    for w in queried:
        occ[w] += any(w in h for h in held)
    repeated = sorted(w for w, c in occ.items() if c >= 2)
    ids = {w: g for g, w in enumerate(repeated)}
    merged = [(T, wpos, wl, np.full(native.count_runs(wl, L), -7, np.int64)) for T, wpos, wl in streams]
    G, found = native.merge_lookup(merged, L, q0, refs)
    assert G == len(ids)
    for T, wpos, wl, run_gid in merged:
        firsts = [p for j, p in enumerate(wpos.tolist()) if j == 0 or wl[j] < L]
        assert run_gid.tolist() == [ids.get(tuple(T[p:p + L].tolist()), -1) for p in firsts]
    looked = 0
    for (T, wpos, _), (heads, ends, gid) in zip(refs, found):
        runs: dict[tuple, list[int]] = {}
        for i, p in enumerate(wpos.tolist()):
            runs.setdefault(tuple(T[p:p + L].tolist()), []).append(i)
        assert all(r == list(range(r[0], r[-1] + 1)) for r in runs.values())  # equal windows are one run
        want = sorted((r[0], r[-1] + 1, ids[w]) for w, r in runs.items() if w in queried)
        assert list(zip(heads.tolist(), ends.tolist(), gid.tolist())) == want
        looked += len(heads)
    return looked


@settings(max_examples=80, deadline=None)
@given(data=st.data(), L=st.integers(1, 12), dt=st.sampled_from([np.uint8, np.uint16, np.uint32]),
       q0=st.integers(0, 2), n_query=st.integers(0, 3), n_refs=st.integers(0, 3))
def test_merge_lookup_matches_brute_force(data, L, dt, q0, n_query, n_refs):
    def shard(n_docs, size):
        docs = data.draw(st.lists(st.lists(st.integers(0, 2), max_size=size), max_size=n_docs))
        T = np.array([t for d in docs for t in d], dtype=dt)
        if dt is np.uint32:
            T = T + 70_000
        return sorted_stream(T, np.concatenate(([0], np.cumsum([len(d) for d in docs]))).astype(np.int64), L)

    # streams before q0 (merged, not looked up), this run's (looked up), references sharing
    # windows with both and with each other, empty ones among them
    streams = [shard(3, 30) for _ in range(q0 + n_query)]
    check_merge_lookup(streams, q0, [shard(6, 80) for _ in range(n_refs)], L)


def test_merge_lookup_gallops_over_long_stretches():
    """A reference whose windows are one run of thousands (past the scan of a run's end) and
    many distinct windows no query falls between (past the walk), queries enough for every
    cursor of the kernel: found as one by one."""
    rng = np.random.default_rng(5)
    L = 8
    T = np.concatenate([np.zeros(6000, np.uint8), rng.integers(1, 4, 20000).astype(np.uint8)])
    ref = sorted_stream(T, np.array([0, 6000, len(T)], np.int64), L)
    picks = rng.choice(len(T) - L, 400, replace=False)  # queries for every cursor of the kernel
    Q = np.concatenate([T[p:p + L] for p in picks] + [np.zeros(L, np.uint8), np.full(L, 9, np.uint8)])
    query = sorted_stream(Q, np.arange(0, len(Q) + 1, L).astype(np.int64), L)
    assert check_merge_lookup([query], 0, [ref], L) >= 250


def test_merge_on_adversarial_repeats_is_not_quadratic():
    """The corpus repeated 8 times over 8 shards: every window ties on long prefixes."""
    base = np.frombuffer(b"abracadabra " * 2000, dtype=np.uint8)
    L = 100
    streams = []
    for _ in range(8):
        T = base.copy()
        sa = pydivsufsort.divsufsort(T.copy()).astype(np.int32)
        lcp = native.lcp_array(T, sa)
        wpos, wl = native.local_windows(sa, lcp, valid_windows(np.array([0, len(T)]), len(T), L), L)
        streams.append((T, wpos, wl, np.empty(native.count_runs(wl, L), np.int64)))
    assert native.merge(streams, L) == native.count_runs(streams[0][2], L)


def test_spm_pieces_rejects_garbage():
    with pytest.raises(ValueError):
        native.spm_pieces(b"\x12\xff\xff\xff")


M64 = (1 << 64) - 1


def fmix64(x):
    x ^= x >> 33
    x = (x * 0xff51afd7ed558ccd) & M64
    x ^= x >> 33
    x = (x * 0xc4ceb9fe1a85ec53) & M64
    return x ^ (x >> 33)


def anchors_reference(T, offsets, k, L):
    """Winnowing by definition: for every in-document window, its k-gram of least hash."""
    def h(j):
        v = 0
        for t in T[j:j + k]:
            v = (v * 0x100000001b3 + t + 1) & M64
        return fmix64(v)

    found = {}
    for a, b in zip(offsets[:-1], offsets[1:]):
        for p in range(a, b - L + 1):
            best = min(range(p, p + L - k + 1), key=lambda j: (h(j), j))
            found[best] = h(best)
    pos = sorted(found)
    return pos, [found[p] for p in pos]


doc_lists = st.lists(st.lists(st.integers(0, 3), max_size=40), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(docs=doc_lists, dt=st.sampled_from([np.uint8, np.uint16, np.uint32]), L=st.integers(1, 12), data=st.data())
def test_anchors_match_winnowing(docs, dt, L, data):
    k = data.draw(st.integers(1, L))
    T = np.array([t for d in docs for t in d], dtype=dt)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    pos, hashes = native.anchors(T, offsets, k, L)
    ref_pos, ref_hash = anchors_reference(T.tolist(), offsets.tolist(), k, L)
    assert pos.tolist() == ref_pos
    assert hashes.tolist() == ref_hash


@settings(max_examples=200, deadline=None)
@given(docs=doc_lists, L=st.integers(1, 12), data=st.data())
def test_regions_cover_the_anchor_windows(docs, L, data):
    k = data.draw(st.integers(1, L))
    T = np.array([t for d in docs for t in d], dtype=np.uint8)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    pos, _ = native.anchors(T, offsets, k, L)
    chosen = np.array(sorted(data.draw(st.sets(st.sampled_from(pos.tolist()))) if len(pos) else []), dtype=np.int64)
    starts, ends = native.regions(chosen, offsets, k, L)
    want = set()
    for a in chosen.tolist():
        d = int(np.searchsorted(offsets, a, "right")) - 1
        want |= set(range(max(a + k - L, offsets[d]), min(a + L, offsets[d + 1])))
    got = [p for s, e in zip(starts.tolist(), ends.tolist()) for p in range(s, e)]
    assert sorted(got) == sorted(want) and len(got) == len(set(got))
    for s, e in zip(starts.tolist(), ends.tolist()):  # no region crosses a document end
        assert np.searchsorted(offsets, s, "right") == np.searchsorted(offsets, e - 1, "right")
    out = np.empty(len(got), dtype=np.uint8)
    native.gather_regions(T, starts, ends, out)
    assert out.tolist() == T[got].tolist()


@settings(max_examples=100, deadline=None)
@given(a=st.lists(st.integers(0, M64), max_size=60, unique=True), b=st.lists(st.integers(0, M64), max_size=60))
def test_member_matches_set(a, b):
    q = np.array(b + a[: len(a) // 2], dtype=np.uint64)
    got = native.member(q, np.array(a, dtype=np.uint64))
    assert got.tolist() == [x in set(a) for x in q.tolist()]


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=50), data=st.data())
def test_count_chars_matches_decoding(text, data):
    raw = text.encode("utf-8", "surrogatepass")
    T = np.frombuffer(raw, dtype=np.uint8)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), min_size=2, max_size=2)))
    got = native.count_chars(T, np.array([cuts[0]]), np.array([cuts[1]]))
    assert got.tolist() == [sum(1 for c in raw[cuts[0]:cuts[1]] if c & 0xC0 != 0x80)]
    with pytest.raises(ValueError):
        native.count_chars(T, np.array([0]), np.array([len(raw) + 1]))
    # many ranges, as spans ask: starts shared (a document's), ends rising, falling or equal
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(sorted({0, cuts[0], cuts[1]})), st.integers(0, len(raw))),
                               max_size=12))
    pairs = [(a, max(a, b)) for a, b in pairs]
    got = native.count_chars(T, np.array([a for a, _ in pairs], np.int64), np.array([b for _, b in pairs], np.int64))
    assert got.tolist() == [sum(1 for c in raw[a:b] if c & 0xC0 != 0x80) for a, b in pairs]


@settings(max_examples=50, deadline=None)
@given(shards=st.lists(st.lists(st.integers(0, M64), max_size=80), min_size=1, max_size=4),
       memory=st.sampled_from([1, 200, 10**9]), threads=st.sampled_from([1, 2, 3]))
def test_repeated_hashes_by_parts(tmp_path_factory, shards, memory, threads):
    from collections import Counter

    from sadedup.stages.candidates import repeated_hashes
    from sadedup.workspace import save_npy

    d = tmp_path_factory.mktemp("h")
    files = []
    for i, xs in enumerate(shards):
        save_npy(d / f"{i}.npy", np.sort(np.array(xs, dtype=np.uint64)))
        files.append(d / f"{i}.npy")
    count = Counter(x for xs in shards for x in xs)
    assert repeated_hashes(files, memory, threads).tolist() == sorted(x for x, c in count.items() if c >= 2)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), L=st.integers(1, 12), k=st.integers(1, 5), parts=st.integers(2, 4),
       dt=st.sampled_from([np.uint8, np.uint16]))
def test_merge_in_parts_equals_one_merge(data, L, k, parts, dt):
    from sadedup.stages.repeats import merge_parts

    def streams():
        out = []
        for T, offsets in shards:
            sa = pydivsufsort.divsufsort(T.copy()).astype(np.int32) if len(T) else np.zeros(0, np.int32)
            wpos, wl = native.local_windows(sa, native.lcp_array(T, sa), valid_windows(offsets, len(T), L), L)
            out.append((T, wpos, wl, np.full(native.count_runs(wl, L), -7, dtype=np.int64)))
        return out

    shards = []
    for _ in range(k):
        docs = data.draw(st.lists(st.lists(st.integers(0, 5), max_size=40), max_size=5))
        T = np.array([t for d in docs for t in d], dtype=dt)
        shards.append((T, np.concatenate(([0], np.cumsum([len(d) for d in docs]))).astype(np.int64)))
    one, split = streams(), streams()
    assert merge_parts(split, L, parts) == native.merge(one, L)
    assert all((a[3] == b[3]).all() for a, b in zip(one, split))


def as_runs(pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Increasing positions as maximal runs of consecutive ones: (starts, offsets)."""
    if len(pos) == 0:
        return np.zeros(0, np.int64), np.zeros(1, np.int64)
    cut = np.nonzero(np.diff(pos) != 1)[0] + 1
    bounds = np.concatenate(([0], cut, [len(pos)])).astype(np.int64)
    return pos[bounds[:-1]].astype(np.int64), bounds


@settings(max_examples=150, deadline=None)
@given(data=st.data(), L=st.integers(1, 6), drop=st.sampled_from([0.0, 0.5, 0.8, 1.0]))
def test_select_over_runs_equals_select_over_every_position(data, L, drop):
    """The remove pass over candidate text (gid + the regions' runs) decides exactly what it
    decides over the whole shard's gid, whatever positions outside the windows the candidate
    text keeps. Runs may also be split where they touch: the positions are what counts."""
    lengths = data.draw(st.lists(st.integers(0, 30), min_size=1, max_size=8))
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    n = int(offsets[-1])
    valid = valid_windows(offsets, n, L).astype(bool)
    groups = data.draw(st.integers(1, 6))
    full = np.full(n, -1, dtype=np.int32)
    for p in np.nonzero(valid)[0]:
        full[p] = data.draw(st.integers(-1, groups - 1))
    extra = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    pos = np.nonzero((full >= 0) | extra)[0]
    part = full[pos]
    starts, bounds = as_runs(pos)
    if len(pos) and data.draw(st.booleans()):  # one run cut in two, and an empty run
        r = data.draw(st.integers(0, len(starts) - 1))
        length = int(bounds[r + 1] - bounds[r])
        at = data.draw(st.integers(0, length))
        starts = np.insert(starts, r + 1, starts[r] + at)
        bounds = np.insert(bounds, r + 1, bounds[r] + at)
    runs = (starts, bounds)
    for base in (0, 1000):
        src_a, src_b = np.full(groups, -1, np.int64), np.full(groups, -1, np.int64)
        a = native.select_first(full, offsets, L, drop, base, src_a)
        b = native.select_first(part, offsets, L, drop, base, src_b, runs=runs)
        assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
        assert [x.tolist() for x in a[2]] == [x.tolist() for x in b[2]]
        assert src_a.tolist() == src_b.tolist()
        f_a, s_a, f_b, s_b = (np.full(groups, -1, np.int64) for _ in range(4))
        native.first_two(full, n, base, f_a, s_a)
        native.first_two(part, n, base, f_b, s_b, runs=runs)
        assert f_a.tolist() == f_b.tolist() and s_a.tolist() == s_b.tolist()
        a = native.select_none(full, offsets, L, drop, base, f_a, s_a)
        b = native.select_none(part, offsets, L, drop, base, f_b, s_b, runs=runs)
        assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
        assert [x.tolist() for x in a[2]] == [x.tolist() for x in b[2]]


def test_select_rejects_bad_runs():
    offsets = np.array([0, 10], dtype=np.int64)
    gid = np.array([-1, 0, 0, -1], dtype=np.int32)
    src = np.full(1, -1, np.int64)
    native.select_first(gid, offsets, 2, 0.8, 0, src, runs=(np.array([0, 5]), np.array([0, 2, 4])))
    for starts, bounds in (([0, 1], [0, 2, 4]),      # the second run overlaps the first
                           ([5, 0], [0, 2, 4]),      # out of order
                           ([0, 9], [0, 2, 4]),      # past the shard's end
                           ([0, 5], [0, 2, 3]),      # covers too few entries
                           ([0, 5], [0, 3, 2, 4]),   # one offset too many
                           ([-1], [0, 4])):          # before the shard
        with pytest.raises(ValueError, match="runs"):
            native.select_first(gid, offsets, 2, 0.8, 0, src, runs=(np.array(starts), np.array(bounds)))
        with pytest.raises(ValueError, match="runs"):
            native.first_two(gid, 10, 0, src, src.copy(), runs=(np.array(starts), np.array(bounds)))


def test_local_windows_in_pieces_and_their_files(tmp_path):
    """The windows walked a piece of the suffix array at a time (the running minimum carried
    across pieces) and appended to their files are local_windows' arrays as save_npy writes
    them, byte for byte, whatever the piece size."""
    from sadedup.workspace import npy_appended, save_npy

    rng = np.random.default_rng(3)
    T = np.frombuffer(b"".join(rng.choice([b"abcab", b"abd", b"ca", b"x"], 900)), dtype=np.uint8).copy()
    sa = pydivsufsort.divsufsort(T.copy()).astype(np.int32)
    L = 6
    lcp = native.lcp_capped(T, sa, L)
    valid = valid_windows(np.array([0, 7, 400, 401, 1500, len(T)]), len(T), L)
    wpos, wl = native.local_windows(sa, lcp, valid, L)
    save_npy(tmp_path / "wpos.npy", wpos)
    save_npy(tmp_path / "wl.npy", wl)
    for piece in (1, 5, 64, len(T), 10 * len(T)):
        with npy_appended(tmp_path / "p_wpos.npy", np.int32) as a, npy_appended(tmp_path / "p_wl.npy", np.uint16) as b:
            for p, w in native.local_windows_pieces(sa, lcp, valid, L, piece=piece):
                a.append(p)
                b.append(w)
        for name in ("wpos.npy", "wl.npy"):
            assert (tmp_path / f"p_{name}").read_bytes() == (tmp_path / name).read_bytes(), (piece, name)
    assert np.load(tmp_path / "p_wl.npy")[0] == 0 and len(wpos) < len(T)


def test_save_npy_of_a_column_slice_is_np_save(tmp_path):
    """save_npy writes a 2-d array's first columns row by row: the same file np.save writes."""
    from sadedup.workspace import save_npy

    a = np.arange(3 * 1000, dtype=np.int64).reshape(3, 1000)
    for cut in (0, 1, 999, 1000):
        save_npy(tmp_path / "a.npy", a[:, :cut])
        np.save(tmp_path / "b.npy", a[:, :cut])
        assert (tmp_path / "a.npy").read_bytes() == (tmp_path / "b.npy").read_bytes(), cut
    save_npy(tmp_path / "a.npy", a[::-1, 10:20])
    np.save(tmp_path / "b.npy", a[::-1, 10:20])
    assert (tmp_path / "a.npy").read_bytes() == (tmp_path / "b.npy").read_bytes()


def _mapped_rss_kb(path) -> int:
    """Resident KiB of this process's maps of `path` (/proc/self/smaps)."""
    rss, inside = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5:  # a mapping's first line
                inside = len(head) >= 6 and head[-1] == str(path)
            elif inside and head[0] == "Rss:":
                rss += int(head[1])
    return rss


@pytest.mark.parametrize("whole", [False, True])
def test_writable_npy_whole_faults_the_map_in_at_once(tmp_path, whole):
    """writable_npy(whole=True): the map's pages are in for writing before the caller's first
    write (one madvise, not a fault per page), and what the caller writes is what is saved."""
    from sadedup.workspace import writable_npy

    path = tmp_path / "a.npy"
    n = 1 << 20  # 4 MiB of int32
    arr = writable_npy(path, np.int32, (n,), whole=whole)
    rss = _mapped_rss_kb(path)
    if whole:
        assert rss >= n * 4 // 1024, rss
    else:
        assert rss < 64, rss  # nothing touched yet
    arr[:] = -1
    arr[::7] = np.arange(0, n, 7, dtype=np.int32)
    arr.flush()
    del arr
    want = np.full(n, -1, np.int32)
    want[::7] = np.arange(0, n, 7, dtype=np.int32)
    assert np.array_equal(np.load(path), want)


def test_populate_write_refuses_read_only_buffers():
    with pytest.raises(TypeError):
        native.populate_write(np.frombuffer(b"x" * 4096, dtype=np.uint8))
    assert native.populate_write(np.zeros(0, np.uint8)) is False
