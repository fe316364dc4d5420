"""Tokenize's shard plan: sized from the documents that reach the substring stage (not from
all that was ingested), cut into equal parts a multiple of the workers, and resumed or
replanned without mixing plans."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from corpus import random_text, write_jsonl
from helpers import db_rows
from hypothesis import given, settings
from hypothesis import strategies as st

import sadedup
from sadedup.config import load_workflow
from sadedup.stages import sizing, tokenize


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.just(0), st.integers(1, 8), st.integers(1, 300)), max_size=60),
       st.integers(1, 9), st.integers(1, 2000))
def test_balanced_cuts_cover_in_order_within_size_and_balance(counts, parts, size):
    counts = np.array(counts, dtype=np.int64)
    cuts = tokenize.balanced_cuts(counts, parts, size)
    if not len(counts):
        assert cuts == []
        return
    # consecutive, non-empty, every document once, in order
    assert cuts[0][0] == 0 and cuts[-1][1] == len(counts)
    assert all(a[1] == b[0] for a, b in zip(cuts, cuts[1:])) and all(e > f for f, e in cuts)
    held = [int(counts[f:e].sum()) for f, e in cuts]
    # never over `size`, but for a shard of one document too long (with empty ones beside it)
    assert all(h <= size or np.count_nonzero(counts[f:e]) <= 1 for h, (f, e) in zip(held, cuts))
    total, big = int(counts.sum()), int(counts.max())
    if size >= total:  # nothing clamps: `parts` shards at most, each within a document of its share
        assert len(cuts) <= parts
        assert all(abs(h - total / parts) <= big + 1 for h in held), (held, total / parts, big)
    else:  # as many as the size needs at least
        assert len(cuts) >= -(-total // size) or big > size


def test_balanced_shards_are_a_multiple_of_the_workers():
    two = load_workflow(None, ["run.memory_budget=2GB", "run.workers=2"])
    cap = sizing.shard_tokens(two)
    assert sizing.balanced_shards(two, 15 * cap + 1) == 16  # not 15 full and one of 1 token
    assert sizing.balanced_shards(two, 15 * cap) == 16
    assert sizing.balanced_shards(two, 16 * cap) == 18  # BALANCE_SLACK: 17 at least, then even
    assert sizing.balanced_shards(two, cap // 2) == 2  # one per worker
    assert sizing.balanced_shards(two, 9_000_000) == 2
    assert sizing.balanced_shards(two, 6_000_000) == 1  # two would be under MIN_SPLIT_TOKENS
    assert sizing.balanced_shards(two, 0) == 1
    three = load_workflow(None, ["run.memory_budget=2GB", "run.workers=3"])
    assert sizing.balanced_shards(three, 4 * sizing.shard_tokens(three)) == 6
    small = load_workflow(None, [f"run.memory_budget={(256 + 8) << 20}B", "run.workers=3"])
    cap = sizing.shard_tokens(small)
    assert cap < sizing.MIN_SPLIT_TOKENS  # the budget makes shards under the floor: still even
    assert sizing.balanced_shards(small, 10 * cap + 1) == 12


def shard_tokens_of(work) -> list[int]:
    return [r[0] for r in db_rows(work, "SELECT json_extract(detail, '$.tokens') FROM stages "
                                        "WHERE stage = 'tokenize' AND shard >= 0 ORDER BY shard")]


def dump(work) -> list:
    return (db_rows(work, "SELECT doc_id, status, reason, removed_tokens FROM documents ORDER BY doc_id")
            + db_rows(work, "SELECT * FROM spans ORDER BY span_id"))


@pytest.fixture
def small_shards(monkeypatch):
    """Shards of a few thousand tokens for corpora of a few hundred KB, in this process (the
    runs below use the inline executor)."""
    monkeypatch.setattr(sizing, "MIN_SPLIT_TOKENS", 1000)


def unique_docs(rng: random.Random, n: int) -> list[str]:
    return [f"doc {i} " + random_text(rng, rng.randint(200, 900), list("abcdefghij ")) for i in range(n)]


def test_shards_are_sized_from_the_documents_that_reach_the_stage(tmp_path, small_shards):
    """A third of the corpus is exact copies at its end: sized from the ingested bytes, the
    two shards held 79% and 21% of the survivors' tokens; from the survivors', half each."""
    docs = unique_docs(random.Random(3), 400)
    inp = write_jsonl(tmp_path / "in.jsonl", docs + docs[:200])
    sets = ["stages=exact,substring", "substring.min_length=20", "run.workers=2"]
    sadedup.run(inp, tmp_path / "o.jsonl", tmp_path / "w", overrides=sets, executor="inline", quiet=True)
    held = shard_tokens_of(tmp_path / "w")
    survivors = sum(len(d.encode()) for d in docs)
    biggest = max(len(d.encode()) for d in docs)
    assert sum(held) == survivors and len(held) == 2
    assert all(abs(h - survivors / 2) <= biggest for h in held), held


def test_an_interrupted_tokenize_resumes_its_plan_and_a_changed_upstream_replans(tmp_path, small_shards,
                                                                                 monkeypatch):
    """Interrupted after 4 shards, the rerun keeps them and writes the rest of the same plan;
    then an upstream setting that drops more documents makes a new plan, every shard of it
    written anew (none of the former plan's reused), the same as a fresh run's."""
    monkeypatch.setattr(sizing, "FAST_SHARD_TOKENS", 30_000)
    rng = random.Random(5)
    docs = unique_docs(rng, 500)
    docs += [d.upper() for d in docs[:150]]  # duplicates only when exact lower-cases
    inp = write_jsonl(tmp_path / "in.jsonl", docs)
    sets = ["stages=exact,substring", "substring.min_length=20", "run.workers=2"]
    run = lambda w, extra=(): sadedup.run(inp, tmp_path / f"{w}.jsonl", tmp_path / w,  # noqa: E731
                                          overrides=sets + list(extra), executor="inline", quiet=True)
    run("fresh")
    fresh_plan = shard_tokens_of(tmp_path / "fresh")
    assert len(fresh_plan) >= 8 and len(fresh_plan) % 2 == 0
    calls = {"n": 0}
    write = tokenize.WriteShard.__call__

    def interrupted(self):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        return write(self)

    monkeypatch.setattr(tokenize.WriteShard, "__call__", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run("w")
    assert db_rows(tmp_path / "w", "SELECT count(*) FROM stages WHERE stage = 'tokenize' AND shard >= 0 "
                                   "AND status = 'done'")[0][0] == 4
    monkeypatch.setattr(tokenize.WriteShard, "__call__", write)
    run("w")
    assert (tmp_path / "w.jsonl").read_bytes() == (tmp_path / "fresh.jsonl").read_bytes()
    assert dump(tmp_path / "w") == dump(tmp_path / "fresh") and shard_tokens_of(tmp_path / "w") == fresh_plan
    detail = json.loads(db_rows(tmp_path / "w", "SELECT detail FROM stages WHERE stage = 'tokenize' AND shard = -1")[0][0])
    assert detail["reused"] == 4 and detail["rebuilt"] == 0

    # upstream drops 150 more documents: a plan of its own, written whole, equal to a fresh run's
    run("w", ["exact.lowercase=true"])
    run("fresh2", ["exact.lowercase=true"])
    assert (tmp_path / "w.jsonl").read_bytes() == (tmp_path / "fresh2.jsonl").read_bytes()
    assert dump(tmp_path / "w") == dump(tmp_path / "fresh2")
    replanned = shard_tokens_of(tmp_path / "w")
    assert replanned == shard_tokens_of(tmp_path / "fresh2") and sum(replanned) < sum(fresh_plan)
    detail = json.loads(db_rows(tmp_path / "w", "SELECT detail FROM stages WHERE stage = 'tokenize' AND shard = -1")[0][0])
    assert detail["reused"] == 0 and detail["shards"] == len(replanned)
    assert max(replanned) - min(replanned) <= 2 * max(len(d.encode()) for d in docs)
