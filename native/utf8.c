#include "kernels.h"

int64_t sd_count_chars(const uint8_t *T, int64_t n, const int64_t *from, const int64_t *to, int64_t m,
                       int64_t *out) {
    for (int64_t i = 0; i < m; i++) {
        if (from[i] < 0 || to[i] < from[i] || to[i] > n) return i;
        int64_t c = 0;
        for (int64_t p = from[i]; p < to[i]; p++) c += (T[p] & 0xC0) != 0x80;
        out[i] = c;
    }
    return m;
}
