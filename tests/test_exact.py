"""Exact stage and text normalization: groups of equal normalized text, keep rules, records."""
from __future__ import annotations

import random
import unicodedata

import numpy as np
import pytest
from helpers import db_rows, read_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st
from nearcopies import write_jsonl

from sadedup import pipeline
from sadedup.normalize import normalize, normalized_texts, prepare

WHITESPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]
PIECES = ["a", "A", "b", "Z", "é", "e\u0301", "É", "İ", "ß", "東", "🚀", ".", "\u200b", *WHITESPACE]


def run(tmp_path, docs, *sets, name="w", scores=None):
    inp = tmp_path / f"{name}.jsonl"
    if not inp.exists():
        write_jsonl(inp, docs, scores)
    w = tmp_path / name
    pipeline.run([inp], tmp_path / f"{name}-out.jsonl", w, None, ["stages=exact", *sets], executor="inline")
    return w


def groups(w):
    """kept doc -> sorted members, from the database"""
    out: dict[int, list[int]] = {}
    for c, k, d, s in db_rows(w, "SELECT c.cluster_id, c.kept_doc_id, m.doc_id, m.similarity FROM clusters c "
                                 "JOIN cluster_members m USING (cluster_id) WHERE c.method = 'exact' ORDER BY m.doc_id"):
        assert s is None
        out.setdefault(k, []).append(d)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=25).map("".join), min_size=1, max_size=6),
       st.booleans())
def test_native_normalization_is_the_reference(docs, lower):
    enc = [d.encode() for d in docs]
    offs = np.concatenate([[0], np.cumsum([len(e) for e in enc])]).astype(np.int64)
    texts = np.frombuffer(b"".join(enc), dtype=np.uint8)
    buf, o = normalized_texts(prepare(texts, offs, np.arange(len(docs)), lower), lower)
    got = [bytes(buf[o[i]:o[i + 1]]).decode() for i in range(len(docs))]
    assert got == [normalize(d, lower) for d in docs]


def test_normalization_definition():
    assert normalize("  Hello\u00a0\u3000 wORLD \n") == "Hello wORLD"
    assert normalize("  Hello\u00a0\u3000 wORLD \n", True) == "hello world"
    assert normalize("e\u0301") == "é" == unicodedata.normalize("NFC", "e\u0301")
    assert normalize("a\u200bb") == "a\u200bb"      # zero-width space is not whitespace
    assert normalize("") == normalize(" \t\n") == ""


def test_groups_of_equal_normalized_text(tmp_path):
    docs = ["Hello  world", "hello world", "Hello world\n", " Hello\tworld ", "Café", "Cafe\u0301", "Hello world!",
            "", "   ", "other"]
    w = run(tmp_path, docs)
    assert groups(w) == {0: [0, 2, 3], 4: [4, 5], 7: [7, 8]}
    assert db_rows(w, "SELECT doc_id FROM documents WHERE reason = 'exact_duplicate' ORDER BY doc_id") == \
        [(2,), (3,), (5,), (8,)]
    assert [r["id"] for r in read_jsonl(tmp_path / "w-out.jsonl")] == ["d0", "d1", "d4", "d6", "d7", "d9"]
    w = run(tmp_path, docs, "exact.lowercase=true", name="w")
    assert groups(w) == {0: [0, 1, 2, 3], 4: [4, 5], 7: [7, 8]}
    assert db_rows(w, "SELECT count(*) FROM documents WHERE reason = 'exact_duplicate'") == [(5,)]


@pytest.mark.parametrize("rule, scores, kept", [
    ("first", None, 1),
    ("longest", None, 3),
    ("shortest", None, 1),
    ("column:score", [0, 2, 5, 9, 1], 3),
    ("column:score", [0, 2, None, 2, 2], 1),
])
def test_keep_rules(tmp_path, rule, scores, kept):
    docs = ["x", "a b", "a  b", "a   b", "a \n b"]
    w = run(tmp_path, docs, f"exact.keep={rule}", scores=scores)
    assert groups(w) == {kept: [1, 2, 3, 4]}
    assert db_rows(w, "SELECT keep_rule, size FROM clusters") == [(rule, 4)]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["a b", "A b", " a  b", "b a", "é", "e\u0301", "", " ", "x\u2003y", "x y"]),
                max_size=12), st.booleans())
def test_against_brute_force(tmp_path_factory, docs, lower):
    tmp = tmp_path_factory.mktemp("bf")
    w = run(tmp, docs, f"exact.lowercase={str(lower).lower()}")
    want: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        want.setdefault(normalize(d, lower), []).append(i)
    assert groups(w) == {m[0]: m for m in want.values() if len(m) > 1}


def test_cli_exact(cli, tmp_path):
    rng = random.Random(1)
    words = ["alpha", "beta", "Gamma", "delta"]
    base = [" ".join(rng.choice(words) for _ in range(20)) for _ in range(30)]
    docs = base + [b.upper() for b in base[:10]] + [b.replace(" ", "  ") for b in base[10:20]]
    inp = write_jsonl(tmp_path / "in.jsonl", docs)
    p = cli("run", "--input", inp, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w",
            "--set", "stages=exact", "--set", "exact.lowercase=true", "--workers", "1")  # no pool to start
    assert "exact:" in p.stderr
    assert db_rows(tmp_path / "w", "SELECT count(*) FROM documents WHERE reason = 'exact_duplicate'") == [(20,)]
    assert len(read_jsonl(tmp_path / "out.jsonl")) == 30


@pytest.mark.parametrize("setting", ["exact.keep=column:score", "minhash.keep=column:score"])
def test_a_column_keep_rule_on_a_corpus_without_copies_keeps_everything(cli, tmp_path, setting):
    """No group to keep from: the column is not read, and no rank is asked of it (both
    stages raised 'internal error: ValueError: keep rule column:NAME needs the column's
    values' on a corpus with nothing to drop)."""
    inp = tmp_path / "a.jsonl"
    inp.write_text('{"id": "1", "text": "alpha beta gamma", "score": 3}\n'
                   '{"id": "2", "text": "delta epsilon zeta", "score": 5}\n')
    out = tmp_path / "o.jsonl"
    cli("run", "-q", "--input", inp, "--output", out, "--workdir", tmp_path / "w", "--set", setting,
        "--set", "stages=exact,minhash")
    assert out.read_text() == inp.read_text()
