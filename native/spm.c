/* Reads token ids and byte offsets out of sentencepiece's serialized SentencePieceText,
 * so a document's pieces never become Python objects one by one.
 *
 * Wire format (sentencepiece_model.proto / sentencepiece.proto):
 *   SentencePieceText { 1: text (bytes), 2: repeated SentencePiece pieces, 3: score }
 *   SentencePiece     { 1: piece, 2: id (varint), 3: surface, 4: begin (varint), 5: end (varint) }
 */
#include "kernels.h"

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) { *out = v; return 1; }
    }
    return 0;
}

static int skip(const uint8_t **p, const uint8_t *end, int wire) {
    uint64_t len;
    switch (wire) {
    case 0: return varint(p, end, &len);
    case 1: if (end - *p < 8) return 0; *p += 8; return 1;
    case 2: if (!varint(p, end, &len) || (uint64_t)(end - *p) < len) return 0; *p += len; return 1;
    case 5: if (end - *p < 4) return 0; *p += 4; return 1;
    default: return 0;
    }
}

int64_t sd_spm_pieces(const uint8_t *buf, int64_t n, int64_t cap, uint32_t *ids, int64_t *begin, int64_t *end) {
    const uint8_t *p = buf, *stop = buf + n;
    int64_t k = 0;
    while (p < stop) {
        uint64_t key;
        if (!varint(&p, stop, &key)) return -1;
        int field = (int)(key >> 3), wire = (int)(key & 7);
        if (field != 2 || wire != 2) {
            if (!skip(&p, stop, wire)) return -1;
            continue;
        }
        uint64_t len;
        if (!varint(&p, stop, &len) || (uint64_t)(stop - p) < len) return -1;
        const uint8_t *q = p, *qend = p + len;
        p = qend;
        if (k >= cap) return -2;
        ids[k] = 0; begin[k] = 0; end[k] = 0;
        while (q < qend) {
            uint64_t k2, v;
            if (!varint(&q, qend, &k2)) return -1;
            int f2 = (int)(k2 >> 3), w2 = (int)(k2 & 7);
            if (w2 == 0 && (f2 == 2 || f2 == 4 || f2 == 5)) {
                if (!varint(&q, qend, &v)) return -1;
                if (f2 == 2) ids[k] = (uint32_t)v;
                else if (f2 == 4) begin[k] = (int64_t)v;
                else end[k] = (int64_t)v;
            } else if (!skip(&q, qend, w2)) {
                return -1;
            }
        }
        k++;
    }
    return k;
}
