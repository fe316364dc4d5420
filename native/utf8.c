#include "kernels.h"

int64_t sd_count_chars(const uint8_t *T, int64_t n, const int64_t *from, const int64_t *to, int64_t m,
                       int64_t *out) {
    /* Spans are asked for in document order, each counted from its document's start: a
     * range with the same start as the one before and an end at or past its end is that
     * range's count plus the bytes between the two ends, so a document with many spans is
     * read once, not once per span. */
    int64_t pf = -1, pt = -1, pc = 0;
    for (int64_t i = 0; i < m; i++) {
        if (from[i] < 0 || to[i] < from[i] || to[i] > n) return i;
        int64_t p = from[i], c = 0;
        if (p == pf && to[i] >= pt) {
            p = pt;
            c = pc;
        }
        for (; p < to[i]; p++) c += (T[p] & 0xC0) != 0x80;
        out[i] = c;
        pf = from[i];
        pt = to[i];
        pc = c;
    }
    return m;
}
