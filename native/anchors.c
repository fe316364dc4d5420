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

/* Rolling polynomial hash of the k-grams of one document, one k-gram per call, mixed. */
typedef struct {
    const uint8_t *T;
    int es;
    int64_t next; /* start of the next k-gram */
    int64_t k;
    uint64_t h, top;
} roller;

static inline uint64_t roll(roller *r) {
    const int64_t j = r->next++;
    if (j > 0) r->h -= r->top * (tok_at(r->T, j - 1, r->es) + 1);
    r->h = r->h * HASH_BASE + tok_at(r->T, j + r->k - 1, r->es) + 1;
    return fmix64(r->h);
}

/* The smaller of two (hash, position) pairs, `a` on ties (a is the left one): written as
 * selects so the compiler makes conditional moves, not branches it would mispredict. */
#define PICK(ah, aj, bh, bj, oh, oj) do { const int b_ = (bh) < (ah); \
    oh = b_ ? (bh) : (ah); oj = b_ ? (bj) : (aj); } while (0)

/* Minimum of every run of w consecutive k-gram hashes (van Herk / Gil-Werman): k-grams in
 * blocks of w; a window starting at offset t of a block is the block's suffix from t and
 * the next block's prefix to t-1, so its minimum is the smaller of a suffix minimum and a
 * running prefix minimum: three comparisons per k-gram and no data-dependent branch. Only
 * the current block and the next are held (2w entries). */
static inline __attribute__((always_inline)) int64_t
anchors_es(const uint8_t *T, const int es, const int64_t *offsets, int64_t ndocs, int64_t k, int64_t L, int64_t *pos,
           uint64_t *hash, int64_t cap) {
    const int64_t w = L - k + 1;
    uint64_t *ch = malloc((size_t)w * 8), *nh = malloc((size_t)w * 8), *sh = malloc((size_t)w * 8);
    int64_t *sj = malloc((size_t)w * 8);
    if (!ch || !nh || !sh || !sj) { free(ch); free(nh); free(sh); free(sj); return -1; }
    uint64_t top = 1; /* HASH_BASE^(k-1): the weight of the token that leaves */
    for (int64_t i = 1; i < k; i++) top *= HASH_BASE;
    int64_t count = 0;
    for (int64_t d = 0; d < ndocs; d++) {
        const int64_t s = offsets[d], e = offsets[d + 1];
        if (e - s < L) continue;
        const int64_t nk = e - s - k + 1; /* k-grams; windows are the first nk - w + 1 runs */
        roller r = {T + s * es, es, 0, k, 0, top};
        for (int64_t i = 0; i < k - 1; i++) r.h = r.h * HASH_BASE + tok_at(r.T, i, es) + 1;
        int64_t last = -1;
        for (int64_t t = 0; t < w; t++) ch[t] = roll(&r);
        for (int64_t base = 0;; base += w) { /* the block of k-grams base .. base+w-1 */
            sh[w - 1] = ch[w - 1]; sj[w - 1] = base + w - 1;
            for (int64_t t = w - 2; t >= 0; t--)
                PICK(ch[t], base + t, sh[t + 1], sj[t + 1], sh[t], sj[t]);
            /* window t: k-grams base+t .. base+t+w-1; t = 0 is this block, t >= 1 needs the
             * next block's prefix to t-1, so windows stop where the k-grams do */
            const int64_t next = nk - (base + w) < w ? nk - (base + w) : w;
            uint64_t ph = 0;
            int64_t pj = 0;
            for (int64_t t = 0; t < w && t <= next; t++) {
                uint64_t mh = sh[0];
                int64_t mj = sj[0];
                if (t > 0) {
                    const uint64_t x = roll(&r);
                    nh[t - 1] = x;
                    if (t == 1) { ph = x; pj = base + w; }
                    else PICK(ph, pj, x, base + w + t - 1, ph, pj);
                    PICK(sh[t], sj[t], ph, pj, mh, mj);
                }
                /* the window minimum only moves right, so a new anchor is a new position */
                if (mj != last) {
                    if (count < cap) { pos[count] = s + mj; hash[count] = mh; }
                    count++;
                    last = mj;
                }
            }
            if (next < w) break; /* no window starts in a block shorter than w */
            nh[w - 1] = roll(&r);
            uint64_t *tmp = ch; ch = nh; nh = tmp;
        }
    }
    free(ch); free(nh); free(sh); free(sj);
    return count;
}

int64_t sd_anchors(const uint8_t *T, int es, const int64_t *offsets, int64_t ndocs, int64_t k, int64_t L,
                   int64_t *pos, uint64_t *hash, int64_t cap) {
    switch (es) { /* one copy per token width: the hot loop reads tokens without a switch */
    case 1: return anchors_es(T, 1, offsets, ndocs, k, L, pos, hash, cap);
    case 2: return anchors_es(T, 2, offsets, ndocs, k, L, pos, hash, cap);
    default: return anchors_es(T, 4, offsets, ndocs, k, L, pos, hash, cap);
    }
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
