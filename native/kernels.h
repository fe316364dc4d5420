/* sadedup native kernels: plain C over caller-owned buffers.
 *
 * Conventions shared by every kernel:
 *  - tokens are unsigned integers of `es` bytes (1, 2 or 4) in native byte order and are
 *    ordered numerically, which is the order pydivsufsort sorts them in;
 *  - index arrays (suffix array, LCP, window positions, group ids) are int32 or int64,
 *    said by a flag, so shards under 2^31 tokens pay 4 bytes per entry, not 8;
 *  - no kernel allocates more than O(K) memory or touches Python: the binding module
 *    releases the GIL around every call.
 */
#ifndef SADEDUP_KERNELS_H
#define SADEDUP_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline uint32_t tok_at(const uint8_t *T, int64_t i, int es) {
    switch (es) {
    case 1: return T[i];
    case 2: return ((const uint16_t *)T)[i];
    default: return ((const uint32_t *)T)[i];
    }
}

static inline int64_t idx_at(const void *a, int64_t i, int is64) {
    return is64 ? ((const int64_t *)a)[i] : (int64_t)((const int32_t *)a)[i];
}

static inline void idx_set(void *a, int64_t i, int is64, int64_t v) {
    if (is64) ((int64_t *)a)[i] = v;
    else ((int32_t *)a)[i] = (int32_t)v;
}

/* Length of the common prefix of x and y from `from` on, at most `max` bytes; 8 bytes are
 * compared at a time, since equal windows are compared to the end. */
static inline int64_t common_bytes(const uint8_t *x, const uint8_t *y, int64_t from, int64_t max) {
    int64_t k = from;
#if defined(__SSE2__)
    /* 16 bytes a step where x86-64 always has SSE2: an L = 100 window that matches to its end
     * (most neighbours on redundant text) takes 7 steps, not 13 */
    while (k + 16 <= max) {
        const __m128i u = _mm_loadu_si128((const __m128i *)(x + k)), v = _mm_loadu_si128((const __m128i *)(y + k));
        const unsigned ne = 0xFFFFu ^ (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(u, v));
        if (ne) return k + __builtin_ctz(ne);
        k += 16;
    }
#endif
    while (k + 8 <= max) {
        uint64_t u, v;
        __builtin_memcpy(&u, x + k, 8);
        __builtin_memcpy(&v, y + k, 8);
        if (u != v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            return k + __builtin_clzll(u ^ v) / 8; /* the first differing byte */
#else
            return k + __builtin_ctzll(u ^ v) / 8;
#endif
        }
        k += 8;
    }
    while (k < max && x[k] == y[k]) k++;
    return k;
}

/* Prefetches every cache line of the first `bytes` bytes at x (at most four lines). A window
 * that starts at an arbitrary offset spans one line more than its length divided by 64: an
 * L = 100 byte window touches three lines as often as two, and prefetching only the first two
 * left the third a demand miss in most comparisons that reach L (measured on crawl-60MB's
 * capped LCP: 1.59 -> 0.92 s of CPU for a 29.5M-token shard). */
static inline void prefetch_window(const uint8_t *x, int64_t bytes) {
    if (bytes > 256) bytes = 256;
    const uintptr_t last = ((uintptr_t)x + (uintptr_t)(bytes > 0 ? bytes - 1 : 0)) & ~(uintptr_t)63;
    for (uintptr_t a = (uintptr_t)x & ~(uintptr_t)63; a <= last; a += 64) __builtin_prefetch((const void *)a);
}

/* LCP array from text and suffix array (Phi algorithm, Karkkainen, Manzini & Puglisi 2009):
 * lcp[0] = 0, lcp[i] = LCP(T[sa[i-1]:], T[sa[i]:]). Uses `lcp` itself for Phi and then
 * for PLCP, plus `tmp` (n entries of the same width) for the permutation back. */
void sd_lcp(const uint8_t *T, int es, int64_t n, const void *sa, void *lcp, void *tmp, int is64);

/* The LCP array capped at `cap` (0..65535): lcp[i] = min(LCP(T[sa[i-1]:], T[sa[i]:]), cap),
 * lcp[0] = 0, by comparing each pair of neighbours directly. One pass, one random access
 * per entry (prefetched) and at most `cap` tokens compared: cheaper than Phi when only
 * windows of `cap` tokens matter. Needs no scratch memory. lcp is uint8 when cap <= 255,
 * else uint16: a quarter or half of the suffix array's width to write and read back. */
void sd_lcp_capped(const uint8_t *T, int es, int64_t n, const void *sa, int is64, void *lcp, int64_t cap);

/* An LCP entry of width lw: 1 and 2 (capped, unsigned), 4 and 8 (exact, signed). */
static inline int64_t lcp_at(const void *a, int64_t i, int lw) {
    switch (lw) {
    case 1: return ((const uint8_t *)a)[i];
    case 2: return ((const uint16_t *)a)[i];
    case 4: return ((const int32_t *)a)[i];
    default: return ((const int64_t *)a)[i];
    }
}

/* Walks one shard's suffix array and keeps the L-windows that lie inside one document
 * (bit p of `valid` set), in suffix-array order: wpos[j] is the position, wl[j] the length of
 * the common prefix with the previous kept window, capped at L (wl[0] = 0); wl[j] < L
 * where a new distinct window starts. `valid` is a bit set: bit p is bit p & 7 of byte p >> 3
 * (numpy's packbits with bitorder="little"). L <= 65535; lcp entries are lw bytes wide
 * (lcp_at), exact or capped at L or more. Over candidate text, positions are the candidate
 * text's and `valid` marks the windows inside one region. Returns the number of windows
 * kept. Walks the suffix-array entries i0..i1-1 of n, writing from wpos[0] and wl[0]: a
 * shard is walked in pieces through small buffers that stay in cache, *run_min carrying the
 * running minimum from one piece to the next (0 before the first) and m_before the windows
 * kept by the pieces before. */
int64_t sd_local_windows(const void *sa, int is64, const void *lcp, int lw, int64_t n, const uint8_t *valid, int64_t L,
                         void *wpos, int wpos64, uint16_t *wl, int64_t i0, int64_t i1, int64_t *run_min,
                         int64_t m_before);

/* Winnowing anchors of every L-window inside a document (offsets[0..ndocs]): the window's
 * k-gram (1 <= k <= L) of smallest mixed polynomial hash, the leftmost on ties. Writes
 * the first `cap` distinct anchors, in increasing position, to pos[] with their hashes,
 * and returns how many there are (-1: out of memory). */
int64_t sd_anchors(const uint8_t *T, int es, const int64_t *offsets, int64_t ndocs, int64_t k, int64_t L,
                   int64_t *pos, uint64_t *hash, int64_t cap);

/* The text every window holding one of the (sorted) anchors can cover, [a+k-L, a+L) cut
 * at its document's ends, as merged regions starts[r]..ends[r] (at most na of them; two
 * documents never share one). Returns the number of regions. */
int64_t sd_regions(const int64_t *anchors, int64_t na, const int64_t *offsets, int64_t ndocs, int64_t k, int64_t L,
                   int64_t *starts, int64_t *ends);

/* out[i] = 1 if q[i] is one of the ns distinct values in set, else 0; table and used are
 * scratch of `size` entries (a power of two above ns). */
void sd_member(const uint64_t *set, int64_t ns, const uint64_t *q, int64_t nq, uint8_t *out, uint64_t *table,
               uint8_t *used, int64_t size);

/* out[i] = number of characters (bytes that are not UTF-8 continuation bytes) in
 * T[from[i]:to[i]]. Stops at the first range outside 0..n and returns its index (else m). */
int64_t sd_count_chars(const uint8_t *T, int64_t n, const int64_t *from, const int64_t *to, int64_t m,
                       int64_t *out);

/* Copies the regions' tokens, in order, to out. */
void sd_gather_regions(const uint8_t *T, int es, const int64_t *starts, const int64_t *ends, int64_t nr,
                       uint8_t *out);

/* One shard's sorted stream of windows, as made by sd_local_windows. */
typedef struct {
    const uint8_t *T;
    const void *wpos;
    int wpos64;
    const uint16_t *wl;
    int64_t nw;
    void *run_gid; /* out: one group id per distinct window of the shard, -1 if unique */
    int run_gid64; /* run_gid is int64 (else int32) */
} sd_stream;

/* k-way merge of the shards' sorted windows into global groups of equal windows, on an
 * LCP loser tree: common prefixes are carried along (from the shards' wl), so tokens are
 * only read where two heads tie on theirs, never more than L per pair, and each window
 * costs log k steps. Every
 * group that occurs at least twice in the corpus gets a dense id, in lexicographic order;
 * a window that occurs once gets -1. Returns the number of groups, or -1 on OOM. */
int64_t sd_merge(sd_stream *streams, int k, int es, int64_t L);

/* The same merge one distinct window at a time (a window equal to one of another stream
 * comes right after it): sd_merger_next gives the stream, the window's index and the end of
 * its run of equal windows there, its ordinal among the stream's distinct windows, and its
 * common prefix with the window given before (0 for the first); 0 when every stream is done.
 * Open returns NULL when out of memory. */
typedef struct sd_merger sd_merger;
sd_merger *sd_merger_open(sd_stream *streams, int k, int es, int64_t L);
int sd_merger_next(sd_merger *m, int *s, int64_t *i, int64_t *end, int64_t *run, int64_t *lcp);
void sd_merger_close(sd_merger *m);

/* A reference's sorted stream of windows (as sd_local_windows makes them, nt tokens) to look
 * this run's distinct windows up in during the merge (sd_merge_lookup), and what it found:
 * `found` runs of its windows equal to a query window, heads[k] .. ends[k] - 1 (indices into
 * wpos, increasing), each given its query window's group id in gid (room for all: the
 * queries' distinct windows). */
typedef struct {
    const uint8_t *T;
    int64_t nt;
    const void *wpos;
    int wpos64;
    const uint16_t *wl;
    int64_t nw;
    int64_t *heads, *ends; /* out */
    void *gid;             /* out */
    int gid64;
    int64_t found;         /* out */
} sd_ref;

/* sd_merge of the k streams, and every distinct window of streams q0..k-1 (the queries) looked
 * up in each of the nr reference streams as the merge reaches it (one merge of the queries for
 * both): a window a reference holds is one more occurrence of its group (a window once in the
 * streams and found in a reference is repeated), and the reference's run of it takes the
 * group's id. Returns the number of groups, -1 when out of memory, -3 for a reference window
 * outside its tokens. */
int64_t sd_merge_lookup(sd_stream *streams, int k, int q0, int es, int64_t L, sd_ref *refs, int nr);

/* gid[wpos[j]] = run_gid[run of j] for every window of a repeated group; the rest of gid
 * is left as it is (the caller fills it with -1). Returns the number of windows written. */
int64_t sd_scatter(const void *wpos, int wpos64, const uint16_t *wl, int64_t nw, int64_t L, const void *run_gid,
                int run_gid64, void *gid, int gid64);

/* sd_scatter, and for every run of windows (a distinct window) of a repeated group: its
 * group id and the smallest two of its positions (p2 = -1 when it has one window), in the
 * order of the runs, which is increasing group id; run_gid and the three lists are int64 or
 * int32 (run_gid64, out64). Returns the windows written to gid and sets *n_out to the
 * number of runs listed (firsts.c). */
int64_t sd_scatter_first_two(const void *wpos, int wpos64, const uint16_t *wl, int64_t nw, int64_t L,
                             const void *run_gid, int run_gid64, void *gid, int gid64, void *out_g, void *out_p1,
                             void *out_p2, int out64, int64_t *n_out);

/* The corpus' first and second position of every group (state across shards, visited in
 * document order) from one shard's list as sd_scatter_first_two makes it (g, q1, q2: m
 * entries, sorted-text positions, int64 when is64 else int32: the list's own file, not a cast
 * copy), placed in the shard by the runs (rstart, roff: nr runs,
 * roff with nr+1 entries; rstart NULL: the positions are the shard's) plus base. The same as
 * sd_first_two over every window; first/second are read forward, as g increases. Returns 0,
 * -1 for an entry out of range (groups ids, positions), -2 out of memory. */
int sd_merge_first_two(const void *g, const void *q1, const void *q2, int is64, int64_t m, const int64_t *rstart,
                       const int64_t *roff, int64_t nr, int64_t base, int64_t groups, int64_t *first,
                       int64_t *second);

/* Whether [p, p + w) lies in one of the nr documents or regions (offsets, nr + 1 entries);
 * *r is the one of a smaller p before, as p only grows. */
static inline int in_one(const int64_t *offsets, int64_t nr, int64_t *r, int64_t p, int64_t w) {
    while (*r < nr && offsets[*r + 1] <= p) (*r)++;
    return *r < nr && offsets[*r] <= p && p + w <= offsets[*r + 1];
}

/* Group ids of windows made of two: out[p] = a dense id of the pair (gid[p], gid[p + d]) when
 * both are repeated (>= 0; gid int32 or int64, n < 2^32 entries, ids below 2^32), [p, p + w)
 * lies in one of the nr documents or regions (offsets, nr + 1 entries; w = 0: not tested)
 * and the pair occurs at least twice, numbered in increasing pairs; else -1. Cache-
 * conscious: the pairs go first to nparts parts by gid[p] >> shift (part: nparts + 1
 * entries, part[q] the start of part q, overwritten), then each part is counting-sorted by
 * the low bits (start: 2^shift + 1 entries) into keys2 (as many entries as the largest
 * part). Scratch: keys and alow, one entry per pair. Returns the number of ids (pairs.c). */
int64_t sd_pair_gid(const void *gid, int gid64, int64_t n, int64_t d, const int64_t *offsets, int64_t nr, int64_t w,
                    int shift, int64_t *part, int64_t nparts, int64_t *start, uint64_t *keys, uint32_t *alow,
                    uint64_t *keys2, void *out, int out64);

/* Keep-first selection for one shard, shards visited in document order.
 *   gid: group id per window start (-1: unique or not a window), m entries, covering nr
 *        runs of the shard in order: entry q with roff[r] <= q < roff[r+1] is shard
 *        position rstart[r] + q - roff[r] (roff[0] = 0, roff[nr] = m). With the prefilter
 *        the runs are the candidate regions, else one run, rstart = {0}, roff = {0, m};
 *   doc_start: ndocs+1 offsets in the shard;
 *   src: per group, the global position of its first occurrence in surviving text, or -1
 *        (state carried from shard to shard); scratch: >= max windows per doc entries.
 * Outputs per document removed[] and dropped[], and the spans (maximal runs of tokens
 * covered by duplicate windows) with the source of each span's first window.
 * Returns the number of spans written. */
int64_t sd_select_first(const void *gid, int gid64, int64_t m, const int64_t *rstart, const int64_t *roff,
                        const int64_t *doc_start,
                        int64_t ndocs, int64_t L, double drop_fraction, int64_t base, int64_t *src, int64_t *scratch,
                        int64_t *removed, uint8_t *dropped, int64_t *sp_doc, int64_t *sp_start,
                        int64_t *sp_end, int64_t *sp_src);

/* keep="none": first and second global occurrence of every group (state across shards);
 * gid, m and the runs as for sd_select_first. */
void sd_first_two(const void *gid, int gid64, int64_t m, const int64_t *rstart, const int64_t *roff, int64_t base,
                  int64_t *first, int64_t *second);

/* keep="none" selection: every window of a repeated group is struck. */
int64_t sd_select_none(const void *gid, int gid64, int64_t m, const int64_t *rstart, const int64_t *roff,
                       const int64_t *doc_start,
                       int64_t ndocs, int64_t L, double drop_fraction, int64_t base, const int64_t *first,
                       const int64_t *second, int64_t *removed, uint8_t *dropped, int64_t *sp_doc,
                       int64_t *sp_start, int64_t *sp_end, int64_t *sp_src);

/* Token ids and byte offsets from one serialized sentencepiece SentencePieceText.
 * Returns the number of pieces, -1 on malformed input, -2 if more than `cap`. */
int64_t sd_spm_pieces(const uint8_t *buf, int64_t n, int64_t cap, uint32_t *ids, int64_t *begin, int64_t *end);

/* Count and locate (occurrences.c). The suffixes of T (n tokens, suffix array sa) whose
 * first m tokens are P are sa[*lo .. *hi): two binary searches, at most m tokens compared
 * per step, tokens ordered numerically. */
void sd_sa_range(const uint8_t *T, int es, int64_t n, const void *sa, int is64, const uint8_t *P, int64_t m,
                 int64_t *lo, int64_t *hi);

/* Of the suffixes sa[from..to), those whose first m tokens lie inside one document
 * (offsets[0..ndocs], offsets[ndocs] = n): returns how many, and writes the first `cap` of
 * their positions, in suffix-array order, to out. -1: an entry outside 0..n (a damaged
 * suffix array). */
int64_t sd_in_documents(const void *sa, int is64, int64_t from, int64_t to, const int64_t *offsets, int64_t ndocs,
                        int64_t m, int64_t *out, int64_t cap);

/* Decontamination (decontaminate.c). Words are the matches of Python's \w+, compared
 * case-folded, by a table Python makes from its own `re` and str.casefold (sadedup/native.py).
 * stage1[cp >> 8] is the block of cp in stage2 (blocks of 256 entries); an entry has bit 0
 * set for a word character, bits 1-2 the length of its case folding when that is not the
 * code point itself (1 to 3) and bits 8-31 where the folded code points start in `fold`. */
typedef struct {
    const uint16_t *stage1; /* 0x1100 entries */
    const uint32_t *stage2;
    const uint32_t *fold;
} sd_dc_table;

/* Every word of the documents T[starts[d]:ends[d]], in order: word_off[d]..word_off[d+1] are
 * document d's words (word_off has ndocs+1 entries), with their code-point offsets in the
 * document and their hashes; with `fold`, their folded code points too (word i's are
 * fold[fold_off[i] : fold_off[i+1]], fold_off has cap+1 entries). Returns the number of
 * words, or -1 when more than `cap` words or `fold_cap` folded code points. */
int64_t sd_dc_words(const sd_dc_table *t, const uint8_t *T, const int64_t *starts, const int64_t *ends, int64_t ndocs,
                 int64_t *word_off, int64_t *cp_start, int64_t *cp_end, uint64_t *hash, int64_t cap,
                 uint32_t *fold, int64_t *fold_off, int64_t fold_cap);

/* The key of every n-gram (n consecutive words of one document, word_off as sd_dc_words makes
 * it) from its words' hashes, documents in order, n-grams in order of their first word:
 * max(words - n + 1, 0) keys per document. */
void sd_dc_ngram_keys(const uint64_t *hash, const int64_t *word_off, int64_t ndocs, int n, uint64_t *keys);

/* out[i] = 1 when the n words from word a[i] on and from word b[i] on are the same folded
 * words (words as sd_dc_words folds them, nwords of them). -1: a word index out of range. */
int sd_dc_ngram_same(const uint32_t *fold, const int64_t *fold_off, int64_t nwords, const int64_t *a, const int64_t *b,
                  int64_t m, int n, uint8_t *out);

/* The eval sets' distinct n-grams, sorted by key: n-gram k has key hash[k] and is the n eval
 * words from word[k] on (folded code points fold[fold_off[w] : fold_off[w+1]] for word w).
 * bucket[b] is the first n-gram whose key's top bbits bits are >= b (2^bbits + 1 entries);
 * `filter` has bit (key >> (64 - fbits)) set for every key, so most words cost one cached
 * bit test and no search. */
typedef struct {
    const uint64_t *hash;
    const int64_t *word;
    int64_t ne;
    const int64_t *bucket;
    int bbits;
    const uint64_t *filter;
    int fbits;
    const uint32_t *fold;
    const int64_t *fold_off;
    int n;
} sd_dc_evalset;

/* Decontamination of the documents T[starts[d]:ends[d]]: every n-gram equal to an eval
 * n-gram (keys equal and folded words compared) is struck from its first word's start to its
 * last word's end, widened by `margin` code points on each side within the document; struck
 * ranges that overlap or touch are one span. Spans: (d, start, end, the eval n-gram of the
 * span's first struck n-gram), in order. Hits: (d, n-gram) for every distinct eval n-gram of
 * each document, n-grams ascending. Documents are done whole, in order: returns how many were
 * done before the outputs ran out of room (sp_cap spans, hit_cap hits with repeats within a
 * document), or -1 when out of memory. */
typedef struct {
    const int64_t *class_of;    /* per eval n-gram: its class, the set of eval items holding it */
    const int64_t *class_start; /* class c's items: class_item[class_start[c] .. class_start[c+1]) */
    const int64_t *class_item;
    int64_t doc_base;           /* documents are counted as doc_base + d */
    int64_t *class_last, *item_last; /* scratch, -1 at first: the last document that counted each */
    int64_t *per_item;          /* out (added to): documents holding one of the item's n-grams */
    uint8_t *found;             /* out (set): eval n-grams found */
} sd_dc_classes;

/* With `cl`, each document's hits are counted into cl (found n-grams, documents per item)
 * instead of kept: the hits buffer then holds one document's at a time. */
int64_t sd_dc_scan(const sd_dc_table *t, const sd_dc_evalset *e, const uint8_t *T, const int64_t *starts,
                      const int64_t *ends, int64_t ndocs, int64_t margin,
                      int64_t *sp_doc, int64_t *sp_start, int64_t *sp_end, int64_t *sp_ng, int64_t sp_cap,
                      int64_t *n_sp, int64_t *hit_doc, int64_t *hit_ng, int64_t hit_cap, int64_t *n_hit,
                      const sd_dc_classes *cl);

/* Passage-level MinHash (passages.c). Documents are sd_docs (minhash.h) over the raw UTF-8
 * texts; words are Python's `\w+` matches compared case-folded, by the tables below (built
 * by Python from its own `re` and str.casefold, see passages.c). */
#include "minhash.h"

#define SD_FOLD_EXT 0x80000000U
typedef struct {
    const uint8_t *word;        /* 0x110000 bits: code point c matches \w */
    const int32_t *fold_page;   /* 0x1100 entries: block of 256 code points -> its fold_block, -1: no folds */
    const uint32_t *fold_block; /* 256 a block: the folded code point, or SD_FOLD_EXT | k into fold_ext */
    const uint32_t *fold_ext;   /* fold_ext[k] code points follow, folds of more than one */
} sd_wordtab;

/* Chunks of a text of nwords words: 0 without words, 1 up to `words` words, else
 * ceil((nwords - words) / stride) + 1. */
int64_t sd_chunk_count(int64_t nwords, int64_t words, int64_t stride);

/* Per document, its words and its chunks. */
void sd_passage_count(const sd_docs *docs, const sd_wordtab *T, int64_t words, int64_t stride, int64_t *nwords,
                      int64_t *nchunks);

/* The words of one text: their count; with hash given, each word's hash (seeded) and its
 * code-point offsets [cs, ce) (cs, ce may be NULL). hash/cs/ce hold n / 2 + 1 entries. */
int64_t sd_words(const uint8_t *text, int64_t n, const sd_wordtab *T, uint64_t seed, uint64_t *hash, int64_t *cs,
                 int64_t *ce);

/* Chunk signatures: document d's chunks are rows chunk_off[d] .. chunk_off[d+1] (as counted by
 * sd_passage_count), sig (rows x P), nsh (shingles per chunk, 0: none), cstart/cend (code-point
 * offsets of the chunk's first word's start and last word's end). Returns 0, -1 when out of
 * memory, -2 when chunk_off disagrees with the documents. */
int sd_passage_minhash(const sd_docs *docs, const sd_wordtab *T, int64_t words, int64_t stride, int ngram,
                       uint64_t seed, const uint32_t *perm_seeds, int P, const int64_t *chunk_off, uint32_t *sig,
                       int64_t *nsh, int64_t *cstart, int64_t *cend);

/* Sorted distinct shingle hashes of chunk req_chunk[k] of document req_doc[k] (requests
 * grouped by document), to out[out_off[k] ..] (room out_off[k+1] - out_off[k]); counts[k] =
 * how many. Returns 0, or -1 when out of memory. */
int sd_passage_sets(const sd_docs *docs, const sd_wordtab *T, int64_t words, int64_t stride, int ngram, uint64_t seed,
                    const int64_t *req_doc, const int64_t *req_chunk, int64_t nreq, uint64_t *out,
                    const int64_t *out_off, int64_t *counts);

/* Keep-first over chunks in document order: chunk j (document chunk_doc[j], rows of document d
 * chunk_off[d] ..) is a near duplicate when one of its verified earlier partners
 * partner[pair_off[j] .. pair_off[j+1]) (ascending, similarity psim) belongs to a document not
 * dropped; src[j] is the most similar such (the earliest of equals; -1: none), ssim[j] its
 * similarity. removed[d] = code points
 * of the union of d's duplicate chunks [cstart, cend); dropped[d] = removed / n_chars >
 * drop_fraction (a dropped document's chunks count for no later chunk). */
void sd_passage_walk(int64_t ndocs, const int64_t *chunk_off, const int64_t *chunk_doc, const int64_t *cstart,
                     const int64_t *cend, const int64_t *n_chars, const int64_t *pair_off, const int64_t *partner,
                     const double *psim, double drop_fraction, int64_t *src, double *ssim, int64_t *removed,
                     uint8_t *dropped);

/* Line dedup (lines.c). A chunk's lines are rows of `line` (int64, 3 per line: document, first
 * and past-the-end code point in it, the end past the '\n'), in document order; only lines
 * with a non-empty key are rows. A group is a repeated key; its state rows are int64.
 *
 * sd_line_scan: the lines of documents starts[d]..ends[d] of T (document index doc_base + d):
 * hash[k] the key's hash for a line the kernel keys itself (see lines.c); for the others
 * hash[k] = 0 and a row of `slow` (3 per line: k, first byte, byte before the '\n'). Writes at
 * most cap rows and scap slow rows, but returns how many rows there are (and sets *nslow to
 * how many slow ones), so a caller whose arrays were short calls again with room; -2 for a
 * document outside T. */
int64_t sd_line_scan(const uint8_t *T, int64_t n, const int64_t *starts, const int64_t *ends, int64_t ndocs,
                     int64_t doc_base, int64_t cap, uint64_t *hash, int64_t *line, int64_t scap, int64_t *slow,
                     int64_t *nslow);

/* The slow rows' bytes joined by '\n' into out (sum of their lengths + m - 1 bytes). */
void sd_gather_lines(const uint8_t *T, const int64_t *slow, int64_t m, uint8_t *out);

/* Hashes of the '\n'-separated pieces of buf, as sd_line_scan hashes keys; empty[k] = 1 for an
 * empty piece. Returns the number of pieces, -1 past cap. */
int64_t sd_hash_pieces(const uint8_t *buf, int64_t n, int64_t cap, uint64_t *hash, uint8_t *empty);

/* keep="first" over one chunk, chunks in document order. gid: per row its group, -1 for a key
 * seen once in the corpus; state: per group (document, start, end) of its first occurrence in
 * surviving text, document -1 when none yet (carried from chunk to chunk). A row is removed
 * (rm = 1, src its source row) when its group has one; else it becomes that occurrence. Per
 * chunk document d (n_chars[d] code points): removed[d] characters, dropped[d] by the drop
 * rule, and then its first occurrences are taken back. scratch: room for the rows of one
 * document. Returns 0, -1 when rows are not in document order within the chunk. */
int64_t sd_lines_first(const int64_t *gid, const int64_t *line, int64_t m, int64_t doc_base, int64_t ndocs,
                       const int64_t *n_chars, double drop_fraction, int64_t *state, int64_t *scratch, uint8_t *rm,
                       int64_t *src, int64_t *removed, uint8_t *dropped);

/* keep="none", first pass: per group (6 per group, -1 to start) its first occurrence and the
 * first occurrence in another document, over the chunks in document order. */
int64_t sd_lines_first_two(const int64_t *gid, const int64_t *line, int64_t m, int64_t *state);

/* keep="none": a row is removed when its group occurs in g_docs[g] >= min_docs[d] documents;
 * its source is the group's first occurrence in another document. Then the drop rule, as
 * for sd_lines_first. */
int64_t sd_lines_none(const int64_t *gid, const int64_t *line, int64_t m, int64_t doc_base, int64_t ndocs,
                      const int64_t *n_chars, const int64_t *min_docs, const int64_t *g_docs, double drop_fraction,
                      const int64_t *state, uint8_t *rm, int64_t *src, int64_t *removed, uint8_t *dropped);

/* Character bounds of tokens, kept at tokenize time for subword tokenizers (chars.c): per
 * token, a value of one of two non-decreasing sequences of its document (the suffix minimum
 * of the tokens' start characters, the prefix maximum of their end characters), stored as
 * the difference from the token before (from 0 at a document's first token), one byte each;
 * SD_CHAR_ESCAPE means the difference is in the exceptions (xpos sorted, xval). Writes in
 * out[j] the value at shard position q[j], for q sorted, each within 0..n-1. doc_start: the
 * ndocs document starts (offsets.npy without its last entry). Returns 0, -1 for queries out
 * of order or of range, -2 for an escape without its exception. */
#define SD_CHAR_ESCAPE 255
int64_t sd_char_values(const uint8_t *delta, int64_t n, const int64_t *doc_start, int64_t ndocs, const int64_t *xpos,
                       const int64_t *xval, int64_t nx, const int64_t *q, int64_t nq, int64_t *out);

/* Export's copy of kept JSONL rows (jsonl.c): the whole lines of buf[start:end) (each ends
 * in '\n'), counted from row *row, matched in order to the documents' rows[*at..m) (ascending);
 * each kept[k] != 0 one written to out (room for end - start bytes) as read, without BOM and
 * line end, then '\n'. Advances *row and *at, sets *written to the lines written; returns the
 * bytes written, -1 when the last line has no '\n'. */
int64_t sd_jsonl_kept(const uint8_t *buf, int64_t start, int64_t end, int64_t *row, const int64_t *rows,
                      const int64_t *kept, int64_t m, int64_t *at, uint8_t *out, int64_t *written);

/* Ingest's documents of JSONL rows (jsonl_docs.c): the whole lines of buf[*pos:end) (each ends
 * in '\n'), counted from row *row, taken as documents while each is a row that path takes
 * (see there): its decoded text appended to out, a string id's UTF-8 to ids (each with room
 * for end - *pos bytes), one sd_jdoc in docs (room for maxdocs). Stops at the end (returns 0),
 * at a line Python must read (1; [*bad_a, *bad_b) is it, without BOM and CRs, its row counted,
 * *pos after it), with docs full (2; *pos at the next line), or at a last line without '\n'
 * (-1). Sets *nout, *nids and *ndocs to what was written. */
#define SD_ID_NONE 0
#define SD_ID_STR 1
#define SD_ID_INT 2
#define SD_ID_TRUE 3
#define SD_ID_FALSE 4
typedef struct {
    int64_t row, nchars, nbytes, text_at;
    int64_t id_kind, id_value, id_len; /* id_value: the integer, or where a string starts in ids */
} sd_jdoc;
int sd_jsonl_docs(const uint8_t *buf, int64_t *pos, int64_t end, int64_t *row, const uint8_t *tf, int64_t tflen,
                  const uint8_t *idf, int64_t idflen, int64_t limit, uint8_t *out, int64_t *nout, uint8_t *ids,
                  int64_t *nids, sd_jdoc *docs, int64_t maxdocs, int64_t *ndocs, int64_t *bad_a, int64_t *bad_b);

#endif
