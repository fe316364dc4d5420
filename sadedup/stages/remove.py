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

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import db, faults, native, reference
from ..executor import run_all
from ..progress import bar
from ..store import TextStore
from ..tokenizers import ByteTokenizer, ShardChars, char_spans
from ..workspace import file_bytes, load_npy, save_npy, writable_npy
from ..keep import decisions_digest
from .base import Context, Stage, driver_wrote
from .candidates import window_dirs, window_folder
from .tokenize import run_model, shard_dirs, task_tokenizer

def _group_state(path: Path, groups: int) -> np.ndarray:
    """int64 per repeated group, -1 to start, in a mapped file: the tasks that read it get its
    path, and it is read in document order, so the page cache copes."""
    arr = writable_npy(path, np.int64, (groups,), whole=True)
    arr[:] = -1
    return arr


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
        # the tasks' files: none from a former run is trusted, and none outlives this one
        scratch = window_folder(ws, wf.substring.window) / "remove"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        per_shard = self._select(ctx, shards, scratch)
        cols, removed_chars = self._spans(ctx, shards, per_shard, scratch)
        shutil.rmtree(scratch)
        return self._record(ws, shards, per_shard, cols, removed_chars) | {
            "keep": wf.substring.keep, "drop_fraction": wf.substring.drop_fraction}

    @staticmethod
    def _select(ctx: Context, shards: _Shards, scratch: Path) -> list[tuple]:
        """The keep rule and the drop rule, shard after shard in document order (native), as
        tasks: per shard, removed tokens and dropped flag per document, and its spans.

        keep="first" is one walk in document order (a group's first surviving occurrence
        depends on every shard before, through the drop rule's cascade): ONE SelectFirst task,
        the group state in a file it maps. keep="none" needs each group's first and second
        occurrence only: one FirstTwo task merges them from the shards' lists into two mapped
        files, and then each shard's select is a SelectNone task of its own."""
        wf = ctx.wf
        L, keep, drop = wf.substring.window, wf.substring.keep, wf.substring.drop_fraction
        outs = [str(o) for o in window_dirs(ctx.ws, L)]
        groups = ctx.ws.stage_detail("repeats")["groups"]
        prefilter = bool(wf.substring.prefilter)  # gid covers the text Build sorted: its runs place it
        results = [str(scratch / f"shard_{k:05d}") for k in range(len(outs))]
        offsets = tuple(str(d / "offsets.npy") for d in shards.dirs)
        bases = tuple(int(b) for b in shards.bases[:-1])
        # the references' text comes before every document here (--reference): each group seen
        # there starts out seen at its first occurrence, numbered after this run's tokens
        refs = bool(wf.run.reference)
        state = scratch / "group_state.npy"
        if refs:  # made here, where the references are read; else by the task
            arr = _group_state(state, groups)
            # keep="first": in a kept reference document, an earlier surviving occurrence;
            # keep="none": in any reference document that reached the substring stage
            reference.preset(ctx, arr, int(shards.bases[-1]), kept_only=keep == "first")
            arr.flush()
            del arr
        with bar("remove", len(outs), "shards") as b:
            if keep == "first":
                task = SelectFirst(tuple(outs), offsets, bases, prefilter, L, drop, groups, str(state), not refs,
                                   tuple(results))
                run_all(ctx.executor, [task])
                b.advance(len(outs))
            else:
                second = scratch / "group_state2.npy"
                ns = tuple(int(o[-1]) for o in shards.offsets)
                run_all(ctx.executor, [FirstTwo(tuple(outs), ns, bases, prefilter, groups, str(state), not refs,
                                                str(second))])
                tasks = [SelectNone(outs[k], offsets[k], bases[k], prefilter, L, drop, str(state), str(second),
                                    results[k]) for k in range(len(outs))]
                for _ in ctx.executor.imap(tasks):
                    b.advance()
        return [_load_selected(Path(r)) for r in results]

    def _spans(self, ctx: Context, shards: _Shards, per_shard: list[tuple],
               scratch: Path) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The spans' columns (doc_id, tokens, characters, and the source of each: document,
        token offset, characters), and the characters removed per document, per shard. The
        characters come from SpanChars tasks, one per shard with spans or sources in it."""
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
        # each source, as a token span of its shard: the text a span duplicated
        src_shard = shards.gshard[src_idx] if len(src_idx) else np.zeros(0, np.int64)
        src_local = shards.glocal[src_idx] if len(src_idx) else np.zeros(0, np.int64)
        src_cs = np.zeros(len(src_idx), np.int64)
        src_ce = np.zeros(len(src_idx), np.int64)
        spec, trained = run_model(ctx)
        by_shard = np.argsort(src_shard, kind="stable")  # each shard's sources, in span order
        cut = np.searchsorted(src_shard[by_shard], np.arange(len(per_shard) + 1))
        tasks, where = [], []
        for k, (_, _, (sd, _, _, _)) in enumerate(per_shard):
            m = by_shard[cut[k]:cut[k + 1]]
            if not len(sd) and not len(m):
                continue
            sources = None
            if len(m):
                local = src_local[m]
                ntok = shards.offsets[k][local + 1] - shards.offsets[k][local]
                start = src_off[m]
                sources = scratch / f"shard_{k:05d}" / "sources.npy"
                save_npy(sources, np.stack([local, start, np.minimum(start + lengths[m], ntok)]).astype(np.int64))
                driver_wrote(ctx, [sources])
            tasks.append(SpanChars(str(ctx.ws.root), str(shards.dirs[k]), str(scratch / f"shard_{k:05d}"), spec,
                                   trained, None if sources is None else str(sources)))
            where.append((k, m))
        span_chars: dict[int, np.ndarray] = {}
        with bar("remove: characters", len(tasks), "shards") as b:
            for i, _ in ctx.executor.imap(tasks):
                k, m = where[i]
                out = Path(tasks[i].out)
                span_chars[k] = np.load(out / "chars.npy")
                if len(m):
                    src_cs[m], src_ce[m] = np.load(out / "src_chars.npy")
                b.advance()
        at = 0
        for k, (_, _, (sd, ss, se, _)) in enumerate(per_shard):
            cs, ce = span_chars.get(k, np.zeros((2, 0), np.int64))
            np.add.at(removed_chars[k], sd, ce - cs)
            m = len(sd)
            for col, arr in zip(span_cols, (shards.doc_ids[k][sd], ss, se, cs, ce, shards.gdoc[src_idx[at:at + m]],
                                            src_off[at:at + m], src_cs[at:at + m], src_ce[at:at + m])):
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
        ws.prov.replace_spans("remove", names, db.Columns(rows), ["n_tokens", "removed_tokens", "coverage"],
                              db.Columns([all_ids, ntok, rem, cov]), all_ids[drp], removed=(all_ids, rch))
        return {"spans": n_spans, "removed_tokens": int(rem.sum()), "tokens": int(ntok.sum()),
                "dropped": int(drp.sum()), "cut": int(((rem > 0) & ~drp).sum()),
                "digest": decisions_digest(*cols, all_ids, rem, drp)}


SELECTED = ("removed.npy", "dropped.npy", "spans.npy")


def _save_selected(out: Path, res: tuple) -> int:
    """A shard's select result (removed tokens and dropped flag per document; spans as
    int64 rows doc, start, end, source) in `out`; returns the bytes written."""
    out.mkdir(parents=True, exist_ok=True)
    removed, dropped, spans = res
    for name, arr in zip(SELECTED, (removed, dropped, np.stack(spans).astype(np.int64).reshape(4, -1))):
        save_npy(out / name, arr)
    return file_bytes([out / f for f in SELECTED])


def _load_selected(out: Path) -> tuple:
    """What _save_selected wrote, as native.select_first returns it."""
    spans = np.load(out / SELECTED[2])
    return np.load(out / SELECTED[0]), np.load(out / SELECTED[1]), tuple(spans[i] for i in range(4))


def _runs(window_dir: str, prefilter: bool) -> "native.Runs | None":
    """How a shard's gid entries sit in it: with the prefilter gid covers the candidate text
    Build sorted, placed by its runs; else the shard's own positions (None)."""
    return (np.load(Path(window_dir) / "starts.npy"), np.load(Path(window_dir) / "offsets.npy")) if prefilter \
        else None


def _open_state(path: str, groups: int, fresh: bool) -> np.ndarray:
    """The mapped group state: made now (every group -1, unseen) when `fresh`, else the one
    the driver made and preset from the references."""
    return _group_state(Path(path), groups) if fresh else np.load(path, mmap_mode="r+")


@dataclass(frozen=True)
class SelectFirst:
    """Task: keep="first" over every shard in document order (native.select_first), its
    group state (int64 per group) mapped from `state`; each shard's result to its folder in
    `results` (_save_selected)."""
    windows: tuple[str, ...]
    offsets: tuple[str, ...]
    bases: tuple[int, ...]
    prefilter: bool
    L: int
    drop: float
    groups: int
    state: str
    fresh: bool
    results: tuple[str, ...]

    def __call__(self) -> dict[str, Any]:
        src = _open_state(self.state, self.groups, self.fresh)
        wrote = 0
        for k, w in enumerate(self.windows):
            res = native.select_first(load_npy(Path(w) / "gid.npy"), np.load(self.offsets[k]), self.L, self.drop,
                                      self.bases[k], src, runs=_runs(w, self.prefilter))
            wrote += _save_selected(Path(self.results[k]), res)
        return {"wrote": wrote}


@dataclass(frozen=True)
class FirstTwo:
    """Task: every group's first and second global position, shard after shard in document
    order, from the shards' lists (repeats.py, firsts.npy: group ids increasing, so first and
    second are read forward), the same as native.first_two's pass over every window; into
    the mapped files `first` (made now when `fresh`, else preset by the driver) and `second`."""
    windows: tuple[str, ...]
    ns: tuple[int, ...]
    bases: tuple[int, ...]
    prefilter: bool
    groups: int
    first: str
    fresh: bool
    second: str

    def __call__(self) -> dict[str, Any]:
        first = _open_state(self.first, self.groups, self.fresh)
        second = _group_state(Path(self.second), self.groups)
        for k, w in enumerate(self.windows):
            native.merge_first_two(load_npy(Path(w) / "firsts.npy"), _runs(w, self.prefilter), self.ns[k],
                                   self.bases[k], first, second)
        first.flush()
        second.flush()
        return {"wrote": file_bytes([Path(self.first), Path(self.second)])}


@dataclass(frozen=True)
class SelectNone:
    """Task: keep="none" over one shard (native.select_none), reading the groups' first and
    second positions (FirstTwo) mapped; its result to `result` (_save_selected)."""
    window: str
    offsets: str
    base: int
    prefilter: bool
    L: int
    drop: float
    first: str
    second: str
    result: str

    def __call__(self) -> dict[str, Any]:
        # copy-on-write maps: the kernel takes writable buffers, and nothing here may change them
        first, second = np.load(self.first, mmap_mode="c"), np.load(self.second, mmap_mode="c")
        res = native.select_none(load_npy(Path(self.window) / "gid.npy"), np.load(self.offsets), self.L, self.drop,
                                 self.base, first, second, runs=_runs(self.window, self.prefilter))
        return {"wrote": _save_selected(Path(self.result), res)}


@dataclass(frozen=True)
class SpanChars:
    """Task: the character spans, shrunk inward to whole characters (tokenizers.char_spans),
    of one shard's spans (its select result in `out`) and of the sources in it (`sources`:
    int64 rows document index, token start, token end), to chars.npy and src_chars.npy."""
    root: str
    shard_dir: str
    out: str
    spec: str
    trained: str | None
    sources: str | None

    def __call__(self) -> dict[str, Any]:
        tok = task_tokenizer(self.spec, 1, self.trained)
        store = TextStore(Path(self.root))
        sdir, out = Path(self.shard_dir), Path(self.out)
        offsets, doc_ids = np.load(sdir / "offsets.npy"), np.load(sdir / "docs.npy")
        tokens = load_npy(sdir / "tokens.npy")
        chars = None if isinstance(tok, ByteTokenizer) else ShardChars.load(sdir, offsets)
        spans = np.load(out / SELECTED[2]) if (out / SELECTED[2]).exists() else np.zeros((4, 0), np.int64)
        wrote = []
        for rows, name in ((spans[:3], "chars.npy"),
                           (np.load(self.sources) if self.sources else None, "src_chars.npy")):
            if rows is None:
                continue
            cs, ce = char_spans(tok, store.texts, tokens, offsets, doc_ids, rows[0], rows[1], rows[2], chars=chars)
            save_npy(out / name, np.stack([cs, ce]).astype(np.int64).reshape(2, -1))
            wrote.append(out / name)
        return {"wrote": file_bytes(wrote)}
