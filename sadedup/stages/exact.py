"""Exact: one document per normalized text survives.

Every candidate document (see sadedup.keep) is normalized (NFC, whitespace collapsed,
lower-cased with ``exact.lowercase``; sadedup.normalize) and hashed with xxh3-128. Documents
with equal hashes form a group; the keep rule picks the one that stays, the others are
dropped with reason ``exact_duplicate``. Each group is a ``clusters`` row (method ``exact``)
and its documents ``cluster_members`` rows (similarity NULL).

Text is read from the ingest's memory-mapped texts in chunks, a task per chunk (HashChunk),
so a task's memory is its chunk plus 16 bytes of hash per document. The groups are found by
tasks too, a range of hashes each (GroupRange, over every chunk's hashes sorted by the chunk's
task): the driver holds only the members of groups of two or more. The hashes are kept
(exact/docs.npy, exact/hashes.npy; their size and checksum in the stage's detail) for runs
that name this folder as a reference.

With references (sadedup/reference.py) the hashes their exact stages kept come first, ranked
before every new document whatever the keep rule: a new document with one of them is dropped
as the duplicate of the reference's copy (its cluster's kept member, with src_ref).
"""
from __future__ import annotations

import dataclasses
import itertools
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from .. import reference
from ..executor import run_all
from ..keep import candidate_documents, candidate_ranks, decisions_digest, order_settings
from ..normalize import normalized_texts, prepare
from ..progress import bar, say
from ..workspace import file_bytes, files_checksum, join_npy, load_npy, save_npy
from ..store import TextStore
from .base import Context, Stage, driver_wrote

# bytes of text normalized at once, by one task: at most, and at least (when the corpus is
# cut into a few chunks per worker)
CHUNK_BYTES = 64 << 20
MIN_CHUNK_BYTES = 4 << 20
# documents per grouping task at least (a range of hashes each, two per worker at most)
MIN_GROUP_DOCS = 1 << 16
# changes when the normalization or the hash changes, so old results are not reused
VERSION = 1


def text_chunks(offsets: np.ndarray, doc_ids: np.ndarray, chunk_bytes: int, max_docs: int = 1 << 20):
    """(i, j) ranges of doc_ids of about chunk_bytes of text each (at least one document)."""
    sizes = offsets[doc_ids + 1] - offsets[doc_ids]
    cum = np.cumsum(sizes)
    i, n = 0, len(doc_ids)
    while i < n:
        base = cum[i - 1] if i else 0
        j = int(np.searchsorted(cum, base + chunk_bytes, side="right"))
        j = min(max(j, i + 1), i + max_docs, n)
        yield i, j
        i = j


def open_texts(root) -> tuple[np.ndarray, np.ndarray]:
    """The ingest store's memory-mapped texts and their offsets."""
    store = TextStore(root)
    return store.data, store.offsets


def hash_documents(texts: np.ndarray, offsets: np.ndarray, doc_ids: np.ndarray, lowercase: bool) -> np.ndarray:
    """(n, 2) uint64: the xxh3-128 of each document's normalized text, high and low halves."""
    docs = prepare(texts, offsets, doc_ids, lowercase)
    buf, offs = normalized_texts(docs, lowercase)
    mv = memoryview(buf)
    h = xxhash.xxh3_128_intdigest
    digests = [h(mv[a:z]) for a, z in zip(offs[:-1].tolist(), offs[1:].tolist())]
    out = np.empty((len(digests), 2), dtype=np.uint64)
    out[:, 0] = np.array([d >> 64 for d in digests], dtype=np.uint64)
    out[:, 1] = np.array([d & 0xFFFFFFFFFFFFFFFF for d in digests], dtype=np.uint64)
    return out


def by_hash(hashes: np.ndarray, base: int) -> np.ndarray:
    """(3, n) uint64: the hashes' high and low halves and positions (base + row), sorted by
    hash, equal hashes by position: a grouping task reads its range of each (GroupRange)."""
    order = np.lexsort((np.arange(len(hashes)), hashes[:, 1], hashes[:, 0]))
    return np.stack([hashes[order, 0], hashes[order, 1], base + order.astype(np.uint64)])


@dataclass(frozen=True)
class HashChunk:
    """Task: the hashes of candidates i..j (rows of docs.npy) into `out`, and the same sorted
    (by_hash, positions i..j) into `out_sorted`."""
    root: str
    docs: str
    i: int
    j: int
    lowercase: bool
    out: str
    out_sorted: str

    def __call__(self) -> dict[str, Any]:
        texts, offsets = open_texts(Path(self.root))
        ids = np.asarray(np.load(self.docs, mmap_mode="r")[self.i:self.j])
        hashes = hash_documents(texts, offsets, ids, self.lowercase)
        save_npy(Path(self.out), hashes)
        save_npy(Path(self.out_sorted), by_hash(hashes, self.i))
        return {"wrote": file_bytes([self.out, self.out_sorted])}


@dataclass(frozen=True)
class GroupRange:
    """Task: the groups of equal hashes whose high half is in [lo, hi), from every chunk's
    sorted hashes (by_hash; `shift` added to a file's positions), groups of two or more
    only: `out` is (2, members) int64, each member's position and its group (numbered from 0
    in hash order), members of a group in position order."""
    parts: tuple[str, ...]
    shift: tuple[int, ...]
    lo: int
    hi: int
    out: str

    def __call__(self) -> dict[str, Any]:
        hs, ls, ps = [], [], []
        for path, shift in zip(self.parts, self.shift):
            h = load_npy(Path(path))
            a = int(np.searchsorted(h[0], np.uint64(self.lo)))
            # the last range ends past the largest hash (2**64 is no uint64)
            b = int(np.searchsorted(h[0], np.uint64(self.hi))) if self.hi < 1 << 64 else h.shape[1]
            part = np.asarray(h[:, a:b])
            hs.append(part[0])
            ls.append(part[1])
            ps.append(part[2].astype(np.int64) + shift)
        z = [np.zeros(0, np.uint64)]
        hi, lo, pos = np.concatenate(hs + z), np.concatenate(ls + z), np.concatenate(ps + [np.zeros(0, np.int64)])
        order = np.lexsort((pos, lo, hi))
        hi, lo, pos = hi[order], lo[order], pos[order]
        new = np.ones(len(pos), dtype=bool)
        new[1:] = (hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1])
        gid = np.cumsum(new) - 1
        dup = np.bincount(gid)[gid] > 1 if len(gid) else np.zeros(0, bool)
        group = np.cumsum(new & dup) - 1  # groups of two or more, numbered in hash order
        save_npy(Path(self.out), np.stack([pos[dup], group[dup]]))
        return {"wrote": file_bytes([self.out])}


class Exact(Stage):
    name = "exact"
    version = VERSION

    def settings(self, ctx: Context) -> Any:
        out = dataclasses.asdict(ctx.wf.exact)
        order = order_settings(ctx.wf)
        if order is not None:  # keep rules follow document order
            out["order"] = order
        return out

    @staticmethod
    def _hashes(ctx: Context, doc_ids: np.ndarray, offsets: np.ndarray, lowercase: bool) -> list[tuple[str, int]]:
        """Every candidate's 128-bit hash, a chunk of documents per task (a few per worker,
        so every core hashes). The hashes stay, as exact/hashes.npy (n x 2 uint64, the rows
        of exact/docs.npy, joined from the chunks' files without reading them): a run that
        names this folder as its reference reads them instead of hashing its texts again.
        Returns each chunk's sorted hashes (by_hash) with the first candidate position."""
        folder = ctx.ws.root / "exact"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        save_npy(folder / "docs.npy", doc_ids)
        driver_wrote(ctx, [folder / "docs.npy"])
        total = int((offsets[doc_ids + 1] - offsets[doc_ids]).sum()) if len(doc_ids) else 0
        size = max(MIN_CHUNK_BYTES, min(CHUNK_BYTES, total // max(1, 2 * ctx.executor.workers) + 1))
        chunks = list(text_chunks(offsets, doc_ids, size))
        tasks = [HashChunk(str(ctx.ws.root), str(folder / "docs.npy"), i, j, lowercase, str(folder / f"hash_{k:05d}.npy"),
                           str(folder / f"sorted_{k:05d}.npy"))
                 for k, (i, j) in enumerate(chunks)]
        with bar("exact", total, "bytes") as b:
            for k, _ in ctx.executor.imap(tasks):
                i, j = chunks[k]
                b.advance(int(offsets[doc_ids[j - 1] + 1] - offsets[doc_ids[i]]))
        if tasks:
            join_npy(folder / "hashes.npy", [Path(t.out) for t in tasks])
        else:
            save_npy(folder / "hashes.npy", np.zeros((0, 2), np.uint64))
        driver_wrote(ctx, [folder / "hashes.npy"])
        for t in tasks:
            Path(t.out).unlink()
        return [(t.out_sorted, 0) for t in tasks]

    @staticmethod
    def _groups(ctx: Context, parts: list[tuple[str, int]], n: int) -> tuple[np.ndarray, np.ndarray]:
        """Groups of equal hashes (two or more), a range of hashes per task (GroupRange):
        (member positions, group of each), groups in hash order, members in position order."""
        folder = ctx.ws.root / "exact"
        k = max(1, min(2 * ctx.executor.workers, n // MIN_GROUP_DOCS + 1))
        cuts = [(1 << 64) * r // k for r in range(k + 1)]
        tasks = [GroupRange(tuple(p for p, _ in parts), tuple(s for _, s in parts), lo, hi,
                            str(folder / f"groups_{r:05d}.npy")) for r, (lo, hi) in enumerate(itertools.pairwise(cuts))]
        run_all(ctx.executor, tasks)
        pos, group, base = [], [], 0
        for t in tasks:
            g = np.load(t.out)
            pos.append(g[0])
            group.append(g[1] + base)
            base += int(g[1, -1]) + 1 if g.shape[1] else 0
            Path(t.out).unlink()
        for p, _ in parts:
            Path(p).unlink()
        z = [np.zeros(0, np.int64)]
        return np.concatenate(pos + z), np.concatenate(group + z)

    def summary(self, d: dict[str, Any]) -> str:
        return f"exact: {d['documents']} documents, {d['dropped']} exact duplicate(s) dropped in {d['groups']} group(s)"

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        ws, wf = ctx.ws, ctx.wf
        cfg = wf.exact
        doc_ids, n_chars = candidate_documents(ws, self.name)
        _, offsets = open_texts(ws.root)
        parts = self._hashes(ctx, doc_ids, offsets, cfg.lowercase)
        hashes = list(files_checksum([ws.root / "exact" / "docs.npy", ws.root / "exact" / "hashes.npy"]))
        # the references' kept hashes (--reference) come first, as positions 0..R-1: a new
        # document whose text one of them has is a duplicate of the reference's copy
        ids, refs = doc_ids, None
        if ctx.wf.run.reference:
            ref_of, ref_ids, ref_hi, ref_lo = reference.exact_seen(ctx)
            ids = np.concatenate([ref_ids, doc_ids])
            refs = np.concatenate([ref_of, np.full(len(doc_ids), -1, np.int64)])
            save_npy(ws.root / "exact" / "sorted_ref.npy", by_hash(np.stack([ref_hi, ref_lo], axis=1), 0))
            driver_wrote(ctx, [ws.root / "exact" / "sorted_ref.npy"])
            parts = [(str(ws.root / "exact" / "sorted_ref.npy"), 0)] + [(p, len(ref_ids)) for p, _ in parts]
        R = len(ids) - len(doc_ids)
        # groups of equal hashes (two or more), members in document order
        member_pos, group = self._groups(ctx, parts, len(ids))
        rank = candidate_ranks(ws, cfg.keep, doc_ids, n_chars, needed=len(member_pos) > 0, say=say)
        if R:  # the references' documents before every new one, whatever the rule
            rank = np.concatenate([np.arange(R), R + rank])
        # the kept one of each group: the best rank
        o = np.lexsort((rank[member_pos], group))
        member_pos, group = member_pos[o], group[o]
        first = np.ones(len(group), dtype=bool)
        first[1:] = group[1:] != group[:-1]
        kept_pos = member_pos[first]
        cluster = np.cumsum(first) - 1
        # clusters numbered in the order of their kept documents
        by_kept = np.argsort(kept_pos)
        renum = np.empty_like(by_kept)
        renum[by_kept] = np.arange(len(by_kept))
        kept_pos, cluster = kept_pos[by_kept], renum[cluster]
        # members in doc order within each cluster
        o = np.lexsort((member_pos, cluster))
        member_pos, cluster = member_pos[o], cluster[o]
        kept, members = ids[kept_pos], ids[member_pos]
        if refs is None:
            counts = ws.prov.replace_clusters(self.name, cfg.keep, kept, members, cluster, None)
            digest = decisions_digest(kept, members, cluster)
        else:
            counts = ws.prov.replace_clusters(self.name, cfg.keep, kept, members, cluster, None,
                                              kept_ref=refs[kept_pos], member_ref=refs[member_pos])
            digest = decisions_digest(kept, members, cluster, refs[member_pos])
        return {"documents": len(doc_ids), "groups": counts["clusters"], "dropped": counts["dropped"],
                "lowercase": cfg.lowercase, "keep": cfg.keep, "hashes": hashes,
                **({"reference_documents": R} if refs is not None else {}), "digest": digest}
