r"""MinHash-LSH: the math, and the vectorized pieces the `minhash` stage is made of.

Shingles
    A document's shingle set S is the set of its word n-grams (default n = 5; words are the
    space-separated tokens of the normalized text, see sadedup.normalize) or of its character
    n-grams (code points of the normalized text). Each shingle is a 64-bit hash of its n
    tokens. A document with fewer than n tokens has no shingle and is never a near-duplicate.

MinHash (Broder 1997)
    For a random permutation pi of the shingle universe, P[min pi(A) = min pi(B)] = J(A, B) =
    |A & B| / |A | B|. With k = num_perm independent permutations, the signature of a set is
    (min pi_1(S), ..., min pi_k(S)) and the share of equal positions between two signatures
    is an unbiased estimate of J with variance J(1 - J) / k. Here pi_p(x) = g((hi32(h(x))
    XOR s_p) * a_p) mod 2^32 with g(y) = y XOR (y >> 15) and a_p = (s_p * 0x9E3779B9) | 1: h is
    a 64-bit hash of the shingle (fmix64-finalized, so its bits are already random), s_p is a
    32-bit word of a splitmix64 stream started at `seed`, and each pi_p is a bijection of the
    32-bit values. For a random h, each pi_p o h is a random function, so every position is an
    exact MinHash; the seeds make the positions behave as independent (tests check the
    estimator's mean and variance). The kernel (native/minhash.c) tokenizes, hashes and takes
    the k minima in one pass over the text (vectorized over shingles: AVX2 / AVX-512 builds
    chosen at load time), without the GIL.

LSH banding (Indyk & Motwani 1998; Leskovec et al., Mining of Massive Datasets ch. 3)
    The k positions are cut into b bands of r rows (b * r <= k; the rest is used only for
    the estimate). Two documents become a candidate pair when all r rows of at least one band
    agree, which happens with probability

        P(J) = 1 - (1 - J^r)^b          (the S-curve),

    steepest near J* ~ (1/b)^(1/r) (0.72 for 14 x 8). Each band's r values are folded into one
    64-bit band hash; per band, the documents are sorted by band hash (numpy) and every run of
    equal hashes is a bucket. A bucket of m <= BUCKET_ALL documents gives all its m(m-1)/2
    pairs; a larger one (a template shared by many documents) gives a star from its first
    document plus each document with the one before it, so the work stays linear.

Verification
    Every candidate pair is checked against `threshold` t: verify="estimate" uses the share
    of equal signature positions over all k; verify="exact" recomputes the two shingle sets
    (only for documents in some candidate pair) and computes their exact Jaccard.

Clusters
    Verified pairs are joined by union-find (native; the root of a component is its smallest
    node, whatever the order of the pairs). Then every component is cut so that no dropped
    document drifts away from the document kept for it: in keep-rule order, the best
    remaining document k keeps a cluster made of the documents reachable from k over verified
    pairs through documents whose similarity to k is at least the drift floor

        f(t) = (3t - 1) / 2             (0.7 for t = 0.8),

    and the documents left over form clusters of their own the same way. So every dropped
    document has similarity >= t with some member of its cluster (a chain) and >= f(t) with
    the kept one. f is where the metric d = 1 - J puts two near-copies of one text: if
    J(x, a) and J(x, b) are both >= (1 + 3t) / 4 (0.85 for t = 0.8), then J(a, b) >= f(t), so
    pairs of copies at least that close always end in one cluster whichever of them is kept.
    The similarity stored for a member is its similarity to the kept document.

Per-source thresholds
    With ``[[sources]] minhash.threshold`` every document has a threshold of its own: a pair
    is verified at the higher of its two documents' thresholds, and a document joins a kept
    one at f of the higher of their two, so the stricter source always decides.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import native
from .config import MinhashConfig

# buckets up to this size give all their pairs; larger ones a star and a chain
BUCKET_ALL = 64
S_CURVE_AT = (0.5, 0.7, 0.75, 0.8, 0.85, 0.9)
MASK64 = (1 << 64) - 1


def splitmix64(seed: int, n: int) -> list[int]:
    """n 64-bit words of the splitmix64 stream (Steele et al. 2014) from `seed`."""
    out, x = [], seed & MASK64
    for _ in range(n):
        x = (x + 0x9E3779B97F4A7C15) & MASK64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        out.append(z ^ (z >> 31))
    return out


@dataclass(frozen=True)
class Params:
    """What the kernels need, derived from the configuration and its seed."""
    lower: bool
    mode: int               # 0 words, 1 characters
    ngram: int
    shingle_seed: int       # 64-bit
    perm_seeds: np.ndarray  # uint32, num_perm
    bands: int
    rows: int

    @classmethod
    def of(cls, cfg: MinhashConfig) -> "Params":
        words = splitmix64(cfg.seed, cfg.num_perm + 1)
        return cls(cfg.lowercase, 0 if cfg.shingle == "word" else 1, cfg.ngram, words[0],
                   np.array([w >> 32 for w in words[1:]], dtype=np.uint32), cfg.bands, cfg.rows)


def config_string(cfg: MinhashConfig) -> str:
    """`5ng_14b_8r_112p_t0.8`: n-gram (ng word, cg character), bands, rows, permutations, threshold."""
    kind = "ng" if cfg.shingle == "word" else "cg"
    return f"{cfg.ngram}{kind}_{cfg.bands}b_{cfg.rows}r_{cfg.num_perm}p_t{cfg.threshold:g}"


def s_curve(bands: int, rows: int, at=S_CURVE_AT) -> dict[float, float]:
    """Probability that a pair of Jaccard J becomes a candidate: 1 - (1 - J^r)^b."""
    return {j: 1.0 - (1.0 - j ** rows) ** bands for j in at}


def drift_floor(threshold: float) -> float:
    """Least similarity to the kept document a dropped one may have (see the module doc)."""
    return max(0.0, (3.0 * threshold - 1.0) / 2.0)


def signatures(docs, p: Params, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Signatures (ndocs x num_perm, uint32) and shingle counts of prepared documents."""
    return native.minhash(*docs.args, p.lower, p.mode, p.ngram, p.shingle_seed, p.perm_seeds, out)


def band_hashes(sig: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """(bands, ndocs) uint64: each band's r signature values folded into one hash."""
    n = len(sig)
    out = np.empty((bands, n), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for b in range(bands):
            h = np.full(n, np.uint64(0x9E3779B97F4A7C15 ^ b), dtype=np.uint64)
            for k in range(rows):
                h ^= sig[:, b * rows + k].astype(np.uint64)
                h *= np.uint64(0xFF51AFD7ED558CCD)
                h ^= h >> np.uint64(32)
            out[b] = h
    return out


def bucket_pairs(h: np.ndarray, ids: np.ndarray, cap: int = BUCKET_ALL) -> tuple[np.ndarray, np.ndarray]:
    """Candidate pairs (i < j) of one band: documents `ids` (ascending) with band hashes `h`."""
    if len(h) < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.argsort(h, kind="stable")
    hs = h[order]
    same = hs[1:] == hs[:-1]
    if not same.any():
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # keep only positions inside buckets of two or more
    inb = np.zeros(len(hs), dtype=bool)
    inb[1:] |= same
    inb[:-1] |= same
    pos = np.flatnonzero(inb)
    o = ids[order[pos]]
    hs = hs[pos]
    start = np.ones(len(hs), dtype=bool)
    start[1:] = hs[1:] != hs[:-1]
    run_start = np.flatnonzero(start)
    run_len = np.diff(np.append(run_start, len(hs)))
    rid = np.cumsum(start) - 1
    first = run_start[rid]
    k = np.arange(len(hs)) - first          # position inside the bucket
    size = run_len[rid]
    pi, pj = [], []
    small = size <= cap
    for d in range(1, int(min(size.max(), cap))):
        m = small & (k + d < size)
        if not m.any():
            break
        at = np.flatnonzero(m)
        pi.append(o[at])
        pj.append(o[at + d])
    big = ~small
    if big.any():
        at = np.flatnonzero(big & (k >= 1))
        pi.append(o[first[at]])               # star from the bucket's first document
        pj.append(o[at])
        at = np.flatnonzero(big & (k >= 2))
        pi.append(o[at - 1])                  # and each document with the one before it
        pj.append(o[at])
    return np.concatenate(pi), np.concatenate(pj)


def distinct(codes: np.ndarray) -> np.ndarray:
    """np.unique of int64 codes, by sorting: numpy 2's hash-based unique is about 10x slower
    on band pairs, which come many times over (a close pair agrees in most bands)."""
    s = np.sort(codes)
    return s[np.r_[True, s[1:] != s[:-1]]] if len(s) else s


def unique_pairs(pi: np.ndarray, pj: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct pairs, sorted (i < j given)."""
    code = distinct(pi.astype(np.int64) * n + pj.astype(np.int64))
    return code // n, code % n


def estimate_pairs(sig: np.ndarray, pi: np.ndarray, pj: np.ndarray, block: int = 1 << 16) -> np.ndarray:
    """Share of equal signature positions of rows pi[k] and pj[k] of `sig`."""
    out = np.empty(len(pi), dtype=np.float64)
    P = sig.shape[1]
    for a in range(0, len(pi), block):
        b = min(a + block, len(pi))
        out[a:b] = np.count_nonzero(sig[pi[a:b]] == sig[pj[a:b]], axis=1) / P
    return out


@dataclass
class Clusters:
    """Clusters over nodes 0..n-1: kept node per cluster, and members (kept included)."""
    kept: np.ndarray        # per cluster
    member: np.ndarray      # per member: node
    cluster: np.ndarray     # per member: its cluster (index into kept)
    similarity: np.ndarray  # per member: similarity to the kept node (1.0 for the kept one)


def cluster(n: int, ei: np.ndarray, ej: np.ndarray, esim: np.ndarray, rank: np.ndarray,
            similarity: Callable[[np.ndarray, np.ndarray], np.ndarray], floor: float | np.ndarray) -> Clusters:
    """Union-find over the verified pairs (ei, ej) with similarities esim, then each component
    cut around its best-ranked documents (lower rank wins) so that every member has
    similarity >= floor to its cluster's kept node. `similarity(a, b)` gives it for any pairs.
    `floor` may be one per node: a member then needs the higher of its own and the kept node's."""
    kept_l: list[int] = []
    mem_l: list[np.ndarray] = []
    sim_l: list[np.ndarray] = []
    if len(ei):
        root = native.components(n, ei, ej)
        nodes = distinct(np.concatenate([ei, ej]))  # np.unique would also import numpy.ma (numpy 2)
        # components as runs of nodes sorted by (root, rank)
        order = np.lexsort((rank[nodes], root[nodes]))
        nodes = nodes[order]
        r = root[nodes]
        cut = np.flatnonzero(np.r_[True, r[1:] != r[:-1], True])
        # adjacency (both directions) in CSR form
        src = np.concatenate([ei, ej])
        dst = np.concatenate([ej, ei])
        ssim = np.concatenate([esim, esim])
        o = np.argsort(src, kind="stable")
        src, dst, ssim = src[o], dst[o], ssim[o]
        adj_start = np.searchsorted(src, np.arange(n + 1))
        for c in range(len(cut) - 1):
            comp = nodes[cut[c]:cut[c + 1]]
            if len(comp) == 2:
                # one verified pair: the better-ranked document is kept
                k, v = int(comp[0]), int(comp[1])
                lo, hi = adj_start[k], adj_start[k + 1]
                s = float(ssim[lo:hi][dst[lo:hi] == v][0])
                kept_l.append(k)
                mem_l.append(np.array([k, v], dtype=np.int64))
                sim_l.append(np.array([1.0, s]))
                continue
            _split(comp, adj_start, dst, ssim, similarity, _pair_floor(floor), kept_l, mem_l, sim_l)
    if not kept_l:
        z = np.zeros(0, np.int64)
        return Clusters(z, z, z, np.zeros(0))
    sizes = np.array([len(m) for m in mem_l])
    return Clusters(np.array(kept_l, dtype=np.int64), np.concatenate(mem_l),
                    np.repeat(np.arange(len(kept_l)), sizes), np.concatenate(sim_l))


def _pair_floor(floor: float | np.ndarray) -> Callable[[int, int], float]:
    """floor(k, v): the least similarity node v needs to join kept node k."""
    if np.isscalar(floor):
        return lambda k, v: floor
    per_node = np.asarray(floor, dtype=np.float64)
    return lambda k, v: max(per_node[k], per_node[v])


def _split(comp, adj_start, dst, ssim, similarity, floor, kept_l, mem_l, sim_l) -> None:
    """Cuts one component (nodes in rank order) into clusters anchored at their kept node;
    floor(k, v) is what v needs to join k."""
    remaining = set(comp.tolist())
    for k in comp.tolist():
        if k not in remaining:
            continue
        remaining.discard(k)
        members, sims = [k], [1.0]
        seen = {k}
        # direct neighbours of k: their verified similarity is their similarity to k
        lo, hi = adj_start[k], adj_start[k + 1]
        frontier = []
        for v, s in zip(dst[lo:hi].tolist(), ssim[lo:hi].tolist()):
            if v in remaining and v not in seen:
                seen.add(v)
                if s >= floor(k, v):
                    members.append(v)
                    sims.append(s)
                    frontier.append(v)
        while frontier:
            cand = []
            for u in frontier:
                for v in dst[adj_start[u]:adj_start[u + 1]].tolist():
                    if v in remaining and v not in seen:
                        seen.add(v)
                        cand.append(v)
            frontier = []
            if cand:
                ca = np.array(cand, dtype=np.int64)
                s = similarity(np.full(len(ca), k, dtype=np.int64), ca)
                for v, sv in zip(cand, s.tolist()):
                    if sv >= floor(k, v):
                        members.append(v)
                        sims.append(sv)
                        frontier.append(v)
        if len(members) > 1:
            remaining.difference_update(members)
            order = np.argsort(members[1:])
            kept_l.append(k)
            mem_l.append(np.array([k] + [members[1 + i] for i in order], dtype=np.int64))
            sim_l.append(np.array([1.0] + [sims[1 + i] for i in order]))
