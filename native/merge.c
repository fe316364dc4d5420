#include <stdlib.h>
#include "kernels.h"

/* A stream's head: the distinct window at wpos[i], whose run of equal windows ends before
 * index `end`; `run` is its ordinal among the shard's distinct windows; `c` its common
 * prefix with the last group the merge emitted. */
typedef struct {
    sd_stream *s;
    int64_t i, end, run, c, d;
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
        while (k < L && x[k] == y[k]) k++;
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

int64_t sd_merge(sd_stream *streams, int k, int es, int64_t L) {
    head *h = calloc((size_t)(k ? k : 1), sizeof(head));
    head **act = calloc((size_t)(k ? k : 1), sizeof(head *));
    int64_t *sw = calloc((size_t)(k ? k : 1), sizeof(int64_t));
    if (!h || !act || !sw) { free(h); free(act); free(sw); return -1; }
    int m = 0;
    for (int s = 0; s < k; s++) {
        h[s].s = &streams[s];
        if (streams[s].nw > 0) {
            load(&h[s], L);
            act[m++] = &h[s];
        }
    }
    int64_t G = 0;
    while (m > 0) {
        /* Scan the heads in shard order. All heads are greater than the last group, and a
         * head that shares more of it is smaller; ties on that are settled on the tokens.
         * d = common prefix with the current best; when a new best takes over with common
         * prefix x, every head scanned before it keeps min(d, x): sw[] logs those x so one
         * backward pass settles them in O(k). */
        int best = 0;
        act[0]->d = L;
        sw[0] = L;
        for (int j = 1; j < m; j++) {
            head *a = act[j], *b = act[best];
            sw[j] = L;
            if (a->c > b->c) {
                a->d = L;
                sw[j] = b->c;
                best = j;
            } else if (a->c < b->c) {
                a->d = a->c;
            } else {
                int sign;
                int64_t x = extend(a, b, a->c, es, L, &sign);
                if (sign >= 0) {
                    a->d = x;
                } else {
                    a->d = L;
                    sw[j] = x;
                    best = j;
                }
            }
        }
        int64_t low = L;
        for (int j = m - 1; j >= 0; j--) {
            int64_t dj = act[j]->d < low ? act[j]->d : low;
            if (sw[j] < low) low = sw[j];
            act[j]->d = dj;
        }
        /* The group: the best and every head equal to it. */
        int64_t count = 0;
        for (int j = 0; j < m; j++)
            if (act[j]->d >= L) count += act[j]->end - act[j]->i;
        int64_t id = count >= 2 ? G++ : -1;
        int w = 0;
        for (int j = 0; j < m; j++) {
            head *a = act[j];
            if (a->d >= L) {
                a->s->run_gid[a->run] = id;
                a->i = a->end;
                a->run++;
                if (a->i >= a->s->nw) continue;
                a->c = a->s->wl[a->i];
                load(a, L);
            } else {
                a->c = a->d;
            }
            act[w++] = a;
        }
        m = w;
    }
    free(h); free(act); free(sw);
    return G;
}
