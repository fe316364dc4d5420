#include "kernels.h"

int64_t sd_local_windows(const void *sa, const void *lcp, int is64, int64_t n, const uint8_t *valid,
                         int64_t L, void *wpos, int wpos64, uint8_t *wnew) {
    int64_t m = 0;
    /* LCP of two suffix-array entries is the minimum of the lcp values between them, so a
     * running minimum since the last kept window says whether the next one shares L tokens. */
    int64_t run_min = INT64_MAX;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0) {
            int64_t v = idx_at(lcp, i, is64);
            if (v < run_min) run_min = v;
        }
        int64_t p = idx_at(sa, i, is64);
        if (!valid[p]) continue;
        wnew[m] = (m == 0 || run_min < L) ? 1 : 0;
        idx_set(wpos, m, wpos64, p);
        m++;
        run_min = INT64_MAX;
    }
    return m;
}
