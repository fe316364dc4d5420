#include "kernels.h"

/* How far ahead the loops prefetch their random accesses: the three passes are each one
 * independent random access per element, so keeping ~PF misses in flight hides latency. */
#define PF 32

/* Phi algorithm, one body per index width: the generic accessors cost a branch per access,
 * and this loop is memory-bound enough that it shows. */
#define LCP_PHI(IDX)                                                                          \
    static void lcp_##IDX(const uint8_t *T, int es, int64_t n, const IDX *sa, IDX *lcp, IDX *phi) { \
        /* Phi[sa[i]] = sa[i-1]; Phi of the smallest suffix is -1. */                         \
        phi[sa[0]] = -1;                                                                      \
        for (int64_t i = 1; i < n; i++) {                                                     \
            if (i + PF < n) __builtin_prefetch(&phi[sa[i + PF]], 1);                          \
            phi[sa[i]] = sa[i - 1];                                                           \
        }                                                                                     \
        /* PLCP in text order, into lcp: each step loses at most one matched token, so the    \
         * total work is O(n) whatever the repetition. */                                     \
        int64_t h = 0;                                                                        \
        for (int64_t p = 0; p < n; p++) {                                                     \
            if (p + PF < n && phi[p + PF] >= 0)                                               \
                __builtin_prefetch(T + (phi[p + PF] + h) * es);                               \
            int64_t q = phi[p];                                                               \
            if (q < 0) { h = 0; lcp[p] = 0; continue; }                                       \
            if (es == 1) {                                                                    \
                while (p + h < n && q + h < n && T[p + h] == T[q + h]) h++;                   \
            } else {                                                                          \
                while (p + h < n && q + h < n && tok_at(T, p + h, es) == tok_at(T, q + h, es)) h++; \
            }                                                                                 \
            lcp[p] = (IDX)h;                                                                  \
            if (h > 0) h--;                                                                   \
        }                                                                                     \
        /* Back to suffix-array order: lcp[i] = PLCP[sa[i]]. */                               \
        for (int64_t i = 0; i < n; i++) {                                                     \
            if (i + PF < n) __builtin_prefetch(&lcp[sa[i + PF]]);                             \
            phi[i] = lcp[sa[i]];                                                              \
        }                                                                                     \
        for (int64_t i = 0; i < n; i++) lcp[i] = phi[i];                                      \
    }

LCP_PHI(int32_t)
LCP_PHI(int64_t)

void sd_lcp(const uint8_t *T, int es, int64_t n, const void *sa, void *lcp, void *tmp, int is64) {
    if (n == 0) return;
    if (is64) lcp_int64_t(T, es, n, sa, lcp, tmp);
    else lcp_int32_t(T, es, n, sa, lcp, tmp);
}

/* OUT is the capped value's type: uint8_t for cap <= 255, else uint16_t (cap <= 65535). */
#define LCP_CAPPED(IDX, OUT)                                                                  \
    static void lcp_capped_##IDX##_##OUT(const uint8_t *T, int es, int64_t n, const IDX *sa, OUT *lcp,        \
                                         int64_t cap) {                                       \
        lcp[0] = 0;                                                                           \
        for (int64_t i = 1; i < n; i++) {                                                     \
            if (i + PF < n) prefetch_window(T + (int64_t)sa[i + PF] * es, cap * es);          \
            const int64_t p = sa[i - 1], q = sa[i];                                           \
            int64_t m = n - (p > q ? p : q); /* tokens both suffixes still have */            \
            if (m > cap) m = cap;                                                             \
            lcp[i] = (OUT)(common_bytes(T + p * es, T + q * es, 0, m * es) / es);              \
        }                                                                                     \
    }

LCP_CAPPED(int32_t, uint8_t)
LCP_CAPPED(int64_t, uint8_t)
LCP_CAPPED(int32_t, uint16_t)
LCP_CAPPED(int64_t, uint16_t)

void sd_lcp_capped(const uint8_t *T, int es, int64_t n, const void *sa, int is64, void *lcp, int64_t cap) {
    if (n == 0) return;
    if (cap <= 255) {
        if (is64) lcp_capped_int64_t_uint8_t(T, es, n, sa, lcp, cap);
        else lcp_capped_int32_t_uint8_t(T, es, n, sa, lcp, cap);
    } else {
        if (is64) lcp_capped_int64_t_uint16_t(T, es, n, sa, lcp, cap);
        else lcp_capped_int32_t_uint16_t(T, es, n, sa, lcp, cap);
    }
}
