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

int64_t sd_merge(sd_stream *streams, int k, int es, int64_t L) {
    /* A loser tree over the streams' heads that carries common prefixes (the LCP loser tree
     * of Bingmann, Eberle and Sanders): node v keeps the head that lost there and its common
     * prefix with the head that won there. A new head of the stream that won the last round
     * rises from its leaf knowing its common prefix with that winner (the shard's wl), and
     * every loser on its path knows its own with the same winner: the larger prefix is the
     * smaller window, and tokens are read only when the two are equal. log k steps a window,
     * not k. Consecutive winners whose common prefix reaches L form one group. */
    int K = 1;
    while (K < k) K <<= 1;
    head *h = calloc((size_t)K, sizeof(head));
    int *loser = calloc((size_t)K, sizeof(int)), *win = calloc((size_t)(2 * K), sizeof(int));
    int64_t *llcp = calloc((size_t)K, sizeof(int64_t));
    int *gs = calloc((size_t)K, sizeof(int));
    int64_t *gr = calloc((size_t)K, sizeof(int64_t));
    sd_stream *none = calloc(1, sizeof(sd_stream)); /* padding leaves: finished from the start */
    if (!h || !loser || !win || !llcp || !gs || !gr || !none) {
        free(h); free(loser); free(win); free(llcp); free(gs); free(gr); free(none);
        return -1;
    }
    for (int s = 0; s < K; s++) {
        h[s].s = s < k ? &streams[s] : none;
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
        llcp[v] = l;
    }
    int w = win[1];
    int64_t wh = 0, G = 0, gcount = 0;
    int gn = 0;
    while (!finished(&h[w])) {
        if (gn > 0 && wh < L) { /* the group before this window is complete */
            int64_t id = gcount >= 2 ? G++ : -1;
            for (int j = 0; j < gn; j++) h[gs[j]].s->run_gid[gr[j]] = id;
            gn = 0;
            gcount = 0;
        }
        head *a = &h[w];
        gs[gn] = w;
        gr[gn++] = a->run;
        gcount += a->end - a->i;
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
        for (int v = (K + w) >> 1; v >= 1; v >>= 1) {
            int y = loser[v];
            int64_t yh = llcp[v];
            int x_wins;
            if (finished(&h[x]) || finished(&h[y])) {
                x_wins = !finished(&h[x]);
                if (!x_wins) xh = yh;
                llcp[v] = 0;
            } else if (xh != yh) {
                x_wins = xh > yh; /* more in common with the last winner: smaller */
                llcp[v] = x_wins ? yh : xh;
                if (!x_wins) xh = yh;
            } else {
                int64_t l;
                int sign = order(&h[x], &h[y], xh, es, L, &l);
                x_wins = sign < 0 || (sign == 0 && x < y);
                llcp[v] = l;
            }
            if (!x_wins) {
                loser[v] = x;
                x = y;
            }
        }
        w = x;
        wh = xh;
    }
    if (gn > 0) {
        int64_t id = gcount >= 2 ? G++ : -1;
        for (int j = 0; j < gn; j++) h[gs[j]].s->run_gid[gr[j]] = id;
    }
    free(h); free(loser); free(win); free(llcp); free(gs); free(gr); free(none);
    return G;
}
