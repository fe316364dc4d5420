/* sadedup document-level kernels: text normalization, shingling, MinHash, exact Jaccard.
 *
 * Documents are given as (start, end) byte ranges into a "virtual" buffer made of two parts:
 * positions below lenA are in A (the memory-mapped ingest texts), positions from lenA on are
 * in B at position - lenA (texts Python normalized itself: NFC and Unicode lower-casing of
 * documents that are not pure ASCII). The kernels never touch Python objects; the binding
 * module releases the GIL around every call.
 *
 * Normalization done here (the part that is the same for every script):
 *   - whitespace is the set Python's str.isspace() accepts (ASCII \t\n\v\f\r, 0x1c-0x1f,
 *     space, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000);
 *     a run of it becomes one space, and leading/trailing runs go;
 *   - with `lower`, ASCII A-Z become a-z (non-ASCII text was lower-cased by Python).
 *
 * Shingles: word n-grams (words: maximal runs of non-whitespace) or character n-grams (code
 * points of the normalized text, whitespace runs as one space). A shingle is a 64-bit hash of
 * its n token hashes; a document with fewer than n tokens has no shingle.
 *
 * MinHash: permutation p maps a shingle hash H to g((hi32(H) ^ s) * a) with s = seed[p],
 * a = (s * 0x9E3779B9) | 1 and g(y) = y ^ (y >> 15), all mod 2^32 (a bijection of 32-bit values
 * keyed by the permutation's seed; H is already a strong hash); signature[p] is the minimum
 * over the document's shingles, UINT32_MAX when it has none.
 */
#ifndef SADEDUP_MINHASH_H
#define SADEDUP_MINHASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uint8_t *A;
    int64_t lenA;
    const uint8_t *B;
    int64_t lenB;
    const int64_t *starts;
    const int64_t *ends;
    int64_t ndocs;
} sd_docs;

/* Collapses whitespace and strips ends (and ASCII lower-cases with `lower`): document d's
 * normalized bytes go to out[out_offsets[d] : out_offsets[d+1]], out_offsets[0] = 0.
 * `out` must hold the sum of the input lengths. */
void sd_normalize(const sd_docs *docs, int lower, uint8_t *out, int64_t *out_offsets);

/* 1 in nonascii[d] when document d has a byte >= 0x80. */
void sd_nonascii(const sd_docs *docs, uint8_t *nonascii);

/* Signatures: sig[d * num_perm + p]; nshingles[d] = shingles of document d (with repeats).
 * mode 0: words, 1: characters. Returns 0, or -1 when out of memory. */
int sd_minhash(const sd_docs *docs, int lower, int mode, int ngram, uint64_t seed, const uint32_t *perm_seeds,
               int num_perm, uint32_t *sig, int64_t *nshingles);

/* Sorted distinct shingle hashes of each document: written to out[out_offsets[d] ...], at most
 * out_offsets[d+1] - out_offsets[d] of them (give at least nshingles[d]); counts[d] = how many.
 * Returns 0, or -1 when out of memory. */
int sd_shingle_sets(const sd_docs *docs, int lower, int mode, int ngram, uint64_t seed, uint64_t *out,
                    const int64_t *out_offsets, int64_t *counts);

/* Exact Jaccard of sorted distinct sets: out[k] = |S_i & S_j| / |S_i | S_j| for i = pi[k], j = pj[k],
 * S_x = h[off[x] : off[x] + cnt[x]]; two empty sets give 0. */
void sd_jaccard_pairs(const uint64_t *h, const int64_t *off, const int64_t *cnt, const int64_t *pi,
                      const int64_t *pj, int64_t npairs, double *out);

/* Union-find over n nodes and edges (ei[k], ej[k]): root[x] = smallest node of x's component,
 * whatever the order of the edges. */
void sd_components(int64_t n, const int64_t *ei, const int64_t *ej, int64_t nedges, int64_t *root);

/* Where the cut finds the similarity of two nodes that are no verified pair: kind 0 nowhere,
 * 1 signature agreement (rows of sig, `width` values each), 2 exact Jaccard of the sets
 * h[off[r] : off[r] + cnt[r]]; node x is row row[x] (-1: none). */
typedef struct {
    int kind;
    const int64_t *row;
    const uint32_t *sig;
    int64_t width;
    const uint64_t *h;
    const int64_t *off, *cnt;
} sd_similarity;

/* The clusters sadedup.lsh.cluster makes of n nodes, verified pairs (ei[k], ej[k]) of
 * similarity esim[k], the nodes in keep-rule order (by_rank: every node once, by rank, ties by
 * node) and per-node drift floors (a member needs the higher of its own and the kept node's),
 * in its order: components by smallest node, clusters in visiting
 * order, each its kept node then the others by node, with their similarity to the kept one.
 * kept[nkept] (room for n / 2), member / cluster / msim (room for n). Returns the members, or
 * -1 out of memory, -2 a similarity was needed and S has none, -3 one of a node without a row;
 * asked: how many similarities it computed. */
int64_t sd_cluster_cut(int64_t n, const int64_t *ei, const int64_t *ej, const double *esim, int64_t E,
                       const int64_t *by_rank, const double *floor, const sd_similarity *S, int64_t *kept,
                       int64_t *nkept, int64_t *member, int64_t *cluster, double *msim, int64_t *asked);

#endif
