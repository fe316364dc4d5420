"""MinHash: near-duplicate documents, one kept per cluster (the math: sadedup/lsh.py).

1. Signatures, per chunk of documents (a task on the executor; chunks are resumable): the
   native kernel shingles the normalized text and takes num_perm minima in one pass. Per
   chunk the work folder keeps, memory-mapped,

       minhash/<config>_<key>/chunk_00000/sig.npy    uint32 (documents x num_perm)
                                         nsh.npy    int64 shingles per document (0: none)
                                         bands.npy  uint64 (bands x documents) band hashes
       minhash/<config>_<key>/docs.npy              int64 doc_id of every row, in order

2. Banding, a task per band (BandPairs): the band hashes of all documents with a shingle
   are sorted (numpy); equal hashes make candidate pairs, each written once as the code
   i * n + j, sorted. Memory: one band of the corpus at a time.
3. Verification, a task per partition of the rows (VerifyPart, partitions of about equal
   numbers of pairs, cut where the band tasks sampled): the partition's pairs read from every
   band's file by binary search, each distinct pair verified once (``verify="estimate"``:
   signature agreement; ``"exact"``: exact Jaccard of the shingle sets, recomputed for the
   partition's documents only); it writes its candidate pairs with their similarity and its
   verified pairs. The driver joins the first into pairs.npy file to file.
4. On the driver, over the verified pairs (memory O(documents in them)): union-find, cut so
   no member drifts from the kept document (the cut's similarities gathered for components
   of three or more documents only), keep rule; records
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
import itertools
import os
from collections.abc import Iterator, Sequence
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
from ..keep import candidate_documents, candidate_ranks, decisions_digest, order_settings, source_values
from ..normalize import prepare
from ..progress import say
from ..store import TextStore
from ..workspace import file_bytes, join_npy, load_npy, save_npy, task_sums, writable_npy
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
# candidate pairs verified per task: partitions of the rows with about this many pairs each,
# and at least two per worker; each band task samples its pairs' first rows to cut them
PART_PAIRS = 1 << 22
PART_SAMPLES = 256
VERIFY_FILES = ("_pairs.npy", "_sim.npy", "_edges.npy", "_esim.npy")
# what the driver writes for the tasks of one run, removed when the stage ends
SCRATCH = ("sets.npy", "has.npy", "nsh.npy", "rows.npy", "thr.npy", "keep.npy")


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
            **task_sums([out / f for f in CHUNK_FILES])}


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
    """Task: the candidate pairs of one band, over every chunk's band hashes, into `out`: each
    pair (i < j, candidate positions) once as the code i * n + j, sorted, so a verification
    task reads the pairs of its rows with two binary searches. Also a sample of the pairs'
    first rows, where the driver cuts the partitions."""
    dirs: tuple[str, ...]
    band: int
    has: str
    n: int
    out: str

    def __call__(self) -> dict:
        h = np.concatenate([load_npy(Path(d) / "bands.npy")[self.band] for d in self.dirs] + [np.zeros(0, np.uint64)])
        has = np.load(self.has)
        pi, pj = mh.bucket_pairs(h[has], has)
        code = mh.distinct(pi.astype(np.int64) * self.n + pj.astype(np.int64))
        save_npy(Path(self.out), code)
        at = np.linspace(0, len(code) - 1, min(len(code), PART_SAMPLES)).astype(np.int64)
        return {"pairs": len(code), "rows": (code[at] // self.n).tolist(), "wrote": file_bytes([self.out])}


def band_codes(paths: Sequence[str], n: int, lo: int, hi: int) -> np.ndarray:
    """The distinct candidate pairs (codes i * n + j, sorted) whose first row is in [lo, hi),
    from every band's file (BandPairs), memory-mapped: only that stretch of each is read."""
    parts = []
    for p in paths:
        c = load_npy(Path(p))
        a, b = np.searchsorted(c, [lo * n, hi * n])
        parts.append(np.asarray(c[a:b]))
    return mh.distinct(np.concatenate(parts + [np.zeros(0, np.int64)]))


@dataclass(frozen=True)
class VerifyPart:
    """Task: every candidate pair whose first row is in [lo, hi), verified (the stage's
    similarity, computed for this partition's documents only). Writes `out` + _pairs.npy and
    _sim.npy (this run's pairs, positions into its docs.npy, for pairs.npy), and _edges.npy
    and _esim.npy (the verified pairs, rows of the banding, for the driver's union-find).
    Rows are the banding's: the references' first (R of them), then this run's.

    `keep` (a bool per row) drops the pairs of candidate components without a row of this
    run (--reference); `thr` is a threshold per row ([[sources]]), else cfg's threshold;
    `segments` are (row_lo, row_hi, work folder) whose texts hold those rows (verify="exact"),
    `rows` the doc_id of every row in its folder."""
    folder: str
    part: int
    bands: tuple[str, ...]
    n: int
    lo: int
    hi: int
    dirs: tuple[str, ...]
    chunks: tuple[tuple[int, int], ...]
    cfg: dict
    R: int
    rows: str
    segments: tuple[tuple[int, int, str], ...]
    keep: str
    thr: str
    out: str

    def files(self) -> list[Path]:
        return [Path(self.out + f) for f in VERIFY_FILES]

    def __call__(self) -> dict:
        cfg = MinhashConfig(**self.cfg)
        code = band_codes(self.bands, self.n, self.lo, self.hi)
        pi, pj = code // self.n, code % self.n
        if self.keep:
            k = np.asarray(load_npy(Path(self.keep))[pi])
            pi, pj = pi[k], pj[k]
        nodes = mh.distinct(np.concatenate([pi, pj]))
        ei, ej = np.searchsorted(nodes, pi), np.searchsorted(nodes, pj)
        if cfg.verify == "exact":
            scratch = Path(self.folder) / f"verify_{self.part:05d}"
            scratch.mkdir(exist_ok=True)
            rows = load_npy(Path(self.rows))
            stores = [(lo, hi, TextStore(Path(root))) for lo, hi, root in self.segments]
            segments = [(lo, hi, st.data, st.offsets, rows[lo:hi]) for lo, hi, st in stores]
            _, _, texts, offsets, ids = segments[-1]
            similarity = MinHash._exact_similarity(scratch, texts, offsets, ids, nodes,
                                                   load_npy(Path(self.folder) / "nsh.npy"), cfg, segments)
            esim = similarity(ei, ej)
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            esim = MinHash._estimate_similarity(list(map(Path, self.dirs)), list(self.chunks), nodes, cfg)(ei, ej)
        own = pi >= self.R
        save_npy(Path(self.out + "_pairs.npy"), np.stack([pi[own] - self.R, pj[own] - self.R]))
        save_npy(Path(self.out + "_sim.npy"), esim[own])
        # a pair is a near duplicate at the higher of its two documents' thresholds
        thr = load_npy(Path(self.thr)) if self.thr else None
        ok = esim >= (cfg.threshold if thr is None else np.maximum(thr[pi], thr[pj]))
        save_npy(Path(self.out + "_edges.npy"), np.stack([pi[ok], pj[ok]]))
        save_npy(Path(self.out + "_esim.npy"), esim[ok])
        return {"pairs": len(pi), "own": int(own.sum()), "verified": int(ok.sum()), "wrote": file_bytes(self.files())}


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
            nsh, bands, cuts = self._bands(ctx, folder, dirs, cfg, len(doc_ids), ref)
        with _timed(times, "verify"):
            thr = self.thresholds(ws, doc_ids, cfg)
            if ref is not None and thr is not None:  # a reference document: minhash.threshold
                thr = np.concatenate([np.full(R, cfg.threshold), thr])
            candidates, ei, ej, esim = self._verified(ctx, folder, dirs, chunks, doc_ids, nsh, bands, cuts, cfg, thr,
                                                      ref)
            driver_wrote(ctx, [folder / "pairs.npy", folder / "pair_similarity.npy"])
            # the union-find's nodes: the rows in some verified pair
            nodes = mh.distinct(np.concatenate([ei, ej]))
            ei, ej = np.searchsorted(nodes, ei), np.searchsorted(nodes, ej)
            similarity = self._cut_similarity(ws, folder, dirs, chunks, doc_ids, nsh, nodes, ei, ej, cfg, ref)
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
        for scratch in SCRATCH:
            (folder / scratch).unlink(missing_ok=True)
        # every node is in a verified pair: a component is a node that is its own root
        components = int((native.components(len(nodes), ei, ej) == np.arange(len(nodes))).sum())
        _, offsets = open_texts(ws.root)
        return {
            "config": cs, "s_curve": {str(j): round(p, 4) for j, p in curve.items()},
            "verify": cfg.verify, "threshold": cfg.threshold, "drift_floor": round(floor, 6), "keep": cfg.keep,
            **({"source_thresholds": sorted(set(thr.tolist()))} if thr is not None else {}),
            "documents": len(doc_ids), "no_shingle": int((nsh[R:] == 0).sum()),
            **({"reference_documents": int(len(ref.has))} if ref is not None else {}),
            "bytes": int((offsets[doc_ids + 1] - offsets[doc_ids]).sum()) if len(doc_ids) else 0,
            "chunks": len(chunks), "candidate_pairs": candidates, "verified_pairs": int(len(ei)),
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
    def _bands(ctx: Context, folder: Path, dirs: list[Path], cfg: MinhashConfig, n: int,
               ref: "reference.SignatureRows | None" = None) -> tuple[np.ndarray, list[str], list[int]]:
        """2. Banding, a band per task: equal band hashes of documents with a shingle make
        candidate pairs (candidate positions, i < j), each band's in a file (BandPairs). With
        `ref` the references' rows are banded first (positions 0..R-1, this run's from R).
        Returns the shingles per row (the references' rows first), the band files, and their
        pairs' count (a pair in several bands counts in each) with a sorted sample of their
        first rows."""
        nsh = np.concatenate([np.load(d / "nsh.npy") for d in dirs] + [np.zeros(0, np.int64)])
        has = np.flatnonzero(nsh > 0)
        if ref is not None:
            dirs, has, nsh = ref.dirs + dirs, np.concatenate([ref.has, ref.n + has]), np.concatenate([ref.nsh, nsh])
            n += ref.n
        save_npy(folder / "has.npy", has)
        driver_wrote(ctx, [folder / "has.npy"])
        tasks = [BandPairs(tuple(map(str, dirs)), band, str(folder / "has.npy"), max(n, 1),
                           str(folder / f"pairs_{band:03d}.npy")) for band in range(cfg.bands)]
        cuts: list[int] = []
        pairs = 0
        for _, res in ctx.executor.imap(tasks):
            cuts += res["rows"]
            pairs += res["pairs"]
        return nsh, [t.out for t in tasks], (pairs, sorted(cuts))

    @staticmethod
    def _candidate_pairs(ctx: Context, folder: Path, dirs: list[Path], cfg: MinhashConfig,
                         n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every candidate pair (i < j, sorted, each once) and the shingles per document,
        banded again from the chunks' band hashes (a sweep over a folder that kept no pairs)."""
        nsh, bands, _ = MinHash._bands(ctx, folder, dirs, cfg, n)
        code = band_codes(bands, max(n, 1), 0, max(n, 1))
        for b in bands:
            Path(b).unlink()
        return nsh, code // max(n, 1), code % max(n, 1)

    def _verified(self, ctx: Context, folder: Path, dirs: list[Path], chunks: list, doc_ids: np.ndarray,
                  nsh: np.ndarray, bands: list[str], cuts: tuple[int, list[int]], cfg: MinhashConfig, thr: np.ndarray | None = None,
                  ref: "reference.SignatureRows | None" = None) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """3. Verification of every candidate pair, a partition of the rows per task
        (VerifyPart; `nsh` is every row's, the references' first). Writes pairs.npy and
        pair_similarity.npy from the tasks' files, and returns the number of candidate pairs
        and the verified ones: (rows i, rows j, similarity). With `ref` only the pairs of
        candidate components holding a row of this run are verified: the others cannot
        change a decision of this run (the union-find over every band's pairs, here)."""
        ws = ctx.ws
        R = 0 if ref is None else ref.n
        n = max(R + len(doc_ids), 1)
        keep = ""
        if R:
            root = np.arange(n)
            for b in bands:
                code = np.asarray(load_npy(Path(b)))
                moved = np.flatnonzero(root != np.arange(n))  # the components so far, as edges to their roots
                root = native.components(n, np.concatenate([code // n, moved]), np.concatenate([code % n, root[moved]]))
            touched = np.zeros(n, dtype=bool)
            touched[root[R:]] = True
            save_npy(folder / "keep.npy", touched[root])
            driver_wrote(ctx, [folder / "keep.npy"])
            keep = str(folder / "keep.npy")
        scratch = [folder / "nsh.npy"]
        save_npy(folder / "nsh.npy", nsh)
        rows, segments = str(folder / "docs.npy"), ((0, n, str(ws.root)),)
        if ref is not None:
            save_npy(folder / "rows.npy", np.concatenate([ref.doc_id, doc_ids]))
            scratch.append(folder / "rows.npy")
            rows = str(folder / "rows.npy")
            segments = (*((lo, hi, str(r.root)) for lo, hi, r in ref.segments), (R, n, str(ws.root)))
        if thr is not None:
            save_npy(folder / "thr.npy", thr)
            scratch.append(folder / "thr.npy")
        driver_wrote(ctx, scratch)
        all_dirs = tuple(map(str, (ref.dirs if ref is not None else []) + dirs))
        all_chunks = tuple((ref.chunks if ref is not None else []) + [(R + i, R + j) for i, j in chunks])
        # partitions of about equal numbers of band pairs, cut at sampled first rows
        pairs, sample = cuts
        parts = max(2 * ctx.executor.workers, -(-pairs // PART_PAIRS))
        at = sorted({sample[len(sample) * k // parts] for k in range(1, parts)} - {0}) if sample else []
        edges = [0, *at, n]
        tasks = [VerifyPart(str(folder), k, tuple(bands), n, lo, hi, all_dirs, all_chunks, dataclasses.asdict(cfg), R,
                            rows, segments, keep, str(folder / "thr.npy") if thr is not None else "",
                            str(folder / f"verify_{k:05d}"))
                 for k, (lo, hi) in enumerate(itertools.pairwise(edges))]
        candidates = 0
        for _, res in ctx.executor.imap(tasks):
            candidates += res["pairs"]
        # every candidate pair with its similarity, verified or not: what `sadedup sweep`
        # and `sadedup report` read to answer other thresholds without the signatures (the
        # pairs among this folder's documents: positions into its docs.npy)
        join_npy(folder / "pairs.npy", [Path(t.out + "_pairs.npy") for t in tasks], axis=-1)
        join_npy(folder / "pair_similarity.npy", [Path(t.out + "_sim.npy") for t in tasks])
        ej_parts = [load_npy(Path(t.out + "_edges.npy"), mmap=False) for t in tasks]
        esim = np.concatenate([load_npy(Path(t.out + "_esim.npy"), mmap=False) for t in tasks])
        ei = np.concatenate([e[0] for e in ej_parts])
        ej = np.concatenate([e[1] for e in ej_parts])
        for t in tasks:
            for f in t.files():
                f.unlink()
        for b in bands:
            Path(b).unlink()
        return candidates, ei, ej, esim

    def _cut_similarity(self, ws, folder: Path, dirs: list[Path], chunks: list, doc_ids: np.ndarray, nsh: np.ndarray,
                        nodes: np.ndarray, ei: np.ndarray, ej: np.ndarray, cfg: MinhashConfig,
                        ref: "reference.SignatureRows | None" = None):
        """The similarity the clusters' cut asks for beyond the verified pairs (node indices
        in, lsh.cluster): only components of three or more nodes ask, so only their
        signatures (or shingle sets) are gathered. `nodes` are rows, `nsh` every row's."""
        root = native.components(len(nodes), ei, ej)
        needed = np.flatnonzero(np.bincount(root, minlength=len(nodes))[root] >= 3) if len(nodes) else \
            np.zeros(0, np.int64)
        at = np.full(len(nodes), -1, np.int64)
        at[needed] = np.arange(len(needed))
        rows = nodes[needed]
        R = 0 if ref is None else ref.n
        if cfg.verify == "exact":
            texts, offsets = open_texts(ws.root)
            segments = None
            if ref is not None:
                stores = [(lo, hi, TextStore(r.root)) for lo, hi, r in ref.segments]
                segments = [*((lo, hi, st.data, st.offsets, ref.doc_id[lo:hi]) for lo, hi, st in stores),
                            (R, R + len(doc_ids), texts, offsets, doc_ids)]
            f = self._exact_similarity(folder, texts, offsets, doc_ids, rows, nsh, cfg, segments)
        elif ref is None:
            f = self._estimate_similarity(dirs, chunks, rows, cfg)
        else:
            f = self._estimate_similarity(ref.dirs + dirs, ref.chunks + [(R + i, R + j) for i, j in chunks], rows, cfg)
        return lambda x, y: f(at[x], at[y])

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
        Without `read_values` (no verified pair: no cluster, no rank asked for) zeros,
        nothing read (keep.candidate_ranks)."""
        return candidate_ranks(ws, cfg.keep, doc_ids, n_chars, needed=read_values, say=say)

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
