/* Windows of one sorted stream looked up in another (a reference's), by galloping search:
 * the queries come in sorted order, so each one's place is searched for from the last one's,
 * and a query costs the logarithm of the distance between the two places, not of the whole
 * stream. A reference many times the size of the new text is read only where it is probed. */
#include <string.h>
#include "kernels.h"

typedef struct {
    const uint8_t *T;
    int64_t nt; /* tokens in T */
    const void *wpos;
    int wpos64;
    int64_t nw;
    int es;
    int64_t L;
    int bad; /* a window position outside T was met (a damaged stream) */
} side;

static inline const uint8_t *window(side *s, int64_t i) {
    int64_t p = idx_at(s->wpos, i, s->wpos64);
    if (p < 0 || p + s->L > s->nt) {
        s->bad = 1;
        return NULL;
    }
    return s->T + p * s->es;
}

/* fetches the tokens of window i from token `from` on into the cache ahead of a compare */
static inline void pf(const side *s, int64_t i, int64_t from) {
    int64_t p = idx_at(s->wpos, i, s->wpos64);
    if (p >= 0 && p + s->L <= s->nt) __builtin_prefetch(s->T + (p + from) * s->es);
}

/* <0, 0 or >0: window x against window y, L tokens, tokens ordered numerically */
static inline int cmp_windows(const uint8_t *x, const uint8_t *y, int es, int64_t L) {
    if (es == 1) return memcmp(x, y, (size_t)L); /* unsigned bytes: the suffix array's order */
    for (int64_t k = 0; k < L; k++) {
        uint32_t a = tok_at(x, k, es), b = tok_at(y, k, es);
        if (a != b) return a < b ? -1 : 1;
    }
    return 0;
}

/* r's window i against the query t; a damaged entry compares above everything, so the
 * search ends and the caller reports it */
static inline int probe(side *r, int64_t i, const uint8_t *t) {
    const uint8_t *w = window(r, i);
    return w ? cmp_windows(w, t, r->es, r->L) : 1;
}

/* From `below`, whose window is below t (`equal`: equal to t), the first index after it whose
 * window is not (or nw): galloped (doubling steps), then a binary search in the last step. */
static int64_t gallop_past(side *r, int64_t below, const uint8_t *t, int equal) {
#define HOLDS(i) (equal ? probe(r, (i), t) == 0 : probe(r, (i), t) < 0)
    int64_t step = 1, hi = below + 1;
    while (hi < r->nw && HOLDS(hi)) {
        below = hi;
        step <<= 1;
        hi = below + step;
    }
    if (hi > r->nw) hi = r->nw;
    int64_t a = below + 1;
    while (a < hi) {
        int64_t mid = a + (hi - a) / 2;
        if (HOLDS(mid)) a = mid + 1;
        else hi = mid;
    }
    return a;
#undef HOLDS
}

/* The first index >= lo whose window is not below t (or nw). */
static int64_t gallop_lower(side *r, int64_t lo, const uint8_t *t) {
    if (lo >= r->nw || probe(r, lo, t) >= 0) return lo;
    return gallop_past(r, lo, t, 0);
}

/* wl entries read before the end of a run is galloped to: 8 KB read in sequence cost
 * less than the two or three random reads of a window each step of a gallop */
#define RUN_SCAN 4096

/* The end of the run of windows equal to window `head`: the first index after it whose
 * window differs. wl says it for the next RUN_SCAN entries at no token read; a longer run (text
 * repeated many times) is galloped over. */
static int64_t run_end(side *r, const uint16_t *wl, int64_t head, const uint8_t *t) {
    int64_t e = head + 1, stop = head + 1 + RUN_SCAN < r->nw ? head + 1 + RUN_SCAN : r->nw;
    while (e < stop && wl[e] >= r->L) e++;
    if (e < stop || e >= r->nw) return e;
    return gallop_past(r, e - 1, t, 1); /* window[e - 1] == t */
}

/* Common prefix of windows x and y (<= L tokens) known to agree on their first `from`;
 * *sign says how they order where they differ (0: equal). */
static inline int64_t extend(const uint8_t *x, const uint8_t *y, int64_t from, int es, int64_t L, int *sign) {
    if (es == 1) {
        int64_t k = common_bytes(x, y, from, L);
        *sign = k == L ? 0 : (x[k] < y[k] ? -1 : 1);
        return k;
    }
    for (int64_t k = from; k < L; k++) {
        uint32_t a = tok_at(x, k, es), b = tok_at(y, k, es);
        if (a != b) {
            *sign = a < b ? -1 : 1;
            return k;
        }
    }
    *sign = 0;
    return L;
}

/* linear steps over the stream's wl before a query's place is galloped to */
#define WALK 64

/* One query's lookup in r, walked on from the query before: lo is the first window of r above
 * that query t' (or its run's end when it was found), m = lcp(r[lo], t') when `known` (0
 * before the first query and never after a gallop's end is read), w = lcp(t', t). Returns 1
 * with the run of r's windows equal to t in [*head, *end), 0 when r holds no such window, 2
 * when r is walked to its end (no later query is in it either), -1 for a damaged entry. */
static int walk_query(side *r, const uint16_t *rwl, int64_t *lo_, int64_t *m_, int *known_, const uint8_t *t,
                      int64_t w, int64_t *head, int64_t *end) {
    /* The merge of two sorted streams, walked on their common prefixes as sd_merge does: with
     * m = lcp(r[lo], t'), r[lo] is above t when m < w, below it (with lcp w) when m > w; tokens
     * are read only when m == w, and from there on. Walking on, r[i+1] against t follows from
     * lcp(r[i], t) and lcp(r[i], r[i+1]) = wl[i+1] the same way. A query whose place is more
     * than WALK windows on is galloped to (log of the distance compares of whole windows), so a
     * long stretch of r that no query falls in costs its logarithm, not its length. */
    int64_t rw = r->nw, L = r->L, i = *lo_, m = *m_, lcp;
    int known = *known_, es = r->es, sign;
    if (known && m < w) return 0; /* r[lo] leaves t' below where t follows t': above t */
    if (known && m > w) {
        sign = -1;
        lcp = w;
    } else {
        const uint8_t *x = window(r, i);
        if (!x) return -1;
        lcp = extend(x, t, known ? w : 0, es, L, &sign);
    }
    /* r[i] vs t is (sign, lcp); walk while it is below */
    int64_t steps = 0;
    while (sign < 0) {
        if (i + 1 >= rw) { i = rw; break; }
        if (++steps > WALK) {
            i = gallop_lower(r, i + 1, t);
            if (r->bad) return -1;
            if (i >= rw) break;
            const uint8_t *y = window(r, i);
            if (!y) return -1;
            lcp = extend(y, t, 0, es, L, &sign);
            break;
        }
        if (i + 4 < rw) pf(r, i + 4, lcp);
        int64_t x = rwl[i + 1];
        i++;
        if (x > lcp) continue;        /* agrees with r[i-1] past where it is below t */
        if (x < lcp) { sign = 1; lcp = x; break; } /* leaves r[i-1] upward before t does */
        const uint8_t *y = window(r, i);
        if (!y) return -1;
        lcp = extend(y, t, lcp, es, L, &sign);
    }
    *known_ = 1;
    if (i >= rw) { *lo_ = rw; return 2; }
    if (sign == 0) { /* r[i] is the first window of r equal to t */
        int64_t e = run_end(r, rwl, i, t);
        if (r->bad) return -1;
        *head = i;
        *end = e;
        *lo_ = e;
        *m_ = e < rw ? rwl[e] : 0; /* r[e - 1] is t */
        return 1;
    }
    *lo_ = i;
    *m_ = lcp;
    return 0;
}

int64_t sd_merge_lookup(sd_stream *streams, int k, int q0, int es, int64_t L, sd_ref *refs, int nr) {
    /* sd_merge, and each distinct window of the query streams (streams q0..k-1: this run's
     * shards) looked up in every reference stream as it comes (walk_query, the queries' lcp
     * with the query before being the least lcp of the merged windows since it): one merge of
     * the queries for the lookups and the groups, where a lookup per reference stream merged
     * them again. A window found in a reference is one more occurrence of its group, and
     * takes the group's id (refs[j].gid), given when the group is complete. */
    sd_merger *mg = sd_merger_open(streams, k, es, L);
    int *gs = calloc((size_t)(k ? k : 1), sizeof(int));
    int64_t *gr = calloc((size_t)(k ? k : 1), sizeof(int64_t));
    side *rs = calloc((size_t)(nr ? nr : 1), sizeof(side));
    int64_t *lo = calloc((size_t)(nr ? nr : 1), sizeof(int64_t)), *mm = calloc((size_t)(nr ? nr : 1), sizeof(int64_t));
    int64_t *pend = calloc((size_t)(nr ? nr : 1), sizeof(int64_t));
    int *known = calloc((size_t)(nr ? nr : 1), sizeof(int));
    int64_t G = -1;
    if (!mg || !gs || !gr || !rs || !lo || !mm || !pend || !known) goto out;
    for (int j = 0; j < nr; j++) {
        rs[j] = (side){refs[j].T, refs[j].nt, refs[j].wpos, refs[j].wpos64, refs[j].nw, es, L, 0};
        refs[j].found = 0;
        pend[j] = -1;
    }
    G = 0;
    int s, gn = 0;
    int64_t i, end, run, wh, gcount = 0, qw = 0; /* qw: lcp of the merged windows since the last query */
#define CLOSE_GROUP() do { \
        int64_t id_ = gcount >= 2 ? G++ : -1; \
        for (int j_ = 0; j_ < gn; j_++) idx_set(streams[gs[j_]].run_gid, gr[j_], streams[gs[j_]].run_gid64, id_); \
        for (int j_ = 0; j_ < nr; j_++) \
            if (pend[j_] >= 0) { idx_set(refs[j_].gid, pend[j_], refs[j_].gid64, id_); pend[j_] = -1; } \
        gn = 0; \
        gcount = 0; \
    } while (0)
    while (sd_merger_next(mg, &s, &i, &end, &run, &wh)) {
        if (gn > 0 && wh < L) CLOSE_GROUP(); /* the group before this window is complete */
        gs[gn] = s;
        gr[gn++] = run;
        gcount += end - i;
        if (wh < qw) qw = wh;
        if (s < q0) continue;
        int64_t w = qw;
        qw = L;
        if (w >= L) continue; /* the same window as the query before: its group's lookup is done */
        const sd_stream *q = &streams[s];
        const uint8_t *t = q->T + idx_at(q->wpos, i, q->wpos64) * es;
        int any = 0;
        for (int j = 0; j < nr; j++) {
            if (lo[j] >= refs[j].nw) continue;
            int64_t head, e;
            int got = walk_query(&rs[j], refs[j].wl, &lo[j], &mm[j], &known[j], t, w, &head, &e);
            if (got < 0) { G = -3; goto out; }
            if (got == 1) {
                int64_t f = refs[j].found++;
                refs[j].heads[f] = head;
                refs[j].ends[f] = e;
                pend[j] = f;
                any = 1;
            }
        }
        gcount += any; /* one more occurrence, whichever references hold it */
    }
    if (gn > 0) CLOSE_GROUP();
#undef CLOSE_GROUP
out:
    sd_merger_close(mg); free(gs); free(gr); free(rs); free(lo); free(mm); free(pend); free(known);
    return G;
}
