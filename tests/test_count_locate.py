"""count, locate and index against Python's own search over the documents' texts.

An occurrence is a start position where TEXT's tokens occur consecutively inside one
document: for the bytes tokenizer that is `str.startswith` at every character (overlapping
ones count), for a subword tokenizer a run of the library's own ids. Never across documents,
so a string that only exists where one document ends and the next begins counts 0, also
when the two documents sit in different shards.
"""
from __future__ import annotations

import fcntl
import json
import os
import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
from corpus import write_jsonl
from helpers import db_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizer_fixtures import encode_with_library, hf_byte_bpe, hf_wordlevel_big, sp_model

import sadedup
from sadedup import SadedupError

QUIET = {"quiet": True}


def occurrences(docs: dict[int, str], text: str) -> list[tuple[int, int, int]]:
    """(doc_id, char_start, char_end) of every overlapping occurrence, in document order."""
    return [(d, i, i + len(text)) for d, t in sorted(docs.items()) for i in range(len(t)) if t.startswith(text, i)]


def token_occurrences(docs: dict[int, str], text: str, spec: str) -> list[tuple[int, int, int]]:
    """The same at token level, with the library's ids and offsets; a match's characters are
    those all of whose tokens are in it (the extent shrunk past characters a token outside
    also covers), as spans are."""
    ids = {d: e for d, e in zip(sorted(docs), encode_with_library(spec, [docs[d] for d in sorted(docs)]))}
    pattern = encode_with_library(spec, [text])[0][0]
    m = len(pattern)
    out = []
    for d, (tokens, offs) in sorted(ids.items()):
        for i in range(len(tokens) - m + 1):
            if tokens[i:i + m] == pattern:
                a = max([offs[i][0]] + [e for _, e in offs[:i]])
                b = min([offs[i + m - 1][1]] + [s for s, _ in offs[i + m:]])
                out.append((d, a, max(a, b)))
    return out


def located(res: dict) -> list[tuple[int, int, int]]:
    return [(o["doc_id"], o["char_start"], o["char_end"]) for o in res["occurrences"]]


def queries(rng: random.Random, docs: list[str], n: int) -> list[str]:
    """Substrings of the documents, strings made of one document's end and the next one's
    start (which occur across their boundary), and random strings."""
    out = []
    texts = [d for d in docs if d]
    for _ in range(n):
        r = rng.random()
        if texts and r < 0.5:
            t = rng.choice(texts)
            a = rng.randrange(len(t))
            out.append(t[a:rng.randint(a + 1, len(t))])
        elif len(docs) > 1 and r < 0.8:
            i = rng.randrange(len(docs) - 1)
            left, right = docs[i], docs[i + 1]
            out.append(left[len(left) - rng.randint(0, len(left)):] + right[:rng.randint(0, len(right))] or "a")
        else:
            out.append("".join(rng.choice("abé東 \n") for _ in range(rng.randint(1, 4))))
    return out


def make_folder(tmp: Path, docs: list[str], sets: list[str]) -> Path:
    """A work folder whose substring stage has tokenized `docs` (and built, with the prefilter
    off), made in this process: the command line is exercised by the queries."""
    inp = write_jsonl(tmp / "in.jsonl", docs)
    work = tmp / "work"
    sadedup.ingest(inp, work, overrides=["stages=substring", "substring.min_length=4", "run.workers=1",
                                         "run.executor=inline", *sets], **QUIET)
    if "stages=exact,substring" in sets:
        sadedup.exact(work, **QUIET)
    sadedup.tokenize(work, **QUIET)
    if "substring.prefilter=false" in sets:
        sadedup.build(work, **QUIET)
    return work


# ---- the property: the API against brute force, bytes, any shard size, with and without the prefilter

doc_text = st.lists(st.sampled_from(["a", "b", "ab", "é", "東", "🚀", " ", "\n"]), max_size=12).map("".join)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=st.lists(doc_text, min_size=1, max_size=8), shard=st.integers(1, 40), prefilter=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_bytes_match_python_search(docs, shard, prefilter, seed):
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as t:
        work = make_folder(Path(t), docs, [f"substring.shard_tokens={shard}",
                                           f"substring.prefilter={str(prefilter).lower()}"])
        by_id = dict(enumerate(docs))
        assert sadedup.count(work, docs[0] or "a", **QUIET) == len(occurrences(by_id, docs[0] or "a"))
        occ = sadedup.Occurrences(work)  # one opening for many queries
        for q in queries(rng, docs, 30):
            want = occurrences(by_id, q)
            assert occ.count(q) == len(want), q
            res = occ.locate(q, limit=0)
            assert res["count"] == len(want) and located(res) == want, q
            assert all(o["ext_id"] == f"d{o['doc_id']}" for o in res["occurrences"])
            if want:  # the first of them, in document order
                assert located(occ.locate(q, limit=1)) == want[:1]
        # the full-text arrays: the build stage's without the prefilter, else made once
        assert (Path(work) / db_rows(work, "SELECT artifact FROM stages WHERE stage = 'tokenize' AND shard = 0")[0][0]
                ).parent.joinpath("index").exists() == prefilter


# ---- the real command line on a real corpus

def test_cli_count_locate_index_prefiltered(cli, tmp_path):
    docs = ["the cat sat on the mat", "the cat sat on the mat",  # d1: an exact copy, dropped before tokenize
            "naïve café 東京 the cat", "xyzzy-left", "right-qqq", "", "🚀🚀🚀", "aaaa", "mat", "hat on the mat"]
    work = make_folder(tmp_path, docs, ["stages=exact,substring", "substring.shard_tokens=24"])
    shards = json.loads(db_rows(work, "SELECT detail FROM stages WHERE stage = 'tokenize' AND shard = -1")[0][0])
    assert shards["shards"] > 2
    survivors = {d: t for d, t in enumerate(docs) if d != 1}

    p = cli("count", work, "the cat")
    assert p.stdout == "2\n"
    assert "building full-text ones once" in p.stderr and "sadedup index" in p.stderr
    p = cli("locate", work, "🚀🚀", "--format", "json")
    assert "building" not in p.stderr
    assert json.loads(p.stdout) == {"count": 2, "occurrences": [
        {"doc_id": 6, "ext_id": "d6", "char_start": 0, "char_end": 2},
        {"doc_id": 6, "ext_id": "d6", "char_start": 1, "char_end": 3}]}
    p = cli("locate", work, "the", "-n", "2")
    lines = p.stdout.splitlines()
    assert lines[0] == f"{len(occurrences(survivors, 'the'))} occurrences of 'the'; the first 2:" and len(lines) == 3
    assert lines[1].startswith("  doc_id 0 (id 'd0') chars [0, 3): '[the] cat")
    assert sadedup.index(work, **QUIET)["skipped"]
    rows = db_rows(work, "SELECT shard, status, artifact FROM stages WHERE stage = 'index' ORDER BY shard")
    assert [r[0] for r in rows] == list(range(-1, shards["shards"])) and {r[1] for r in rows} == {"done"}
    assert db_rows(work, "SELECT count(*) FROM runs WHERE command = 'index'") == [(2,)]  # the first count's, this one

    # everything else, through the API on the same folder
    rng = random.Random(5)
    occ = sadedup.Occurrences(work)
    for q in queries(rng, docs, 60) + ["aa", "aaaa", "aaaaa", "mat", "t", "東京", "é", "ïve café 東"]:
        want = occurrences(survivors, q)
        assert occ.count(q) == len(want), q
        assert located(occ.locate(q, limit=0)) == want, q
        for d, a, b in want:
            assert docs[d][a:b] == q
    shard_of = {int(d): k for k, f in enumerate(sorted(Path(work).glob("substring/*/shard_*/docs.npy")))
                for d in np.load(f)}
    assert shard_of[3] == shard_of[4] != shard_of[6]
    # only across d3 | d4 in one shard, and d4 | (empty d5) | d6 across shards
    assert occ.count("leftright") == occ.count("qqq🚀") == occ.count("q🚀") == 0


def test_cli_prefilter_off_reads_the_build_arrays(cli, tmp_path):
    docs = ["abcabc", "cab", "bca", "b"]
    work = make_folder(tmp_path, docs, ["substring.prefilter=false", "substring.shard_tokens=5"])
    d = sadedup.index(work, **QUIET)
    assert (d["source"], d["built"]) == ("build", 0)
    # nothing to build, and the database settled (a read after the folder was let go left
    # it in WAL mode, -wal and -shm beside it)
    assert sorted(p.name for p in Path(work).glob("sadedup.db*")) == ["sadedup.db"]
    p = cli("count", work, "ca", "--format", "json")
    assert json.loads(p.stdout) == {"count": 3} and "building" not in p.stderr
    assert not list(Path(work).glob("substring/*/index"))
    assert db_rows(work, "SELECT count(*) FROM stages WHERE stage = 'index'") == [(0,)]
    assert sadedup.count(work, "cc", **QUIET) == sadedup.count(work, "bb", **QUIET) == 0  # only across documents
    assert sadedup.count(work, "ab", **QUIET) == 3  # not the "a|b" of the last two


def test_index_is_checksummed_and_follows_the_tokenization(cli, tmp_path):
    docs = ["one two one two", "two one", "onetwo"]
    work = make_folder(tmp_path, docs, ["substring.shard_tokens=12"])
    with pytest.raises(SadedupError, match=r"run `sadedup index .*` once first"):
        from sadedup.occurrences import Occurrences

        Occurrences(work, build=False)
    d = sadedup.index(work, **QUIET)
    assert d["built"] == d["shards"] >= 2 and d["source"] == "index"
    assert sadedup.count(work, "one", **QUIET) == 4
    # an array damaged in place (same size) is found by its checksum and rebuilt
    sa = min(Path(work).glob("substring/*/index/shard_00000/sa.npy"))
    arr = np.load(sa)
    np.save(sa, arr[::-1].copy())
    p = cli("index", work, "--format", "json")
    assert json.loads(p.stdout)["built"] == 1
    assert np.array_equal(np.load(sa), arr)
    # another tokenization (other shards) gets its own arrays, made on the first query
    sadedup.tokenize(work, overrides=["substring.shard_tokens=100"], **QUIET)
    assert sadedup.count(work, "two one", **QUIET) == 2
    assert len(list(Path(work).glob("substring/bytes_100tps_*/index/shard_*/sa.npy"))) == 1


# ---- subword tokenizers

@pytest.mark.parametrize("kind", ["hf", "sp"])
def test_subword_tokenizer_matches_the_library(cli, tmp_path, kind):
    """Both through the bounds their shards keep (chars.npy): a Hugging Face tokenizer's and
    a sentencepiece model's."""
    spec = f"hf:{hf_byte_bpe(tmp_path / 'bpe.json')}" if kind == "hf" else f"sp:{sp_model(tmp_path / 'uni.model')}"
    rng = random.Random(7)
    words = ["the", "quick", "brown", "fox", "Über", "café", "東京は", "🚀🔥", "naïve", "dog."]
    docs = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(30)]
    work = make_folder(tmp_path, docs, [f"substring.tokenizer={spec}", "substring.shard_tokens=60"])
    by_id = dict(enumerate(docs))
    want = token_occurrences(by_id, " quick brown", spec)
    p = cli("locate", work, " quick brown", "--format", "json", "--limit", "0")
    assert located(json.loads(p.stdout)) == want and json.loads(p.stdout)["count"] == len(want)
    occ = sadedup.Occurrences(work)
    for q in queries(rng, docs, 40) + ["the", " the", "café", "東京", "🚀", "ï"]:
        want = token_occurrences(by_id, q, spec)
        assert occ.count(q) == len(want), q
        assert located(occ.locate(q, limit=0)) == want, q


def test_wide_tokens_and_text_without_tokens(tmp_path):
    """A word-level vocabulary of 70,100 entries: ids are uint32; whitespace gives no token."""
    spec = f"hf:{hf_wordlevel_big(tmp_path / 'words.json')}"
    docs = ["w70000 w1 w2 w1 w2", "w2 w70000", "w1", "w2 w1 w1 w2"]
    work = make_folder(tmp_path, docs, [f"substring.tokenizer={spec}", "substring.shard_tokens=4"])
    assert sadedup.count(work, "w1 w2", **QUIET) == 3
    assert sadedup.count(work, "w70000", **QUIET) == 2
    assert sadedup.count(work, "w2 w2", **QUIET) == 0  # doc 0 ends in w2 and doc 1 starts with it
    assert located(sadedup.locate(work, "w2 w70000", **QUIET)) == [(1, 0, 9)]
    with pytest.raises(SadedupError, match=r"^count: TEXT '   ' gives no tokens with the run's tokenizer hf:"):
        sadedup.count(work, "   ", **QUIET)


# ---- what cannot be answered, said in one line

def test_one_line_errors(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", ["some text", "more text"])
    sadedup.ingest(inp, tmp_path / "w", **QUIET)
    p = cli("count", tmp_path / "w", "text", check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "the substring stage has not run" in p.stderr and f"sadedup exact {tmp_path / 'w'}" in p.stderr  # tokenize would refuse
    # beside a run that holds the folder (it is bringing those stages current), a stage command
    # would be refused as "in use": the answer says a run is working there
    fd = os.open(tmp_path / "w" / ".lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        p = cli("count", tmp_path / "w", "text", check=False)
    finally:
        os.close(fd)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert f"a sadedup run (pid {os.getpid()}) is working in {tmp_path / 'w'}" in p.stderr and "`sadedup" not in p.stderr
    sadedup.ingest(inp, tmp_path / "x", overrides=["stages=exact"], **QUIET)
    with pytest.raises(SadedupError, match=r"^locate: .* runs no substring stage \(stages=exact\)$"):
        sadedup.locate(tmp_path / "x", "text", **QUIET)
    with pytest.raises(SadedupError, match="is not a sadedup work folder"):
        sadedup.index(tmp_path / "nowhere", **QUIET)

    (tmp_path / "y").mkdir()
    work = make_folder(tmp_path / "y", ["abc", "bcd"], [])
    with pytest.raises(SadedupError, match="^count: TEXT is empty"):
        sadedup.count(work, "", **QUIET)
    with pytest.raises(SadedupError, match="^locate: TEXT is not valid Unicode"):
        sadedup.locate(work, "a\ud800", **QUIET)
    with pytest.raises(SadedupError, match="limit must be a whole number"):
        sadedup.locate(work, "a", limit=-1, **QUIET)
    assert sadedup.count(work, "abcd" * 10, **QUIET) == 0  # longer than any document or shard
    # the shards no longer those of the workflow: said, not answered from them
    sadedup.ingest(tmp_path / "y" / "in.jsonl", work, overrides=["substring.shard_tokens=2"], **QUIET)
    with pytest.raises(SadedupError, match=r"^count: the substring stage is stale .*: run `sadedup tokenize"):
        sadedup.count(work, "b", **QUIET)
