"""Remove: decide, in one pass in document order, which tokens of every document go.

keep="first": a window is a duplicate when its group was already seen at an earlier
window of a surviving document (the same document's earlier windows count); a document
that ends up dropped takes back every first sighting it made, so a dropped document is
never the copy that was kept. keep="none": every window of a repeated group goes.

A document's removed tokens are the union of its duplicate windows, as maximal runs
(spans); it is dropped when removed / n_tokens > drop_fraction (IEEE double). Each span
records the source of its first window (DESIGN.md) and its character offsets, shrunk
inward to whole characters: for a subword tokenizer from the character bounds the tokenize
stage kept beside the tokens (tokenizers.ShardChars), so no document is encoded again.
Results go to the database: `spans` and `documents`.

With references (--reference, sadedup/reference.py) every group seen in their text starts the
pass already seen (keep="first": in a kept reference document), at a position after this
run's tokens: a window of it is a duplicate whose source is in the reference (src_ref), and
the references' own text is never cut.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import db, faults, native, reference
from ..progress import bar
from ..store import TextStore
from ..tokenizers import ByteTokenizer, ShardChars, char_spans
from ..workspace import load_npy, writable_npy
from ..keep import decisions_digest
from .base import Context, Stage
from .candidates import window_dirs, window_folder
from .sizing import usable_budget
from .tokenize import run_tokenizer, shard_dirs

def _group_state(path: Path, groups: int, budget: int) -> np.ndarray:
    """int64 per repeated group, -1 to start; in a file when it would take over a quarter
    of the usable memory budget (it is read in document order, so the page cache copes)."""
    if groups * 8 <= budget // 4:
        return np.full(groups, -1, dtype=np.int64)
    arr = writable_npy(path, np.int64, (groups,))
    arr[:] = -1
    return arr


def _first_two(firsts: np.ndarray, runs: "native.Runs | None", n: int, base: int, first: np.ndarray,
               second: np.ndarray) -> None:
    """Every group's first and second global position, shard after shard in document order,
    from the shard's list (repeats.py, firsts.npy: group ids increasing, so first/second are
    read forward), the same as native.first_two's pass over every window. `runs` place
    sorted-text positions in the shard of n positions (None: they are shard positions)."""
    native.merge_first_two(firsts, runs, n, base, first, second)


@dataclass
class _Shards:
    """Where every document sits: per shard its folder, token offsets and doc_ids, and the
    same flattened over the corpus (global token starts), to map a position to a document."""
    dirs: list[Path]
    offsets: list[np.ndarray]
    doc_ids: list[np.ndarray]

    def __post_init__(self) -> None:
        sizes = np.array([int(o[-1]) for o in self.offsets], dtype=np.int64)
        self.bases = np.concatenate(([0], np.cumsum(sizes)))
        none = [np.zeros(0, np.int64)]
        self.gstarts = np.concatenate([o[:-1] + self.bases[k] for k, o in enumerate(self.offsets)] + none)
        self.gdoc = np.concatenate(self.doc_ids + none)
        self.gshard = np.concatenate([np.full(len(d), k) for k, d in enumerate(self.doc_ids)] + none)
        self.glocal = np.concatenate([np.arange(len(d)) for d in self.doc_ids] + none)


class Remove(Stage):
    name = "remove"

    def settings(self, ctx: Context) -> Any:
        s = ctx.wf.substring
        return [s.keep, s.drop_fraction]

    def summary(self, d: dict[str, Any]) -> str:
        share = d["removed_tokens"] / max(d["tokens"], 1)
        return (f"remove: {d['spans']} span(s), {d['removed_tokens']} of {d['tokens']} tokens ({share:.1%}); "
                f"{d['cut']} document(s) cut, {d['dropped']} dropped over drop_fraction={d['drop_fraction']}")

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        ws, wf = ctx.ws, ctx.wf
        dirs = shard_dirs(ws)
        shards = _Shards(dirs, [np.load(s / "offsets.npy") for s in dirs], [np.load(s / "docs.npy") for s in dirs])
        per_shard = self._select(ctx, shards)
        cols, removed_chars = self._spans(ctx, shards, per_shard)
        return self._record(ws, shards, per_shard, cols, removed_chars) | {
            "keep": wf.substring.keep, "drop_fraction": wf.substring.drop_fraction}

    @staticmethod
    def _select(ctx: Context, shards: _Shards) -> list[tuple]:
        """The keep rule and the drop rule, shard after shard in document order (native):
        per shard, removed tokens and dropped flag per document, and its spans."""
        wf = ctx.wf
        L, keep, drop = wf.substring.window, wf.substring.keep, wf.substring.drop_fraction
        outs = window_dirs(ctx.ws, L)
        # gid covers the text Build sorted: over candidate text, the regions place it
        sorted_text = outs if wf.substring.prefilter else None

        def runs(k: int) -> native.Runs | None:
            return None if sorted_text is None else \
                (np.load(sorted_text[k] / "starts.npy"), np.load(sorted_text[k] / "offsets.npy"))

        groups = ctx.ws.stage_detail("repeats")["groups"]
        scratch = window_folder(ctx.ws, L) / "group_state.npy"
        budget = usable_budget(wf)
        per_shard = []
        # the references' text comes before every document here (--reference): each group seen
        # there starts out seen at its first occurrence, numbered after this run's tokens
        refs = bool(wf.run.reference)
        if keep == "first":
            src = _group_state(scratch, groups, budget)
            if refs:  # in a kept reference document: an earlier surviving occurrence
                reference.preset(ctx, src, int(shards.bases[-1]), kept_only=True)
        else:
            first = _group_state(scratch, groups, budget // 2)
            second = _group_state(scratch.with_name("group_state2.npy"), groups, budget // 2)
            if refs:  # in any reference document that reached the substring stage: an occurrence
                reference.preset(ctx, first, int(shards.bases[-1]), kept_only=False)
            for k, o in enumerate(outs):
                _first_two(np.load(o / "firsts.npy"), runs(k), int(shards.offsets[k][-1]), int(shards.bases[k]), first,
                           second)
        with bar("remove", len(outs), "shards") as b:
            for k, o in enumerate(outs):
                gid = load_npy(o / "gid.npy")
                if keep == "first":
                    res = native.select_first(gid, shards.offsets[k], L, drop, int(shards.bases[k]), src, runs=runs(k))
                else:
                    res = native.select_none(gid, shards.offsets[k], L, drop, int(shards.bases[k]), first, second,
                                             runs=runs(k))
                per_shard.append(res)
                b.advance()
        for p in (scratch, scratch.with_name("group_state2.npy")):
            p.unlink(missing_ok=True)
        return per_shard

    def _spans(self, ctx: Context, shards: _Shards, per_shard: list[tuple]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The spans' columns (doc_id, tokens, characters, and the source of each: document,
        token offset, characters), and the characters removed per document, per shard."""
        tok = run_tokenizer(ctx)
        store = TextStore(ctx.ws.root)
        none = [np.zeros(0, np.int64)]
        span_cols: list[list[np.ndarray]] = [[] for _ in range(9)]
        removed_chars = [np.zeros(len(d), np.int64) for d in shards.doc_ids]
        src_pos_all = np.concatenate([r[2][3] for r in per_shard] + none)
        lengths = np.concatenate([r[2][2] - r[2][1] for r in per_shard] + none)
        # a source at or past this run's last token is in a reference (reference.preset)
        total = int(shards.bases[-1])
        in_ref = (src_pos_all >= total) if ctx.wf.run.reference else np.zeros(len(src_pos_all), bool)
        src_pos_all = np.where(in_ref, 0, src_pos_all)  # found in the reference below
        src_idx = np.searchsorted(shards.gstarts, src_pos_all, side="right") - 1
        src_off = src_pos_all - shards.gstarts[src_idx] if len(src_idx) else src_pos_all
        src_chars = self._source_chars(tok, store, shards, src_idx, src_off, lengths)
        at = 0
        for k, (_, _, (sd, ss, se, _)) in enumerate(per_shard):
            tokens = load_npy(shards.dirs[k] / "tokens.npy")
            cs, ce = char_spans(tok, store.texts, tokens, shards.offsets[k], shards.doc_ids[k], sd, ss, se,
                                chars=self._chars(tok, shards, k))
            np.add.at(removed_chars[k], sd, ce - cs)
            m = len(sd)
            for col, arr in zip(span_cols, (shards.doc_ids[k][sd], ss, se, cs, ce, shards.gdoc[src_idx[at:at + m]],
                                            src_off[at:at + m], src_chars[0][at:at + m], src_chars[1][at:at + m])):
                col.append(arr)
            at += m
        cols = [np.concatenate(c) if c else np.zeros(0, np.int64) for c in span_cols]
        if ctx.wf.run.reference:  # the sources in a reference, and the src_ref column
            found = reference.sources(ctx, np.concatenate([r[2][3] for r in per_shard] + none)[in_ref] - total,
                                      lengths[in_ref])
            for c, v in zip(cols[5:9], (found.doc_id, found.tok_start, found.char_start, found.char_end)):
                c[in_ref] = v
            src_ref = np.full(len(in_ref), -1, np.int64)
            src_ref[in_ref] = found.ref
            cols.append(src_ref)
        return cols, removed_chars

    @staticmethod
    def _record(ws, shards: _Shards, per_shard: list[tuple], cols: list[np.ndarray],
                removed_chars: list[np.ndarray]) -> dict[str, Any]:
        """Spans and per-document decisions to the database, in one transaction."""
        n_spans = len(cols[0])
        none = [np.zeros(0, np.int64)]
        all_ids = np.concatenate(shards.doc_ids + none)
        ntok = np.concatenate([np.diff(o) for o in shards.offsets] + none)
        rem = np.concatenate([r[0] for r in per_shard] + none)
        drp = np.concatenate([r[1] for r in per_shard] + [np.zeros(0, bool)])
        rch = np.concatenate(removed_chars + none)
        cov = np.where(ntok > 0, rem / np.maximum(ntok, 1), 0.0)
        faults.point("remove.db")
        names = ["doc_id", "tok_start", "tok_end", "char_start", "char_end", "src_doc_id", "src_tok_start",
                 "src_char_start", "src_char_end"]
        rows = cols
        if len(cols) > len(names):  # src_ref (references): -1, a source in this folder, is NULL
            names.append("src_ref")
            src_ref = cols[-1].astype(object)
            src_ref[cols[-1] < 0] = None
            rows = [*cols[:-1], src_ref]
        # no span_id: the writer numbers them after the spans of the stages that cut before
        ws.prov.replace_spans("remove", names, db.column_rows(rows),
                              ["n_tokens", "removed_tokens", "coverage", "removed_chars"],
                              db.column_rows([all_ids, ntok, rem, cov, rch]), all_ids[drp])
        return {"spans": n_spans, "removed_tokens": int(rem.sum()), "tokens": int(ntok.sum()),
                "dropped": int(drp.sum()), "cut": int(((rem > 0) & ~drp).sum()),
                "digest": decisions_digest(*cols, all_ids, rem, drp)}

    @staticmethod
    def _source_chars(tok, store, shards: _Shards, src_idx, src_off, length):
        """Character extent in the source document of the text a span duplicated."""
        cs = np.zeros(len(src_idx), np.int64)
        ce = np.zeros(len(src_idx), np.int64)
        if not len(src_idx):
            return cs, ce
        sh = shards.gshard[src_idx]
        for k in np.unique(sh):
            m = sh == k
            local = shards.glocal[src_idx[m]]
            offsets = shards.offsets[k]
            ntok = offsets[local + 1] - offsets[local]
            start = src_off[m]
            end = np.minimum(start + length[m], ntok)
            tokens = load_npy(shards.dirs[k] / "tokens.npy")
            cs[m], ce[m] = char_spans(tok, store.texts, tokens, offsets, shards.doc_ids[k], local, start, end,
                                      chars=Remove._chars(tok, shards, k))
        return cs, ce

    @staticmethod
    def _chars(tok, shards: _Shards, k: int) -> ShardChars | None:
        """Shard k's kept character bounds (a subword tokenizer's; the tokenize stage's record
        lists them, so a current stage has them)."""
        return None if isinstance(tok, ByteTokenizer) else ShardChars.load(shards.dirs[k], shards.offsets[k])
