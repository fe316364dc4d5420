#include "kernels.h"

/* prefetch distance for the random accesses through the suffix array */
#define PF 32

int64_t sd_local_windows(const void *sa, int is64, const void *lcp, int lw, int64_t n, const uint8_t *valid, int64_t L,
                         void *wpos, int wpos64, uint16_t *wl, int64_t i0, int64_t i1, int64_t *run_min_io,
                         int64_t m_before) {
    /* valid is read at random, one position per suffix: as bits it is an eighth of the
     * shard (3.7 MB for 29.5M tokens, which the last-level cache holds), as bytes it was
     * as large as the text and most reads went to memory */
    int64_t m = 0;
    /* LCP of two suffix-array entries is the minimum of the lcp values between them, so a
     * running minimum since the last kept window is its common prefix with the next one. */
    int64_t run_min = *run_min_io;
    for (int64_t i = i0; i < i1; i++) {
        if (i > 0) {
            int64_t v = lcp_at(lcp, i, lw);
            if (v < run_min) run_min = v;
        }
        if (i + PF < n) __builtin_prefetch(&valid[idx_at(sa, i + PF, is64) >> 3]);
        int64_t p = idx_at(sa, i, is64);
        if (!((valid[p >> 3] >> (p & 7)) & 1)) continue;
        wl[m] = (uint16_t)(m_before + m == 0 ? 0 : (run_min < L ? run_min : L));
        idx_set(wpos, m, wpos64, p);
        m++;
        run_min = INT64_MAX;
    }
    *run_min_io = run_min;
    return m;
}

int64_t sd_scatter(const void *wpos, int wpos64, const uint16_t *wl, int64_t nw, int64_t L, const void *run_gid,
                int run_gid64, void *gid, int gid64) {
    int64_t run = -1, g = -1, written = 0;
    for (int64_t j = 0; j < nw; j++) {
        if (j + PF < nw) {
            int64_t f = idx_at(wpos, j + PF, wpos64);
            __builtin_prefetch(gid64 ? (void *)((int64_t *)gid + f) : (void *)((int32_t *)gid + f), 1);
        }
        if (j == 0 || wl[j] < L) g = idx_at(run_gid, ++run, run_gid64);
        if (g >= 0) {
            idx_set(gid, idx_at(wpos, j, wpos64), gid64, g);
            written++;
        }
    }
    return written;
}
