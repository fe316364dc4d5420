/* Document-level kernels: normalization, shingling, MinHash signatures, exact Jaccard,
 * union-find. See minhash.h for the definitions; sadedup/minhash.py for the math. */
#include <stdlib.h>
#include <string.h>

#include "minhash.h"

/* The hot loop gets AVX2 and AVX-512 builds next to the portable one; the loader picks the
 * best the CPU has (GCC function multi-versioning, Linux x86-64 only). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SD_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define SD_CLONES
#endif

#define K1 0x9E3779B97F4A7C15ULL
#define K2 0xC2B2AE3D27D4EB4FULL
#define K3 0x165667B19E3779F9ULL

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t fmix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

static inline const uint8_t *doc_at(const sd_docs *D, int64_t d, int64_t *len) {
    int64_t s = D->starts[d], e = D->ends[d];
    *len = e - s;
    return s >= D->lenA ? D->B + (s - D->lenA) : D->A + s;
}

/* ASCII whitespace as Python's str.isspace() sees it */
static const uint8_t ASCII_WS[128] = {
    ['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1,
    [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, [' '] = 1};

/* Byte length of the whitespace character at p[i], 0 when it is not whitespace. */
static inline int ws_len(const uint8_t *p, int64_t i, int64_t n) {
    uint8_t c = p[i];
    if (c < 0x80) return ASCII_WS[c];
    if (c == 0xC2) return i + 1 < n && (p[i + 1] == 0x85 || p[i + 1] == 0xA0) ? 2 : 0;
    if (c < 0xE1 || c > 0xE3 || i + 2 >= n) return 0;
    uint8_t c1 = p[i + 1], c2 = p[i + 2];
    if (c == 0xE1) return c1 == 0x9A && c2 == 0x80 ? 3 : 0;                    /* U+1680 */
    if (c == 0xE3) return c1 == 0x80 && c2 == 0x80 ? 3 : 0;                    /* U+3000 */
    if (c1 == 0x80) return (c2 <= 0x8A || c2 == 0xA8 || c2 == 0xA9 || c2 == 0xAF) ? 3 : 0; /* U+2000.. */
    if (c1 == 0x81) return c2 == 0x9F ? 3 : 0;                                 /* U+205F */
    return 0;
}

static inline uint8_t lower1(uint8_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

/* ASCII upper case to lower case in 8 bytes at once; other bytes are untouched. */
static inline uint64_t lower8(uint64_t x) {
    const uint64_t ones = 0x0101010101010101ULL;
    uint64_t hept = x & (0x7f * ones);
    uint64_t ge_A = hept + (0x80 - 'A') * ones;
    uint64_t gt_Z = hept + (0x7f - 'Z') * ones;
    uint64_t upper = ge_A & ~gt_Z & ~x & (0x80 * ones);
    return x | (upper >> 2);
}

/* 8 bytes from p (little-endian order), only the first `len` (1..8) kept; reads past p + len
 * only when that stays below `lim`. */
static inline uint64_t load_le(const uint8_t *p, int64_t len, const uint8_t *lim) {
    uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (p + 8 <= lim) {
        memcpy(&v, p, 8);
        return len >= 8 ? v : v & ((1ULL << (8 * len)) - 1);
    }
#endif
    for (int64_t k = 0; k < len && k < 8; k++) v |= (uint64_t)p[k] << (8 * k);
    return v;
}

/* 64-bit hash of n > 0 bytes (ASCII lower-cased with `lower`); `lim` is where reading must stop.
 * Distinct words of up to 8 bytes and one length never collide. */
static inline uint64_t hash_bytes(const uint8_t *p, int64_t n, int lower, uint64_t seed, const uint8_t *lim) {
    uint64_t h = seed ^ ((uint64_t)n * K1);
    while (n > 8) {
        uint64_t v = load_le(p, 8, lim);
        if (lower) v = lower8(v);
        h = rotl64(h ^ (v * K2), 31) * K1;
        p += 8;
        n -= 8;
    }
    uint64_t v = load_le(p, n, lim);
    if (lower) v = lower8(v);
    return rotl64(h ^ (v * K2), 31) * K1; /* a bijection of the last block: the shingle hash mixes */
}

/* byte classes for the word scanner: 0 part of a word, 1 ASCII whitespace, 2 the lead byte of
 * a character that may be Unicode whitespace (U+0085, U+00A0, U+1680, U+2000.., U+3000) */
static const uint8_t CLS[256] = {
    ['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1,
    [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, [' '] = 1,
    [0xC2] = 2, [0xE1] = 2, [0xE2] = 2, [0xE3] = 2};

void sd_normalize(const sd_docs *D, int lower, uint8_t *out, int64_t *out_offsets) {
    int64_t o = 0;
    out_offsets[0] = 0;
    for (int64_t d = 0; d < D->ndocs; d++) {
        int64_t n;
        const uint8_t *p = doc_at(D, d, &n);
        int pending = 0; /* a whitespace run was seen after some text */
        int64_t i = 0;
        while (i < n) {
            int w = ws_len(p, i, n);
            if (w) {
                pending = o > out_offsets[d];
                i += w;
                continue;
            }
            if (pending) {
                out[o++] = ' ';
                pending = 0;
            }
            out[o++] = lower ? lower1(p[i]) : p[i];
            i++;
        }
        out_offsets[d + 1] = o;
    }
}

void sd_nonascii(const sd_docs *D, uint8_t *nonascii) {
    for (int64_t d = 0; d < D->ndocs; d++) {
        int64_t n;
        const uint8_t *p = doc_at(D, d, &n);
        uint8_t acc = 0;
        for (int64_t i = 0; i < n; i++) acc |= p[i];
        nonascii[d] = acc >> 7;
    }
}

/* Token hashes of one document; returns how many. `t` has room for n + 1 entries. */
static int64_t tokens(const uint8_t *p, int64_t n, int lower, int mode, uint64_t seed, uint64_t *t) {
    int64_t m = 0, i = 0;
    const uint8_t *lim = p + n;
    if (mode == 0) {
        const uint64_t ones = 0x0101010101010101ULL;
        while (i < n) {
            int cl = CLS[p[i]];
            if (cl) {
                int w = cl == 1 ? 1 : ws_len(p, i, n);
                if (w) {
                    i += w;
                    continue;
                }
            }
            /* a word starts at i: find its end, 8 bytes at a time where possible. A byte below
             * 0x21 or above 0x7f ("special") may end it; the lowest flag of the SWAR test is exact. */
            int64_t j = i + 1;
            for (;;) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                if (j + 8 <= n) {
                    uint64_t x;
                    memcpy(&x, p + j, 8);
                    uint64_t sp = ((x - 0x21 * ones) | x) & (0x80 * ones);
                    if (!sp) {
                        j += 8;
                        continue;
                    }
                    j += __builtin_ctzll(sp) >> 3;
                } else
#endif
                    while (j < n && p[j] >= 0x21 && p[j] < 0x80) j++;
                if (j >= n) break;
                cl = CLS[p[j]];
                if (cl == 1 || (cl == 2 && ws_len(p, j, n))) break;
                j++; /* a control character or a non-ASCII byte inside the word */
            }
            t[m++] = hash_bytes(p + i, j - i, lower, seed, lim);
            i = j;
        }
        return m;
    }
    int pending = 0;
    uint64_t space = fmix64(((uint64_t)' ') ^ seed);
    while (i < n) {
        int w = ws_len(p, i, n);
        if (w) {
            pending = m > 0;
            i += w;
            continue;
        }
        if (pending) {
            t[m++] = space;
            pending = 0;
        }
        uint32_t c = p[i], cp;
        int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        if (i + len > n) len = (int)(n - i); /* never past the end, even on bad input */
        if (len == 1) cp = lower ? lower1((uint8_t)c) : c;
        else {
            cp = c & (0xFF >> (len + 1));
            for (int k = 1; k < len; k++) cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        t[m++] = fmix64((uint64_t)cp ^ seed);
        i += len;
    }
    return m;
}

/* Shingle hashes from token hashes, in place: t[i] becomes the hash of the n-gram starting at
 * token i, fmix64 of the polynomial sum_k t[i+k] * B^(n-1-k) (mod 2^64), rolled along. */
static int64_t shingles(uint64_t *t, int64_t m, int ngram, uint64_t seed) {
    if (m < ngram) return 0;
    const uint64_t B = K3 | 1;
    uint64_t top = 1, H = 0; /* top = B^(n-1) */
    for (int k = 0; k < ngram - 1; k++) top *= B;
    for (int k = 0; k < ngram; k++) H = H * B + t[k];
    int64_t ns = m - ngram + 1;
    uint64_t mix = seed ^ ((uint64_t)ngram * K2);
    for (int64_t i = 0; i < ns; i++) {
        uint64_t out = fmix64(H ^ mix);
        if (i + 1 < ns) H = (H - t[i] * top) * B + t[i + ngram];
        t[i] = out;
    }
    return ns;
}

/* Each signature value is min over the shingles of a cheap 32-bit permutation of the hash:
 * x = (h ^ s) * a, x ^= x >> 15, with a = s * 0x9E3779B9 | 1 odd, so x -> (x ^ s) * a is a
 * bijection. Four permutations share one pass over h: one load feeds four independent
 * multiply chains (the vector units are busy four times as long per load), and the four
 * minima are the same as four separate passes' (min is taken per permutation). */
#define MH_STEP(k)                        \
    do {                                  \
        uint32_t x = (v ^ s##k) * a##k;   \
        x ^= x >> 15;                     \
        m##k = x < m##k ? x : m##k;       \
    } while (0)

SD_CLONES
static void minhash_min(const uint32_t *h, int64_t ns, const uint32_t *seeds, int P, uint32_t *sig) {
    int p = 0;
    for (; p + 4 <= P; p += 4) {
        uint32_t s0 = seeds[p], s1 = seeds[p + 1], s2 = seeds[p + 2], s3 = seeds[p + 3];
        uint32_t a0 = (s0 * 0x9E3779B9U) | 1U, a1 = (s1 * 0x9E3779B9U) | 1U, a2 = (s2 * 0x9E3779B9U) | 1U,
                 a3 = (s3 * 0x9E3779B9U) | 1U;
        uint32_t m0 = UINT32_MAX, m1 = UINT32_MAX, m2 = UINT32_MAX, m3 = UINT32_MAX;
        for (int64_t i = 0; i < ns; i++) {
            uint32_t v = h[i];
            MH_STEP(0);
            MH_STEP(1);
            MH_STEP(2);
            MH_STEP(3);
        }
        sig[p] = m0;
        sig[p + 1] = m1;
        sig[p + 2] = m2;
        sig[p + 3] = m3;
    }
    for (; p < P; p++) { /* the last P % 4 */
        uint32_t s0 = seeds[p], a0 = (s0 * 0x9E3779B9U) | 1U, m0 = UINT32_MAX;
        for (int64_t i = 0; i < ns; i++) {
            uint32_t v = h[i];
            MH_STEP(0);
        }
        sig[p] = m0;
    }
}
#undef MH_STEP

static int64_t max_len(const sd_docs *D) {
    int64_t mx = 0;
    for (int64_t d = 0; d < D->ndocs; d++) {
        int64_t n = D->ends[d] - D->starts[d];
        if (n > mx) mx = n;
    }
    return mx;
}

/* Document d's shingle hashes, in t (room for its length + 1); returns how many. Both the
 * signatures and the exact shingle sets are made from this, so they always agree. */
static int64_t doc_shingles(const sd_docs *D, int64_t d, int lower, int mode, int ngram, uint64_t seed,
                            uint64_t *t) {
    int64_t n;
    const uint8_t *p = doc_at(D, d, &n);
    return shingles(t, tokens(p, n, lower, mode, seed, t), ngram, seed);
}

int sd_minhash(const sd_docs *D, int lower, int mode, int ngram, uint64_t seed, const uint32_t *perm_seeds,
               int num_perm, uint32_t *sig, int64_t *nshingles) {
    int64_t cap = max_len(D) + 1;
    uint64_t *t = malloc((size_t)cap * sizeof(uint64_t));
    uint32_t *h = malloc((size_t)cap * sizeof(uint32_t));
    if (!t || !h) {
        free(t);
        free(h);
        return -1;
    }
    for (int64_t d = 0; d < D->ndocs; d++) {
        int64_t ns = doc_shingles(D, d, lower, mode, ngram, seed, t);
        for (int64_t i = 0; i < ns; i++) h[i] = (uint32_t)(t[i] >> 32);
        nshingles[d] = ns;
        minhash_min(h, ns, perm_seeds, num_perm, sig + d * (int64_t)num_perm);
    }
    free(t);
    free(h);
    return 0;
}

static void insertion_sort(uint64_t *a, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        uint64_t x = a[i];
        int64_t j = i;
        while (j > 0 && a[j - 1] > x) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* MSD radix sort of n 64-bit keys, a byte a level from the top: the keys are hashes, so one
 * level leaves buckets of a few keys for a typical document, finished by insertion sort.
 * `tmp` has room for n. */
static void radix_sort(uint64_t *a, uint64_t *tmp, int64_t n, int shift) {
    if (n <= 32 || shift < 0) {
        insertion_sort(a, n);
        return;
    }
    int64_t count[256] = {0}, start[257], pos[256];
    for (int64_t i = 0; i < n; i++) count[(a[i] >> shift) & 0xFF]++;
    start[0] = 0;
    for (int k = 0; k < 256; k++) {
        start[k + 1] = start[k] + count[k];
        pos[k] = start[k];
    }
    for (int64_t i = 0; i < n; i++) tmp[pos[(a[i] >> shift) & 0xFF]++] = a[i];
    memcpy(a, tmp, (size_t)n * sizeof(uint64_t));
    for (int k = 0; k < 256; k++)
        if (count[k] > 1) radix_sort(a + start[k], tmp + start[k], count[k], shift - 8);
}

int sd_shingle_sets(const sd_docs *D, int lower, int mode, int ngram, uint64_t seed, uint64_t *out,
                    const int64_t *out_offsets, int64_t *counts) {
    int64_t cap = max_len(D) + 1;
    uint64_t *t = malloc((size_t)cap * sizeof(uint64_t));
    uint64_t *tmp = malloc((size_t)cap * sizeof(uint64_t));
    if (!t || !tmp) {
        free(t);
        free(tmp);
        return -1;
    }
    for (int64_t d = 0; d < D->ndocs; d++) {
        int64_t ns = doc_shingles(D, d, lower, mode, ngram, seed, t);
        radix_sort(t, tmp, ns, 56);
        int64_t room = out_offsets[d + 1] - out_offsets[d], k = 0;
        uint64_t *o = out + out_offsets[d];
        for (int64_t i = 0; i < ns && k < room; i++)
            if (i == 0 || t[i] != t[i - 1]) o[k++] = t[i];
        counts[d] = k;
    }
    free(t);
    free(tmp);
    return 0;
}

static inline double jaccard(const uint64_t *h, const int64_t *off, const int64_t *cnt, int64_t p, int64_t q) {
    const uint64_t *a = h + off[p], *b = h + off[q];
    int64_t na = cnt[p], nb = cnt[q], i = 0, j = 0, inter = 0;
    while (i < na && j < nb) {
        uint64_t x = a[i], y = b[j];
        inter += x == y;
        i += x <= y;
        j += y <= x;
    }
    int64_t uni = na + nb - inter;
    return uni ? (double)inter / (double)uni : 0.0;
}

void sd_jaccard_pairs(const uint64_t *h, const int64_t *off, const int64_t *cnt, const int64_t *pi,
                      const int64_t *pj, int64_t npairs, double *out) {
    for (int64_t k = 0; k < npairs; k++) out[k] = jaccard(h, off, cnt, pi[k], pj[k]);
}

static inline int64_t find(int64_t *root, int64_t x) {
    while (root[x] != x) {
        root[x] = root[root[x]];
        x = root[x];
    }
    return x;
}

void sd_components(int64_t n, const int64_t *ei, const int64_t *ej, int64_t nedges, int64_t *root) {
    for (int64_t x = 0; x < n; x++) root[x] = x;
    for (int64_t k = 0; k < nedges; k++) {
        int64_t a = find(root, ei[k]), b = find(root, ej[k]);
        if (a < b) root[b] = a;
        else if (b < a) root[a] = b;
    }
    for (int64_t x = 0; x < n; x++) root[x] = find(root, x);
}

/* ---- the cluster cut (sadedup.lsh.cluster, one pass in C) ---- */

typedef struct { int64_t node; double sim; } cut_member;

static int cmp_cut_member(const void *x, const void *y) {
    const cut_member *a = x, *b = y;
    return (a->node > b->node) - (a->node < b->node);
}

/* The similarity of nodes p and q that are no verified pair; -2 / -3 as sd_cluster_cut. */
static inline int cut_similarity(const sd_similarity *S, int64_t p, int64_t q, double *out) {
    if (S->kind == 0) return -2;
    int64_t a = S->row[p], b = S->row[q];
    if (a < 0 || b < 0) return -3;
    if (S->kind == 1) {
        const uint32_t *x = S->sig + a * S->width, *y = S->sig + b * S->width;
        int64_t same = 0;
        for (int64_t i = 0; i < S->width; i++) same += x[i] == y[i];
        *out = (double)same / (double)S->width;
    } else {
        *out = jaccard(S->h, S->off, S->cnt, a, b);
    }
    return 0;
}

int64_t sd_cluster_cut(int64_t n, const int64_t *ei, const int64_t *ej, const double *esim, int64_t E,
                       const int64_t *by_rank, const double *floor, const sd_similarity *S, int64_t *kept,
                       int64_t *nkept, int64_t *member, int64_t *cluster, double *msim, int64_t *asked) {
    int64_t *root = malloc((size_t)(n ? n : 1) * 8), *start = calloc((size_t)n + 1, 8);
    int64_t *dst = malloc((size_t)(E ? 2 * E : 1) * 8), *stamp = malloc((size_t)(n ? n : 1) * 8);
    int64_t *front = malloc((size_t)(n ? n : 1) * 8), *next = malloc((size_t)(n ? n : 1) * 8);
    double *dsim = malloc((size_t)(E ? 2 * E : 1) * 8);
    uint8_t *remaining = calloc((size_t)(n ? n : 1), 1);
    int64_t *order = malloc((size_t)(n ? n : 1) * 8), *at = calloc((size_t)n + 1, 8);
    cut_member *mem = malloc((size_t)(n ? n : 1) * sizeof(cut_member));
    int64_t rc = 0, m = 0, nk = 0, count = 0, visit = 0;
    *asked = 0;
    if (!root || !start || !dst || !stamp || !front || !next || !dsim || !remaining || !order || !at || !mem) {
        rc = -1;
        goto done;
    }
    sd_components(n, ei, ej, E, root);
    /* adjacency in the order lsh.cluster's stable argsort of (ei, ej) gives: a node's edges
     * as the first end, then as the second, each in edge order */
    for (int64_t k = 0; k < E; k++) { start[ei[k] + 1]++; start[ej[k] + 1]++; }
    for (int64_t x = 0; x < n; x++) start[x + 1] += start[x];
    int64_t *fill = next;  /* scratch until the cut needs it */
    for (int64_t x = 0; x < n; x++) fill[x] = start[x];
    for (int64_t k = 0; k < E; k++) { dst[fill[ei[k]]] = ej[k]; dsim[fill[ei[k]]++] = esim[k]; }
    for (int64_t k = 0; k < E; k++) { dst[fill[ej[k]]] = ei[k]; dsim[fill[ej[k]]++] = esim[k]; }
    /* the nodes in (root, rank, node) order: by_rank is (rank, node) order, counted into
     * place by root, which keeps that order inside a component */
    for (int64_t x = 0; x < n; x++) {
        stamp[x] = -1;
        if (start[x + 1] > start[x]) {
            remaining[x] = 1;
            at[root[x] + 1]++;
            count++;
        }
    }
    for (int64_t x = 0; x < n; x++) at[x + 1] += at[x];
    for (int64_t i = 0; i < n; i++) {
        int64_t x = by_rank[i];
        if (remaining[x]) order[at[root[x]]++] = x;
    }
    for (int64_t c0 = 0, c1; c0 < count; c0 = c1) {
        for (c1 = c0 + 1; c1 < count && root[order[c1]] == root[order[c0]]; c1++) {}
        if (c1 - c0 == 2) {  /* one verified pair: kept whole, the better-ranked node kept */
            int64_t k = order[c0], v = order[c0 + 1];
            double s = 0.0;
            for (int64_t e = start[k]; e < start[k + 1]; e++)
                if (dst[e] == v) { s = dsim[e]; break; }
            kept[nk] = k;
            member[m] = k; cluster[m] = nk; msim[m++] = 1.0;
            member[m] = v; cluster[m] = nk; msim[m++] = s;
            nk++;
            continue;
        }
        for (int64_t c = c0; c < c1; c++) {
            int64_t k = order[c];
            if (!remaining[k]) continue;
            remaining[k] = 0;
            stamp[k] = visit;
            int64_t nm = 0, nf = 0;
            /* direct neighbours of k: their verified similarity is their similarity to k */
            for (int64_t e = start[k]; e < start[k + 1]; e++) {
                int64_t v = dst[e];
                if (!remaining[v] || stamp[v] == visit) continue;
                stamp[v] = visit;
                double f = floor[k] > floor[v] ? floor[k] : floor[v];
                if (dsim[e] >= f) {
                    mem[nm].node = v; mem[nm++].sim = dsim[e];
                    front[nf++] = v;
                }
            }
            while (nf) {
                int64_t nn = 0;
                for (int64_t i = 0; i < nf; i++) {
                    int64_t u = front[i];
                    for (int64_t e = start[u]; e < start[u + 1]; e++) {
                        int64_t v = dst[e];
                        if (!remaining[v] || stamp[v] == visit) continue;
                        stamp[v] = visit;
                        double s, f = floor[k] > floor[v] ? floor[k] : floor[v];
                        int r = cut_similarity(S, k, v, &s);
                        if (r) { rc = r; goto done; }
                        (*asked)++;
                        if (s >= f) {
                            mem[nm].node = v; mem[nm++].sim = s;
                            next[nn++] = v;
                        }
                    }
                }
                int64_t *t = front; front = next; next = t;
                nf = nn;
            }
            visit++;
            if (!nm) continue;
            qsort(mem, (size_t)nm, sizeof(cut_member), cmp_cut_member);
            kept[nk] = k;
            member[m] = k; cluster[m] = nk; msim[m++] = 1.0;
            for (int64_t i = 0; i < nm; i++) {
                remaining[mem[i].node] = 0;
                member[m] = mem[i].node; cluster[m] = nk; msim[m++] = mem[i].sim;
            }
            nk++;
        }
    }
    rc = m;
done:
    *nkept = nk;
    free(root); free(start); free(dst); free(stamp); free(front); free(next); free(dsim); free(remaining);
    free(order); free(at); free(mem);
    return rc;
}
