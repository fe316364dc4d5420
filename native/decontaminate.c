/* Decontamination kernels: words, word n-grams and the scan that strikes eval n-grams.
 *
 * A word is a match of Python's regular expression \w+ in the text, and words are compared
 * case-folded (str.casefold). Neither property is built in here: which code points are word
 * characters, and what each one folds to, come in a table (sd_dc_table) that sadedup/native.py
 * makes from the running interpreter's own `re` and `str.casefold` the first time it is used.
 * So the definition is Python's, code point for code point, whatever Unicode version the
 * interpreter has. Python's \w is str.isalnum() or "_" (letters, every kind of digit and
 * number, the underscore); combining marks are not word characters, so "e\u0301" is the word
 * "e" followed by a mark. Folding is per code point (str.casefold has no context), so a
 * word's folded form is its code points folded one by one.
 *
 * Offsets are code points of the text (what Python's str indexes), counted by UTF-8 lead
 * bytes. The text is valid UTF-8 (ingest refuses the rest); a malformed byte is read as one
 * code point that is not a word character, never past the end of its document.
 *
 * Hashes: a word's hash is FNV-1a over its folded code points, finished by a 64-bit mixer; an
 * n-gram's key is the mixer over the polynomial sum of its words' hashes (rolled in O(1) per
 * word). Keys only find candidates: a match is always confirmed by comparing the folded code
 * points of all n words, so two n-grams whose keys collide are never taken for each other.
 */
#include <stdlib.h>
#include <string.h>
#include "kernels.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL
#define POLY 0x9E3779B97F4A7C15ULL

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* The code point at T[p] (p < end) and its length in bytes. */
static inline uint32_t utf8_at(const uint8_t *T, int64_t p, int64_t end, int *len) {
    uint32_t b = T[p];
    if (b < 0x80) { *len = 1; return b; }
    int k = b >= 0xF0 ? (b < 0xF8 ? 4 : 0) : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0;
    if (k == 0 || p + k > end) { *len = 1; return 0xFFFD; }
    uint32_t c = b & (0x7F >> k);
    for (int i = 1; i < k; i++) {
        uint32_t x = T[p + i];
        if ((x & 0xC0) != 0x80) { *len = 1; return 0xFFFD; }
        c = (c << 6) | (x & 0x3F);
    }
    *len = k;
    return c <= 0x10FFFF ? c : 0xFFFD;
}

static inline uint32_t prop(const sd_dc_table *t, uint32_t c) {
    return t->stage2[((uint32_t)t->stage1[c >> 8] << 8) | (c & 255)];
}

/* The folded code points of c (a word character): 1 to 3 of them, written to out. */
static inline int folded(const sd_dc_table *t, uint32_t c, uint32_t v, uint32_t *out) {
    int len = (v >> 1) & 3;
    if (len == 0) { out[0] = c; return 1; }
    const uint32_t *f = t->fold + (v >> 8);
    for (int i = 0; i < len; i++) out[i] = f[i];
    return len;
}

/* One word as the scans keep it. */
typedef struct {
    int64_t b0, b1;   /* bytes [b0, b1) of the text */
    int64_t c0, c1;   /* code points of its document */
    uint64_t hash;
} word_t;

/* Calls on_word for every word of T[s:e], in order; returns the document's code points. The
 * callback gets the word and `ctx`; it returns nonzero to stop (then -1 is returned). */
typedef int (*word_fn)(void *ctx, const word_t *w);

/* ASCII as the table has it, one byte a character: 0 for a character that is not a word
 * character, else its fold (ASCII folds to ASCII, one character, and NUL is no word character):
 * most text is mostly ASCII, and this skips the decoder and the two-level lookup for it. */
static void ascii_folds(const sd_dc_table *t, uint8_t *a) {
    for (uint32_t c = 0; c < 128; c++) {
        uint32_t v = prop(t, c), f[3];
        int k = (v & 1) ? folded(t, c, v, f) : 0;
        a[c] = (k == 1 && f[0] < 128) ? (uint8_t)f[0] : 0;
    }
}

static int64_t scan_words(const sd_dc_table *t, const uint8_t *ascii, const uint8_t *T, int64_t s, int64_t e,
                          word_fn on_word, void *ctx, uint32_t *fold_out, int64_t *fold_n, int64_t fold_cap) {
    int64_t cp = 0, p = s;
    int in_word = 0;
    word_t w = {0, 0, 0, 0, 0};
    uint64_t h = FNV_OFFSET;
    uint32_t f[3];
    while (p < e) {
        int len;
        if (T[p] < 0x80) {
            uint32_t a = ascii[T[p]];
            if (a) {
                if (!in_word) { in_word = 1; w.b0 = p; w.c0 = cp; h = FNV_OFFSET; }
                h = (h ^ a) * FNV_PRIME;
                if (fold_out) {
                    if (*fold_n >= fold_cap) return -2;
                    fold_out[(*fold_n)++] = a;
                }
            } else if (in_word) {
                in_word = 0;
                w.b1 = p; w.c1 = cp; w.hash = mix64(h);
                if (on_word(ctx, &w)) return -1;
            }
            p++;
            cp++;
            continue;
        }
        uint32_t c = utf8_at(T, p, e, &len);
        uint32_t v = prop(t, c);
        if (v & 1) {
            if (!in_word) { in_word = 1; w.b0 = p; w.c0 = cp; h = FNV_OFFSET; }
            int k = folded(t, c, v, f);
            for (int i = 0; i < k; i++) {
                h = (h ^ f[i]) * FNV_PRIME;
                if (fold_out) {
                    if (*fold_n >= fold_cap) return -2;
                    fold_out[(*fold_n)++] = f[i];
                }
            }
        } else if (in_word) {
            in_word = 0;
            w.b1 = p; w.c1 = cp; w.hash = mix64(h);
            if (on_word(ctx, &w)) return -1;
        }
        p += len;
        cp++;
    }
    if (in_word) {
        w.b1 = p; w.c1 = cp; w.hash = mix64(h);
        if (on_word(ctx, &w)) return -1;
    }
    return cp;
}

/* ---- sd_dc_words: every word of every document, with its folded code points */

typedef struct {
    int64_t n, cap;
    int64_t *cp_start, *cp_end;
    uint64_t *hash;
    uint32_t *fold_base;
    int64_t *fold_n, *fold_off;
} words_ctx;

static int collect_word(void *vctx, const word_t *w) {
    words_ctx *c = vctx;
    if (c->n >= c->cap) return 1;
    c->cp_start[c->n] = w->c0;
    c->cp_end[c->n] = w->c1;
    c->hash[c->n] = w->hash;
    c->n++;
    if (c->fold_off) c->fold_off[c->n] = *c->fold_n;
    return 0;
}

int64_t sd_dc_words(const sd_dc_table *t, const uint8_t *T, const int64_t *starts, const int64_t *ends, int64_t ndocs,
                 int64_t *word_off, int64_t *cp_start, int64_t *cp_end, uint64_t *hash, int64_t cap,
                 uint32_t *fold, int64_t *fold_off, int64_t fold_cap) {
    int64_t fold_n = 0;
    words_ctx c = {0, cap, cp_start, cp_end, hash, fold, &fold_n, fold ? fold_off : NULL};
    uint8_t ascii[128];
    ascii_folds(t, ascii);
    if (fold) fold_off[0] = 0;
    word_off[0] = 0;
    for (int64_t d = 0; d < ndocs; d++) {
        int64_t got = scan_words(t, ascii, T, starts[d], ends[d], collect_word, &c, fold, &fold_n, fold_cap);
        if (got < 0) return -1;
        word_off[d + 1] = c.n;
    }
    return c.n;
}

/* ---- n-gram keys */

static inline uint64_t pow_poly(int n) {
    uint64_t p = 1;
    for (int i = 1; i < n; i++) p *= POLY;
    return p;
}

void sd_dc_ngram_keys(const uint64_t *hash, const int64_t *word_off, int64_t ndocs, int n, uint64_t *keys) {
    uint64_t top = pow_poly(n);
    int64_t k = 0;
    for (int64_t d = 0; d < ndocs; d++) {
        uint64_t r = 0;
        for (int64_t i = word_off[d]; i < word_off[d + 1]; i++) {
            int64_t j = i - word_off[d]; /* words of the document so far, minus one */
            if (j >= n) r -= hash[i - n] * top;
            r = r * POLY + hash[i];
            if (j >= n - 1) keys[k++] = mix64(r);
        }
    }
}

int sd_dc_ngram_same(const uint32_t *fold, const int64_t *fold_off, int64_t nwords, const int64_t *a, const int64_t *b,
                  int64_t m, int n, uint8_t *out) {
    for (int64_t i = 0; i < m; i++) {
        if (a[i] < 0 || b[i] < 0 || a[i] + n > nwords || b[i] + n > nwords) return -1;
        int64_t x0 = fold_off[a[i]], x1 = fold_off[a[i] + n], y0 = fold_off[b[i]], y1 = fold_off[b[i] + n];
        int same = x1 - x0 == y1 - y0 && !memcmp(fold + x0, fold + y0, (size_t)(x1 - x0) * sizeof(uint32_t));
        /* equal code points in equal total could still be cut into words differently */
        for (int j = 1; same && j < n; j++) same = fold_off[a[i] + j] - x0 == fold_off[b[i] + j] - y0;
        out[i] = (uint8_t)same;
    }
    return 0;
}

/* ---- the decontamination scan */

typedef struct {
    const sd_dc_table *t;
    const sd_dc_evalset *e;
    const uint8_t *T;
    int n;
    int64_t margin;
    word_t *ring;         /* the last n words, word i at i % n */
    int64_t nw;           /* words of the document so far */
    int pos;              /* nw % n: where the next word goes, and once n words are in, the oldest */
    uint64_t r, top;      /* rolling polynomial of the last n hashes; POLY^(n-1) */
    int64_t doc;          /* index of the document in this call */
    /* the span being grown: its code points and the n-gram that opened it */
    int pending;
    int64_t p0, p1, png;
    /* outputs */
    int64_t *sp_doc, *sp_start, *sp_end, *sp_ng, sp_cap, nsp;
    int64_t *hit_doc, *hit_ng, hit_cap, nhit;
} scan_ctx;

/* Do the folded code points of the last n corpus words (the ring, oldest first) equal those
 * of eval words g .. g+n-1? */
static int same_as_eval(const scan_ctx *s, int64_t g) {
    const sd_dc_evalset *e = s->e;
    uint32_t f[3];
    for (int j = 0, r = s->pos; j < s->n; j++, r = r + 1 == s->n ? 0 : r + 1) {
        const word_t *w = &s->ring[r];
        int64_t q = e->fold_off[g + j], qend = e->fold_off[g + j + 1];
        int64_t p = w->b0;
        while (p < w->b1) {
            int len;
            uint32_t c = utf8_at(s->T, p, w->b1, &len);
            int k = folded(s->t, c, prop(s->t, c), f);
            for (int i = 0; i < k; i++)
                if (q >= qend || e->fold[q++] != f[i]) return 0;
            p += len;
        }
        if (q != qend) return 0;
    }
    return 1;
}

/* The eval n-gram equal to the last n words, or -1. */
static int64_t lookup(const scan_ctx *s, uint64_t key) {
    const sd_dc_evalset *e = s->e;
    uint64_t fb = key >> (64 - e->fbits);
    if (!((e->filter[fb >> 6] >> (fb & 63)) & 1)) return -1;
    uint64_t b = key >> (64 - e->bbits);
    for (int64_t k = e->bucket[b]; k < e->bucket[b + 1]; k++) {
        if (e->hash[k] > key) break;
        if (e->hash[k] == key && same_as_eval(s, e->word[k])) return k;
    }
    return -1;
}

static int flush(scan_ctx *s, int64_t limit) {
    if (!s->pending) return 0;
    if (s->nsp >= s->sp_cap) return 1;
    s->sp_doc[s->nsp] = s->doc;
    s->sp_start[s->nsp] = s->p0;
    s->sp_end[s->nsp] = s->p1 < limit ? s->p1 : limit;
    s->sp_ng[s->nsp] = s->png;
    s->nsp++;
    s->pending = 0;
    return 0;
}

static int scan_word(void *vctx, const word_t *w) {
    scan_ctx *s = vctx;
    int n = s->n;
    word_t *slot = &s->ring[s->pos];
    if (s->nw >= n) s->r -= slot->hash * s->top; /* the word leaving the window */
    *slot = *w;
    s->r = s->r * POLY + w->hash;
    s->nw++;
    if (++s->pos == n) s->pos = 0;
    if (s->nw < n) return 0;
    int64_t k = lookup(s, mix64(s->r));
    if (k < 0) return 0;
    int64_t c0 = s->ring[s->pos].c0 - s->margin;
    int64_t c1 = w->c1 + s->margin; /* cut at the document's end when the span is written */
    if (c0 < 0) c0 = 0;
    if (s->pending && c0 <= s->p1) {
        if (c1 > s->p1) s->p1 = c1;
    } else {
        /* a span before this one ends before c0, inside the document: no cut needed */
        if (flush(s, INT64_MAX)) return 1;
        s->pending = 1;
        s->p0 = c0; s->p1 = c1; s->png = k;
    }
    if (s->nhit >= s->hit_cap) return 1;
    s->hit_doc[s->nhit] = s->doc;
    s->hit_ng[s->nhit] = k;
    s->nhit++;
    return 0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t sd_dc_scan(const sd_dc_table *t, const sd_dc_evalset *e, const uint8_t *T, const int64_t *starts,
                      const int64_t *ends, int64_t ndocs, int64_t margin,
                      int64_t *sp_doc, int64_t *sp_start, int64_t *sp_end, int64_t *sp_ng, int64_t sp_cap,
                      int64_t *n_sp, int64_t *hit_doc, int64_t *hit_ng, int64_t hit_cap, int64_t *n_hit,
                      const sd_dc_classes *cl) {
    scan_ctx s;
    memset(&s, 0, sizeof s);
    s.t = t; s.e = e; s.T = T; s.n = e->n; s.margin = margin; s.top = pow_poly(e->n);
    s.sp_doc = sp_doc; s.sp_start = sp_start; s.sp_end = sp_end; s.sp_ng = sp_ng; s.sp_cap = sp_cap;
    s.hit_doc = hit_doc; s.hit_ng = hit_ng; s.hit_cap = hit_cap;
    *n_sp = *n_hit = 0;
    if (e->ne == 0) return ndocs;
    s.ring = malloc(sizeof(word_t) * (size_t)e->n);
    if (!s.ring) return -1;
    uint8_t ascii[128];
    ascii_folds(t, ascii);
    int64_t d;
    for (d = 0; d < ndocs; d++) {
        int64_t sp0 = s.nsp, h0 = s.nhit;
        s.doc = d; s.nw = 0; s.pos = 0; s.r = 0; s.pending = 0;
        int64_t nchars = scan_words(t, ascii, T, starts[d], ends[d], scan_word, &s, NULL, NULL, 0);
        if (nchars < 0 || flush(&s, nchars)) { /* out of room: this document is redone by the next call */
            s.nsp = sp0; s.nhit = h0;
            break;
        }
        /* the document's distinct n-grams */
        int64_t m = s.nhit - h0;
        if (m > 1) {
            qsort(hit_ng + h0, (size_t)m, sizeof(int64_t), cmp_i64);
            int64_t u = h0 + 1;
            for (int64_t i = h0 + 1; i < s.nhit; i++)
                if (hit_ng[i] != hit_ng[u - 1]) hit_ng[u++] = hit_ng[i];
            s.nhit = u;
        }
        if (cl) { /* counted here and forgotten: the hits buffer holds one document at a time */
            int64_t doc = cl->doc_base + d;
            for (int64_t i = h0; i < s.nhit; i++) {
                int64_t g = hit_ng[i], c = cl->class_of[g];
                cl->found[g] = 1;
                if (cl->class_last[c] == doc) continue;
                cl->class_last[c] = doc;
                for (int64_t k = cl->class_start[c]; k < cl->class_start[c + 1]; k++) {
                    int64_t it = cl->class_item[k];
                    if (cl->item_last[it] != doc) { cl->item_last[it] = doc; cl->per_item[it]++; }
                }
            }
            s.nhit = h0;
        }
    }
    free(s.ring);
    *n_sp = s.nsp;
    *n_hit = s.nhit;
    return d;
}
