#include "kernels.h"

/* prefetch distance, in entries of gid */
#define PF 32

/* Both passes look up per-group state by the id of each window, at random in arrays far
 * larger than the cache: the ids are known PF entries ahead, so the lookups are prefetched.
 * `b` may be NULL. */
static inline void prefetch_groups(const void *gid, int gid64, int64_t q, int64_t m, const int64_t *a,
                                   const int64_t *b) {
    if (q + PF >= m) return;
    const int64_t f = idx_at(gid, q + PF, gid64);
    if (f < 0) return;
    __builtin_prefetch(&a[f], 1);
    if (b) __builtin_prefetch(&b[f], 1);
}

/* Shard position of entry q over the runs (rstart, roff); *r is the run of the entry before,
 * as q only grows. */
static inline int64_t run_position(const int64_t *rstart, const int64_t *roff, int64_t q, int64_t *r) {
    while (q >= roff[*r + 1]) (*r)++;
    return rstart[*r] + (q - roff[*r]);
}

/* Span builder: duplicate windows arrive in increasing position; windows that overlap or
 * touch the open span extend it (the removed tokens are the union, in maximal runs). */
typedef struct {
    int64_t start, end, src;
    int open;
    int64_t removed, nsp;
    int64_t *sp_doc, *sp_start, *sp_end, *sp_src;
} spans_t;

static void span_close(spans_t *s, int64_t doc, int64_t doc_start) {
    if (!s->open) return;
    s->sp_doc[s->nsp] = doc;
    s->sp_start[s->nsp] = s->start - doc_start;
    s->sp_end[s->nsp] = s->end - doc_start;
    s->sp_src[s->nsp] = s->src;
    s->nsp++;
    s->removed += s->end - s->start;
    s->open = 0;
}

static void span_add(spans_t *s, int64_t p, int64_t L, int64_t src, int64_t doc, int64_t doc_start) {
    if (s->open && p <= s->end) {
        if (p + L > s->end) s->end = p + L;
        return;
    }
    span_close(s, doc, doc_start);
    s->open = 1;
    s->start = p;
    s->end = p + L;
    s->src = src;
}

static int is_dropped(int64_t removed, int64_t ntok, double drop_fraction) {
    return ntok > 0 && (double)removed / (double)ntok > drop_fraction;
}

/* Closes document d: its span, its removed count, the drop rule; a dropped document takes
 * back the first sightings it made (keep="first"). */
static void finish_doc(spans_t *s, int64_t d, const int64_t *doc_start, double drop_fraction, int64_t *src,
                       const int64_t *scratch, int64_t *nset, int64_t *removed, uint8_t *dropped) {
    const int64_t a = doc_start[d], b = doc_start[d + 1];
    span_close(s, d, a);
    removed[d] = s->removed;
    dropped[d] = (uint8_t)is_dropped(s->removed, b - a, drop_fraction);
    if (dropped[d])
        for (int64_t j = 0; j < *nset; j++) src[scratch[j]] = -1;
    *nset = 0;
    s->removed = 0;
}

/* One pass in document order over the m window ids of a shard, which cover the runs
 * (rstart, roff) of it (see kernels.h). `second` NULL means keep="first" (src is then the
 * first surviving sighting of each group, updated as we go), else keep="none" (src = first). */
static int64_t select_pass(const void *gid, int gid64, int64_t m, const int64_t *rstart, const int64_t *roff,
                           const int64_t *doc_start, int64_t ndocs, int64_t L, double drop_fraction, int64_t base,
                           int64_t *src, const int64_t *second, int64_t *scratch, int64_t *removed,
                           uint8_t *dropped, int64_t *sp_doc, int64_t *sp_start, int64_t *sp_end, int64_t *sp_src) {
    spans_t s = {0};
    s.sp_doc = sp_doc; s.sp_start = sp_start; s.sp_end = sp_end; s.sp_src = sp_src;
    int64_t d = 0, nset = 0, r = 0;
    for (int64_t q = 0; q < m; q++) {
        /* keep="none" reads a group's state only where a span starts (below), too rarely for
         * prefetching every window to pay */
        if (!second) prefetch_groups(gid, gid64, q, m, src, NULL);
        const int64_t g = idx_at(gid, q, gid64);
        if (g < 0) continue;
        const int64_t p = run_position(rstart, roff, q, &r);
        while (p >= doc_start[d + 1]) finish_doc(&s, d++, doc_start, drop_fraction, src, scratch, &nset, removed, dropped);
        const int64_t a = doc_start[d];
        if (second) {
            /* a window that overlaps or touches the open span only extends it and its source is
             * not used (span_add): the two random lookups are made for the first window of
             * each span alone, so the pass costs a sequential read of gid on redundant text */
            if (s.open && p <= s.end) {
                if (p + L > s.end) s.end = p + L;
            } else {
                span_add(&s, p, L, src[g] == base + p ? second[g] : src[g], d, a);
            }
        } else if (src[g] >= 0) {
            span_add(&s, p, L, src[g], d, a);
        } else {
            /* First sight in text that survives so far; undone if this document drops. */
            src[g] = base + p;
            scratch[nset++] = g;
        }
    }
    while (d < ndocs) finish_doc(&s, d++, doc_start, drop_fraction, src, scratch, &nset, removed, dropped);
    return s.nsp;
}

int64_t sd_select_first(const void *gid, int gid64, int64_t m, const int64_t *rstart, const int64_t *roff,
                        const int64_t *doc_start,
                        int64_t ndocs, int64_t L, double drop_fraction, int64_t base, int64_t *src, int64_t *scratch,
                        int64_t *removed, uint8_t *dropped, int64_t *sp_doc, int64_t *sp_start,
                        int64_t *sp_end, int64_t *sp_src) {
    return select_pass(gid, gid64, m, rstart, roff, doc_start, ndocs, L, drop_fraction, base, src, NULL, scratch,
                       removed, dropped, sp_doc, sp_start, sp_end, sp_src);
}

void sd_first_two(const void *gid, int gid64, int64_t m, const int64_t *rstart, const int64_t *roff, int64_t base,
                  int64_t *first, int64_t *second) {
    int64_t r = 0;
    for (int64_t q = 0; q < m; q++) {
        prefetch_groups(gid, gid64, q, m, first, second);
        const int64_t g = idx_at(gid, q, gid64);
        if (g < 0) continue;
        const int64_t p = base + run_position(rstart, roff, q, &r);
        if (first[g] < 0) first[g] = p;
        else if (second[g] < 0) second[g] = p;
    }
}

int64_t sd_select_none(const void *gid, int gid64, int64_t m, const int64_t *rstart, const int64_t *roff,
                       const int64_t *doc_start,
                       int64_t ndocs, int64_t L, double drop_fraction, int64_t base, const int64_t *first,
                       const int64_t *second, int64_t *removed, uint8_t *dropped, int64_t *sp_doc,
                       int64_t *sp_start, int64_t *sp_end, int64_t *sp_src) {
    /* nothing is written to `first` in this mode: no first sightings are recorded */
    return select_pass(gid, gid64, m, rstart, roff, doc_start, ndocs, L, drop_fraction, base, (int64_t *)first, second,
                       NULL, removed, dropped, sp_doc, sp_start, sp_end, sp_src);
}
