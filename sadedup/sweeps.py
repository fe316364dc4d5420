"""What-if sweeps: what the minhash stage would drop at other thresholds, and the substring
stage at other window lengths, answered from what a finished run keeps in its work folder.

Nothing here writes the database or a stage's folder; scratch files go to a temporary
folder that is removed at the end. Each answer is what a run with that one setting changed
would decide for that stage (the stages after it are not rerun: a lower threshold would
also change which documents reach the substring stage).

MinHash thresholds. Candidate pairs come from banding alone, so they do not depend on the
threshold: the stage keeps every candidate pair with the similarity it verified
(``pairs.npy``, ``pair_similarity.npy`` in its folder). At threshold t the verified pairs
are those of similarity >= t, and the clusters are cut at the drift floor f(t) exactly as
the stage cuts them (sadedup.lsh.cluster), with the same keep rule: native.cluster_cut makes
lsh.cluster's clusters in one native pass (tests/test_sweep_cut.py holds it to lsh.cluster).
Cutting a component of three or more documents asks for similarities of pairs that are not
candidates: with ``verify = "estimate"`` they come from the stored signatures, with
``"exact"`` from the shingle sets of those documents only, recomputed. A work folder
whose minhash stage ran before the pairs were kept gets them from the stored band hashes and
signatures (banding and verification again, never signatures). Every threshold in (0, 1]
can be answered.

Window lengths. The repeats stage keeps the group id of the run's L-window at every position
of the text the build stage sorted (gid.npy; -1 where the window occurs once). A length L'
with L < L' <= 2 L is answered from those ids alone: the L'-window at p is the L-window at p
followed by the one at p + L' - L (overlapping, or touching at 2 L), so two L'-windows are
equal exactly when both of their L-windows are in the same groups, and one with an L-window
that occurs once occurs once. Numbering the pairs of ids (gid[p], gid[p + L' - L]) that
occur twice or more, in increasing order, gives the L'-windows' group ids as the repeats
stage numbers them (lexicographically), with no window, LCP or merge pass (a native
counting sort of the pairs, sadedup/native.py pair_gid); longer lengths go through halfway
ones (L to 2 L to 4 L, ...). Then the remove stage's keep rule and drop rule run at L', and
the characters removed are counted. With ``substring.prefilter`` (the default) the sorted
text is the candidate text for L: every repeated window of L' >= L tokens lies whole in one
candidate region (its L-token sub-windows are all repeated and neighbouring ones overlap,
and overlapping regions were merged), so L' >= L is exact, while L' < L is answerable only
from the full-text suffix arrays `sadedup index` keeps (without them it is said, not
guessed): there the repeats stage's windows, merge and scatter run again at L' on the
stored suffix arrays (an LCP array capped at L', no new suffix sort). With the prefilter off
the arrays cover all the text and every length is answerable.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import graph, native
from . import lsh as mh
from .config import MinhashConfig
from .errors import SadedupError
from .executor import Executor, make_executor, process_cpu, run_all
from .keep import candidate_documents
from .stages.base import Context
from .stages.build import sorted_dirs
from .stages.candidates import window_dirs
from .stages.exact import open_texts
from .stages.repeats import Repeats, valid_windows
from .stages.tokenize import run_tokenizer, shard_dirs
from .store import TextStore
from .tokenizers import char_spans
from .workspace import Workspace, load_npy, save_npy, writable_npy

# settings as the JSON and the command line name them
THRESHOLD, LENGTH = "minhash_threshold", "min_length"
# what `sadedup report` sweeps by default when the minhash stage ran (cheap: stored pairs)
REPORT_THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


# ---- values from the command line

def parse_values(text: str | Sequence[Any] | None, setting: str) -> list[float] | list[int]:
    """`0.6,0.7` or a list of numbers: the sorted distinct values of one setting, each checked
    as the workflow key would check it."""
    if text is None:
        return []
    items = [s.strip() for s in text.split(",") if s.strip()] if isinstance(text, str) else list(text)
    out: set = set()
    for item in items:
        if setting == THRESHOLD:
            try:
                v = float(item)
            except (TypeError, ValueError):
                raise SadedupError(f"--minhash-threshold: {item!r} is not a number") from None
            if not 0.0 < v <= 1.0:
                raise SadedupError(f"--minhash-threshold: {item} is not in (0, 1]")
            out.add(v)
        else:
            try:
                v = int(item) if not isinstance(item, float) or item.is_integer() else None
            except (TypeError, ValueError):
                v = None
            if v is None:
                raise SadedupError(f"--min-length: {item!r} is not a whole number of tokens")
            if not 1 <= v <= 65535:
                raise SadedupError(f"--min-length: {item} is not from 1 to 65535")
            out.add(v)
    return sorted(out)


# ---- the work folder, held for the sweep

@contextmanager
def held(workdir: str | Path) -> Iterator[Workspace]:
    """The work folder, read-only, locked against a run while the sweep reads its arrays (a
    folder nobody may write has no run to fear, and no lock to take)."""
    ws = Workspace(workdir, readonly=True)
    writable = os.access(ws.root, os.W_OK)
    if writable:
        ws.lock()
    try:
        yield ws
    finally:
        ws.unlock()
        ws.close()


@contextmanager
def scratch_folder(ws: Workspace) -> Iterator[Path]:
    """Scratch space as large as the stage's own arrays: in the work folder (its file system
    has room for them), else the system's temporary folder; always removed. Scratch folders
    of an earlier sweep that was killed go first (the lock says nobody uses them)."""
    if os.access(ws.root, os.W_OK):
        for old in ws.root.glob(".sweep-*"):
            shutil.rmtree(old, ignore_errors=True)
        parent: str | None = str(ws.root)
    else:
        parent = None
    folder = Path(tempfile.mkdtemp(prefix=".sweep-" if parent else "sadedup-sweep-", dir=parent))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def stale_reason(ws: Workspace, stage: str) -> str | None:
    """Why `stage`'s stored result cannot be read (None: it is current)."""
    from .pipeline import standing

    wf = ws.workflow
    if not graph.enabled(stage, wf):
        method = graph.node(stage).method
        return f"the work folder's workflow has no {method} stage (stages={','.join(wf.stages)})"
    for s in standing(ws, verify=False, of=[stage]):
        if s["stage"] == stage and s["state"] != "done":
            return f"stage {stage} is {s['state']} ({s['why']}); run `sadedup run --workdir {ws.root}` first"
    return None


# ---- MinHash: what the stage stored

@dataclass
class MinhashStore:
    """A finished minhash stage's documents (rows of its docs.npy), its chunks of signatures,
    and every candidate pair (rows pi < pj) with the similarity it verified."""
    root: Path
    folder: Path
    cfg: MinhashConfig
    doc_ids: np.ndarray
    n_chars: np.ndarray
    dirs: list[Path]
    chunks: list[tuple[int, int]]
    nsh: np.ndarray
    pi: np.ndarray
    pj: np.ndarray
    sim: np.ndarray
    detail: dict[str, Any]

    def graph(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(nodes, ei, ej): the rows in some candidate pair, sorted (the stage's node
        numbering), and each pair as two of those nodes (a rank map, not a binary search of
        every pair: the sweep's largest array pass after the cuts)."""
        seen = np.zeros(len(self.doc_ids), bool)
        seen[self.pi] = seen[self.pj] = True
        node = np.cumsum(seen) - 1
        return np.flatnonzero(seen), node[self.pi], node[self.pj]

    def signatures(self, rows: np.ndarray) -> np.ndarray:
        """The stored signatures of `rows` (rows of docs.npy, in the order given)."""
        out = np.empty((len(rows), self.cfg.num_perm), dtype=np.uint32)
        for d, (i, j) in zip(self.dirs, self.chunks):
            m = (rows >= i) & (rows < j)
            if m.any():
                out[m] = load_npy(d / "sig.npy")[rows[m] - i]
        return out

    def shingle_sets(self, rows: np.ndarray, scratch: Path) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """Exact Jaccard between `rows` (sorted distinct rows; the function takes indices
        into them), their shingle sets computed once by the stage's own routine (a large
        set file goes to `scratch`, never to the stage's folder)."""
        from .stages.minhash import MinHash

        texts, offsets = open_texts(self.root)
        return MinHash._exact_similarity(scratch, texts, offsets, self.doc_ids, rows, self.nsh, self.cfg)

    def sets(self, rows: np.ndarray, scratch: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The shingle sets of `rows` as native.cluster_cut reads them: (hashes, each set's
        start in them, its count), the sets `shingle_sets` computes its Jaccard over."""
        from .stages.minhash import MinHash

        texts, offsets = open_texts(self.root)
        return MinHash._shingle_sets(scratch, texts, offsets, self.doc_ids, rows, self.nsh, self.cfg)


def minhash_store(ws: Workspace, scratch: Path, executor: Executor | None = None) -> MinhashStore:
    """What the current minhash stage of `ws` left (see the module doc); the candidate pairs
    of a stage that did not keep them are made again from its band hashes in `scratch`."""
    from .stages.minhash import MinHash

    detail = ws.stage_detail("minhash")
    folder = ws.root / detail["folder"]
    cfg = ws.workflow.minhash
    doc_ids, n_chars = candidate_documents(ws, "minhash")
    try:
        stored = np.load(folder / "docs.npy")
    except (OSError, ValueError):
        raise SadedupError(f"{folder / 'docs.npy'} is missing or damaged: rerun the minhash stage") from None
    if not np.array_equal(stored, doc_ids):
        raise SadedupError(f"{folder / 'docs.npy'} does not list the documents the minhash stage decides on: "
                           f"rerun `sadedup minhash {ws.root}`")
    dirs = sorted(folder.glob("chunk_*"))
    chunks, at = [], 0
    for d in dirs:
        n = int(load_npy(d / "nsh.npy").shape[0])
        chunks.append((at, at + n))
        at += n
    if at != len(doc_ids):
        raise SadedupError(f"the signature chunks in {folder} hold {at} documents, not {len(doc_ids)}: rerun the "
                           f"minhash stage")
    nsh = np.concatenate([np.load(d / "nsh.npy") for d in dirs] + [np.zeros(0, np.int64)])
    store = MinhashStore(ws.root, folder, cfg, doc_ids, n_chars, dirs, chunks, nsh, np.zeros(0, np.int64),
                         np.zeros(0, np.int64), np.zeros(0), detail)
    pairs_path, sim_path = folder / "pairs.npy", folder / "pair_similarity.npy"
    try:
        pairs, sim = np.load(pairs_path), np.load(sim_path)
        ok = pairs.shape == (2, len(sim)) and len(sim) == detail.get("candidate_pairs")
    except (OSError, ValueError):
        ok = False
    if ok:
        store.pi, store.pj, store.sim = pairs[0], pairs[1], sim
        return store
    # an older stage kept no pairs: banding again from its band hashes, then verification
    ctx = Context(ws, executor or make_executor("inline", 1))
    _, pi, pj = MinHash._candidate_pairs(ctx, scratch, dirs, cfg, len(doc_ids))
    (scratch / "has.npy").unlink(missing_ok=True)
    store.pi, store.pj = pi, pj
    nodes, ei, ej = store.graph()
    if cfg.verify == "exact":
        store.sim = store.shingle_sets(nodes, scratch)(ei, ej)
    else:
        store.sim = mh.estimate_pairs(store.signatures(nodes), ei, ej)
    return store


def verified_at(ws: Workspace, store: MinhashStore, t: float) -> tuple[np.ndarray, float | np.ndarray]:
    """At minhash.threshold t, as the stage decides: which candidate pairs verify, and the
    drift floor (one, or per document with [[sources]] thresholds: a pair verifies at the
    higher of its two documents' thresholds, a member joins at the floor of the higher)."""
    from .stages.minhash import MinHash

    thr = MinHash.thresholds(ws, store.doc_ids, dataclasses.replace(store.cfg, threshold=t))
    if thr is None:
        return store.sim >= t, mh.drift_floor(t)
    return store.sim >= np.maximum(thr[store.pi], thr[store.pj]), np.maximum(0.0, (3.0 * thr - 1.0) / 2.0)


def _similarity_source(store: MinhashStore, nodes: np.ndarray, ei: np.ndarray, ej: np.ndarray,
                       scratch: Path) -> dict[str, Any]:
    """What native.cluster_cut reads the similarities it asks for from: the nodes of
    components of three or more documents over the pairs (ei, ej) (pairs of two never ask;
    the lowest threshold's components hold every higher one's), their stored signatures
    or their shingle sets, recomputed."""
    root = native.components(len(nodes), ei, ej)
    needed = np.flatnonzero(np.bincount(root, minlength=len(nodes))[root] >= 3)
    rows = np.full(len(nodes), -1, np.int64)
    if store.cfg.verify == "exact":
        rows[needed] = np.arange(len(needed))
        return {"rows": rows, "sets": store.sets(nodes[needed], scratch)}
    # a component's signatures side by side: a cut reads them one component at a time (on the
    # crawl folder's 10,683 rows about a fifth less CPU in the cuts than in document order)
    needed = needed[np.argsort(root[needed], kind="stable")]
    rows[needed] = np.arange(len(needed))
    return {"rows": rows, "signatures": store.signatures(nodes[needed])}


def threshold_answers(ws: Workspace, store: MinhashStore, thresholds: Sequence[float],
                      scratch: Path) -> list[dict[str, Any]]:
    """Per threshold, the minhash stage's decisions at it: documents it sees, kept, dropped as
    near duplicates, their characters, clusters and verified pairs.

    Clusters are the stage's own: lsh.cluster's cut (native.cluster_cut, the same clusters in
    one native pass) with its keep rule's rank made once. The similarities a cut asks for
    (of pairs that are not candidates) are made on the first threshold that needs them."""
    from .stages.minhash import MinHash

    if not len(thresholds):
        return []
    nodes, ei, ej = store.graph()
    N = len(nodes)
    at = [verified_at(ws, store, t) for t in thresholds]
    low = at[int(np.argmin(thresholds))][0]
    rank = MinHash.ranks(ws, store.doc_ids, store.n_chars, store.cfg)[nodes] if low.any() else np.zeros(N, np.int64)
    by_rank = np.argsort(rank, kind="stable")
    source: dict[str, Any] = {}
    n = len(store.doc_ids)
    answers: dict[int, dict[str, Any]] = {}
    # highest first: the cut that first needs the similarities and gives up (NeedSimilarity)
    # is then one of a small graph
    for q in sorted(range(len(thresholds)), key=lambda q: -thresholds[q]):
        ok, f = at[q]
        cut = (N, ei[ok], ej[ok], store.sim[ok], rank, f if np.isscalar(f) else f[nodes])
        try:
            kept, member, cluster, _, _ = native.cluster_cut(*cut, by_rank=by_rank, **source)
        except native.NeedSimilarity:
            source = _similarity_source(store, nodes, ei[low], ej[low], scratch)
            kept, member, cluster, _, _ = native.cluster_cut(*cut, by_rank=by_rank, **source)
        dropped = nodes[member[member != kept[cluster]]]
        answers[q] = {"value": thresholds[q], "documents": n, "kept": n - len(dropped), "dropped": len(dropped),
                      "removed_chars": int(store.n_chars[dropped].sum()), "clusters": len(kept),
                      "verified_pairs": int(ok.sum())}
    return [answers[q] for q in range(len(thresholds))]


# ---- substring: the stored suffix and LCP arrays

def scratch_npy(path: Path, dtype: Any, n: int) -> np.ndarray:
    """A new 1-d .npy of n entries to fill through a map. Scratch: never flushed (it is read
    back through the page cache and deleted before the system needs to write it), and an
    empty one saved plainly (numpy cannot map an empty file)."""
    if n == 0:
        save_npy(path, np.zeros(0, dtype=dtype))
        return np.zeros(0, dtype=dtype)
    return np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=(n,))


def paired_ids(gid: np.ndarray, d: int, groups: int, offsets: np.ndarray | None = None, w: int = 0,
               use_native: bool = True, scratch: Path | None = None) -> tuple[np.ndarray, int]:
    """out[p]: the group id of the pair (gid[p], gid[p + d]) where both are >= 0 (ids below
    `groups`), [p, p + w) lies in one of the documents or regions `offsets` (w = 0: not
    tested) and the pair occurs twice or more in gid, -1 elsewhere; ids dense, in increasing
    pairs. Returns (out, how many ids). The native kernel (native.pair_gid), or numpy's
    lexsort past what it packs (2^32 positions or groups). `scratch`: a folder for the
    result and the kernel's scratch arrays, as mapped files (None: in memory)."""
    n = len(gid)
    if use_native and n < (1 << 32) and groups <= (1 << 32):
        if scratch is None:
            return native.pair_gid(gid, d, groups, offsets, w)
        scratch.mkdir(parents=True, exist_ok=True)
        names = iter(range(1 << 30))
        return native.pair_gid(gid, d, groups, offsets, w, out=scratch_npy(scratch / "gid.npy", np.int32, n),
                               scratch=lambda dtype, k: scratch_npy(scratch / f"pairs{next(names)}.npy", dtype, k))
    out = np.full(n, -1, dtype=np.int32 if n // 2 < (1 << 31) - 1 else np.int64)
    if n <= d:
        return out, 0
    ok = gid[:n - d] >= 0
    ok &= gid[d:] >= 0
    if w:
        ok &= valid_windows(offsets, n, w)[:n - d].view(bool)
    p = np.flatnonzero(ok)
    a, b = gid[p], gid[p + d]
    order = np.lexsort((b, a))
    sa, sb = a[order], b[order]
    run = np.cumsum(np.r_[True, (sa[1:] != sa[:-1]) | (sb[1:] != sb[:-1])]) - 1 if len(p) else p
    twice = np.bincount(run) >= 2
    run_id = np.where(twice, np.cumsum(twice) - 1, -1)
    out[p[order]] = run_id[run]
    return out, int(twice.sum())


def paired_gids(gid: np.ndarray, offsets: np.ndarray, La: int, L: int, groups: int,
                scratch: Path | None = None) -> tuple[np.ndarray, int]:
    """The group ids of L-windows (La < L <= 2 La) from those of La-windows (`gid`, over the
    sorted text of every shard end to end, `offsets` its documents or regions, `groups` ids):
    the L-window at p is the La-window at p followed by the one at p + L - La (they overlap
    or touch), so two are equal exactly when both parts are, and one whose part occurs once
    occurs once. Both parts lie in one document or region when they overlap (and so in one
    shard); where they touch (L = 2 La) that is tested. Each distinct pair seen twice or more
    gets an id, in increasing pairs, which is the L-windows' lexicographic order: the
    repeats stage's numbering. Returns (gid at L, groups at L); `scratch` as for paired_ids."""
    return paired_ids(gid, L - La, groups, offsets, L if L - La >= La else 0, scratch=scratch)


def pairing_steps(L0: int, lengths: Sequence[int]) -> list[tuple[int, int, bool]]:
    """(from, to, answered) steps that reach each length above L0 by pairing, from the
    length reached last: to <= 2 * from, with halfway lengths (not answered) where a length
    is more than twice that."""
    steps, at = [], L0
    for L in sorted(set(lengths)):
        if L <= at:
            continue
        chain = [L]
        while chain[-1] > 2 * at:
            chain.append((chain[-1] + 1) // 2)
        for x in reversed(chain):
            steps.append((at, x, x == L))
            at = x
    return steps


@dataclass(frozen=True)
class CappedLcp:
    """Task: the LCP array of a stored suffix array, capped at `cap` (a direct comparison of
    suffix-array neighbours, at most cap tokens each): once per sweep, for all its lengths."""
    tokens: str
    sa: str
    out: str
    cap: int

    def __call__(self) -> dict[str, Any]:
        out = Path(self.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tokens, sa = load_npy(Path(self.tokens)), load_npy(Path(self.sa))
        native.lcp_capped(tokens, sa, self.cap, out=scratch_npy(out, native.capped_lcp_dtype(self.cap), len(tokens)))
        return {}


@dataclass(frozen=True)
class WindowsAt:
    """Task: one shard's in-document windows of L tokens in suffix order (wpos.npy, wl.npy in
    out_dir), from a stored suffix array and its LCP array (exact, or capped at L or more)."""
    build_dir: str      # tokens.npy and offsets.npy (documents)
    out_dir: str
    L: int
    sa: str
    lcp: str
    lcp_cap: int        # what the LCP array is capped at (0: exact), L or more

    def __call__(self) -> dict[str, Any]:
        bdir, odir = Path(self.build_dir), Path(self.out_dir)
        odir.mkdir(parents=True, exist_ok=True)
        offsets = np.load(bdir / "offsets.npy")
        n = int(offsets[-1])
        L = self.L
        if 0 < self.lcp_cap < L:
            raise AssertionError(f"an LCP array capped at {self.lcp_cap} cannot tell windows of {L} tokens apart")
        valid = valid_windows(offsets, n, L)
        lcp = load_npy(Path(self.lcp))
        if self.lcp_cap and lcp.dtype != native.capped_lcp_dtype(L):  # capped higher, in a wider type
            lcp = np.minimum(lcp, L).astype(native.capped_lcp_dtype(L))
        wpos, wl = native.local_windows(load_npy(Path(self.sa)), lcp, valid, L,
                                        wpos_dtype=np.int32 if n < (1 << 31) else np.int64)
        save_npy(odir / "wpos.npy", wpos)
        save_npy(odir / "wl.npy", wl)
        return {"windows": len(wpos)}


@dataclass(frozen=True)
class ScatterAt:
    """Task: the group id of the window at each position of one shard's sorted text, -1 for
    one that occurs once (the repeats stage's kernel, into scratch)."""
    build_dir: str
    out_dir: str
    gid_dtype: str
    L: int

    def __call__(self) -> dict[str, Any]:
        odir = Path(self.out_dir)
        gid = scratch_npy(odir / "gid.npy", self.gid_dtype, int(np.load(Path(self.build_dir) / "offsets.npy")[-1]))
        gid[:] = -1
        return {"repeated_windows": native.scatter(load_npy(odir / "wpos.npy"), load_npy(odir / "wl.npy"), self.L,
                                                   load_npy(odir / "run_gid.npy"), gid)}


def _full_text_index(ws: Workspace) -> list[Path] | None:
    """The folders of the full-text suffix arrays `sadedup index` keeps for a prefiltered
    folder, when they are current for its shards (None otherwise)."""
    from .occurrences import Index, index_dirs

    try:
        return index_dirs(ws) if Index().done(Context(ws)) else None
    except SadedupError:
        return None


def length_limits(ws: Workspace) -> tuple[int, str | None]:
    """The shortest window length the stored arrays answer, and why shorter ones are not."""
    s = ws.workflow.substring
    if not s.prefilter or _full_text_index(ws) is not None:
        return 1, None
    return s.window, (f"the stored arrays cover only the text that can hold a repeated {s.window}-token window "
                      f"(substring.prefilter); `sadedup index {ws.root}` builds full-text suffix arrays once, after "
                      f"which any length can be swept")


def _state(path: Path, groups: int, budget: int) -> np.ndarray:
    """int64 per group, -1 to start; in a file when large (as the remove stage keeps it)."""
    if groups * 8 <= budget // 4:
        return np.full(groups, -1, dtype=np.int64)
    arr = writable_npy(path, np.int64, (groups,), whole=True)
    arr[:] = -1
    return arr


def length_answers(ws: Workspace, lengths: Sequence[int], ctx: Context, scratch: Path) -> list[dict[str, Any]]:
    """The substring stage's decisions at each length (all answerable, see length_limits).

    At the run's length L0 its own group ids serve; above it, group ids come from those of a
    shorter length by pairing (paired_gids: L0 to at most 2 L0, that one to at most twice
    itself, ...), over the text the build stage sorted, with no window, LCP or merge pass.
    Below L0 the suffix arrays over all the text do: the build stage's with the prefilter
    off, else the index's, with an LCP array made once, capped at the longest of those
    lengths, and the repeats stage's windows, merge and scatter at each length."""
    from .stages.sizing import usable_budget

    wf = ws.workflow
    s = wf.substring
    L0 = s.window
    out: dict[int, dict[str, Any]] = {}
    longer = [L for L in lengths if L >= L0]
    if longer:
        built = sorted_dirs(ws, wf)
        run_gid = [load_npy(d / "gid.npy") for d in window_dirs(ws, L0)]   # the repeats stage's group ids
        groups = int(ws.stage_detail("repeats")["groups"])
        if L0 in longer:
            out[L0] = _select_at(ws, L0, ctx, built, run_gid, groups, s.prefilter, scratch / f"L{L0}")
        steps = pairing_steps(L0, longer)
        if steps:  # every shard's sorted text end to end, its documents or regions placed in it
            sizes = [len(g) for g in run_gid]
            bases = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
            offsets = np.concatenate([np.load(b / "offsets.npy")[:-1] + bases[k] for k, b in enumerate(built)]
                                     + [bases[-1:]])
            gid = run_gid[0] if len(run_gid) == 1 else np.concatenate(run_gid)
            # the result and the kernel's scratch (24 bytes a position at most) in mapped files
            # when they would take over half of the usable memory budget
            mapped = int(bases[-1]) * 24 > usable_budget(wf) // 2
            for La, L, answered in steps:
                prev = gid
                gid, groups = paired_gids(gid, offsets, La, L, groups, scratch / f"pairs_{L}" if mapped else None)
                del prev
                for f in (scratch / f"pairs_{L}").glob("pairs*.npy"):
                    f.unlink()
                if answered:
                    views = [gid[bases[k]:bases[k + 1]] for k in range(len(built))]
                    out[L] = _select_at(ws, L, ctx, built, views, groups, s.prefilter, scratch / f"L{L}")
                    del views
                if mapped and La != L0:
                    shutil.rmtree(scratch / f"pairs_{La}", ignore_errors=True)
            del gid
    shorter = [L for L in lengths if L < L0]
    if shorter:
        shards = shard_dirs(ws)
        index = _full_text_index(ws) if s.prefilter else None
        sas = [d / "sa.npy" for d in (index or shards)]
        lcps, cap = [d / "lcp.npy" for d in shards], 0   # the build stage's over all the text: exact
        if index is not None:  # an index keeps no LCP array
            cap = max(shorter)
            lcps = [scratch / f"lcp_index_{cap}" / d.name / "lcp.npy" for d in shards]
            run_all(ctx.executor, [CappedLcp(str(d / "tokens.npy"), str(sa), str(o), cap)
                                   for d, sa, o in zip(shards, sas, lcps)])
        for L in shorter:
            outs = [scratch / f"L{L}" / d.name for d in shards]
            run_all(ctx.executor, [WindowsAt(str(d), str(o), L, str(sa), str(lcp), cap)
                                   for d, o, sa, lcp in zip(shards, outs, sas, lcps)])
            groups = Repeats._merge(ctx, shards, outs, L, max(1, wf.run.n_workers))
            gid_dtype = "int32" if groups < (1 << 31) - 1 else "int64"
            run_all(ctx.executor, [ScatterAt(str(d), str(o), gid_dtype, L) for d, o in zip(shards, outs)])
            for o in outs:  # only the group ids are read from here on
                for f in ("wpos.npy", "wl.npy", "run_gid.npy"):
                    (o / f).unlink(missing_ok=True)
            out[L] = _select_at(ws, L, ctx, shards, [load_npy(o / "gid.npy") for o in outs], groups, False,
                                scratch / f"L{L}")
            shutil.rmtree(scratch / f"L{L}", ignore_errors=True)
        for o in lcps:
            if o.is_relative_to(scratch):
                o.unlink()
    return [out[L] for L in lengths]


def _select_at(ws: Workspace, L: int, ctx: Context, built: list[Path], gids: list[np.ndarray], groups: int,
               regions: bool, folder: Path) -> dict[str, Any]:
    """From the group ids of L-windows over each shard's sorted text (one array per shard,
    `groups` groups across them): the keep rule and the drop rule, in document order, and
    the characters they remove (the remove stage's kernels). `built`: the sorted text
    (offsets; the candidate regions' starts when `regions`); `folder`: for group state too
    large for memory, removed at the end."""
    from .stages.sizing import usable_budget

    wf = ws.workflow
    s = wf.substring
    shards = shard_dirs(ws)
    folder.mkdir(parents=True, exist_ok=True)
    offsets = [np.load(d / "offsets.npy") for d in shards]
    doc_ids = [np.load(d / "docs.npy") for d in shards]
    bases = np.concatenate(([0], np.cumsum([int(o[-1]) for o in offsets])))

    def runs(k: int) -> native.Runs | None:
        return (np.load(built[k] / "starts.npy"), np.load(built[k] / "offsets.npy")) if regions else None

    budget = usable_budget(wf)
    if s.keep == "first":
        src = _state(folder / "state.npy", groups, budget)
    else:
        first = _state(folder / "state.npy", groups, budget // 2)
        second = _state(folder / "state2.npy", groups, budget // 2)
        for k, g in enumerate(gids):
            native.first_two(g, int(offsets[k][-1]), int(bases[k]), first, second, runs=runs(k))
    tok = run_tokenizer(ctx)
    store = TextStore(ws.root)
    documents = dropped = cut = spans = removed_tokens = removed_chars = 0
    for k, gid in enumerate(gids):
        if s.keep == "first":
            rem, drp, (sd, ss, se, _) = native.select_first(gid, offsets[k], L, s.drop_fraction, int(bases[k]), src,
                                                            runs=runs(k))
        else:
            rem, drp, (sd, ss, se, _) = native.select_none(gid, offsets[k], L, s.drop_fraction, int(bases[k]), first,
                                                           second, runs=runs(k))
        cs, ce = char_spans(tok, store.texts, load_npy(shards[k] / "tokens.npy"), offsets[k], doc_ids[k], sd, ss, se)
        chars = np.zeros(len(doc_ids[k]), np.int64)
        np.add.at(chars, sd, ce - cs)
        gone = doc_ids[k][drp]  # a dropped document loses all of its characters
        n_chars = native.count_chars(store.data, store.offsets[gone], store.offsets[gone + 1])
        documents += len(doc_ids[k])
        dropped += int(drp.sum())
        cut += int(((rem > 0) & ~drp).sum())
        spans += len(sd)
        removed_tokens += int(rem.sum())
        removed_chars += int(chars[~drp].sum() + n_chars.sum())
    for f in ("state.npy", "state2.npy"):
        (folder / f).unlink(missing_ok=True)
    return {"value": L, "documents": documents, "kept": documents - dropped, "dropped": dropped,
            "removed_chars": removed_chars, "cut": cut, "spans": spans, "removed_tokens": removed_tokens,
            "groups": groups}


# ---- the sweep

def unanswered_line(item: dict[str, Any]) -> str:
    """One line naming the values a sweep could not answer, and why."""
    values = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in item["values"])
    return f"{item['setting']} {values}: not answered: {item['why']}"


def _start(ex: Executor) -> tuple[float, float]:
    ex.cpu = ex.cpu_here = 0.0
    return time.perf_counter(), process_cpu()


def _stop(result: dict[str, Any], setting: str, ex: Executor, t0: tuple[float, float]) -> None:
    """A setting's wall seconds, and its CPU seconds as a stage's detail counts them: of its
    tasks (wherever they ran) and of the driver besides them."""
    here = getattr(ex, "cpu_here", 0.0)
    result["seconds"][setting] = round(time.perf_counter() - t0[0], 3)
    result["cpu_seconds"][setting] = {"driver": round(process_cpu() - t0[1] - here, 3),
                                      "tasks": round(getattr(ex, "cpu", 0.0), 3)}


def sweep_held(ws: Workspace, scratch: Path, thresholds: list[float], lengths: list[int],
               executor: str | None = None, workers: int | None = None, strict: bool = True) -> dict[str, Any]:
    """`sweep` on a work folder the caller holds, with its scratch folder; `strict`: an error
    when none of the values can be answered."""
    wf = ws.workflow
    result: dict[str, Any] = {THRESHOLD: [], LENGTH: [], "as_run": {}, "unanswered": [], "seconds": {},
                              "cpu_seconds": {}}
    n = workers if workers is not None else wf.run.n_workers
    ex = make_executor(executor or wf.run.executor, max(1, n), wf.run.scheduler)
    # a run against references (--reference) decides with their documents, which a sweep
    # from this folder's stored artifacts alone would leave out
    refs = "the run reads references (--reference), which a sweep leaves out" if wf.run.reference else None
    try:
        if thresholds:
            t0 = _start(ex)
            why = refs or stale_reason(ws, "minhash")
            if why:
                result["unanswered"].append({"setting": THRESHOLD, "values": thresholds, "why": why})
            else:
                result["as_run"][THRESHOLD] = wf.minhash.threshold
                store = minhash_store(ws, scratch, ex)
                result[THRESHOLD] = threshold_answers(ws, store, thresholds, scratch)
            _stop(result, THRESHOLD, ex, t0)
        if lengths:
            t0 = _start(ex)
            why = refs or stale_reason(ws, "remove")
            if why:
                result["unanswered"].append({"setting": LENGTH, "values": lengths, "why": why})
            else:
                result["as_run"][LENGTH] = wf.substring.window
                lowest, why_not = length_limits(ws)
                short = [L for L in lengths if L < lowest]
                if short:
                    result["unanswered"].append({"setting": LENGTH, "values": short, "why": why_not})
                ctx = Context(ws, ex)
                result[LENGTH] = length_answers(ws, [L for L in lengths if L >= lowest], ctx, scratch)
            _stop(result, LENGTH, ex, t0)
    finally:
        ex.close()
    if strict and not result[THRESHOLD] and not result[LENGTH]:
        raise SadedupError("sweep: " + "; ".join(unanswered_line(u) for u in result["unanswered"]))
    return result


def sweep(workdir: str | Path, minhash_thresholds: Sequence[float] | str | None = None,
          min_lengths: Sequence[int] | str | None = None, executor: str | None = None,
          workers: int | None = None) -> dict[str, Any]:
    """The decisions of the minhash stage at each threshold and of the substring stage at
    each window length, from the work folder's stored artifacts (see the module doc).

    Args:
        workdir: a work folder whose minhash (for thresholds) or substring stage (for
            lengths) is current.
        minhash_thresholds: values of minhash.threshold, "0.6,0.7" or a list.
        min_lengths: values of substring.min_length, "200,400" or a list.
        executor, workers: where the substring sweep's per-shard work runs (default: the
            work folder's run.executor and run.workers).

    Returns:
        {"minhash_threshold": [{value, documents, kept, dropped, removed_chars, clusters,
        verified_pairs}], "min_length": [{value, documents, kept, dropped, removed_chars,
        cut, spans, removed_tokens, groups}], "as_run": {setting: the run's own value},
        "unanswered": [{setting, values, why}], "seconds": {setting: time taken}, "cpu_seconds":
        {setting: {driver, tasks}}}. `documents`
        are those the stage decides on, `kept` = documents - dropped, `removed_chars` the
        characters it takes out of them (all of a dropped document's, the cut ones of the
        others). When none of the values asked for can be answered it is an error.
    """
    thresholds = parse_values(minhash_thresholds, THRESHOLD)
    lengths = parse_values(min_lengths, LENGTH)
    if not thresholds and not lengths:
        raise SadedupError("sweep: name at least one setting: --minhash-threshold 0.6,0.7 or --min-length 200,400")
    with held(workdir) as ws, scratch_folder(ws) as scratch:
        return sweep_held(ws, scratch, thresholds, lengths, executor, workers)
