"""Tokenize and shard: the surviving documents' tokens, in document order, in shards.

The work runs as the executor's tasks, which get paths: a subword tokenizer's EncodePiece
tasks encode ranges of the visiting order (cut by bytes) into piece files, with every
document's token count; from those counts (the bytes tokenizer's are the text sizes, known
up front) the driver cuts the shards, O(documents): a shard closes before the document that
would take it over `shard_tokens`, so the cut is the one a single pass in document order
makes, and a document longer than that gets a shard of its own. The bytes tokenizer's shards (at the
automatic size) are cut into equal parts instead, as many as the budget needs rounded up to
a multiple of the workers (sizing.balanced_shards, balanced_cuts): each worker builds the
same tokens. Both are sized from the documents that reach the stage, not from all that
was ingested. WriteShard tasks then write
each shard from the pieces (the bytes tokenizer's from the store), a shard's worth in
memory. Per shard: tokens.npy (uint8 / uint16 / uint32 by vocabulary), docs.npy (doc_id per
document, int64) and offsets.npy (the documents' token offsets, ndocs+1); a subword
tokenizer's shards also keep the character bounds of their tokens, chars.npy and chars_x.npy
(sadedup/tokenizers.py: two bytes a token), taken from the same encoding, so that the remove
stage maps token spans to characters without encoding the documents again. Windows never
cross documents, so shards need no separators. A rerun keeps every finished shard: the
encoding is deterministic, so the cuts after it come out the same.
"""
from __future__ import annotations

import functools
import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import xxhash

from ..errors import ConfigError, SadedupError
from ..keep import candidate_bytes, candidate_documents, order_settings, visiting_order
from .. import faults, graph
from ..progress import bar, say
from ..tokenizers import (CHARS_FILES, ByteTokenizer, Tokenizer, load_tokenizer, model_digest, pack_char_bounds,
                          parse_spec, train)
from ..store import TextStore
from ..workspace import file_bytes, load_npy, replaced, save_npy, save_npy_bytes, task_sums
from .base import Context, Stage, chain, driver_wrote
from .sizing import balanced_shards, shard_tokens, split_shard_tokens

SHARD_FILES = ("tokens.npy", "docs.npy", "offsets.npy")
BATCH_BYTES = 4 << 20  # text per encode call
PIECE_BYTES = 64 << 20  # text per EncodePiece task at most


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


def shard_name(k: int) -> str:
    return f"shard_{k:05d}"


def folder_of(ws) -> Path:
    """Where the finished tokenize stage put its shards (as recorded, not recomputed)."""
    detail = ws.stage_detail("tokenize")
    if "folder" not in detail:
        raise SadedupError(f"stage tokenize has not run in {ws.root}: run `sadedup tokenize {ws.root}`")
    return ws.root / detail["folder"]


PLAN = "shards.json"


def _plan_in(folder: Path, digest: str | None) -> dict[str, Any] | None:
    """The shard plan tokenize wrote in `folder` when it is there and is what it wrote (its
    checksum recorded as the stage's `plan_sum`), else None. The plan names the shards every
    later stage reads: a damaged one is rebuilt, never read as another plan."""
    try:
        raw = (folder / PLAN).read_bytes()
    except OSError:
        return None
    if digest is None or xxhash.xxh3_64_hexdigest(raw) != digest:
        return None
    return json.loads(raw)


def plan_of(ws) -> dict[str, Any]:
    """The plan of the finished tokenize stage: its shard names, their token counts, dtype."""
    folder = folder_of(ws)
    plan = _plan_in(folder, ws.stage_detail("tokenize").get("plan_sum"))
    if plan is None:
        raise SadedupError(f"{folder / PLAN} is missing or damaged: `sadedup run --workdir {ws.root}` (or "
                           f"`sadedup tokenize {ws.root}`) writes it again")
    return plan


def shard_dirs(ws) -> list[Path]:
    """The shard folders of the finished tokenize stage, in order."""
    folder = folder_of(ws)
    return [folder / name for name in plan_of(ws)["shards"]]


def run_tokenizer(ctx: Context) -> Tokenizer:
    """The tokenizer the finished tokenize stage used."""
    spec, trained = run_model(ctx)
    return load_tokenizer(spec, ctx.wf.run.n_workers, trained=trained)


def run_model(ctx: Context) -> tuple[str, str | None]:
    """The finished tokenize stage's tokenizer as a task takes it (task_tokenizer): its spec,
    and the model file a train: spec produced."""
    row = ctx.ws.stage_row("tokenize")
    trained = Tokenize().model_file(ctx, row.key if row is not None else Tokenize().key(ctx))
    return ctx.wf.substring.tokenizer, None if trained is None else str(trained)


class Tokenize(Stage):
    name = "tokenize"
    records = ("tokenize",)

    def settings(self, ctx: Context) -> Any:
        wf = ctx.wf
        kind, _ = parse_spec(wf.substring.tokenizer)
        what = wf.substring.tokenizer_sample if kind == "train" else model_digest(wf.substring.tokenizer)
        order = order_settings(wf)  # the shards hold the documents in document order
        sources = [order[1]] if order is not None and order[1] else []
        return [wf.substring.tokenizer, what, list(self.plan(ctx)), wf.input.priority, *sources]

    def folder(self, ctx: Context, key: str) -> Path:
        spec = ctx.wf.substring.tokenizer
        slug = spec.replace(":", "-") if spec.startswith("train:") else \
            ("bytes" if spec == "bytes" else f"{spec[:2]}-{Path(spec[3:]).stem}")
        return ctx.ws.root / "substring" / f"{slug}_{self.plan(ctx)[0]}tps_{key[:8]}"

    def whole(self, ctx: Context, key: str) -> bool:
        """Every shard of the finished stage is there and still matches its checksum."""
        folder = self.folder(ctx, key)
        plan = _plan_in(folder, ctx.ws.stage_detail(self.name).get("plan_sum"))
        if plan is None:
            return False
        n = len(plan["shards"])
        files = shard_files(ctx.wf.substring.tokenizer)
        return all(ctx.ws.is_done(self.name, chain(key, k), shard=k,
                                  files=[folder / shard_name(k) / f for f in files]) for k in range(n))

    def summary(self, d: dict[str, Any]) -> str:
        return (f"tokenize: {d['documents']} documents, {d['tokens']} tokens ({d['tokenizer']}) in {d['shards']} "
                f"shard(s) of up to {d['shard_tokens']} tokens" + (f" ({d['reused']} reused)" if d['reused'] else ""))

    def plan(self, ctx: Context) -> tuple[int, int]:
        """(tokens a shard holds at most, shards), from the budget, the workers and the bytes
        of the documents that reach the stage (those exact and MinHash left: sized from all
        the ingested bytes, a run that dropped a third gave its two workers 77% and 23% of
        the tokens). The bytes tokenizer's counts are those bytes, so at the automatic size
        its cuts are planned up front, `shards` equal parts (balanced_cuts); shards 0: cut
        as the counts come (plan_cuts), at an explicit substring.shard_tokens or at the size
        a subword tokenizer's text is estimated to need. The stage key carries both, and
        its upstream stamps the documents, so a changed plan is a new key: rebuilt, never
        mixed with the former shards."""
        wf = ctx.wf
        total = self.text_bytes(ctx)
        if parse_spec(wf.substring.tokenizer)[0] == "bytes" and wf.substring.shard_tokens is None and total is not None:
            return shard_tokens(wf), balanced_shards(wf, total)
        return split_shard_tokens(wf, total), 0

    @staticmethod
    def text_bytes(ctx: Context) -> int | None:
        """UTF-8 bytes of the documents the stage tokenizes (None before ingest is done)."""
        row = ctx.ws.stage_row("ingest")
        if row is None or row.status != "done":
            return None
        if not any(graph.node(u).decides for u in graph.before(Tokenize.name, ctx.wf)):
            return json.loads(row.detail or "{}").get("bytes")  # all that was ingested, free
        return candidate_bytes(ctx.ws, "tokenize")  # a scan of the documents table (0.4 s at 510k)

    def trained_path(self, ctx: Context, key: str) -> Path:
        algo_vocab = ctx.wf.substring.tokenizer.split(":", 1)[1].replace(":", "_")
        return ctx.ws.root / "tokenizers" / f"{algo_vocab}_{key[:8]}"

    def tokenizer(self, ctx: Context, key: str, train_if_missing: bool = False) -> Tokenizer:
        return load_tokenizer(ctx.wf.substring.tokenizer, ctx.wf.run.n_workers,
                              trained=self.model_file(ctx, key, train_if_missing))

    def model_file(self, ctx: Context, key: str, train_if_missing: bool = False) -> Path | None:
        """The model file a train: spec produced (trained now with `train_if_missing`), None
        for the other specs."""
        spec = ctx.wf.substring.tokenizer
        if parse_spec(spec)[0] != "train":
            return None
        folder = self.trained_path(ctx, key)
        found = sorted(folder.glob("*.json")) + sorted(folder.glob("*.model")) if folder.exists() else []
        if not found:
            if not train_if_missing:
                raise ConfigError(f"the tokenizer {spec} has not been trained in {ctx.ws.root}: run `sadedup tokenize`")
            found = [self._train(ctx, folder)]
        return found[0]

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
        """Plans the shard cuts on the driver (O(documents), from the token counts) and has
        the executor's tasks encode and write: for a subword tokenizer, EncodePiece tasks
        encode ranges of the visiting order into piece files first (the counts come from
        them); the bytes tokenizer's counts are the text sizes, known up front. WriteShard
        tasks then write each shard from the pieces (or the store), its files renamed into
        place whole, and the driver records each as it finishes."""
        ws, wf = ctx.ws, ctx.wf
        spec = wf.substring.tokenizer
        folder = self.folder(ctx, key)
        trained = self.model_file(ctx, key, train_if_missing=True)
        tok = load_tokenizer(spec, wf.run.n_workers, trained=trained)
        size, parts = self.plan(ctx)
        store = TextStore(ws.root)
        doc_ids = self.visiting_order(ctx)
        files = shard_files(spec)
        folder.mkdir(parents=True, exist_ok=True)
        pieces_dir = folder / "pieces"
        shutil.rmtree(pieces_dir, ignore_errors=True)  # a killed run's pieces are never trusted
        order = folder / "order.npy"  # what the tasks read the visiting order from
        save_npy(order, doc_ids.astype(np.int64, copy=False))
        driver_wrote(ctx, [order])
        sizes = store.nbytes(doc_ids)
        ends = np.cumsum(sizes)

        def intact(k: int, first: int, end: int) -> bool:
            row = ws.stage_row(self.name, k)
            if ctx.force or row is None:
                return False
            d = json.loads(row.detail or "{}")
            return (d.get("first"), d.get("end")) == (first, end) and \
                ws.is_done(self.name, chain(key, k), shard=k, files=[folder / shard_name(k) / f for f in files])

        wrote = 0

        def write(jobs: list[tuple[int, int, int]], pieces: list[tuple[str, int, int]], b=None) -> None:
            """WriteShard tasks for shards (k, first, end), each recorded as it finishes."""
            nonlocal wrote
            wrote += len(jobs)
            tasks = [WriteShard(str(ws.root), str(order), str(folder / shard_name(k)), f, e, spec, tok.dtype.str,
                                tuple(p for p in pieces if p[1] < e and p[2] > f)) for k, f, e in jobs]
            for i, res in ctx.executor.imap(tasks):
                k, f, e = jobs[i]
                sdir = folder / shard_name(k)
                ws.mark(self.name, chain(key, k), "done", shard=k, files=[sdir / x for x in files], artifact=sdir,
                        **res)
                faults.point("tokenize.shard")
                if b is not None:
                    b.advance(int(sizes[f:e].sum()))

        # a shard past the recorded ones may be on disk with the same cuts already (a killed
        # run's, finished out of order): kept
        def unwritten(k0: int, new: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
            return [(k, f, e) for k, (f, e) in enumerate(new, k0) if not intact(k, f, e)]

        cuts: list[tuple[int, int]]
        if isinstance(tok, ByteTokenizer):  # the counts are the text sizes: every cut is known now
            # planned whole, the same plan for the same key: a shard on disk with the planned
            # cuts and intact files is kept (recorded or a killed run's, finished out of
            # order), any other is written
            cuts = (balanced_cuts(sizes, parts, size) if parts else plan_cuts(sizes, size, 0)) or [(0, 0)]
            todo = unwritten(0, cuts)
            rebuild = [j for j in todo if (row := ws.stage_row(self.name, j[0])) is not None
                       and row.key == chain(key, j[0]) and row.status == "done"]
            with bar("tokenize (bytes)", int(sum(ends[e - 1] - (ends[f - 1] if f else 0) for _, f, e in todo if e > f)),
                     "bytes") as b:
                write(todo, [], b)
        else:
            # the shards recorded done in a row from the first keep their cuts (a corrupt one is
            # rebuilt from its own documents); the cuts after the last of them are planned anew,
            # the same as before, since the encoding is deterministic
            cuts = []
            while (row := ws.stage_row(self.name, len(cuts))) is not None and row.key == chain(key, len(cuts)) \
                    and row.status == "done":
                d = json.loads(row.detail or "{}")
                cuts.append((d["first"], d["end"]))
            start = cuts[-1][1] if cuts else 0
            # recorded shards whose files are damaged or gone: rebuilt with their own cuts
            rebuild = [(k, f, e) for k, (f, e) in enumerate(cuts) if not intact(k, f, e)]
            todo_bytes = int(sum(ends[e - 1] - (ends[f - 1] if f else 0) for _, f, e in rebuild if e > f)) + \
                int(ends[-1] - (ends[start - 1] if start else 0) if start < len(doc_ids) else 0)
            # a subword tokenizer's counts come from encoding: EncodePiece tasks encode ranges of
            # the visiting order, a wave of them at a time, and every shard the wave's counts close
            # is written before the next wave, so an interrupted run keeps the shards written and
            # loses one wave's encoding at most, and the pieces on disk stay a wave and a shard
            limit = int(np.clip(todo_bytes // max(4 * ctx.executor.workers, 1), BATCH_BYTES, PIECE_BYTES))
            threads = max(1, wf.run.n_workers // max(ctx.executor.workers, 1))
            wave = 2 * max(ctx.executor.workers, 1)
            pieces_dir.mkdir()

            def encode(spans: list[tuple[int, int]], b) -> list[tuple[tuple[str, int, int], np.ndarray]]:
                tasks = [EncodePiece(str(ws.root), str(order), a, e, str(pieces_dir / f"piece_{a:012d}"), spec,
                                     None if trained is None else str(trained), threads) for a, e in spans]
                for i, _ in ctx.executor.imap(tasks):
                    b.advance(int(sizes[spans[i][0]:spans[i][1]].sum()))
                return [((t.out, t.first, t.end), np.load(Path(t.out) / "counts.npy")) for t in tasks]

            with bar(f"tokenize ({tok.spec})", todo_bytes, "bytes") as b:
                # damaged shards first: their cuts stand, so their pieces are all they need
                done = encode([ab for _, f, e in rebuild if e > f for ab in byte_ranges(ends, f, e, limit)], b)
                write(rebuild, [p for p, _ in done])
                for (p, _, _), _ in done:
                    shutil.rmtree(p)
                spans = list(byte_ranges(ends, start, len(doc_ids), limit))
                held: list[tuple[tuple[str, int, int], np.ndarray]] = []  # pieces of the shard still open
                first = start
                for w in range(0, len(spans), wave):
                    held += encode(spans[w:w + wave], b)
                    counts = np.concatenate([c[max(first - p[1], 0):] for p, c in held])
                    planned = plan_cuts(counts, size, first)
                    closed = planned if w + wave >= len(spans) else planned[:-1]  # the last may go on
                    write(unwritten(len(cuts), closed), [p for p, _ in held])
                    cuts += closed
                    first = cuts[-1][1] if cuts else 0
                    for p, _ in [h for h in held if h[0][2] <= first]:
                        shutil.rmtree(p[0])
                    held = [h for h in held if h[0][2] > first]
                if not cuts:  # no documents: one empty shard, so the stages after find a shard
                    cuts.append((0, 0))
                    write([(0, 0, 0)], [])
        names = [shard_name(k) for k in range(len(cuts))]
        self._drop_stale(folder, names)
        ws.prov.forget_shards(self.name, range(len(cuts)))
        shutil.rmtree(pieces_dir, ignore_errors=True)
        order.unlink(missing_ok=True)
        token_counts = [int(json.loads(ws.stage_row(self.name, k).detail)["tokens"]) for k in range(len(cuts))]
        plan = {"shards": names, "tokens": token_counts, "dtype": tok.dtype.str, "shard_tokens": size,
                "tokenizer": tok.spec}
        raw = json.dumps(plan).encode()
        with replaced(folder / PLAN) as f:
            f.write(raw)
        return {"shards": len(cuts), "reused": len(cuts) - wrote, "rebuilt": len(rebuild),
                "plan_sum": xxhash.xxh3_64_hexdigest(raw),  # whole() and plan_of check the plan read against it
                "tokens": int(sum(token_counts)), "documents": len(doc_ids), "shard_tokens": size,
                "tokenizer": tok.spec, "vocab_size": tok.vocab_size, "folder": str(folder.relative_to(ws.root))}

    @staticmethod
    def _drop_stale(folder: Path, names: list[str]) -> None:
        """Shard folders past the shards planned (a former run's, with other settings or cuts)."""
        for stale in folder.glob("shard_*"):
            if stale.name not in names:
                shutil.rmtree(stale)

    @staticmethod
    def visiting_order(ctx: Context) -> np.ndarray:
        """The substring stage's documents in the order it visits them (keep.visiting_order)."""
        doc_ids = candidate_documents(ctx.ws, "tokenize")[0]
        order = visiting_order(ctx.ws, doc_ids)
        return doc_ids if order is None else doc_ids[order]

def byte_ranges(ends: np.ndarray, first: int, end: int, limit: int) -> Iterator[tuple[int, int]]:
    """Ranges [i, j) of documents first..end (ends: the cumulative sizes of the visiting
    order's texts) of up to `limit` bytes each, at least one document each."""
    i = first
    while i < end:
        base = ends[i - 1] if i else 0
        j = min(end, max(i + 1, int(np.searchsorted(ends, base + limit, side="right"))))
        yield i, j
        i = j


def plan_cuts(counts: np.ndarray, size: int, first: int) -> list[tuple[int, int]]:
    """The shards (first, end) of documents first.. with `counts` tokens each, in order: a
    shard closes before the document that would take it over `size` tokens (a longer
    document gets a shard of its own)."""
    cuts = []
    at, acc = first, 0
    for i, c in enumerate(counts.tolist(), first):
        if acc and acc + c > size:
            cuts.append((at, i))
            at, acc = i, 0
        acc += c
    if first + len(counts) > at:
        cuts.append((at, first + len(counts)))
    return cuts


def balanced_cuts(counts: np.ndarray, parts: int, size: int) -> list[tuple[int, int]]:
    """The shards (first, end) of documents with `counts` tokens each, in order, cut into
    `parts` shards of about equal tokens: shard i ends at the document end nearest i/parts
    of the tokens, but never takes more than `size` tokens (a longer document gets a shard
    of its own); what the last would hold over `size` is cut as plan_cuts does. Empty for
    no documents."""
    n = len(counts)
    if not n:
        return []
    ends = np.cumsum(counts, dtype=np.int64)
    total = int(ends[-1])
    cuts: list[tuple[int, int]] = []
    at = 0  # the open shard's first document
    for i in range(1, parts):
        if at >= n:
            break
        base = int(ends[at - 1]) if at else 0
        target = total * i // parts
        j = int(np.searchsorted(ends, target))  # ends[j] >= target > ends[j - 1]
        e = j + 1 if j < n and (j == 0 or int(ends[j]) - target <= target - int(ends[j - 1])) else j
        e = min(e, int(np.searchsorted(ends, base + size, side="right")))  # no more than `size` ...
        e = max(e, at + 1)  # ... but at least one document
        if e >= n:
            break
        cuts.append((at, e))
        at = e
    if at < n:
        cuts += plan_cuts(np.asarray(counts[at:]), size, at)
    return cuts


@functools.lru_cache(maxsize=4)
def task_tokenizer(spec: str, threads: int = 1, trained: str | None = None) -> Tokenizer:
    """The tokenizer a task uses (run_model names it), loaded once per worker process."""
    return load_tokenizer(spec, threads, trained=trained)


def _batches(tok: Tokenizer, store: TextStore, doc_ids: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray, tuple]]:
    """(concatenated tokens, tokens per document, character bounds) for batches of up to
    BATCH_BYTES of a subword tokenizer's documents.

    The next batch is encoded on a helper thread (the libraries release the GIL) while this
    one is gathered, so the task adds little to them. The bounds (pack_char_bounds) come from
    that same encoding."""
    bounds = list(byte_ranges(np.cumsum(store.nbytes(doc_ids)), 0, len(doc_ids), BATCH_BYTES))

    def encode(i: int, j: int) -> tuple[np.ndarray, np.ndarray, tuple]:
        docs = doc_ids[i:j]
        tokens, counts, cs, ce = tok.encode_flat_offsets(store.raw(docs) if tok.takes_bytes else store.texts(docs))
        return tokens.astype(tok.dtype, copy=False), counts, pack_char_bounds(cs, ce, counts)

    with ThreadPoolExecutor(1) as pool:
        ahead = pool.submit(encode, *bounds[0]) if bounds else None
        for n in range(len(bounds)):
            batch = ahead.result()
            if n + 1 < len(bounds):
                ahead = pool.submit(encode, *bounds[n + 1])
            yield batch


def _joined(dtype: np.dtype, parts: list[tuple]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokens, deltas and exceptions of consecutive pieces (`_piece`) as one run: the
    exceptions move from their piece's start to the run's."""
    tokens = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype)
    deltas = np.concatenate([p[1] for p in parts], axis=1) if parts else np.zeros((2, 0), np.uint8)
    at, exc = 0, []
    for p in parts:
        x = p[2].copy()
        x[0] += at
        exc.append(x)
        at += p[0].shape[0]
    return tokens.astype(dtype, copy=False), np.ascontiguousarray(deltas), \
        (np.concatenate(exc, axis=1) if exc else np.zeros((3, 0), np.int64))


PIECE_FILES = ("tokens.npy", "counts.npy") + CHARS_FILES


@dataclass(frozen=True)
class EncodePiece:
    """Task: encodes documents [first, end) of the visiting order (`order`, a .npy of
    doc_ids) with a subword tokenizer into piece files in `out`: tokens, tokens per document
    and their character bounds, for WriteShard to cut into shards. Each file is renamed into
    place whole; a rerun of the stage never reads a former run's pieces."""
    root: str
    order: str
    first: int
    end: int
    out: str
    spec: str
    trained: str | None
    threads: int

    def __call__(self) -> dict[str, Any]:
        tok = task_tokenizer(self.spec, self.threads, self.trained)
        store = TextStore(Path(self.root))
        ids = load_npy(Path(self.order))[self.first:self.end]
        parts, counts = [], []
        for tokens, c, chars in _batches(tok, store, ids):
            parts.append(_piece(tokens, chars, 0, len(tokens)))
            counts.append(c)
        tokens, deltas, exc = _joined(tok.dtype, parts)
        out = Path(self.out)
        out.mkdir(parents=True, exist_ok=True)
        arrays = (tokens, np.concatenate(counts + [np.zeros(0, np.int64)]).astype(np.int64), deltas, exc)
        for name, arr in zip(PIECE_FILES, arrays):
            save_npy(out / name, arr)
        return {"tokens": len(tokens), "wrote": file_bytes([out / f for f in PIECE_FILES])}


@dataclass(frozen=True)
class WriteShard:
    """Task: writes one shard (SHARD_FILES, and a subword tokenizer's CHARS_FILES) of
    documents [first, end) of the visiting order: for the bytes tokenizer from the store,
    else sliced from the EncodePiece files `pieces` ((folder, first, end) each) that cover
    them. Every file is renamed into place whole; returns the shard's record."""
    root: str
    order: str
    shard_dir: str
    first: int
    end: int
    spec: str
    dtype: str
    pieces: tuple[tuple[str, int, int], ...] = ()

    def __call__(self) -> dict[str, Any]:
        store = TextStore(Path(self.root))
        ids = np.array(load_npy(Path(self.order))[self.first:self.end], dtype=np.int64)
        sdir = Path(self.shard_dir)
        sdir.mkdir(exist_ok=True)
        if parse_spec(self.spec)[0] == "bytes":
            counts = store.nbytes(ids).astype(np.int64)
            if len(ids) and np.all(np.diff(ids) == 1):  # one run of texts.bin: copied in the kernel
                save_npy_bytes(sdir / "tokens.npy", store.path, int(store.offsets[ids[0]]), int(counts.sum()))
            else:
                save_npy(sdir / "tokens.npy", ByteTokenizer().gather(store.data, store.offsets, ids)[0])
        else:
            parts, cs = [], []
            for folder, a, b in self.pieces:
                p = Path(folder)
                pc = np.load(p / "counts.npy")
                po = np.concatenate(([0], np.cumsum(pc)))
                lo, hi = max(a, self.first) - a, min(b, self.end) - a
                cs.append(pc[lo:hi])
                parts.append(_piece(load_npy(p / "tokens.npy"), (load_npy(p / CHARS_FILES[0]),
                                                                 np.load(p / CHARS_FILES[1])), int(po[lo]), int(po[hi])))
            counts = np.concatenate(cs + [np.zeros(0, np.int64)]).astype(np.int64)
            if int(counts.sum()) != sum(len(q[0]) for q in parts) or len(counts) != len(ids):
                raise SadedupError(f"tokenize: the pieces {[q[0] for q in self.pieces]} do not cover documents "
                                   f"{self.first}..{self.end} of the visiting order")
            tokens, deltas, exc = _joined(np.dtype(self.dtype), parts)
            save_npy(sdir / "tokens.npy", tokens)
            save_npy(sdir / CHARS_FILES[0], deltas)
            save_npy(sdir / CHARS_FILES[1], exc)
        offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        save_npy(sdir / "docs.npy", ids)
        save_npy(sdir / "offsets.npy", offsets)
        return {"tokens": int(offsets[-1]), "documents": len(ids), "first": self.first, "end": self.end,
                **task_sums([sdir / f for f in shard_files(self.spec)])}
