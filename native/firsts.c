#include <stdlib.h>
#include "kernels.h"

#define PF 32

/* sd_scatter, and per distinct window of a repeated group the two smallest of its positions in
 * the shard. The windows of one group form one run of the shard's sorted stream, and groups
 * are numbered in the order the runs come, so out_g is increasing: the remove stage merges
 * the shards' lists into the corpus' first and second occurrences in one sequential pass per
 * shard instead of a random lookup per window (sd_first_two). A run's two positions are kept
 * in registers and its entries written once, when the next run starts: the lists can then be
 * int32 (out64 0) and written straight into the file's map, with no int64 array to fault in
 * and cast. */
int64_t sd_scatter_first_two(const void *wpos, int wpos64, const uint16_t *wl, int64_t nw, int64_t L,
                             const void *run_gid, int run_gid64, void *gid, int gid64, void *out_g, void *out_p1,
                             void *out_p2, int out64, int64_t *n_out) {
    int64_t run = -1, g = -1, written = 0, k = -1, p1 = -1, p2 = -1;
    for (int64_t j = 0; j < nw; j++) {
        if (j + PF < nw) {
            int64_t f = idx_at(wpos, j + PF, wpos64);
            __builtin_prefetch(gid64 ? (void *)((int64_t *)gid + f) : (void *)((int32_t *)gid + f), 1);
        }
        if (j == 0 || wl[j] < L) {
            if (g >= 0) { /* the listed run before this one is complete */
                idx_set(out_p1, k, out64, p1);
                idx_set(out_p2, k, out64, p2);
            }
            g = idx_at(run_gid, ++run, run_gid64);
            if (g >= 0) {
                k++;
                idx_set(out_g, k, out64, g);
                p1 = p2 = -1;
            }
        }
        if (g >= 0) {
            const int64_t p = idx_at(wpos, j, wpos64);
            idx_set(gid, p, gid64, g);
            written++;
            if (p1 < 0 || p < p1) {
                p2 = p1;
                p1 = p;
            } else if (p2 < 0 || p < p2) {
                p2 = p;
            }
        }
    }
    if (g >= 0) {
        idx_set(out_p1, k, out64, p1);
        idx_set(out_p2, k, out64, p2);
    }
    *n_out = k + 1;
    return written;
}

/* Sorted-text position q to shard position over the runs (rstart, roff): the lists come in
 * group order, not text order, so each q is looked up: `bucket[q >> BSHIFT]` is the run
 * holding the bucket's first position, and a short scan forward finds q's run (runs are
 * hundreds of tokens or more), instead of a binary search's unpredictable branches. */
#define BSHIFT 10
static inline int64_t place(const int64_t *rstart, const int64_t *roff, const int64_t *bucket, int64_t q) {
    int64_t r = bucket[q >> BSHIFT];
    while (roff[r + 1] <= q) r++;
    return rstart[r] + q - roff[r];
}

int sd_merge_first_two(const void *g, const void *q1, const void *q2, int is64, int64_t m, const int64_t *rstart,
                       const int64_t *roff, int64_t nr, int64_t base, int64_t groups, int64_t *first,
                       int64_t *second) {
    const int64_t n = roff[nr];
    int64_t *bucket = NULL;
    if (rstart) {
        const int64_t nb = (n >> BSHIFT) + 1;
        bucket = malloc((size_t)nb * sizeof(int64_t));
        if (!bucket) return -2;
        int64_t r = 0;
        for (int64_t b = 0; b < nb; b++) {
            while (r + 1 < nr && roff[r + 1] <= (b << BSHIFT)) r++;
            bucket[b] = r;
        }
    }
    int rc = 0;
    for (int64_t i = 0; i < m; i++) {
        const int64_t k = idx_at(g, i, is64), a = idx_at(q1, i, is64), b = idx_at(q2, i, is64);
        if (k < 0 || k >= groups || a < 0 || a >= n || b >= n) { rc = -1; break; }
        const int64_t p1 = base + (rstart ? place(rstart, roff, bucket, a) : a);
        if (first[k] < 0) { /* first seen in this shard: its two first are the corpus' so far */
            first[k] = p1;
            second[k] = b < 0 ? -1 : base + (rstart ? place(rstart, roff, bucket, b) : b);
        } else if (second[k] < 0) { /* seen in an earlier shard once: this shard's first is the second */
            second[k] = p1;
        }
    }
    free(bucket);
    return rc;
}
