"""Built-in workflows: each loads, validates, runs; overrides and errors name their keys."""
from __future__ import annotations

import json
import random

import pytest
from corpus import planted_corpus, write_jsonl
from helpers import db_rows

from sadedup.config import builtin_workflows, load_workflow


@pytest.mark.parametrize("name", ["default", "c4", "fineweb", "keep_first"])
def test_builtin_workflows_load(name):
    wf = load_workflow(name)
    assert wf.stages
    assert name in builtin_workflows()


def test_recipes_say_what_they_promise():
    c4 = load_workflow("c4")
    assert c4.substring.keep == "none" and c4.substring.min_length == 50 and c4.stages == ("substring",)
    fw = load_workflow("fineweb")
    assert (fw.minhash.ngram, fw.minhash.bands, fw.minhash.rows) == (5, 14, 8)
    kf = load_workflow("keep_first")
    assert kf.substring.keep == "first" and kf.substring.drop_fraction == 0.8


def test_overrides_reach_the_stored_configuration(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", planted_corpus(random.Random(1), 30, 300))
    cli("run", "c4", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w",
        "--set", "substring.tokenizer=bytes", "--set", "substring.min_length=30", "--workers", "1")  # no pool
    config = json.loads(db_rows(tmp_path / "w", "SELECT config FROM runs ORDER BY run_id DESC LIMIT 1")[0][0])
    assert config["stages"] == ["substring"] and config["substring"]["keep"] == "none"
    assert config["substring"]["min_length"] == 30
    assert config["resolved"]["substring.min_length"] == 30 and config["resolved"]["substring.shard_tokens"] > 0


def test_workflow_file_by_path_and_unknown_keys(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", ["some text"])
    wf = tmp_path / "mine.toml"
    wf.write_text('stages = ["substring"]\n[substring]\nmin_lenght = 5\n')
    p = cli("run", wf, "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", check=False)
    assert p.returncode != 0 and "unknown workflow key 'substring.min_lenght'" in p.stderr
    wf.write_text('stages = ["substring"]\n[substring]\nmin_length = "ten"\n')
    p = cli("run", wf, "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", check=False)
    assert p.returncode != 0 and "substring.min_length: expects a whole number" in p.stderr
    wf.write_text('stages = ["substring"]\n[substring]\nmin_length = 5\n')
    cli("run", wf, "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", "--workers", "1")
    p = cli("run", "nosuchflow", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w2",
            check=False)
    assert p.returncode != 0 and "no workflow named 'nosuchflow'" in p.stderr


def test_automatic_shards_are_capped_and_split_per_worker():
    from sadedup.stages.sizing import FAST_SHARD_TOKENS, MIN_SPLIT_TOKENS, shard_tokens, split_shard_tokens

    big = load_workflow(None, ["run.memory_budget=20GB", "run.workers=2"])
    assert shard_tokens(big) == FAST_SHARD_TOKENS  # the budget alone would allow far more
    # a 64 MB corpus: one shard per worker, with room for the last document
    per = split_shard_tokens(big, 64_000_000)
    assert 32_000_000 < per <= 32_000_000 * 1.05 + 1
    # tiny corpora are not cut below the floor; subword text is planned at 4 bytes a token
    assert split_shard_tokens(big, 1_000_000) == MIN_SPLIT_TOKENS
    sub = load_workflow(None, ["run.memory_budget=20GB", "run.workers=2", "substring.tokenizer=train:bpe:1000"])
    assert split_shard_tokens(sub, 256_000_000) == int(64_000_000 / 2 * 1.05) + 1
    # an explicit size, one worker, or an unknown corpus size keep the plain size
    assert split_shard_tokens(load_workflow(None, ["run.workers=2", "substring.shard_tokens=5000"]), 64_000_000) == 5000
    one = load_workflow(None, ["run.memory_budget=20GB", "run.workers=1"])
    assert split_shard_tokens(one, 64_000_000) == shard_tokens(one)
    assert split_shard_tokens(big, None) == shard_tokens(big)
