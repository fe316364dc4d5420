"""Tokenize and shard: the surviving documents' tokens, in document order, in shards.

A shard holds whole documents and about `shard_tokens` tokens; a document longer than
that gets a shard of its own. Per shard: tokens.npy (uint8/16/32 by vocabulary), docs.npy
(doc_id per document, int64) and offsets.npy (the documents' token offsets, ndocs+1).
Windows never cross documents, so the shards need no separators.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from ..progress import bar, say
from ..tokenizers import get_tokenizer
from ..workspace import load_npy, save_npy
from .base import Context, Stage, chain
from .docs import document_stages_key, substring_candidates
from .sizing import shard_tokens

SHARD_FILES = ("tokens.npy", "docs.npy", "offsets.npy")


def plan_shards(counts: np.ndarray, size: int) -> list[tuple[int, int]]:
    """Greedy cut of documents (in order) into shards of at most `size` tokens each."""
    bounds: list[tuple[int, int]] = []
    start, acc = 0, 0
    for i, c in enumerate(counts.tolist()):
        if acc and acc + c > size:
            bounds.append((start, i))
            start, acc = i, 0
        acc += c
    if start < len(counts):
        bounds.append((start, len(counts)))
    return bounds


class Tokenize(Stage):
    name = "tokenize"

    def key(self, ctx: Context) -> str:
        wf = ctx.wf
        return chain("tokenize", document_stages_key(ctx), wf.substring.tokenizer, shard_tokens(wf))

    def folder(self, ctx: Context) -> Path:
        wf = ctx.wf
        tok = get_tokenizer(wf.substring.tokenizer)
        return ctx.ws.root / "substring" / f"{tok.slug}_{shard_tokens(wf)}tps_{self.key(ctx)[:8]}"

    def shard_dirs(self, ctx: Context) -> list[Path]:
        plan = json.loads((self.folder(ctx) / "shards.json").read_text())
        return [self.folder(ctx) / name for name in plan["shards"]]

    def run(self, ctx: Context) -> dict[str, Any]:
        ws, wf = ctx.ws, ctx.wf
        key = self.key(ctx)
        folder = self.folder(ctx)
        if not ctx.force and ws.is_done(self.name, key, files=[folder / "shards.json"]):
            return ws.stage_detail(self.name) | {"skipped": True}
        ws.mark(self.name, key, "running", artifact=folder)
        tok = get_tokenizer(wf.substring.tokenizer)
        size = shard_tokens(wf)
        doc_ids = substring_candidates(ws)
        text_offsets = load_npy(ws.root / "ingest" / "offsets.npy", mmap=False)
        texts = np.memmap(ws.root / "ingest" / "texts.bin", dtype=np.uint8, mode="r") \
            if text_offsets[-1] > 0 else np.zeros(0, np.uint8)
        counts = tok.token_counts(text_offsets, doc_ids)
        bounds = plan_shards(counts, size)
        folder.mkdir(parents=True, exist_ok=True)
        names = [f"shard_{k:05d}" for k in range(len(bounds))]
        with bar("tokenize", int(counts.sum()), "tokens") as b:
            for k, (i, j) in enumerate(bounds):
                sdir = folder / names[k]
                files = [sdir / f for f in SHARD_FILES]
                skey = chain(key, k)
                if not ctx.force and ws.is_done(self.name, skey, shard=k, files=files, verify=False):
                    b.advance(int(counts[i:j].sum()))
                    continue
                shutil.rmtree(sdir, ignore_errors=True)
                sdir.mkdir()
                ids = doc_ids[i:j]
                offs = np.concatenate(([0], np.cumsum(counts[i:j]))).astype(np.int64)
                tokens = np.empty(int(offs[-1]), dtype=tok.dtype)
                tok.encode_into(texts, text_offsets, ids, tokens)
                save_npy(sdir / "docs.npy", ids.astype(np.int64))
                save_npy(sdir / "offsets.npy", offs)
                save_npy(sdir / "tokens.npy", tokens)
                ws.mark(self.name, skey, "done", shard=k, files=files, artifact=sdir, tokens=int(offs[-1]),
                        documents=len(ids))
                b.advance(int(offs[-1]))
        plan = {"shards": names, "tokens": [int(counts[i:j].sum()) for i, j in bounds], "dtype": tok.dtype.str,
                "shard_tokens": size}
        tmp = folder / "shards.json.tmp"
        tmp.write_text(json.dumps(plan))
        tmp.replace(folder / "shards.json")
        detail = {"shards": len(bounds), "tokens": int(counts.sum()), "documents": len(doc_ids),
                  "shard_tokens": size, "folder": str(folder.relative_to(ws.root))}
        ws.mark(self.name, key, "done", files=[folder / "shards.json"], artifact=folder, **detail)
        say(f"tokenize: {len(doc_ids)} documents, {int(counts.sum())} tokens in {len(bounds)} shard(s) "
            f"of up to {size} tokens")
        return detail
