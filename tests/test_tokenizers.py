"""Subword tokenizers end to end: ids, uint32 vocabularies, exact character cuts."""
from __future__ import annotations

import json
import random
import tempfile
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from corpus import write_jsonl
from helpers import db_rows, read_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import reference
from tokenizer_fixtures import (hf_byte_bpe, hf_normalizing, hf_wordlevel_big, sp_model, encode_with_library,
                                TRAIN_TEXT)

from sadedup import pipeline

KINDS = ["hf_byte_bpe", "hf_normalizing", "sp_unigram", "sp_bpe"]


@pytest.fixture(scope="module")
def tokenizer_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("tok")
    return {
        "hf_byte_bpe": f"hf:{hf_byte_bpe(d / 'bpe.json')}",
        "hf_normalizing": f"hf:{hf_normalizing(d / 'norm.json')}",
        "sp_unigram": f"sp:{sp_model(d / 'uni.model', 'unigram')}",
        "sp_bpe": f"sp:{sp_model(d / 'bpe.model', 'bpe')}",
        "hf_wordlevel_big": f"hf:{hf_wordlevel_big(d / 'big.json')}",
    }


PIECES = [
    "東京は日本の首都です。", "🚀🔥👍🏽", "🇫🇷", "e\u0301", "é", "a\u0308o\u0303", "ﬁ", "Ⅻ", "ＡＢＣ", "שלום",
    "مرحبا", "   ", "\t\t", "\n\n", "The quick brown fox", " lazy DOG ", "averyveryverylongwordwithoutspaces",
    "Über café", " naïve ", "x", ".",
]


def make_docs(rng: random.Random, n: int) -> list[str]:
    docs: list[str] = []
    for _ in range(n):
        t = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        if docs and rng.random() < 0.5:
            src = rng.choice(docs)
            a = rng.randint(0, len(src))
            b = rng.randint(a, len(src))
            cut = rng.randint(0, len(t))
            t = t[:cut] + src[a:b] + t[cut:]
        if rng.random() < 0.1 and docs:
            t = rng.choice(docs)
        docs.append(t)
    return docs


def run(tmp: Path, docs: list[str], spec: str, L: int, keep: str = "first", drop: float = 0.8,
        shard: int = 0) -> Path:
    inp = tmp / "in.jsonl"
    if not inp.exists():
        write_jsonl(inp, docs)
    pipeline.run([inp], tmp / "out.jsonl", tmp / "work",
                 overrides=["stages=substring", f"substring.tokenizer={spec}", f"substring.min_length={L}",
                            f"substring.keep={keep}", f"substring.drop_fraction={drop}",
                            f"substring.shard_tokens={shard or 'auto'}"], executor="inline")
    return tmp / "work"


def check(tmp: Path, docs: list[str], spec: str, L: int, keep: str, drop: float) -> None:
    work = tmp / "work"
    lib = encode_with_library(spec, docs)
    ref = reference([tuple(ids) for ids, _ in lib], L, keep, drop)
    spans: dict[int, list[tuple]] = {}
    for r in db_rows(work, "SELECT doc_id, tok_start, tok_end, src_doc_id, src_tok_start, char_start, char_end "
                           "FROM spans ORDER BY doc_id, tok_start"):
        spans.setdefault(r[0], []).append(r[1:])
    status = dict(db_rows(work, "SELECT doc_id, status FROM documents"))
    expected = []
    for d, (want, removed, dropped) in enumerate(ref):
        got = spans.get(d, [])
        assert [g[:4] for g in got] == want, f"doc {d}: token spans differ from the reference"
        offsets = lib[d][1]
        for ts, te, _, _, cs, ce in got:
            # every cut character lies inside the extent of the removed tokens ...
            assert cs >= min(o[0] for o in offsets[ts:te]) or cs == ce
            assert ce <= max(o[1] for o in offsets[ts:te]) or cs == ce
            # ... and no kept token covers it (an empty cut covers nothing)
            for i, (a, b) in enumerate(offsets):
                if not ts <= i < te and cs < ce:
                    assert b <= cs or a >= ce or a == b, f"doc {d}: kept token {i} {a, b} overlaps cut {cs, ce}"
        assert status[d] == ("dropped" if dropped else "kept")
        if not dropped:
            text, at, pieces = docs[d], 0, []
            for *_, cs, ce in got:
                pieces.append(text[at:cs])
                at = max(at, ce)
            pieces.append(text[at:])
            expected.append("".join(pieces))
    assert [r["text"] for r in read_jsonl(tmp / "out.jsonl")] == expected


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_without_duplicates(kind, tokenizer_files, tmp_path):
    docs = [p + f" unique{i}" for i, p in enumerate(PIECES)] + [unicodedata.normalize("NFD", "Ñandú café")]
    run(tmp_path, docs, tokenizer_files[kind], L=50)
    assert [r["text"] for r in read_jsonl(tmp_path / "out.jsonl")] == docs
    assert db_rows(tmp_path / "work", "SELECT count(*) FROM spans")[0][0] == 0


@pytest.mark.parametrize("kind", KINDS)
def test_planted_duplicates(kind, tokenizer_files, tmp_path):
    docs = make_docs(random.Random(5), 40)
    run(tmp_path, docs, tokenizer_files[kind], L=4, shard=60)
    check(tmp_path, docs, tokenizer_files[kind], 4, "first", 0.8)
    assert db_rows(tmp_path / "work", "SELECT count(*) FROM spans")[0][0] > 5


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(KINDS), L=st.integers(1, 8),
       keep=st.sampled_from(["first", "none"]), drop=st.sampled_from([0.5, 0.8, 1.0]), shard=st.integers(0, 200))
def test_property_against_reference(tokenizer_files, seed, kind, L, keep, drop, shard):
    docs = make_docs(random.Random(seed), 25)
    with tempfile.TemporaryDirectory() as t:
        run(Path(t), docs, tokenizer_files[kind], L, keep, drop, shard)
        check(Path(t), docs, tokenizer_files[kind], L, keep, drop)


def test_uint32_vocabulary_end_to_end(tokenizer_files, tmp_path):
    spec = tokenizer_files["hf_wordlevel_big"]
    rng = random.Random(1)
    high = " ".join(f"w{rng.randint(65_600, 70_099)}" for _ in range(30))
    docs = [" ".join(f"w{rng.randint(1, 70_099)}" for _ in range(40)) + " " + high for _ in range(10)]
    docs.append("w5 w6 " + high + " w7")
    work = run(tmp_path, docs, spec, L=20, shard=200)
    shards = sorted((work / "substring").glob("*/shard_*"))
    assert len(shards) > 1
    tokens = [np.load(s / "tokens.npy") for s in shards]
    assert all(t.dtype == np.uint32 for t in tokens) and max(int(t.max()) for t in tokens) > 65_535
    check(tmp_path, docs, spec, 20, "first", 0.8)
    # the duplicated windows are made of ids above 65,535
    assert db_rows(work, "SELECT count(*) FROM spans")[0][0] >= 10


@pytest.mark.parametrize("spec", ["train:bpe:300", "train:unigram:700"])
def test_trained_tokenizer_is_saved_and_recorded(spec, tmp_path):
    docs = TRAIN_TEXT[:7] * 3 + make_docs(random.Random(2), 20)
    work = run(tmp_path, docs, spec, L=6)
    model = db_rows(work, "SELECT tokenizer FROM runs ORDER BY run_id DESC LIMIT 1")[0][0]
    assert model and (work / model).is_file()
    check(tmp_path, docs, f"{'hf' if model.endswith('.json') else 'sp'}:{work / model}", 6, "first", 0.8)
    # a rerun reuses the trained model and every artifact
    before = (work / model).stat().st_mtime_ns
    run(tmp_path, docs, spec, L=6)
    assert (work / model).stat().st_mtime_ns == before


def test_default_min_length_for_subword(tokenizer_files, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", ["a b c"])
    pipeline.run([inp], tmp_path / "out.jsonl", tmp_path / "w",
                 overrides=["stages=substring", f"substring.tokenizer={tokenizer_files['hf_byte_bpe']}"],
                 executor="inline")
    assert json.loads(db_rows(tmp_path / "w", "SELECT detail FROM stages WHERE stage = 'repeats' AND shard = -1")[0][0])["L"] == 50


def test_missing_tokenizer_file_is_refused_before_work(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", ["x"])
    for spec, msg in (("hf:/nope/tokenizer.json", "no such file /nope/tokenizer.json"),
                      ("sp:/nope/m.model", "no such file /nope/m.model"),
                      ("train:bpe:10", "at least 260 entries"), ("word", "expected bytes, hf:PATH")):
        p = cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", "--set",
                "stages=substring", "--set", f"substring.tokenizer={spec}", check=False)
        assert p.returncode != 0 and msg in p.stderr and "Traceback" not in p.stderr, p.stderr
        assert not (tmp_path / "w" / "ingest").exists()
    bad = tmp_path / "bad.json"
    bad.write_text("{not a tokenizer")
    p = cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", "--set",
            "stages=substring", "--set", f"substring.tokenizer=hf:{bad}", check=False)
    assert p.returncode != 0 and "cannot load Hugging Face tokenizer" in p.stderr
