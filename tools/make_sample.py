"""Writes sadedup/data/sample.jsonl.gz: a small synthetic web-like corpus with the kinds of
duplication sadedup removes (exact copies, near copies, shared boilerplate, quoted passages).

Deterministic (seeded); run `python tools/make_sample.py` to regenerate.
"""
from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

WORDS = ("the of and to in is was for on that with as by at from his her it an were are which this be "
         "or has had not but have they their one all been also its new first after who two more would "
         "other when time there into can out only about over some most these people than many may year "
         "city world river music school history later state during water between under team season "
         "government family building village station north south east west small large early modern "
         "public research energy market garden museum bridge island language century church market "
         "winter summer festival library forest valley mountain harbour railway council program report "
         "system design science nature village ancient famous local national record journey letter").split()
BOILER = [
    "Subscribe to our newsletter to get the latest stories, exclusive offers and updates delivered "
    "straight to your inbox every week. You can unsubscribe at any time.",
    "This website uses cookies to improve your experience. By continuing to browse the site you agree "
    "to our use of cookies and our privacy policy.",
    "Copyright © 2024 Example Media Group. All rights reserved. Reproduction in whole or in part without "
    "permission is prohibited.",
]
UNICODE = ["Café déjà vu — naïve résumé.", "東京の天気は晴れです。", "Ünïcödé ✓ 🚀 emoji."]


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(3, 7)))


def main() -> None:
    rng = random.Random(2026)
    docs: list[str] = []
    for i in range(1200):
        parts = [paragraph(rng) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.3:
            parts.insert(0, rng.choice(BOILER))
        if rng.random() < 0.3:
            parts.append(rng.choice(BOILER))
        if rng.random() < 0.1:
            parts.append(rng.choice(UNICODE))
        if docs and rng.random() < 0.08:
            parts.append(rng.choice(docs)[:400])  # a quoted passage of an earlier document
        docs.append("\n\n".join(parts))
    rows = []
    for i, d in enumerate(docs):
        rows.append({"id": f"doc-{i:05d}", "text": d, "url": f"https://example.org/{i}"})
        if rng.random() < 0.05:  # exact copy elsewhere on the web
            rows.append({"id": f"doc-{i:05d}-copy", "text": d, "url": f"https://mirror.example.net/{i}"})
        if rng.random() < 0.05:  # near copy: a few words changed
            w = d.split(" ")
            for _ in range(max(1, len(w) // 100)):
                w[rng.randrange(len(w))] = rng.choice(WORDS)
            rows.append({"id": f"doc-{i:05d}-near", "text": " ".join(w), "url": f"https://near.example.com/{i}"})
    out = Path(__file__).resolve().parent.parent / "sadedup" / "data" / "sample.jsonl.gz"
    with gzip.GzipFile(out, "wb", mtime=0) as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False).encode() + b"\n")
    print(f"{out}: {len(rows)} rows")


if __name__ == "__main__":
    main()
