"""Tokenize and shard: the surviving documents' tokens, in document order, in shards.

Documents stream through the tokenizer in batches (the tokenizer libraries encode a batch on
all cores); a shard is written as soon as the next document would take it over
`shard_tokens`, so memory holds one shard at most. A document longer than that gets a shard
of its own. Per shard: tokens.npy (uint8 / uint16 / uint32 by vocabulary), docs.npy (doc_id
per document, int64) and offsets.npy (the documents' token offsets, ndocs+1); a subword
tokenizer's shards also keep the character bounds of their tokens, chars.npy and chars_x.npy
(sadedup/tokenizers.py: two bytes a token), taken from the same encoding, so that the remove
stage maps token spans to characters without encoding the documents again. Windows never
cross documents, so shards need no separators. A rerun keeps every finished shard: the
encoding is deterministic, so the shards after it come out the same.
"""
from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..errors import ConfigError, SadedupError
from ..keep import candidate_documents, order_settings, visiting_order
from .. import faults
from ..progress import bar, say
from ..tokenizers import (CHARS_FILES, ByteTokenizer, Tokenizer, load_tokenizer, model_digest, pack_char_bounds,
                          parse_spec, train)
from ..store import TextStore
from ..workspace import save_npy, save_npy_bytes
from .base import Context, Stage, chain, driver_wrote
from .sizing import split_shard_tokens

SHARD_FILES = ("tokens.npy", "docs.npy", "offsets.npy")
BATCH_BYTES = 4 << 20


def shard_files(spec: str) -> tuple[str, ...]:
    """The files of a shard made with tokenizer `spec`: a subword tokenizer's keep the
    character bounds too (the bytes tokenizer's are the bytes themselves)."""
    return SHARD_FILES if parse_spec(spec)[0] == "bytes" else SHARD_FILES + CHARS_FILES


def _piece(tokens: np.ndarray | None, chars, a: int, b: int) -> tuple:
    """Tokens [a, b) of a batch, with their character bounds (deltas, exceptions rebased to a)."""
    if chars is None:
        return tokens[a:b], None, None
    deltas, exc = chars
    lo, hi = np.searchsorted(exc[0], [a, b])
    x = exc[:, lo:hi].copy()
    x[0] -= a
    return tokens[a:b], deltas[:, a:b], x


def folder_of(ws) -> Path:
    """Where the finished tokenize stage put its shards (as recorded, not recomputed)."""
    detail = ws.stage_detail("tokenize")
    if "folder" not in detail:
        raise SadedupError(f"stage tokenize has not run in {ws.root}: run `sadedup tokenize {ws.root}`")
    return ws.root / detail["folder"]


def shard_dirs(ws) -> list[Path]:
    """The shard folders of the finished tokenize stage, in order."""
    folder = folder_of(ws)
    plan = json.loads((folder / "shards.json").read_text())
    return [folder / name for name in plan["shards"]]


def run_tokenizer(ctx: Context) -> Tokenizer:
    """The tokenizer the finished tokenize stage used."""
    row = ctx.ws.stage_row("tokenize")
    return Tokenize().tokenizer(ctx, row.key if row is not None else Tokenize().key(ctx))


class Tokenize(Stage):
    name = "tokenize"
    records = ("tokenize",)

    def settings(self, ctx: Context) -> Any:
        wf = ctx.wf
        kind, _ = parse_spec(wf.substring.tokenizer)
        what = wf.substring.tokenizer_sample if kind == "train" else model_digest(wf.substring.tokenizer)
        order = order_settings(wf)  # the shards hold the documents in document order
        sources = [order[1]] if order is not None and order[1] else []
        return [wf.substring.tokenizer, what, self.shard_size(ctx), wf.input.priority, *sources]

    def folder(self, ctx: Context, key: str) -> Path:
        spec = ctx.wf.substring.tokenizer
        slug = spec.replace(":", "-") if spec.startswith("train:") else \
            ("bytes" if spec == "bytes" else f"{spec[:2]}-{Path(spec[3:]).stem}")
        return ctx.ws.root / "substring" / f"{slug}_{self.shard_size(ctx)}tps_{key[:8]}"

    def whole(self, ctx: Context, key: str) -> bool:
        """Every shard of the finished stage is there and still matches its checksum."""
        folder = self.folder(ctx, key)
        if not (folder / "shards.json").exists():
            return False
        n = len(json.loads((folder / "shards.json").read_text())["shards"])
        files = shard_files(ctx.wf.substring.tokenizer)
        return all(ctx.ws.is_done(self.name, chain(key, k), shard=k,
                                  files=[folder / f"shard_{k:05d}" / f for f in files]) for k in range(n))

    def summary(self, d: dict[str, Any]) -> str:
        return (f"tokenize: {d['documents']} documents, {d['tokens']} tokens ({d['tokenizer']}) in {d['shards']} "
                f"shard(s) of up to {d['shard_tokens']} tokens" + (f" ({d['reused']} reused)" if d['reused'] else ""))

    def shard_size(self, ctx: Context) -> int:
        """Tokens per shard: from the budget, the workers and the ingested text's size."""
        return split_shard_tokens(ctx.wf, ctx.ws.stage_detail("ingest").get("bytes"))

    def trained_path(self, ctx: Context, key: str) -> Path:
        algo_vocab = ctx.wf.substring.tokenizer.split(":", 1)[1].replace(":", "_")
        return ctx.ws.root / "tokenizers" / f"{algo_vocab}_{key[:8]}"

    def tokenizer(self, ctx: Context, key: str, train_if_missing: bool = False) -> Tokenizer:
        wf = ctx.wf
        spec = wf.substring.tokenizer
        threads = wf.run.n_workers
        if parse_spec(spec)[0] != "train":
            return load_tokenizer(spec, threads)
        folder = self.trained_path(ctx, key)
        found = sorted(folder.glob("*.json")) + sorted(folder.glob("*.model")) if folder.exists() else []
        if not found:
            if not train_if_missing:
                raise ConfigError(f"the tokenizer {spec} has not been trained in {ctx.ws.root}: run `sadedup tokenize`")
            found = [self._train(ctx, folder)]
        return load_tokenizer(spec, threads, trained=found[0])

    def _train(self, ctx: Context, folder: Path) -> Path:
        from ..config import parse_size

        ws, wf = ctx.ws, ctx.wf
        store = TextStore(ws.root)
        doc_ids = candidate_documents(ws, self.name)[0]
        sizes = store.nbytes(doc_ids)
        budget = parse_size(wf.substring.tokenizer_sample, "substring.tokenizer_sample")
        stride = max(1, int(np.ceil(sizes.sum() / max(budget, 1))))
        sample = doc_ids[::stride]
        say(f"tokenize: training {wf.substring.tokenizer} on {len(sample)} of {len(doc_ids)} documents "
            f"({int(store.nbytes(sample).sum())} bytes)")
        path = train(wf.substring.tokenizer, (store.text(int(d)) for d in sample), folder, wf.run.n_workers)
        ws.prov.note_tokenizer(str(path.relative_to(ws.root)))
        return path

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        ws = ctx.ws
        folder = self.folder(ctx, key)
        tok = self.tokenizer(ctx, key, train_if_missing=True)
        size = self.shard_size(ctx)
        store = TextStore(ws.root)
        doc_ids = self.visiting_order(ctx)
        files = shard_files(ctx.wf.substring.tokenizer)
        folder.mkdir(parents=True, exist_ok=True)

        # finished shards are kept (a corrupt one is rebuilt from its own documents);
        # encoding restarts after the last of them
        names: list[str] = []
        token_counts: list[int] = []
        start = rebuilt = 0
        while (row := ws.stage_row(self.name, len(names))) is not None and row.key == chain(key, len(names)):
            k, d = len(names), json.loads(row.detail or "{}")
            sdir = folder / f"shard_{k:05d}"
            if row.status != "done":
                break
            if ctx.force or not ws.is_done(self.name, chain(key, k), shard=k, files=[sdir / f for f in files]):
                ids = doc_ids[d["first"]:d["end"]]
                _, tokens, counts, chars = next(self._batches(tok, store, ids, 0, batch_bytes=None))
                pieces = [] if tokens is None else [_piece(tokens, chars, 0, len(tokens))]
                self._write(ctx, key, folder, k, pieces, counts.tolist(), doc_ids, d["first"], tok, store)
                rebuilt += 1
            names.append(sdir.name)
            token_counts.append(d["tokens"])
            start = d["end"]
        for stale in folder.glob("shard_*"):
            if stale.name not in names:
                shutil.rmtree(stale)
        reused = len(names) - rebuilt

        total_bytes = int(store.nbytes(doc_ids).sum())
        with bar(f"tokenize ({tok.spec})", total_bytes, "bytes") as b:
            b.advance(int(store.nbytes(doc_ids[:start]).sum()))
            shard_tokens_acc: list[tuple] = []
            shard_counts: list[int] = []
            shard_first = start
            acc = 0
            for i, tokens, counts, chars in self._batches(tok, store, doc_ids, start):
                b.advance(int(store.nbytes(doc_ids[i:i + len(counts)]).sum()))
                # the batch goes to the shards in pieces: the documents between two shard cuts
                at = seg = 0
                for c in counts.tolist():
                    if acc and acc + c > size:
                        if tokens is not None and at > seg:
                            shard_tokens_acc.append(_piece(tokens, chars, seg, at))
                        seg = at
                        names.append(self._write(ctx, key, folder, len(names), shard_tokens_acc, shard_counts,
                                                 doc_ids, shard_first, tok, store))
                        token_counts.append(acc)
                        shard_first += len(shard_counts)
                        shard_tokens_acc, shard_counts, acc = [], [], 0
                    shard_counts.append(c)
                    acc += c
                    at += c
                if tokens is not None and at > seg:
                    shard_tokens_acc.append(_piece(tokens, chars, seg, at))
            if shard_counts or not names:
                names.append(self._write(ctx, key, folder, len(names), shard_tokens_acc, shard_counts, doc_ids,
                                         shard_first, tok, store))
                token_counts.append(acc)
        plan = {"shards": names, "tokens": token_counts, "dtype": tok.dtype.str, "shard_tokens": size,
                "tokenizer": tok.spec}
        tmp = folder / "shards.json.tmp"
        tmp.write_text(json.dumps(plan))
        tmp.replace(folder / "shards.json")
        return {"shards": len(names), "reused": reused, "rebuilt": rebuilt, "tokens": int(sum(token_counts)),
                "documents": len(doc_ids), "shard_tokens": size, "tokenizer": tok.spec, "vocab_size": tok.vocab_size,
                "folder": str(folder.relative_to(ws.root))}

    @staticmethod
    def visiting_order(ctx: Context) -> np.ndarray:
        """The substring stage's documents in the order it visits them (keep.visiting_order)."""
        doc_ids = candidate_documents(ctx.ws, "tokenize")[0]
        order = visiting_order(ctx.ws, doc_ids)
        return doc_ids if order is None else doc_ids[order]

    @staticmethod
    def _batches(tok: Tokenizer, store: TextStore, doc_ids: np.ndarray, start: int,
                 batch_bytes: int | None = BATCH_BYTES) -> Iterator[tuple[int, np.ndarray | None, np.ndarray, tuple | None]]:
        """(first index, concatenated tokens, tokens per document, character bounds) for
        batches of documents; tokens and bounds are None for the bytes tokenizer.

        A subword tokenizer encodes the next batch on a helper thread (the libraries release
        the GIL) while this one is gathered and written, so the stage adds little to them. The
        bounds (pack_char_bounds) come from that same encoding."""
        sizes = store.nbytes(doc_ids)
        ends = np.cumsum(sizes)
        bounds = []
        i = start
        while i < len(doc_ids):
            base = ends[i - 1] if i else 0
            j = len(doc_ids) if batch_bytes is None else \
                max(i + 1, int(np.searchsorted(ends, base + batch_bytes, side="right")))
            bounds.append((i, j))
            i = j
        if isinstance(tok, ByteTokenizer):  # the tokens are the stored bytes: _write copies them
            for i, j in bounds:
                yield i, None, sizes[i:j], None
            return

        def encode(i: int, j: int) -> tuple[np.ndarray, np.ndarray, tuple]:
            docs = doc_ids[i:j]
            tokens, counts, cs, ce = tok.encode_flat_offsets(store.raw(docs) if tok.takes_bytes else store.texts(docs))
            return tokens.astype(tok.dtype, copy=False), counts, pack_char_bounds(cs, ce, counts)

        with ThreadPoolExecutor(1) as pool:
            ahead = pool.submit(encode, *bounds[0]) if bounds else None
            for n, (i, j) in enumerate(bounds):
                tokens, counts, chars = ahead.result()
                if n + 1 < len(bounds):
                    ahead = pool.submit(encode, *bounds[n + 1])
                yield i, tokens, counts, chars

    def _write(self, ctx, key, folder, k, parts, counts, doc_ids, first, tok, store: TextStore) -> str:
        """One shard's files from its pieces (`parts`: tokens, and for a subword tokenizer
        their character bounds), or, for bytes, from the store."""
        sdir = folder / f"shard_{k:05d}"
        sdir.mkdir(exist_ok=True)
        ids = doc_ids[first:first + len(counts)].astype(np.int64)
        offsets = np.concatenate(([0], np.cumsum(np.asarray(counts, dtype=np.int64)))).astype(np.int64)
        save_npy(sdir / "docs.npy", ids)
        save_npy(sdir / "offsets.npy", offsets)
        if isinstance(tok, ByteTokenizer):
            if len(ids) and np.all(np.diff(ids) == 1):  # one run of texts.bin: copied in the kernel
                save_npy_bytes(sdir / "tokens.npy", store.path, int(store.offsets[ids[0]]), int(offsets[-1]))
            else:
                save_npy(sdir / "tokens.npy", tok.gather(store.data, store.offsets, ids)[0])
        else:
            tokens = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, tok.dtype)
            save_npy(sdir / "tokens.npy", tokens.astype(tok.dtype, copy=False))
            deltas = np.concatenate([p[1] for p in parts], axis=1) if parts else np.zeros((2, 0), np.uint8)
            at, exc = 0, []
            for p in parts:  # exceptions move from their piece's start to the shard's
                x = p[2].copy()
                x[0] += at
                exc.append(x)
                at += p[0].shape[0]
            save_npy(sdir / CHARS_FILES[0], np.ascontiguousarray(deltas))
            save_npy(sdir / CHARS_FILES[1], np.concatenate(exc, axis=1) if exc else np.zeros((3, 0), np.int64))
        files = shard_files(ctx.wf.substring.tokenizer)
        driver_wrote(ctx, [sdir / f for f in files])
        ctx.ws.mark(self.name, chain(key, k), "done", shard=k, files=[sdir / f for f in files], artifact=sdir,
                    tokens=int(offsets[-1]), documents=len(counts), first=first, end=first + len(counts))
        faults.point("tokenize.shard")
        return sdir.name

