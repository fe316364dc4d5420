/* CPython binding for the kernels: parses buffers, checks sizes, releases the GIL.
 * Dtype and shape checks that need numpy live in sadedup/native.py; this layer only makes
 * sure no kernel can read or write outside the buffers it was given. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "kernels.h"
#include "minhash.h"
#include "libsais/libsais.h"

#define W(x) ((x) ? 8 : 4)

static int need(Py_buffer *b, Py_ssize_t bytes, const char *what) {
    if (b->len < bytes) {
        PyErr_Format(PyExc_ValueError, "%s: buffer of %zd bytes, need %zd", what, b->len, bytes);
        return 0;
    }
    return 1;
}

static PyObject *py_lcp(PyObject *self, PyObject *args) {
    Py_buffer T, sa, lcp, tmp;
    int es, is64;
    if (!PyArg_ParseTuple(args, "y*iy*w*w*p", &T, &es, &sa, &lcp, &tmp, &is64)) return NULL;
    PyObject *ret = NULL;
    int64_t n = T.len / es;
    if (need(&sa, n * W(is64), "sa") && need(&lcp, n * W(is64), "lcp") && need(&tmp, n * W(is64), "tmp")) {
        Py_BEGIN_ALLOW_THREADS
        sd_lcp(T.buf, es, n, sa.buf, lcp.buf, tmp.buf, is64);
        Py_END_ALLOW_THREADS
        ret = Py_None; Py_INCREF(ret);
    }
    PyBuffer_Release(&T); PyBuffer_Release(&sa); PyBuffer_Release(&lcp); PyBuffer_Release(&tmp);
    return ret;
}

static PyObject *py_lcp_capped(PyObject *self, PyObject *args) {
    Py_buffer T, sa, lcp;
    int es, is64;
    long long cap;
    if (!PyArg_ParseTuple(args, "y*iy*w*pL", &T, &es, &sa, &lcp, &is64, &cap)) return NULL;
    PyObject *ret = NULL;
    int64_t n = T.len / es;
    if (cap < 0 || cap > 65535) {
        PyErr_SetString(PyExc_ValueError, "cap must be in 0..65535");
    } else if (need(&sa, n * W(is64), "sa") && need(&lcp, n * (cap <= 255 ? 1 : 2), "lcp")) {
        Py_BEGIN_ALLOW_THREADS
        sd_lcp_capped(T.buf, es, n, sa.buf, is64, lcp.buf, cap);
        Py_END_ALLOW_THREADS
        ret = Py_None; Py_INCREF(ret);
    }
    PyBuffer_Release(&T); PyBuffer_Release(&sa); PyBuffer_Release(&lcp);
    return ret;
}

/* suffix_array(T, SA): the suffix array of the bytes T (fewer than 2^31) into SA (int32),
 * by libsais (native/libsais, vendored: 1.4x less CPU than libdivsufsort on crawl-like text). */
static PyObject *py_suffix_array(PyObject *self, PyObject *args) {
    Py_buffer T, sa;
    if (!PyArg_ParseTuple(args, "y*w*", &T, &sa)) return NULL;
    PyObject *ret = NULL;
    if (T.len >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "suffix_array: 2^31 - 1 bytes at most");
    } else if (need(&sa, T.len * 4, "sa")) {
        int32_t rc;
        Py_BEGIN_ALLOW_THREADS
        rc = libsais(T.buf, sa.buf, (int32_t)T.len, 0, NULL);
        Py_END_ALLOW_THREADS
        if (rc == -2) PyErr_NoMemory();
        else if (rc) PyErr_Format(PyExc_RuntimeError, "libsais failed (%d)", (int)rc);
        else { ret = Py_None; Py_INCREF(ret); }
    }
    PyBuffer_Release(&T); PyBuffer_Release(&sa);
    return ret;
}

/* local_windows(sa, is64, lcp, lw, valid, L, wpos, wpos64, wl, i0, i1, run_min, m_before)
 * -> (windows kept, run_min): suffix-array entries i0..i1-1, written from wpos[0], wl[0]. */
static PyObject *py_local_windows(PyObject *self, PyObject *args) {
    Py_buffer sa, lcp, valid, wpos, wl;
    int is64, lw, wpos64;
    long long L, i0, i1, run_min, m_before;
    if (!PyArg_ParseTuple(args, "y*py*iy*Lw*pw*LLLL", &sa, &is64, &lcp, &lw, &valid, &L, &wpos, &wpos64, &wl, &i0,
                          &i1, &run_min, &m_before))
        return NULL;
    PyObject *ret = NULL;
    int64_t n = sa.len / W(is64), m = 0, rm = run_min;
    if (L < 1 || L > 65535) {
        PyErr_SetString(PyExc_ValueError, "L must be in 1..65535");
    } else if (lw != 1 && lw != 2 && lw != 4 && lw != 8) {
        PyErr_SetString(PyExc_ValueError, "lcp entries must be 1, 2, 4 or 8 bytes wide");
    } else if (i0 < 0 || i1 < i0 || i1 > n || m_before < 0) {
        PyErr_SetString(PyExc_ValueError, "local_windows: range outside the suffix array");
    } else if (need(&valid, (n + 7) / 8, "valid") && need(&lcp, n * lw, "lcp") &&
               need(&wpos, (i1 - i0) * W(wpos64), "wpos") && need(&wl, (i1 - i0) * 2, "wl")) {
        Py_BEGIN_ALLOW_THREADS
        m = sd_local_windows(sa.buf, is64, lcp.buf, lw, n, valid.buf, L, wpos.buf, wpos64, wl.buf, i0, i1, &rm,
                             m_before);
        Py_END_ALLOW_THREADS
        ret = Py_BuildValue("LL", (long long)m, (long long)rm);
    }
    PyBuffer_Release(&sa); PyBuffer_Release(&lcp); PyBuffer_Release(&valid);
    PyBuffer_Release(&wpos); PyBuffer_Release(&wl);
    return ret;
}

/* anchors(T, es, offsets, k, L, pos, hash): returns the anchor count (may exceed the
 * buffers' capacity, which is then filled and the caller retries with more room). */
static PyObject *py_anchors(PyObject *self, PyObject *args) {
    Py_buffer T, off, pos, hash;
    int es;
    long long k, L;
    if (!PyArg_ParseTuple(args, "y*iy*LLw*w*", &T, &es, &off, &k, &L, &pos, &hash)) return NULL;
    PyObject *ret = NULL;
    int64_t ndocs = off.len / 8 - 1, cap = pos.len / 8, count = 0;
    if (k < 1 || k > L || L > 65535) {
        PyErr_SetString(PyExc_ValueError, "need 1 <= k <= L <= 65535");
    } else if (ndocs < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets must hold at least one entry");
    } else if (need(&hash, cap * 8, "hash")) {
        const int64_t *o = off.buf;
        if (o[ndocs] * es > T.len) {
            PyErr_SetString(PyExc_ValueError, "offsets run past the tokens");
        } else {
            Py_BEGIN_ALLOW_THREADS
            count = sd_anchors(T.buf, es, o, ndocs, k, L, pos.buf, hash.buf, cap);
            Py_END_ALLOW_THREADS
            ret = count < 0 ? PyErr_NoMemory() : PyLong_FromLongLong(count);
        }
    }
    PyBuffer_Release(&T); PyBuffer_Release(&off); PyBuffer_Release(&pos); PyBuffer_Release(&hash);
    return ret;
}

/* member(set, q, out): set is distinct uint64 values */
static PyObject *py_member(PyObject *self, PyObject *args) {
    Py_buffer set, q, out;
    if (!PyArg_ParseTuple(args, "y*y*w*", &set, &q, &out)) return NULL;
    PyObject *ret = NULL;
    int64_t ns = set.len / 8, nq = q.len / 8, size = 16;
    while (size < 2 * ns) size <<= 1;
    if (need(&out, nq, "out")) {
        uint64_t *table = malloc((size_t)size * 8);
        uint8_t *used = calloc((size_t)size, 1);
        if (!table || !used) {
            ret = PyErr_NoMemory();
        } else {
            Py_BEGIN_ALLOW_THREADS
            sd_member(set.buf, ns, q.buf, nq, out.buf, table, used, size);
            Py_END_ALLOW_THREADS
            ret = Py_None; Py_INCREF(ret);
        }
        free(table); free(used);
    }
    PyBuffer_Release(&set); PyBuffer_Release(&q); PyBuffer_Release(&out);
    return ret;
}

/* populate_write(buf): every page of a fresh writable file map faulted in for writing by one
 * madvise(MADV_POPULATE_WRITE) call (Linux 5.14+) instead of one page fault per 4 KB page as
 * the caller fills it: on this project's VMs a fault costs several microseconds, 2-4x the CPU
 * of the fill itself. Returns whether the kernel did it; when it cannot (older kernel, a file
 * system without it, no memory at that moment) the pages simply fault in as before. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static PyObject *py_populate_write(PyObject *self, PyObject *args) {
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "w*", &b)) return NULL;
    int ok = 0;
    if (b.len > 0) {
        const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        const uintptr_t lo = (uintptr_t)b.buf & ~(page - 1), hi = (uintptr_t)b.buf + (uintptr_t)b.len;
        Py_BEGIN_ALLOW_THREADS
        ok = madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0;
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&b);
    return PyBool_FromLong(ok);
}

/* count_chars(T, from, to, out) */
static PyObject *py_count_chars(PyObject *self, PyObject *args) {
    Py_buffer T, from, to, out;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &T, &from, &to, &out)) return NULL;
    PyObject *ret = NULL;
    int64_t m = from.len / 8, done = 0;
    if (to.len != from.len) {
        PyErr_SetString(PyExc_ValueError, "from and to differ in length");
    } else if (need(&out, m * 8, "out")) {
        Py_BEGIN_ALLOW_THREADS
        done = sd_count_chars(T.buf, T.len, from.buf, to.buf, m, out.buf);
        Py_END_ALLOW_THREADS
        if (done < m) PyErr_Format(PyExc_ValueError, "range %lld lies outside the text", (long long)done);
        else { ret = Py_None; Py_INCREF(ret); }
    }
    PyBuffer_Release(&T); PyBuffer_Release(&from); PyBuffer_Release(&to); PyBuffer_Release(&out);
    return ret;
}

/* char_values(delta, doc_start, xpos, xval, q, out): see sd_char_values */
static PyObject *py_char_values(PyObject *self, PyObject *args) {
    Py_buffer delta, ds, xpos, xval, q, out;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*w*", &delta, &ds, &xpos, &xval, &q, &out)) return NULL;
    PyObject *ret = NULL;
    int64_t nq = q.len / 8, rc = 0;
    if (xpos.len != xval.len) {
        PyErr_SetString(PyExc_ValueError, "xpos and xval differ in length");
    } else if (need(&out, nq * 8, "out")) {
        Py_BEGIN_ALLOW_THREADS
        rc = sd_char_values(delta.buf, delta.len, ds.buf, ds.len / 8, xpos.buf, xval.buf, xpos.len / 8, q.buf, nq,
                            out.buf);
        Py_END_ALLOW_THREADS
        if (rc == -1) PyErr_SetString(PyExc_ValueError, "char_values: positions must be sorted and inside the shard");
        else if (rc == -2) PyErr_SetString(PyExc_ValueError, "char_values: an escaped delta has no exception");
        else { ret = Py_None; Py_INCREF(ret); }
    }
    PyBuffer_Release(&delta); PyBuffer_Release(&ds); PyBuffer_Release(&xpos); PyBuffer_Release(&xval);
    PyBuffer_Release(&q); PyBuffer_Release(&out);
    return ret;
}

/* regions(anchors, offsets, k, L, starts, ends) -> number of regions */
static PyObject *py_regions(PyObject *self, PyObject *args) {
    Py_buffer a, off, starts, ends;
    long long k, L;
    if (!PyArg_ParseTuple(args, "y*y*LLw*w*", &a, &off, &k, &L, &starts, &ends)) return NULL;
    PyObject *ret = NULL;
    int64_t na = a.len / 8, ndocs = off.len / 8 - 1, r = 0;
    if (k < 1 || k > L) {
        PyErr_SetString(PyExc_ValueError, "need 1 <= k <= L");
    } else if (ndocs < 1 && na > 0) {
        PyErr_SetString(PyExc_ValueError, "anchors without documents");
    } else if (need(&starts, na * 8, "starts") && need(&ends, na * 8, "ends")) {
        Py_BEGIN_ALLOW_THREADS
        r = sd_regions(a.buf, na, off.buf, ndocs, k, L, starts.buf, ends.buf);
        Py_END_ALLOW_THREADS
        ret = PyLong_FromLongLong(r);
    }
    PyBuffer_Release(&a); PyBuffer_Release(&off); PyBuffer_Release(&starts); PyBuffer_Release(&ends);
    return ret;
}

/* gather_regions(T, es, starts, ends, out); sizes checked in native.py, bounds here */
static PyObject *py_gather_regions(PyObject *self, PyObject *args) {
    Py_buffer T, starts, ends, out;
    int es;
    if (!PyArg_ParseTuple(args, "y*iy*y*w*", &T, &es, &starts, &ends, &out)) return NULL;
    PyObject *ret = NULL;
    int64_t nr = starts.len / 8, total = 0, bad = 0;
    const int64_t *s = starts.buf, *e = ends.buf, n = T.len / es;
    for (int64_t r = 0; r < nr; r++) {
        if (s[r] < 0 || e[r] < s[r] || e[r] > n) bad = 1;
        total += e[r] - s[r];
    }
    if (bad || ends.len != starts.len) {
        PyErr_SetString(PyExc_ValueError, "regions must lie within the tokens");
    } else if (need(&out, total * es, "out")) {
        Py_BEGIN_ALLOW_THREADS
        sd_gather_regions(T.buf, es, s, e, nr, out.buf);
        Py_END_ALLOW_THREADS
        ret = Py_None; Py_INCREF(ret);
    }
    PyBuffer_Release(&T); PyBuffer_Release(&starts); PyBuffer_Release(&ends); PyBuffer_Release(&out);
    return ret;
}

/* runs in a stream: windows whose wl is below L start one */
static int64_t count_runs(const uint16_t *wl, int64_t nw, int64_t L) {
    int64_t runs = 0;
    for (int64_t j = 0; j < nw; j++) runs += (j == 0 || wl[j] < L);
    return runs;
}

/* The streams of merge and merge_lookup, each (tokens, wpos, wpos64, wl, run_gid, run_gid64),
 * checked and set in st (4 buffers a stream in bufs; *got: how many streams hold buffers to
 * release). *queries: the distinct windows of the streams from q0 on. 0, or -1 with the error set. */
static int parse_streams(PyObject *list, sd_stream *st, Py_buffer *bufs, Py_ssize_t *got, int es, int64_t L,
                         Py_ssize_t q0, int64_t *queries) {
    Py_ssize_t k = PyList_GET_SIZE(list);
    *queries = 0;
    if (L < 1 || L > 65535) { PyErr_SetString(PyExc_ValueError, "L must be in 1..65535"); return -1; }
    if (es != 1 && es != 2 && es != 4) {
        PyErr_SetString(PyExc_ValueError, "tokens must be 1, 2 or 4 bytes wide");
        return -1;
    }
    for (Py_ssize_t s = 0; s < k; s++) {
        int wpos64, run_gid64;
        Py_buffer *b = &bufs[4 * s];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(list, s), "y*y*py*w*p", &b[0], &b[1], &wpos64, &b[2], &b[3], &run_gid64))
            return -1;
        *got = s + 1;
        int64_t nw = b[2].len / 2;
        if (!need(&b[1], nw * W(wpos64), "wpos")) return -1;
        st[s] = (sd_stream){b[0].buf, b[1].buf, wpos64, b[2].buf, nw, b[3].buf, run_gid64};
        /* every window must lie inside the token buffer */
        for (int64_t j = 0; j < nw; j++) {
            int64_t p = idx_at(b[1].buf, j, wpos64);
            if (p < 0 || (p + L) * es > b[0].len) {
                PyErr_Format(PyExc_ValueError, "stream %zd: window at %lld runs past the tokens", s, (long long)p);
                return -1;
            }
        }
        int64_t runs = count_runs(b[2].buf, nw, L);
        if (!need(&b[3], runs * W(run_gid64), "run_gid")) return -1;
        if (s >= q0) *queries += runs;
    }
    return 0;
}

/* merge(streams, es, L): streams is a list of (tokens, wpos, wpos64, wl, run_gid, run_gid64). */
static PyObject *py_merge(PyObject *self, PyObject *args) {
    PyObject *list;
    int es;
    long long L;
    if (!PyArg_ParseTuple(args, "O!iL", &PyList_Type, &list, &es, &L)) return NULL;
    Py_ssize_t k = PyList_GET_SIZE(list);
    sd_stream *st = calloc((size_t)(k ? k : 1), sizeof(sd_stream));
    Py_buffer *bufs = calloc((size_t)(4 * (k ? k : 1)), sizeof(Py_buffer));
    Py_ssize_t got = 0;
    PyObject *ret = NULL;
    if (!st || !bufs) { PyErr_NoMemory(); goto done; }
    int64_t queries;
    if (parse_streams(list, st, bufs, &got, es, L, k, &queries) < 0) goto done;
    int64_t G;
    Py_BEGIN_ALLOW_THREADS
    G = sd_merge(st, (int)k, es, L);
    Py_END_ALLOW_THREADS
    if (G < 0) PyErr_NoMemory();
    else ret = PyLong_FromLongLong(G);
done:
    for (Py_ssize_t s = 0; s < got; s++)
        for (int j = 0; j < 4; j++) PyBuffer_Release(&bufs[4 * s + j]);
    free(st); free(bufs);
    return ret;
}

/* merge_lookup(streams, es, L, q0, refs) -> (groups, found per reference): streams as merge
 * takes them; refs a list of (RT, rpos, rpos64, rwl, heads, ends, gid, gid64), heads and ends
 * int64 and gid (int64 or int32) with room for the query streams' distinct windows. */
static PyObject *py_merge_lookup(PyObject *self, PyObject *args) {
    PyObject *list, *rlist;
    int es, q0;
    long long L;
    if (!PyArg_ParseTuple(args, "O!iLiO!", &PyList_Type, &list, &es, &L, &q0, &PyList_Type, &rlist)) return NULL;
    Py_ssize_t k = PyList_GET_SIZE(list), nr = PyList_GET_SIZE(rlist);
    sd_stream *st = calloc((size_t)(k ? k : 1), sizeof(sd_stream));
    sd_ref *rf = calloc((size_t)(nr ? nr : 1), sizeof(sd_ref));
    Py_buffer *bufs = calloc((size_t)(4 * (k ? k : 1)), sizeof(Py_buffer));
    Py_buffer *rbufs = calloc((size_t)(7 * (nr ? nr : 1)), sizeof(Py_buffer));
    Py_ssize_t got = 0, rgot = 0;
    PyObject *ret = NULL;
    int64_t queries = 0;
    if (!st || !rf || !bufs || !rbufs) { PyErr_NoMemory(); goto done; }
    if (q0 < 0 || q0 > k) { PyErr_SetString(PyExc_ValueError, "q0 must be a stream index"); goto done; }
    if (parse_streams(list, st, bufs, &got, es, L, q0, &queries) < 0) goto done;
    for (Py_ssize_t j = 0; j < nr; j++) {
        int rpos64, gid64;
        Py_buffer *b = &rbufs[7 * j];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(rlist, j), "y*y*py*w*w*w*p", &b[0], &b[1], &rpos64, &b[2], &b[3], &b[4],
                              &b[5], &gid64))
            goto done;
        rgot = j + 1;
        int64_t nw = b[2].len / 2;
        if (!need(&b[1], nw * W(rpos64), "reference wpos") || !need(&b[3], queries * 8, "heads") ||
            !need(&b[4], queries * 8, "ends") || !need(&b[5], queries * W(gid64), "gid"))
            goto done;
        rf[j] = (sd_ref){b[0].buf, b[0].len / es, b[1].buf, rpos64, b[2].buf, nw, b[3].buf, b[4].buf, b[5].buf, gid64, 0};
    }
    int64_t G;
    Py_BEGIN_ALLOW_THREADS
    G = sd_merge_lookup(st, (int)k, q0, es, L, rf, (int)nr);
    Py_END_ALLOW_THREADS
    if (G == -1) PyErr_NoMemory();
    else if (G < 0) PyErr_SetString(PyExc_ValueError, "merge_lookup: a reference window runs past its tokens");
    else {
        ret = PyTuple_New(1 + nr);
        if (ret) {
            PyTuple_SET_ITEM(ret, 0, PyLong_FromLongLong(G));
            for (Py_ssize_t j = 0; j < nr; j++) PyTuple_SET_ITEM(ret, 1 + j, PyLong_FromLongLong(rf[j].found));
        }
    }
done:
    for (Py_ssize_t s = 0; s < got; s++)
        for (int j = 0; j < 4; j++) PyBuffer_Release(&bufs[4 * s + j]);
    for (Py_ssize_t s = 0; s < rgot; s++)
        for (int j = 0; j < 6; j++) PyBuffer_Release(&rbufs[7 * s + j]);
    free(st); free(rf); free(bufs); free(rbufs);
    return ret;
}

static PyObject *py_scatter(PyObject *self, PyObject *args) {
    Py_buffer wpos, wl, run_gid, gid;
    int wpos64, run_gid64, gid64;
    long long L;
    if (!PyArg_ParseTuple(args, "y*py*Ly*pw*p", &wpos, &wpos64, &wl, &L, &run_gid, &run_gid64, &gid, &gid64))
        return NULL;
    PyObject *ret = NULL;
    int64_t nw = wl.len / 2, n = gid.len / W(gid64);
    int ok = need(&wpos, nw * W(wpos64), "wpos") && need(&run_gid, count_runs(wl.buf, nw, L) * W(run_gid64), "run_gid");
    for (int64_t j = 0; ok && j < nw; j++) {
        int64_t p = idx_at(wpos.buf, j, wpos64);
        if (p < 0 || p >= n) { PyErr_SetString(PyExc_ValueError, "window position outside gid"); ok = 0; }
    }
    if (ok) {
        int64_t written;
        Py_BEGIN_ALLOW_THREADS
        written = sd_scatter(wpos.buf, wpos64, wl.buf, nw, L, run_gid.buf, run_gid64, gid.buf, gid64);
        Py_END_ALLOW_THREADS
        ret = PyLong_FromLongLong(written);
    }
    PyBuffer_Release(&wpos); PyBuffer_Release(&wl); PyBuffer_Release(&run_gid); PyBuffer_Release(&gid);
    return ret;
}

/* pair_gid(gid, gid64, d, offsets, w, groups, shift, part, start, keys, alow, keys2, out, out64) -> ids
 * made. offsets: int64, nr + 1 entries from 0 to n, increasing (empty with w = 0); part
 * (int64, (groups >> shift) + 2 entries) is filled here with the parts' starts. keys, alow
 * and keys2 are checked against the pairs' and the largest part's counts. */
static PyObject *py_pair_gid(PyObject *self, PyObject *args) {
    Py_buffer gid, offsets, part, start, keys, alow, keys2, out;
    int gid64, out64, shift;
    long long d, w, groups;
    if (!PyArg_ParseTuple(args, "y*pLy*LLiw*w*w*w*w*w*p", &gid, &gid64, &d, &offsets, &w, &groups, &shift, &part,
                          &start, &keys, &alow, &keys2, &out, &out64))
        return NULL;
    PyObject *ret = NULL;
    const int64_t n = gid.len / W(gid64);
    int64_t nparts = 0, m = 0, largest = 0;
    int ok = 1;
    const int64_t nr = offsets.len / 8 - 1, *ob = offsets.buf;
    if (groups < 0 || groups > ((int64_t)1 << 32) || n >= ((int64_t)1 << 32) || d < 0 || w < 0 || shift < 0 ||
        shift > 24) {
        PyErr_SetString(PyExc_ValueError, "pair_gid: groups outside 0..2^32, 2^32 positions or more, d or w below 0 "
                                          "or shift outside 0..24");
        ok = 0;
    } else {
        nparts = (groups >> shift) + 1;
    }
    if (ok && w) {  /* offsets from 0 to n, never decreasing */
        ok = nr >= 0 && ob[0] == 0 && ob[nr] == n;
        for (int64_t r = 0; ok && r < nr; r++) ok = ob[r] <= ob[r + 1];
        if (!ok) PyErr_SetString(PyExc_ValueError, "pair_gid: offsets not increasing from 0 to len(gid)");
    }
    ok = ok && need(&part, (nparts + 1) * 8, "part") &&
         need(&start, (((int64_t)1 << shift) + 1) * 8, "start") && need(&out, n * W(out64), "out");
    int64_t *pt = part.buf;
    if (ok) memset(pt, 0, (nparts + 1) * 8);
    int64_t r = 0;
    for (int64_t p = 0; ok && p + d < n; p++) {
        const int64_t x = idx_at(gid.buf, p, gid64), y = idx_at(gid.buf, p + d, gid64);
        if (x >= groups || y >= groups) {
            PyErr_SetString(PyExc_ValueError, "pair_gid: a group id past groups");
            ok = 0;
        } else if (x >= 0 && y >= 0 && (!w || in_one(ob, nr, &r, p, w))) {
            pt[(x >> shift) + 1]++;
            m++;
        }
    }
    for (int64_t q = 0; ok && q < nparts; q++) {
        if (pt[q + 1] > largest) largest = pt[q + 1];
        pt[q + 1] += pt[q];
    }
    ok = ok && need(&keys, m * 8, "keys") && need(&alow, m * 4, "alow") && need(&keys2, largest * 8, "keys2");
    if (ok) {
        int64_t ids;
        Py_BEGIN_ALLOW_THREADS
        ids = sd_pair_gid(gid.buf, gid64, n, d, ob, nr, w, shift, pt, nparts, start.buf, keys.buf, alow.buf, keys2.buf,
                          out.buf, out64);
        Py_END_ALLOW_THREADS
        ret = PyLong_FromLongLong(ids);
    }
    Py_buffer *all[] = {&gid, &offsets, &part, &start, &keys, &alow, &keys2, &out};
    for (int i = 0; i < 8; i++) PyBuffer_Release(all[i]);
    return ret;
}

/* scatter_first_two(wpos, wpos64, wl, L, run_gid, run_gid64, gid, gid64, out_g, out_p1, out_p2, out64)
 * -> (written, listed); each out_* holds at least the runs whose id is >= 0 */
static PyObject *py_scatter_first_two(PyObject *self, PyObject *args) {
    Py_buffer wpos, wl, run_gid, gid, og, o1, o2;
    int wpos64, run_gid64, gid64, out64;
    long long L;
    if (!PyArg_ParseTuple(args, "y*py*Ly*pw*pw*w*w*p", &wpos, &wpos64, &wl, &L, &run_gid, &run_gid64, &gid, &gid64,
                          &og, &o1, &o2, &out64))
        return NULL;
    PyObject *ret = NULL;
    int64_t nw = wl.len / 2, n = gid.len / W(gid64), runs = count_runs(wl.buf, nw, L), lists = 0;
    int ok = need(&wpos, nw * W(wpos64), "wpos") && need(&run_gid, runs * W(run_gid64), "run_gid");
    for (int64_t r = 0; ok && r < runs; r++) lists += idx_at(run_gid.buf, r, run_gid64) >= 0;
    ok = ok && need(&og, lists * W(out64), "out_g") && need(&o1, lists * W(out64), "out_p1") &&
         need(&o2, lists * W(out64), "out_p2");
    for (int64_t j = 0; ok && j < nw; j++) {
        int64_t p = idx_at(wpos.buf, j, wpos64);
        if (p < 0 || p >= n) { PyErr_SetString(PyExc_ValueError, "window position outside gid"); ok = 0; }
    }
    if (ok) {
        int64_t written, listed = 0;
        Py_BEGIN_ALLOW_THREADS
        written = sd_scatter_first_two(wpos.buf, wpos64, wl.buf, nw, L, run_gid.buf, run_gid64, gid.buf, gid64, og.buf,
                                       o1.buf, o2.buf, out64, &listed);
        Py_END_ALLOW_THREADS
        ret = Py_BuildValue("LL", (long long)written, (long long)listed);
    }
    PyBuffer_Release(&wpos); PyBuffer_Release(&wl); PyBuffer_Release(&run_gid); PyBuffer_Release(&gid);
    PyBuffer_Release(&og); PyBuffer_Release(&o1); PyBuffer_Release(&o2);
    return ret;
}

/* merge_first_two(g, q1, q2, is64, rstart|None, roff, base, first, second) */
static PyObject *py_merge_first_two(PyObject *self, PyObject *args) {
    Py_buffer g, q1, q2, roff, first, second;
    PyObject *rs;
    long long base;
    int is64;
    if (!PyArg_ParseTuple(args, "y*y*y*pOy*Lw*w*", &g, &q1, &q2, &is64, &rs, &roff, &base, &first, &second))
        return NULL;
    Py_buffer rstart = {0};
    int have = rs != Py_None;
    if (have && PyObject_GetBuffer(rs, &rstart, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&g); PyBuffer_Release(&q1); PyBuffer_Release(&q2); PyBuffer_Release(&roff);
        PyBuffer_Release(&first); PyBuffer_Release(&second);
        return NULL;
    }
    PyObject *ret = NULL;
    int64_t m = g.len / W(is64), nr = roff.len / 8 - 1, groups = first.len / 8;
    int rc = 0;
    if (q1.len != g.len || q2.len != g.len || second.len != first.len || nr < 1 || (have && rstart.len < nr * 8)) {
        PyErr_SetString(PyExc_ValueError, "merge_first_two: arrays differ in length");
    } else {
        Py_BEGIN_ALLOW_THREADS
        rc = sd_merge_first_two(g.buf, q1.buf, q2.buf, is64, m, have ? rstart.buf : NULL, roff.buf, nr, base, groups,
                                first.buf, second.buf);
        Py_END_ALLOW_THREADS
        if (rc == -2) PyErr_NoMemory();
        else if (rc) PyErr_SetString(PyExc_ValueError, "merge_first_two: a group id or position out of range");
        else { ret = Py_None; Py_INCREF(ret); }
    }
    if (have) PyBuffer_Release(&rstart);
    PyBuffer_Release(&g); PyBuffer_Release(&q1); PyBuffer_Release(&q2); PyBuffer_Release(&roff);
    PyBuffer_Release(&first); PyBuffer_Release(&second);
    return ret;
}



/* The runs of the shard that m gid entries cover (kernels.h): int64 starts (nr) and
 * offsets (nr+1) from 0 to m, each run inside the shard and after the one before. */
static int runs_ok(Py_buffer *rstart, Py_buffer *roff, int64_t m, int64_t n_shard) {
    const int64_t nr = rstart->len / 8, *st = rstart->buf, *of = roff->len ? roff->buf : NULL;
    int ok = nr >= 1 && roff->len == (nr + 1) * 8 && of[0] == 0 && of[nr] == m;
    for (int64_t r = 0, end = 0; ok && r < nr; r++) {
        const int64_t len = of[r + 1] - of[r];
        ok = len >= 0 && st[r] >= end && st[r] + len <= n_shard;
        end = st[r] + len;
    }
    if (!ok) PyErr_SetString(PyExc_ValueError, "runs must cover the gid entries in order, inside the shard");
    return ok;
}

static PyObject *py_select(PyObject *args, int first_mode) {
    Py_buffer gid, rstart, roff, ds, a1, a2, removed, dropped, spd, sps, spe, spr;
    int gid64;
    long long L, base;
    double drop;
    if (!PyArg_ParseTuple(args, "y*py*y*y*LdLw*w*w*w*w*w*w*w*", &gid, &gid64, &rstart, &roff, &ds, &L, &drop, &base,
                          &a1, &a2, &removed, &dropped, &spd, &sps, &spe, &spr))
        return NULL;
    PyObject *ret = NULL;
    int64_t ndocs = ds.len / 8 - 1, m = gid.len / W(gid64), nsp = 0;
    const int64_t *d = ds.buf;
    int ok = ndocs >= 0 && need(&removed, ndocs * 8, "removed") && need(&dropped, ndocs, "dropped");
    /* spans are disjoint runs of at least L of the shard's tokens, each holding an entry */
    int64_t cap = L > 0 && ndocs >= 0 ? d[ndocs] / L + 1 : m + 1;
    if (cap > m) cap = m;
    ok = ok && need(&spd, cap * 8, "sp_doc") && need(&sps, cap * 8, "sp_start") &&
         need(&spe, cap * 8, "sp_end") && need(&spr, cap * 8, "sp_src");
    if (ok && first_mode) ok = need(&a2, m * 8, "scratch");
    if (ok && (d[0] != 0 || (ndocs == 0 && m > 0))) {
        PyErr_SetString(PyExc_ValueError, "doc offsets must start at 0 and cover the gid entries");
        ok = 0;
    }
    ok = ok && runs_ok(&rstart, &roff, m, ndocs >= 0 ? d[ndocs] : 0);
    if (ok && L < 1) { PyErr_SetString(PyExc_ValueError, "L must be >= 1"); ok = 0; }
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        if (first_mode)
            nsp = sd_select_first(gid.buf, gid64, m, rstart.buf, roff.buf, d, ndocs, L, drop, base, a1.buf, a2.buf,
                                  removed.buf, dropped.buf, spd.buf, sps.buf, spe.buf, spr.buf);
        else
            nsp = sd_select_none(gid.buf, gid64, m, rstart.buf, roff.buf, d, ndocs, L, drop, base, a1.buf, a2.buf,
                                 removed.buf, dropped.buf, spd.buf, sps.buf, spe.buf, spr.buf);
        Py_END_ALLOW_THREADS
        ret = PyLong_FromLongLong(nsp);
    }
    Py_buffer *all[] = {&gid, &rstart, &roff, &ds, &a1, &a2, &removed, &dropped, &spd, &sps, &spe, &spr};
    for (int i = 0; i < 12; i++) PyBuffer_Release(all[i]);
    return ret;
}

static PyObject *py_select_first(PyObject *self, PyObject *args) { return py_select(args, 1); }
static PyObject *py_select_none(PyObject *self, PyObject *args) { return py_select(args, 0); }

static PyObject *py_first_two(PyObject *self, PyObject *args) {
    Py_buffer gid, rstart, roff, first, second;
    int gid64;
    long long base, n_shard;
    if (!PyArg_ParseTuple(args, "y*py*y*LLw*w*", &gid, &gid64, &rstart, &roff, &n_shard, &base, &first, &second))
        return NULL;
    int64_t m = gid.len / W(gid64);
    PyObject *ret = NULL;
    if (runs_ok(&rstart, &roff, m, n_shard)) {
        Py_BEGIN_ALLOW_THREADS
        sd_first_two(gid.buf, gid64, m, rstart.buf, roff.buf, base, first.buf, second.buf);
        Py_END_ALLOW_THREADS
        ret = Py_None; Py_INCREF(ret);
    }
    PyBuffer_Release(&gid); PyBuffer_Release(&rstart); PyBuffer_Release(&roff);
    PyBuffer_Release(&first); PyBuffer_Release(&second);
    return ret;
}

static PyObject *py_spm_pieces(PyObject *self, PyObject *args) {
    Py_buffer buf, ids, begin, end;
    if (!PyArg_ParseTuple(args, "y*w*w*w*", &buf, &ids, &begin, &end)) return NULL;
    int64_t cap = ids.len / 4;
    if (begin.len / 8 < cap) cap = begin.len / 8;
    if (end.len / 8 < cap) cap = end.len / 8;
    int64_t k;
    Py_BEGIN_ALLOW_THREADS
    k = sd_spm_pieces(buf.buf, buf.len, cap, ids.buf, begin.buf, end.buf);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf); PyBuffer_Release(&ids); PyBuffer_Release(&begin); PyBuffer_Release(&end);
    if (k == -1) { PyErr_SetString(PyExc_ValueError, "malformed sentencepiece proto"); return NULL; }
    if (k == -2) { PyErr_SetString(PyExc_ValueError, "more pieces than the output arrays hold"); return NULL; }
    return PyLong_FromLongLong(k);
}

/* ---- document-level kernels (minhash.h) ----
 * A document set is (A, B, starts, ends): byte ranges into A, or into B for positions >= len(A). */
typedef struct {
    Py_buffer A, B, starts, ends;
    int got;
    sd_docs docs;
} docs_args;

static void docs_release(docs_args *a) {
    Py_buffer *all[] = {&a->A, &a->B, &a->starts, &a->ends};
    for (int i = 0; i < a->got; i++) PyBuffer_Release(all[i]);
    a->got = 0;
}

/* Parses the four buffers from the tuple at `i` and checks every range lies inside A or B. */
static int docs_parse(PyObject *tuple, docs_args *a) {
    a->got = 0;
    if (!PyArg_ParseTuple(tuple, "y*y*y*y*", &a->A, &a->B, &a->starts, &a->ends)) return 0;
    a->got = 4;
    if (a->starts.len != a->ends.len || a->starts.len % 8) {
        PyErr_SetString(PyExc_ValueError, "starts and ends must be int64 arrays of one length");
        return 0;
    }
    int64_t n = a->starts.len / 8, lenA = a->A.len, lenB = a->B.len;
    const int64_t *s = a->starts.buf, *e = a->ends.buf;
    for (int64_t d = 0; d < n; d++) {
        int ok = s[d] >= 0 && s[d] <= e[d] &&
                 ((s[d] < lenA && e[d] <= lenA) || (s[d] >= lenA && e[d] <= lenA + lenB) || s[d] == e[d]);
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "document %lld: range %lld..%lld outside the text buffers",
                         (long long)d, (long long)s[d], (long long)e[d]);
            return 0;
        }
    }
    a->docs = (sd_docs){a->A.buf, lenA, a->B.buf, lenB, s, e, n};
    return 1;
}

static int64_t docs_bytes(const sd_docs *d) {
    int64_t t = 0;
    for (int64_t i = 0; i < d->ndocs; i++) t += d->ends[i] - d->starts[i];
    return t;
}

static PyObject *py_doc_normalize(PyObject *self, PyObject *args) {
    PyObject *docs;
    int lower;
    Py_buffer out, offs;
    if (!PyArg_ParseTuple(args, "O!pw*w*", &PyTuple_Type, &docs, &lower, &out, &offs)) return NULL;
    docs_args a;
    PyObject *ret = NULL;
    if (docs_parse(docs, &a) && need(&out, docs_bytes(&a.docs), "out") &&
        need(&offs, (a.docs.ndocs + 1) * 8, "out_offsets")) {
        Py_BEGIN_ALLOW_THREADS
        sd_normalize(&a.docs, lower, out.buf, offs.buf);
        Py_END_ALLOW_THREADS
        ret = Py_None; Py_INCREF(ret);
    }
    docs_release(&a);
    PyBuffer_Release(&out); PyBuffer_Release(&offs);
    return ret;
}

static PyObject *py_doc_nonascii(PyObject *self, PyObject *args) {
    PyObject *docs;
    Py_buffer out;
    if (!PyArg_ParseTuple(args, "O!w*", &PyTuple_Type, &docs, &out)) return NULL;
    docs_args a;
    PyObject *ret = NULL;
    if (docs_parse(docs, &a) && need(&out, a.docs.ndocs, "nonascii")) {
        Py_BEGIN_ALLOW_THREADS
        sd_nonascii(&a.docs, out.buf);
        Py_END_ALLOW_THREADS
        ret = Py_None; Py_INCREF(ret);
    }
    docs_release(&a);
    PyBuffer_Release(&out);
    return ret;
}

static int shingle_args_ok(int mode, int ngram) {
    if ((mode != 0 && mode != 1) || ngram < 1) {
        PyErr_SetString(PyExc_ValueError, "mode must be 0 (words) or 1 (characters) and ngram >= 1");
        return 0;
    }
    return 1;
}

static PyObject *py_minhash(PyObject *self, PyObject *args) {
    PyObject *docs;
    int lower, mode, ngram;
    unsigned long long seed;
    Py_buffer seeds, sig, nsh;
    if (!PyArg_ParseTuple(args, "O!piiKy*w*w*", &PyTuple_Type, &docs, &lower, &mode, &ngram, &seed, &seeds, &sig,
                          &nsh))
        return NULL;
    docs_args a;
    PyObject *ret = NULL;
    int P = (int)(seeds.len / 4), rc = 0;
    if (docs_parse(docs, &a) && shingle_args_ok(mode, ngram) && need(&sig, a.docs.ndocs * P * 4, "sig") &&
        need(&nsh, a.docs.ndocs * 8, "nshingles")) {
        Py_BEGIN_ALLOW_THREADS
        rc = sd_minhash(&a.docs, lower, mode, ngram, seed, seeds.buf, P, sig.buf, nsh.buf);
        Py_END_ALLOW_THREADS
        if (rc) PyErr_NoMemory();
        else { ret = Py_None; Py_INCREF(ret); }
    }
    docs_release(&a);
    PyBuffer_Release(&seeds); PyBuffer_Release(&sig); PyBuffer_Release(&nsh);
    return ret;
}

static PyObject *py_shingle_sets(PyObject *self, PyObject *args) {
    PyObject *docs;
    int lower, mode, ngram;
    unsigned long long seed;
    Py_buffer out, offs, counts;
    if (!PyArg_ParseTuple(args, "O!piiKw*y*w*", &PyTuple_Type, &docs, &lower, &mode, &ngram, &seed, &out, &offs,
                          &counts))
        return NULL;
    docs_args a;
    PyObject *ret = NULL;
    int ok = docs_parse(docs, &a) && shingle_args_ok(mode, ngram) && need(&offs, (a.docs.ndocs + 1) * 8, "offsets") &&
             need(&counts, a.docs.ndocs * 8, "counts");
    if (ok) {
        const int64_t *o = offs.buf;
        for (int64_t d = 0; d < a.docs.ndocs && ok; d++)
            if (o[d] < 0 || o[d] > o[d + 1] || o[d + 1] * 8 > out.len) {
                PyErr_SetString(PyExc_ValueError, "shingle set offsets outside the output buffer");
                ok = 0;
            }
    }
    if (ok) {
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = sd_shingle_sets(&a.docs, lower, mode, ngram, seed, out.buf, offs.buf, counts.buf);
        Py_END_ALLOW_THREADS
        if (rc) PyErr_NoMemory();
        else { ret = Py_None; Py_INCREF(ret); }
    }
    docs_release(&a);
    PyBuffer_Release(&out); PyBuffer_Release(&offs); PyBuffer_Release(&counts);
    return ret;
}

static PyObject *py_jaccard_pairs(PyObject *self, PyObject *args) {
    Py_buffer h, off, cnt, pi, pj, out;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*w*", &h, &off, &cnt, &pi, &pj, &out)) return NULL;
    PyObject *ret = NULL;
    int64_t nsets = off.len / 8, np_ = pi.len / 8, nh = h.len / 8;
    int ok = cnt.len == off.len && pj.len == pi.len && need(&out, np_ * 8, "out");
    if (!ok && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "jaccard_pairs: mismatched array lengths");
    const int64_t *o = off.buf, *c = cnt.buf, *a = pi.buf, *b = pj.buf;
    for (int64_t x = 0; ok && x < nsets; x++)
        if (o[x] < 0 || c[x] < 0 || o[x] + c[x] > nh) {
            PyErr_SetString(PyExc_ValueError, "jaccard_pairs: a set runs outside the hashes");
            ok = 0;
        }
    for (int64_t k = 0; ok && k < np_; k++)
        if (a[k] < 0 || a[k] >= nsets || b[k] < 0 || b[k] >= nsets) {
            PyErr_SetString(PyExc_ValueError, "jaccard_pairs: pair index out of range");
            ok = 0;
        }
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        sd_jaccard_pairs(h.buf, o, c, a, b, np_, out.buf);
        Py_END_ALLOW_THREADS
        ret = Py_None; Py_INCREF(ret);
    }
    Py_buffer *all[] = {&h, &off, &cnt, &pi, &pj, &out};
    for (int i = 0; i < 6; i++) PyBuffer_Release(all[i]);
    return ret;
}

/* cluster_cut(n, ei, ej, esim, by_rank, floor, kind, row, sig, width, h, off, cnt,
 *             kept, member, cluster, msim) -> (members, kept, asked) */
static PyObject *py_cluster_cut(PyObject *self, PyObject *args) {
    long long n, width;
    int kind;
    Py_buffer ei, ej, es, rk, fl, row, sig, h, off, cnt, kept, mem, clu, ms;
    if (!PyArg_ParseTuple(args, "Ly*y*y*y*y*iy*y*Ly*y*y*w*w*w*w*", &n, &ei, &ej, &es, &rk, &fl, &kind, &row, &sig,
                          &width, &h, &off, &cnt, &kept, &mem, &clu, &ms))
        return NULL;
    PyObject *ret = NULL;
    int64_t E = ei.len / 8, rows = 0;
    int ok = n >= 0 && ej.len == ei.len && es.len == ei.len && rk.len >= n * 8 && fl.len >= n * 8 &&
             need(&kept, (n / 2) * 8, "kept") && need(&mem, n * 8, "member") && need(&clu, n * 8, "cluster") &&
             need(&ms, n * 8, "msim");
    if (!ok && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "cluster_cut: mismatched array lengths");
    const int64_t *a = ei.buf, *b = ej.buf, *r = row.buf, *o = off.buf, *c = cnt.buf, *br = rk.buf;
    for (int64_t k = 0; ok && k < E; k++)
        if (a[k] < 0 || a[k] >= n || b[k] < 0 || b[k] >= n) {
            PyErr_SetString(PyExc_ValueError, "cluster_cut: edge endpoint out of range");
            ok = 0;
        }
    if (ok) {  /* by_rank is every node once */
        uint8_t *seen = calloc((size_t)(n ? n : 1), 1);
        if (!seen) { PyErr_NoMemory(); ok = 0; }
        for (int64_t x = 0; ok && x < n; x++)
            if (br[x] < 0 || br[x] >= n || seen[br[x]]++) {
                PyErr_SetString(PyExc_ValueError, "cluster_cut: by_rank is not an order of the nodes");
                ok = 0;
            }
        free(seen);
    }
    if (ok && kind != 0) {  /* every row the similarity may read lies in its arrays */
        if (kind == 1 && width > 0) rows = sig.len / 4 / width;
        else if (kind == 2 && off.len == cnt.len) {
            rows = off.len / 8;
            for (int64_t x = 0; ok && x < rows; x++)
                if (o[x] < 0 || c[x] < 0 || o[x] + c[x] > h.len / 8) {
                    PyErr_SetString(PyExc_ValueError, "cluster_cut: a set runs outside the hashes");
                    ok = 0;
                }
        }
        if (ok && (kind < 0 || kind > 2 || row.len < n * 8 || (kind == 1 && width <= 0))) {
            PyErr_SetString(PyExc_ValueError, "cluster_cut: bad similarity arrays");
            ok = 0;
        }
        for (int64_t x = 0; ok && x < n; x++)
            if (r[x] >= rows) {
                PyErr_SetString(PyExc_ValueError, "cluster_cut: a node's row is outside the similarity arrays");
                ok = 0;
            }
    }
    if (ok) {
        sd_similarity S = {kind, r, sig.buf, width, h.buf, o, c};
        int64_t got, nk = 0, asked = 0;
        Py_BEGIN_ALLOW_THREADS
        got = sd_cluster_cut(n, a, b, es.buf, E, rk.buf, fl.buf, &S, kept.buf, &nk, mem.buf, clu.buf, ms.buf, &asked);
        Py_END_ALLOW_THREADS
        if (got == -1) PyErr_NoMemory();
        else if (got == -3) PyErr_SetString(PyExc_ValueError, "cluster_cut: a similarity of a node without a row");
        else ret = Py_BuildValue("LLL", (long long)got, (long long)nk, (long long)asked);
    }
    Py_buffer *all[] = {&ei, &ej, &es, &rk, &fl, &row, &sig, &h, &off, &cnt, &kept, &mem, &clu, &ms};
    for (int i = 0; i < 14; i++) PyBuffer_Release(all[i]);
    return ret;
}

static PyObject *py_components(PyObject *self, PyObject *args) {
    long long n;
    Py_buffer ei, ej, root;
    if (!PyArg_ParseTuple(args, "Ly*y*w*", &n, &ei, &ej, &root)) return NULL;
    PyObject *ret = NULL;
    int64_t E = ei.len / 8;
    int ok = n >= 0 && ej.len == ei.len && need(&root, n * 8, "root");
    if (!ok && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "components: mismatched array lengths");
    const int64_t *a = ei.buf, *b = ej.buf;
    for (int64_t k = 0; ok && k < E; k++)
        if (a[k] < 0 || a[k] >= n || b[k] < 0 || b[k] >= n) {
            PyErr_SetString(PyExc_ValueError, "components: edge endpoint out of range");
            ok = 0;
        }
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        sd_components(n, a, b, E, root.buf);
        Py_END_ALLOW_THREADS
        ret = Py_None; Py_INCREF(ret);
    }
    PyBuffer_Release(&ei); PyBuffer_Release(&ej); PyBuffer_Release(&root);
    return ret;
}

/* sa_range(T, es, sa, is64, P) -> (lo, hi): the suffixes that start with P */
static PyObject *py_sa_range(PyObject *self, PyObject *args) {
    Py_buffer T, sa, P;
    int es, is64;
    if (!PyArg_ParseTuple(args, "y*iy*py*", &T, &es, &sa, &is64, &P)) return NULL;
    PyObject *ret = NULL;
    int64_t n = T.len / es, m = P.len / es, lo = 0, hi = 0;
    if (es != 1 && es != 2 && es != 4) {
        PyErr_SetString(PyExc_ValueError, "tokens must be 1, 2 or 4 bytes wide");
    } else if (P.len % es || m < 1) {
        PyErr_SetString(PyExc_ValueError, "the pattern must be at least one token of the tokens' width");
    } else if (need(&sa, n * W(is64), "sa")) {
        Py_BEGIN_ALLOW_THREADS
        sd_sa_range(T.buf, es, n, sa.buf, is64, P.buf, m, &lo, &hi);
        Py_END_ALLOW_THREADS
        ret = Py_BuildValue("LL", (long long)lo, (long long)hi);
    }
    PyBuffer_Release(&T); PyBuffer_Release(&sa); PyBuffer_Release(&P);
    return ret;
}

/* in_documents(sa, is64, from, to, offsets, m, out) -> count; out (int64) may be empty */
static PyObject *py_in_documents(PyObject *self, PyObject *args) {
    Py_buffer sa, off, out;
    int is64;
    long long from, to, m;
    if (!PyArg_ParseTuple(args, "y*pLLy*Lw*", &sa, &is64, &from, &to, &off, &m, &out)) return NULL;
    PyObject *ret = NULL;
    int64_t nsa = sa.len / W(is64), ndocs = off.len / 8 - 1, count = 0;
    if (from < 0 || to < from || to > nsa) {
        PyErr_SetString(PyExc_ValueError, "in_documents: range outside the suffix array");
    } else if (ndocs < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets must hold at least one entry");
    } else if (m < 1) {
        PyErr_SetString(PyExc_ValueError, "the pattern must be at least one token");
    } else {
        Py_BEGIN_ALLOW_THREADS
        count = sd_in_documents(sa.buf, is64, from, to, off.buf, ndocs, m, out.buf, out.len / 8);
        Py_END_ALLOW_THREADS
        if (count < 0) PyErr_SetString(PyExc_ValueError, "in_documents: a suffix array entry lies outside the tokens");
        else ret = PyLong_FromLongLong(count);
    }
    PyBuffer_Release(&sa); PyBuffer_Release(&off); PyBuffer_Release(&out);
    return ret;
}

/* ---- decontamination (decontaminate.c) */

/* A word table from its three buffers, checked so that no lookup can leave them: every block
 * named by stage1 exists, every folding lies inside `fold`. */
static int dc_table(Py_buffer *s1, Py_buffer *s2, Py_buffer *f, sd_dc_table *t) {
    int64_t nblocks = s2->len / (256 * 4), nfold = f->len / 4;
    if (s1->len != 0x1100 * 2 || s2->len % (256 * 4) || nblocks < 1) {
        PyErr_SetString(PyExc_ValueError, "word table: stage1 needs 0x1100 uint16 entries, stage2 whole blocks");
        return 0;
    }
    const uint16_t *a = s1->buf;
    const uint32_t *b = s2->buf;
    for (int64_t i = 0; i < 0x1100; i++)
        if (a[i] >= nblocks) { PyErr_SetString(PyExc_ValueError, "word table: a block out of range"); return 0; }
    for (int64_t i = 0; i < nblocks * 256; i++) {
        uint32_t len = (b[i] >> 1) & 3;
        if (len && (int64_t)(b[i] >> 8) + len > nfold) {
            PyErr_SetString(PyExc_ValueError, "word table: a folding out of range");
            return 0;
        }
    }
    t->stage1 = s1->buf; t->stage2 = s2->buf; t->fold = f->buf;
    return 1;
}

/* Document ranges inside a text of n bytes. */
static int dc_ranges(Py_buffer *st, Py_buffer *en, int64_t n) {
    if (st->len != en->len || st->len % 8) {
        PyErr_SetString(PyExc_ValueError, "starts and ends differ in length");
        return 0;
    }
    const int64_t *s = st->buf, *e = en->buf;
    for (int64_t i = 0; i < st->len / 8; i++)
        if (s[i] < 0 || e[i] < s[i] || e[i] > n) {
            PyErr_Format(PyExc_ValueError, "document %lld lies outside the text", (long long)i);
            return 0;
        }
    return 1;
}

/* Offsets that never decrease, from 0, ending at most at `limit`. */
static int dc_offsets(Py_buffer *o, int64_t limit, const char *what) {
    const int64_t *x = o->buf;
    int64_t m = o->len / 8;
    int ok = m >= 1 && x[0] >= 0 && x[m - 1] <= limit;
    for (int64_t i = 1; ok && i < m; i++) ok = x[i] >= x[i - 1];
    if (!ok) PyErr_Format(PyExc_ValueError, "%s: offsets out of order or out of range", what);
    return ok;
}

/* dc_words(stage1, stage2, fold, T, starts, ends, word_off, cp_start, cp_end, hash, fold_out, fold_off) -> words */
static PyObject *py_dc_words(PyObject *self, PyObject *args) {
    Py_buffer s1, s2, f, T, st, en, wo, cs, ce, h, fo, foff;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*w*w*w*w*w*w*", &s1, &s2, &f, &T, &st, &en, &wo, &cs, &ce, &h, &fo,
                          &foff))
        return NULL;
    PyObject *ret = NULL;
    sd_dc_table t;
    int64_t nd = st.len / 8, cap = cs.len / 8, got = 0;
    if (dc_table(&s1, &s2, &f, &t) && dc_ranges(&st, &en, T.len) && need(&wo, (nd + 1) * 8, "word_off") &&
        need(&ce, cap * 8, "cp_end") && need(&h, cap * 8, "hash") &&
        (fo.len == 0 || need(&foff, (cap + 1) * 8, "fold_off"))) {
        Py_BEGIN_ALLOW_THREADS
        got = sd_dc_words(&t, T.buf, st.buf, en.buf, nd, wo.buf, cs.buf, ce.buf, h.buf, cap,
                          fo.len ? fo.buf : NULL, foff.buf, fo.len / 4);
        Py_END_ALLOW_THREADS
        if (got < 0) PyErr_SetString(PyExc_ValueError, "dc_words: more words than the outputs hold");
        else ret = PyLong_FromLongLong(got);
    }
    PyBuffer_Release(&s1); PyBuffer_Release(&s2); PyBuffer_Release(&f); PyBuffer_Release(&T);
    PyBuffer_Release(&st); PyBuffer_Release(&en); PyBuffer_Release(&wo); PyBuffer_Release(&cs);
    PyBuffer_Release(&ce); PyBuffer_Release(&h); PyBuffer_Release(&fo); PyBuffer_Release(&foff);
    return ret;
}

/* dc_ngram_keys(hash, word_off, n, keys) */
static PyObject *py_dc_ngram_keys(PyObject *self, PyObject *args) {
    Py_buffer h, wo, k;
    int n;
    if (!PyArg_ParseTuple(args, "y*y*iw*", &h, &wo, &n, &k)) return NULL;
    PyObject *ret = NULL;
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "n must be at least 1");
    } else if (dc_offsets(&wo, h.len / 8, "word_off")) {
        const int64_t *o = wo.buf;
        int64_t nd = wo.len / 8 - 1, total = 0;
        for (int64_t d = 0; d < nd; d++) total += o[d + 1] - o[d] >= n ? o[d + 1] - o[d] - n + 1 : 0;
        if (need(&k, total * 8, "keys")) {
            Py_BEGIN_ALLOW_THREADS
            sd_dc_ngram_keys(h.buf, wo.buf, nd, n, k.buf);
            Py_END_ALLOW_THREADS
            ret = PyLong_FromLongLong(total);
        }
    }
    PyBuffer_Release(&h); PyBuffer_Release(&wo); PyBuffer_Release(&k);
    return ret;
}

/* dc_ngram_same(fold, fold_off, a, b, n, out) */
static PyObject *py_dc_ngram_same(PyObject *self, PyObject *args) {
    Py_buffer f, fo, a, b, out;
    int n;
    if (!PyArg_ParseTuple(args, "y*y*y*y*iw*", &f, &fo, &a, &b, &n, &out)) return NULL;
    PyObject *ret = NULL;
    int64_t m = a.len / 8;
    if (n < 1 || b.len != a.len) {
        PyErr_SetString(PyExc_ValueError, "dc_ngram_same: n < 1 or a and b differ in length");
    } else if (dc_offsets(&fo, f.len / 4, "fold_off") && need(&out, m, "out")) {
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = sd_dc_ngram_same(f.buf, fo.buf, fo.len / 8 - 1, a.buf, b.buf, m, n, out.buf);
        Py_END_ALLOW_THREADS
        if (rc < 0) PyErr_SetString(PyExc_ValueError, "dc_ngram_same: a word index out of range");
        else { ret = Py_None; Py_INCREF(ret); }
    }
    PyBuffer_Release(&f); PyBuffer_Release(&fo); PyBuffer_Release(&a); PyBuffer_Release(&b); PyBuffer_Release(&out);
    return ret;
}

/* dc_scan(stage1, stage2, fold, hash, word, bucket, bbits, filter, fbits, efold, efold_off, n, T, starts, ends,
 *         margin, sp_doc, sp_start, sp_end, sp_ng, hit_doc, hit_ng,
 *         class_of, class_start, class_item, doc_base, class_last, item_last, per_item, found)
 *   -> (documents done, spans, hits); class_of empty: hits kept, not counted */
static PyObject *py_dc_scan(PyObject *self, PyObject *args) {
    Py_buffer s1, s2, f, eh, ew, bk, fl, ef, efo, T, st, en, sd, ss, se, sg, hd, hg, co, cs, ci, cla, il, pi, fd;
    int bbits, fbits, n;
    long long margin, doc_base;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*iy*iy*y*iy*y*y*Lw*w*w*w*w*w*y*y*y*Lw*w*w*w*", &s1, &s2, &f, &eh, &ew,
                          &bk, &bbits, &fl, &fbits, &ef, &efo, &n, &T, &st, &en, &margin, &sd, &ss, &se, &sg, &hd,
                          &hg, &co, &cs, &ci, &doc_base, &cla, &il, &pi, &fd))
        return NULL;
    PyObject *ret = NULL;
    sd_dc_table t;
    int64_t ne = eh.len / 8, nwords = efo.len / 8 - 1, nd = st.len / 8;
    int ok = dc_table(&s1, &s2, &f, &t) && dc_ranges(&st, &en, T.len) && dc_offsets(&efo, ef.len / 4, "efold_off");
    if (ok && (n < 1 || margin < 0 || bbits < 1 || bbits > 40 || fbits < 6 || fbits > 40 || ew.len != eh.len)) {
        PyErr_SetString(PyExc_ValueError, "dc_scan: bad n, margin, bits, or eval arrays of different lengths");
        ok = 0;
    }
    ok = ok && need(&bk, ((1LL << bbits) + 1) * 8, "bucket") && need(&fl, (1LL << fbits) / 8, "filter");
    if (ok) { /* the buckets cover the n-grams in order, and every n-gram's words exist */
        const int64_t *b = bk.buf, *w = ew.buf;
        for (int64_t i = 0; ok && i <= (1LL << bbits); i++) ok = b[i] >= (i ? b[i - 1] : 0) && b[i] <= ne;
        for (int64_t i = 0; ok && i < ne; i++) ok = w[i] >= 0 && w[i] + n <= nwords;
        if (!ok) PyErr_SetString(PyExc_ValueError, "dc_scan: eval buckets or words out of range");
    }
    int64_t spcap = sd.len / 8, hcap = hd.len / 8;
    ok = ok && need(&ss, spcap * 8, "sp_start") && need(&se, spcap * 8, "sp_end") && need(&sg, spcap * 8, "sp_ng") &&
         need(&hg, hcap * 8, "hit_ng");
    sd_dc_classes cl = {co.buf, cs.buf, ci.buf, doc_base, cla.buf, il.buf, pi.buf, fd.buf};
    int counted = co.len > 0;
    if (ok && counted) { /* every class and item index stays inside its buffer */
        int64_t ncl = cs.len / 8 - 1, nit = pi.len / 8;
        const int64_t *c = co.buf, *b = cs.buf, *it = ci.buf;
        ok = co.len == ne * 8 && fd.len >= ne && ncl >= 0 && cla.len >= ncl * 8 && il.len >= nit * 8 && doc_base >= 0;
        for (int64_t i = 0; ok && i < ne; i++) ok = c[i] >= 0 && c[i] < ncl;
        for (int64_t i = 0; ok && i <= ncl; i++) ok = b[i] >= (i ? b[i - 1] : 0) && b[i] <= ci.len / 8;
        for (int64_t i = 0; ok && i < ci.len / 8; i++) ok = it[i] >= 0 && it[i] < nit;
        if (!ok) PyErr_SetString(PyExc_ValueError, "dc_scan: eval classes out of range");
    }
    if (ok) {
        sd_dc_evalset e = {eh.buf, ew.buf, ne, bk.buf, bbits, fl.buf, fbits, ef.buf, efo.buf, n};
        int64_t done, nsp = 0, nhit = 0;
        Py_BEGIN_ALLOW_THREADS
        done = sd_dc_scan(&t, &e, T.buf, st.buf, en.buf, nd, margin, sd.buf, ss.buf, se.buf, sg.buf, spcap, &nsp,
                          hd.buf, hg.buf, hcap, &nhit, counted ? &cl : NULL);
        Py_END_ALLOW_THREADS
        if (done < 0) PyErr_NoMemory();
        else ret = Py_BuildValue("LLL", (long long)done, (long long)nsp, (long long)nhit);
    }
    Py_buffer *all[] = {&s1, &s2, &f, &eh, &ew, &bk, &fl, &ef, &efo, &T, &st, &en, &sd, &ss, &se, &sg, &hd, &hg,
                        &co, &cs, &ci, &cla, &il, &pi, &fd};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) PyBuffer_Release(all[i]);
    return ret;
}

/* ---- passage-level MinHash (passages.c) ----
 * The word tables are a tuple (word bitmap, fold_page int32, fold_block uint32, fold_ext
 * uint32), checked here once per call so no lookup can leave them. */
typedef struct {
    Py_buffer b[4];
    int got;
    sd_wordtab tab;
} wordtab_args;

static void wordtab_release(wordtab_args *w) {
    for (int i = 0; i < w->got; i++) PyBuffer_Release(&w->b[i]);
    w->got = 0;
}

static int wordtab_parse(PyObject *tuple, wordtab_args *w) {
    w->got = 0;
    if (!PyArg_ParseTuple(tuple, "y*y*y*y*", &w->b[0], &w->b[1], &w->b[2], &w->b[3])) return 0;
    w->got = 4;
    int64_t nblocks = w->b[2].len / (256 * 4), next = w->b[3].len / 4;
    const int32_t *page = w->b[1].buf;
    const uint32_t *block = w->b[2].buf, *ext = w->b[3].buf;
    int ok = w->b[0].len >= 0x110000 / 8 && w->b[1].len >= 0x1100 * 4;
    for (int64_t k = 0; ok && k < 0x1100; k++) ok = page[k] >= -1 && page[k] < nblocks;
    for (int64_t k = 0; ok && k < nblocks * 256; k++)
        if (block[k] & SD_FOLD_EXT) {
            int64_t at = block[k] & ~SD_FOLD_EXT;
            ok = at < next && at + (int64_t)ext[at] < next;
        } else {
            ok = block[k] <= 0x10FFFF;
        }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "word tables: malformed (build them with passages.word_tables)");
        return 0;
    }
    w->tab = (sd_wordtab){w->b[0].buf, page, block, ext};
    return 1;
}

/* offsets of n + 1 int64 entries from 0, never decreasing, ending at `last` */
static int offsets_ok(Py_buffer *o, int64_t n, int64_t last, const char *what) {
    if (o->len < (n + 1) * 8) {
        PyErr_Format(PyExc_ValueError, "%s: need %lld entries", what, (long long)(n + 1));
        return 0;
    }
    const int64_t *v = o->buf;
    int ok = v[0] == 0 && v[n] == last;
    for (int64_t k = 0; ok && k < n; k++) ok = v[k] <= v[k + 1];
    if (!ok) PyErr_Format(PyExc_ValueError, "%s: must rise from 0 to %lld", what, (long long)last);
    return ok;
}

static int chunk_args_ok(long long words, long long stride, int ngram) {
    if (words < 1 || stride < 1 || stride > words || ngram < 1) {
        PyErr_SetString(PyExc_ValueError, "need words >= 1, 1 <= stride <= words and ngram >= 1");
        return 0;
    }
    return 1;
}

/* passage_count(docs, tables, words, stride, nwords, nchunks) */
static PyObject *py_passage_count(PyObject *self, PyObject *args) {
    PyObject *docs, *tabs;
    long long words, stride;
    Py_buffer nw, nc;
    if (!PyArg_ParseTuple(args, "O!O!LLw*w*", &PyTuple_Type, &docs, &PyTuple_Type, &tabs, &words, &stride, &nw, &nc))
        return NULL;
    docs_args a = {.got = 0};
    wordtab_args w = {.got = 0};
    PyObject *ret = NULL;
    if (docs_parse(docs, &a) && wordtab_parse(tabs, &w) && chunk_args_ok(words, stride, 1) &&
        need(&nw, a.docs.ndocs * 8, "nwords") && need(&nc, a.docs.ndocs * 8, "nchunks")) {
        Py_BEGIN_ALLOW_THREADS
        sd_passage_count(&a.docs, &w.tab, words, stride, nw.buf, nc.buf);
        Py_END_ALLOW_THREADS
        ret = Py_None; Py_INCREF(ret);
    }
    docs_release(&a); wordtab_release(&w);
    PyBuffer_Release(&nw); PyBuffer_Release(&nc);
    return ret;
}

/* words(text, tables, seed, hash, cs, ce) -> count */
static PyObject *py_words(PyObject *self, PyObject *args) {
    PyObject *tabs;
    Py_buffer text, h, cs, ce;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "y*O!Kw*w*w*", &text, &PyTuple_Type, &tabs, &seed, &h, &cs, &ce)) return NULL;
    wordtab_args w = {.got = 0};
    PyObject *ret = NULL;
    int64_t room = (text.len / 2 + 1) * 8;
    if (wordtab_parse(tabs, &w) && need(&h, room, "hash") && need(&cs, room, "cs") && need(&ce, room, "ce")) {
        int64_t m;
        Py_BEGIN_ALLOW_THREADS
        m = sd_words(text.buf, text.len, &w.tab, seed, h.buf, cs.buf, ce.buf);
        Py_END_ALLOW_THREADS
        ret = PyLong_FromLongLong(m);
    }
    wordtab_release(&w);
    PyBuffer_Release(&text); PyBuffer_Release(&h); PyBuffer_Release(&cs); PyBuffer_Release(&ce);
    return ret;
}

/* passage_minhash(docs, tables, words, stride, ngram, seed, perm_seeds, chunk_off, sig, nsh, cstart, cend) */
static PyObject *py_passage_minhash(PyObject *self, PyObject *args) {
    PyObject *docs, *tabs;
    long long words, stride;
    int ngram;
    unsigned long long seed;
    Py_buffer seeds, off, sig, nsh, cs, ce;
    if (!PyArg_ParseTuple(args, "O!O!LLiKy*y*w*w*w*w*", &PyTuple_Type, &docs, &PyTuple_Type, &tabs, &words, &stride,
                          &ngram, &seed, &seeds, &off, &sig, &nsh, &cs, &ce))
        return NULL;
    docs_args a = {.got = 0};
    wordtab_args w = {.got = 0};
    PyObject *ret = NULL;
    int P = (int)(seeds.len / 4);
    if (docs_parse(docs, &a) && wordtab_parse(tabs, &w) && chunk_args_ok(words, stride, ngram) &&
        need(&off, (a.docs.ndocs + 1) * 8, "chunk_off")) {
        int64_t rows = ((const int64_t *)off.buf)[a.docs.ndocs];
        if (offsets_ok(&off, a.docs.ndocs, rows, "chunk_off") && need(&sig, rows * P * 4, "sig") &&
            need(&nsh, rows * 8, "nsh") && need(&cs, rows * 8, "cstart") && need(&ce, rows * 8, "cend")) {
            int rc;
            Py_BEGIN_ALLOW_THREADS
            rc = sd_passage_minhash(&a.docs, &w.tab, words, stride, ngram, seed, seeds.buf, P, off.buf, sig.buf,
                                    nsh.buf, cs.buf, ce.buf);
            Py_END_ALLOW_THREADS
            if (rc == -1) PyErr_NoMemory();
            else if (rc) PyErr_SetString(PyExc_ValueError, "chunk_off disagrees with the documents' chunk counts");
            else { ret = Py_None; Py_INCREF(ret); }
        }
    }
    docs_release(&a); wordtab_release(&w);
    Py_buffer *all[] = {&seeds, &off, &sig, &nsh, &cs, &ce};
    for (int i = 0; i < 6; i++) PyBuffer_Release(all[i]);
    return ret;
}

/* passage_sets(docs, tables, words, stride, ngram, seed, req_doc, req_chunk, out, out_off, counts) */
static PyObject *py_passage_sets(PyObject *self, PyObject *args) {
    PyObject *docs, *tabs;
    long long words, stride;
    int ngram;
    unsigned long long seed;
    Py_buffer rd, rc_, out, off, counts;
    if (!PyArg_ParseTuple(args, "O!O!LLiKy*y*w*y*w*", &PyTuple_Type, &docs, &PyTuple_Type, &tabs, &words, &stride,
                          &ngram, &seed, &rd, &rc_, &out, &off, &counts))
        return NULL;
    docs_args a = {.got = 0};
    wordtab_args w = {.got = 0};
    PyObject *ret = NULL;
    int64_t nreq = rd.len / 8;
    int ok = docs_parse(docs, &a) && wordtab_parse(tabs, &w) && chunk_args_ok(words, stride, ngram) &&
             need(&rc_, nreq * 8, "req_chunk") && need(&counts, nreq * 8, "counts") &&
             need(&off, (nreq + 1) * 8, "out_off");
    if (ok) ok = offsets_ok(&off, nreq, ((const int64_t *)off.buf)[nreq], "out_off") &&
                 need(&out, ((const int64_t *)off.buf)[nreq] * 8, "out");
    const int64_t *d = rd.buf, *c = rc_.buf;
    for (int64_t k = 0; ok && k < nreq; k++)
        if (d[k] < 0 || d[k] >= a.docs.ndocs || c[k] < 0) {
            PyErr_SetString(PyExc_ValueError, "passage_sets: a request outside the documents");
            ok = 0;
        }
    if (ok) {
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = sd_passage_sets(&a.docs, &w.tab, words, stride, ngram, seed, d, c, nreq, out.buf, off.buf, counts.buf);
        Py_END_ALLOW_THREADS
        if (rc) PyErr_NoMemory();
        else { ret = Py_None; Py_INCREF(ret); }
    }
    docs_release(&a); wordtab_release(&w);
    Py_buffer *all[] = {&rd, &rc_, &out, &off, &counts};
    for (int i = 0; i < 5; i++) PyBuffer_Release(all[i]);
    return ret;
}

/* passage_walk(chunk_off, chunk_doc, cstart, cend, n_chars, pair_off, partner, psim, drop_fraction,
 *              src, ssim, removed, dropped) */
static PyObject *py_passage_walk(PyObject *self, PyObject *args) {
    Py_buffer co, cd, cs, ce, nc, po, pa, ps, src, ssim, rem, drp;
    double drop;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*dw*w*w*w*", &co, &cd, &cs, &ce, &nc, &po, &pa, &ps, &drop, &src,
                          &ssim, &rem, &drp))
        return NULL;
    PyObject *ret = NULL;
    int64_t ndocs = nc.len / 8, nch = cd.len / 8, np_ = pa.len / 8;
    int ok = offsets_ok(&co, ndocs, nch, "chunk_off") && offsets_ok(&po, nch, np_, "pair_off") &&
             need(&cs, nch * 8, "cstart") && need(&ce, nch * 8, "cend") && need(&ps, np_ * 8, "psim") &&
             need(&src, nch * 8, "src") && need(&ssim, nch * 8, "ssim") && need(&rem, ndocs * 8, "removed") &&
             need(&drp, ndocs, "dropped");
    const int64_t *d = cd.buf, *p = pa.buf;
    for (int64_t k = 0; ok && k < nch; k++) ok = d[k] >= 0 && d[k] < ndocs;
    for (int64_t k = 0; ok && k < np_; k++) ok = p[k] >= 0 && p[k] < nch;
    if (!ok && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "passage_walk: an index outside the chunks");
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        sd_passage_walk(ndocs, co.buf, d, cs.buf, ce.buf, nc.buf, po.buf, p, ps.buf, drop, src.buf, ssim.buf,
                        rem.buf, drp.buf);
        Py_END_ALLOW_THREADS
        ret = Py_None; Py_INCREF(ret);
    }
    Py_buffer *all[] = {&co, &cd, &cs, &ce, &nc, &po, &pa, &ps, &src, &ssim, &rem, &drp};
    for (int i = 0; i < 12; i++) PyBuffer_Release(all[i]);
    return ret;
}

/* ---- line dedup (lines.c) ---- */

/* every group id is -1 or names one of `groups` state rows */
static int gids_ok(Py_buffer *gid, int64_t groups) {
    const int64_t *g = gid->buf;
    for (int64_t i = 0, m = gid->len / 8; i < m; i++)
        if (g[i] < -1 || g[i] >= groups) {
            PyErr_Format(PyExc_ValueError, "group id %lld outside the %lld groups", (long long)g[i], (long long)groups);
            return 0;
        }
    return 1;
}

/* line_scan(T, starts, ends, doc_base, hash, line, slow) -> (rows, slow rows) */
static PyObject *py_line_scan(PyObject *self, PyObject *args) {
    Py_buffer T, st, en, hash, line, slow;
    long long base;
    if (!PyArg_ParseTuple(args, "y*y*y*Lw*w*w*", &T, &st, &en, &base, &hash, &line, &slow)) return NULL;
    PyObject *ret = NULL;
    int64_t nd = st.len / 8, cap = hash.len / 8, k = 0, ns = 0;
    if (en.len != st.len) {
        PyErr_SetString(PyExc_ValueError, "starts and ends differ in length");
    } else if (need(&line, cap * 24, "line")) {
        Py_BEGIN_ALLOW_THREADS
        k = sd_line_scan(T.buf, T.len, st.buf, en.buf, nd, base, cap, hash.buf, line.buf, slow.len / 24, slow.buf,
                         &ns);
        Py_END_ALLOW_THREADS
        if (k == -2) PyErr_SetString(PyExc_ValueError, "line_scan: a document outside the text");
        else ret = Py_BuildValue("LL", (long long)k, (long long)ns);
    }
    PyBuffer_Release(&T); PyBuffer_Release(&st); PyBuffer_Release(&en);
    PyBuffer_Release(&hash); PyBuffer_Release(&line); PyBuffer_Release(&slow);
    return ret;
}

/* gather_lines(T, slow, out) -> bytes written */
static PyObject *py_gather_lines(PyObject *self, PyObject *args) {
    Py_buffer T, slow, out;
    if (!PyArg_ParseTuple(args, "y*y*w*", &T, &slow, &out)) return NULL;
    PyObject *ret = NULL;
    int64_t m = slow.len / 24, total = m ? m - 1 : 0;
    const int64_t *s = slow.buf;
    int ok = 1;
    for (int64_t i = 0; i < m && ok; i++) {
        ok = s[3 * i + 1] >= 0 && s[3 * i + 1] <= s[3 * i + 2] && s[3 * i + 2] <= T.len;
        total += s[3 * i + 2] - s[3 * i + 1];
    }
    if (!ok) PyErr_SetString(PyExc_ValueError, "gather_lines: a line outside the text");
    else if (need(&out, total, "out")) {
        Py_BEGIN_ALLOW_THREADS
        sd_gather_lines(T.buf, s, m, out.buf);
        Py_END_ALLOW_THREADS
        ret = PyLong_FromLongLong(total);
    }
    PyBuffer_Release(&T); PyBuffer_Release(&slow); PyBuffer_Release(&out);
    return ret;
}

/* jsonl_kept(buf, start, end, row, rows, kept, at, out) -> (bytes, row, at, lines) */
static PyObject *py_jsonl_kept(PyObject *self, PyObject *args) {
    Py_buffer buf, rows, kept, out;
    long long start, end, row, at;
    if (!PyArg_ParseTuple(args, "y*LLLy*y*Lw*", &buf, &start, &end, &row, &rows, &kept, &at, &out)) return NULL;
    PyObject *ret = NULL;
    int64_t m = rows.len / 8, r = row, k = at, w = 0, o = 0;
    if (start < 0 || start > end || end > buf.len) {
        PyErr_SetString(PyExc_ValueError, "jsonl_kept: start and end must lie within the buffer");
    } else if (kept.len / 8 != m || at < 0 || at > m) {
        PyErr_SetString(PyExc_ValueError, "jsonl_kept: rows and kept must have one entry per document");
    } else if (need(&out, end - start, "out")) {
        Py_BEGIN_ALLOW_THREADS
        o = sd_jsonl_kept(buf.buf, start, end, &r, rows.buf, kept.buf, m, &k, out.buf, &w);
        Py_END_ALLOW_THREADS
        if (o < 0) PyErr_SetString(PyExc_ValueError, "jsonl_kept: the last line has no line feed");
        else ret = Py_BuildValue("LLLL", (long long)o, (long long)r, (long long)k, (long long)w);
    }
    PyBuffer_Release(&buf); PyBuffer_Release(&rows); PyBuffer_Release(&kept); PyBuffer_Release(&out);
    return ret;
}

/* jsonl_docs(buf, pos, end, row, text_field, id_field, limit, out, ids) -> (pos, row, text
 * bytes, docs, bad): docs a list of (row, ext_id, characters, bytes) per document whose text
 * went to out, bad None or the (start, end) of the line Python must read (see jsonl_docs.c). */
#define JDOCS 2048
static PyObject *py_jsonl_docs(PyObject *self, PyObject *args) {
    Py_buffer buf, tf, idf, out, ids;
    long long pos, end, row, limit;
    if (!PyArg_ParseTuple(args, "y*LLLy*y*Lw*w*", &buf, &pos, &end, &row, &tf, &idf, &limit, &out, &ids)) return NULL;
    PyObject *ret = NULL, *list = NULL;
    sd_jdoc *docs = NULL;
    if (pos < 0 || pos > end || end > buf.len) {
        PyErr_SetString(PyExc_ValueError, "jsonl_docs: pos and end must lie within the buffer");
    } else if (need(&out, end - pos, "out") && need(&ids, end - pos, "ids")) {
        docs = PyMem_Malloc(JDOCS * sizeof(sd_jdoc));
        if (!docs) PyErr_NoMemory();
    }
    if (docs) {
        int64_t p = pos, r = row, nout = 0, nids = 0, nd = 0, ba = 0, bb = 0;
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = sd_jsonl_docs(buf.buf, &p, end, &r, tf.buf, tf.len, idf.buf, idf.len, limit, out.buf, &nout, ids.buf,
                           &nids, docs, JDOCS, &nd, &ba, &bb);
        Py_END_ALLOW_THREADS
        if (rc < 0) {
            PyErr_SetString(PyExc_ValueError, "jsonl_docs: the last line has no line feed");
        } else if ((list = PyList_New(nd)) != NULL) {
            const char *idb = ids.buf;
            for (int64_t k = 0; k < nd; k++) {
                sd_jdoc *d = docs + k;
                PyObject *id;
                switch (d->id_kind) {
                case SD_ID_STR: id = PyUnicode_DecodeUTF8(idb + d->id_value, d->id_len, "strict"); break;
                case SD_ID_INT: id = PyLong_FromLongLong(d->id_value); break;
                case SD_ID_TRUE: id = PyUnicode_FromString("true"); break;  /* json_ext_id: json.dumps(True) */
                case SD_ID_FALSE: id = PyUnicode_FromString("false"); break;
                default: id = Py_None; Py_INCREF(id);
                }
                PyObject *t = id ? Py_BuildValue("(LNLL)", (long long)d->row, id, (long long)d->nchars,
                                                 (long long)d->nbytes) : NULL;
                if (!t) { Py_CLEAR(list); break; }
                PyList_SET_ITEM(list, k, t);
            }
            if (list) {
                if (rc == 1) ret = Py_BuildValue("(LLLN(LL))", (long long)p, (long long)r, (long long)nout, list,
                                                 (long long)ba, (long long)bb);
                else ret = Py_BuildValue("(LLLNO)", (long long)p, (long long)r, (long long)nout, list, Py_None);
            }
        }
        PyMem_Free(docs);
    }
    PyBuffer_Release(&buf); PyBuffer_Release(&tf); PyBuffer_Release(&idf); PyBuffer_Release(&out);
    PyBuffer_Release(&ids);
    return ret;
}

/* hash_pieces(buf, hash, empty) -> pieces */
static PyObject *py_hash_pieces(PyObject *self, PyObject *args) {
    Py_buffer buf, hash, empty;
    if (!PyArg_ParseTuple(args, "y*w*w*", &buf, &hash, &empty)) return NULL;
    int64_t cap = hash.len / 8 < empty.len ? hash.len / 8 : empty.len, k;
    Py_BEGIN_ALLOW_THREADS
    k = sd_hash_pieces(buf.buf, buf.len, cap, hash.buf, empty.buf);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf); PyBuffer_Release(&hash); PyBuffer_Release(&empty);
    if (k < 0) { PyErr_SetString(PyExc_ValueError, "hash_pieces: more pieces than the output arrays hold"); return NULL; }
    return PyLong_FromLongLong(k);
}

/* lines_first(gid, line, doc_base, n_chars, drop_fraction, state, scratch, rm, src, removed, dropped) */
static PyObject *py_lines_first(PyObject *self, PyObject *args) {
    Py_buffer gid, line, nc, state, scratch, rm, src, removed, dropped;
    long long base;
    double drop;
    if (!PyArg_ParseTuple(args, "y*y*Ly*dw*w*w*w*w*w*", &gid, &line, &base, &nc, &drop, &state, &scratch, &rm, &src,
                          &removed, &dropped))
        return NULL;
    PyObject *ret = NULL;
    int64_t m = gid.len / 8, nd = nc.len / 8, rc = 0;
    if (need(&line, m * 24, "line") && need(&scratch, m * 8, "scratch") && need(&rm, m, "rm") &&
        need(&src, m * 24, "src") && need(&removed, nd * 8, "removed") && need(&dropped, nd, "dropped") &&
        gids_ok(&gid, state.len / 24)) {
        Py_BEGIN_ALLOW_THREADS
        rc = sd_lines_first(gid.buf, line.buf, m, base, nd, nc.buf, drop, state.buf, scratch.buf, rm.buf, src.buf,
                            removed.buf, dropped.buf);
        Py_END_ALLOW_THREADS
        if (rc < 0) PyErr_SetString(PyExc_ValueError, "lines_first: lines out of document order or outside the chunk");
        else { ret = Py_None; Py_INCREF(ret); }
    }
    Py_buffer *all[] = {&gid, &line, &nc, &state, &scratch, &rm, &src, &removed, &dropped};
    for (int i = 0; i < 9; i++) PyBuffer_Release(all[i]);
    return ret;
}

/* lines_first_two(gid, line, state) */
static PyObject *py_lines_first_two(PyObject *self, PyObject *args) {
    Py_buffer gid, line, state;
    if (!PyArg_ParseTuple(args, "y*y*w*", &gid, &line, &state)) return NULL;
    PyObject *ret = NULL;
    int64_t m = gid.len / 8;
    if (need(&line, m * 24, "line") && gids_ok(&gid, state.len / 48)) {
        Py_BEGIN_ALLOW_THREADS
        sd_lines_first_two(gid.buf, line.buf, m, state.buf);
        Py_END_ALLOW_THREADS
        ret = Py_None; Py_INCREF(ret);
    }
    PyBuffer_Release(&gid); PyBuffer_Release(&line); PyBuffer_Release(&state);
    return ret;
}

/* lines_none(gid, line, doc_base, n_chars, min_docs, g_docs, drop_fraction, state, rm, src, removed, dropped) */
static PyObject *py_lines_none(PyObject *self, PyObject *args) {
    Py_buffer gid, line, nc, mind, gdocs, state, rm, src, removed, dropped;
    long long base;
    double drop;
    if (!PyArg_ParseTuple(args, "y*y*Ly*y*y*dy*w*w*w*w*", &gid, &line, &base, &nc, &mind, &gdocs, &drop, &state, &rm,
                          &src, &removed, &dropped))
        return NULL;
    PyObject *ret = NULL;
    int64_t m = gid.len / 8, nd = nc.len / 8, rc = 0;
    int64_t groups = state.len / 48 < gdocs.len / 8 ? state.len / 48 : gdocs.len / 8;
    if (need(&line, m * 24, "line") && need(&mind, nd * 8, "min_docs") && need(&rm, m, "rm") &&
        need(&src, m * 24, "src") && need(&removed, nd * 8, "removed") && need(&dropped, nd, "dropped") &&
        gids_ok(&gid, groups)) {
        Py_BEGIN_ALLOW_THREADS
        rc = sd_lines_none(gid.buf, line.buf, m, base, nd, nc.buf, mind.buf, gdocs.buf, drop, state.buf, rm.buf,
                           src.buf, removed.buf, dropped.buf);
        Py_END_ALLOW_THREADS
        if (rc < 0) PyErr_SetString(PyExc_ValueError, "lines_none: lines out of document order or outside the chunk");
        else { ret = Py_None; Py_INCREF(ret); }
    }
    Py_buffer *all[] = {&gid, &line, &nc, &mind, &gdocs, &state, &rm, &src, &removed, &dropped};
    for (int i = 0; i < 10; i++) PyBuffer_Release(all[i]);
    return ret;
}

static PyMethodDef methods[] = {
    {"spm_pieces", py_spm_pieces, METH_VARARGS, "spm_pieces(proto, ids, begin, end): pieces of a SentencePieceText."},
    {"populate_write", py_populate_write, METH_VARARGS, "populate_write(buf): fault a fresh writable map in for writing at once."},
    {"lcp", py_lcp, METH_VARARGS, "lcp(tokens, es, sa, out, tmp, is64): LCP array (Phi algorithm)."},
    {"lcp_capped", py_lcp_capped, METH_VARARGS, "lcp_capped(tokens, es, sa, out, is64, cap): LCP array capped at cap (uint8 / uint16)."},
    {"suffix_array", py_suffix_array, METH_VARARGS, "Suffix array of bytes (libsais)."},
    {"local_windows", py_local_windows, METH_VARARGS, "Distinct in-document L-windows of a shard, in SA order."},
    {"anchors", py_anchors, METH_VARARGS, "Winnowing anchors of the in-document L-windows."},
    {"regions", py_regions, METH_VARARGS, "Merged text regions around anchors, cut at document ends."},
    {"gather_regions", py_gather_regions, METH_VARARGS, "The regions' tokens, in order."},
    {"jsonl_kept", py_jsonl_kept, METH_VARARGS, "The kept rows of whole JSONL lines, as read."},
    {"jsonl_docs", py_jsonl_docs, METH_VARARGS, "The documents of whole JSONL lines, their texts decoded."},
    {"member", py_member, METH_VARARGS, "Membership of uint64 values in a set of distinct ones."},
    {"count_chars", py_count_chars, METH_VARARGS, "UTF-8 characters in byte ranges."},
    {"char_values", py_char_values, METH_VARARGS, "Tokens' kept character bounds at sorted positions."},
    {"merge", py_merge, METH_VARARGS, "k-way merge of shards' windows into global group ids."},
    {"merge_lookup", py_merge_lookup, METH_VARARGS, "merge, with the queries' distinct windows looked up in references."},
    {"scatter", py_scatter, METH_VARARGS, "Group ids of repeated windows back to token positions."},
    {"pair_gid", py_pair_gid, METH_VARARGS, "Group ids of windows made of two repeated ones, from theirs."},
    {"scatter_first_two", py_scatter_first_two, METH_VARARGS, "scatter, and each repeated run's two first positions."},
    {"merge_first_two", py_merge_first_two, METH_VARARGS, "First and second occurrences from a shard's list."},
    {"select_first", py_select_first, METH_VARARGS, "keep='first' pass over one shard."},
    {"select_none", py_select_none, METH_VARARGS, "keep='none' pass over one shard."},
    {"first_two", py_first_two, METH_VARARGS, "First and second occurrence of every group."},
    {"doc_normalize", py_doc_normalize, METH_VARARGS, "Whitespace collapse (and ASCII lower-casing) of documents."},
    {"doc_nonascii", py_doc_nonascii, METH_VARARGS, "Which documents have a non-ASCII byte."},
    {"minhash", py_minhash, METH_VARARGS, "MinHash signatures of documents' word or character n-grams."},
    {"shingle_sets", py_shingle_sets, METH_VARARGS, "Sorted distinct shingle hashes of documents."},
    {"jaccard_pairs", py_jaccard_pairs, METH_VARARGS, "Exact Jaccard of pairs of sorted sets."},
    {"components", py_components, METH_VARARGS, "Union-find: smallest node of every node's component."},
    {"cluster_cut", py_cluster_cut, METH_VARARGS, "The clusters lsh.cluster cuts, in one native pass."},
    {"sa_range", py_sa_range, METH_VARARGS, "sa_range(T, es, sa, is64, P): the suffixes that start with P."},
    {"in_documents", py_in_documents, METH_VARARGS, "Of a suffix-array range, the entries whose first m tokens lie in one document."},
    {"dc_words", py_dc_words, METH_VARARGS, "Words (\\w+, case-folded) of documents, with hashes and folded code points."},
    {"dc_ngram_keys", py_dc_ngram_keys, METH_VARARGS, "Keys of every word n-gram of documents."},
    {"dc_ngram_same", py_dc_ngram_same, METH_VARARGS, "Whether pairs of word n-grams are the same folded words."},
    {"dc_scan", py_dc_scan, METH_VARARGS, "Decontamination: spans and hits of eval n-grams in documents."},
    {"passage_count", py_passage_count, METH_VARARGS, "Words and chunks of every document (passages)."},
    {"words", py_words, METH_VARARGS, "The \\w+ words of a text: hashes of their case folds and code-point offsets."},
    {"passage_minhash", py_passage_minhash, METH_VARARGS, "MinHash signatures of every chunk of words."},
    {"passage_sets", py_passage_sets, METH_VARARGS, "Sorted distinct shingle hashes of chunks."},
    {"passage_walk", py_passage_walk, METH_VARARGS, "Keep-first over verified chunk pairs, with the drop rule."},
    {"line_scan", py_line_scan, METH_VARARGS, "Lines of documents: key hashes and code-point extents."},
    {"gather_lines", py_gather_lines, METH_VARARGS, "Byte ranges of lines joined by newlines."},
    {"hash_pieces", py_hash_pieces, METH_VARARGS, "Hashes of the newline-separated pieces of a buffer, as line keys."},
    {"lines_first", py_lines_first, METH_VARARGS, "keep='first' pass of the lines stage over one chunk."},
    {"lines_first_two", py_lines_first_two, METH_VARARGS, "First occurrence of every repeated line, and in a second document."},
    {"lines_none", py_lines_none, METH_VARARGS, "keep='none' pass of the lines stage over one chunk."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_native", "sadedup native kernels", -1, methods};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&moddef); }
