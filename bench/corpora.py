"""Benchmark corpora made on the spot (no downloads): web-like JSONL with heavy boilerplate.

    python bench/corpora.py --size 10MB -o /tmp/web10.jsonl
    python bench/corpora.py --size 60MB --seed 7 -o /tmp/web60.jsonl
    python bench/corpora.py --size 64MB --kind repeated -o /tmp/rep.jsonl   # adversarial
    python bench/corpora.py --size 64MB --kind runs -o /tmp/runs.jsonl      # adversarial

`--size` counts the UTF-8 bytes of the documents' text (what a byte-level dedup tool sees),
not the JSONL file, which is a little larger (JSON escapes, ids, urls).

Kinds:

- ``web`` (default): pages of a few hundred simulated sites. It reuses the vocabulary,
  sentence/paragraph makers, boilerplate and Unicode snippets of ``tools/make_sample.py`` (the
  generator of the bundled sample corpus) and adds what a real crawl has at scale: per-site
  headers, navigation menus and footers (long, repeated on every page of the site), shared
  cookie/newsletter/licence boilerplate, short shared sign-offs, greetings and "powered by"
  last lines (shorter than a 100-byte window, at the very start or end of a page: the
  document-boundary case of bench/compare_lee.py), quoted
  passages of recent pages, exact and near copies, passages repeated inside a page, tables,
  multi-byte UTF-8 text (CJK, Cyrillic, Greek, accented Latin, emoji: duplicate spans start
  and end inside characters), and empty or very short pages.
- ``repeated``: a web corpus of size/``--repeat`` written ``--repeat`` times over (the whole
  corpus is a duplicate of itself: longest suffix comparisons for the tools that compare
  whole suffixes).
- ``runs``: web pages interleaved with long runs of one character (``=`` lines, spaces,
  ``a`` runs, ``東`` runs), the other adversarial case.

Real text from this machine's files (no downloads; `--kind real` / `--kind crawl`):

    python bench/corpora.py --size 60MB --kind real -o /tmp/real60.jsonl
    python bench/corpora.py --size 60MB --kind crawl --seed 0 -o /tmp/crawl60.jsonl
    python bench/corpora.py --kind real --sources man --size 30MB -o /tmp/man.jsonl

- ``real``: the machine's changelogs (every ``changelog*`` under /usr/share/doc, ``.gz``
  decompressed), manual pages (every page under /usr/share/man, decompressed; troff taken as
  text) and licence texts (``/usr/share/doc/*/copyright`` and /usr/share/common-licenses),
  one document per file (a file over 64 KB is cut at line ends into documents of at most
  64 KB), in an order shuffled by the seed. Its duplication is the text's own: changelogs
  shipped by several binary packages of one source, licences quoted in copyright files,
  manual pages in several languages sharing their troff markup. ``--sources`` picks a subset
  (``changelogs,man,licenses``). A size larger than the files hold is refused.
- ``crawl``: pages made of the same real text, duplicated as a raw web crawl is (C4's raw
  crawl lost 70% of its text to line deduplication alone): a few hundred "sites" whose every
  page carries the site's header and footer (real passages), a body of fresh passages (the
  ``real`` stream, cut at line ends into passages of 150 to 3,000 bytes, read once in order and
  started again when used up), passages re-used across the corpus with Zipf-like weights
  (licences, common changelog lines), quotes of recent pages, and exact (mirrors) and near
  copies of recent pages. About 90% of its bytes are removed with ``keep="none"`` at L = 100
  bytes (bench/RESULTS.md has the measured share).

Both are deterministic for a given seed, size and set of files: the files are listed sorted
by path (symbolic links followed once, each file read once) and shuffled by the seed. Another
machine with other packages installed gets other text; the corpus digest printed to stderr
(sha256 of the file list and sizes) tells whether two machines' corpora can match.

Deterministic for a given seed and size. Memory stays small: only a ring of recent pages is
kept (for quotes and copies).
"""
from __future__ import annotations

import argparse
import bz2
import gzip
import hashlib
import lzma
import os
import importlib.util
import json
import random
import re
import sys
from collections import deque
from pathlib import Path
from typing import Iterator

_REPO = Path(__file__).resolve().parent.parent


def _load_make_sample():
    spec = importlib.util.spec_from_file_location("_sadedup_make_sample", _REPO / "tools" / "make_sample.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_ms = _load_make_sample()
WORDS: list[str] = list(_ms.WORDS)
BOILER: list[str] = list(_ms.BOILER)
UNICODE: list[str] = list(_ms.UNICODE)
sentence = _ms.sentence
paragraph = _ms.paragraph

# --- extensions ---------------------------------------------------------------------------

MORE_BOILER = [
    "Terms of Service | Privacy Policy | Cookie Settings | Accessibility | Contact Us | Careers | "
    "Advertise with us | Sitemap",
    "This article is licensed under the Creative Commons Attribution-ShareAlike 4.0 International "
    "License. You are free to share and adapt the material for any purpose, even commercially, "
    "provided you give appropriate credit.",
    "Disclaimer: The information provided on this site is for general informational purposes only. "
    "All information is provided in good faith, however we make no representation or warranty of "
    "any kind regarding its accuracy, adequacy, validity, reliability or completeness.",
    "We and our partners use technologies such as cookies to store and access device information. "
    "Consent to these technologies will allow us to process data such as browsing behaviour.",
    "Diese Website verwendet Cookies. Wenn Sie die Website weiter nutzen, gehen wir von Ihrem "
    "Einverständnis aus. Mehr Informationen finden Sie in unserer Datenschutzerklärung.",
    "本サイトではサービス向上のためにクッキーを使用しています。引き続き閲覧することで、クッキーの使用に同意したものとみなされます。",
    "Все права защищены. Использование материалов сайта разрешено только с указанием активной ссылки на источник.",
]
# Shorter than a 100-byte window: only the tool whose windows run across a document's end sees
# them repeated (they are what the document-boundary exclusion of bench/compare_lee.py is about).
SIGN_OFFS = ["Thanks for reading!", "— The Editors", "Share this: Facebook · X · Email",
             "Comments are closed.", "Read more »", "Спасибо за внимание!", "以上です。", "🚀 Stay tuned."]
# Shared last lines just under a 100-byte window (92-99 UTF-8 bytes), after site-specific text:
# the pages' last inside windows differ, only a window running into the separator can match.
_TRAILER_BASE = ("Powered by WordPress · Theme: Twenty Twenty-One by the WordPress team · Hosted with ❤ by "
                 "ExampleHost · RSS feed · Log in")


def _trailer(n: int) -> str:
    return _TRAILER_BASE.encode("utf-8")[:n].decode("utf-8", "ignore")


TRAILERS = [_trailer(n) for n in range(92, 100)]
GREETINGS = ["Home » News » ", "Breaking: ", "Updated ", "Skip to content\n", "Menu\n", "Главная → "]

CJK = ("的一是不了人我在有他这为之大来以个中上们到说时地也子就道而要于出会可下年生自"
       "東京大阪天気晴雨雪山川海空花鳥風月春夏秋冬日本語文字学校先生学生電車駅")
KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん"
CYRILLIC = ("город река музыка школа история время народ страна мир год работа жизнь "
            "вода земля война власть закон право наука язык").split()
GREEK = "πόλη ποταμός μουσική σχολείο ιστορία χρόνος λαός χώρα κόσμος νερό γη επιστήμη".split()
ACCENTED = "café naïve résumé façade jalapeño smörgåsbord crème brûlée déjà-vu Zürich São Paulo Łódź".split()
EMOJI = ["🚀", "✓", "😀", "🎉", "👍🏽", "🇯🇵", "❤️", "©", "™", "…"]

TLDS = ["com", "org", "net", "de", "jp", "ru", "io", "co.uk"]
SECTIONS = ["News", "Sport", "Business", "Culture", "Science", "Travel", "Opinion", "Video", "Weather",
            "Music", "Tech", "Health", "Food", "Local", "World"]


def cjk_sentence(rng: random.Random) -> str:
    n = rng.randint(12, 40)
    chars = [rng.choice(CJK if rng.random() < 0.6 else KANA) for _ in range(n)]
    return "".join(chars) + "。"


def cyrillic_sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(CYRILLIC) for _ in range(rng.randint(6, 16))).capitalize() + "."


def greek_sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(GREEK) for _ in range(rng.randint(6, 14))).capitalize() + "."


def mixed_sentence(rng: random.Random) -> str:
    w = [rng.choice(WORDS if rng.random() < 0.8 else ACCENTED) for _ in range(rng.randint(6, 18))]
    if rng.random() < 0.3:
        w.insert(rng.randrange(len(w) + 1), rng.choice(EMOJI))
    return " ".join(w).capitalize() + "."


def body_paragraph(rng: random.Random, lang: str) -> str:
    r = rng.random()
    if lang == "ja":
        return "".join(cjk_sentence(rng) for _ in range(rng.randint(2, 6)))
    if lang == "ru":
        return " ".join(cyrillic_sentence(rng) for _ in range(rng.randint(2, 6)))
    if lang == "el":
        return " ".join(greek_sentence(rng) for _ in range(rng.randint(2, 5)))
    if r < 0.25:
        return " ".join(mixed_sentence(rng) for _ in range(rng.randint(3, 7)))
    return paragraph(rng)


class Site:
    def __init__(self, rng: random.Random, i: int) -> None:
        self.name = "".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 4))).capitalize()
        self.domain = f"{self.name.lower()}{i}.{rng.choice(TLDS)}"
        self.lang = rng.choices(["en", "ja", "ru", "el"], [0.75, 0.1, 0.1, 0.05])[0]
        nav = rng.sample(SECTIONS, rng.randint(5, 10))
        self.header = (f"{self.name} — {rng.choice(['Daily', 'Online', 'Times', 'Herald', 'Journal', 'Blog'])}\n"
                       + " | ".join(nav) + f" | Search {self.domain}")
        footer = [f"© {rng.randint(1998, 2025)} {self.name} Media. All rights reserved.",
                  " · ".join(rng.sample(SECTIONS, 4)) + " · About " + self.name + " · Contact"]
        if rng.random() < 0.6:
            footer.append(rng.choice(BOILER + MORE_BOILER))
        if self.lang == "ja":
            footer.append("利用規約 | プライバシーポリシー | お問い合わせ | " + self.name + "について")
        self.footer = "\n".join(footer)
        self.banner = rng.choice(BOILER + MORE_BOILER) if rng.random() < 0.4 else None
        self.sign_off = rng.choice(SIGN_OFFS) if rng.random() < 0.5 else None
        self.greeting = rng.choice(GREETINGS) if rng.random() < 0.3 else None
        self.trailer = rng.choice(TRAILERS) if not self.sign_off and rng.random() < 0.3 else None
        self.weight = rng.paretovariate(1.2)   # a few big sites, many small ones


def table(rng: random.Random) -> str:
    cols = rng.randint(2, 5)
    rows = ["| " + " | ".join(rng.choice(SECTIONS) for _ in range(cols)) + " |", "|" + " --- |" * cols]
    for _ in range(rng.randint(2, 12)):
        rows.append("| " + " | ".join(str(rng.randint(0, 999)) for _ in range(cols)) + " |")
    return "\n".join(rows)


def near_copy(rng: random.Random, text: str) -> str:
    w = text.split(" ")
    for _ in range(max(1, len(w) // 80)):
        w[rng.randrange(len(w))] = rng.choice(WORDS)
    return " ".join(w)


def web_docs(rng: random.Random, n_sites: int = 400, ring: int = 3000) -> Iterator[str]:
    """An endless stream of web-like pages."""
    sites = [Site(rng, i) for i in range(n_sites)]
    weights = [s.weight for s in sites]
    recent: deque[str] = deque(maxlen=ring)
    while True:
        r = rng.random()
        if recent and r < 0.04:                     # exact copy (mirror, syndication)
            doc = rng.choice(recent)
        elif recent and r < 0.07:                   # near copy
            doc = near_copy(rng, rng.choice(recent))
        elif r < 0.09:                              # empty or very short page
            doc = rng.choice(["", " ", "\n", "404 Not Found", rng.choice(SIGN_OFFS), rng.choice(EMOJI)])
        else:
            site = rng.choices(sites, weights)[0]
            parts: list[str] = []
            if site.banner and rng.random() < 0.7:
                parts.append(site.banner)
            parts.append(site.header)
            parts.append(f"{rng.choice(SECTIONS)} · {rng.randint(1, 28)} {rng.choice(['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun'])} "
                         f"{rng.randint(2015, 2025)} · {rng.randint(2, 14)} min read")
            for _ in range(rng.choices([1, 2, 3, 5, 8, 14], [3, 4, 4, 3, 2, 1])[0]):
                parts.append(body_paragraph(rng, site.lang))
                x = rng.random()
                if x < 0.05:
                    parts.append(table(rng))
                elif x < 0.09:
                    parts.append(rng.choice(UNICODE))
                elif x < 0.11 and parts:            # passage repeated inside the page
                    parts.append(rng.choice(parts))
            if recent and rng.random() < 0.15:      # quote a recent page
                src = rng.choice(recent)
                if src:
                    a = rng.randrange(len(src))
                    parts.insert(rng.randint(2, len(parts)), "“" + src[a:a + rng.randint(40, 700)] + "”")
            if rng.random() < 0.1:
                parts.append(rng.choice(BOILER + MORE_BOILER))
            if rng.random() < 0.85:
                parts.append(site.footer)
            doc = "\n\n".join(parts)
            if site.greeting and rng.random() < 0.8:
                doc = site.greeting + doc
            if site.sign_off and rng.random() < 0.8:
                doc = doc + "\n" + site.sign_off
            elif site.trailer and rng.random() < 0.8:
                doc = doc + f"\nPosted by {rng.choice(['admin', 'editor', 'guest', 'staff'])}{rng.randint(1, 99)}\n" + site.trailer
            elif rng.random() < 0.05:                 # a page cut mid-sentence
                doc = doc[: rng.randint(0, len(doc))]
        recent.append(doc)
        yield doc


def run_docs(rng: random.Random) -> Iterator[str]:
    """Web pages with long runs of one character between them."""
    web = web_docs(rng)
    while True:
        if rng.random() < 0.3:
            ch = rng.choice(["=", " ", "a", "東", "-", "\n", "🚀"])
            yield ch * rng.randint(200, 20000)
        else:
            d = next(web)
            if d and rng.random() < 0.2:
                d = d + "\n" + "=" * rng.randint(100, 5000) + "\n" + d[: len(d) // 2]
            yield d


# --- real text from this machine's files -----------------------------------------------------

SOURCES = ("changelogs", "man", "licenses")
MAX_DOC = 64 << 10   # a file longer than this is cut at line ends (upstream ChangeLogs run to MBs)


def machine_files(sources: tuple[str, ...] = SOURCES) -> list[tuple[str, Path]]:
    """(source, path) of every file the real kinds read, sorted by path; a file reached
    through several links is listed once (by its resolved path)."""
    found: dict[str, tuple[str, Path]] = {}

    def add(src: str, p: Path) -> None:
        try:
            if not p.is_file():
                return
            r = str(p.resolve())
        except OSError:
            return
        found.setdefault(r, (src, Path(r)))

    doc = Path("/usr/share/doc")
    if "changelogs" in sources and doc.is_dir():
        for p in doc.rglob("*"):
            if p.name.lower().startswith("changelog"):
                add("changelogs", p)
    if "man" in sources and Path("/usr/share/man").is_dir():
        for p in Path("/usr/share/man").rglob("*"):
            add("man", p)
    if "licenses" in sources:
        if doc.is_dir():
            for p in doc.glob("*/copyright"):
                add("licenses", p)
        if Path("/usr/share/common-licenses").is_dir():
            for p in Path("/usr/share/common-licenses").rglob("*"):
                add("licenses", p)
    return sorted(found.values(), key=lambda sp: str(sp[1]))


def files_digest(files: list[tuple[str, Path]]) -> str:
    h = hashlib.sha256()
    for src, p in files:
        try:
            size = p.stat().st_size
        except OSError:
            size = -1
        h.update(f"{src}\0{p}\0{size}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:16]


def read_text(path: Path) -> str:
    """A file's text: decompressed by its suffix, UTF-8 or else Latin-1 (old changelogs),
    NUL bytes dropped (a document is text; the Lee comparison needs none)."""
    data = path.read_bytes()
    try:
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        elif path.suffix == ".bz2":
            data = bz2.decompress(data)
        elif path.suffix in (".xz", ".lzma"):
            data = lzma.decompress(data)
    except (OSError, EOFError, lzma.LZMAError, ValueError):
        return ""   # damaged or not what its name says: no text
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.replace("\x00", "")


def cut_lines(text: str, limit: int) -> list[str]:
    """text cut at line ends into pieces of at most `limit` UTF-8 bytes (a longer line is cut
    at a character boundary), in order; joined they are the text."""
    out: list[str] = []
    cur: list[str] = []
    n = 0
    for line in text.splitlines(keepends=True):
        b = len(line.encode("utf-8"))
        while b > limit:            # a line longer than the limit on its own
            if cur:
                out.append("".join(cur))
                cur, n = [], 0
            head = line.encode("utf-8")[:limit].decode("utf-8", "ignore") or line[:1]
            out.append(head)
            line = line[len(head):]
            b = len(line.encode("utf-8"))
        if cur and n + b > limit:
            out.append("".join(cur))
            cur, n = [], 0
        cur.append(line)
        n += b
    if cur:
        out.append("".join(cur))
    return out


def real_docs(rng: random.Random, sources: tuple[str, ...] = SOURCES,
              files: list[tuple[str, Path]] | None = None) -> Iterator[str]:
    """The machine's files as documents, in an order shuffled by rng; ends when they do."""
    files = list(machine_files(sources) if files is None else files)
    rng.shuffle(files)
    for _, path in files:
        try:
            text = read_text(path)
        except OSError:
            continue
        if not text:
            continue
        if len(text) <= MAX_DOC // 4 or len(text.encode("utf-8")) <= MAX_DOC:
            yield text
        else:
            yield from cut_lines(text, MAX_DOC)


def _passages(rng: random.Random, files: list[tuple[str, Path]]) -> Iterator[str]:
    """Real text cut at line ends into passages of 150 to 3,000 bytes, the files in a
    shuffled order, started again (in a new order) when they are used up."""
    while True:
        any_text = False
        for doc in real_docs(rng, files=files):
            lines = doc.splitlines(keepends=True)
            i = 0
            while i < len(lines):
                target = int(rng.paretovariate(1.5) * 150)
                target = min(target, 3000)
                cur, n = [], 0
                while i < len(lines) and n < target:
                    cur.append(lines[i])
                    n += len(lines[i])
                    i += 1
                p = "".join(cur)
                if p.strip():
                    any_text = True
                    yield p
        if not any_text:
            raise ValueError("no readable text in the machine's files")


class RealSite:
    """A site of the crawl kind: its header and footer are real passages, on every page."""

    def __init__(self, rng: random.Random, fresh: Iterator[str], licences: list[str]) -> None:
        self.header = next(fresh)[:rng.randint(200, 800)]
        self.footer = rng.choice(licences)[:rng.randint(300, 1500)] if licences else next(fresh)
        self.weight = rng.paretovariate(1.2)
        self.has_footer = rng.random() < 0.9


def crawl_docs(rng: random.Random, sources: tuple[str, ...] = SOURCES, n_sites: int = 300,
               ring: int = 5000) -> Iterator[str]:
    """An endless stream of pages made of real text, duplicated as a raw crawl is (see the
    module docstring). Only a ring of recent pages and a pool of popular passages are kept."""
    files = machine_files(sources)
    fresh = _passages(rng, files)
    lic_files = [f for f in files if f[0] == "licenses"]
    licences = [t for t in (read_text(p) for _, p in rng.sample(lic_files, min(len(lic_files), 200))) if t.strip()]
    sites = [RealSite(rng, fresh, licences) for _ in range(n_sites)]
    weights = [s.weight for s in sites]
    popular = [next(fresh) for _ in range(3000)] + [t[:rng.randint(200, 4000)] for t in licences]
    pop_w = [1.0 / (i + 1) ** 1.1 for i in range(len(popular))]
    recent: deque[str] = deque(maxlen=ring)
    while True:
        r = rng.random()
        if recent and r < 0.18:                      # exact copy (mirror, syndication, reprint)
            doc = rng.choice(recent)
        elif recent and r < 0.26:                    # near copy: a few lines changed or dropped
            lines = rng.choice(recent).splitlines(keepends=True)
            for _ in range(max(1, len(lines) // 40)):
                if lines:
                    j = rng.randrange(len(lines))
                    lines[j] = next(fresh).splitlines(keepends=True)[0] if rng.random() < 0.5 else ""
            doc = "".join(lines)
        else:
            site = rng.choices(sites, weights)[0]
            parts = [site.header]
            for _ in range(rng.choices([1, 2, 3, 5, 8], [3, 4, 3, 2, 1])[0]):
                x = rng.random()
                if x < 0.45:
                    parts.append(next(fresh))
                elif x < 0.85:
                    parts.append(rng.choices(popular, pop_w)[0])
                elif recent:
                    src = rng.choice(recent)
                    a = rng.randrange(len(src)) if src else 0
                    parts.append(src[a:a + rng.randint(100, 2000)])
            if site.has_footer:
                parts.append(site.footer)
            doc = "\n".join(parts)
        recent.append(doc)
        yield doc


def _sized(docs: Iterator[str], size: int) -> Iterator[str]:
    total = 0
    for d in docs:
        if total >= size:
            return
        total += len(d.encode("utf-8"))
        yield d


KINDS = ("web", "repeated", "runs", "real", "crawl")


def generate(size: int, kind: str = "web", seed: int = 0, repeat: int = 4,
             sources: tuple[str, ...] = SOURCES) -> Iterator[str]:
    """Yields the documents of a corpus of about `size` text bytes."""
    rng = random.Random(seed)
    if kind == "real":
        total = 0
        for d in real_docs(rng, sources):
            if total >= size:
                return
            total += len(d.encode("utf-8"))
            yield d
        if total < size:
            raise ValueError(f"the machine's {'+'.join(sources)} files hold {total} bytes of text, less than "
                             f"the {size} asked for: ask for less, or use --kind crawl")
    elif kind == "crawl":
        yield from _sized(crawl_docs(rng, sources), size)
    elif kind == "web":
        yield from _sized(web_docs(rng), size)
    elif kind == "runs":
        yield from _sized(run_docs(rng), size)
    elif kind == "repeated":
        one = list(_sized(web_docs(rng), max(1, size // repeat)))
        for _ in range(repeat):
            yield from one
    else:
        raise ValueError(f"unknown kind {kind!r}")


def write_jsonl(path: Path, docs: Iterator[str]) -> tuple[int, int]:
    """Writes rows {"id", "text", "url"}; returns (rows, text bytes)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    n = nbytes = 0
    with opener(path, "wt", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"id": f"doc-{n:08d}", "text": d, "url": f"https://example.org/p/{n}"},
                               ensure_ascii=False) + "\n")
            n += 1
            nbytes += len(d.encode("utf-8"))
    return n, nbytes


def parse_size(s: str) -> int:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMG]?)i?B?\s*", s, re.I)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {s!r} (e.g. 10MB, 512KB, 1GB)")
    mult = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}[m.group(2).upper()]
    return int(float(m.group(1)) * mult)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=parse_size, default=parse_size("10MB"),
                    help="text bytes to generate (10MB, 60MB, 1GB; decimal units)")
    ap.add_argument("--kind", choices=KINDS, default="web")
    ap.add_argument("--sources", default=",".join(SOURCES),
                    help="for --kind real / crawl: which of the machine's files (changelogs,man,licenses)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=4, help="copies of the corpus for --kind repeated")
    ap.add_argument("-o", "--output", type=Path, required=True, help=".jsonl or .jsonl.gz")
    a = ap.parse_args(argv)
    sources = tuple(x.strip() for x in a.sources.split(",") if x.strip())
    bad = [x for x in sources if x not in SOURCES]
    if bad:
        ap.error(f"--sources: unknown {', '.join(bad)} (choose from {', '.join(SOURCES)})")
    try:
        n, nbytes = write_jsonl(a.output, generate(a.size, a.kind, a.seed, a.repeat, sources))
    except ValueError as e:
        a.output.unlink(missing_ok=True)
        ap.exit(2, f"corpora.py: error: {e}\n")
    extra = f"; files digest {files_digest(machine_files(sources))} ({'+'.join(sources)})" \
        if a.kind in ("real", "crawl") else ""
    print(f"{a.output}: {n} documents, {nbytes} text bytes{extra}", file=sys.stderr)


if __name__ == "__main__":
    main()
