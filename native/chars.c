#include "kernels.h"

/* Character bounds kept at tokenize time (see kernels.h): one stream of per-token deltas,
 * reset at every document start, read in one forward pass up to the last query. The pass is
 * sequential over one byte per token, so a whole shard costs about what reading it does;
 * queries are answered as the walk passes them, which is why they must come sorted. */
int64_t sd_char_values(const uint8_t *delta, int64_t n, const int64_t *doc_start, int64_t ndocs, const int64_t *xpos,
                       const int64_t *xval, int64_t nx, const int64_t *q, int64_t nq, int64_t *out) {
    if (nq == 0) return 0;
    for (int64_t j = 1; j < nq; j++)
        if (q[j] < q[j - 1]) return -1;
    if (q[0] < 0 || q[nq - 1] >= n) return -1;
    int64_t d = 0, x = 0, v = 0, j = 0;
    const int64_t last = q[nq - 1];
    for (int64_t i = 0; i <= last; i++) {
        /* a new document starts its values from 0 (empty documents start nowhere) */
        while (d < ndocs && doc_start[d] <= i) {
            if (doc_start[d] == i) v = 0;
            d++;
        }
        const uint8_t c = delta[i];
        if (c == SD_CHAR_ESCAPE) {
            while (x < nx && xpos[x] < i) x++;
            if (x >= nx || xpos[x] != i) return -2;
            v += xval[x++];
        } else {
            v += c;
        }
        while (j < nq && q[j] == i) out[j++] = v;
    }
    return 0;
}
