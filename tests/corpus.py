"""Test corpora made in the tests: random documents with planted duplication."""
from __future__ import annotations

import json
import random
from pathlib import Path

ALPHABET = list("abcde ") + ["é", "東", "🚀", "\n"]


def random_text(rng: random.Random, n: int, alphabet=ALPHABET) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def planted_corpus(rng: random.Random, n_docs: int, max_len: int = 120) -> list[str]:
    """Documents with whole copies, quoted passages of earlier ones, internal repeats,
    empty and short documents."""
    docs: list[str] = []
    for _ in range(n_docs):
        r = rng.random()
        if docs and r < 0.15:
            docs.append(rng.choice(docs))                       # whole copy
        elif r < 0.22:
            docs.append(rng.choice(["", " ", "é", "ab"]))       # empty or short
        else:
            t = random_text(rng, rng.randint(0, max_len))
            if docs and rng.random() < 0.6:                       # quote an earlier document
                src = rng.choice(docs)
                a = rng.randint(0, len(src))
                b = rng.randint(a, len(src))
                cut = rng.randint(0, len(t))
                t = t[:cut] + src[a:b] + t[cut:]
            if t and rng.random() < 0.2:                          # repeat inside the document
                a = rng.randint(0, len(t))
                t = t + t[a:] + t[a:]
            docs.append(t)
    return docs


def write_jsonl(path: Path, docs: list[str], extra: bool = True) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i, d in enumerate(docs):
            row = {"id": f"d{i}", "text": d}
            if extra:
                row["meta"] = {"n": i, "tags": ["x", str(i % 3)]}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path
