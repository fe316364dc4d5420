#include <stdlib.h>
#include <string.h>
#include "kernels.h"

/* murmur3's finalizer: the polynomial hash alone orders k-grams too regularly for the
 * minimum of a window to be a fair sample. */
static inline uint64_t fmix64(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

#define HASH_BASE 0x100000001b3ULL

typedef struct { uint64_t h; int64_t j; } slot;

int64_t sd_anchors(const uint8_t *T, int es, const int64_t *offsets, int64_t ndocs, int64_t k, int64_t L,
                   int64_t *pos, uint64_t *hash, int64_t cap) {
    int64_t w = L - k + 1, size = 1;
    while (size < w + 1) size <<= 1;
    slot *ring = malloc((size_t)size * sizeof(slot));
    if (!ring) return -1;
    const int64_t mask = size - 1;
    uint64_t top = 1; /* HASH_BASE^(k-1): the weight of the token that leaves */
    for (int64_t i = 1; i < k; i++) top *= HASH_BASE;
    int64_t count = 0;
    for (int64_t d = 0; d < ndocs; d++) {
        const int64_t s = offsets[d], e = offsets[d + 1];
        if (e - s < L) continue;
        uint64_t h = 0;
        for (int64_t i = 0; i < k - 1; i++) h = h * HASH_BASE + tok_at(T, s + i, es) + 1;
        /* Monotone deque of (hash, k-gram start) over the last w k-grams: the front is the
         * smallest, the leftmost among equals (a later equal hash does not evict it). */
        int64_t head = 0, tail = 0, last = -1;
        for (int64_t j = s; j + k <= e; j++) {
            if (j > s) h -= top * (tok_at(T, j - 1, es) + 1);
            h = h * HASH_BASE + tok_at(T, j + k - 1, es) + 1;
            const uint64_t m = fmix64(h);
            while (tail > head && ring[(tail - 1) & mask].h > m) tail--;
            ring[tail & mask] = (slot){m, j};
            tail++;
            const int64_t p = j + k - L; /* the window [p, p+L) has just become whole */
            if (p < s) continue;
            while (ring[head & mask].j < p) head++;
            const slot a = ring[head & mask];
            /* the window minimum only moves right, so a new anchor is a new position */
            if (a.j != last) {
                if (count < cap) { pos[count] = a.j; hash[count] = a.h; }
                count++;
                last = a.j;
            }
        }
    }
    free(ring);
    return count;
}

int64_t sd_regions(const int64_t *anchors, int64_t na, const int64_t *offsets, int64_t ndocs, int64_t k, int64_t L,
                   int64_t *starts, int64_t *ends) {
    int64_t r = 0, d = 0, cur_doc = -1;
    for (int64_t i = 0; i < na; i++) {
        const int64_t a = anchors[i];
        while (d + 1 < ndocs && offsets[d + 1] <= a) d++;
        int64_t lo = a + k - L, hi = a + L;
        if (lo < offsets[d]) lo = offsets[d];
        if (hi > offsets[d + 1]) hi = offsets[d + 1];
        if (r > 0 && cur_doc == d && lo <= ends[r - 1]) {
            if (hi > ends[r - 1]) ends[r - 1] = hi;
        } else {
            starts[r] = lo; ends[r] = hi; r++;
            cur_doc = d;
        }
    }
    return r;
}

void sd_gather_regions(const uint8_t *T, int es, const int64_t *starts, const int64_t *ends, int64_t nr,
                       uint8_t *out) {
    int64_t o = 0;
    for (int64_t r = 0; r < nr; r++) {
        const int64_t len = ends[r] - starts[r];
        memcpy(out + o * es, T + starts[r] * es, (size_t)(len * es));
        o += len;
    }
}

void sd_member(const uint64_t *set, int64_t ns, const uint64_t *q, int64_t nq, uint8_t *out, uint64_t *table,
               uint8_t *used, int64_t size) {
    const uint64_t mask = (uint64_t)size - 1;
    /* the hashes are already mixed: their low bits index the table directly */
    for (int64_t i = 0; i < ns; i++) {
        uint64_t s = set[i] & mask;
        while (used[s] && table[s] != set[i]) s = (s + 1) & mask;
        used[s] = 1;
        table[s] = set[i];
    }
    for (int64_t i = 0; i < nq; i++) {
        uint64_t s = q[i] & mask;
        uint8_t hit = 0;
        while (used[s]) {
            if (table[s] == q[i]) { hit = 1; break; }
            s = (s + 1) & mask;
        }
        out[i] = hit;
    }
}
