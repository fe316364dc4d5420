"""The audit report's numbers: everything a reviewer of a deduplication run asks, read from
the work folder (sadedup/audit_html.py draws them; `sadedup report --format json` prints them).

Counts come from SQL aggregates over the provenance database, read in one snapshot (one
read transaction), so no table is ever held in Python: samples are drawn by seeking random
ids on primary keys, histograms are GROUP BYs, the union of a document's spans is a window
function. The artifacts add what the database does not hold: candidate pairs and
signatures (the S-curve's measured points, the LSH buckets that made the most pairs) and
the sizes of the stages' files.

Span stages are read by `spans.method`, so a span stage added later gets its section
without a change here; `eval_items` is read when the decontaminate stage made it.

Characters: a document's removed characters are the union of its spans of every method (a
span stage cuts the original text, so two methods' spans may overlap); `chars.output` is
what the output holds. Samples and the measured points use `seed`: the same work folder and
seed give the same report, byte for byte.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__, db, faults, graph, reference
from . import lsh as mh
from . import sweeps as sw
from .errors import SadedupError
from .outputs import claimed
from .store import TextStore
from .workspace import Workspace, load_npy
from .writers import check_apart, check_outside, check_target

# how much corpus text a report shows per document, in characters
SNIPPET = 600
CONTEXT = 160
# sizes of the lists it shows
TOP = 10
MEASURED_PAIRS = 400
JACCARD_BINS = 10
COVERAGE_BINS = 20
# an LSH bucket of this many documents or more is a hotspot (two are just a pair)
HOTSPOT = 3
Z95 = 1.959964


# ---- small statistics

def wilson(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k / n (0, 1 when n is 0)."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, mid - half), min(1.0, mid + half)


def _r(x: float, nd: int = 6) -> float:
    return float(round(float(x), nd))


# ---- reading the database

def _connect(root: Path) -> sqlite3.Connection:
    try:
        con = db.open_readonly(root)
        con.text_factory = lambda b: b.decode("utf-8", "replace")
        con.execute("BEGIN")  # one snapshot for every query of the report
        con.execute("SELECT count(*) FROM documents").fetchone()
    except sqlite3.DatabaseError as e:
        if isinstance(e, sqlite3.OperationalError) and "no such table" not in str(e):
            raise
        raise SadedupError(f"{root / db.DB_NAME} is not a readable sadedup database ({e})") from None
    return con


def _one(con: sqlite3.Connection, sql: str, args: tuple = ()) -> Any:
    row = con.execute(sql, args).fetchone()
    return None if row is None else row[0]


def _has_table(con: sqlite3.Connection, name: str) -> bool:
    return _one(con, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)) > 0


def _log2_bins(column: str, top: int = 40) -> str:
    """SQL for the power-of-two bin of a length: 0 for 0, k for [2^(k-1), 2^k)."""
    cases = " ".join(f"WHEN {column} < {1 << k} THEN {k}" for k in range(top))
    return f"CASE WHEN {column} <= 0 THEN 0 {cases} ELSE {top} END"


class Reader:
    """The work folder, read for one report: its database snapshot, texts and artifacts."""

    def __init__(self, ws: Workspace, con: sqlite3.Connection, seed: int) -> None:
        self.ws, self.con, self.seed = ws, con, seed
        self._store: TextStore | None = None
        self._ref_stores: dict[int, TextStore] = {}

    @property
    def store(self) -> TextStore:
        if self._store is None:
            self._store = TextStore(self.ws.root)
        return self._store

    def text(self, doc_id: int, ref: int | None = None) -> str:
        """A document's text; `ref`: of the reference (refs) it belongs to, read in its folder."""
        if ref is None:
            return self.store.text(int(doc_id))
        if ref not in self._ref_stores:
            # a reference rerun, moved or deleted since the decisions would show another
            # document's text (or none): refused in one line
            gone = reference.unread(self.ws.root, self.con).get(ref)
            if gone is not None:
                raise SadedupError(f"report: {gone}")
            found = self.con.execute("SELECT workdir FROM refs WHERE ref_id = ?", (ref,)).fetchone()
            self._ref_stores[ref] = TextStore(Path(found[0]))
        return self._ref_stores[ref].text(int(doc_id))

    def kept_ref(self, cluster_id: int) -> int | None:
        """The reference the cluster's kept document is in (its only reference member), or None."""
        found = self.con.execute("SELECT src_ref FROM cluster_members WHERE cluster_id = ? AND src_ref IS NOT NULL "
                                 "LIMIT 1", (cluster_id,)).fetchone()
        return None if found is None else found[0]

    def snippet(self, doc_id: int, start: int = 0, end: int | None = None, limit: int = SNIPPET,
                ref: int | None = None) -> dict[str, Any]:
        """Characters [start, end) of a document (of reference `ref`), cut in the middle past `limit`."""
        t = self.text(doc_id, ref)
        part = t[start:end]
        clipped = len(part) > limit
        if clipped:
            part = part[: limit // 2] + "\u2026" + part[-(limit // 2):]
        return {"doc_id": int(doc_id), "start": start, "end": len(t) if end is None else end, "chars": len(t),
                "text": part, "clipped": clipped, **({"src_ref": ref} if ref is not None else {})}

    def in_context(self, doc_id: int, start: int, end: int, limit: int = SNIPPET,
                   ref: int | None = None) -> dict[str, Any]:
        """A passage with up to CONTEXT characters either side: before, passage, after."""
        t = self.text(doc_id, ref)
        passage = t[start:end]
        if len(passage) > limit:
            passage = passage[: limit // 2] + "\u2026" + passage[-(limit // 2):]
        return {"doc_id": int(doc_id), "start": int(start), "end": int(end), "chars": len(t),
                "before": t[max(0, start - CONTEXT):start], "text": passage, "after": t[end:end + CONTEXT],
                "cut_before": start > CONTEXT, "cut_after": end + CONTEXT < len(t)}

    def rng(self, salt: str) -> np.random.Generator:
        """A generator per section, so one section's draws do not move another's."""
        return np.random.default_rng([self.seed, *map(ord, salt)])

    def seek_sample(self, table: str, key: str, where: str, args: tuple, k: int, salt: str) -> list[int]:
        """k distinct keys of `table` rows matching `where`, drawn at random through the
        primary key (ids of one method are one run of numbers, so the draw is near uniform)."""
        lo, hi, n = self.con.execute(f"SELECT min({key}), max({key}), count(*) FROM {table} WHERE {where}",
                                     args).fetchone()
        if not n:
            return []
        if n <= k:
            return [r[0] for r in self.con.execute(f"SELECT {key} FROM {table} WHERE {where} ORDER BY {key}", args)]
        rng = self.rng(salt)
        found: list[int] = []
        tries = 0
        while len(found) < k and tries < 20 * k:
            tries += 1
            at = int(rng.integers(lo, hi + 1))
            got = _one(self.con, f"SELECT {key} FROM {table} WHERE {where} AND {key} >= ? ORDER BY {key} LIMIT 1",
                       (*args, at))
            if got is not None and got not in found:
                found.append(got)
        return sorted(found)


# ---- the sections

def _datasheet(r: Reader) -> dict[str, Any]:
    ws, con = r.ws, r.con
    state = ws.read_state() or {}
    last = con.execute("SELECT run_id, command, started_at, finished_at, status, version, config, tokenizer "
                       "FROM runs ORDER BY run_id DESC LIMIT 1").fetchone()
    runs = _one(con, "SELECT count(*) FROM runs")
    resolved = {}
    if last is not None and last[6]:
        try:
            resolved = json.loads(last[6]).get("resolved", {})
        except ValueError:
            resolved = {}
    sources = {row[0]: {"documents": row[1], "chars": row[2]} for row in
               con.execute("SELECT source, count(*), sum(n_chars) FROM documents GROUP BY source")}
    for source, n in con.execute("SELECT source, count(*) FROM input_errors GROUP BY source"):
        sources.setdefault(source, {"documents": 0, "chars": 0})["input_errors"] = n
    return {
        "workdir": str(ws.root.resolve()),
        "sadedup_version": __version__,
        "run": None if last is None else {"run_id": last[0], "command": last[1], "started_at": last[2],
                                          "finished_at": last[3], "status": last[4], "version": last[5],
                                          "tokenizer": last[7]},
        "runs": runs,
        "workflow": state.get("workflow"),
        "resolved": resolved,
        "inputs": state.get("inputs") or [],
        "output": state.get("output"),
        "sources": [{"source": s, "documents": v["documents"], "chars": v["chars"] or 0,
                     "input_errors": v.get("input_errors", 0)} for s, v in sorted(sources.items())],
    }


def _documents(r: Reader) -> dict[str, Any]:
    con = r.con
    kept = _one(con, "SELECT count(*) FROM documents WHERE status = 'kept'")
    dropped = {reason or "dropped": n for reason, n in con.execute(
        "SELECT reason, count(*) FROM documents WHERE status != 'kept' GROUP BY reason ORDER BY reason")}
    cut = _one(con, "SELECT count(*) FROM documents WHERE status = 'kept' AND doc_id IN (SELECT doc_id FROM spans)")
    return {"input": kept + sum(dropped.values()), "kept": kept, "dropped": dropped, "cut": cut,
            "input_errors": _one(con, "SELECT count(*) FROM input_errors"),
            "input_rows": _one(con, "SELECT count(*) FROM input_errors WHERE source_row IS NOT NULL")
            + kept + sum(dropped.values())}


def _chars(r: Reader) -> dict[str, Any]:
    con = r.con
    total, kept = con.execute("SELECT coalesce(sum(n_chars), 0), coalesce(sum(CASE WHEN status = 'kept' THEN n_chars "
                              "END), 0) FROM documents").fetchone()
    cut = _one(con, f"SELECT coalesce(sum(u.cut), 0) FROM ({db.span_union_sql(False)}) u JOIN documents d USING (doc_id) "
                    f"WHERE d.status = 'kept'")
    nbytes = _one(con, "SELECT coalesce(sum(n_bytes), 0) FROM documents")
    return {"input": total, "output": kept - cut, "removed": total - (kept - cut), "dropped_documents": total - kept,
            "cut_from_kept": cut, "input_bytes": nbytes}


def _tokens(r: Reader) -> dict[str, Any] | None:
    """The substring stage's view: the tokens of the documents it tokenized."""
    reason = graph.REASONS.get("substring")
    row = r.con.execute("SELECT count(*), coalesce(sum(n_tokens), 0), coalesce(sum(CASE WHEN reason = ? THEN n_tokens "
                        "WHEN status = 'kept' THEN removed_tokens ELSE 0 END), 0) FROM documents "
                        "WHERE n_tokens IS NOT NULL", (reason,)).fetchone()
    if not row[0]:
        return None
    detail = r.ws.stage_detail("tokenize")
    return {"documents": row[0], "input": row[1], "removed": row[2], "output": row[1] - row[2],
            "tokenizer": detail.get("tokenizer")}


def _seconds(detail: dict[str, Any]) -> float | None:
    s = detail.get("seconds")
    if isinstance(s, dict):
        s = s.get("total")
    return None if s is None else float(s)


def span_methods(r: Reader) -> list[str]:
    """Methods that wrote spans, or whose span stage ran: in the graph's order, then others."""
    found = [m for (m,) in r.con.execute("SELECT DISTINCT method FROM spans")]
    wf = r.ws.workflow
    ran = [n.method or n.name for n in graph.NODES if (getattr(n, "spans", False) or n.name == "remove")
           and graph.enabled(n.name, wf) and r.ws.stage_row(n.name) is not None]
    order = [n.method or n.name for n in graph.NODES]
    both = list(dict.fromkeys(ran + found))
    return sorted(both, key=lambda m: (order.index(m) if m in order else len(order), m))


def _stages(r: Reader, methods: list[str]) -> list[dict[str, Any]]:
    """Documents and characters in and out of every deciding stage, in run order."""
    con, ws = r.con, r.ws
    n_docs, chars_in = con.execute("SELECT count(*), coalesce(sum(n_chars), 0) FROM documents").fetchone()
    out = []
    seen_methods: set[str] = set()
    deciding = [n for n in graph.NODES if n.decides and ws.stage_row(n.name) is not None]
    for n in deciding:
        method = n.method or n.name
        dropped, dropped_chars = con.execute("SELECT count(*), coalesce(sum(n_chars), 0) FROM documents "
                                             "WHERE reason = ?", (n.reason,)).fetchone()
        row = {"stage": n.name, "method": method, "reason": n.reason, "documents_in": n_docs, "dropped": dropped,
               "documents_out": n_docs - dropped, "chars_in": chars_in, "chars_dropped": dropped_chars}
        cut = 0
        if method in methods:
            seen_methods.add(method)
            cut = _one(con, f"SELECT coalesce(sum(u.cut), 0) FROM ({db.span_union_sql(True)}) u JOIN documents d "
                            f"USING (doc_id) WHERE d.status = 'kept' OR d.reason != ?", (method, n.reason))
            spans, cut_docs = con.execute("SELECT count(*), count(DISTINCT doc_id) FROM spans WHERE method = ?",
                                          (method,)).fetchone()
            row |= {"spans": spans, "documents_with_spans": cut_docs}
        row |= {"chars_cut": cut, "chars_out": chars_in - dropped_chars - cut,
                "seconds": _seconds(ws.stage_detail(n.name))}
        out.append(row)
        n_docs, chars_in = n_docs - dropped, chars_in - dropped_chars - cut
    for method in methods:  # spans of a method no stage of this sadedup declares
        if method not in seen_methods:
            spans, cut_docs = con.execute("SELECT count(*), count(DISTINCT doc_id) FROM spans WHERE method = ?",
                                          (method,)).fetchone()
            cut = _one(con, f"SELECT coalesce(sum(cut), 0) FROM ({db.span_union_sql(True)})", (method,))
            out.append({"stage": method, "method": method, "reason": None, "documents_in": n_docs, "dropped": 0,
                        "documents_out": n_docs, "chars_in": chars_in, "chars_dropped": 0, "spans": spans,
                        "documents_with_spans": cut_docs, "chars_cut": cut, "chars_out": chars_in - cut,
                        "seconds": None})
            chars_in -= cut
    return out


# ---- clusters and MinHash

def _clusters(r: Reader) -> dict[str, Any]:
    """Per cluster method: sizes, the largest clusters with their kept document's text."""
    con = r.con
    out: dict[str, Any] = {}
    for (method,) in con.execute("SELECT DISTINCT method FROM clusters ORDER BY method").fetchall():
        sizes = [[s, n] for s, n in con.execute("SELECT size, count(*) FROM clusters WHERE method = ? GROUP BY size "
                                                "ORDER BY size", (method,))]
        largest = []
        for cid, size, kept, rule in con.execute("SELECT cluster_id, size, kept_doc_id, keep_rule FROM clusters "
                                                 "WHERE method = ? ORDER BY size DESC, cluster_id LIMIT ?",
                                                 (method, TOP)).fetchall():
            ref = r.kept_ref(cid)  # a kept document of a reference (--reference)
            mean, low = con.execute("SELECT avg(similarity), min(similarity) FROM cluster_members WHERE cluster_id = ? "
                                    "AND NOT (doc_id = ? AND src_ref IS ?)", (cid, kept, ref)).fetchone()
            largest.append({"cluster_id": cid, "size": size, "kept_doc_id": kept, "keep_rule": rule,
                            "mean_similarity": mean, "min_similarity": low, "kept": r.snippet(kept, limit=240, ref=ref)})
        out[method] = {"clusters": sum(n for _, n in sizes), "members": sum(s * n for s, n in sizes),
                       "dropped": sum((s - 1) * n for s, n in sizes), "sizes": sizes, "largest": largest}
    return out


def _measured_points(r: Reader, store: sw.MinhashStore, scratch: Path) -> dict[str, Any]:
    """Signature agreement against exact Jaccard on a seeded sample of candidate pairs: per
    Jaccard bin the rows' agreement rate with its 95% Wilson interval (pooled over the bin's
    signature rows), that rate put through the S-curve, and how the verification at the
    threshold fares against the exact value on the sample."""
    cfg = store.cfg
    P = len(store.pi)
    if P == 0:
        return {"pairs": 0, "bins": [], "points": []}
    rng = r.rng("s-curve")
    take = np.sort(rng.choice(P, size=min(P, MEASURED_PAIRS), replace=False))
    a, b = store.pi[take], store.pj[take]
    rows = np.unique(np.concatenate([a, b]))
    ia, ib = np.searchsorted(rows, a), np.searchsorted(rows, b)
    agree = mh.estimate_pairs(store.signatures(rows), ia, ib)
    jac = store.shingle_sets(rows, scratch)(ia, ib)
    k = cfg.num_perm
    bins = []
    edges = np.linspace(0.0, 1.0, JACCARD_BINS + 1)
    which = np.minimum((jac * JACCARD_BINS).astype(np.int64), JACCARD_BINS - 1)
    for i in range(JACCARD_BINS):
        m = which == i
        n = int(m.sum())
        if not n:
            continue
        hits = float(np.round(agree[m] * k).sum())
        lo, hi = wilson(hits, n * k)
        p = hits / (n * k)

        def s(x: float) -> float:
            return 1.0 - (1.0 - x ** cfg.rows) ** cfg.bands

        mean_j = float(jac[m].mean())
        bins.append({"jaccard_from": _r(edges[i], 3), "jaccard_to": _r(edges[i + 1], 3), "pairs": n,
                     "mean_jaccard": _r(mean_j), "agreement": _r(p), "agreement_low": _r(lo),
                     "agreement_high": _r(hi), "s_curve_theory": _r(s(mean_j)), "s_curve_measured": _r(s(p)),
                     "s_curve_low": _r(s(lo)), "s_curve_high": _r(s(hi))})
    t = cfg.threshold
    said = sw.verified_at(r.ws, store, t)[0][take]   # what the stage decided for these pairs
    true = jac >= t
    tp, fp, fn = int((said & true).sum()), int((said & ~true).sum()), int((~said & true).sum())
    prec, rec = wilson(tp, tp + fp), wilson(tp, tp + fn)
    err = agree - jac
    return {
        "pairs": int(len(take)), "of": P, "seed": r.seed, "num_perm": k,
        "bins": bins,
        # (doc_id, doc_id, exact Jaccard, signature agreement) of every sampled pair
        "points": [[int(x), int(y), _r(j, 6), _r(g, 6)] for x, y, j, g in
                   zip(store.doc_ids[a].tolist(), store.doc_ids[b].tolist(), jac.tolist(), agree.tolist())],
        "mean_error": _r(err.mean()), "rms_error": _r(np.sqrt((err ** 2).mean())),
        "expected_rms_error": _r(np.sqrt((jac * (1 - jac) / k).mean())),
        "at_threshold": {"threshold": t, "verified": tp + fp, "true_positive": tp, "false_positive": fp,
                         "false_negative": fn,
                         "precision": _r(tp / (tp + fp)) if tp + fp else None, "precision_low": _r(prec[0]),
                         "precision_high": _r(prec[1]),
                         "recall": _r(tp / (tp + fn)) if tp + fn else None, "recall_low": _r(rec[0]),
                         "recall_high": _r(rec[1])},
    }


def _hotspots(r: Reader, store: sw.MinhashStore) -> list[dict[str, Any]]:
    """The LSH buckets with the most documents (a band's equal hashes, HOTSPOT or more of
    them), over every band: a bucket of m documents makes m(m-1)/2 candidate pairs (2m - 3
    past lsh.BUCKET_ALL); a template shared by many documents shows here first."""
    cfg = store.cfg
    has = np.flatnonzero(store.nsh > 0)
    if len(has) < 2:
        return []
    found: dict[tuple[int, int], dict[str, Any]] = {}
    for band in range(cfg.bands):
        h = np.concatenate([load_npy(d / "bands.npy")[band] for d in store.dirs])[has]
        order = np.argsort(h, kind="stable")
        hs = h[order]
        start = np.flatnonzero(np.r_[True, hs[1:] != hs[:-1]])
        size = np.diff(np.r_[start, len(hs)])
        for at in np.argsort(-size, kind="stable")[:TOP]:
            m = int(size[at])
            if m < HOTSPOT:
                break
            members = np.sort(has[order[start[at]:start[at] + m]])
            key = (m, int(members[0]))
            if key in found:
                found[key]["bands"].append(band)
                continue
            found[key] = {"documents": m, "bands": [band], "rows": members}
    out = []
    for item in sorted(found.values(), key=lambda x: (-x["documents"], int(x["rows"][0])))[:TOP]:
        m = item["documents"]
        ids = store.doc_ids[item.pop("rows")]
        dropped = 0
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500].tolist()
            dropped += _one(r.con, f"SELECT count(*) FROM documents WHERE reason = 'near_duplicate' AND doc_id IN "
                                   f"({','.join('?' * len(part))})", tuple(part))
        out.append(item | {"pairs": m * (m - 1) // 2 if m <= mh.BUCKET_ALL else 2 * m - 3,
                           "dropped_as_near_duplicate": dropped, "first": r.snippet(int(ids[0]), limit=240)})
    return out


def _minhash(r: Reader, scratch: Path, thresholds: list[float]) -> dict[str, Any] | None:
    ws = r.ws
    row = ws.stage_row("minhash")
    if row is None or row.status != "done" or not graph.enabled("minhash", ws.workflow):
        return None
    cfg = ws.workflow.minhash
    d = ws.stage_detail("minhash")
    n = int(d.get("documents", 0))
    with_shingle = n - int(d.get("no_shingle", 0))
    all_pairs = n * (n - 1) // 2
    out: dict[str, Any] = {
        "config": d.get("config"), "bands": cfg.bands, "rows": cfg.rows, "num_perm": cfg.num_perm,
        "ngram": cfg.ngram, "shingle": cfg.shingle, "threshold": cfg.threshold, "verify": cfg.verify,
        "keep": cfg.keep, "drift_floor": d.get("drift_floor"), "documents": n, "no_shingle": d.get("no_shingle"),
        "candidate_pairs": d.get("candidate_pairs"), "all_pairs": all_pairs,
        "candidate_pair_share": (d.get("candidate_pairs", 0) / all_pairs) if all_pairs else 0.0,
        "pairs_of_shingled": with_shingle * (with_shingle - 1) // 2,
        "verified_pairs": d.get("verified_pairs"), "clusters": d.get("clusters"), "dropped": d.get("dropped"),
        "knee": _r((1.0 / cfg.bands) ** (1.0 / cfg.rows), 4),
        "s_curve": [[_r(j, 3), _r(p)] for j, p in mh.s_curve(cfg.bands, cfg.rows, np.linspace(0, 1, 101)).items()],
        "seconds": d.get("seconds"),
    }
    why = sw.stale_reason(ws, "minhash")
    if why:
        out["stale"] = why
        return out
    store = sw.minhash_store(ws, scratch)
    out["measured"] = _measured_points(r, store, scratch)
    out["hotspots"] = _hotspots(r, store)
    values = sorted(set(thresholds) | {cfg.threshold})
    # a run against references decides with their documents too: this folder's pairs alone
    # cannot say what another threshold would do
    out["sweep"] = None if ws.workflow.run.reference else sw.threshold_answers(ws, store, values, scratch)
    return out


# ---- span stages

def _spans(r: Reader, methods: list[str]) -> dict[str, Any]:
    con = r.con
    out: dict[str, Any] = {}
    reasons = graph.REASONS
    for method in methods:
        reason = reasons.get(method)
        n, docs, chars = con.execute("SELECT count(*), count(DISTINCT doc_id), coalesce(sum(char_end - char_start), 0) "
                                     "FROM spans WHERE method = ?", (method,)).fetchone()
        union = f"({db.span_union_sql(True)})"
        covered = _one(con, f"SELECT coalesce(sum(cut), 0) FROM {union}", (method,))
        lengths = [[b, c] for b, c in con.execute(
            f"SELECT {_log2_bins('char_end - char_start')} AS bin, count(*) FROM spans WHERE method = ? "
            f"GROUP BY bin ORDER BY bin", (method,))]
        coverage = [[b, c] for b, c in con.execute(
            f"SELECT min(CAST(CAST(u.cut AS REAL) / max(d.n_chars, 1) * {COVERAGE_BINS} AS INTEGER), "
            f"{COVERAGE_BINS - 1}) AS bin, count(*) FROM {union} u JOIN documents d USING (doc_id) "
            f"GROUP BY bin ORDER BY bin", (method,))]
        dropped = _one(con, "SELECT count(*) FROM documents WHERE reason = ?", (reason,)) if reason else 0
        by_source = [{"source": s, "spans": k, "documents": dd, "chars": c} for s, k, dd, c in con.execute(
            "SELECT d.source, count(*), count(DISTINCT s.doc_id), sum(s.char_end - s.char_start) FROM spans s "
            "JOIN documents d USING (doc_id) WHERE s.method = ? GROUP BY d.source ORDER BY d.source", (method,))]
        out[method] = {"spans": n, "documents": docs, "dropped": dropped, "reason": reason, "span_chars": chars,
                       "covered_chars": covered, "length_bins": lengths, "coverage_bins": coverage,
                       "top_passages": _top_passages(r, method), "by_source": by_source}
    return out


def _top_passages(r: Reader, method: str) -> list[dict[str, Any]]:
    """The passages most often removed: spans grouped by the text they duplicated (the same
    source document and offset, or the same eval item), with a few documents they were cut from."""
    con = r.con
    found = []
    for src, at, end, n, docs in con.execute(
            "SELECT src_doc_id, src_char_start, max(src_char_end), count(*) AS n, count(DISTINCT doc_id) FROM spans "
            "WHERE method = ? AND src_doc_id IS NOT NULL AND src_char_start IS NOT NULL AND src_ref IS NULL "
            "GROUP BY src_doc_id, src_char_start ORDER BY n DESC, src_doc_id, src_char_start LIMIT ?",
            (method, TOP)).fetchall():
        examples = [d for (d,) in con.execute("SELECT DISTINCT doc_id FROM spans WHERE src_doc_id = ? AND "
                                              "src_char_start = ? AND method = ? ORDER BY doc_id LIMIT 5",
                                              (src, at, method))]
        found.append({"count": n, "documents": docs, "source": r.snippet(src, at, end, limit=400),
                      "examples": examples})
    if _has_table(con, "eval_items"):
        for item, n, docs, doc, a, b in con.execute(
                "SELECT src_item_id, count(*) AS n, count(DISTINCT doc_id), min(doc_id), min(char_start), "
                "min(char_end) FROM spans WHERE method = ? AND src_item_id IS NOT NULL GROUP BY src_item_id "
                "ORDER BY n DESC, src_item_id LIMIT ?", (method, TOP)).fetchall():
            e = con.execute("SELECT eval_file, eval_row, field FROM eval_items WHERE item_id = ?", (item,)).fetchone()
            examples = [d for (d,) in con.execute("SELECT DISTINCT doc_id FROM spans WHERE src_item_id = ? AND "
                                                  "method = ? ORDER BY doc_id LIMIT 5", (item, method))]
            found.append({"count": n, "documents": docs, "eval_item": None if e is None else
                          {"item_id": item, "eval_file": e[0], "eval_row": e[1], "field": e[2]},
                          "source": r.snippet(doc, a, b, limit=400), "examples": examples})
    found.sort(key=lambda x: -x["count"])
    return found[:TOP]


def _by_source(r: Reader) -> list[dict[str, Any]]:
    """Per input file: documents in, kept, dropped by reason, characters in and out."""
    con = r.con
    rows = {s: {"source": s, "documents": n, "kept": k, "chars_in": c, "chars_out": ck, "dropped": {}}
            for s, n, k, c, ck in con.execute(
                "SELECT source, count(*), sum(status = 'kept'), sum(n_chars), "
                "coalesce(sum(CASE WHEN status = 'kept' THEN n_chars END), 0) FROM documents GROUP BY source")}
    for s, reason, n in con.execute("SELECT source, reason, count(*) FROM documents WHERE status != 'kept' "
                                    "GROUP BY source, reason"):
        rows[s]["dropped"][reason or "dropped"] = n
    for s, cut in con.execute(f"SELECT d.source, sum(u.cut) FROM ({db.span_union_sql(False)}) u JOIN documents d "
                              f"USING (doc_id) WHERE d.status = 'kept' GROUP BY d.source"):
        rows[s]["chars_out"] -= cut
    return [rows[s] for s in sorted(rows)]


def _decontamination(r: Reader) -> dict[str, Any] | None:
    con = r.con
    if not _has_table(con, "eval_items") or not _one(con, "SELECT count(*) FROM eval_items"):
        return None
    sets = {}
    for f, verdict, n, matched in con.execute("SELECT eval_file, verdict, count(*), sum(matched_docs) FROM eval_items "
                                              "GROUP BY eval_file, verdict ORDER BY eval_file, verdict"):
        e = sets.setdefault(f, {"eval_file": f, "items": 0, "verdicts": {}, "matched_docs": 0})
        e["items"] += n
        e["verdicts"][verdict] = n
        e["matched_docs"] += matched or 0
    for f, mean in con.execute("SELECT eval_file, avg(overlap) FROM eval_items GROUP BY eval_file"):
        sets[f]["mean_overlap"] = mean
    top = [dict(zip(("item_id", "eval_file", "eval_row", "field", "n_ngrams", "n_matched", "overlap", "verdict",
                     "matched_docs"), row)) for row in con.execute(
        "SELECT item_id, eval_file, eval_row, field, n_ngrams, n_matched, overlap, verdict, matched_docs "
        "FROM eval_items WHERE overlap > 0 ORDER BY overlap DESC, item_id LIMIT ?", (TOP,))]
    return {"eval_sets": list(sets.values()), "most_contaminated": top}


# ---- samples for review

def _sample(r: Reader, methods: list[str], k: int) -> dict[str, Any]:
    """A seeded random sample of clusters (kept beside each dropped member) and of spans
    (the removed text in its place beside the text it duplicated)."""
    con = r.con
    clusters: dict[str, list] = {}
    for (method,) in con.execute("SELECT DISTINCT method FROM clusters ORDER BY method").fetchall():
        picked = []
        for cid in r.seek_sample("clusters", "cluster_id", "method = ?", (method,), k, f"clusters:{method}"):
            size, kept, rule = con.execute("SELECT size, kept_doc_id, keep_rule FROM clusters WHERE cluster_id = ?",
                                           (cid,)).fetchone()
            ref = r.kept_ref(cid)
            members = con.execute("SELECT doc_id, similarity FROM cluster_members WHERE cluster_id = ? "
                                  "AND NOT (doc_id = ? AND src_ref IS ?) ORDER BY doc_id LIMIT 3",
                                  (cid, kept, ref)).fetchall()
            picked.append({"cluster_id": cid, "size": size, "keep_rule": rule, "kept": r.snippet(kept, ref=ref),
                           "dropped": [r.snippet(d) | {"similarity": s} for d, s in members]})
        clusters[method] = picked
    spans: dict[str, list] = {}
    has_items = _has_table(con, "eval_items")
    for method in methods:
        picked = []
        for sid in r.seek_sample("spans", "span_id", "method = ?", (method,), k, f"spans:{method}"):
            row = con.execute("SELECT * FROM spans WHERE span_id = ?", (sid,)).fetchone()
            names = [d[0] for d in con.execute("SELECT * FROM spans LIMIT 0").description]
            s = dict(zip(names, row))
            item = None
            if has_items and s.get("src_item_id") is not None:
                e = con.execute("SELECT eval_file, eval_row, field FROM eval_items WHERE item_id = ?",
                                (s["src_item_id"],)).fetchone()
                item = None if e is None else {"eval_file": e[0], "eval_row": e[1], "field": e[2]}
            src = None
            if s.get("src_doc_id") is not None and s.get("src_char_start") is not None:
                src = r.in_context(s["src_doc_id"], s["src_char_start"], s["src_char_end"], ref=s.get("src_ref"))
            picked.append({"span_id": sid, "doc_id": s["doc_id"], "similarity": s.get("similarity"),
                           "removed": r.in_context(s["doc_id"], s["char_start"], s["char_end"]), "source": src,
                           "eval_item": item, "src_ref": s.get("src_ref")})
        spans[method] = picked
    return {"seed": r.seed, "per_method": k, "clusters": clusters, "spans": spans}


# ---- resources

# which stage wrote a file of the substring folders, by name (sadedup/stages/*.py)
_FILE_STAGE = {"tokens.npy": "tokenize", "docs.npy": "tokenize", "offsets.npy": "tokenize", "shards.json": "tokenize",
               "anchors_hash.npy": "candidates", "anchors_pos.npy": "candidates", "anchors_sorted.npy": "candidates",
               "starts.npy": "candidates", "repeated.npy": "candidates", "sa.npy": "build", "lcp.npy": "build",
               "wpos.npy": "repeats", "wl.npy": "repeats", "run_gid.npy": "repeats", "gid.npy": "repeats"}


def _walk(path: Path) -> Iterator[tuple[Path, int]]:
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for e in entries:
        try:
            if e.is_dir(follow_symlinks=False):
                yield from _walk(Path(e.path))
            elif e.is_file(follow_symlinks=False):
                yield Path(e.path), e.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            continue


def _disk(ws: Workspace) -> dict[str, int]:
    """Bytes on disk per stage: each stage's top folder, and the substring folder's files
    by the stage that writes them (candidate text under L<L>/ is the candidates stage's)."""
    out: dict[str, int] = {}
    owner = {f: n.name for n in graph.NODES for f in n.folders}
    for top in sorted(ws.root.iterdir()):
        if top.is_dir() and top.name in owner and top.name != "substring":
            out[owner[top.name]] = out.get(owner[top.name], 0) + sum(s for _, s in _walk(top))
    sub = ws.root / "substring"
    if sub.is_dir():
        for p, size in _walk(sub):
            stage = _FILE_STAGE.get(p.name, "tokenize")
            in_window = any(part.startswith("L") and part[1:].isdigit() for part in p.relative_to(sub).parts[:-1])
            if in_window and p.name in ("tokens.npy", "offsets.npy"):
                stage = "candidates"
            out[stage] = out.get(stage, 0) + size
    tok = ws.root / "tokenizers"
    if tok.is_dir():
        out["tokenize"] = out.get("tokenize", 0) + sum(s for _, s in _walk(tok))
    return out


def _resources(r: Reader) -> dict[str, Any]:
    ws = r.ws
    disk = _disk(ws)
    rows = []
    for n in graph.NODES:
        row = ws.stage_row(n.name)
        if row is None:
            continue
        d = json.loads(row.detail or "{}")
        peak = d.get("peak_rss") or d.get("peak_memory")
        rows.append({"stage": n.name, "status": row.status, "started_at": row.started_at,
                     "finished_at": row.finished_at, "seconds": _seconds(d), "disk_bytes": disk.get(n.name, 0),
                     "peak_memory_bytes": peak})
    dbsize = sum(p.stat().st_size for p in ws.root.glob(db.DB_NAME + "*") if p.is_file())
    wf = ws.workflow
    return {"stages": rows, "database_bytes": dbsize, "disk_bytes": sum(disk.values()) + dbsize,
            "memory_budget_bytes": wf.run.budget_bytes, "workers": wf.run.n_workers,
            "peak_memory_recorded": any(x["peak_memory_bytes"] for x in rows)}


# ---- the report

def build_report(ws: Workspace, scratch: Path, seed: int = 0, sample: int = 6,
                 minhash_thresholds: list[float] | None = None, min_lengths: list[int] | None = None,
                 executor: str | None = None, workers: int | None = None) -> dict[str, Any]:
    """Every number of the report, for a work folder held by the caller (see `report`)."""
    con = _connect(ws.root)
    try:
        r = Reader(ws, con, seed)
        methods = span_methods(r)
        data: dict[str, Any] = {"datasheet": _datasheet(r), "documents": _documents(r), "chars": _chars(r),
                                "tokens": _tokens(r)}
        data["stages"] = _stages(r, methods)
        data["clusters"] = _clusters(r)
        thresholds = list(minhash_thresholds) if minhash_thresholds else list(sw.REPORT_THRESHOLDS)
        data["minhash"] = _minhash(r, scratch, thresholds)
        data["spans"] = _spans(r, methods)
        data["by_source"] = _by_source(r)
        data["decontamination"] = _decontamination(r)
        data["sample"] = _sample(r, methods, sample)
        data["resources"] = _resources(r)
        data["sweep"] = None
        data["unfinished"] = unfinished(ws)
        if min_lengths or minhash_thresholds:
            data["sweep"] = sw.sweep_held(ws, scratch, minhash_thresholds or [], min_lengths or [], executor, workers,
                                          strict=False)
    finally:
        con.close()
    return data


def unfinished(ws: Workspace) -> list[dict[str, str]]:
    """The workflow's stages that are not done ({stage, state, why}, as `sadedup status` says):
    a report of a folder mid-way shows the numbers of the stages done so far, and says so."""
    from .pipeline import standing

    return [s for s in standing(ws, verify=False) if s["state"] != "done"]


def report(workdir: str | Path, output: str | Path | None = None, seed: int = 0, sample: int = 6,
           minhash_thresholds: Any = None, min_lengths: Any = None, executor: str | None = None,
           workers: int | None = None) -> dict[str, Any]:
    """The audit report of a work folder: its numbers as a dict (what `--format json` prints)
    and, with `output`, the self-contained HTML page written there.

    Args:
        workdir: a work folder (a finished or partial run; sections of stages that did not
            run are left out).
        output: where to write the HTML page (None: no page).
        seed: for the samples and the measured S-curve points (same seed, same report).
        sample: clusters and spans shown per method for review.
        minhash_thresholds, min_lengths: a sweep to include and plot ("0.6,0.7" or a list);
            without them the report sweeps MinHash thresholds from 0.5 to 0.95 from the
            stored candidate pairs, which costs little.
    """
    thresholds = sw.parse_values(minhash_thresholds, sw.THRESHOLD)
    lengths = sw.parse_values(min_lengths, sw.LENGTH)
    if sample < 0:
        raise SadedupError(f"report: --sample must be 0 or more, not {sample}")
    out_path = None if output is None else Path(output)
    with sw.held(workdir) as ws:
        if out_path is not None:  # said before any work
            check_outside(out_path, ws.root, name="report", shown=output)
            named, files = ws.held_apart()
            check_apart(out_path, named, [*files, *claimed(ws.workflow, ws.output)], name="report")
            check_target(out_path, name="report", shown=output)
            if not os.access(out_path.resolve().parent, os.W_OK):
                raise SadedupError(f"report {output}: cannot write in {out_path.resolve().parent}")
        with sw.scratch_folder(ws) as scratch:
            data = build_report(ws, scratch, seed, sample, thresholds, lengths, executor, workers)
    if out_path is not None:
        from .audit_html import render
        from .outputs import output_lock
        from .workspace import replaced

        # two reports (of two folders) to one file wrote one .partial at once: one failed with
        # "No such file or directory: ....partial", and the file left could mix the two
        with output_lock(out_path, "report"), replaced(out_path, ".partial") as f:
            faults.point("report.write")
            f.write(render(data).encode("utf-8", "replace"))
    return data
