/* Count and locate: the suffixes of a shard that start with a pattern, by binary search over
 * its suffix array, and which of them lie inside one document.
 *
 * The shard's documents are concatenated without separators, so the suffix array sorts
 * suffixes that run on into the next document: a pattern found there may straddle a
 * document end. sd_in_documents drops those, so an occurrence is always the pattern's
 * tokens inside one document. */
#include <string.h>
#include "kernels.h"

/* <0, 0 or >0: the first m tokens of the suffix at p against P, where 0 means P is a prefix
 * of the suffix. A suffix shorter than P that agrees with it to its end sorts before P, as
 * the shorter of two strings equal up to its length does in the suffix array. */
static int cmp_prefix(const uint8_t *T, int es, int64_t n, int64_t p, const uint8_t *P, int64_t m) {
    int64_t len = n - p < m ? n - p : m;
    if (es == 1) { /* bytes compare as unsigned, the suffix array's order */
        int c = memcmp(T + p, P, (size_t)len);
        if (c) return c;
    } else {       /* wider tokens are numbers in native byte order: memcmp would be wrong on little-endian */
        for (int64_t i = 0; i < len; i++) {
            uint32_t a = tok_at(T, p + i, es), b = tok_at(P, i, es);
            if (a != b) return a < b ? -1 : 1;
        }
    }
    return len < m ? -1 : 0;
}

void sd_sa_range(const uint8_t *T, int es, int64_t n, const void *sa, int is64, const uint8_t *P, int64_t m,
                 int64_t *lo_out, int64_t *hi_out) {
    /* first suffix not below P */
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cmp_prefix(T, es, n, idx_at(sa, mid, is64), P, m) < 0) lo = mid + 1;
        else hi = mid;
    }
    int64_t first = lo;
    /* first suffix above every suffix that starts with P */
    hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cmp_prefix(T, es, n, idx_at(sa, mid, is64), P, m) <= 0) lo = mid + 1;
        else hi = mid;
    }
    *lo_out = first;
    *hi_out = lo;
}

int64_t sd_in_documents(const void *sa, int is64, int64_t from, int64_t to, const int64_t *offsets, int64_t ndocs,
                        int64_t m, int64_t *out, int64_t cap) {
    int64_t n = offsets[ndocs], count = 0;
    for (int64_t i = from; i < to; i++) {
        int64_t p = idx_at(sa, i, is64);
        if (p < 0 || p >= n) return -1;
        /* the document holding p: the last one that starts at or before it (empty documents
         * start where the next one does, so the last of equal starts is the one that holds p) */
        int64_t a = 0, b = ndocs;
        while (b - a > 1) {
            int64_t mid = a + (b - a) / 2;
            if (offsets[mid] <= p) a = mid;
            else b = mid;
        }
        if (p + m <= offsets[a + 1]) {
            if (count < cap) out[count] = p;
            count++;
        }
    }
    return count;
}
