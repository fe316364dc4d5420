/* Line dedup kernels (the `lines` stage, sadedup/stages/lines.py).
 *
 * A line is a document's text up to and including a '\n' (or the end of the document); its
 * key is the line without the '\n', stripped of leading and trailing whitespace as Python's
 * str.strip() strips it, NFC-normalized. Keys are compared by a 64-bit hash of their UTF-8
 * bytes (line_hash; the caller hashes keys it made itself with sd_hash_pieces, so both
 * paths agree byte for byte).
 *
 * NFC needs the Unicode tables, which live in Python. The scan keys a line itself when every
 * character of it is one NFC leaves alone whatever surrounds it (SAFE_RANGES below: assigned,
 * no canonical decomposition, combining class 0, never the second character of a canonical
 * or Hangul composition; tests/test_lines.py checks every one against unicodedata); any
 * other line is handed back to the caller as a byte range to be keyed in Python. */
#include <string.h>

#include "kernels.h"

#define K1 0x9E3779B97F4A7C15ULL
#define K2 0xC2B2AE3D27D4EB4FULL

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t fmix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* 64-bit hash of n bytes: 8-byte blocks folded in, then the length, then fmix64 so every
 * input bit reaches every output bit (keys are compared by this hash alone). */
static uint64_t line_hash(const uint8_t *p, int64_t n) {
    uint64_t h = K2 ^ ((uint64_t)n * K1);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        h = rotl64(h ^ (v * K2), 31) * K1;
    }
    if (i < n) {
        uint64_t v = 0;
        for (int64_t k = 0; i + k < n; k++) v |= (uint64_t)p[i + k] << (8 * k);
        h = rotl64(h ^ (v * K2), 31) * K1;
    }
    return fmix64(h ^ (uint64_t)n);
}

/* ASCII whitespace as Python's str.isspace() sees it */
static const uint8_t WS[128] = {
    ['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1,
    [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, [' '] = 1};

/* Byte length of the whitespace character starting at p[i] (str.isspace), 0 when it is not
 * whitespace: U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. */
static inline int ws_len(const uint8_t *p, int64_t i, int64_t n) {
    uint8_t c = p[i];
    if (c < 0x80) return WS[c];
    if (c == 0xC2) return i + 1 < n && (p[i + 1] == 0x85 || p[i + 1] == 0xA0) ? 2 : 0;
    if (c < 0xE1 || c > 0xE3 || i + 2 >= n) return 0;
    uint8_t c1 = p[i + 1], c2 = p[i + 2];
    if (c == 0xE1) return c1 == 0x9A && c2 == 0x80 ? 3 : 0;
    if (c == 0xE3) return c1 == 0x80 && c2 == 0x80 ? 3 : 0;
    if (c1 == 0x80) return (c2 <= 0x8A || c2 == 0xA8 || c2 == 0xA9 || c2 == 0xAF) ? 3 : 0;
    if (c1 == 0x81) return c2 == 0x9F ? 3 : 0;
    return 0;
}

/* SAFE_RANGES: the characters (beyond ASCII) a line may hold for the kernel to key it itself:
 * Latin-1, Latin Extended-A/B, IPA and spacing modifiers; Cyrillic but its combining marks;
 * General Punctuation (spaces, dashes, quotes, ellipsis), arrows, mathematical operators, box
 * drawing and geometric shapes; CJK symbols and punctuation, kana, CJK unified ideographs,
 * Hangul syllables, full- and half-width forms. Sorted; tests/test_lines.py reads this table
 * and checks every character in it against unicodedata. */
static const uint32_t SAFE_RANGES[][2] = {
    {0x0080, 0x02FF}, {0x0400, 0x0482}, {0x0488, 0x04FF}, {0x2002, 0x2064}, {0x2066, 0x2071},
    {0x2074, 0x207F}, {0x2190, 0x22FF}, {0x2500, 0x257F}, {0x25A0, 0x25FF}, {0x3000, 0x3029},
    {0x3030, 0x303F}, {0x3041, 0x3096}, {0x309B, 0x30FF}, {0x4E00, 0x9FFF}, {0xAC00, 0xD7A3},
    {0xFF01, 0xFFBE}};
#define N_SAFE (sizeof SAFE_RANGES / sizeof SAFE_RANGES[0])

static inline int safe_cp(uint32_t cp) {
    if (cp < 0x300 || (cp >= 0x4E00 && cp <= 0x9FFF)) return 1; /* Latin, CJK ideographs: the most common */
    size_t lo = 1, hi = N_SAFE;
    while (lo < hi) { /* the first range ending at or after cp */
        size_t mid = (lo + hi) / 2;
        if (SAFE_RANGES[mid][1] < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < N_SAFE && SAFE_RANGES[lo][0] <= cp;
}

/* Continuation bytes of p[0..n) (a line's character count is n minus them), and whether
 * every character is in SAFE_RANGES (or ASCII). The text is valid UTF-8. */
static inline int64_t classify(const uint8_t *p, int64_t n, int *safe) {
    const uint64_t HI = 0x8080808080808080ULL;
    int64_t cont = 0, i = 0;
    int ok = 1;
    while (i + 8 <= n) { /* 8 bytes at a time: ASCII passes at once, and once a character is
                          * not SAFE only continuation bytes are counted (bit 7 set, bit 6 clear) */
        uint64_t v;
        memcpy(&v, p + i, 8);
        uint64_t hi = v & HI;
        if (!hi) {
            i += 8;
            continue;
        }
        if (!ok) {
            cont += __builtin_popcountll(hi & ~(v << 1));
            i += 8;
            continue;
        }
        break;
    }
    while (i < n) {
        uint8_t c = p[i];
        if (c < 0x80) {
            i++;
        } else if ((c & 0xC0) == 0x80) {
            cont++;
            i++;
        } else {
            if (ok) {
                if (c < 0xE0 && i + 1 < n)
                    ok = safe_cp(((uint32_t)(c & 0x1F) << 6) | (uint32_t)(p[i + 1] & 0x3F));
                else if (c < 0xF0 && i + 2 < n)
                    ok = safe_cp(((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(p[i + 1] & 0x3F) << 6) |
                                 (uint32_t)(p[i + 2] & 0x3F));
                else
                    ok = 0; /* beyond the BMP: emoji, historic scripts */
                if (!ok) { /* the rest: continuation bytes only, a word at a time */
                    i++;
                    while (i + 8 <= n) {
                        uint64_t v;
                        memcpy(&v, p + i, 8);
                        cont += __builtin_popcountll(v & HI & ~(v << 1));
                        i += 8;
                    }
                    continue;
                }
            }
            i++;
        }
    }
    *safe = ok;
    return cont;
}

/* The key of a SAFE line p[0..n): [*a, *b) after str.strip(). */
static inline void strip(const uint8_t *p, int64_t n, int64_t *a, int64_t *b) {
    int64_t i = 0, j = n;
    int w;
    while (i < j && (w = ws_len(p, i, j)) > 0) i += w;
    while (j > i) {
        int64_t s = j - 1;
        while (s > i && (p[s] & 0xC0) == 0x80 && j - s < 3) s--; /* the last character's first byte */
        if (ws_len(p, s, j) == j - s) j = s;
        else break;
    }
    *a = i;
    *b = j;
}

int64_t sd_line_scan(const uint8_t *T, int64_t n, const int64_t *starts, const int64_t *ends, int64_t ndocs,
                     int64_t doc_base, int64_t cap, uint64_t *hash, int64_t *line, int64_t scap, int64_t *slow,
                     int64_t *nslow) {
    int64_t k = 0, ns = 0;
    for (int64_t d = 0; d < ndocs; d++) {
        int64_t p = starts[d], e = ends[d], c = 0;
        if (p < 0 || e > n || p > e) return -2;
        while (p < e) {
            const uint8_t *q = memchr(T + p, '\n', (size_t)(e - p));
            int64_t body = q ? (int64_t)(q - T) : e; /* the line without its '\n' */
            int64_t stop = q ? body + 1 : e;
            int safe, entry = 1;
            int64_t chars = (stop - p) - classify(T + p, body - p, &safe);
            if (safe) {
                int64_t a, b;
                strip(T + p, body - p, &a, &b);
                entry = a < b; /* an empty key never matches: no entry */
                if (entry && k < cap) hash[k] = line_hash(T + p + a, b - a);
            } else {
                if (k < cap) hash[k] = 0;
                if (ns < scap) {
                    slow[3 * ns] = k;
                    slow[3 * ns + 1] = p;
                    slow[3 * ns + 2] = body;
                }
                ns++;
            }
            if (entry) { /* past cap, rows are only counted: the caller makes room and calls again */
                if (k < cap) {
                    line[3 * k] = doc_base + d;
                    line[3 * k + 1] = c;
                    line[3 * k + 2] = c + chars;
                }
                k++;
            }
            c += chars;
            p = stop;
        }
    }
    *nslow = ns;
    return k;
}

void sd_gather_lines(const uint8_t *T, const int64_t *slow, int64_t m, uint8_t *out) {
    int64_t at = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t a = slow[3 * i + 1], b = slow[3 * i + 2];
        if (i) out[at++] = '\n';
        memcpy(out + at, T + a, (size_t)(b - a));
        at += b - a;
    }
}

int64_t sd_hash_pieces(const uint8_t *buf, int64_t n, int64_t cap, uint64_t *hash, uint8_t *empty) {
    int64_t k = 0, p = 0;
    for (;;) {
        const uint8_t *q = p < n ? memchr(buf + p, '\n', (size_t)(n - p)) : NULL;
        int64_t e = q ? (int64_t)(q - buf) : n;
        if (k >= cap) return -1;
        empty[k] = e == p;
        hash[k] = e > p ? line_hash(buf + p, e - p) : 0;
        k++;
        if (!q) break;
        p = e + 1;
    }
    return k;
}

/* The end of the run of lines of chunk document d, which starts at i (line[3i] = doc_base + d;
 * a document without a line has an empty run). */
static inline int64_t doc_lines_end(const int64_t *line, int64_t i, int64_t m, int64_t doc) {
    while (i < m && line[3 * i] == doc) i++;
    return i;
}

static inline int over(int64_t removed, int64_t total, double fraction) {
    return total > 0 && (double)removed / (double)total > fraction;
}

int64_t sd_lines_first(const int64_t *gid, const int64_t *line, int64_t m, int64_t doc_base, int64_t ndocs,
                       const int64_t *n_chars, double drop_fraction, int64_t *state, int64_t *scratch, uint8_t *rm,
                       int64_t *src, int64_t *removed, uint8_t *dropped) {
    int64_t l1 = 0;
    for (int64_t d = 0; d < ndocs; d++) {
        int64_t l0 = l1, ns = 0, cut = 0;
        l1 = doc_lines_end(line, l0, m, doc_base + d);
        for (int64_t j = l0; j < l1; j++) {
            int64_t g = gid[j];
            if (j + 16 < l1 && gid[j + 16] >= 0) __builtin_prefetch(&state[3 * gid[j + 16]], 1);
            rm[j] = 0;
            if (g < 0) continue;
            int64_t *s = state + 3 * g;
            if (s[0] >= 0) { /* seen earlier in a surviving document, or earlier in this one */
                rm[j] = 1;
                src[3 * j] = s[0];
                src[3 * j + 1] = s[1];
                src[3 * j + 2] = s[2];
                cut += line[3 * j + 2] - line[3 * j + 1];
            } else {
                s[0] = line[3 * j];
                s[1] = line[3 * j + 1];
                s[2] = line[3 * j + 2];
                scratch[ns++] = g;
            }
        }
        removed[d] = cut;
        dropped[d] = (uint8_t)over(cut, n_chars[d], drop_fraction);
        if (dropped[d]) /* a dropped document is never the copy kept: its first sightings go */
            for (int64_t t = 0; t < ns; t++) state[3 * scratch[t]] = -1;
    }
    return l1 == m ? 0 : -1; /* -1: lines out of document order or outside the chunk */
}

int64_t sd_lines_first_two(const int64_t *gid, const int64_t *line, int64_t m, int64_t *state) {
    for (int64_t j = 0; j < m; j++) {
        int64_t g = gid[j];
        if (j + 16 < m && gid[j + 16] >= 0) __builtin_prefetch(&state[6 * gid[j + 16]], 1);
        if (g < 0) continue;
        int64_t *s = state + 6 * g;
        if (s[0] < 0) {
            s[0] = line[3 * j];
            s[1] = line[3 * j + 1];
            s[2] = line[3 * j + 2];
        } else if (s[3] < 0 && s[0] != line[3 * j]) {
            s[3] = line[3 * j];
            s[4] = line[3 * j + 1];
            s[5] = line[3 * j + 2];
        }
    }
    return 0;
}

int64_t sd_lines_none(const int64_t *gid, const int64_t *line, int64_t m, int64_t doc_base, int64_t ndocs,
                      const int64_t *n_chars, const int64_t *min_docs, const int64_t *g_docs, double drop_fraction,
                      const int64_t *state, uint8_t *rm, int64_t *src, int64_t *removed, uint8_t *dropped) {
    int64_t l1 = 0;
    for (int64_t d = 0; d < ndocs; d++) {
        int64_t l0 = l1, cut = 0;
        l1 = doc_lines_end(line, l0, m, doc_base + d);
        for (int64_t j = l0; j < l1; j++) {
            int64_t g = gid[j];
            rm[j] = 0;
            if (g < 0 || g_docs[g] < min_docs[d]) continue;
            const int64_t *s = state + 6 * g;
            /* the first occurrence in another document: the first one, or the first one in a
             * second document when this is the first one's document */
            const int64_t *f = s[0] == line[3 * j] ? s + 3 : s;
            rm[j] = 1;
            src[3 * j] = f[0];
            src[3 * j + 1] = f[1];
            src[3 * j + 2] = f[2];
            cut += line[3 * j + 2] - line[3 * j + 1];
        }
        removed[d] = cut;
        dropped[d] = (uint8_t)over(cut, n_chars[d], drop_fraction);
    }
    return l1 == m ? 0 : -1;
}
