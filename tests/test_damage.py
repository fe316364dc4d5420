"""Every file of a finished work folder damaged in turn (deleted, emptied, cut to half its
size, or one byte flipped): the next run on the recorded inputs and output gives a fresh
run's output and decisions, or refuses in one line (a SadedupError, which the CLI prints as
`sadedup: error: ...`) after which `--restart` does. Never another output, never an internal
error. The workflow runs every stage (a trained tokenizer, decontamination), so every kind of
artifact a folder holds is met; each file gets one damage, rotating, to keep this cheap.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from helpers import decisions, sequence_corpus

import sadedup
from sadedup.errors import SadedupError

HOWS = ("delete", "empty", "truncate", "flip")


def damage(f: Path, how: str) -> None:
    if how == "delete":
        f.unlink()
    elif how == "empty":
        os.truncate(f, 0)
    elif how == "truncate":
        os.truncate(f, f.stat().st_size // 2)
    else:
        b = bytearray(f.read_bytes())
        b[len(b) // 2] ^= 0x55
        f.write_bytes(bytes(b))


def test_each_damaged_file_is_rebuilt_or_refused(tmp_path):
    corpus = sequence_corpus(tmp_path / "in.jsonl")
    evals = tmp_path / "eval.jsonl"
    evals.write_text("".join(corpus.read_text(encoding="utf-8").splitlines(keepends=True)[40:44]), encoding="utf-8")
    sets = {"stages": "exact,minhash,lines,decontaminate,substring", "substring.min_length": 20,
            "decontaminate.eval": str(evals), "lines.min_docs": 2, "substring.tokenizer": "train:bpe:2000"}
    snap, out = tmp_path / "w", tmp_path / "out.jsonl"
    sadedup.run(corpus, out, snap, overrides=sets, executor="inline", quiet=True)
    want, want_decisions = out.read_bytes(), decisions(snap)
    assert {d[1] for d in want_decisions if len(d) == 9} >= {"lines", "decontaminate", "substring"}
    snap = snap.rename(tmp_path / "snap")  # the output's owner is named "w": each copy is that folder
    files = sorted(str(p.relative_to(snap)) for p in snap.rglob("*") if p.is_file() and p.name != ".lock")
    assert any(f.startswith("tokenizers/") for f in files) and any(f.endswith("shards.json") for f in files)
    refused = []
    for i, name in enumerate(files):
        how = HOWS[i % len(HOWS)] if (snap / name).stat().st_size else "delete"
        w = tmp_path / "w"
        shutil.rmtree(w, ignore_errors=True)
        shutil.copytree(snap, w, symlinks=True)
        out.unlink(missing_ok=True)
        damage(w / name, how)
        try:
            sadedup.run(None, None, w, executor="inline", quiet=True)
        except SadedupError as e:
            assert "\n" not in str(e), (name, how, str(e))
            refused.append((name, how))
            sadedup.run(corpus, out, w, overrides=sets, restart=True, executor="inline", quiet=True)
        assert out.read_bytes() == want, (name, how)
        assert decisions(w) == want_decisions, (name, how)
    # what cannot be rebuilt from the folder is its own record: the rest is made again
    assert {n for n, _ in refused} <= {"state.json", "sadedup.db"}, refused
    assert json.loads((w / "state.json").read_text())["workflow"]["stages"]
