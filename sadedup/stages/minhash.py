"""MinHash: near-duplicate documents, one kept per cluster (the math: sadedup/lsh.py).

1. Signatures, per chunk of documents (a task on the executor; chunks are resumable): the
   native kernel shingles the normalized text and takes num_perm minima in one pass. Per
   chunk the work folder keeps, memory-mapped,

       minhash/<config>_<key>/chunk_00000/sig.npy    uint32 (documents x num_perm)
                                         nsh.npy    int64 shingles per document (0: none)
                                         bands.npy  uint64 (bands x documents) band hashes
       minhash/<config>_<key>/docs.npy              int64 doc_id of every row, in order

2. Banding: per band, the band hashes of all documents with a shingle are sorted (numpy);
   equal hashes make candidate pairs. Memory: one band of the corpus at a time.
3. Verification of every candidate pair (``verify="estimate"``: signature agreement;
   ``"exact"``: exact Jaccard of the shingle sets, recomputed for candidate documents only).
4. Union-find, cut so no member drifts from the kept document, keep rule; records
   (``clusters`` method ``minhash``, ``cluster_members`` with the similarity to the kept
   document, documents dropped as ``near_duplicate``) and the stage detail (the configuration
   string such as ``5ng_14b_8r_112p_t0.8``, the S-curve, counts, timings).

With references (--reference, sadedup/reference.py) every row their minhash stages saw is
banded, verified and clustered with this run's, read from their folders (rows 0..R-1, this
run's after; only the candidate components holding a row of this run), the references'
documents ranked before every new one whatever the keep rule: a new document is dropped
exactly when one run over the references' inputs and then the new ones would drop it, into a
cluster whose kept document may be a reference's (its member row carries src_ref). A
reference document is never dropped: the clustering's verdicts on them are not this run's.

Kept beside the chunks for sweeps and the report (sadedup/sweeps.py), every candidate pair:

       minhash/<config>_<key>/pairs.npy             int64 (2 x pairs): candidate rows i < j, sorted
                              pair_similarity.npy   float64 per pair: the similarity checked
                                                    against the threshold (estimate or exact)
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from .. import lsh as mh
from .. import native, reference
from ..config import MinhashConfig
from ..keep import (candidate_documents, decisions_digest, keep_rank, order_settings, rule_values, source_values,
                    visiting_rank)
from ..normalize import prepare
from ..progress import say
from ..workspace import file_bytes, load_npy, save_npy, writable_npy
from .base import Context, ShardJob, Stage, chain, driver_wrote
from .exact import open_texts, text_chunks
from .sizing import minhash_chunk_docs

# a chunk of documents: about this much text, at most this many documents
CHUNK_BYTES = 64 << 20
CHUNK_DOCS = 1 << 17
# shingle sets (verify="exact") larger than this live in a memory-mapped file
SETS_IN_MEMORY = 256 << 20
# changes when shingling, hashing or clustering changes, so old results are not reused
VERSION = 1
CHUNK_FILES = ("sig.npy", "nsh.npy", "bands.npy")


def _chunk_task(root: str, folder: str, k: int, i: int, j: int, cfg: dict) -> dict:
    """Signatures of candidates i..j (rows of docs.npy) into folder/chunk_k (runs in a worker)."""
    conf = MinhashConfig(**cfg)
    p = mh.Params.of(conf)
    ids = np.load(Path(folder) / "docs.npy", mmap_mode="r")[i:j]
    texts, offsets = open_texts(Path(root))
    docs = prepare(texts, offsets, np.asarray(ids), conf.lowercase)
    out = Path(folder) / f"chunk_{k:05d}"
    out.mkdir(exist_ok=True)
    tmp = out / "sig.npy.tmp"
    sig = writable_npy(tmp, np.uint32, (j - i, conf.num_perm))
    _, nsh = mh.signatures(docs, p, out=sig)
    save_npy(out / "nsh.npy", nsh)
    save_npy(out / "bands.npy", mh.band_hashes(sig, conf.bands, conf.rows))
    sig.flush()
    del sig
    os.replace(tmp, out / "sig.npy")
    return {"documents": j - i, "shingles": int(nsh.sum()), "no_shingle": int((nsh == 0).sum()),
            "wrote": file_bytes([out / f for f in CHUNK_FILES])}


@dataclass(frozen=True)
class SignatureChunk:
    """Task: signatures of candidates i..j (rows of docs.npy) into folder/chunk_k."""
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
    """Task: the candidate pairs of one band, over every chunk's band hashes, into `out`
    (2 x pairs, int64 candidate positions)."""
    dirs: tuple[str, ...]
    band: int
    has: str
    out: str

    def __call__(self) -> dict:
        h = np.concatenate([load_npy(Path(d) / "bands.npy")[self.band] for d in self.dirs] + [np.zeros(0, np.uint64)])
        has = np.load(self.has)
        pi, pj = mh.bucket_pairs(h[has], has)
        save_npy(Path(self.out), np.stack([pi.astype(np.int64), pj.astype(np.int64)]))
        return {"pairs": len(pi), "wrote": file_bytes([self.out])}


@contextmanager
def _timed(times: dict[str, float], phase: str) -> Iterator[None]:
    t0 = time.perf_counter()
    yield
    times[phase] = time.perf_counter() - t0


class MinHash(Stage):
    name = "minhash"
    version = VERSION

    def settings(self, ctx: Context) -> Any:
        wf = ctx.wf
        out = dataclasses.asdict(wf.minhash)
        order = order_settings(wf)
        if order is not None:  # keep rules follow document order
            out["order"] = order
        if any(s.minhash_threshold is not None for s in wf.sources):
            out["sources"] = [[s.match, s.minhash_threshold] for s in wf.sources]
        return out

    @staticmethod
    def thresholds(ws, doc_ids: np.ndarray, cfg: MinhashConfig) -> np.ndarray | None:
        """Per candidate, the threshold of its [[sources]] entry (minhash.threshold where the
        entry sets none); None when every document has minhash.threshold."""
        per_doc = source_values(ws, "minhash_threshold", cfg.threshold)
        return None if per_doc is None else per_doc[doc_ids].astype(np.float64)

    def folder(self, ctx: Context, key: str) -> Path:
        return ctx.ws.root / "minhash" / f"{mh.config_string(ctx.wf.minhash)}_{key[:8]}"

    def whole(self, ctx: Context, key: str) -> bool:
        """Its signatures are there: a run that names this folder as a reference (--reference)
        reads them, and only this stage can make them again (a folder recorded before it
        kept a folder in its detail: nothing to check)."""
        d = ctx.ws.stage_detail(self.name)
        if "folder" not in d:
            return True
        folder = ctx.ws.root / d["folder"]
        return (folder / "docs.npy").is_file() and all(
            (folder / f"chunk_{k:05d}" / f).is_file() for k in range(int(d.get("chunks", 0))) for f in CHUNK_FILES)

    def summary(self, d: dict[str, Any]) -> str:
        return (f"minhash {d['config']}: {d['documents']} documents ({d['no_shingle']} without a shingle), "
                f"{d['candidate_pairs']} candidate pairs, {d['verified_pairs']} verified ({d['verify']}), "
                f"{d['dropped']} near duplicate(s) dropped in {d['clusters']} cluster(s)")

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        ws, cfg = ctx.ws, ctx.wf.minhash
        times: dict[str, float] = {}
        cs = mh.config_string(cfg)
        curve = mh.s_curve(cfg.bands, cfg.rows)
        say(f"minhash {cs}: P(candidate | Jaccard J) = "
            + ", ".join(f"{p:.3f} at {j:g}" for j, p in curve.items()))
        doc_ids, n_chars = candidate_documents(ws, self.name)
        folder = self.folder(ctx, key)
        with _timed(times, "signatures"):
            dirs, chunks = self._signatures(ctx, key, folder, doc_ids)
        # the references' kept rows (--reference) come first: rows 0..R-1, this run's after
        ref = reference.signature_rows(ctx) if ctx.wf.run.reference else None
        R = 0 if ref is None else ref.n
        with _timed(times, "banding"):
            nsh, pi, pj = self._candidate_pairs(ctx, folder, dirs, cfg, len(doc_ids), ref)
        with _timed(times, "verify"):
            thr = self.thresholds(ws, doc_ids, cfg)
            if ref is not None and thr is not None:  # a reference document: minhash.threshold
                thr = np.concatenate([np.full(R, cfg.threshold), thr])
            nodes, ei, ej, esim, similarity = self._verified(ws, folder, dirs, chunks, doc_ids, nsh, pi, pj, cfg, thr,
                                                             ref)
            driver_wrote(ctx, [folder / "pairs.npy", folder / "pair_similarity.npy"])
        with _timed(times, "cluster"):
            floor = mh.drift_floor(cfg.threshold)
            # per source: a member joins a kept document at the floor of the higher threshold
            floors = floor if thr is None else np.maximum(0.0, (3.0 * thr - 1.0) / 2.0)
            kept_ref = member_ref = None
            if ref is None:
                kept_ids, member_ids, cluster, sims = self._clusters(ws, doc_ids, n_chars, nodes, ei, ej, esim,
                                                                     similarity, floors, cfg)
            else:
                # the references' documents rank before every new one whatever the keep rule
                # (with `first`, document order): clustered as one run over both would cluster
                rank = np.concatenate([np.arange(R), R + self.ranks(ws, doc_ids, n_chars, cfg, len(ei) > 0)])
                kept_pos, member_pos, cluster, sims = self._own_decisions(R, *self._clusters(
                    ws, np.arange(R + len(doc_ids)), None, nodes, ei, ej, esim, similarity, floors, cfg, rank=rank))
                ids = np.concatenate([ref.doc_id, doc_ids])
                refs = np.concatenate([ref.ref, np.full(len(doc_ids), -1, np.int64)])
                kept_ids, member_ids = ids[kept_pos], ids[member_pos]
                kept_ref, member_ref = refs[kept_pos], refs[member_pos]
        with _timed(times, "database"):
            counts = ws.prov.replace_clusters(self.name, cfg.keep, kept_ids, member_ids, cluster, sims,
                                              kept_ref=kept_ref, member_ref=member_ref)
        for scratch in ("sets.npy", "has.npy"):
            (folder / scratch).unlink(missing_ok=True)
        components = len(np.unique(native.components(len(nodes), ei, ej)[np.unique(np.concatenate([ei, ej]))])) \
            if len(ei) else 0
        _, offsets = open_texts(ws.root)
        return {
            "config": cs, "s_curve": {str(j): round(p, 4) for j, p in curve.items()},
            "verify": cfg.verify, "threshold": cfg.threshold, "drift_floor": round(floor, 6), "keep": cfg.keep,
            **({"source_thresholds": sorted(set(thr.tolist()))} if thr is not None else {}),
            "documents": len(doc_ids), "no_shingle": int((nsh == 0).sum()),
            **({"reference_documents": int(len(ref.has))} if ref is not None else {}),
            "bytes": int((offsets[doc_ids + 1] - offsets[doc_ids]).sum()) if len(doc_ids) else 0,
            "chunks": len(chunks), "candidate_pairs": int(len(pi)), "verified_pairs": int(len(ei)),
            "components": components, "clusters": counts["clusters"], "dropped": counts["dropped"],
            "seconds": {k: round(v, 3) for k, v in times.items()} | {"total": round(sum(times.values()), 3)},
            "folder": str(folder.relative_to(ws.root)),
            "digest": decisions_digest(kept_ids, member_ids, cluster, sims,
                                       *([] if member_ref is None else [member_ref])),
        }

    def _signatures(self, ctx: Context, key: str, folder: Path, doc_ids: np.ndarray) -> tuple[list[Path], list]:
        """1. Signatures, a chunk of documents per task; finished chunks are kept."""
        ws, cfg = ctx.ws, ctx.wf.minhash
        if folder.parent.exists():
            for other in folder.parent.iterdir():  # results of other settings: never read again
                if other != folder:
                    shutil.rmtree(other, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        docs_key = xxhash.xxh3_64_hexdigest(doc_ids.tobytes())
        if not (folder / "docs.npy").exists() or not np.array_equal(np.load(folder / "docs.npy"), doc_ids):
            save_npy(folder / "docs.npy", doc_ids)
            driver_wrote(ctx, [folder / "docs.npy"])
        _, offsets = open_texts(ws.root)
        chunks = list(text_chunks(offsets, doc_ids, CHUNK_BYTES, minhash_chunk_docs(ctx.wf)))
        dirs = [folder / f"chunk_{k:05d}" for k in range(len(chunks))]
        self.map_shards(ctx, self.name, "minhash", [
            ShardJob(k, chain(key, docs_key, k, i, j), [dirs[k] / f for f in CHUNK_FILES],
                     SignatureChunk(str(ws.root), str(folder), k, i, j, dataclasses.asdict(cfg)))
            for k, (i, j) in enumerate(chunks)])
        return dirs, chunks

    @staticmethod
    def _candidate_pairs(ctx: Context, folder: Path, dirs: list[Path], cfg: MinhashConfig,
                         n: int, ref: "reference.SignatureRows | None" = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """2. Banding, a band per task: equal band hashes of documents with a shingle make
        candidate pairs (candidate positions, i < j, each pair once). Also the shingles per
        document. With `ref` the references' rows are banded first (positions 0..R-1, this
        run's from R), and only the pairs of candidate components holding a row of this run
        are kept: the others cannot change a decision of this run."""
        nsh = np.concatenate([np.load(d / "nsh.npy") for d in dirs] + [np.zeros(0, np.int64)])
        has = np.flatnonzero(nsh > 0)
        R = 0
        if ref is not None:
            R, dirs, has = ref.n, ref.dirs + dirs, np.concatenate([ref.has, ref.n + has])
            n += R
        save_npy(folder / "has.npy", has)
        driver_wrote(ctx, [folder / "has.npy"])
        tasks = [BandPairs(tuple(map(str, dirs)), band, str(folder / "has.npy"), str(folder / f"pairs_{band:03d}.npy"))
                 for band in range(cfg.bands)]
        pis, pjs = [], []
        for b, _ in ctx.executor.imap(tasks):
            pairs = np.load(tasks[b].out)
            pis.append(pairs[0])
            pjs.append(pairs[1])
            Path(tasks[b].out).unlink()
            if sum(len(x) for x in pis) > (1 << 24):   # keep the pair lists small as we go
                u = mh.unique_pairs(np.concatenate(pis), np.concatenate(pjs), max(n, 1))
                pis, pjs = [u[0]], [u[1]]
        pi, pj = mh.unique_pairs(np.concatenate(pis + [np.zeros(0, np.int64)]),
                                 np.concatenate(pjs + [np.zeros(0, np.int64)]), max(n, 1))
        if R and len(pi):
            root = native.components(n, pi, pj)
            touched = np.zeros(n, dtype=bool)
            touched[root[pj[pj >= R]]] = True  # pi < pj: a pair with a row of this run has it as pj
            keep = touched[root[pi]]
            pi, pj = pi[keep], pj[keep]
        return nsh, pi, pj

    def _verified(self, ws, folder, dirs, chunks, doc_ids, nsh, pi, pj, cfg: MinhashConfig,
                  thr: np.ndarray | None = None, ref: "reference.SignatureRows | None" = None):
        """3. Verification of every candidate pair: the nodes (documents in some pair), the
        verified edges between them with their similarity, and the similarity function.
        With `ref`, positions below R are the references' rows (signatures and texts read from
        their folders)."""
        texts, offsets = open_texts(ws.root)
        nodes = np.unique(np.concatenate([pi, pj]))
        ei, ej = np.searchsorted(nodes, pi), np.searchsorted(nodes, pj)
        R = 0 if ref is None else ref.n
        if cfg.verify == "exact":
            segments = None
            if ref is not None:
                from ..store import TextStore

                stores = [(lo, hi, TextStore(r.root)) for lo, hi, r in ref.segments]
                segments = [*((lo, hi, st.data, st.offsets, ref.doc_id[lo:hi]) for lo, hi, st in stores),
                            (R, R + len(doc_ids), texts, offsets, doc_ids)]
                nsh = np.concatenate([ref.nsh, nsh])
            similarity = self._exact_similarity(folder, texts, offsets, doc_ids, nodes, nsh, cfg, segments)
        elif ref is None:
            similarity = self._estimate_similarity(dirs, chunks, nodes, cfg)
        else:
            similarity = self._estimate_similarity(ref.dirs + dirs, ref.chunks + [(R + i, R + j) for i, j in chunks],
                                                   nodes, cfg)
        esim = similarity(ei, ej)
        # every candidate pair with its similarity, verified or not: what `sadedup sweep`
        # and `sadedup report` read to answer other thresholds without the signatures (the
        # pairs among this folder's documents: positions into its docs.npy)
        own = pi >= R
        save_npy(folder / "pairs.npy", np.stack([pi[own] - R, pj[own] - R]).astype(np.int64, copy=False))
        save_npy(folder / "pair_similarity.npy", esim[own])
        # a pair is a near duplicate at the higher of its two documents' thresholds
        ok = esim >= (cfg.threshold if thr is None else np.maximum(thr[pi], thr[pj]))
        return nodes, ei[ok], ej[ok], esim[ok], similarity

    @staticmethod
    def _own_decisions(R: int, kept: np.ndarray, member: np.ndarray, cluster: np.ndarray,
                       sims: np.ndarray) -> tuple[np.ndarray, ...]:
        """Of clusters over the references' rows (positions below R) and this run's: this
        run's decisions only. A cluster keeps its members of this run and its kept document;
        a reference document the clustering would drop stays as its reference decided (never
        dropped here), and a cluster without a member of this run goes. Renumbered in order."""
        own = member >= R
        has_own = np.bincount(cluster[own], minlength=len(kept)) > 0
        keep = (own | (member == kept[cluster])) & has_own[cluster]
        renum = np.cumsum(has_own) - 1
        return kept[has_own], member[keep], renum[cluster[keep]], sims[keep]

    @staticmethod
    def ranks(ws, doc_ids, n_chars, cfg: MinhashConfig, read_values: bool = True) -> np.ndarray:
        """The keep rule's rank of every candidate (0 is kept first; ties by document order).
        A column:NAME rule reads its column only with `read_values` (no verified pair: no
        rank is asked for)."""
        values = rule_values(ws, cfg.keep, say) if read_values else None
        return keep_rank(cfg.keep, doc_ids, n_chars, values, visiting_rank(ws, doc_ids))

    @staticmethod
    def _clusters(ws, doc_ids, n_chars, nodes, ei, ej, esim, similarity, floor: float | np.ndarray,
                  cfg: MinhashConfig, rank: np.ndarray | None = None):
        """4. Union-find clusters cut at the drift floor, the keep rule: (kept doc ids,
        member doc ids, cluster of each member, similarity to the kept one), clusters
        numbered in the order of their kept documents, members in document order. `rank`:
        MinHash.ranks, when the caller made it already (a sweep clusters many times)."""
        if rank is None:
            rank = MinHash.ranks(ws, doc_ids, n_chars, cfg, len(ei) > 0)
        rank = rank[nodes]
        cl = mh.cluster(len(nodes), ei, ej, esim, rank, similarity, floor if np.isscalar(floor) else floor[nodes])
        kept, member = nodes[cl.kept], nodes[cl.member]          # candidate positions
        by_kept = np.argsort(kept)
        renum = np.empty_like(by_kept)
        renum[by_kept] = np.arange(len(by_kept))
        kept, cluster = kept[by_kept], renum[cl.cluster]
        o = np.lexsort((member, cluster))
        member, cluster, sims = member[o], cluster[o], cl.similarity[o]
        return doc_ids[kept], doc_ids[member], cluster, sims

    @staticmethod
    def _estimate_similarity(dirs, chunks, nodes: np.ndarray, cfg: MinhashConfig):
        """Signature agreement; the signatures of the candidate documents gathered once."""
        S = np.empty((len(nodes), cfg.num_perm), dtype=np.uint32)
        for d, (i, j) in zip(dirs, chunks):
            a, b = np.searchsorted(nodes, [i, j])
            if b > a:
                S[a:b] = load_npy(d / "sig.npy")[nodes[a:b] - i]
        return lambda x, y: mh.estimate_pairs(S, x, y)

    @staticmethod
    def _exact_similarity(folder: Path, texts, offsets, doc_ids, nodes: np.ndarray, nsh: np.ndarray,
                          cfg: MinhashConfig, segments: list[tuple] | None = None):
        """Exact Jaccard; the shingle sets of the candidate documents recomputed once.
        `segments`: (row_lo, row_hi, texts, offsets, doc_ids of those rows) when the rows come
        from several folders (a reference's first); else row r is document doc_ids[r]."""
        H, start, counts = MinHash._shingle_sets(folder, texts, offsets, doc_ids, nodes, nsh, cfg, segments)
        return lambda x, y: native.jaccard_pairs(H, start, counts, x, y)

    @staticmethod
    def _shingle_sets(folder: Path, texts, offsets, doc_ids, nodes: np.ndarray, nsh: np.ndarray,
                      cfg: MinhashConfig, segments: list[tuple] | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The sorted distinct shingle hashes of each of `nodes` (rows, as for
        _exact_similarity): (hashes, each one's start in them, each one's count)."""
        p = mh.Params.of(cfg)
        cap = nsh[nodes]
        offs = np.zeros(len(nodes) + 1, dtype=np.int64)
        np.cumsum(cap, out=offs[1:])
        size = int(offs[-1])
        if size * 8 > SETS_IN_MEMORY:
            H = writable_npy(folder / "sets.npy", np.uint64, (size,))
        else:
            H = np.empty(size, dtype=np.uint64)
        counts = np.zeros(len(nodes), dtype=np.int64)
        for lo, hi, seg_texts, seg_offsets, seg_ids in segments or [(0, len(doc_ids), texts, offsets, doc_ids)]:
            a, b = np.searchsorted(nodes, [lo, hi])
            ids = np.asarray(seg_ids)[nodes[a:b] - lo]
            for i, j in text_chunks(seg_offsets, ids, CHUNK_BYTES, CHUNK_DOCS):
                docs = prepare(seg_texts, seg_offsets, ids[i:j], cfg.lowercase)
                _, _, c = native.shingle_sets(*docs.args, p.lower, p.mode, p.ngram, p.shingle_seed, cap[a + i:a + j],
                                              out=H[offs[a + i]:offs[a + j]])
                counts[a + i:a + j] = c
        return H, offs[:-1], counts
