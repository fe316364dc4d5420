#include "kernels.h"

#define PF 32

/* sd_scatter, and per distinct window of a repeated group the two smallest of its positions in
 * the shard. The windows of one group form one run of the shard's sorted stream, and groups
 * are numbered in the order the runs come, so out_g is increasing: the remove stage merges
 * the shards' lists into the corpus' first and second occurrences in one sequential pass per
 * shard instead of a random lookup per window (sd_first_two). */
int64_t sd_scatter_first_two(const void *wpos, int wpos64, const uint16_t *wl, int64_t nw, int64_t L,
                             const int64_t *run_gid, void *gid, int gid64, int64_t *out_g, int64_t *out_p1,
                             int64_t *out_p2, int64_t *n_out) {
    int64_t run = -1, g = -1, written = 0, k = -1;
    for (int64_t j = 0; j < nw; j++) {
        if (j + PF < nw) {
            int64_t f = idx_at(wpos, j + PF, wpos64);
            __builtin_prefetch(gid64 ? (void *)((int64_t *)gid + f) : (void *)((int32_t *)gid + f), 1);
        }
        if (j == 0 || wl[j] < L) {
            g = run_gid[++run];
            if (g >= 0) {
                k++;
                out_g[k] = g;
                out_p1[k] = -1;
                out_p2[k] = -1;
            }
        }
        if (g >= 0) {
            const int64_t p = idx_at(wpos, j, wpos64);
            idx_set(gid, p, gid64, g);
            written++;
            if (out_p1[k] < 0 || p < out_p1[k]) {
                out_p2[k] = out_p1[k];
                out_p1[k] = p;
            } else if (out_p2[k] < 0 || p < out_p2[k]) {
                out_p2[k] = p;
            }
        }
    }
    *n_out = k + 1;
    return written;
}
