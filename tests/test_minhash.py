"""MinHash-LSH stage: accuracy on planted near-copies, the contract, keep rules, determinism,
records, the configuration guard, the native pieces against plain Python."""
from __future__ import annotations

import json
import random
import sqlite3

import numpy as np
import pytest
from helpers import db_rows, read_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st
from nearcopies import Writer, evaluate, jaccard, planted_corpus, shingles, write_jsonl

import sadedup.stages.minhash as mstage
from sadedup import lsh as mh
from sadedup import native, pipeline
from sadedup.config import MinhashConfig
from sadedup.errors import ConfigError
from sadedup.normalize import prepare


def run(tmp_path, docs, *sets, name="w", scores=None, executor="inline", workers=None):
    inp = tmp_path / f"{name}.jsonl"
    if not inp.exists():  # a rerun on the same folder must see the same file
        write_jsonl(inp, docs, scores)
    w = tmp_path / name
    pipeline.run([inp], tmp_path / f"{name}-out.jsonl", w, None, list(sets), executor=executor, workers=workers)
    return w


def clusters(w, method="minhash"):
    """doc -> (cluster_id, kept_doc_id, similarity)"""
    rows = db_rows(w, "SELECT m.doc_id, m.cluster_id, c.kept_doc_id, m.similarity FROM cluster_members m "
                      "JOIN clusters c USING (cluster_id) WHERE c.method = ?", (method,))
    return {d: (c, k, s) for d, c, k, s in rows}


def metrics(p, w):
    """Recall and precision; with exact duplicates removed first, a document's group is the
    union of its exact and near-duplicate clusters."""
    parent: dict[int, int] = {}

    def find(x):
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for d, c, _ in db_rows(w, "SELECT m.doc_id, m.cluster_id, c.method FROM cluster_members m JOIN clusters c "
                              "USING (cluster_id)"):
        a, b = find(d), find(-1 - c)
        if a != b:
            parent[a] = b
    cl = clusters(w)
    group = {d: find(d) for d in parent if d >= 0}
    return evaluate(p.docs, p.pairs, group, {d: k for d, (_, k, _) in cl.items() if d != k})


@pytest.fixture(scope="module")
def planted():
    return planted_corpus(11, 700)


# ---- accuracy ------------------------------------------------------------------------------

def test_generator_plants_the_rates(planted):
    by_rate = {}
    for _, _, r, j in planted.pairs:
        by_rate.setdefault(r, []).append(j)
    assert sorted(by_rate) == [0.005, 0.02, 0.05, 0.1, 0.2]
    means = [np.mean(by_rate[r]) for r in sorted(by_rate)]
    assert means == sorted(means, reverse=True) and means[0] > 0.9 and means[-1] < 0.3
    assert sum(j >= 0.85 for *_, j in planted.pairs) > 300


def test_exact_verification_recall_and_precision(tmp_path, planted):
    w = run(tmp_path, planted.docs, "stages=minhash", "minhash.verify=exact")
    m = metrics(planted, w)
    assert m["recall"] >= 0.99, m
    assert m["precision"] >= 0.99, m
    # the contract: every dropped document has J >= threshold with a member of its cluster (a
    # chain) and J >= the drift floor with the kept one; the stored similarity is that J
    cl = clusters(w)
    members: dict[int, list[int]] = {}
    for d, (c, _, _) in cl.items():
        members.setdefault(c, []).append(d)
    sets = {d: shingles(planted.docs[d]) for d in cl}
    for d, (c, k, s) in cl.items():
        if d == k:
            assert s == 1.0
            continue
        assert s == pytest.approx(jaccard(sets[d], sets[k]), abs=1e-9)
        assert s >= mh.drift_floor(0.8) - 1e-12
        assert max(jaccard(sets[d], sets[o]) for o in members[c] if o != d) >= 0.8 - 1e-12


def test_estimate_verification_recall_and_precision(tmp_path, planted):
    w = run(tmp_path, planted.docs, "stages=minhash")
    m = metrics(planted, w)
    assert m["recall"] >= 0.97, m
    assert m["precision"] >= 0.98, m
    # the stored similarity is the signature agreement: a multiple of 1/num_perm
    sims = [s for d, (_, k, s) in clusters(w).items() if d != k]
    assert all(abs(s * 112 - round(s * 112)) < 1e-9 for s in sims)


def test_character_shingles(tmp_path):
    p = planted_corpus(5, 120, rates=(0.005, 0.2))
    w = run(tmp_path, p.docs, "stages=minhash", "minhash.shingle=char", "minhash.ngram=8", "minhash.verify=exact")
    cl = clusters(w)
    close = [(a, b) for a, b, r, _ in p.pairs if r == 0.005]
    assert sum(a in cl and cl[a][0] == cl.get(b, (None,))[0] for a, b in close) >= 0.95 * len(close)
    far = [(a, b) for a, b, r, _ in p.pairs if r == 0.2]
    assert not any(a in cl and cl[a][0] == cl.get(b, (None,))[0] for a, b in far)
    assert json.loads(db_rows(w, "SELECT detail FROM stages WHERE stage='minhash' AND shard=-1")[0][0])["config"] \
        == "8cg_14b_8r_112p_t0.8"


def test_documents_without_shingles_are_never_near_duplicates(tmp_path):
    docs = ["one two three four", "one two three four", "", "", "   ", "Hi.", "Hi.", "a b c d"] * 3
    w = run(tmp_path, docs, "stages=minhash", "minhash.verify=exact")
    assert db_rows(w, "SELECT count(*) FROM documents WHERE status = 'dropped'") == [(0,)]
    detail = json.loads(db_rows(w, "SELECT detail FROM stages WHERE stage='minhash' AND shard=-1")[0][0])
    assert detail["no_shingle"] == len(docs)
    # with exact first, the exact copies go, as exact duplicates
    w = run(tmp_path, docs, "stages=exact,minhash", name="w2")
    assert db_rows(w, "SELECT DISTINCT reason FROM documents WHERE status = 'dropped'") == [("exact_duplicate",)]


def test_unrelated_documents_stay(tmp_path):
    wr = Writer(3)
    docs = [wr.document(200) for _ in range(300)]
    w = run(tmp_path, docs, "stages=minhash")
    assert db_rows(w, "SELECT count(*) FROM documents WHERE status = 'dropped'") == [(0,)]


# ---- keep rules ------------------------------------------------------------------------------

def _family(seed=2):
    """One text and near-copies of it of different lengths (all pairwise J > 0.9)."""
    wr = Writer(seed)
    base = wr.document(300)
    extra = wr.document(10)
    docs = [base + " " + extra, base, base + " " + extra + " " + extra, wr.document(250), base[: len(base) - 40]]
    return docs


@pytest.mark.parametrize("rule, scores, kept", [
    ("first", None, 0),
    ("longest", None, 2),
    ("shortest", None, 4),
    ("column:score", [1.0, 7.0, 3.0, 99.0, 7.0], 1),      # highest wins, ties by input order
    ("column:score", [None, "x", -2, 5, True], 2),         # no number (null, text, bool) ranks below any
])
def test_keep_rules(tmp_path, rule, scores, kept):
    docs = _family()
    w = run(tmp_path, docs, "stages=minhash", f"minhash.keep={rule}", "minhash.verify=exact", scores=scores)
    cl = clusters(w)
    assert sorted(cl) == [0, 1, 2, 4]
    assert {k for _, k, _ in cl.values()} == {kept}
    assert db_rows(w, "SELECT DISTINCT keep_rule FROM clusters") == [(rule,)]
    out = [r["id"] for r in read_jsonl(tmp_path / "w-out.jsonl")]
    assert out == sorted([f"d{kept}", "d3"], key=lambda x: int(x[1:]))


# ---- determinism, resume, reruns -----------------------------------------------------------

def _decisions(w):
    return (db_rows(w, "SELECT doc_id, status, reason FROM documents ORDER BY doc_id"),
            db_rows(w, "SELECT c.kept_doc_id, c.size, m.doc_id, m.similarity FROM clusters c JOIN cluster_members m "
                       "USING (cluster_id) ORDER BY c.kept_doc_id, m.doc_id"))


def test_same_clusters_for_any_chunking_and_parallelism(tmp_path, monkeypatch):
    p = planted_corpus(4, 150)
    base = _decisions(run(tmp_path, p.docs, "stages=minhash", "minhash.verify=exact", name="a"))
    monkeypatch.setattr(mstage, "CHUNK_BYTES", 20_000)
    w = run(tmp_path, p.docs, "stages=minhash", "minhash.verify=exact", name="b", executor="local", workers=2)
    assert len(list((w / "minhash").glob("*/chunk_*"))) > 4
    assert _decisions(w) == base


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_clustering_ignores_the_order_of_pairs(seed):
    rng = np.random.default_rng(seed)
    n = 40
    pi = rng.integers(0, n, 120)
    pj = rng.integers(0, n, 120)
    keep = pi != pj
    pi, pj = np.minimum(pi, pj)[keep], np.maximum(pi, pj)[keep]
    pi, pj = mh.unique_pairs(pi, pj, n)
    sim = rng.random((n, n))
    sim = (sim + sim.T) / 2 * 0.5 + 0.5
    fn = lambda a, b: sim[a, b]  # noqa: E731
    rank = rng.permutation(n)
    ok = fn(pi, pj) >= 0.8
    pi, pj = pi[ok], pj[ok]
    a = mh.cluster(n, pi, pj, fn(pi, pj), rank, fn, 0.7)
    perm = rng.permutation(len(pi))
    flip = rng.random(len(pi)) < 0.5
    qi, qj = np.where(flip, pj, pi)[perm], np.where(flip, pi, pj)[perm]
    b = mh.cluster(n, qi, qj, fn(qi, qj), rank, fn, 0.7)
    as_set = lambda c: {(int(c.kept[c.cluster[i]]), int(c.member[i])) for i in range(len(c.member))}  # noqa: E731
    assert as_set(a) == as_set(b)
    # every member is within the floor of its kept node and joined to the cluster by verified pairs
    for i in range(len(a.member)):
        k, v = a.kept[a.cluster[i]], a.member[i]
        assert v == k or sim[k, v] >= 0.7
    # each cluster's kept node has the best rank of the cluster
    for c, k in enumerate(a.kept):
        assert rank[k] == rank[a.member[a.cluster == c]].min()


def test_resume_after_a_crash_reuses_finished_chunks(tmp_path, monkeypatch):
    p = planted_corpus(6, 60)
    monkeypatch.setattr(mstage, "CHUNK_BYTES", 20_000)
    real = mstage._chunk_task
    calls = []
    crash = [True]

    def flaky(*args):
        calls.append(args[2])
        if crash[0] and len(calls) == 3:
            crash[0] = False
            raise RuntimeError("killed")
        return real(*args)

    monkeypatch.setattr(mstage, "_chunk_task", flaky)
    with pytest.raises(RuntimeError):
        run(tmp_path, p.docs, "stages=minhash")
    assert db_rows(tmp_path / "w", "SELECT status FROM stages WHERE stage='minhash' AND shard=-1") == [("failed",)]
    done = len(calls) - 1
    calls.clear()
    w = run(tmp_path, p.docs, "stages=minhash")
    n_chunks = len(list((w / "minhash").glob("*/chunk_*")))
    assert len(calls) == n_chunks - done
    monkeypatch.setattr(mstage, "_chunk_task", real)
    assert _decisions(w) == _decisions(run(tmp_path, p.docs, "stages=minhash", name="fresh"))


def test_reruns_replace_their_own_decisions(tmp_path):
    p = planted_corpus(8, 80)
    inp = write_jsonl(tmp_path / "in.jsonl", p.docs)
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    pipeline.run([inp], out, w, None, ["stages=exact,minhash"], executor="inline")
    first = _decisions(w)
    pipeline.run([inp], out, w, None, ["stages=exact,minhash"], executor="inline")
    assert _decisions(w) == first
    pipeline.run([inp], out, w, None, ["stages=exact,minhash", "minhash.threshold=0.95"], executor="inline")
    strict = _decisions(w)
    assert strict != first
    n_near = db_rows(w, "SELECT count(*) FROM documents WHERE reason='near_duplicate'")[0][0]
    assert n_near < sum(1 for r in first[0] if r[2] == "near_duplicate")
    # no stale rows: every cluster member row belongs to a cluster, every drop to a cluster
    assert db_rows(w, "SELECT count(*) FROM cluster_members WHERE cluster_id NOT IN (SELECT cluster_id FROM clusters)") \
        == [(0,)]
    assert db_rows(w, "SELECT count(*) FROM documents d WHERE status='dropped' AND doc_id NOT IN "
                      "(SELECT m.doc_id FROM cluster_members m JOIN clusters c USING (cluster_id) "
                      "WHERE c.kept_doc_id != m.doc_id)") == [(0,)]
    # minhash alone: the exact stage's drops and clusters are taken back
    pipeline.run([inp], out, w, None, ["stages=minhash"], executor="inline")
    assert db_rows(w, "SELECT DISTINCT method FROM clusters") == [("minhash",)]
    assert db_rows(w, "SELECT count(*) FROM documents WHERE reason = 'exact_duplicate'") == [(0,)]


def test_a_finished_stage_is_skipped_only_while_its_records_stand(tmp_path):
    p = planted_corpus(9, 60)
    inp = write_jsonl(tmp_path / "in.jsonl", p.docs)
    w, out = tmp_path / "w", tmp_path / "out.jsonl"
    pipeline.run([inp], out, w, None, ["stages=exact,minhash"], executor="inline")
    first = _decisions(w)
    summary = pipeline.run([inp], out, w, None, ["stages=exact,minhash"], executor="inline")
    assert summary["exact"].get("skipped") and summary["minhash"].get("skipped")
    # what a fresh ingest does to the tables: the stages must notice and decide again
    con = sqlite3.connect(w / "sadedup.db")
    con.executescript("UPDATE documents SET status = 'kept', reason = NULL; DELETE FROM cluster_members; "
                      "DELETE FROM clusters;")
    con.commit()
    con.close()
    summary = pipeline.run([inp], out, w, None, ["stages=exact,minhash"], executor="inline")
    assert not summary["exact"].get("skipped") and not summary["minhash"].get("skipped")
    assert _decisions(w) == first


# ---- records -------------------------------------------------------------------------------

def test_database_records(tmp_path, planted):
    w = run(tmp_path, planted.docs, "stages=exact,minhash", "minhash.verify=exact")
    for method, reason in (("exact", "exact_duplicate"), ("minhash", "near_duplicate")):
        rows = db_rows(w, "SELECT c.cluster_id, c.size, c.kept_doc_id, c.keep_rule, count(m.doc_id), "
                          "sum(m.doc_id = c.kept_doc_id) FROM clusters c JOIN cluster_members m USING (cluster_id) "
                          "WHERE c.method = ? GROUP BY c.cluster_id", (method,))
        assert rows
        assert all(size == n >= 2 and kept_in == 1 and rule == "first" for _, size, _, rule, n, kept_in in rows)
        # dropped documents: exactly the non-kept members; kept ones are kept
        dropped = db_rows(w, "SELECT doc_id FROM documents WHERE reason = ? ORDER BY doc_id", (reason,))
        members = db_rows(w, "SELECT m.doc_id FROM cluster_members m JOIN clusters c USING (cluster_id) "
                             "WHERE c.method = ? AND m.doc_id != c.kept_doc_id ORDER BY m.doc_id", (method,))
        assert dropped == members
        # a kept document stays, unless a later stage drops it (an exact group's survivor may be
        # a near-duplicate of another document)
        later = {"exact": {None, "near_duplicate"}, "minhash": {None}}[method]
        assert {r for (r,) in db_rows(w, "SELECT DISTINCT d.reason FROM clusters c JOIN documents d "
                                         "ON d.doc_id = c.kept_doc_id WHERE c.method = ?", (method,))} <= later
    assert db_rows(w, "SELECT count(*) FROM cluster_members m JOIN clusters c USING (cluster_id) "
                      "WHERE c.method = 'exact' AND m.similarity IS NOT NULL") == [(0,)]
    # cluster ids are unique across methods (the minhash ones follow the exact ones); no document
    # is in two clusters of one method
    (hi_exact,), (lo_minhash,) = db_rows(w, "SELECT max(cluster_id) FROM clusters WHERE method = 'exact' UNION ALL "
                                            "SELECT min(cluster_id) FROM clusters WHERE method = 'minhash'")
    assert hi_exact < lo_minhash
    assert db_rows(w, "SELECT count(*) FROM (SELECT m.doc_id FROM cluster_members m JOIN clusters c "
                      "USING (cluster_id) GROUP BY c.method, m.doc_id HAVING count(*) > 1)") == [(0,)]
    detail = json.loads(db_rows(w, "SELECT detail FROM stages WHERE stage='minhash' AND shard=-1")[0][0])
    assert detail["config"] == "5ng_14b_8r_112p_t0.8"
    assert detail["s_curve"]["0.85"] == pytest.approx(1 - (1 - 0.85 ** 8) ** 14, abs=1e-4)
    assert detail["dropped"] == len(dropped)
    sig = np.load(next((w / "minhash").glob("*/chunk_00000/sig.npy")), mmap_mode="r")
    assert sig.dtype == np.uint32 and sig.shape[1] == 112


# ---- configuration guard -------------------------------------------------------------------

@pytest.mark.parametrize("sets, key", [
    (["minhash.bands=15"], "minhash.bands"),
    (["minhash.num_perm=64"], "minhash.bands"),
    (["minhash.num_perm=0"], "minhash.num_perm"),
    (["minhash.rows=0"], "minhash.rows"),
    (["minhash.ngram=0"], "minhash.ngram"),
    (["minhash.threshold=1.5"], "minhash.threshold"),
    (["minhash.threshold=0"], "minhash.threshold"),
    (["minhash.verify=maybe"], "minhash.verify"),
    (["minhash.keep=best"], "minhash.keep"),
    (["minhash.shingle=line"], "minhash.shingle"),
    (["exact.keep=last"], "exact.keep"),
])
def test_configuration_errors_come_before_any_work(tmp_path, sets, key):
    inp = write_jsonl(tmp_path / "in.jsonl", ["some text"])
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        pipeline.run([inp], tmp_path / "out.jsonl", tmp_path / "w", None, ["stages=exact,minhash", *sets])
    assert not (tmp_path / "w").exists()


# ---- the math and the native pieces against plain Python ---------------------------------

def _sigs(docs, cfg):
    enc = [d.encode() for d in docs]
    offs = np.concatenate([[0], np.cumsum([len(e) for e in enc])]).astype(np.int64)
    texts = np.frombuffer(b"".join(enc), dtype=np.uint8)
    return mh.signatures(prepare(texts, offs, np.arange(len(docs)), cfg.lowercase), mh.Params.of(cfg))


def test_signature_agreement_is_an_unbiased_estimate():
    # word 1-grams over disjoint vocabularies: A = words 0..599, B = 200..799, J = 0.5
    est = []
    for seed in range(150):
        w = [f"w{seed}x{i}" for i in range(800)]
        sig, nsh = _sigs([" ".join(w[:600]), " ".join(w[200:])], MinhashConfig(ngram=1, seed=seed))
        assert list(nsh) == [600, 600]
        est.append((sig[0] == sig[1]).mean())
    est = np.array(est)
    sd = np.sqrt(0.5 * 0.5 / 112)
    assert abs(est.mean() - 0.5) < 4 * sd / np.sqrt(len(est))
    assert 0.8 * sd < est.std() < 1.2 * sd


def test_shingles_follow_the_normalized_words():
    cfg = MinhashConfig(ngram=2)
    a = "The  quick\u00a0brown\tFOX"
    b = "the quick brown fox"
    sig, nsh = _sigs([a, b, "Cafe\u0301 au lait", "Café AU lait", "one"], cfg)
    assert list(nsh) == [3, 3, 2, 2, 0]
    assert (sig[0] == sig[1]).all() and (sig[2] == sig[3]).all()
    assert (sig[4] == np.uint32(0xFFFFFFFF)).all()
    sig2, _ = _sigs([a, b], MinhashConfig(ngram=2, lowercase=False))
    assert not (sig2[0] == sig2[1]).all()


def _prepared(docs: list[str], n: int):
    """The documents as the stage hands them to the kernels, and the word n-gram parameters."""
    enc = [d.encode() for d in docs]
    offs = np.concatenate([[0], np.cumsum([len(e) for e in enc])]).astype(np.int64)
    texts = np.frombuffer(b"".join(enc), dtype=np.uint8)
    return prepare(texts, offs, np.arange(len(docs)), True), mh.Params.of(MinhashConfig(ngram=n))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "Ab", "é", "e\u0301", "東"]), max_size=30),
                min_size=2, max_size=6), st.integers(1, 4))
def test_exact_jaccard_matches_python_sets(word_lists, n):
    docs = [" ".join(ws) for ws in word_lists]
    prepared, p = _prepared(docs, n)
    _, nsh = mh.signatures(prepared, p)
    H, start, cnt = native.shingle_sets(*prepared.args, p.lower, p.mode, p.ngram, p.shingle_seed, nsh)
    sets = [shingles(d, n) for d in docs]
    assert list(cnt) == [len(s) for s in sets]
    pi, pj = np.triu_indices(len(docs), 1)
    got = native.jaccard_pairs(H, start, cnt, pi, pj)
    assert got == pytest.approx([jaccard(sets[i], sets[j], n) for i, j in zip(pi, pj)])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="ab cdé東", max_size=80), min_size=1, max_size=5), st.integers(1, 3),
       st.sampled_from([1, 2, 3, 4, 5, 7, 9, 112]), st.integers(0, 2**32 - 1))
def test_signatures_are_the_minima_of_each_permutation_over_the_shingle_set(docs, n, num_perm, seed):
    """The kernel takes several permutations per pass over a document's shingles (and the
    rest one at a time); each value must be the plain minimum, over the document's distinct
    shingles, of its own permutation (x = (h ^ s) * (s * 0x9E3779B9 | 1), x ^= x >> 15)."""
    prepared, p = _prepared(docs, n)
    perm = np.random.default_rng(seed).integers(0, 2**32, num_perm, dtype=np.uint64).astype(np.uint32)
    sig, nsh = native.minhash(*prepared.args, p.lower, p.mode, p.ngram, p.shingle_seed, perm)
    H, start, cnt = native.shingle_sets(*prepared.args, p.lower, p.mode, p.ngram, p.shingle_seed, np.maximum(nsh, 0))
    mult = (perm.astype(np.uint64) * np.uint64(0x9E3779B9) & np.uint64(0xFFFFFFFF)) | np.uint64(1)
    for d in range(len(docs)):
        hs = H[start[d]:start[d] + cnt[d]] >> np.uint64(32)
        if not len(hs):
            assert (sig[d] == np.uint32(0xFFFFFFFF)).all()
            continue
        x = ((hs[:, None] ^ perm.astype(np.uint64)[None, :]) * mult[None, :]) & np.uint64(0xFFFFFFFF)
        x ^= x >> np.uint64(15)
        assert (x.min(axis=0).astype(np.uint32) == sig[d]).all(), (d, num_perm)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=60), st.integers(2, 6))
def test_bucket_pairs_against_brute_force(hashes, cap):
    h = np.array(hashes, dtype=np.uint64)
    ids = np.arange(len(h), dtype=np.int64) * 3
    pi, pj = mh.bucket_pairs(h, ids, cap)
    got = set(zip(pi.tolist(), pj.tolist()))
    assert all(a < b for a, b in got)
    for v in set(hashes):
        members = [int(ids[i]) for i in range(len(h)) if hashes[i] == v]
        if len(members) <= cap:
            want = {(a, b) for i, a in enumerate(members) for b in members[i + 1:]}
        else:
            want = {(members[0], b) for b in members[1:]} | set(zip(members, members[1:]))
        assert {(a, b) for a, b in got if a in members} == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=50))
def test_components_are_the_smallest_node(edges):
    n = 30
    ei = np.array([a for a, _ in edges], dtype=np.int64)
    ej = np.array([b for _, b in edges], dtype=np.int64)
    root = native.components(n, ei, ej)
    comp = {x: {x} for x in range(n)}
    for a, b in edges:
        merged = comp[a] | comp[b]
        for x in merged:
            comp[x] = merged
    assert root.tolist() == [min(comp[x]) for x in range(n)]


def test_s_curve_and_config_string():
    cfg = MinhashConfig()
    assert mh.config_string(cfg) == "5ng_14b_8r_112p_t0.8"
    curve = mh.s_curve(14, 8)
    assert list(curve) == [0.5, 0.7, 0.75, 0.8, 0.85, 0.9]
    assert all(a < b for a, b in zip(curve.values(), list(curve.values())[1:]))
    assert curve[0.9] > 0.999 and curve[0.5] < 0.06
    assert mh.drift_floor(0.8) == pytest.approx(0.7)


# ---- the real command ----------------------------------------------------------------------

def test_cli_document_stages(cli, tmp_path, planted):
    inp = write_jsonl(tmp_path / "in.jsonl", planted.docs)
    p = cli("run", "--input", inp, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w",
            "--set", "stages=exact,minhash", "--set", "minhash.verify=exact", "--workers", "1")  # no pool to start
    assert "5ng_14b_8r_112p_t0.8" in p.stderr and "P(candidate" in p.stderr and "0.988 at 0.85" in p.stderr
    m = metrics(planted, tmp_path / "w")
    assert m["recall"] >= 0.99 and m["precision"] >= 0.99, m
    kept = db_rows(tmp_path / "w", "SELECT ext_id FROM documents WHERE status = 'kept' ORDER BY doc_id")
    assert [r["id"] for r in read_jsonl(tmp_path / "out.jsonl")] == [k[0] for k in kept]
    reasons = dict(db_rows(tmp_path / "w", "SELECT reason, count(*) FROM documents GROUP BY reason"))
    assert reasons["exact_duplicate"] > 0 and reasons["near_duplicate"] > 0


def test_cli_all_three_stages_substring_on_survivors(cli, tmp_path):
    rng = random.Random(9)
    wr = Writer(9)
    base = [wr.document(rng.randint(60, 200)) for _ in range(60)]
    boiler = " Subscribe to our newsletter for the latest updates and offers from our team."
    docs = []
    for t in base:
        docs.append(t + boiler)
        r = rng.random()
        if r < 0.2:
            docs.append(t + boiler)                         # exact copy
        elif r < 0.4:
            docs.append(wr.near_copy(t, 0.005) + boiler)    # near copy
    inp = write_jsonl(tmp_path / "in.jsonl", docs)
    w = tmp_path / "w"
    cli("run", "--input", inp, "--output", tmp_path / "out.jsonl", "--workdir", w,
        "--set", "substring.min_length=50", "--workers", "1")  # a small corpus: no pool to start
    done = dict(db_rows(w, "SELECT stage, status FROM stages WHERE shard = -1"))
    assert all(done[s] == "done" for s in ("exact", "minhash", "tokenize", "remove", "export")), done
    reasons = dict(db_rows(w, "SELECT reason, count(*) FROM documents GROUP BY reason"))
    assert reasons.get("exact_duplicate") and reasons.get("near_duplicate")
    # the substring stage saw only the survivors: no spans in dropped documents, sources survive
    assert db_rows(w, "SELECT count(*) FROM spans s JOIN documents d USING (doc_id) "
                      "WHERE d.reason IN ('exact_duplicate', 'near_duplicate')") == [(0,)]
    assert db_rows(w, "SELECT count(*) FROM spans s JOIN documents d ON d.doc_id = s.src_doc_id "
                      "WHERE d.status = 'dropped'") == [(0,)]
    assert db_rows(w, "SELECT count(*) FROM spans")[0][0] > 0   # the boilerplate


def test_cli_default_run_on_the_sample(sample_run):
    cwd, p = sample_run  # `sadedup run` in an empty folder (test_conventions reads the same run)
    w = cwd / "sadedup-sample-work"
    done = dict(db_rows(w, "SELECT stage, status FROM stages WHERE shard = -1"))
    assert all(done.get(s) == "done" for s in ("ingest", "exact", "minhash", "tokenize", "build", "repeats",
                                                "remove", "export")), done
    assert "P(candidate" in p.stderr
