"""Real-looking documents with planted near-copies at known word-substitution rates.

Documents are English-like prose: a Zipf-distributed vocabulary (common English words at the
top, made-up content words below), sentences of 6-28 words with capitals, commas and full
stops, paragraphs. A near-copy replaces each word of its original, independently with
probability `rate`, by a random vocabulary word. The truth is the exact Jaccard of the
word-5-gram sets (words of the normalized, lower-cased text, as sadedup.normalize.words gives
them), computed here in plain Python.

    python tests/nearcopies.py --size 100MB -o corpus.jsonl   # the benchmark corpus (+ .truth.json)
"""
from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sadedup.normalize import words as norm_words

RATES = (0.005, 0.02, 0.05, 0.10, 0.20)

COMMON = """the of and to a in is that for it as was with be by on not he i this are or his from at
which but have an they you were her she there one all we their has been would more if will when
who so no can out up into its do than other some them these time only new may first also any
after our most over such even made many must where well back through years much before between
people state because world day each work three under last never while own same another public
however being life country government city still war here during right long great since
against four both house old law say school part high upon small number course home water found
place little system without general later power family group among several five end early
within take information company history every known always local half others national business
whole program given second across although week children often social support began became
around market further development once line members right major service area side until
against body human hand community important morning report council village garden church
century island season mountain design village research project council science music news
""".split()

SYLLABLES = ("ba be bi bo bu ca co cu da de di do du fa fe fi fo ga ge go ha he hi ho ka ke ki ko la le li lo "
             "lu ma me mi mo mu na ne ni no nu pa pe pi po ra re ri ro ru sa se si so su ta te ti to tu va ve "
             "vi vo za ze zo tra tre tri pro pre str ian ent ion ard ell ost und orn ash").split()


def vocabulary(size: int = 30000, seed: int = 7) -> list[str]:
    """COMMON first, then made-up words of 2-4 syllables, all distinct."""
    rng = random.Random(seed)
    seen = set(COMMON)
    vocab = list(dict.fromkeys(COMMON))
    while len(vocab) < size:
        w = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 2, 3, 3, 3, 4))))
        if w not in seen:
            seen.add(w)
            vocab.append(w)
    return vocab


VOCAB = vocabulary()


class Writer:
    """English-like text from the Zipf vocabulary, fast (numpy draws, one join per document)."""

    def __init__(self, seed: int = 0, vocab: list[str] = VOCAB, zipf: float = 1.05) -> None:
        self.rng = np.random.default_rng(seed)
        self.vocab = np.array(vocab, dtype=object)
        w = 1.0 / np.arange(1, len(vocab) + 1) ** zipf
        self.cum = np.cumsum(w / w.sum())
        self.cap = np.array([v[:1].upper() + v[1:] for v in vocab], dtype=object)

    def draw(self, n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(self.cum, self.rng.random(n)), len(self.cum) - 1)

    def document(self, n_words: int) -> str:
        idx = self.draw(n_words)
        out = self.vocab[idx].copy()
        # sentences of 6-28 words: a capital first, a full stop last, sometimes a comma
        lens = self.rng.integers(6, 29, size=n_words // 6 + 2)
        ends = np.cumsum(lens)
        ends = ends[ends < n_words]
        starts = np.concatenate(([0], ends))
        out[starts] = self.cap[idx[starts]]
        last = np.concatenate((ends - 1, [n_words - 1]))
        out[last] = out[last] + "."
        commas = np.flatnonzero(self.rng.random(n_words) < 0.04)
        commas = commas[~np.isin(commas, last)]
        out[commas] = out[commas] + ","
        # paragraphs of 3-6 sentences
        seps = np.full(n_words, " ", dtype=object)
        para = last[self.rng.integers(0, 4, size=len(last)) == 0]
        seps[para] = "\n\n"
        seps[-1] = ""
        parts = np.empty(2 * n_words, dtype=object)
        parts[0::2] = out
        parts[1::2] = seps
        return "".join(parts.tolist())

    def near_copy(self, text: str, rate: float) -> str:
        """Each whitespace-separated word replaced with probability `rate` by a random word."""
        toks = text.split(" ")
        hit = np.flatnonzero(self.rng.random(len(toks)) < rate)
        if len(hit):
            new = self.rng.integers(0, len(self.vocab), size=len(hit))
            for k, v in zip(hit.tolist(), new.tolist()):
                t = toks[k]
                # keep the paragraph breaks inside a token ("end.\n\nNext")
                tail = t[t.index("\n"):] if "\n" in t else ""
                toks[k] = self.vocab[v] + tail
        return " ".join(toks)


def shingles(text: str, n: int = 5) -> set[tuple[str, ...]]:
    w = norm_words(text, True)
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


def jaccard(a: str | set, b: str | set, n: int = 5) -> float:
    sa = a if isinstance(a, set) else shingles(a, n)
    sb = b if isinstance(b, set) else shingles(b, n)
    if not sa and not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


@dataclass
class Planted:
    docs: list[str]
    # (original doc index, copy doc index, rate, exact word-5-gram Jaccard)
    pairs: list[tuple[int, int, float, float]] = field(default_factory=list)


def planted_corpus(seed: int, n_base: int, copied: float = 0.5, rates=RATES, words=(80, 600),
                   shuffle: bool = True, extras: bool = True) -> Planted:
    """`n_base` originals; a share `copied` of them gets one near-copy at every rate. With
    `extras`: a few exact copies, near-empty and short (< 5 words) documents. Shuffled unless
    told otherwise, so an original need not come before its copies."""
    w = Writer(seed)
    rng = random.Random(seed)
    items: list[tuple[str, int, float]] = []  # text, base id, rate (0: original)
    for b in range(n_base):
        text = w.document(rng.randint(*words))
        items.append((text, b, 0.0))
        if rng.random() < copied:
            for r in rates:
                items.append((w.near_copy(text, r), b, r))
    if extras:
        for _ in range(max(1, n_base // 20)):
            items.append((rng.choice(items)[0], -1, -1.0))           # exact copies
        for t in ("", "   ", "Hello.", "Too short to shingle", "one two three four"):
            items.append((t, -1, -1.0))
    order = list(range(len(items)))
    if shuffle:
        rng.shuffle(order)
    docs = [items[i][0] for i in order]
    where: dict[int, int] = {}
    copies: list[tuple[int, int, float]] = []
    for pos, i in enumerate(order):
        _, b, r = items[i]
        if b >= 0 and r == 0.0:
            where[b] = pos
        elif b >= 0:
            copies.append((b, pos, r))
    sets = {}
    pairs = []
    for b, pos, r in copies:
        o = where[b]
        for x in (o, pos):
            if x not in sets:
                sets[x] = shingles(docs[x])
        pairs.append((o, pos, r, jaccard(sets[o], sets[pos])))
    return Planted(docs, pairs)


def evaluate(docs: list[str], pairs, cluster_of: dict[int, int], kept_of: dict[int, int],
             recall_at: float = 0.85, precision_at: float = 0.7) -> dict:
    """Recall: share of planted pairs with Jaccard >= recall_at whose two documents are in one
    cluster (`cluster_of`: doc -> cluster label). Precision: share of dropped documents
    (`kept_of`: dropped doc -> the document kept for its cluster) with Jaccard >= precision_at
    with their kept document."""
    due = [(a, b) for a, b, _, j in pairs if j >= recall_at]
    found = sum(1 for a, b in due if a in cluster_of and cluster_of.get(a) == cluster_of.get(b))
    good = sum(1 for d, k in kept_of.items() if jaccard(docs[d], docs[k]) >= precision_at)
    return {"pairs": len(due), "found": found, "recall": found / len(due) if due else 1.0,
            "dropped": len(kept_of), "precise": good, "precision": good / len(kept_of) if kept_of else 1.0}


def write_jsonl(path: Path, docs: list[str], scores: list[float] | None = None) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            row = {"id": f"d{i}", "text": d}
            if scores is not None:
                row["score"] = scores[i]
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def _size(s: str) -> int:
    s = s.upper()
    for u, m in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if s.endswith(u):
            return int(float(s[:-2]) * m)
    return int(s)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="100MB", help="text bytes to write, about")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    target = _size(a.size)
    # about 650 words of 5.6 bytes a document; a third of the originals get copies at every rate
    n_base = max(10, int(target / (5.6 * 650 * (1 + len(RATES) / 3))))
    p = planted_corpus(a.seed, n_base, copied=1 / 3, words=(100, 1200), extras=True)
    out = Path(a.output)
    write_jsonl(out, p.docs)
    truth = {"pairs": p.pairs, "documents": len(p.docs), "bytes": sum(len(d.encode()) for d in p.docs)}
    Path(str(out) + ".truth.json").write_text(json.dumps(truth))
    print(f"{out}: {len(p.docs)} documents, {truth['bytes'] / 1e6:.1f} MB of text, {len(p.pairs)} planted pairs")


if __name__ == "__main__":
    main()
