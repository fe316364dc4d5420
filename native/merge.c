#include <stdlib.h>
#include <string.h>
#include "kernels.h"

/* A stream's head: the distinct window at wpos[i], whose run of equal windows ends before
 * index `end`; `run` is its ordinal among the shard's distinct windows. */
typedef struct {
    sd_stream *s;
    int64_t i, end, run;
} head;

static void load(head *h, int64_t L) {
    int64_t j = h->i + 1;
    while (j < h->s->nw && h->s->wl[j] >= L) j++;
    h->end = j;
}

static inline int64_t pos(const head *h) { return idx_at(h->s->wpos, h->i, h->s->wpos64); }

/* Extends a known common prefix `from` of two heads' windows; returns the full common
 * prefix (<= L) and in *sign how they order where they differ. */
static int64_t extend(const head *a, const head *b, int64_t from, int es, int64_t L, int *sign) {
    const uint8_t *ta = a->s->T, *tb = b->s->T;
    int64_t pa = pos(a), pb = pos(b), k = from;
    if (es == 1) {
        const uint8_t *x = ta + pa, *y = tb + pb;
        k = common_bytes(x, y, k, L);
        *sign = k == L ? 0 : (x[k] < y[k] ? -1 : 1);
        return k;
    }
    while (k < L) {
        uint32_t x = tok_at(ta, pa + k, es), y = tok_at(tb, pb + k, es);
        if (x != y) { *sign = x < y ? -1 : 1; return k; }
        k++;
    }
    *sign = 0;
    return L;
}

/* Order of two heads from a known common prefix `from`, a finished stream last: returns <0,
 * 0 or >0 and their full common prefix (<= L) in *lcp. */
static int order(const head *a, const head *b, int64_t from, int es, int64_t L, int64_t *lcp) {
    if (a->i >= a->s->nw || b->i >= b->s->nw) {
        *lcp = 0;
        return (a->i >= a->s->nw) - (b->i >= b->s->nw);
    }
    int sign;
    *lcp = extend(a, b, from, es, L, &sign);
    return sign;
}

static inline int finished(const head *h) { return h->i >= h->s->nw; }

struct sd_merger {
    int K, w;
    int64_t wh, L;
    int es;
    head *h;
    int *loser, *win;
    int64_t *llcp;
    sd_stream *none; /* padding leaves: finished from the start */
};

void sd_merger_close(sd_merger *m) {
    if (!m) return;
    free(m->h); free(m->loser); free(m->win); free(m->llcp); free(m->none);
    free(m);
}

sd_merger *sd_merger_open(sd_stream *streams, int k, int es, int64_t L) {
    /* A loser tree over the streams' heads that carries common prefixes (the LCP loser tree
     * of Bingmann, Eberle and Sanders): node v keeps the head that lost there and its common
     * prefix with the head that won there. A new head of the stream that won the last round
     * rises from its leaf knowing its common prefix with that winner (the shard's wl), and
     * every loser on its path knows its own with the same winner: the larger prefix is the
     * smaller window, and tokens are read only when the two are equal. log k steps a window,
     * not k. */
    sd_merger *m = calloc(1, sizeof(sd_merger));
    if (!m) return NULL;
    int K = 1;
    while (K < k) K <<= 1;
    m->K = K; m->es = es; m->L = L;
    m->h = calloc((size_t)K, sizeof(head));
    m->loser = calloc((size_t)K, sizeof(int));
    m->win = calloc((size_t)(2 * K), sizeof(int));
    m->llcp = calloc((size_t)K, sizeof(int64_t));
    m->none = calloc(1, sizeof(sd_stream));
    if (!m->h || !m->loser || !m->win || !m->llcp || !m->none) {
        sd_merger_close(m);
        return NULL;
    }
    head *h = m->h;
    int *loser = m->loser, *win = m->win;
    for (int s = 0; s < K; s++) {
        h[s].s = s < k ? &streams[s] : m->none;
        if (!finished(&h[s])) load(&h[s], L);
        win[K + s] = s;
    }
    for (int v = K - 1; v >= 1; v--) { /* every head's prefix with the empty string is 0 */
        int a = win[2 * v], b = win[2 * v + 1];
        int64_t l;
        int sign = order(&h[a], &h[b], 0, es, L, &l);
        int a_wins = sign < 0 || (sign == 0 && a < b);
        win[v] = a_wins ? a : b;
        loser[v] = a_wins ? b : a;
        m->llcp[v] = l;
    }
    m->w = win[1];
    m->wh = 0;
    return m;
}

/* inlined in sd_merge's loop, a call per window elsewhere */
static inline __attribute__((always_inline)) int merger_next(sd_merger *m, int *s, int64_t *i, int64_t *end,
                                                            int64_t *run, int64_t *lcp) {
    int w = m->w, es = m->es;
    int64_t L = m->L;
    head *h = m->h;
    head *a = &h[w];
    if (finished(a)) return 0;
    *s = w; *i = a->i; *end = a->end; *run = a->run; *lcp = m->wh;
    a->i = a->end;
    a->run++;
    int x = w;
    int64_t xh = 0;
    if (!finished(a)) {
        xh = a->s->wl[a->i];
        load(a, L);
        /* the stream's window after this one will be compared where it leaves this one:
         * start fetching those tokens a round early */
        for (int64_t j = a->end; j < a->end + 2 && j < a->s->nw; j++)
            __builtin_prefetch(a->s->T + (idx_at(a->s->wpos, j, a->s->wpos64) + a->s->wl[j]) * es);
    }
    for (int v = (m->K + w) >> 1; v >= 1; v >>= 1) {
        int y = m->loser[v];
        int64_t yh = m->llcp[v];
        int x_wins;
        if (finished(&h[x]) || finished(&h[y])) {
            x_wins = !finished(&h[x]);
            if (!x_wins) xh = yh;
            m->llcp[v] = 0;
        } else if (xh != yh) {
            x_wins = xh > yh; /* more in common with the last winner: smaller */
            m->llcp[v] = x_wins ? yh : xh;
            if (!x_wins) xh = yh;
        } else {
            int64_t l;
            int sign = order(&h[x], &h[y], xh, es, L, &l);
            x_wins = sign < 0 || (sign == 0 && x < y);
            m->llcp[v] = l;
        }
        if (!x_wins) {
            m->loser[v] = x;
            x = y;
        }
    }
    m->w = x;
    m->wh = xh;
    return 1;
}

int sd_merger_next(sd_merger *m, int *s, int64_t *i, int64_t *end, int64_t *run, int64_t *lcp) {
    return merger_next(m, s, i, end, run, lcp);
}

int64_t sd_merge(sd_stream *streams, int k, int es, int64_t L) {
    /* Consecutive distinct windows of the merged order whose common prefix reaches L form
     * one group (at most one run of each stream). */
    sd_merger *m = sd_merger_open(streams, k, es, L);
    int *gs = calloc((size_t)(k ? k : 1), sizeof(int));
    int64_t *gr = calloc((size_t)(k ? k : 1), sizeof(int64_t));
    if (!m || !gs || !gr) {
        sd_merger_close(m); free(gs); free(gr);
        return -1;
    }
    int s, gn = 0;
    int64_t i, end, run, wh, G = 0, gcount = 0;
    while (merger_next(m, &s, &i, &end, &run, &wh)) {
        if (gn > 0 && wh < L) { /* the group before this window is complete */
            int64_t id = gcount >= 2 ? G++ : -1;
            for (int j = 0; j < gn; j++) idx_set(streams[gs[j]].run_gid, gr[j], streams[gs[j]].run_gid64, id);
            gn = 0;
            gcount = 0;
        }
        gs[gn] = s;
        gr[gn++] = run;
        gcount += end - i;
    }
    if (gn > 0) {
        int64_t id = gcount >= 2 ? G++ : -1;
        for (int j = 0; j < gn; j++) idx_set(streams[gs[j]].run_gid, gr[j], streams[gs[j]].run_gid64, id);
    }
    sd_merger_close(m); free(gs); free(gr);
    return G;
}
