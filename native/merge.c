#include <stdlib.h>
#include <string.h>
#include "kernels.h"

/* Cursor on one stream: the distinct window at wpos[i], its run of equal windows ending
 * before wpos index `end`, and its ordinal `run` among the shard's distinct windows. */
typedef struct {
    sd_stream *s;
    int64_t i, end, run;
} cursor;

static void cursor_load(cursor *c) {
    int64_t j = c->i + 1;
    while (j < c->s->nw && !c->s->wnew[j]) j++;
    c->end = j;
}

/* Compares the L-token windows under two cursors; never reads more than L tokens. */
static int cmp_windows(const cursor *a, const cursor *b, int es, int64_t L) {
    const uint8_t *ta = a->s->T, *tb = b->s->T;
    int64_t pa = idx_at(a->s->wpos, a->i, a->s->wpos64);
    int64_t pb = idx_at(b->s->wpos, b->i, b->s->wpos64);
    if (es == 1) {
        int r = memcmp(ta + pa, tb + pb, (size_t)L);
        return (r > 0) - (r < 0);
    }
    for (int64_t h = 0; h < L; h++) {
        uint32_t x = tok_at(ta, pa + h, es), y = tok_at(tb, pb + h, es);
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

/* Ties on the window go to the lower shard, so the merge order is fully determined. */
static int less(const cursor *a, const cursor *b, int es, int64_t L) {
    int r = cmp_windows(a, b, es, L);
    if (r) return r < 0;
    return a->s < b->s;
}

static void sift_down(cursor **h, int m, int at, int es, int64_t L) {
    for (;;) {
        int l = 2 * at + 1, r = l + 1, best = at;
        if (l < m && less(h[l], h[best], es, L)) best = l;
        if (r < m && less(h[r], h[best], es, L)) best = r;
        if (best == at) return;
        cursor *t = h[at]; h[at] = h[best]; h[best] = t;
        at = best;
    }
}

static void sift_up(cursor **h, int at, int es, int64_t L) {
    while (at > 0) {
        int p = (at - 1) / 2;
        if (!less(h[at], h[p], es, L)) return;
        cursor *t = h[at]; h[at] = h[p]; h[p] = t;
        at = p;
    }
}

int64_t sd_merge(sd_stream *streams, int k, int es, int64_t L) {
    cursor *cur = calloc((size_t)(k ? k : 1), sizeof(cursor));
    cursor **heap = calloc((size_t)(k ? k : 1), sizeof(cursor *));
    cursor **group = calloc((size_t)(k ? k : 1), sizeof(cursor *));
    if (!cur || !heap || !group) { free(cur); free(heap); free(group); return -1; }
    int m = 0;
    for (int s = 0; s < k; s++) {
        cur[s].s = &streams[s];
        cur[s].i = 0;
        cur[s].run = 0;
        if (streams[s].nw > 0) {
            cursor_load(&cur[s]);
            heap[m] = &cur[s];
            sift_up(heap, m, es, L);
            m++;
        }
    }
    int64_t G = 0;
    while (m > 0) {
        /* Pop the smallest window and every head equal to it: one global group. */
        int g = 0;
        group[g++] = heap[0];
        heap[0] = heap[--m];
        sift_down(heap, m, 0, es, L);
        while (m > 0 && cmp_windows(heap[0], group[0], es, L) == 0) {
            group[g++] = heap[0];
            heap[0] = heap[--m];
            sift_down(heap, m, 0, es, L);
        }
        int64_t count = 0;
        for (int j = 0; j < g; j++) count += group[j]->end - group[j]->i;
        int64_t id = count >= 2 ? G++ : -1;
        for (int j = 0; j < g; j++) {
            cursor *c = group[j];
            c->s->run_gid[c->run] = id;
            c->i = c->end;
            c->run++;
            if (c->i < c->s->nw) {
                cursor_load(c);
                heap[m] = c;
                sift_up(heap, m, es, L);
                m++;
            }
        }
    }
    free(cur); free(heap); free(group);
    return G;
}
