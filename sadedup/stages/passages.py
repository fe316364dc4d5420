r"""Passages: near-duplicate passages inside otherwise different documents, cut out.

Words are the matches of Python's ``\w+`` in the original text, compared case-folded
(``str.casefold``). A document of n words is cut into chunks of ``words`` consecutive words,
one starting at every multiple of ``stride``: chunk k covers words [k*stride, min(k*stride +
words, n)) for k = 0 .. K-1, K = 1 when n <= words (a document without words has no chunk),
else ceil((n - words) / stride) + 1, so the last chunk ends at the last word. A chunk's
shingles are its word n-grams (``ngram``); a chunk shorter than ``ngram`` words has none and
never matches. Its characters run from its first word's start to its last word's end.

Chunks are ordered as the documents are visited (input order, or input.priority first), then
by position. In that order, a chunk is a near duplicate when an earlier chunk of a surviving
document verifies against it at ``threshold`` (estimated Jaccard from the signatures, or the
exact Jaccard of the shingle sets); an earlier chunk of the same document counts, except one
that overlaps it (a chunk is not a copy of its own words). The characters of a document's
near-duplicate chunks are cut (their union), then the drop rule; a dropped document's chunks
make no later chunk a near duplicate. Each near-duplicate chunk is one span (spans of one
document may overlap), its source the earliest verified chunk of a surviving document, with
that pair's similarity.

How it runs, the document MinHash stage's machinery over chunks (sadedup/lsh.py):

1. Signatures, a task per piece of about CHUNK_BYTES of text (resumable, on the executor):
   the native kernel finds the words, hashes their case folds, rolls word n-grams and takes
   the chunks' minima, each shingle hashed once whatever the overlap of the chunks.

       passages/<config>_<key>/docs.npy             int64 doc_id of every document, in visiting order
                              chunk_00000/sig.npy   uint32 (chunks x num_perm)
                                          bands.npy uint64 (bands x chunks) band hashes
                                          chunks.npy int64 (5 x chunks): document row, chunk
                                                    number in it, first and end code point, shingles
                              chunks.npy            the pieces' chunks.npy joined (memory-mapped)

2. Banding, a band per task (as minhash.BandPairs): equal band hashes make candidate pairs,
   overlapping chunks of one document left out.
3. Verification of the candidate pairs.
4. The keep-first walk (native): documents in order, each chunk against its verified earlier
   partners, the drop rule as it goes. Every candidate pair and its similarity are kept
   (pairs.npy, pair_similarity.npy) for sweeps and reports.
"""
from __future__ import annotations

import dataclasses
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from .. import lsh as mh
from .. import native
from ..config import PassagesConfig, Workflow
from ..executor import InlineExecutor
from ..progress import say
from ..workspace import load_npy, save_npy, writable_npy
from .base import Context, ShardJob, chain
from .exact import open_texts, text_chunks
from .sizing import usable_budget
from .spans import Cuts, SpanStage

# a piece of text per signature task: about this much, at most this many documents
CHUNK_BYTES = 32 << 20
CHUNK_DOCS = 1 << 17
# a task holds about this many bytes per byte of its text (signatures, band hashes, words)
TASK_BYTES_PER_BYTE = 2
# gathered signatures or shingle sets larger than this live in a memory-mapped file
IN_MEMORY = 256 << 20
# band hashes (chunks x bands) below which a one-piece corpus bands in the driver
INLINE_BAND_ENTRIES = 1 << 22
# the MinHash seed (the permutations and the shingle hash): fixed, like minhash.seed's default
SEED = 1
# changes when words, chunks, shingles or the walk change, so old results are not reused
VERSION = 1
CHUNK_FILES = ("sig.npy", "bands.npy", "chunks.npy")
FOLD_EXT = 0x80000000


@lru_cache(maxsize=1)
def word_tables() -> tuple[bytes, np.ndarray, np.ndarray, np.ndarray]:
    r"""The kernels' view of ``\w`` and ``str.casefold``, built from Python's own (see
    native/passages.c): the bitmap of code points matching ``\w``, and the folds of every
    block of 256 code points that has one. Once per process, about 0.2 s."""
    n = 0x110000
    # every code point but the surrogates, which no text read from valid UTF-8 holds
    cps = np.r_[np.arange(0xD800), np.arange(0xE000, n)].astype(np.uint32)
    s = cps.tobytes().decode("utf-32-le")
    runs = np.array([m.span() for m in re.finditer(r"\w+", s)], dtype=np.int64).reshape(-1, 2)
    edge = np.zeros(len(s) + 1, dtype=np.int64)
    np.add.at(edge, runs[:, 0], 1)
    np.add.at(edge, runs[:, 1], -1)
    flags = np.zeros(n, dtype=bool)
    flags[cps] = np.cumsum(edge[:-1]) > 0
    page = np.full(n >> 8, -1, dtype=np.int32)
    blocks: list[np.ndarray] = []
    ext = [0]  # entry 0 unused: a fold of several code points is never at offset 0
    for b in range(n >> 8):
        lo = b << 8
        if 0xD800 <= lo < 0xE000:
            continue
        at = lo if lo < 0xD800 else lo - 0x800
        block = s[at:at + 256]
        if block.casefold() == block:  # casefold works per character: no fold in the block
            continue
        row = np.arange(lo, lo + 256, dtype=np.uint32)
        for k, c in enumerate(block):
            f = c.casefold()
            if f == c:
                continue
            if len(f) == 1:
                row[k] = ord(f)
            else:
                row[k] = FOLD_EXT | len(ext)
                ext.extend([len(f), *map(ord, f)])
        page[b] = len(blocks)
        blocks.append(row)
    fold_block = np.concatenate(blocks) if blocks else np.arange(256, dtype=np.uint32)
    return (np.packbits(flags, bitorder="little").tobytes(), page, fold_block, np.array(ext, dtype=np.uint32))


def seeds(cfg: PassagesConfig) -> tuple[int, np.ndarray]:
    """(shingle hash seed, permutation seeds): as lsh.Params derives them for [minhash]."""
    w = mh.splitmix64(SEED, cfg.num_perm + 1)
    return w[0], np.array([x >> 32 for x in w[1:]], dtype=np.uint32)


def config_string(cfg: PassagesConfig) -> str:
    """`256w_128s_5ng_14b_8r_112p_t0.8`: words, stride, n-gram, bands, rows, permutations, threshold."""
    return (f"{cfg.words}w_{cfg.stride}s_{cfg.ngram}ng_{cfg.bands}b_{cfg.rows}r_{cfg.num_perm}p_"
            f"t{cfg.threshold:g}")


def task_bytes(wf: Workflow) -> int:
    """Text per signature task: CHUNK_BYTES, less when a worker's half of the budget would not
    hold what a task keeps in memory."""
    share = usable_budget(wf) // max(wf.run.n_workers, 1) // 2
    return min(CHUNK_BYTES, max(1 << 20, share // TASK_BYTES_PER_BYTE))


def _docs(texts: np.ndarray, offsets: np.ndarray, ids: np.ndarray) -> tuple:
    """The documents' byte ranges in the ingest texts, as the kernels take them."""
    ids = np.asarray(ids, dtype=np.int64)
    return texts if len(texts) else b"", offsets[ids].astype(np.int64), offsets[ids + 1].astype(np.int64)


def _chunk_task(root: str, folder: str, k: int, i: int, j: int, cfg: dict) -> dict:
    """Chunks and signatures of documents i..j (rows of docs.npy) into folder/piece k."""
    conf = PassagesConfig(**cfg)
    tables = word_tables()
    shingle_seed, perm = seeds(conf)
    ids = np.load(Path(folder) / "docs.npy", mmap_mode="r")[i:j]
    texts, offsets = open_texts(Path(root))
    A, starts, ends = _docs(texts, offsets, ids)
    nw, nc = native.passage_count(A, starts, ends, tables, conf.words, conf.stride)
    chunk_off = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(nc, out=chunk_off[1:])
    rows = int(chunk_off[-1])
    out = Path(folder) / f"chunk_{k:05d}"
    out.mkdir(exist_ok=True)
    tmp = out / "sig.npy.tmp"
    # numpy cannot map an empty file: a piece without chunks gets a plain empty array
    sig = writable_npy(tmp, np.uint32, (rows, conf.num_perm)) if rows else np.zeros((0, conf.num_perm), np.uint32)
    nsh, cs, ce = native.passage_minhash(A, starts, ends, tables, conf.words, conf.stride, conf.ngram,
                                         shingle_seed, perm, chunk_off, sig)
    doc_row = np.repeat(np.arange(i, j, dtype=np.int64), nc)
    number = np.arange(rows, dtype=np.int64) - np.repeat(chunk_off[:-1], nc)
    save_npy(out / "chunks.npy", np.stack([doc_row, number, cs, ce, nsh]))
    save_npy(out / "bands.npy", mh.band_hashes(sig, conf.bands, conf.rows))
    if rows:
        sig.flush()
        del sig
        tmp.replace(out / "sig.npy")
    else:
        save_npy(out / "sig.npy", sig)
    return {"documents": j - i, "words": int(nw.sum()), "chunks": rows, "no_shingle": int((nsh == 0).sum())}


@dataclass(frozen=True)
class SignaturePiece:
    """Task: chunks and signatures of documents i..j (rows of docs.npy) into folder/chunk_k."""
    root: str
    folder: str
    k: int
    i: int
    j: int
    cfg: dict

    def __call__(self) -> dict:
        return _chunk_task(self.root, self.folder, self.k, self.i, self.j, self.cfg)


@dataclass(frozen=True)
class BandPairs:
    """Task: the candidate pairs of one band (minhash.BandPairs over chunks), overlapping
    chunks of one document left out here already: with a small stride they agree in most
    bands, and would otherwise be most of what the driver gathers. Into `out` (2 x pairs)."""
    dirs: tuple[str, ...]
    band: int
    has: str
    chunks: str
    out: str

    def __call__(self) -> dict:
        h = np.concatenate([load_npy(Path(d) / "bands.npy")[self.band] for d in self.dirs] + [np.zeros(0, np.uint64)])
        has = np.load(self.has)
        pi, pj = mh.bucket_pairs(h[has], has)
        keep = ~_own_overlap(load_npy(Path(self.chunks)), pi, pj)
        save_npy(Path(self.out), np.stack([pi[keep].astype(np.int64), pj[keep].astype(np.int64)]))
        return {"pairs": int(keep.sum()), "own_overlaps": int(len(pi) - keep.sum())}


def _own_overlap(chunks: np.ndarray, pi: np.ndarray, pj: np.ndarray) -> np.ndarray:
    """Pairs i < j of chunks of one document that share words: a chunk is not a copy of its
    own words, so these never match."""
    return (chunks[0][pi] == chunks[0][pj]) & (chunks[2][pj] < chunks[3][pi])


@contextmanager
def _timed(times: dict[str, float], phase: str) -> Iterator[None]:
    t0 = time.perf_counter()
    yield
    times[phase] = time.perf_counter() - t0


def _scratch(folder: Path, name: str, dtype, shape: tuple[int, ...]) -> np.ndarray:
    """An array for gathered data: in memory when small, else a memory-mapped file."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if size > IN_MEMORY:
        return writable_npy(folder / name, dtype, shape)
    return np.empty(shape, dtype=dtype)


def _signature_rows(sigs: list[np.ndarray], rows: np.ndarray, r: np.ndarray, num_perm: int) -> np.ndarray:
    """The signatures of chunk rows r (any order), from the pieces' memory-mapped files."""
    out = np.empty((len(r), num_perm), dtype=np.uint32)
    piece = np.searchsorted(rows, r, side="right") - 1
    order = np.argsort(piece, kind="stable")
    cuts = np.searchsorted(piece[order], np.arange(len(sigs) + 1))
    for k in np.flatnonzero(np.diff(cuts)):
        at = order[cuts[k]:cuts[k + 1]]
        out[at] = sigs[k][r[at] - rows[k]]
    return out


def _estimate(dirs: list[Path], rows: np.ndarray, pi: np.ndarray, pj: np.ndarray, num_perm: int,
              block: int = 1 << 15) -> np.ndarray:
    """Signature agreement of every pair, a block of pairs at a time, the rows read where they
    lie: no copy of the candidates' signatures is gathered (with small chunks nearly every
    chunk is a candidate, and their signatures are several times the text)."""
    sigs = [load_npy(d / "sig.npy") for d in dirs]
    out = np.empty(len(pi), dtype=np.float64)
    for a in range(0, len(pi), block):
        b = min(a + block, len(pi))
        x = _signature_rows(sigs, rows, pi[a:b], num_perm)
        y = _signature_rows(sigs, rows, pj[a:b], num_perm)
        out[a:b] = np.count_nonzero(x == y, axis=1) / num_perm
    return out


def _save_pairs(folder: Path, pi: np.ndarray, pj: np.ndarray, sim: np.ndarray) -> None:
    """Every candidate pair (pairs.npy, 2 x pairs) and its similarity, for sweeps and reports;
    written through a map, row by row, so no stacked copy is made."""
    if len(pi):
        tmp = folder / "pairs.npy.tmp"
        arr = writable_npy(tmp, np.int64, (2, len(pi)))
        arr[0] = pi
        arr[1] = pj
        arr.flush()
        del arr
        tmp.replace(folder / "pairs.npy")
    else:
        save_npy(folder / "pairs.npy", np.zeros((2, 0), dtype=np.int64))
    save_npy(folder / "pair_similarity.npy", sim)


class Passages(SpanStage):
    name = "passages"
    version = VERSION

    def settings(self, ctx: Context) -> Any:
        return dataclasses.asdict(ctx.wf.passages)

    def folder(self, ctx: Context, key: str) -> Path:
        return ctx.ws.root / "passages" / f"{config_string(ctx.wf.passages)}_{key[:8]}"

    def summary(self, d: dict[str, Any]) -> str:
        return (f"passages {d['config']}: {d['chunks']} chunks of {d['documents']} documents, "
                f"{d['candidate_pairs']} candidate pairs, {d['verified_pairs']} verified ({d['verify']}), "
                f"{d['spans']} near-duplicate chunk(s) cut from {d['cut']} document(s), {d['dropped']} dropped")

    def decide(self, ctx: Context, key: str, doc_ids: np.ndarray, n_chars: np.ndarray) -> Cuts:
        cfg = ctx.wf.passages
        times: dict[str, float] = {}
        curve = mh.s_curve(cfg.bands, cfg.rows)
        say(f"passages {config_string(cfg)}: P(candidate | Jaccard J) = "
            + ", ".join(f"{p:.3f} at {j:g}" for j, p in curve.items()))
        folder = self.folder(ctx, key)
        with _timed(times, "signatures"):
            dirs, rows = self._signatures(ctx, key, folder, doc_ids)
        chunks = load_npy(folder / "chunks.npy")
        chunk_doc, number, cstart, cend, nsh = (chunks[r] for r in range(5))
        with _timed(times, "banding"):
            pi, pj, own = self._candidate_pairs(ctx, folder, dirs, nsh)
        with _timed(times, "verify"):
            sim = self._similarity(ctx, folder, dirs, rows, doc_ids, chunk_doc, number, nsh, pi, pj)
        _save_pairs(folder, pi, pj, sim)
        ok = sim >= cfg.threshold
        n_candidates, n_verified = len(pi), int(ok.sum())
        with _timed(times, "walk"):
            # each chunk's verified earlier partners, ascending: the walk takes the most similar that survives
            vi, vj, vs = pi[ok], pj[ok], sim[ok]
            del pi, pj, sim, ok  # the candidates are on disk now; only the verified pairs go on
            order = np.lexsort((vi, vj))
            vi, vj, vs = vi[order], vj[order], vs[order]
            del order
            n = len(chunk_doc)
            pair_off = np.searchsorted(vj, np.arange(n + 1)).astype(np.int64)
            chunk_off = np.searchsorted(chunk_doc, np.arange(len(doc_ids) + 1)).astype(np.int64)
            src, ssim, removed, dropped = native.passage_walk(chunk_off, chunk_doc, cstart, cend, n_chars, pair_off,
                                                              vi, vs, cfg.drop_fraction)
        for scratch in ("has.npy", "sets.npy"):
            (folder / scratch).unlink(missing_ok=True)
        dup = np.flatnonzero(src >= 0)
        s = src[dup]
        _, offsets = open_texts(ctx.ws.root)
        return Cuts(
            doc_id=doc_ids[chunk_doc[dup]], char_start=cstart[dup], char_end=cend[dup],
            src_doc_id=doc_ids[chunk_doc[s]], src_char_start=cstart[s], src_char_end=cend[s],
            dropped=doc_ids[dropped], removed_chars=int(removed[~dropped].sum()),
            extra={"similarity": ssim[dup]},
            detail={"config": config_string(cfg), "s_curve": {str(j): round(p, 4) for j, p in curve.items()},
                    "verify": cfg.verify, "threshold": cfg.threshold, "words": cfg.words, "stride": cfg.stride,
                    "chunks": int(n), "no_shingle": int((nsh == 0).sum()), "pieces": len(dirs),
                    "bytes": int((offsets[doc_ids + 1] - offsets[doc_ids]).sum()) if len(doc_ids) else 0,
                    "candidate_pairs": n_candidates, "own_overlaps": own, "verified_pairs": n_verified,
                    "near_duplicate_chunks": int(len(dup)),
                    "seconds": {k: round(v, 3) for k, v in times.items()} | {"total": round(sum(times.values()), 3)},
                    "folder": str(folder.relative_to(ctx.ws.root))})

    def _signatures(self, ctx: Context, key: str, folder: Path, doc_ids: np.ndarray) -> tuple[list[Path], np.ndarray]:
        """1. Chunks and signatures, a piece of text per task (finished pieces are kept); the
        pieces' chunk tables joined into folder/chunks.npy. Returns the pieces' folders and
        their first chunk rows (one more entry: the number of chunks)."""
        ws, cfg = ctx.ws, ctx.wf.passages
        if folder.parent.exists():
            for other in folder.parent.iterdir():  # results of other settings: never read again
                if other != folder:
                    shutil.rmtree(other, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        docs_key = xxhash.xxh3_64_hexdigest(doc_ids.tobytes())
        if not (folder / "docs.npy").exists() or not np.array_equal(np.load(folder / "docs.npy"), doc_ids):
            save_npy(folder / "docs.npy", doc_ids)
        _, offsets = open_texts(ws.root)
        pieces = list(text_chunks(offsets, doc_ids, task_bytes(ctx.wf), CHUNK_DOCS))
        dirs = [folder / f"chunk_{k:05d}" for k in range(len(pieces))]
        self.map_shards(ctx, self.name, "passages", [
            ShardJob(k, chain(key, docs_key, k, i, j), [dirs[k] / f for f in CHUNK_FILES],
                     SignaturePiece(str(ws.root), str(folder), k, i, j, dataclasses.asdict(cfg)))
            for k, (i, j) in enumerate(pieces)])
        counts = [int(np.load(d / "chunks.npy", mmap_mode="r").shape[1]) for d in dirs]
        rows = np.zeros(len(dirs) + 1, dtype=np.int64)
        np.cumsum(counts, out=rows[1:])
        # the joined table is written through a map, piece by piece: never all in memory
        path = folder / "chunks.npy"
        if rows[-1]:
            table = writable_npy(folder / "chunks.npy.tmp", np.int64, (5, int(rows[-1])))
            for d, a, b in zip(dirs, rows[:-1], rows[1:]):
                table[:, a:b] = load_npy(d / "chunks.npy")
            table.flush()
            del table
            (folder / "chunks.npy.tmp").replace(path)
        else:
            save_npy(path, np.zeros((5, 0), dtype=np.int64))
        return dirs, rows

    @staticmethod
    def _candidate_pairs(ctx: Context, folder: Path, dirs: list[Path],
                         nsh: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """2. Banding, a band per task: candidate chunk pairs (rows, i < j, each pair once),
        and how many band pairs were overlapping chunks of one document."""
        cfg = ctx.wf.passages
        n = max(len(nsh), 1)
        save_npy(folder / "has.npy", np.flatnonzero(nsh > 0))
        tasks = [BandPairs(tuple(map(str, dirs)), band, str(folder / "has.npy"), str(folder / "chunks.npy"),
                           str(folder / f"pairs_{band:03d}.npy")) for band in range(cfg.bands)]
        # pairs as codes i * n + j: one array, sorted, and decoded once at the end
        codes: list[np.ndarray] = [np.zeros(0, np.int64)]   # codes[0]: the distinct pairs so far
        own = 0
        # a corpus of one piece was read in this process (no pool was started): when its bands
        # are small too, starting one for them would cost more than they do
        small = len(dirs) == 1 and len(nsh) * cfg.bands < INLINE_BAND_ENTRIES
        executor = InlineExecutor() if small else ctx.executor
        for b, res in executor.imap(tasks):
            own += res["own_overlaps"]
            pairs = np.load(tasks[b].out)
            codes.append(pairs[0] * n + pairs[1])
            del pairs
            Path(tasks[b].out).unlink()
            # a close pair comes from most bands: fold the lists into distinct pairs as they
            # come, once the new ones outnumber the distinct ones so far (memory stays a small
            # multiple of the distinct pairs, and each pair is sorted a few times at most)
            if sum(len(c) for c in codes[1:]) > max(1 << 22, len(codes[0])):
                codes = [mh.distinct(np.concatenate(codes))]
        distinct = mh.distinct(np.concatenate(codes))
        del codes
        return distinct // n, distinct % n, own

    def _similarity(self, ctx: Context, folder: Path, dirs: list[Path], rows: np.ndarray, doc_ids: np.ndarray,
                    chunk_doc: np.ndarray, number: np.ndarray, nsh: np.ndarray, pi: np.ndarray,
                    pj: np.ndarray) -> np.ndarray:
        """3. The similarity of every candidate pair: signature agreement, or exact Jaccard of
        the shingle sets (recomputed for the chunks in some pair only)."""
        cfg = ctx.wf.passages
        if cfg.verify == "estimate":
            return _estimate(dirs, rows, pi, pj, cfg.num_perm)
        nodes = mh.distinct(np.concatenate([pi, pj]))
        ei, ej = np.searchsorted(nodes, pi), np.searchsorted(nodes, pj)
        tables = word_tables()
        shingle_seed, _ = seeds(cfg)
        texts, offsets = open_texts(ctx.ws.root)
        cap = nsh[nodes]
        offs = np.zeros(len(nodes) + 1, dtype=np.int64)
        np.cumsum(cap, out=offs[1:])
        H = _scratch(folder, "sets.npy", np.uint64, (int(offs[-1]),))
        counts = np.zeros(len(nodes), dtype=np.int64)
        # the chunks' documents, a piece of text at a time; chunks are grouped by document
        node_doc = chunk_doc[nodes]            # nondecreasing: rows are in document order
        first = np.flatnonzero(np.r_[True, node_doc[1:] != node_doc[:-1]]) if len(nodes) else np.zeros(0, np.int64)
        docs = node_doc[first]
        first = np.r_[first, len(nodes)]
        for a, b in text_chunks(offsets, doc_ids[docs], CHUNK_BYTES, CHUNK_DOCS):
            lo, hi = int(first[a]), int(first[b])
            A, starts, ends = _docs(texts, offsets, doc_ids[docs[a:b]])
            req_doc = np.searchsorted(docs[a:b], node_doc[lo:hi])
            _, _, c = native.passage_sets(A, starts, ends, tables, cfg.words, cfg.stride, cfg.ngram, shingle_seed,
                                          req_doc, number[nodes[lo:hi]], cap[lo:hi], out=H[offs[lo]:offs[hi]])
            counts[lo:hi] = c
        return native.jaccard_pairs(H, offs[:-1], counts, ei, ej)
