/* Ingest's reading of JSONL rows (sadedup/stages/ingest.py, readers.jsonl_documents): the
 * documents of a block of whole lines, their text decoded straight into one buffer, without a
 * Python object per row.
 *
 * This is a fast path, never a second definition: a row is taken here only when it is strict
 * JSON (RFC 8259: an object, every string valid UTF-8 with no unpaired surrogate escape, no
 * control character, nesting at most MAX_DEPTH deep), its text field is there once and is a
 * string, its id field (if there) is there once and is a string, an integer of at most 18
 * digits, true, false or null, no top-level key has an escape, and its text is within the
 * size limit. Such a row is read alike by orjson and by json (readers.parse_json_row's two
 * parsers) and is a document; its text is what they decode, its id what json_ext_id makes of
 * theirs. Any other line is handed back, and readers.parse_json_row reads it as before: an
 * error row, a row with a float, a big number or an odd id, a key spelled with escapes.
 *
 * Lines are what readers.jsonl_lines makes of them (as in jsonl.c): every line counts as a
 * row; a UTF-8 BOM at its start is dropped, then every CR at its end; what is then empty or
 * ASCII whitespace only (bytes.isspace) is no row. */
#include <string.h>

#include "kernels.h"

#define MAX_DEPTH 64

static const uint8_t SPACE[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, ['\v'] = 1, ['\f'] = 1};
static const uint8_t JSON_WS[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1};

static inline const uint8_t *skip_ws(const uint8_t *p, const uint8_t *e) {
    while (p < e && JSON_WS[*p]) p++;
    return p;
}

static inline int hexval(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static inline int hex4(const uint8_t *p, const uint8_t *e, uint32_t *v) {
    if (e - p < 4) return 0;
    uint32_t x = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(p[k]);
        if (h < 0) return 0;
        x = (x << 4) | (uint32_t)h;
    }
    *v = x;
    return 1;
}

/* Length of the valid UTF-8 sequence (2..4 bytes) that starts with the non-ASCII byte p[0],
 * 0 when it is not one (overlong, a surrogate, beyond U+10FFFF, cut short). */
static inline int utf8_seq(const uint8_t *p, const uint8_t *e) {
    uint8_t c = p[0];
    int64_t left = e - p;
    if (c >= 0xC2 && c <= 0xDF) return left >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (left < 3 || (p[2] & 0xC0) != 0x80) return 0;
        uint8_t lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (left < 4 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 4 : 0;
    }
    return 0;
}

static inline int plain8(uint64_t x) {
    /* none of the 8 bytes is '"', '\\', below 0x20 or above 0x7f */
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t q = x ^ (0x22 * ones), b = x ^ (0x5C * ones);
    uint64_t zq = (q - ones) & ~q, zb = (b - ones) & ~b, lo = x - 0x20 * ones;
    return !(((zq | zb | lo) & ~x & high) | (x & high));
}

/* A string from p (just after its opening quote): returns the byte after its closing quote, or
 * NULL when it is not one this path takes. With `out`, its decoded UTF-8 goes there (at most
 * as many bytes as the string has) and *nout, *nchars say how many bytes and code points;
 * *escaped says whether it had an escape. */
static const uint8_t *string(const uint8_t *p, const uint8_t *e, uint8_t *out, int64_t *nout, int64_t *nchars,
                             int *escaped) {
    int64_t o = 0, cont = 0;
    int esc = 0;
    for (;;) {
        while (e - p >= 8) {
            uint64_t x;
            memcpy(&x, p, 8);
            if (!plain8(x)) break;
            if (out) memcpy(out + o, p, 8);
            o += 8;
            p += 8;
        }
        if (p >= e) return NULL;
        uint8_t c = *p;
        if (c == '"') break;
        if (c < 0x20) return NULL;
        if (c < 0x80 && c != '\\') {
            if (out) out[o] = c;
            o++;
            p++;
            continue;
        }
        if (c >= 0x80) {
            int n = utf8_seq(p, e);
            if (!n) return NULL;
            if (out) memcpy(out + o, p, (size_t)n);
            o += n;
            cont += n - 1;
            p += n;
            continue;
        }
        /* an escape */
        esc = 1;
        if (e - p < 2) return NULL;
        uint8_t d = p[1];
        uint32_t cp;
        p += 2;
        switch (d) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (!hex4(p, e, &cp)) return NULL;
            p += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return NULL; /* an unpaired low surrogate */
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (e - p < 6 || p[0] != '\\' || p[1] != 'u' || !hex4(p + 2, e, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                    return NULL; /* an unpaired high surrogate */
                p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            break;
        default:
            return NULL;
        }
        int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        if (out) {
            uint8_t *w = out + o;
            if (n == 1) w[0] = (uint8_t)cp;
            else if (n == 2) { w[0] = (uint8_t)(0xC0 | (cp >> 6)); w[1] = (uint8_t)(0x80 | (cp & 0x3F)); }
            else if (n == 3) {
                w[0] = (uint8_t)(0xE0 | (cp >> 12)); w[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
                w[2] = (uint8_t)(0x80 | (cp & 0x3F));
            } else {
                w[0] = (uint8_t)(0xF0 | (cp >> 18)); w[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
                w[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); w[3] = (uint8_t)(0x80 | (cp & 0x3F));
            }
        }
        o += n;
        cont += n - 1;
    }
    if (nout) *nout = o;
    if (nchars) *nchars = o - cont;
    if (escaped) *escaped = esc;
    return p + 1;
}

/* A JSON number from p; returns the byte after it or NULL. *integer: no fraction or exponent;
 * *value: its value when it is an integer of at most 18 digits (else *integer is 0 too). */
static const uint8_t *number(const uint8_t *p, const uint8_t *e, int *integer, int64_t *value) {
    int neg = 0, digits = 0;
    int64_t v = 0;
    if (p < e && *p == '-') { neg = 1; p++; }
    if (p >= e) return NULL;
    if (*p == '0') { p++; digits = 1; }
    else if (*p >= '1' && *p <= '9') {
        while (p < e && *p >= '0' && *p <= '9') {
            if (digits < 18) v = v * 10 + (*p - '0');
            digits++;
            p++;
        }
    } else return NULL;
    int isint = digits <= 18;
    if (p < e && *p == '.') {
        p++;
        if (p >= e || *p < '0' || *p > '9') return NULL;
        while (p < e && *p >= '0' && *p <= '9') p++;
        isint = 0;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || *p < '0' || *p > '9') return NULL;
        while (p < e && *p >= '0' && *p <= '9') p++;
        isint = 0;
    }
    *integer = isint;
    *value = neg ? -v : v;
    return p;
}

static inline const uint8_t *literal(const uint8_t *p, const uint8_t *e, const char *word, int n) {
    return e - p >= n && memcmp(p, word, (size_t)n) == 0 ? p + n : NULL;
}

/* Any JSON value from p (no whitespace before it): the byte after it, or NULL. */
static const uint8_t *value(const uint8_t *p, const uint8_t *e, int depth) {
    if (p >= e) return NULL;
    switch (*p) {
    case '"':
        return string(p + 1, e, NULL, NULL, NULL, NULL);
    case '{':
    case '[': {
        if (depth >= MAX_DEPTH) return NULL;
        uint8_t close = *p == '{' ? '}' : ']';
        int obj = *p == '{';
        p = skip_ws(p + 1, e);
        if (p < e && *p == close) return p + 1;
        for (;;) {
            if (obj) {
                if (p >= e || *p != '"') return NULL;
                p = string(p + 1, e, NULL, NULL, NULL, NULL);
                if (!p) return NULL;
                p = skip_ws(p, e);
                if (p >= e || *p != ':') return NULL;
                p = skip_ws(p + 1, e);
            }
            p = value(p, e, depth + 1);
            if (!p) return NULL;
            p = skip_ws(p, e);
            if (p >= e) return NULL;
            if (*p == close) return p + 1;
            if (*p != ',') return NULL;
            p = skip_ws(p + 1, e);
        }
    }
    case 't': return literal(p, e, "true", 4);
    case 'f': return literal(p, e, "false", 5);
    case 'n': return literal(p, e, "null", 4);
    default: {
        int isint;
        int64_t v;
        return number(p, e, &isint, &v);
    }
    }
}

/* One line a[0..n): 1 with *doc filled (its text at out, its id string at ids) when this path
 * takes it, 0 when Python must read it. */
static int one_row(const uint8_t *a, const uint8_t *e, const uint8_t *tf, int64_t tflen, const uint8_t *idf,
                   int64_t idflen, int64_t limit, uint8_t *out, uint8_t *ids, sd_jdoc *doc) {
    const uint8_t *p = skip_ws(a, e), *text = NULL, *id = NULL;
    if (p >= e || *p != '{') return 0;
    p = skip_ws(p + 1, e);
    if (p < e && *p == '}') return 0; /* no text field */
    for (;;) {
        if (p >= e || *p != '"') return 0;
        const uint8_t *k = p + 1;
        int esc;
        p = string(k, e, NULL, NULL, NULL, &esc);
        if (!p || esc) return 0;
        int64_t klen = p - 1 - k;
        p = skip_ws(p, e);
        if (p >= e || *p != ':') return 0;
        p = skip_ws(p + 1, e);
        const uint8_t *v = p;
        if (klen == tflen && memcmp(k, tf, (size_t)tflen) == 0) {
            if (text || *v != '"') return 0;
            /* decoded into `out` as it is checked: one pass over the text, not a check and then
             * a copy (a row refused later leaves only bytes past the caller's end in `out`) */
            p = string(v + 1, e, out, &doc->nbytes, &doc->nchars, NULL);
            if (!p) return 0;
            text = v;
            goto next;
        }
        p = value(p, e, 1);
        if (!p) return 0;
        if (klen == idflen && memcmp(k, idf, (size_t)idflen) == 0) {
            if (id) return 0;
            id = v;
        }
    next:
        p = skip_ws(p, e);
        if (p >= e) return 0;
        if (*p == '}') break;
        if (*p != ',') return 0;
        p = skip_ws(p + 1, e);
    }
    if (skip_ws(p + 1, e) != e || !text) return 0;
    doc->id_kind = SD_ID_NONE;
    if (id) {
        if (*id == '"') {
            int64_t nb, nc;
            string(id + 1, e, ids, &nb, &nc, NULL);
            doc->id_kind = SD_ID_STR;
            doc->id_value = nb;
        } else if (*id == 't') doc->id_kind = SD_ID_TRUE;
        else if (*id == 'f') doc->id_kind = SD_ID_FALSE;
        else if (*id == 'n') doc->id_kind = SD_ID_NONE;
        else if (*id == '-' || (*id >= '0' && *id <= '9')) {
            int isint;
            int64_t v;
            number(id, e, &isint, &v);
            if (!isint) return 0;
            doc->id_kind = SD_ID_INT;
            doc->id_value = v;
        } else return 0; /* an object or an array */
    }
    return doc->nbytes <= limit;
}

int sd_jsonl_docs(const uint8_t *buf, int64_t *pos, int64_t end, int64_t *row, const uint8_t *tf, int64_t tflen,
                  const uint8_t *idf, int64_t idflen, int64_t limit, uint8_t *out, int64_t *nout, uint8_t *ids,
                  int64_t *nids, sd_jdoc *docs, int64_t maxdocs, int64_t *ndocs, int64_t *bad_a, int64_t *bad_b) {
    const uint8_t *p = buf + *pos, *stop = buf + end;
    int64_t r = *row, o = 0, q = 0, d = 0;
    int rc = 0;
    while (p < stop) {
        if (d == maxdocs) { rc = 2; break; }
        const uint8_t *nl = memchr(p, '\n', (size_t)(stop - p));
        if (!nl) { rc = -1; break; } /* the caller hands whole lines */
        const uint8_t *a = p, *b = nl;
        p = nl + 1;
        r++;
        if (b - a >= 3 && a[0] == 0xEF && a[1] == 0xBB && a[2] == 0xBF) a += 3;
        while (b > a && b[-1] == '\r') b--;
        const uint8_t *s = a;
        while (s < b && SPACE[*s]) s++;
        if (s == b) continue; /* empty or whitespace only */
        sd_jdoc *doc = docs + d;
        if (!one_row(a, b, tf, tflen, idf, idflen, limit, out + o, ids + q, doc)) {
            *bad_a = a - buf;
            *bad_b = b - buf;
            rc = 1;
            break;
        }
        doc->row = r;
        doc->text_at = o;
        o += doc->nbytes;
        if (doc->id_kind == SD_ID_STR) {
            int64_t len = doc->id_value;
            doc->id_value = q;
            doc->id_len = len;
            q += len;
        }
        d++;
    }
    *pos = p - buf;
    *row = r;
    *nout = o;
    *nids = q;
    *ndocs = d;
    return rc;
}
