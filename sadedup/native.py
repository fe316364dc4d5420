"""The one door to the C kernels in native/: dtype and shape checks, then the GIL-free call.

Every function takes numpy arrays (memory-mapped or not) and never copies them.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from . import _native


def _is64(a: np.ndarray) -> bool:
    if a.dtype == np.int64:
        return True
    if a.dtype == np.int32:
        return False
    raise TypeError(f"index array must be int32 or int64, got {a.dtype}")


def _c(a: np.ndarray) -> np.ndarray:
    if not a.flags["C_CONTIGUOUS"]:
        raise ValueError("native kernels need C-contiguous arrays")
    return a


def _buf(a: np.ndarray):
    """A buffer the C side can read; numpy cannot export a 0-length memmap, so use bytes."""
    a = _c(a)
    return a if a.size else b""


def populate_write(arr: np.ndarray) -> bool:
    """Fault every page of a fresh writable file map (`arr`, C-contiguous) in for writing at
    once, before the caller fills all of it; False when the kernel cannot (it then faults
    page by page as it would have). Only for arrays the caller writes whole: the pages are
    all in the page cache from here on."""
    return bool(_native.populate_write(_c(arr))) if arr.size else False


def token_size(tokens: np.ndarray) -> int:
    if tokens.dtype not in (np.uint8, np.uint16, np.uint32):
        raise TypeError(f"tokens must be uint8, uint16 or uint32, got {tokens.dtype}")
    return tokens.dtype.itemsize


def lcp_array(tokens: np.ndarray, sa: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """LCP array of `tokens` given its suffix array; `out` may be a writable memmap.

    lcp[0] = 0 and lcp[i] = length of the longest common prefix of the suffixes at
    sa[i-1] and sa[i]. Needs one temporary array of len(sa) entries of sa's width.
    """
    n = len(tokens)
    if len(sa) != n:
        raise ValueError("suffix array and tokens differ in length")
    if out is None:
        out = np.empty(n, dtype=sa.dtype)
    if out.dtype != sa.dtype or len(out) != n:
        raise ValueError("lcp output must match the suffix array's dtype and length")
    if n == 0:
        return out
    tmp = np.empty(n, dtype=sa.dtype)
    _native.lcp(_c(tokens), token_size(tokens), _c(sa), _c(out), tmp, _is64(sa))
    return out


def suffix_array(tokens: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The suffix array (int32) of one-byte tokens, fewer than 2^31 of them, by libsais
    (native/libsais); `out` may be a writable memmap. Suffix arrays are unique: the same
    array libdivsufsort (pydivsufsort) gives, for 1.4x less CPU on crawl-like text."""
    n = len(tokens)
    if tokens.dtype != np.uint8 or n >= (1 << 31) - 1:
        raise TypeError("suffix_array takes fewer than 2^31 - 1 uint8 tokens")
    if out is None:
        out = np.empty(n, dtype=np.int32)
    if out.dtype != np.int32 or len(out) != n:
        raise ValueError("suffix array output must be int32 with the tokens' length")
    if n:
        _native.suffix_array(_c(tokens), _c(out))
    return out


def capped_lcp_dtype(cap: int) -> np.dtype:
    """uint8 up to 255, uint16 up to 65535 (the longest window)."""
    if not 0 <= cap <= 65535:
        raise ValueError("cap must be in 0..65535")
    return np.dtype(np.uint8 if cap <= 255 else np.uint16)


def lcp_capped(tokens: np.ndarray, sa: np.ndarray, cap: int, out: np.ndarray | None = None) -> np.ndarray:
    """The LCP array with every value capped at `cap`: lcp[i] = min(lcp_array(...)[i], cap),
    as `capped_lcp_dtype(cap)`.

    Compares each pair of suffix-array neighbours directly, at most `cap` tokens, in one
    pass with no scratch memory: what the window stages need, at a fraction of Phi's cost,
    and a quarter of the suffix array's width or less to write and read.
    """
    n = len(tokens)
    if len(sa) != n:
        raise ValueError("suffix array and tokens differ in length")
    dtype = capped_lcp_dtype(cap)
    if out is None:
        out = np.empty(n, dtype=dtype)
    if out.dtype != dtype or len(out) != n:
        raise ValueError(f"capped lcp output must be {dtype} with the suffix array's length")
    if n:
        _native.lcp_capped(_c(tokens), token_size(tokens), _c(sa), _c(out), _is64(sa), int(cap))
    return out


def _windows_args(sa: np.ndarray, lcp: np.ndarray, valid: np.ndarray, L: int) -> None:
    n = len(valid)
    if len(sa) != n or len(lcp) != n or valid.dtype != np.uint8:
        raise ValueError("sa, lcp and valid (uint8) must have the same length")
    if lcp.dtype != sa.dtype and lcp.dtype != capped_lcp_dtype(L):
        raise ValueError(f"lcp must be {sa.dtype} (exact) or {capped_lcp_dtype(L)} (capped at L={L})")


def local_windows(sa: np.ndarray, lcp: np.ndarray, valid: np.ndarray, L: int,
                  wpos_dtype=np.int32) -> tuple[np.ndarray, np.ndarray]:
    """The shard's in-document L-windows in suffix-array order (wpos), and each one's common
    prefix with the previous one, capped at L (wl, uint16; wl < L starts a distinct window).
    lcp is exact (sa's dtype) or capped at L (lcp_capped)."""
    _windows_args(sa, lcp, valid, L)
    n = len(valid)
    wpos = np.empty(n, dtype=wpos_dtype)
    wl = np.empty(n, dtype=np.uint16)
    if n == 0:
        return wpos, wl
    # the kernel reads the mask at random: as bits it stays in cache (native/windows.c)
    bits = np.packbits(valid, bitorder="little")
    m, _ = _native.local_windows(_c(sa), _is64(sa), _c(lcp), lcp.dtype.itemsize, bits, int(L), wpos, _is64(wpos), wl,
                                 0, n, 0, 0)
    return wpos[:m], wl[:m]


def local_windows_pieces(sa: np.ndarray, lcp: np.ndarray, valid: np.ndarray, L: int, wpos_dtype=np.int32,
                         piece: int = 1 << 20) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """local_windows' (wpos, wl), `piece` suffix-array entries at a time: consecutive pieces of
    the two arrays, views of two buffers reused from one piece to the next (take them before
    asking for the next). A shard's windows stream to their files through buffers the cache
    holds, instead of arrays as large as the shard whose fresh pages the kernel zeroes."""
    _windows_args(sa, lcp, valid, L)
    n = len(valid)
    if n == 0:
        return
    bits = np.packbits(valid, bitorder="little")
    wpos = np.empty(min(piece, n), dtype=wpos_dtype)
    wl = np.empty(min(piece, n), dtype=np.uint16)
    run_min = kept = 0
    for i in range(0, n, piece):
        m, run_min = _native.local_windows(_c(sa), _is64(sa), _c(lcp), lcp.dtype.itemsize, bits, int(L), wpos,
                                           _is64(wpos), wl, i, min(i + piece, n), run_min, kept)
        kept += m
        yield wpos[:m], wl[:m]


def anchors(tokens: np.ndarray, offsets: np.ndarray, k: int, L: int) -> tuple[np.ndarray, np.ndarray]:
    """Winnowing anchors of every in-document L-window: (positions int64, increasing; hashes uint64).

    offsets (int64) are the documents' bounds in `tokens`; see native/anchors.c for the rule.
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    es = token_size(tokens)
    n = int(offsets[-1]) if len(offsets) else 0
    w = max(L - k + 1, 1)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64)
    cap = 2 * n // (w + 1) + len(offsets) + 1024  # expected density 2/(w+1)
    while True:
        pos = np.empty(cap, dtype=np.int64)
        hashes = np.empty(cap, dtype=np.uint64)
        count = _native.anchors(_c(tokens), es, offsets, int(k), int(L), pos, hashes)
        if count <= cap:
            return pos[:count], hashes[:count]
        cap = count


def member(values: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """Boolean mask: which of `values` (uint64) are in `distinct` (uint64, no repeats)."""
    if values.dtype != np.uint64 or distinct.dtype != np.uint64:
        raise TypeError("member works on uint64 arrays")
    out = np.zeros(len(values), dtype=np.uint8)
    if len(values) and len(distinct):
        _native.member(_c(distinct), _c(values), out)
    return out.view(bool)


def count_chars(text: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Number of UTF-8 characters in text[start[i]:end[i]] (text: uint8)."""
    if text.dtype != np.uint8:
        raise TypeError("count_chars reads UTF-8 bytes (uint8)")
    start = np.ascontiguousarray(start, dtype=np.int64)
    end = np.ascontiguousarray(end, dtype=np.int64)
    out = np.zeros(len(start), dtype=np.int64)
    if len(start):
        _native.count_chars(_buf(text), start, end, out)
    return out


CHAR_ESCAPE = 255  # SD_CHAR_ESCAPE: the delta is in the exceptions


def char_values(delta: np.ndarray, doc_start: np.ndarray, xpos: np.ndarray, xval: np.ndarray,
                q: np.ndarray) -> np.ndarray:
    """Values at shard positions q (sorted) of a stream of per-token deltas (uint8, reset to 0
    at each of the documents' starts `doc_start`; CHAR_ESCAPE: the delta is xval where xpos
    is the position). See native/chars.c."""
    if delta.dtype != np.uint8:
        raise TypeError("char deltas are uint8")
    q = np.ascontiguousarray(q, dtype=np.int64)
    out = np.zeros(len(q), dtype=np.int64)
    if len(q):
        _native.char_values(_buf(delta), _buf(np.ascontiguousarray(doc_start, dtype=np.int64)),
                            _buf(np.ascontiguousarray(xpos, dtype=np.int64)),
                            _buf(np.ascontiguousarray(xval, dtype=np.int64)), q, out)
    return out


def regions(anchor_pos: np.ndarray, offsets: np.ndarray, k: int, L: int) -> tuple[np.ndarray, np.ndarray]:
    """Merged [start, end) regions of text around sorted anchors, cut at document ends."""
    a = np.ascontiguousarray(anchor_pos, dtype=np.int64)
    starts = np.empty(len(a), dtype=np.int64)
    ends = np.empty(len(a), dtype=np.int64)
    if len(a) == 0:
        return starts, ends
    r = _native.regions(a, np.ascontiguousarray(offsets, dtype=np.int64), int(k), int(L), starts, ends)
    return starts[:r], ends[:r]


def gather_regions(tokens: np.ndarray, starts: np.ndarray, ends: np.ndarray, out: np.ndarray) -> None:
    """out = the regions' tokens tokens[starts[r]:ends[r]], in order."""
    if out.dtype != tokens.dtype:
        raise TypeError("out must have the tokens' dtype")
    if len(starts) == 0:
        return
    _native.gather_regions(_c(tokens), token_size(tokens), _c(starts), _c(ends), _c(out))


def jsonl_kept(buf, start: int, end: int, row: int, rows: np.ndarray, kept: np.ndarray, at: int,
               out: bytearray) -> tuple[int, int, int, int]:
    """The kept documents' lines of the whole JSONL lines buf[start:end], as read (see
    native/jsonl.c), into out; rows, kept: int64, one entry per document. Returns (bytes
    written, the row after, the document after, lines written)."""
    if rows.dtype != np.int64 or kept.dtype != np.int64:
        raise TypeError("rows and kept must be int64")
    return _native.jsonl_kept(buf, int(start), int(end), int(row), _buf(rows), _buf(kept), int(at), out)


def jsonl_docs(buf, pos: int, end: int, row: int, text_field: bytes, id_field: bytes, limit: int, out: bytearray,
               ids: bytearray) -> tuple[int, int, int, list[tuple], tuple[int, int] | None]:
    """The documents of the whole JSONL lines buf[pos:end] that native/jsonl_docs.c takes,
    from the first on, their texts' UTF-8 into out (room for end - pos bytes; ids: scratch of
    that size). Returns (the position after, the row after, text bytes written, (row, ext_id,
    characters, bytes) per document, and None, or the (start, end) in buf of the line at which
    it stopped, which Python must read: its row is the one returned)."""
    return _native.jsonl_docs(buf, int(pos), int(end), int(row), text_field, id_field, int(limit), out, ids)


def count_runs(wl: np.ndarray, L: int) -> int:
    """Distinct windows in a stream."""
    return int(np.count_nonzero(wl < L)) + int(len(wl) > 0 and wl[0] >= L)


def _merge_streams(streams: Sequence[tuple]) -> tuple[int, list[tuple]]:
    """The token size and the native arguments of merge's (tokens, wpos, wl, run_gid)
    streams, their dtypes checked."""
    es = token_size(streams[0][0])
    args = []
    for tokens, wpos, wl, run_gid in streams:
        if token_size(tokens) != es:
            raise TypeError("all shards must use the same token dtype")
        if run_gid.dtype not in (np.int64, np.int32) or wl.dtype != np.uint16:
            raise TypeError("run_gid must be int64 or int32 and wl uint16")
        args.append((_buf(tokens), _buf(wpos), _is64(wpos), _buf(wl), _buf(run_gid) if run_gid.size else bytearray(),
                     _is64(run_gid)))
    return es, args


def merge(streams: Sequence[tuple], L: int) -> int:
    """k-way merge of (tokens, wpos, wl, run_gid) streams; fills run_gid, returns #groups.

    All token arrays must share one dtype. run_gid (int64, or int32 when the groups are known
    to number fewer than 2^31; one per distinct window of the shard) receives the global group
    id, or -1 for a window that occurs once in the corpus.
    """
    if not streams:
        return 0
    es, args = _merge_streams(streams)
    return _native.merge(args, es, int(L))


def merge_lookup(streams: Sequence[tuple], L: int, q0: int,
                 refs: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
                 gid_dtype=np.int64) -> tuple[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """merge (same streams, same run_gid), and every distinct window of streams[q0:] (the
    queries: this run's shards) looked up in each reference stream of `refs` ((tokens, wpos,
    wl) as local_windows makes them) as the merge reaches it: one merge of the queries serves
    the groups and every lookup (a lookup per reference stream merged them again). A
    query window a reference holds is one more occurrence of its group, counted once however
    many references hold it (a window once in the streams and in a reference is repeated).
    Returns (groups, per reference (heads, ends, gid)): the runs of its windows equal to a
    query window, wpos[heads[k]:ends[k]], heads increasing (int64), and each one's group id
    (`gid_dtype`)."""
    if not streams:
        return 0, [(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, gid_dtype)) for _ in refs]
    es, args = _merge_streams(streams)
    queries = sum(count_runs(wl, L) for _, _, wl, *_ in streams[q0:])
    out, rargs = [], []
    for rt, rpos, rwl in refs:
        if token_size(rt) != es or rwl.dtype != np.uint16:
            raise TypeError("merge_lookup: reference tokens of the streams' dtype and wl uint16")
        heads, ends, gid = np.empty(queries, np.int64), np.empty(queries, np.int64), np.empty(queries, gid_dtype)
        out.append((heads, ends, gid))
        rargs.append((_buf(rt), _buf(rpos) if len(rpos) else b"", _is64(rpos), _buf(rwl) if len(rwl) else b"",
                      _buf(heads) if queries else bytearray(), _buf(ends) if queries else bytearray(),
                      _buf(gid) if queries else bytearray(), gid.dtype == np.int64))
    got = _native.merge_lookup(args, es, int(L), int(q0), rargs)
    return int(got[0]), [(h[:n], e[:n], g[:n]) for (h, e, g), n in zip(out, got[1:])]


def scatter(wpos: np.ndarray, wl: np.ndarray, L: int, run_gid: np.ndarray, gid: np.ndarray) -> int:
    """gid[p] = group id for every window p of a repeated group (gid is left alone elsewhere);
    returns how many windows that is. run_gid is int64 or int32."""
    if len(wpos) == 0:
        return 0
    return _native.scatter(_c(wpos), _is64(wpos), _c(wl), int(L), _c(run_gid), _is64(run_gid), _c(gid), _is64(gid))


PAIR_SHIFT = 15   # pair_gid counts a part of 2^15 groups at a time: 256 KB of counters


def pair_gid(gid: np.ndarray, d: int, groups: int, offsets: np.ndarray | None = None, w: int = 0,
             out: np.ndarray | None = None, scratch=None) -> tuple[np.ndarray, int]:
    """Group ids of the windows made of two: out[p] is a dense id of the pair (gid[p],
    gid[p + d]) where both are repeated (>= 0, below `groups`), [p, p + w) lies in one of
    the documents or regions `offsets` (from 0 to len(gid); w = 0: not tested) and the pair
    occurs twice or more in gid, numbered in increasing pairs; else -1. gid int32 or int64,
    under 2^32 entries, groups up to 2^32. `out`: int32 (default) or int64, as long as gid.
    Returns (out, how many ids). Scratch: 20 bytes per pair at most, in memory or from
    scratch(dtype, n), which makes an array of n entries (a file mapped, say)."""
    n = len(gid)
    if out is None:
        out = np.empty(n, dtype=np.int32)
    if len(out) != n:
        raise ValueError("pair_gid: out differs from gid in length")
    if n == 0:
        return out, 0
    shift = PAIR_SHIFT
    part = np.empty((int(groups) >> shift) + 2, dtype=np.int64)
    start = np.empty((1 << shift) + 1, dtype=np.int64)
    # as many as there can be pairs: the pages past the pairs' own are never touched
    make = scratch or (lambda dtype, k: np.empty(k, dtype))
    keys, alow, keys2 = make(np.uint64, n), make(np.uint32, n), make(np.uint64, n)
    off = b"" if not w else np.ascontiguousarray(offsets, dtype=np.int64)
    ids = _native.pair_gid(_c(gid), _is64(gid), int(d), off, int(w), int(groups), shift, part, start, keys, alow,
                           keys2, _c(out), _is64(out))
    return out, ids


def listed_runs(run_gid: np.ndarray) -> int:
    """How many entries scatter_first_two lists: the distinct windows of repeated groups."""
    return int(np.count_nonzero(np.asarray(run_gid) >= 0))


def scatter_first_two(wpos: np.ndarray, wl: np.ndarray, L: int, run_gid: np.ndarray,
                      gid: np.ndarray, out: np.ndarray | None = None) -> tuple[int, np.ndarray]:
    """scatter, and for every distinct window of a repeated group in the stream: its group id
    and the smallest two of its positions (-1: none), as (3, listed_runs(run_gid)), by
    increasing group id. `out`: that array, C-contiguous, int32 or int64 (a file's map: the
    kernel writes each entry once); else an int64 one is made. run_gid is int64 or int32.
    Returns (windows written, the array)."""
    listed = listed_runs(run_gid)
    if out is None:
        out = np.empty((3, listed), dtype=np.int64)
    if out.shape != (3, listed):
        raise ValueError(f"scatter_first_two: out is {out.shape}, the runs listed need (3, {listed})")
    if len(wpos) == 0:
        return 0, out
    rows = [_buf(out[i]) if listed else bytearray() for i in range(3)]
    written, got = _native.scatter_first_two(_c(wpos), _is64(wpos), _c(wl), int(L), _c(run_gid), _is64(run_gid),
                                             _c(gid), _is64(gid), *rows, _is64(out))
    assert got == listed
    return written, out


def merge_first_two(firsts: np.ndarray, runs: Runs | None, n: int, base: int, first: np.ndarray,
                    second: np.ndarray) -> None:
    """first/second (int64 per group, -1 unset; state across shards in document order) from
    one shard's list (scatter_first_two: group ids increasing, sorted-text positions), placed
    in the shard of n positions by its runs (None: the positions are the shard's) plus base."""
    if firsts.shape[1] == 0:
        return
    g, q1, q2 = (_c(firsts[i]) for i in range(3))  # rows of a C-ordered (3, m) array, read as they are
    if runs is None or len(runs[0]) == 0:
        rstart, roff = None, np.array([0, n], np.int64)
    else:
        rstart, roff = (_c(a.astype(np.int64, copy=False)) for a in runs)
    _native.merge_first_two(g, q1, q2, _is64(firsts), rstart, roff, int(base), _c(first), _c(second))


def _span_buffers(m: int, n_shard: int, L: int):
    """Room for every span: they are disjoint runs of at least L of the shard's tokens, and
    each holds a window, so there are at most min(m entries, n_shard / L + 1) of them."""
    cap = max(min(m, n_shard // L + 1), 1)
    return [np.empty(cap, dtype=np.int64) for _ in range(4)]


Runs = tuple[np.ndarray, np.ndarray]


def _runs_args(runs: Runs | None, m: int) -> tuple:
    """The select kernels' (starts, offsets) of the runs of the shard that m gid entries
    cover: entry q with offsets[r] <= q < offsets[r+1] is position starts[r] + q - offsets[r].
    None: one run, entry q is position q."""
    if runs is None or len(runs[0]) == 0:  # no runs: no entries either (checked in C)
        return np.zeros(1, np.int64), np.array([0, m], np.int64)
    starts, offsets = runs
    return _c(starts.astype(np.int64, copy=False)), _c(offsets.astype(np.int64, copy=False))


def select_first(gid: np.ndarray, doc_start: np.ndarray, L: int, drop_fraction: float, base: int,
                 src: np.ndarray, runs: Runs | None = None):
    """keep='first' over one shard; `src` (int64 per group, -1 = unseen) carries across shards.

    gid[q] is the group of the window at shard position q, or, given runs (starts, offsets),
    at the position q falls on in them: with the prefilter gid covers the candidate regions
    only. Returns (removed, dropped, (span_doc, span_start, span_end, span_src)).
    """
    ndocs = len(doc_start) - 1
    removed = np.zeros(ndocs, dtype=np.int64)
    dropped = np.zeros(ndocs, dtype=np.uint8)
    spans = _span_buffers(len(gid), int(doc_start[-1]) if ndocs >= 0 else 0, L)
    scratch = np.empty(max(len(gid), 1), dtype=np.int64)
    k = _native.select_first(_buf(gid), _is64(gid), *_runs_args(runs, len(gid)),
                             _c(doc_start.astype(np.int64, copy=False)),
                             int(L), float(drop_fraction), int(base), _buf(src) if src.size else bytearray(),
                             scratch, removed if ndocs else bytearray(), dropped if ndocs else bytearray(), *spans)
    return removed, dropped.astype(bool), tuple(s[:k] for s in spans)


def first_two(gid: np.ndarray, n: int, base: int, first: np.ndarray, second: np.ndarray,
              runs: Runs | None = None) -> None:
    """Records, per group, its first and second global position (state across shards);
    gid and runs as in select_first, n the shard's length."""
    if gid.size and first.size:
        _native.first_two(_c(gid), _is64(gid), *_runs_args(runs, len(gid)), int(n), int(base), _c(first), _c(second))


def select_none(gid: np.ndarray, doc_start: np.ndarray, L: int, drop_fraction: float, base: int,
                first: np.ndarray, second: np.ndarray, runs: Runs | None = None):
    """keep='none' over one shard: every occurrence of a repeated window is struck."""
    ndocs = len(doc_start) - 1
    removed = np.zeros(ndocs, dtype=np.int64)
    dropped = np.zeros(ndocs, dtype=np.uint8)
    spans = _span_buffers(len(gid), int(doc_start[-1]) if ndocs >= 0 else 0, L)
    k = _native.select_none(_buf(gid), _is64(gid), *_runs_args(runs, len(gid)),
                            _c(doc_start.astype(np.int64, copy=False)),
                            int(L), float(drop_fraction), int(base), _buf(first) if first.size else bytearray(),
                            _buf(second) if second.size else bytearray(),
                            removed if ndocs else bytearray(), dropped if ndocs else bytearray(), *spans)
    return removed, dropped.astype(bool), tuple(s[:k] for s in spans)


def spm_pieces(proto: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids uint32, begin int64, end int64) of a serialized sentencepiece SentencePieceText;
    begin/end are byte offsets into the original (not normalized) text."""
    cap = len(proto) // 4 + 1  # a piece takes at least 4 bytes on the wire
    ids = np.empty(cap, dtype=np.uint32)
    begin = np.empty(cap, dtype=np.int64)
    end = np.empty(cap, dtype=np.int64)
    k = _native.spm_pieces(proto, ids, begin, end)
    return ids[:k], begin[:k], end[:k]


# ---- document-level kernels (native/minhash.c) -------------------------------------------
# A document set is (A, B, starts, ends): byte ranges [starts[d], ends[d]) into A, or into B
# for positions >= len(A) (B holds texts Python normalized itself). See native/minhash.h.

def _bytes_buf(a):
    if isinstance(a, np.ndarray):
        return _buf(a.reshape(-1).view(np.uint8)) if a.size else b""
    return a


def _docs(A, B, starts: np.ndarray, ends: np.ndarray) -> tuple:
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    return (_bytes_buf(A), _bytes_buf(B), starts if starts.size else b"", ends if ends.size else b"")


def doc_nonascii(A, B, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which documents have a byte >= 0x80 (bool per document)."""
    out = np.zeros(len(starts), dtype=np.uint8)
    if len(starts):
        _native.doc_nonascii(_docs(A, B, starts, ends), out)
    return out.view(bool)


def doc_normalize(A, B, starts: np.ndarray, ends: np.ndarray, lower: bool) -> tuple[np.ndarray, np.ndarray]:
    """Whitespace runs to one space, ends stripped, ASCII lower-cased with `lower`.

    Returns the normalized bytes of all documents, concatenated, and their ndocs+1 offsets."""
    total = int((np.asarray(ends, np.int64) - np.asarray(starts, np.int64)).sum()) if len(starts) else 0
    out = np.empty(max(total, 1), dtype=np.uint8)
    offs = np.zeros(len(starts) + 1, dtype=np.int64)
    if len(starts):
        _native.doc_normalize(_docs(A, B, starts, ends), bool(lower), out, offs)
    return out[: offs[-1]], offs


def minhash(A, B, starts: np.ndarray, ends: np.ndarray, lower: bool, mode: int, ngram: int, seed: int,
            perm_seeds: np.ndarray, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """MinHash signatures (uint32, ndocs x num_perm; `out` may be a writable memmap) and the
    number of shingles of every document (0: too short, signature all 0xFFFFFFFF)."""
    n, P = len(starts), len(perm_seeds)
    if perm_seeds.dtype != np.uint32:
        raise TypeError("perm_seeds must be uint32")
    if out is None:
        out = np.empty((n, P), dtype=np.uint32)
    if out.dtype != np.uint32 or out.shape != (n, P):
        raise ValueError("signature output must be uint32 of shape (ndocs, num_perm)")
    nsh = np.zeros(n, dtype=np.int64)
    if n and P:
        _native.minhash(_docs(A, B, starts, ends), bool(lower), int(mode), int(ngram), int(seed) & (2**64 - 1),
                        _c(perm_seeds), _c(out), nsh)
    return out, nsh


def shingle_sets(A, B, starts: np.ndarray, ends: np.ndarray, lower: bool, mode: int, ngram: int, seed: int,
                 capacity: np.ndarray, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct shingle hashes of every document, concatenated (uint64; `out` may be a
    writable memmap of sum(capacity) entries): returns (hashes, offsets, counts), document d's
    set being hashes[offsets[d] : offsets[d] + counts[d]]. capacity[d] >= its shingle count."""
    n = len(starts)
    offs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.asarray(capacity, dtype=np.int64), out=offs[1:])
    if out is None:
        out = np.empty(int(offs[-1]), dtype=np.uint64)
    if out.dtype != np.uint64 or len(out) < offs[-1]:
        raise ValueError("shingle set output must be uint64 with room for sum(capacity)")
    counts = np.zeros(n, dtype=np.int64)
    if n:
        _native.shingle_sets(_docs(A, B, starts, ends), bool(lower), int(mode), int(ngram),
                             int(seed) & (2**64 - 1), _buf(out) if out.size else bytearray(), offs, counts)
    return out, offs[:-1], counts


def jaccard_pairs(hashes: np.ndarray, offsets: np.ndarray, counts: np.ndarray, pi: np.ndarray,
                  pj: np.ndarray) -> np.ndarray:
    """Exact Jaccard of set pi[k] and set pj[k] (sets as made by shingle_sets)."""
    pi = np.ascontiguousarray(pi, dtype=np.int64)
    pj = np.ascontiguousarray(pj, dtype=np.int64)
    out = np.zeros(len(pi), dtype=np.float64)
    if len(pi):
        _native.jaccard_pairs(_buf(hashes) if hashes.size else b"", _c(offsets.astype(np.int64, copy=False)),
                              _c(counts.astype(np.int64, copy=False)), pi, pj, out)
    return out


def components(n: int, ei: np.ndarray, ej: np.ndarray) -> np.ndarray:
    """Union-find: for every node 0..n-1, the smallest node of its connected component."""
    ei = np.ascontiguousarray(ei, dtype=np.int64)
    ej = np.ascontiguousarray(ej, dtype=np.int64)
    root = np.empty(n, dtype=np.int64)
    if n:
        _native.components(int(n), ei if ei.size else b"", ej if ej.size else b"", root)
    return root


class NeedSimilarity(Exception):
    """cluster_cut needed the similarity of a pair that is not verified and was given none."""


def cluster_cut(n: int, ei: np.ndarray, ej: np.ndarray, esim: np.ndarray, rank: np.ndarray,
                floor: float | np.ndarray, rows: np.ndarray | None = None, signatures: np.ndarray | None = None,
                sets: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None, by_rank: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """sadedup.lsh.cluster in one native pass, the same clusters in the same order: (kept per
    cluster, member, its cluster, its similarity to the kept node, similarities computed).
    The similarity of two nodes that are no verified pair is the agreement of rows
    rows[x] of `signatures` (estimate_pairs), or the exact Jaccard of sets rows[x] of
    `sets` = (hashes, offsets, counts) as shingle_sets makes them (jaccard_pairs); a node
    that may be asked for needs a row (-1: none). Raises NeedSimilarity when one is asked
    for and neither is given: a caller that makes them only when needed then retries.
    `by_rank`: the nodes by rank, ties by node (np.argsort(rank, kind="stable")), when the
    caller cuts many graphs of the same nodes."""
    ei = np.ascontiguousarray(ei, dtype=np.int64)
    ej = np.ascontiguousarray(ej, dtype=np.int64)
    esim = np.ascontiguousarray(esim, dtype=np.float64)
    fl = np.full(n, float(floor)) if np.isscalar(floor) else np.ascontiguousarray(floor, dtype=np.float64)
    if len(ei) != len(ej) or len(esim) != len(ei) or len(fl) != n or (len(rank) != n if by_rank is None else
                                                                       len(by_rank) != n):
        raise ValueError("cluster_cut: mismatched array lengths")
    if not len(ei):
        z = np.zeros(0, np.int64)
        return z, z, z, np.zeros(0), 0
    kept, member = np.empty(n // 2, np.int64), np.empty(n, np.int64)
    cluster, msim = np.empty(n, np.int64), np.empty(n, np.float64)
    kind, width, sig, h, off, cnt = 0, 0, b"", b"", b"", b""
    if signatures is not None or sets is not None:
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        if signatures is not None:
            kind, width = 1, signatures.shape[1]
            sig = _buf(np.ascontiguousarray(signatures, dtype=np.uint32))
        else:
            kind = 2
            h, off, cnt = (_buf(np.ascontiguousarray(a, dtype=t)) for a, t in zip(sets, (np.uint64, np.int64, np.int64)))
    if by_rank is None:
        by_rank = np.argsort(rank, kind="stable")
    by_rank = np.ascontiguousarray(by_rank, dtype=np.int64)
    got, nk, asked = _native.cluster_cut(int(n), _buf(ei), _buf(ej), _buf(esim), _buf(by_rank), _buf(fl), kind,
                                         b"" if rows is None or not kind else _buf(rows), sig, int(width), h, off,
                                         cnt, _buf(kept), _buf(member), _buf(cluster), _buf(msim))
    if got == -2:
        raise NeedSimilarity()
    return kept[:nk], member[:got], cluster[:got], msim[:got], int(asked)


# ---- count and locate (native/occurrences.c) ----------------------------------------------

def sa_range(tokens: np.ndarray, sa: np.ndarray, pattern: np.ndarray) -> tuple[int, int]:
    """[lo, hi): the entries of the suffix array `sa` of `tokens` whose suffixes start with
    `pattern` (same dtype as tokens, at least one token), by binary search."""
    if pattern.dtype != tokens.dtype:
        raise TypeError(f"pattern must have the tokens' dtype {tokens.dtype}, got {pattern.dtype}")
    if len(sa) != len(tokens):
        raise ValueError("suffix array and tokens differ in length")
    if len(pattern) == 0:
        raise ValueError("the pattern must hold at least one token")
    if len(tokens) == 0:
        return 0, 0
    lo, hi = _native.sa_range(_c(tokens), token_size(tokens), _c(sa), _is64(sa), np.ascontiguousarray(pattern))
    return int(lo), int(hi)


def in_documents(sa: np.ndarray, lo: int, hi: int, offsets: np.ndarray, m: int,
                 out: np.ndarray | None = None) -> int:
    """How many of the suffixes sa[lo:hi] have their first m tokens inside one document
    (offsets: int64, ndocs+1); the first len(out) of their positions (in suffix-array order)
    go to `out` (int64) when given."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    if out is not None and out.dtype != np.int64:
        raise TypeError("out must be int64")
    if hi <= lo:
        return 0
    return int(_native.in_documents(_c(sa), _is64(sa), int(lo), int(hi), offsets, int(m),
                                    bytearray() if out is None or not out.size else _c(out)))


# ---- decontamination (native/decontaminate.c) ----------------------------------------------
# Words are Python's `\w+` matches compared case-folded. The kernels hold no Unicode data of
# their own: dc_table() builds what they read from this interpreter's `re` and str.casefold.

_DC_TABLE: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


def dc_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(stage1, stage2, fold): which code points `\\w` matches and what each word character
    case-folds to, as the kernels read it (see native/kernels.h), made once per process from
    this interpreter's own `re` and str.casefold (0.1 s), so the kernels agree with Python on
    every code point of its Unicode version. str.casefold maps each code point on its own (no
    context), so a word's fold is its code points' folds in a row."""
    global _DC_TABLE
    if _DC_TABLE is None:
        import re

        n = 0x110000
        every = np.arange(n, dtype=np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
        word = np.zeros(n, dtype=bool)
        for m in re.finditer(r"\w+", every):
            word[m.start():m.end()] = True
        value = word.astype(np.uint32)
        fold: list[int] = []
        for b in range(n >> 8):
            block = every[b << 8:(b + 1) << 8]
            if block.casefold() == block:  # no code point of the block folds to another
                continue
            for i, ch in enumerate(block):
                f = ch.casefold()
                if f != ch and word[(b << 8) + i]:
                    if not 1 <= len(f) <= 3:
                        raise AssertionError(f"U+{(b << 8) + i:04X} folds to {len(f)} code points")
                    value[(b << 8) + i] |= (len(f) << 1) | (len(fold) << 8)
                    fold.extend(map(ord, f))
        rows = value.reshape(n >> 8, 256)
        seen: dict[bytes, int] = {}  # equal blocks stored once (np.unique over rows takes 0.7 s)
        stage1 = np.array([seen.setdefault(r.tobytes(), len(seen)) for r in rows], dtype=np.uint16)
        firsts = np.unique(stage1, return_index=True)[1]
        _DC_TABLE = (stage1, np.ascontiguousarray(rows[firsts].reshape(-1)), np.array(fold or [0], dtype=np.uint32))
    return _DC_TABLE


def _dc_i64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


def _dc_out(a: np.ndarray):
    """A writable buffer for the C side (an empty array is passed as an empty bytearray)."""
    return _c(a) if a.size else bytearray()


def dc_words(texts, starts: np.ndarray, ends: np.ndarray, fold: bool = True
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The `\\w+` words of the documents texts[starts[d]:ends[d]] (UTF-8 bytes): (word_off,
    ndocs+1: document d's words are word_off[d]:word_off[d+1]; cp_start, cp_end: code-point
    offsets in the document; hash of the case-folded word, uint64; and with `fold` the folded
    code points, uint32, word i's being fold[fold_off[i]:fold_off[i+1]])."""
    starts, ends = _dc_i64(starts), _dc_i64(ends)
    nbytes = int((ends - starts).sum()) if len(starts) else 0
    cap = nbytes // 2 + len(starts) + 1           # a word and a separator take two bytes at least
    word_off = np.zeros(len(starts) + 1, dtype=np.int64)
    cs, ce = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
    h = np.empty(cap, dtype=np.uint64)
    fo = np.empty(3 * nbytes if fold else 0, dtype=np.uint32)  # a code point folds to 3 at most
    foff = np.zeros(cap + 1 if fold else 0, dtype=np.int64)
    t = dc_table()
    m = _native.dc_words(*t, _buf(texts) if len(texts) else b"", _buf(starts), _buf(ends), word_off, cs, ce, h,
                         _dc_out(fo), _dc_out(foff))
    if fold:
        foff = foff[:m + 1]
        fo = fo[:int(foff[-1])]
    return word_off, cs[:m], ce[:m], h[:m], fo, foff


def dc_ngram_keys(hashes: np.ndarray, word_off: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The key (uint64) of every n-gram of every document (words as dc_words gives them), and
    key_off: document d's keys are keys[key_off[d]:key_off[d+1]], one per word that starts n
    words of the document."""
    word_off = _dc_i64(word_off)
    per = np.maximum(np.diff(word_off) - n + 1, 0)
    key_off = np.concatenate([[0], np.cumsum(per)]).astype(np.int64)
    keys = np.empty(int(key_off[-1]), dtype=np.uint64)
    _native.dc_ngram_keys(_buf(np.ascontiguousarray(hashes, dtype=np.uint64)), word_off, int(n), _dc_out(keys))
    return keys, key_off


def dc_ngram_same(fold: np.ndarray, fold_off: np.ndarray, a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """Whether the n words from word a[i] on and from word b[i] on are the same folded words."""
    a, b = _dc_i64(a), _dc_i64(b)
    out = np.zeros(len(a), dtype=np.uint8)
    if len(a):
        _native.dc_ngram_same(_buf(np.ascontiguousarray(fold, dtype=np.uint32)), _dc_i64(fold_off), a, b, int(n), out)
    return out.view(bool)


def dc_scan(texts, starts: np.ndarray, ends: np.ndarray, ev: dict[str, np.ndarray], n: int, margin: int,
            classes: dict[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Decontamination of the documents texts[starts[d]:ends[d]] against the eval n-grams `ev`
    (hash, word, bucket, filter, fold, fold_off as sadedup.stages.decontaminate builds them;
    bbits and fbits as 0-d arrays): spans (k, 4) int64 rows (d, char_start, char_end, eval
    n-gram of the span's first struck n-gram) and hits (k, 2) rows (d, eval n-gram), every
    distinct one of each document. With `classes` (class_of, class_start, class_item and the
    outputs per_item, int64 per eval item, and found, uint8 per eval n-gram), the hits are
    counted there as they are found (no hits are returned). See sd_dc_scan."""
    starts, ends = _dc_i64(starts), _dc_i64(ends)
    t = dc_table()
    eargs = (_buf(ev["hash"]), _buf(ev["word"]), _c(ev["bucket"]), int(ev["bbits"]), _c(ev["filter"]),
             int(ev["fbits"]), _buf(ev["fold"]), _c(ev["fold_off"]), int(n))
    if classes is not None:
        if classes["per_item"].dtype != np.int64 or classes["found"].dtype != np.uint8:
            raise TypeError("per_item must be int64 and found uint8")
        ncl = len(classes["class_start"]) - 1
        cargs = [_buf(_dc_i64(classes["class_of"])), _dc_i64(classes["class_start"]),
                 _buf(_dc_i64(classes["class_item"])), 0, _dc_out(np.full(ncl, -1, np.int64)),
                 _dc_out(np.full(len(classes["per_item"]), -1, np.int64)), _dc_out(classes["per_item"]),
                 _dc_out(classes["found"])]
    else:
        cargs = [b"", np.zeros(1, np.int64), b"", 0, bytearray(), bytearray(), bytearray(), bytearray()]
    spans, hits = [], []
    cap, at = 4096, 0
    text = _buf(texts) if len(texts) else b""
    while at < len(starts):
        sp = np.empty((4, cap), dtype=np.int64)
        ht = np.empty((2, cap), dtype=np.int64)
        cargs[3] = at  # documents are told apart across calls
        done, nsp, nhit = _native.dc_scan(*t, *eargs, text, _buf(starts[at:]), _buf(ends[at:]), int(margin),
                                          *(sp[i] for i in range(4)), ht[0], ht[1], *cargs)
        if done < len(starts) - at:  # out of room: the rest goes with larger buffers
            cap *= 4
        if done == 0:
            continue
        sp[0, :nsp] += at
        ht[0, :nhit] += at
        spans.append(sp[:, :nsp].T)
        hits.append(ht[:, :nhit].T)
        at += done
    return (np.concatenate(spans) if spans else np.zeros((0, 4), np.int64),
            np.concatenate(hits) if hits else np.zeros((0, 2), np.int64))


# ---- passage-level MinHash (native/passages.c) --------------------------------------------
# Word tables: (word bitmap, fold_page, fold_block, fold_ext) as built by
# sadedup.stages.passages.word_tables; documents as for the document-level kernels.

def passage_count(texts, starts: np.ndarray, ends: np.ndarray, tables: tuple, words: int,
                  stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Per document (byte ranges of `texts`): its number of `\\w+` words and of chunks."""
    n = len(starts)
    nw = np.zeros(n, dtype=np.int64)
    nc = np.zeros(n, dtype=np.int64)
    if n:
        _native.passage_count(_docs(texts, b"", starts, ends), tables, int(words), int(stride), nw, nc)
    return nw, nc


def words(text: bytes, tables: tuple, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The `\\w+` words of one UTF-8 text: (hash of each word's case fold, uint64; code-point
    start; code-point end)."""
    room = len(text) // 2 + 1
    h = np.empty(room, dtype=np.uint64)
    cs = np.empty(room, dtype=np.int64)
    ce = np.empty(room, dtype=np.int64)
    m = _native.words(bytes(text), tables, int(seed) & (2**64 - 1), h, cs, ce)
    return h[:m], cs[:m], ce[:m]


def passage_minhash(texts, starts: np.ndarray, ends: np.ndarray, tables: tuple, words: int, stride: int,
                    ngram: int, seed: int, perm_seeds: np.ndarray, chunk_off: np.ndarray,
                    sig: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Signatures of every chunk into `sig` (rows x num_perm uint32, may be a writable memmap;
    document d's chunks are rows chunk_off[d]:chunk_off[d+1], as passage_count counted them).
    Returns per chunk (shingles, first word's start, last word's end), code points."""
    rows = int(chunk_off[-1]) if len(chunk_off) else 0
    if perm_seeds.dtype != np.uint32:
        raise TypeError("perm_seeds must be uint32")
    if sig.dtype != np.uint32 or sig.shape != (rows, len(perm_seeds)):
        raise ValueError("signature output must be uint32 of shape (chunks, num_perm)")
    nsh = np.zeros(rows, dtype=np.int64)
    cs = np.zeros(rows, dtype=np.int64)
    ce = np.zeros(rows, dtype=np.int64)
    if rows:
        _native.passage_minhash(_docs(texts, b"", starts, ends), tables, int(words), int(stride), int(ngram),
                                int(seed) & (2**64 - 1), _c(perm_seeds),
                                _c(np.ascontiguousarray(chunk_off, dtype=np.int64)), _c(sig), nsh, cs, ce)
    return nsh, cs, ce


def passage_sets(texts, starts: np.ndarray, ends: np.ndarray, tables: tuple, words: int, stride: int, ngram: int,
                 seed: int, req_doc: np.ndarray, req_chunk: np.ndarray, capacity: np.ndarray,
                 out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct shingle hashes of chunk req_chunk[k] of document req_doc[k] (grouped by
    document, else words are found again), concatenated (`out` may be a writable memmap of
    sum(capacity) entries): (hashes, offsets, counts) as shingle_sets gives them."""
    n = len(req_doc)
    offs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.asarray(capacity, dtype=np.int64), out=offs[1:])
    if out is None:
        out = np.empty(int(offs[-1]), dtype=np.uint64)
    if out.dtype != np.uint64 or len(out) < offs[-1]:
        raise ValueError("chunk set output must be uint64 with room for sum(capacity)")
    counts = np.zeros(n, dtype=np.int64)
    if n:
        _native.passage_sets(_docs(texts, b"", starts, ends), tables, int(words), int(stride), int(ngram),
                             int(seed) & (2**64 - 1), np.ascontiguousarray(req_doc, dtype=np.int64),
                             np.ascontiguousarray(req_chunk, dtype=np.int64), _buf(out) if out.size else bytearray(),
                             offs, counts)
    return out, offs[:-1], counts


def passage_walk(chunk_off: np.ndarray, chunk_doc: np.ndarray, cstart: np.ndarray, cend: np.ndarray,
                 n_chars: np.ndarray, pair_off: np.ndarray, partner: np.ndarray, psim: np.ndarray,
                 drop_fraction: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Keep-first over chunks in document order (see native/kernels.h): per chunk its source
    chunk (-1: not a near duplicate) and similarity, per document the code points removed and
    whether the drop rule dropped it."""
    def i64(a):
        return _c(np.ascontiguousarray(a, dtype=np.int64))

    ndocs, nch = len(n_chars), len(chunk_doc)
    src = np.empty(nch, dtype=np.int64)
    ssim = np.empty(nch, dtype=np.float64)
    removed = np.zeros(ndocs, dtype=np.int64)
    dropped = np.zeros(ndocs, dtype=np.uint8)
    if ndocs:
        _native.passage_walk(i64(chunk_off), _buf(i64(chunk_doc)), _buf(i64(cstart)), _buf(i64(cend)), i64(n_chars),
                             i64(pair_off), _buf(i64(partner)),
                             _buf(np.ascontiguousarray(psim, dtype=np.float64)), float(drop_fraction),
                             src if nch else bytearray(), ssim if nch else bytearray(), removed, dropped)
    return src, ssim, removed, dropped.view(bool)


# ---- line dedup (native/lines.c; sadedup/stages/lines.py)

def line_scan(texts: np.ndarray, starts: np.ndarray, ends: np.ndarray,
              doc_base: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lines of documents texts[starts[d]:ends[d]] (document index doc_base + d) whose key
    is not empty, as far as the kernel can tell: (hash uint64, line int64 (m, 3): document,
    code-point start and end; slow int64 (s, 3): row, byte start and end without the newline,
    of the lines whose key needs Python's NFC; their hash is 0 and their key may be empty)."""
    st = np.ascontiguousarray(starts, dtype=np.int64)
    en = np.ascontiguousarray(ends, dtype=np.int64)
    total = int((en - st).sum()) if len(st) else 0
    cap = total // 40 + len(st) + 1024      # a guess: web text has ~60 bytes a line; too small costs one more pass
    scap = cap // 8 + 1024
    while True:
        h = np.empty(cap, dtype=np.uint64)
        line = np.empty((cap, 3), dtype=np.int64)
        slow = np.empty((scap, 3), dtype=np.int64)
        k, ns = _native.line_scan(_buf(texts), st, en, int(doc_base), h, line, slow)
        if k <= cap and ns <= scap:
            return h[:k], line[:k], slow[:ns]
        cap, scap = max(cap, k), max(scap, ns)


def gather_lines(texts: np.ndarray, slow: np.ndarray) -> bytes:
    """The bytes of the slow rows' lines joined by newlines (they hold none)."""
    slow = _c(np.ascontiguousarray(slow, dtype=np.int64))
    if not len(slow):
        return b""
    out = np.empty(int((slow[:, 2] - slow[:, 1]).sum()) + len(slow) - 1, dtype=np.uint8)
    _native.gather_lines(_buf(texts), slow, out if out.size else bytearray())
    return out.tobytes()


def hash_pieces(buf: bytes, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(hash, empty) of the n newline-separated pieces of buf, hashed as line_scan hashes keys."""
    h = np.empty(max(n, 1), dtype=np.uint64)
    empty = np.empty(max(n, 1), dtype=np.uint8)
    k = _native.hash_pieces(buf, h, empty)
    if k != n:
        raise ValueError(f"hash_pieces: {k} pieces, expected {n}")
    return h[:n], empty[:n].view(bool)


def _i64(a: np.ndarray) -> np.ndarray:
    return _c(np.ascontiguousarray(a, dtype=np.int64))


def _out(a: np.ndarray):
    """A buffer the C side can write; an empty array as an empty bytearray (see _buf)."""
    return _c(a) if a.size else bytearray()


def _line_outputs(m: int, nd: int) -> tuple[np.ndarray, ...]:
    return (np.zeros(m, dtype=np.uint8), np.full((m, 3), -1, dtype=np.int64), np.zeros(nd, dtype=np.int64),
            np.zeros(nd, dtype=np.uint8))


def lines_first(gid: np.ndarray, line: np.ndarray, doc_base: int, n_chars: np.ndarray, drop_fraction: float,
                state: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """keep="first" over one chunk (see native/kernels.h); `state` (groups x 3, int64, -1 to
    start) carries the first surviving occurrences from chunk to chunk. Returns per row
    removed (bool) and its source row (document, start, end), per document the code points
    removed and whether the drop rule dropped it."""
    if state.dtype != np.int64 or state.ndim != 2 or state.shape[1] != 3:
        raise ValueError("lines_first state must be int64 (groups x 3)")
    gid, line = _i64(gid), _i64(line)
    rm, src, removed, dropped = _line_outputs(len(gid), len(n_chars))
    scratch = np.empty(max(len(gid), 1), dtype=np.int64)
    _native.lines_first(_buf(gid), _buf(line), int(doc_base), _buf(_i64(n_chars)), float(drop_fraction),
                        _out(state), scratch, _out(rm), _out(src), _out(removed), _out(dropped))
    return rm.view(bool), src, removed, dropped.view(bool)


def lines_first_two(gid: np.ndarray, line: np.ndarray, state: np.ndarray) -> None:
    """keep="none", first pass over one chunk: `state` (groups x 6, int64, -1 to start) gets
    every group's first occurrence and its first occurrence in another document."""
    if state.dtype != np.int64 or state.ndim != 2 or state.shape[1] != 6:
        raise ValueError("lines_first_two state must be int64 (groups x 6)")
    gid = _i64(gid)
    if len(gid):
        _native.lines_first_two(_buf(gid), _buf(_i64(line)), _out(state))


def lines_none(gid: np.ndarray, line: np.ndarray, doc_base: int, n_chars: np.ndarray, min_docs: np.ndarray,
               g_docs: np.ndarray, drop_fraction: float,
               state: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """keep="none" over one chunk: a row goes when its group is in at least its document's
    min_docs documents (g_docs per group); returns what lines_first returns."""
    if state.dtype != np.int64 or state.ndim != 2 or state.shape[1] != 6:
        raise ValueError("lines_none state must be int64 (groups x 6)")
    gid, line = _i64(gid), _i64(line)
    rm, src, removed, dropped = _line_outputs(len(gid), len(n_chars))
    _native.lines_none(_buf(gid), _buf(line), int(doc_base), _buf(_i64(n_chars)), _buf(_i64(min_docs)),
                       _buf(_i64(g_docs)), float(drop_fraction), _buf(_c(state)), _out(rm), _out(src), _out(removed),
                       _out(dropped))
    return rm.view(bool), src, removed, dropped.view(bool)
