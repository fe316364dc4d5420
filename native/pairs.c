#include "kernels.h"

#define PF 16
#define LOW 0xffffffffu

/* In-place sort of unsigned 64-bit keys: quicksort (median of three, the smaller side first
 * by recursion, the larger by the loop), insertion sort below 24 keys, heapsort past a depth
 * of 2 log2 n (so no input costs more than n log n). No memory beyond the stack. */
static void insertion_u64(uint64_t *x, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        uint64_t v = x[i];
        int64_t j = i;
        while (j > 0 && x[j - 1] > v) { x[j] = x[j - 1]; j--; }
        x[j] = v;
    }
}

static void sift_u64(uint64_t *x, int64_t i, int64_t n) {
    uint64_t v = x[i];
    for (int64_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && x[c + 1] > x[c]) c++;
        if (x[c] <= v) break;
        x[i] = x[c];
    }
    x[i] = v;
}

static void heapsort_u64(uint64_t *x, int64_t n) {
    for (int64_t i = n / 2 - 1; i >= 0; i--) sift_u64(x, i, n);
    for (int64_t e = n - 1; e > 0; e--) {
        uint64_t t = x[0]; x[0] = x[e]; x[e] = t;
        sift_u64(x, 0, e);
    }
}

static void introsort_u64(uint64_t *x, int64_t n, int depth) {
    while (n > 24) {
        if (depth-- == 0) { heapsort_u64(x, n); return; }
        uint64_t a = x[0], b = x[n / 2], c = x[n - 1];
        uint64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int64_t i = 0, j = n - 1;
        for (;;) {  /* Hoare partition: x[0..j] <= pivot <= x[j+1..n) */
            while (x[i] < pivot) i++;
            while (x[j] > pivot) j--;
            if (i >= j) break;
            uint64_t t = x[i]; x[i] = x[j]; x[j] = t;
            i++; j--;
        }
        int64_t left = j + 1;  /* x[0..left) and x[left..n) */
        if (left < n - left) { introsort_u64(x, left, depth); x += left; n -= left; }
        else { introsort_u64(x + left, n - left, depth); n = left; }
    }
    insertion_u64(x, n);
}

static void sort_u64(uint64_t *x, int64_t n) {
    int depth = 0;
    for (int64_t k = n; k > 1; k >>= 1) depth += 2;
    introsort_u64(x, n, depth);
}

/* Numbers the runs of equal b (high half of the keys, sorted here) of one bucket of a: a run
 * of two or more keys gets id *next (then incremented), a lone key -1, in ids[j] for k[j]. */
static void number_bucket(uint64_t *k, int64_t n, int64_t *next, uint32_t *ids) {
    if (n == 1) {
        ids[0] = (uint32_t)-1;
        return;
    }
    if (n == 2) {
        if (k[0] > k[1]) { uint64_t t = k[0]; k[0] = k[1]; k[1] = t; }
    } else {
        sort_u64(k, n);
    }
    for (int64_t r = 0; r < n;) {
        int64_t t = r + 1;
        while (t < n && (k[t] >> 32) == (k[r] >> 32)) t++;
        const uint32_t id = t - r > 1 ? (uint32_t)(*next)++ : (uint32_t)-1;
        for (int64_t j = r; j < t; j++) ids[j] = id;
        r = t;
    }
}

int64_t sd_pair_gid(const void *gid, int gid64, int64_t n, int64_t d, const int64_t *offsets, int64_t nr, int64_t w,
                    int shift, int64_t *part,
                    int64_t nparts, int64_t *start, uint64_t *keys, uint32_t *alow, uint64_t *keys2, void *out,
                    int out64) {
    /* 1. the pairs (gid[p], gid[p + d]) of repeated parts, by the high bits of the first into
     *    parts, each written as a stream (part[] holds the parts' starts, nparts + 1 entries,
     *    used as fill pointers: part[p] ends as part p's end); every out[p] -1 meanwhile */
    const int64_t width = (int64_t)1 << shift;
    int64_t r = 0;
    for (int64_t p = 0; p < n; p++) {
        idx_set(out, p, out64, -1);
        if (p + d >= n) continue;
        const int64_t x = idx_at(gid, p, gid64);
        if (x < 0) continue;
        const int64_t y = idx_at(gid, p + d, gid64);
        if (y < 0 || (w && !in_one(offsets, nr, &r, p, w))) continue;
        const int64_t at = part[x >> shift]++;
        keys[at] = ((uint64_t)y << 32) | (uint64_t)p;
        alow[at] = (uint32_t)(x & (width - 1));
    }
    /* 2. per part, a counting sort by the low bits of the first (its counters stay in cache),
     *    each bucket's keys sorted and numbered: in increasing first, then second */
    int64_t next = 0, s = 0;
    for (int64_t q = 0; q < nparts; q++) {
        const int64_t e = part[q], m = e - s;
        if (m > 0) {
            for (int64_t g = 0; g <= width; g++) start[g] = 0;
            for (int64_t j = s; j < e; j++) start[alow[j] + 1]++;
            for (int64_t g = 0; g < width; g++) start[g + 1] += start[g];
            for (int64_t j = s; j < e; j++) keys2[start[alow[j]]++] = keys[j];
            int64_t b = 0;  /* start[g] is now where bucket g ends */
            for (int64_t g = 0; g < width; g++) {
                if (start[g] > b) number_bucket(keys2 + b, start[g] - b, &next, alow + s + b);
                b = start[g];
            }
            /* the ids to their positions, at random: prefetched */
            for (int64_t j = 0; j < m; j++) {
                if (j + PF < m) __builtin_prefetch(out64 ? (void *)((int64_t *)out + (keys2[j + PF] & LOW))
                                                         : (void *)((int32_t *)out + (keys2[j + PF] & LOW)), 1);
                idx_set(out, (int64_t)(keys2[j] & LOW), out64, (int32_t)alow[s + j]);
            }
        }
        s = e;
    }
    return next;
}
