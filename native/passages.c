/* Passage-level MinHash kernels (the passages stage, sadedup/stages/passages.py): words as
 * Python's `\w+` matches compared case-folded, chunks of words, chunk signatures and exact
 * chunk shingle sets, and the keep-first walk over verified chunk pairs.
 *
 * Words and case folding come from tables Python builds once per process from its own `re`
 * and `str.casefold` (sadedup.stages.passages.word_tables), so the kernels agree with them
 * character for character without a Unicode database of their own:
 *   - `word`: a bitmap of 0x110000 bits, bit c set when chr(c) matches `\w`;
 *   - `fold_page[c >> 8]`: -1 when every code point of that block of 256 folds to itself,
 *     else the block's index into `fold_block` (256 entries a block): the code point c folds
 *     to, or FOLD_EXT | k when it folds to several, fold_ext[k] of them in fold_ext[k+1..].
 * str.casefold works character by character (no context rules), so a word's case-folded
 * form is the concatenation of its code points' folds.
 *
 * A word's hash is a 64-bit hash of its folded code points; a shingle is the hash of `ngram`
 * consecutive word hashes (within one document); chunk k of a document of n words covers
 * words [k*stride, min(k*stride + words, n)), k = 0 .. K-1 with K = 1 when n <= words, else
 * ceil((n - words) / stride) + 1 (so the last chunk ends at the last word). A chunk's
 * shingles are those whose words all lie in it. Signatures use the permutations of
 * minhash.c (g((hi32(H) ^ s) * a), a = (s * 0x9E3779B9) | 1, g(y) = y ^ (y >> 15)).
 */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

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

static inline const uint8_t *text_of(const sd_docs *D, int64_t d, int64_t *len) {
    int64_t s = D->starts[d], e = D->ends[d];
    *len = e - s;
    return s >= D->lenA ? D->B + (s - D->lenA) : D->A + s;
}

/* The code point at p[i] and its byte length (never past n, even on bad input). */
static inline uint32_t decode(const uint8_t *p, int64_t i, int64_t n, int *len) {
    uint32_t c = p[i];
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    int l = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (c < 0xC0 || i + l > n) { /* a stray continuation byte or a cut character: one byte */
        *len = 1;
        return c;
    }
    uint32_t cp = c & (0xFF >> (l + 1));
    for (int k = 1; k < l; k++) cp = (cp << 6) | (p[i + k] & 0x3F);
    *len = l;
    return cp > 0x10FFFF ? 0xFFFD : cp;
}

static inline int is_word(const sd_wordtab *T, uint32_t cp) { return (T->word[cp >> 3] >> (cp & 7)) & 1; }

static inline uint64_t feed(uint64_t h, uint32_t cp) { return (rotl64(h, 23) ^ cp) * K1; }

/* h fed with the case fold of cp; *nf counts the folded code points */
static inline uint64_t feed_folded(const sd_wordtab *T, uint64_t h, uint32_t cp, int64_t *nf) {
    if (cp < 0x80) {
        (*nf)++;
        return feed(h, (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp);
    }
    int32_t page = T->fold_page[cp >> 8];
    if (page < 0) {
        (*nf)++;
        return feed(h, cp);
    }
    uint32_t v = T->fold_block[(int64_t)page * 256 + (cp & 255)];
    if (!(v & SD_FOLD_EXT)) {
        (*nf)++;
        return feed(h, v);
    }
    const uint32_t *x = T->fold_ext + (v & ~SD_FOLD_EXT);
    for (uint32_t k = 1; k <= x[0]; k++) h = feed(h, x[k]);
    *nf += x[0];
    return h;
}

/* The words of one text: returns how many; with `hash` given, also each word's hash and its
 * code-point offsets [cs, ce) (cs, ce may be NULL). */
static int64_t scan_words(const uint8_t *p, int64_t n, const sd_wordtab *T, uint64_t seed, uint64_t *hash,
                          int64_t *cs, int64_t *ce) {
    int64_t m = 0, chars = 0, i = 0, nf = 0;
    int in = 0;
    uint64_t h = 0;
    while (i < n) {
        int len;
        uint32_t cp = p[i] < 0x80 ? (len = 1, p[i]) : decode(p, i, n, &len);
        if (is_word(T, cp)) {
            if (!in) {
                in = 1;
                h = seed ^ K2;
                nf = 0;
                if (cs) cs[m] = chars;
            }
            if (hash) h = feed_folded(T, h, cp, &nf);
        } else if (in) {
            in = 0;
            if (hash) hash[m] = fmix64(h ^ ((uint64_t)nf * K3));
            if (ce) ce[m] = chars;
            m++;
        }
        chars++;
        i += len;
    }
    if (in) {
        if (hash) hash[m] = fmix64(h ^ ((uint64_t)nf * K3));
        if (ce) ce[m] = chars;
        m++;
    }
    return m;
}

int64_t sd_chunk_count(int64_t nwords, int64_t words, int64_t stride) {
    if (nwords <= 0) return 0;
    if (nwords <= words) return 1;
    return (nwords - words + stride - 1) / stride + 1;
}

void sd_passage_count(const sd_docs *D, const sd_wordtab *T, int64_t words, int64_t stride, int64_t *nwords,
                      int64_t *nchunks) {
    for (int64_t d = 0; d < D->ndocs; d++) {
        int64_t n;
        const uint8_t *p = text_of(D, d, &n);
        nwords[d] = scan_words(p, n, T, 0, NULL, NULL, NULL);
        nchunks[d] = sd_chunk_count(nwords[d], words, stride);
    }
}

int64_t sd_words(const uint8_t *text, int64_t n, const sd_wordtab *T, uint64_t seed, uint64_t *hash, int64_t *cs,
                 int64_t *ce) {
    return scan_words(text, n, T, seed, hash, cs, ce);
}

/* Shingle hashes from word hashes, in place (t[i] becomes the hash of words i..i+ngram-1):
 * fmix64 of the polynomial sum_k t[i+k] * B^(ngram-1-k) mod 2^64, rolled along. */
static int64_t shingles(uint64_t *t, int64_t m, int ngram, uint64_t seed) {
    if (m < ngram) return 0;
    const uint64_t B = K3 | 1;
    uint64_t top = 1, H = 0;
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

/* m[p] = min(m[p], perm_p(h)) for every permutation: vectorized over the permutations. */
SD_CLONES
static void mins_update(uint32_t h, const uint32_t *seeds, const uint32_t *mult, int P, uint32_t *m) {
    for (int p = 0; p < P; p++) {
        uint32_t x = (h ^ seeds[p]) * mult[p];
        x ^= x >> 15;
        m[p] = x < m[p] ? x : m[p];
    }
}

SD_CLONES
static void mins_merge(uint32_t *m, const uint32_t *o, int P) {
    for (int p = 0; p < P; p++) m[p] = o[p] < m[p] ? o[p] : m[p];
}

/* Every shingle is in words/stride chunks or so; instead of taking each chunk's minima over
 * all its shingles, take them once per block of `stride` shingles (a chunk's shingles are q
 * whole blocks and a prefix of r shingles of the next one): per block the minima of its first
 * r shingles (pre) and of all of them (full), so each shingle is hashed P times once. */
int sd_passage_minhash(const sd_docs *D, const sd_wordtab *T, int64_t words, int64_t stride, int ngram,
                       uint64_t seed, const uint32_t *perm_seeds, int P, const int64_t *chunk_off, uint32_t *sig,
                       int64_t *nsh, int64_t *cstart, int64_t *cend) {
    int64_t maxlen = 0, maxblocks = 1;
    for (int64_t d = 0; d < D->ndocs; d++) {
        int64_t n = D->ends[d] - D->starts[d];
        if (n > maxlen) maxlen = n;
    }
    /* a word takes a character, and two words a character between them */
    int64_t cap = maxlen / 2 + 2;
    maxblocks = cap / stride + 2;
    uint64_t *t = malloc((size_t)cap * sizeof(uint64_t));
    int64_t *ws = malloc((size_t)cap * sizeof(int64_t));
    int64_t *we = malloc((size_t)cap * sizeof(int64_t));
    uint32_t *pre = malloc((size_t)maxblocks * P * sizeof(uint32_t));
    uint32_t *full = malloc((size_t)maxblocks * P * sizeof(uint32_t));
    uint32_t *mult = malloc((size_t)(P ? P : 1) * sizeof(uint32_t));
    int rc = 0;
    if (!t || !ws || !we || !pre || !full || !mult) {
        rc = -1;
        goto done;
    }
    for (int p = 0; p < P; p++) mult[p] = (perm_seeds[p] * 0x9E3779B9U) | 1U;
    const int64_t span = words - ngram + 1; /* shingles of a whole chunk (may be <= 0) */
    const int64_t q = span > 0 ? span / stride : 0, r = span > 0 ? span % stride : 0;
    for (int64_t d = 0; d < D->ndocs; d++) {
        int64_t n;
        const uint8_t *p = text_of(D, d, &n);
        int64_t nw = scan_words(p, n, T, seed, t, ws, we);
        int64_t K = sd_chunk_count(nw, words, stride), base = chunk_off[d];
        if (K != chunk_off[d + 1] - base) {
            rc = -2; /* the counts the caller allocated for do not match */
            goto done;
        }
        int64_t ns = shingles(t, nw, ngram, seed);
        int64_t nb = (ns + stride - 1) / stride;
        for (int64_t b = 0; b < nb; b++) {
            uint32_t *pb = pre + b * P, *fb = full + b * P;
            for (int k = 0; k < P; k++) pb[k] = UINT32_MAX;
            int64_t lo = b * stride, hi = lo + stride < ns ? lo + stride : ns, mid = lo + r < hi ? lo + r : hi;
            for (int64_t i = lo; i < mid; i++) mins_update((uint32_t)(t[i] >> 32), perm_seeds, mult, P, pb);
            memcpy(fb, pb, (size_t)P * sizeof(uint32_t));
            for (int64_t i = mid; i < hi; i++) mins_update((uint32_t)(t[i] >> 32), perm_seeds, mult, P, fb);
        }
        for (int64_t k = 0; k < K; k++) {
            int64_t w0 = k * stride, w1 = w0 + words < nw ? w0 + words : nw;
            uint32_t *s = sig + (base + k) * (int64_t)P;
            for (int j = 0; j < P; j++) s[j] = UINT32_MAX;
            nsh[base + k] = w1 - w0 >= ngram ? w1 - w0 - ngram + 1 : 0;
            cstart[base + k] = ws[w0];
            cend[base + k] = we[w1 - 1];
            if (!nsh[base + k]) continue;
            int64_t bend = k + q < nb ? k + q : nb;
            for (int64_t b = k; b < bend; b++) mins_merge(s, full + b * P, P);
            /* a chunk cut short at the document's end reaches into block k + q only when that
             * is the last block and shorter than r: its prefix minima are then all of it */
            if (r > 0 && k + q < nb) mins_merge(s, pre + (k + q) * P, P);
        }
    }
done:
    free(t);
    free(ws);
    free(we);
    free(pre);
    free(full);
    free(mult);
    return rc;
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

/* MSD radix sort, a byte a level: the keys are hashes, one level leaves a few per bucket. */
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

int sd_passage_sets(const sd_docs *D, const sd_wordtab *T, int64_t words, int64_t stride, int ngram, uint64_t seed,
                    const int64_t *req_doc, const int64_t *req_chunk, int64_t nreq, uint64_t *out,
                    const int64_t *out_off, int64_t *counts) {
    int64_t maxlen = 0;
    for (int64_t d = 0; d < D->ndocs; d++) {
        int64_t n = D->ends[d] - D->starts[d];
        if (n > maxlen) maxlen = n;
    }
    int64_t cap = maxlen / 2 + 2;
    uint64_t *t = malloc((size_t)cap * sizeof(uint64_t));
    uint64_t *tmp = malloc((size_t)(words > 0 ? words : 1) * sizeof(uint64_t));
    uint64_t *buf = malloc((size_t)(words > 0 ? words : 1) * sizeof(uint64_t));
    if (!t || !tmp || !buf) {
        free(t);
        free(tmp);
        free(buf);
        return -1;
    }
    int64_t cur = -1, nw = 0, ns = 0;
    for (int64_t k = 0; k < nreq; k++) {
        if (req_doc[k] != cur) { /* requests come grouped by document: its words once */
            cur = req_doc[k];
            int64_t n;
            const uint8_t *p = text_of(D, cur, &n);
            nw = scan_words(p, n, T, seed, t, NULL, NULL);
            ns = shingles(t, nw, ngram, seed);
        }
        int64_t w0 = req_chunk[k] * stride, w1 = w0 + words < nw ? w0 + words : nw;
        int64_t m = w1 - w0 >= ngram ? w1 - w0 - ngram + 1 : 0;
        if (w0 + m > ns) m = ns > w0 ? ns - w0 : 0;
        memcpy(buf, t + (w0 < ns ? w0 : 0), (size_t)m * sizeof(uint64_t));
        radix_sort(buf, tmp, m, 56);
        int64_t room = out_off[k + 1] - out_off[k], c = 0;
        uint64_t *o = out + out_off[k];
        for (int64_t i = 0; i < m && c < room; i++)
            if (i == 0 || buf[i] != buf[i - 1]) o[c++] = buf[i];
        counts[k] = c;
    }
    free(t);
    free(tmp);
    free(buf);
    return 0;
}

void sd_passage_walk(int64_t ndocs, const int64_t *chunk_off, const int64_t *chunk_doc, const int64_t *cstart,
                     const int64_t *cend, const int64_t *n_chars, const int64_t *pair_off, const int64_t *partner,
                     const double *psim, double drop_fraction, int64_t *src, double *ssim, int64_t *removed,
                     uint8_t *dropped) {
    for (int64_t d = 0; d < ndocs; d++) {
        int64_t reach = -1, rem = 0;
        dropped[d] = 0; /* its own earlier chunks count while it is being read */
        for (int64_t j = chunk_off[d]; j < chunk_off[d + 1]; j++) {
            src[j] = -1;
            ssim[j] = 0.0;
            /* the source is the most similar partner of a surviving document; partners
             * ascend, so a tie goes to the earliest */
            for (int64_t e = pair_off[j]; e < pair_off[j + 1]; e++) {
                int64_t i = partner[e];
                if (!dropped[chunk_doc[i]] && (src[j] < 0 || psim[e] > ssim[j])) {
                    src[j] = i;
                    ssim[j] = psim[e];
                }
            }
            if (src[j] < 0) continue;
            /* a document's chunks start and end in increasing order: the union grows at its end */
            int64_t a = cstart[j] > reach ? cstart[j] : reach;
            if (cend[j] > a) rem += cend[j] - a;
            if (cend[j] > reach) reach = cend[j];
        }
        removed[d] = rem;
        dropped[d] = n_chars[d] > 0 && (double)rem / (double)n_chars[d] > drop_fraction;
    }
}
