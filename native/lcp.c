#include "kernels.h"

void sd_lcp(const uint8_t *T, int es, int64_t n, const void *sa, void *lcp, void *tmp, int is64) {
    if (n == 0) return;
    /* Phi[sa[i]] = sa[i-1], kept in tmp; Phi of the smallest suffix is -1. */
    idx_set(tmp, idx_at(sa, 0, is64), is64, -1);
    for (int64_t i = 1; i < n; i++) idx_set(tmp, idx_at(sa, i, is64), is64, idx_at(sa, i - 1, is64));
    /* PLCP in text order, into lcp: each step loses at most one matched token, so the
     * total work is O(n) whatever the repetition. */
    int64_t h = 0;
    for (int64_t p = 0; p < n; p++) {
        int64_t q = idx_at(tmp, p, is64);
        if (q < 0) { h = 0; idx_set(lcp, p, is64, 0); continue; }
        if (es == 1) {
            while (p + h < n && q + h < n && T[p + h] == T[q + h]) h++;
        } else {
            while (p + h < n && q + h < n && tok_at(T, p + h, es) == tok_at(T, q + h, es)) h++;
        }
        idx_set(lcp, p, is64, h);
        if (h > 0) h--;
    }
    /* Back to suffix-array order: lcp[i] = PLCP[sa[i]]. */
    for (int64_t i = 0; i < n; i++) idx_set(tmp, i, is64, idx_at(lcp, idx_at(sa, i, is64), is64));
    for (int64_t i = 0; i < n; i++) idx_set(lcp, i, is64, idx_at(tmp, i, is64));
}
