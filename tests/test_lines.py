"""The lines stage against a brute-force reference written here, on real files and the real
database: both keep rules, multi-byte text, CRLF, a last line without a newline, the drop
rule and its cascade, and the same decisions for any chunking and any number of workers."""
from __future__ import annotations

import contextlib
import json
import random
import re
import tempfile
import unicodedata
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from corpus import write_jsonl
from helpers import db_rows, read_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sadedup
from sadedup import ConfigError, native, pipeline
from sadedup.stages import lines as lines_stage

# ---- the reference: the contract, line by line, in plain Python


def line_bounds(text: str) -> list[tuple[int, int]]:
    """[start, end) code points of every line, the end past its '\\n'."""
    out, a = [], 0
    while a < len(text):
        b = text.find("\n", a)
        b = len(text) if b < 0 else b + 1
        out.append((a, b))
        a = b
    return out


def key(line: str) -> str:
    return unicodedata.normalize("NFC", (line[:-1] if line.endswith("\n") else line).strip())


def over(cut: int, total: int, fraction: float) -> bool:
    return total > 0 and cut / total > fraction


def merge(removed: list[tuple]) -> list[tuple]:
    """Removed lines (start, end, src doc, src start, src end), in order, as spans: adjacent
    lines whose sources are adjacent lines of one document are one span."""
    spans: list[list] = []
    for a, b, sd, sa, sb in removed:
        if spans and spans[-1][1] == a and spans[-1][2] == sd and spans[-1][4] == sa:
            spans[-1][1], spans[-1][4] = b, sb
        else:
            spans.append([a, b, sd, sa, sb])
    return [tuple(s) for s in spans]


def reference(docs: list[str], order: list[int], keep: str, min_docs, drop: float) -> dict[int, tuple]:
    """Per doc_id: (its spans, dropped). `order` is document order; min_docs per doc_id."""
    out: dict[int, tuple] = {}
    if keep == "first":
        seen: dict[str, tuple] = {}
        for d in order:
            own: dict[str, tuple] = {}
            removed = []
            for a, b in line_bounds(docs[d]):
                k = key(docs[d][a:b])
                if not k:
                    continue
                src = seen.get(k) or own.get(k)
                if src:
                    removed.append((a, b, *src))
                else:
                    own[k] = (d, a, b)
            dropped = over(sum(b - a for a, b, *_ in removed), len(docs[d]), drop)
            if not dropped:  # a dropped document's lines count for no later one
                seen.update(own)
            out[d] = (merge(removed), dropped)
        return out
    occurrences: dict[str, list[tuple]] = {}
    for d in order:
        for a, b in line_bounds(docs[d]):
            k = key(docs[d][a:b])
            if k:
                occurrences.setdefault(k, []).append((d, a, b))
    for d in order:
        removed = []
        for a, b in line_bounds(docs[d]):
            k = key(docs[d][a:b])
            occ = occurrences.get(k, [])
            if k and len({o[0] for o in occ}) >= min_docs[d]:
                src = next(o for o in occ if o[0] != d)  # the first occurrence in another document
                removed.append((a, b, *src))
        out[d] = (merge(removed), over(sum(b - a for a, b, *_ in removed), len(docs[d]), drop))
    return out


def cut_text(text: str, spans: list[tuple]) -> str:
    keep, at = [], 0
    for a, b, *_ in spans:
        keep.append(text[at:a])
        at = b
    return "".join(keep) + text[at:]


# ---- corpora: a small pool of lines, so keys repeat, with the characters keys must handle

POOL = ["Home | About", "home | about", "  Home | About\t", "Home | About\r", "Copyright 2024", "Copyright 2024 ",
        "Café", "Cafe\u0301", "\u00a0Café\u2003", "Å", "A\u030a", "\u212b", "日本語のテキスト", "日本語のテキスト\u3000",
        "Привет, мир", "a\u200bb", "\x1cx\x1f", "\u2002“quoted” — dash…\u2002", "\u2000x", "", " ", "\t\r", "\u3000",
        "\u2028", "🚀 launch", "x", "y"]


def random_doc(rng: random.Random) -> str:
    lines = [rng.choice(POOL) if rng.random() < 0.75 else f"unique {rng.random():.6f} é"
             for _ in range(rng.randint(0, 7))]
    ends = [rng.choice(["\n", "\r\n", "\n"]) for _ in lines]
    text = "".join(a + e for a, e in zip(lines, ends))
    if text and rng.random() < 0.4:
        text = text.rstrip("\n")  # a last line without its newline
    return text


def corpus(rng: random.Random, n: int) -> list[str]:
    docs: list[str] = []
    for _ in range(n):
        r = rng.random()
        if docs and r < 0.15:
            docs.append(rng.choice(docs))               # a whole copy: dropped by the rule
        elif docs and r < 0.3:
            docs.append(rng.choice(docs) + random_doc(rng))  # a copy and more
        else:
            docs.append(random_doc(rng))
    return docs


# ---- running the stage


def run_lines(tmp: Path, docs: list[str], keep: str = "first", min_docs: int = 2, drop: float = 0.8,
              executor: str = "inline", workers: int = 1, extra: tuple[str, ...] = ()) -> Path:
    inp = write_jsonl(tmp / "in.jsonl", docs)
    work = tmp / "work"
    sets = ["stages=lines", f"lines.keep={keep}", f"lines.min_docs={min_docs}", f"lines.drop_fraction={drop}", *extra]
    pipeline.run([inp], tmp / "out.jsonl", work, overrides=sets, executor=executor, workers=workers)
    return work


def check(tmp: Path, docs: list[str], keep: str, min_docs: int, drop: float) -> None:
    work = tmp / "work"
    ref = reference(docs, list(range(len(docs))), keep, [min_docs] * len(docs), drop)
    got: dict[int, list] = {}
    for r in db_rows(work, "SELECT doc_id, char_start, char_end, src_doc_id, src_char_start, src_char_end, method, "
                           "tok_start FROM spans ORDER BY doc_id, char_start"):
        assert r[6:] == ("lines", None)
        got.setdefault(r[0], []).append(r[1:6])
    status = dict(db_rows(work, "SELECT doc_id, status || ':' || coalesce(reason, '') FROM documents"))
    expected_out = []
    for d, (spans, dropped) in ref.items():
        assert got.get(d, []) == spans, f"doc {d} {docs[d]!r}: spans differ"
        assert status[d] == ("dropped:line_coverage" if dropped else "kept:"), f"doc {d}"
        if not dropped:
            expected_out.append((f"d{d}", cut_text(docs[d], spans)))
    assert [(r["id"], r["text"]) for r in read_jsonl(tmp / "out.jsonl")] == expected_out
    detail = json.loads(db_rows(work, "SELECT detail FROM stages WHERE stage = 'lines' AND shard = -1")[0][0])
    assert detail["removed_chars"] == sum(b - a for d, (sp, dr) in ref.items() if not dr for a, b, *_ in sp)


def small_chunks(chunk: int = 300, part: int = 64):
    """Chunks of a few documents and many count partitions: every cross-chunk path taken."""
    return mock.patch.multiple(lines_stage, CHUNK_BYTES=chunk, MIN_CHUNK_BYTES=64, PART_BYTES=part)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), keep=st.sampled_from(["first", "none"]),
       min_docs=st.integers(2, 4), drop=st.one_of(st.sampled_from([0.8, 1.0, 0.5]), st.floats(0.01, 1.0)),
       tiny=st.booleans())
def test_matches_reference(seed, n, keep, min_docs, drop, tiny):
    docs = corpus(random.Random(seed), n)
    with tempfile.TemporaryDirectory() as t:
        if tiny:
            with small_chunks():
                run_lines(Path(t), docs, keep, min_docs, drop)
        else:
            run_lines(Path(t), docs, keep, min_docs, drop)
        check(Path(t), docs, keep, min_docs, drop)


def test_cascade_a_dropped_document_is_never_the_kept_copy(tmp_path):
    # doc 1 copies doc 0 and is dropped; its own new line then counts as unseen, so doc 2
    # keeps it; doc 3 repeats doc 2's line and loses it to doc 2, not to doc 1
    docs = ["alpha\nbeta\ngamma\n", "alpha\nbeta\ngamma\nonly in one\n", "only in one\ntail\n", "only in one\n"]
    run_lines(tmp_path, docs, "first", drop=0.5)
    check(tmp_path, docs, "first", 2, 0.5)
    assert [r[0] for r in db_rows(tmp_path / "work", "SELECT status FROM documents ORDER BY doc_id")] == \
        ["kept", "dropped", "kept", "dropped"]
    assert db_rows(tmp_path / "work", "SELECT doc_id, src_doc_id FROM spans WHERE doc_id >= 2") == [(3, 2)]


def test_crlf_multibyte_and_a_last_line_without_newline(tmp_path):
    docs = ["Grüße aus Köln\r\nZeile zwei\r\nCafe\u0301 ☕", "  Grüße aus Köln  \nCafé ☕"]
    run_lines(tmp_path, docs, "first", drop=1.0)
    check(tmp_path, docs, "first", 2, 1.0)
    # both lines of doc 1 go (the last one has no newline), sourced at doc 0's lines, and
    # they make two spans: their sources are not adjacent lines
    assert db_rows(tmp_path / "work", "SELECT char_start, char_end, src_char_start, src_char_end FROM spans") == \
        [(0, 19, 0, 16), (19, 25, 28, 35)]
    assert read_jsonl(tmp_path / "out.jsonl")[1]["text"] == ""


def test_a_copied_block_is_one_span_beside_the_block(tmp_path):
    block = "Subscribe to our newsletter\nPrivacy policy\nTerms of use\n"
    docs = ["Article one.\n" + block, "Article two is longer.\n" + block + "end\n"]
    run_lines(tmp_path, docs, "first")
    check(tmp_path, docs, "first", 2, 0.8)
    assert db_rows(tmp_path / "work", "SELECT doc_id, char_start, char_end, src_doc_id, src_char_start, "
                                      "src_char_end FROM spans") == [(1, 23, 23 + len(block), 0, 13, 13 + len(block))]


def test_keep_none_strikes_every_copy_at_min_docs(tmp_path):
    nav = "Home | News | Sport"
    docs = [f"{nav}\nstory {i}\n" for i in range(3)] + ["only twice\nx\n", "only twice\ny\n"]
    run_lines(tmp_path, docs, "none", min_docs=3, drop=1.0)
    check(tmp_path, docs, "none", 3, 1.0)
    rows = db_rows(tmp_path / "work", "SELECT doc_id, src_doc_id, src_char_start FROM spans ORDER BY doc_id")
    # the first document's source is the first occurrence in a second document
    assert rows == [(0, 1, 0), (1, 0, 0), (2, 0, 0)]
    # the Python API runs the stage too, with the same names as the command
    detail = sadedup.lines(tmp_path / "work", {"lines.keep": "first"}, quiet=True)
    assert (detail["keep"], detail["removed_lines"], detail["spans"]) == ("first", 3, 3)


def test_any_chunking_and_workers_decide_the_same(tmp_path):
    rng = random.Random(5)
    docs = corpus(rng, 150)
    dumps = []
    # one chunk; ~30 chunks and 256 partitions; a few chunks on a pool of two workers
    for name, sizes, executor, workers in (("one", None, "inline", 1), ("tiny", (600, 256), "inline", 1),
                                           ("pool", (2000, 2000), "local", 2)):
        tmp = tmp_path / name
        tmp.mkdir()
        with small_chunks(*sizes) if sizes else contextlib.nullcontext():
            work = run_lines(tmp, docs, "first", drop=0.5, executor=executor, workers=workers)
        detail = json.loads(db_rows(work, "SELECT detail FROM stages WHERE stage = 'lines' AND shard = -1")[0][0])
        least = {"one": (1, 1), "tiny": (10, 32), "pool": (3, 2)}[name]
        assert detail["chunks"] >= least[0] and detail["partitions"] >= least[1]
        assert name != "one" or (detail["chunks"], detail["partitions"]) == (1, 1)
        dumps.append((db_rows(work, "SELECT * FROM spans ORDER BY span_id"),
                      db_rows(work, "SELECT doc_id, status, reason FROM documents ORDER BY doc_id"),
                      (tmp / "out.jsonl").read_bytes()))
    assert dumps[0] == dumps[1] == dumps[2]
    check(tmp_path / "pool", docs, "first", 2, 0.5)


def test_dask_decides_as_inline(tmp_path):
    """Every task of the stage on a Dask cluster (bound to 127.0.0.1): the same spans and output."""
    distributed = pytest.importorskip("distributed")
    docs = corpus(random.Random(8), 120)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=":0", silence_logs=40)
    try:
        dumps = []
        for name, executor, extra in (("dask", "dask", (f"run.scheduler={cluster.scheduler_address}",)),
                                      ("inline", "inline", ())):
            tmp = tmp_path / name
            tmp.mkdir()
            with small_chunks(2000, 2000):
                work = run_lines(tmp, docs, "none", drop=0.5, executor=executor, workers=2, extra=extra)
            dumps.append((db_rows(work, "SELECT * FROM spans ORDER BY span_id"),
                          db_rows(work, "SELECT doc_id, status, reason FROM documents ORDER BY doc_id"),
                          (tmp / "out.jsonl").read_bytes()))
    finally:
        cluster.close()
    assert dumps[0] == dumps[1]
    check(tmp_path / "dask", docs, "none", 2, 0.5)


# ---- the kernels: keys the C side makes equal the contract's


def safe_ranges() -> list[tuple[int, int]]:
    """native/lines.c's SAFE_RANGES, read from its source."""
    src = (Path(__file__).resolve().parent.parent / "native" / "lines.c").read_text()
    table = src[src.index("SAFE_RANGES[][2] = {"):]
    table = table[:table.index("};")]
    return [(int(a, 16), int(b, 16)) for a, b in re.findall(r"\{(0x[0-9A-F]+), (0x[0-9A-F]+)\}", table)]


def test_safe_characters_are_left_alone_by_nfc():
    """native/lines.c keys lines of these characters itself: NFC must leave every one alone
    whatever surrounds it (assigned, so its properties are stable; no decomposition; combining
    class 0; never the second character of a canonical or a Hangul composition)."""
    ranges = safe_ranges()
    assert len(ranges) > 10 and ranges == sorted(ranges) and ranges[0] == (0x80, 0x2FF)
    seconds = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))  # Hangul V and T jamo
    for c in range(0x110000):
        d = unicodedata.decomposition(chr(c))
        if d and not d.startswith("<") and len(d.split()) == 2:
            seconds.add(int(d.split()[1], 16))
    for lo, hi in ranges:
        for c in range(lo, hi + 1):
            ch = chr(c)
            assert unicodedata.category(ch) != "Cn", hex(c)
            assert unicodedata.normalize("NFC", ch) == ch and unicodedata.combining(ch) == 0, hex(c)
            assert c not in seconds, hex(c)


line_text = st.text(st.one_of(st.sampled_from(list(" \t\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2002\u200a"
                                                    "\u2028\u2029\u202f\u205f\u3000")),
                              st.sampled_from(list("aZ09.éÅ\u0301\u030a\u212b“”—…ø東🚀\u2064\u2070\u2074\u2065"
                                                   "жй\u0483\u0488→∑─■。「\u302a\u3099がカ한\u1161\u11a8ｱﾞ\uffbf"))),
                    max_size=12)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(line_text, max_size=6), last_newline=st.booleans())
def test_scan_keys_equal_the_contract(lines, last_newline):
    text = "\n".join(lines) + ("\n" if last_newline and lines else "")
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    h, line, _ = lines_stage.line_keys(data, np.array([0]), np.array([len(data)]), 7)
    want = [(a, b, key(text[a:b])) for a, b in line_bounds(text) if key(text[a:b])]
    assert [tuple(r) for r in line.tolist()] == [(7, a, b) for a, b, _ in want]
    keys = "\n".join(k for _, _, k in want).encode("utf-8")
    if want:
        assert h.tolist() == native.hash_pieces(keys, len(want))[0].tolist()


# ---- the command line, on real files


def test_cli_stage_explain_status_and_errors(cli, tmp_path):
    a = tmp_path / "a.jsonl"
    write_jsonl(a, ["Menu\nFirst story.\nFooter line\n", "Menu\nSecond story.\nFooter line\n", "Menu\nFooter line"])
    work, out = tmp_path / "work", tmp_path / "out.jsonl"
    cli("run", "--input", a, "--output", out, "--workdir", work, "--set", "stages=lines")
    assert [r["text"] for r in read_jsonl(out)] == ["Menu\nFirst story.\nFooter line\n", "Second story.\n"]
    exp = cli("explain", work, "d1").stdout
    # a text shown as Python writes it: a newline is \n, as a carriage return is \r (it was \\n,
    # escaped twice, beside a \r escaped once)
    assert "(lines)" in exp and "'Menu\\n'" in exp and "duplicates document 0" in exp
    d = json.loads(cli("lines", work, "--set", "lines.keep=none", "--format", "json").stdout)
    assert (d["keep"], d["spans"], d["cut"], d["dropped"], d["removed_lines"]) == ("none", 6, 2, 1, 6)
    st_ = json.loads(cli("status", work, "--format", "json").stdout)
    assert {"stage": "lines", "state": "done", "why": None} in st_["stages"]
    assert [s["stage"] for s in st_["stages"] if s["state"] != "done"] == ["export"]  # stale: lines changed
    with pytest.raises(ConfigError, match=r"^workflow key lines.keep: must be first or none, not 'last'$"):
        pipeline.run_stage("lines", work, ["lines.keep=last"])
    with pytest.raises(ConfigError, match=r"unknown workflow key 'lines.min_lines'"):
        pipeline.run_stage("lines", work, ["lines.min_lines=3"])


def test_lines_then_substring_cut_the_union(tmp_path):
    """A later span stage decides on what lines left and the output is cut by both."""
    passage = "a passage repeated inside one line of text, long enough"
    docs = [f"Menu\nintro {passage} one\n", f"Menu\nother words of this document alone, {passage} two\n"]
    inp = write_jsonl(tmp_path / "in.jsonl", docs)
    pipeline.run([inp], tmp_path / "out.jsonl", tmp_path / "w",
                 overrides=["stages=lines,substring", "substring.min_length=30"], executor="inline", workers=1)
    methods = db_rows(tmp_path / "w", "SELECT method, doc_id FROM spans ORDER BY span_id")
    assert methods[0] == ("lines", 1) and ("substring", 1) in methods
    text = read_jsonl(tmp_path / "out.jsonl")[1]["text"]
    assert "Menu" not in text and passage not in text and text.startswith("other words")


@pytest.mark.parametrize("text", ["", "\n\n", "   \n\t\n"])
def test_documents_without_a_key_are_untouched(tmp_path, text):
    run_lines(tmp_path, [text, text, "x\nx\n"], "first", drop=1.0)
    check(tmp_path, [text, text, "x\nx\n"], "first", 2, 1.0)
