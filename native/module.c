/* CPython binding for the kernels: parses buffers, checks sizes, releases the GIL.
 * Dtype and shape checks that need numpy live in sadedup/native.py; this layer only makes
 * sure no kernel can read or write outside the buffers it was given. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include "kernels.h"

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

static PyObject *py_local_windows(PyObject *self, PyObject *args) {
    Py_buffer sa, lcp, valid, wpos, wnew;
    int is64, wpos64;
    long long L;
    if (!PyArg_ParseTuple(args, "y*y*py*Lw*pw*", &sa, &lcp, &is64, &valid, &L, &wpos, &wpos64, &wnew))
        return NULL;
    PyObject *ret = NULL;
    int64_t n = valid.len, m = 0;
    if (need(&sa, n * W(is64), "sa") && need(&lcp, n * W(is64), "lcp") &&
        need(&wpos, n * W(wpos64), "wpos") && need(&wnew, n, "wnew")) {
        Py_BEGIN_ALLOW_THREADS
        m = sd_local_windows(sa.buf, lcp.buf, is64, n, valid.buf, L, wpos.buf, wpos64, wnew.buf);
        Py_END_ALLOW_THREADS
        ret = PyLong_FromLongLong(m);
    }
    PyBuffer_Release(&sa); PyBuffer_Release(&lcp); PyBuffer_Release(&valid);
    PyBuffer_Release(&wpos); PyBuffer_Release(&wnew);
    return ret;
}

/* merge(streams, es, L): streams is a list of (tokens, wpos, wpos64, wnew, run_gid). */
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
    for (Py_ssize_t s = 0; s < k; s++) {
        int wpos64;
        Py_buffer *b = &bufs[4 * s];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(list, s), "y*y*py*w*", &b[0], &b[1], &wpos64, &b[2], &b[3]))
            goto done;
        got = s + 1;
        int64_t nw = b[2].len;
        if (!need(&b[1], nw * W(wpos64), "wpos")) goto done;
        /* every window must lie inside the token buffer */
        st[s] = (sd_stream){b[0].buf, b[1].buf, wpos64, b[2].buf, nw, b[3].buf};
        int64_t runs = 0;
        for (int64_t j = 0; j < nw; j++) {
            runs += ((const uint8_t *)b[2].buf)[j] != 0;
            int64_t p = idx_at(b[1].buf, j, wpos64);
            if (p < 0 || (p + L) * es > b[0].len) {
                PyErr_Format(PyExc_ValueError, "stream %zd: window at %lld runs past the tokens", s, (long long)p);
                goto done;
            }
        }
        if (!need(&b[3], runs * 8, "run_gid")) goto done;
    }
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

static PyObject *py_select(PyObject *args, int first_mode) {
    Py_buffer gid, ds, a1, a2, removed, dropped, spd, sps, spe, spr;
    int gid64;
    long long L, base;
    double drop;
    if (!PyArg_ParseTuple(args, "y*py*LdLw*w*w*w*w*w*w*w*", &gid, &gid64, &ds, &L, &drop, &base, &a1, &a2,
                          &removed, &dropped, &spd, &sps, &spe, &spr))
        return NULL;
    PyObject *ret = NULL;
    int64_t ndocs = ds.len / 8 - 1, n = gid.len / W(gid64), nsp = 0;
    const int64_t *d = ds.buf;
    int ok = ndocs >= 0 && need(&removed, ndocs * 8, "removed") && need(&dropped, ndocs, "dropped");
    /* spans are disjoint runs of at least L tokens */
    int64_t cap = L > 0 ? n / L + 1 : n + 1;
    ok = ok && need(&spd, cap * 8, "sp_doc") && need(&sps, cap * 8, "sp_start") &&
         need(&spe, cap * 8, "sp_end") && need(&spr, cap * 8, "sp_src");
    if (ok && first_mode) ok = need(&a2, n * 8, "scratch");
    if (ok && ndocs >= 0 && (d[0] < 0 || d[ndocs] > n)) {
        PyErr_SetString(PyExc_ValueError, "doc offsets outside the shard");
        ok = 0;
    }
    if (ok && L < 1) { PyErr_SetString(PyExc_ValueError, "L must be >= 1"); ok = 0; }
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        if (first_mode)
            nsp = sd_select_first(gid.buf, gid64, d, ndocs, L, drop, base, a1.buf, a2.buf, removed.buf,
                                  dropped.buf, spd.buf, sps.buf, spe.buf, spr.buf);
        else
            nsp = sd_select_none(gid.buf, gid64, d, ndocs, L, drop, base, a1.buf, a2.buf, removed.buf,
                                 dropped.buf, spd.buf, sps.buf, spe.buf, spr.buf);
        Py_END_ALLOW_THREADS
        ret = PyLong_FromLongLong(nsp);
    }
    Py_buffer *all[] = {&gid, &ds, &a1, &a2, &removed, &dropped, &spd, &sps, &spe, &spr};
    for (int i = 0; i < 10; i++) PyBuffer_Release(all[i]);
    return ret;
}

static PyObject *py_select_first(PyObject *self, PyObject *args) { return py_select(args, 1); }
static PyObject *py_select_none(PyObject *self, PyObject *args) { return py_select(args, 0); }

static PyObject *py_first_two(PyObject *self, PyObject *args) {
    Py_buffer gid, first, second;
    int gid64;
    long long base;
    if (!PyArg_ParseTuple(args, "y*pLw*w*", &gid, &gid64, &base, &first, &second)) return NULL;
    int64_t n = gid.len / W(gid64);
    Py_BEGIN_ALLOW_THREADS
    sd_first_two(gid.buf, gid64, n, base, first.buf, second.buf);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&gid); PyBuffer_Release(&first); PyBuffer_Release(&second);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"lcp", py_lcp, METH_VARARGS, "lcp(tokens, es, sa, out, tmp, is64): LCP array (Phi algorithm)."},
    {"local_windows", py_local_windows, METH_VARARGS, "Distinct in-document L-windows of a shard, in SA order."},
    {"merge", py_merge, METH_VARARGS, "k-way merge of shards' windows into global group ids."},
    {"select_first", py_select_first, METH_VARARGS, "keep='first' pass over one shard."},
    {"select_none", py_select_none, METH_VARARGS, "keep='none' pass over one shard."},
    {"first_two", py_first_two, METH_VARARGS, "First and second occurrence of every group."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_native", "sadedup native kernels", -1, methods};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&moddef); }
