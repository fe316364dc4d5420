/* Export's copy of kept JSONL rows as read (sadedup/stages/export.py, readers.jsonl_kept):
 * the rows of a block of whole lines matched to the documents by row number, and each kept
 * one written out as the line it was, in one pass instead of a Python object per line.
 *
 * A line is what readers.jsonl_lines makes of it, which this must agree with byte for byte
 * (tests/test_export.py compares the two on BOMs, CR LF, blank and whitespace lines, rows
 * that are not documents, a last line without a line feed): every line counts as a row; a
 * UTF-8 BOM at its start is dropped, then every CR at its end; what is then empty or ASCII
 * whitespace only (bytes.isspace) is no row a document can come from. */
#include <string.h>

#include "kernels.h"

static const uint8_t SPACE[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, ['\v'] = 1, ['\f'] = 1};

int64_t sd_jsonl_kept(const uint8_t *buf, int64_t start, int64_t end, int64_t *row, const int64_t *rows,
                      const int64_t *kept, int64_t m, int64_t *at, uint8_t *out, int64_t *written) {
    int64_t o = 0, r = *row, k = *at, w = 0;
    const uint8_t *p = buf + start, *stop = buf + end;
    while (p < stop) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(stop - p));
        if (!nl) return -1; /* the caller hands whole lines */
        const uint8_t *a = p, *b = nl;
        p = nl + 1;
        r++;
        if (b - a >= 3 && a[0] == 0xEF && a[1] == 0xBB && a[2] == 0xBF) a += 3;
        while (b > a && b[-1] == '\r') b--;
        const uint8_t *q = a;
        while (q < b && SPACE[*q]) q++;
        if (q == b) continue; /* empty or whitespace only */
        if (k >= m || rows[k] != r) continue; /* a row set aside in input_errors */
        if (kept[k]) {
            memcpy(out + o, a, (size_t)(b - a));
            o += b - a;
            out[o++] = '\n';
            w++;
        }
        k++;
    }
    *row = r;
    *at = k;
    *written = w;
    return o;
}
