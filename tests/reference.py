"""Brute-force reference of DESIGN.md's substring semantics, in plain Python.

Imports nothing from sadedup: it is the independent statement the tests hold sadedup to.
Tokens are the UTF-8 bytes of each document (the `bytes` tokenizer).
"""
from __future__ import annotations


def windows(tokens: bytes, L: int):
    for p in range(len(tokens) - L + 1):
        yield p, tokens[p:p + L]


def runs(dup_starts: list[int], L: int) -> list[tuple[int, int]]:
    """Maximal runs of the union of windows [p, p+L)."""
    out: list[list[int]] = []
    for p in dup_starts:
        if out and p <= out[-1][1]:
            out[-1][1] = max(out[-1][1], p + L)
        else:
            out.append([p, p + L])
    return [(a, b) for a, b in out]


def reference(docs: list[bytes], L: int, keep: str = "first", drop: float = 0.8):
    """Per document: (spans [(start, end, src_doc, src_pos)], removed, dropped)."""
    result = []
    if keep == "none":
        occ: dict[bytes, list[tuple[int, int]]] = {}
        for d, t in enumerate(docs):
            for p, w in windows(t, L):
                occ.setdefault(w, []).append((d, p))
        for d, t in enumerate(docs):
            dups = [p for p, w in windows(t, L) if len(occ[w]) >= 2]
            spans = []
            for a, b in runs(dups, L):
                o = occ[t[a:a + L]]
                src = o[1] if o[0] == (d, a) else o[0]
                spans.append((a, b, src[0], src[1]))
            removed = sum(b - a for a, b, _, _ in spans)
            result.append((spans, removed, len(t) > 0 and removed / len(t) > drop))
        return result
    seen: dict[bytes, tuple[int, int]] = {}
    for d, t in enumerate(docs):
        mine: dict[bytes, tuple[int, int]] = {}
        dups, src_of = [], {}
        for p, w in windows(t, L):
            if w in seen:
                dups.append(p)
                src_of[p] = seen[w]
            elif w in mine:
                dups.append(p)
                src_of[p] = mine[w]
            else:
                mine[w] = (d, p)
        spans = [(a, b, *src_of[a]) for a, b in runs(dups, L)]
        removed = sum(b - a for a, b, _, _ in spans)
        dropped = len(t) > 0 and removed / len(t) > drop
        if not dropped:
            for w, at in mine.items():
                seen.setdefault(w, at)
        result.append((spans, removed, dropped))
    return result


def char_cut(text: str, byte_spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """The text with each byte span, shrunk inward to whole characters, cut out; and the
    character spans that were cut."""
    data = text.encode("utf-8")
    # byte offset -> code point offset, for offsets on character boundaries
    starts = {}
    at = 0
    for i, ch in enumerate(text):
        starts[at] = i
        at += len(ch.encode("utf-8"))
    starts[at] = len(text)

    def boundary(x: int) -> bool:
        return x == len(data) or (data[x] & 0xC0) != 0x80

    char_spans = []
    for a, b in byte_spans:
        while a < b and not boundary(a):
            a += 1
        while b > a and not boundary(b):
            b -= 1
        char_spans.append((starts[a], starts[b]))
    out, at = [], 0
    for a, b in char_spans:
        out.append(text[at:a])
        at = max(at, b)
    out.append(text[at:])
    return "".join(out), char_spans
