"""Decontaminate: text that shares word n-grams with evaluation sets is cut out of the corpus.

Definitions (the contract; tests/test_decontaminate.py checks them against a brute force):

- A word is a match of Python's `\\w+` in the original text; words are compared case-folded
  (str.casefold). An n-gram is `ngram` consecutive words of one text.
- Each listed field (`text_fields`) of each row of the eval files is an eval text, an
  `eval_items` row, numbered in file, row and field order.
- Every n-gram of a document equal to an n-gram of any eval text is struck: from its first
  word's start to its last word's end, widened by `margin` code points on each side within the
  document. Struck ranges that overlap or touch are one span. A document is dropped (reason
  `contamination`) when its struck characters are more than `drop_fraction` of its characters.
- A span's source (`spans.src_item_id`) is the first eval item, in item order, that holds the
  span's first struck n-gram (the n-gram the span starts with).
- Per eval item: n_ngrams (its distinct n-grams), n_matched (those found in the documents
  that reach the stage, dropped ones included), overlap = n_matched / n_ngrams (NULL for a
  text of fewer than `ngram` words), verdict `contaminated` (overlap >= contaminated_at),
  `partial` (above 0) or `clean`, matched_docs (documents holding at least one of its
  n-grams).

How (exact, out of core, in parallel):

1. The driver reads the eval files once and, with the same native word kernel the scan uses
   (native/decontaminate.c), finds every eval word, its case-folded code points and a 64-bit
   hash, and every n-gram's 64-bit key (a polynomial of its words' hashes, mixed). The
   distinct n-grams (equal keys are compared word by word, so two n-grams whose keys collide
   stay two) become a table sorted by key, written as .npy files: the keys, each n-gram's
   words, a bucket index over the keys' top bits and a bitmap filter of the keys.
2. One task per chunk of documents (frozen dataclasses of paths, on the local pool or Dask)
   maps the table and the ingest texts and runs the native scan: each document's words are
   found and folded in one pass (a ring of the last `ngram` words, the key rolled in O(1)), a
   key is looked up in the filter (one cached bit: most words stop there), then in its bucket
   of the sorted table, and a key found is confirmed by comparing the folded code points of
   all n words with the eval n-gram's. So a hash collision can never strike text: matching is
   exact. This is the sorted-array machinery of the substring stage applied to n-gram keys
   (a sorted table searched by key instead of a suffix array searched by tokens); no Bloom
   filter decides anything. Each task writes its spans, the eval n-grams it found, and per eval
   item the number of its documents holding one of the item's n-grams, counted by the scan as
   each document ends: its distinct n-grams go to their classes (the n-grams held by the same
   set of items: all the n-grams of a licence paragraph that 200 eval items quote are one
   class), each class seen first in the document to its items, each item counted once per
   document; so a document that holds text quoted by many items costs its classes, not its
   n-grams times their items, and no hits are kept.
3. The driver adds the tasks' counts up and applies the drop rule. Memory: the eval table and
   the spans (what is contaminated), not the corpus.

Word extraction and case folding are native: the kernels read a table that Python builds from
its own `re` and str.casefold for every code point (sadedup.native.dc_table), so they agree
with Python's `\\w` and casefold by construction; tests compare them on random Unicode text.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from .. import native
from ..config import DecontaminateConfig, Workflow
from ..errors import SadedupError
from ..outputs import mark_written
from ..progress import say
from ..readers import InputFile, Record, expand_inputs, read_records
from ..store import TextStore
from ..workspace import describe_input, load_npy, replaced, save_npy, task_sums
from .base import Context, ShardJob, chain
from .exact import text_chunks
from .spans import Cuts, SpanStage, over_fraction

# changes when the definitions or the files' layout change, so old results are not reused
VERSION = 1
# bytes of text one task scans: at most, and at least (when the corpus is cut into a few
# chunks per worker)
CHUNK_BYTES = 64 << 20
MIN_CHUNK_BYTES = 4 << 20
EVAL_COLUMNS = ("item_id", "eval_file", "eval_row", "field", "n_ngrams", "n_matched", "overlap", "verdict",
                "matched_docs")
TABLE_FILES = ("hash", "word", "bucket", "filter", "fold", "fold_off")


# ---- the eval files


def eval_files(cfg: DecontaminateConfig) -> list[InputFile]:
    """The eval files, in the order given (a folder's files sorted by path)."""
    try:
        files, _ = expand_inputs(list(cfg.eval))
    except SadedupError as e:
        raise SadedupError(f"decontaminate.eval: {e}") from None
    return files


def eval_name(inp: InputFile) -> str:
    """An eval file as eval_items names it: its absolute path (the stage runs from any folder)."""
    return str(inp.path.resolve())


def eval_rows(cfg: DecontaminateConfig, files: list[InputFile]) -> Iterator[tuple[InputFile, Record, list[str]]]:
    """Every eval row, with its texts in `text_fields` order. A row that is not a row (bad
    JSON, invalid UTF-8) or lacks a listed text field stops the run, naming file and row: an
    eval text skipped silently would be contamination let through."""
    fields = cfg.text_fields
    for inp in files:
        if inp.format == "parquet":
            import pyarrow.parquet as pq

            try:
                names = pq.read_schema(inp.path).names
            except Exception as e:  # pyarrow raises several types for a bad file
                raise SadedupError(f"eval file {inp.path}: not a readable Parquet file ({e})") from None
            missing = [f for f in fields if f not in names]
            if missing:
                raise SadedupError(f"eval file {inp.path}: no column {missing[0]!r} (columns: {', '.join(names)}); "
                                   f"set decontaminate.text_fields")
        for rec in read_records(inp, fields[0], "\0no id field"):
            # a .txt file is one row whose text is the first listed field
            if rec.obj is None or (inp.format == "txt" and rec.text is None):
                raise SadedupError(f"eval file {inp.path} row {rec.row}: {rec.error}")
            obj = {fields[0]: rec.text} if inp.format == "txt" else rec.obj
            texts = []
            for f in fields:
                v = obj.get(f, _MISSING)
                if v is _MISSING:
                    raise SadedupError(f"eval file {inp.path} row {rec.row}: no field {f!r} "
                                       f"(every row needs each of decontaminate.text_fields)")
                if not isinstance(v, str):
                    kind = "null" if v is None else type(v).__name__
                    raise SadedupError(f"eval file {inp.path} row {rec.row}: field {f!r} is {kind}, not text")
                texts.append(v)
            yield inp, rec, texts


_MISSING = object()


@dataclass
class EvalSet:
    """The eval texts as items, and the table of their distinct n-grams (saved in `folder`)."""
    folder: Path
    files: list[str]              # per item
    rows: list[int]
    fields: list[str]
    n_ngrams: np.ndarray          # per item: distinct n-grams
    pair_item: np.ndarray         # distinct (item, n-gram) pairs, by item then n-gram
    pair_ng: np.ndarray
    first_item: np.ndarray        # per n-gram: the first item holding it
    n_table: int                  # distinct n-grams
    n_classes: int                # sets of items holding an n-gram (eval/class_*.npy)

    @property
    def n_items(self) -> int:
        return len(self.rows)


def build_eval(cfg: DecontaminateConfig, files: list[InputFile], folder: Path) -> EvalSet:
    """Reads the eval files and writes the n-gram table into `folder`."""
    n = cfg.ngram
    srcs, rows, fields, texts = [], [], [], []
    names = {inp.path: eval_name(inp) for inp in files}
    for inp, rec, ts in eval_rows(cfg, files):
        for f, t in zip(cfg.text_fields, ts):
            srcs.append(names[inp.path])
            rows.append(rec.row)
            fields.append(f)
            texts.append(t)
    # unpaired surrogates (JSON allows them) are not word characters: kept as bytes, never matched
    enc = [t.encode("utf-8", "surrogatepass") for t in texts]
    lens = np.fromiter(map(len, enc), dtype=np.int64, count=len(enc))
    ends = np.cumsum(lens)
    starts = ends - lens
    buf = np.frombuffer(b"".join(enc), dtype=np.uint8)
    del enc, texts
    word_off, _, _, whash, fold, fold_off = native.dc_words(buf, starts, ends, fold=True)
    keys, key_off = native.dc_ngram_keys(whash, word_off, n)
    n_items = len(rows)
    per = np.diff(key_off)
    item = np.repeat(np.arange(n_items, dtype=np.int64), per)
    first_word = word_off[:-1][item] + (np.arange(len(keys), dtype=np.int64) - key_off[:-1][item])
    # entries sorted by key (stable: by item and position among equal keys); each entry's
    # n-gram is the first entry of its run of equal keys holding the same words
    order = np.argsort(keys, kind="stable")
    k_sorted, w_sorted = keys[order], first_word[order]
    run_start = np.r_[True, k_sorted[1:] != k_sorted[:-1]] if len(keys) else np.zeros(0, bool)
    head = np.maximum.accumulate(np.where(run_start, np.arange(len(keys)), 0)) if len(keys) else np.zeros(0, np.int64)
    rep = head.copy()
    dup = np.flatnonzero(~run_start)
    same = native.dc_ngram_same(fold, fold_off, w_sorted[dup], w_sorted[head[dup]], n)
    for i in dup[~same]:  # keys that collide on other words: compare with every n-gram of the run
        j = head[i]
        while j < i:
            if rep[j] == j and native.dc_ngram_same(fold, fold_off, w_sorted[[i]], w_sorted[[j]], n)[0]:
                rep[i] = j
                break
            j += 1
        else:
            rep[i] = i
    distinct = rep == np.arange(len(keys))
    ng_of_sorted = (np.cumsum(distinct) - 1)[rep] if len(keys) else np.zeros(0, np.int64)
    ng = np.empty(len(keys), dtype=np.int64)
    ng[order] = ng_of_sorted
    table_hash = k_sorted[distinct]
    table_word = w_sorted[distinct]
    # distinct (item, n-gram) pairs
    n_table = len(table_hash)
    pair = _distinct(item * max(n_table, 1) + ng)
    pair_item, pair_ng = pair // max(n_table, 1), pair % max(n_table, 1)
    n_ngrams = np.bincount(pair_item, minlength=n_items).astype(np.int64)
    first_item = np.full(n_table, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_item, pair_ng, pair_item)
    _save_table(folder, table_hash, table_word, fold, fold_off, n)
    n_classes = _save_classes(folder, pair_item, pair_ng, n_table, n_items)
    return EvalSet(folder, srcs, rows, fields, n_ngrams, pair_item, pair_ng, first_item, n_table, n_classes)


def _save_classes(folder: Path, pair_item: np.ndarray, pair_ng: np.ndarray, n_table: int, n_items: int) -> int:
    """Classes of n-grams held by the same set of items: class_of[g] per n-gram, class c's items
    class_item[class_start[c]:class_start[c+1]]. Classes 0 .. n_items-1 are the single items
    (most n-grams are in one item); the rest are the sets of two or more, numbered as found."""
    by_ng = np.argsort(pair_ng, kind="stable")  # items ascending within an n-gram
    p_item = pair_item[by_ng]
    p_start = np.searchsorted(pair_ng[by_ng], np.arange(n_table + 1))
    count = np.diff(p_start)
    class_of = np.where(count == 1, p_item[np.minimum(p_start[:-1], max(len(p_item) - 1, 0))], -1)
    sets: dict[bytes, int] = {}
    members: list[np.ndarray] = []
    for g in np.flatnonzero(count > 1).tolist():
        its = p_item[p_start[g]:p_start[g + 1]]
        c = sets.setdefault(its.tobytes(), n_items + len(sets))
        if c == n_items + len(members):
            members.append(its)
        class_of[g] = c
    sizes = np.r_[np.ones(n_items, np.int64), np.array([len(m) for m in members], np.int64)]
    class_start = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    class_item = np.concatenate([np.arange(n_items, dtype=np.int64), *members]) if members else \
        np.arange(n_items, dtype=np.int64)
    for name, arr in (("class_of", class_of), ("class_start", class_start), ("class_item", class_item)):
        save_npy(folder / f"{name}.npy", np.ascontiguousarray(arr, dtype=np.int64))
    return n_items + len(members)


def _bits(ne: int) -> tuple[int, int]:
    """Bucket bits (about one n-gram a bucket) and filter bits (16 bits an n-gram: a word that
    holds no eval n-gram passes the filter 1 time in 16 or less)."""
    lg = max(int(ne - 1).bit_length(), 1) if ne > 1 else 1
    return min(max(lg, 1), 28), min(max(lg + 4, 6), 34)


def _save_table(folder: Path, h: np.ndarray, w: np.ndarray, fold: np.ndarray, fold_off: np.ndarray, n: int) -> None:
    bbits, fbits = _bits(len(h))
    top = h >> np.uint64(64 - bbits)
    bucket = np.searchsorted(top, np.arange((1 << bbits) + 1, dtype=np.uint64), side="left").astype(np.int64)
    filt = np.zeros(max((1 << fbits) // 64, 1), dtype=np.uint64)
    fb = h >> np.uint64(64 - fbits)
    np.bitwise_or.at(filt, (fb >> np.uint64(6)).astype(np.int64), np.uint64(1) << (fb & np.uint64(63)))
    folder.mkdir(parents=True, exist_ok=True)
    for name, arr in (("hash", h), ("word", w), ("bucket", bucket), ("filter", filt), ("fold", fold),
                      ("fold_off", fold_off)):
        save_npy(folder / f"{name}.npy", np.ascontiguousarray(arr))
    with replaced(folder / "table.json") as f:
        f.write(json.dumps({"bbits": bbits, "fbits": fbits, "ngram": n}).encode())


def load_table(folder: Path) -> dict[str, Any]:
    """The n-gram table as dc_scan reads it, memory-mapped."""
    meta = json.loads((folder / "table.json").read_text())
    ev: dict[str, Any] = {name: _load(folder / f"{name}.npy") for name in TABLE_FILES}
    ev["bbits"], ev["fbits"] = meta["bbits"], meta["fbits"]
    return ev


def _load(path: Path) -> np.ndarray:
    arr = np.load(path)  # small or empty: read; a large one mapped
    return arr if arr.nbytes < (64 << 20) else load_npy(path)


# ---- the scan, one task per chunk of documents


@dataclass(frozen=True)
class ScanChunk:
    """Task: the spans of candidates i..j (rows of docs.npy) against the table in `table`, into
    out_spans (rows doc_id, char_start, char_end, n-gram), and into out_found the eval n-grams
    found (ascending) followed by, per eval item, how many of these documents hold one of its
    n-grams (n_items entries)."""
    root: str
    docs: str
    i: int
    j: int
    table: str
    ngram: int
    margin: int
    out_spans: str
    out_found: str
    n_items: int

    def __call__(self) -> dict[str, Any]:
        store = TextStore(Path(self.root))
        ids = np.asarray(np.load(self.docs, mmap_mode="r")[self.i:self.j])
        table = Path(self.table)
        ev = load_table(table)
        classes = {name: np.load(table / f"{name}.npy") for name in ("class_of", "class_start", "class_item")}
        classes["per_item"] = np.zeros(self.n_items, dtype=np.int64)
        classes["found"] = np.zeros(len(ev["hash"]), dtype=np.uint8)
        spans, _ = native.dc_scan(store.data, store.offsets[ids], store.offsets[ids + 1], ev, self.ngram, self.margin,
                                  classes)
        spans[:, 0] = ids[spans[:, 0]]
        save_npy(Path(self.out_spans), spans)
        save_npy(Path(self.out_found), np.concatenate([np.flatnonzero(classes["found"]), classes["per_item"]]))
        return task_sums([Path(self.out_spans), Path(self.out_found)])


# ---- the stage


class Decontaminate(SpanStage):
    name = "decontaminate"
    version = VERSION

    def settings(self, ctx: Context) -> Any:
        cfg = ctx.wf.decontaminate
        # the eval files by path, size and modification time: a changed eval set reruns the stage
        return {"eval": [describe_input(f) for f in eval_files(cfg)], "text_fields": list(cfg.text_fields),
                "ngram": cfg.ngram, "margin": cfg.margin, "contaminated_at": cfg.contaminated_at,
                "drop_fraction": cfg.drop_fraction}

    def run(self, ctx: Context) -> dict[str, Any]:
        out = ctx.wf.decontaminate.write_clean_eval
        if out:  # refused before any work, as --output is
            check_clean_eval(ctx.wf, ctx.ws.root, [d["path"] for d in ctx.ws.read_state()["inputs"]], ctx.ws.output)
        detail = super().run(ctx)
        if out:
            rows, written = write_clean_eval(ctx, Path(out))
            mark_written([str(out)], ctx.ws.root)  # sadedup's: never read back as an input
            say(f"decontaminate: {written} of {rows} eval rows judged clean, written to {out}")
            detail = detail | {"clean_eval": {"path": str(out), "rows": rows, "written": written}}
        return detail

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        detail = super().work(ctx, key)
        # after the spans: replacing them empties eval_items, the table this stage owns
        ctx.ws.prov.replace_eval_items(EVAL_COLUMNS, self._items)
        return detail

    def decide(self, ctx: Context, key: str, doc_ids: np.ndarray, n_chars: np.ndarray) -> Cuts:
        ws, cfg = ctx.ws, ctx.wf.decontaminate
        files = eval_files(cfg)
        setting = chain(VERSION, [describe_input(f) for f in files], list(cfg.text_fields), cfg.ngram, cfg.margin)
        top = ws.root / self.name
        folder = top / setting
        if top.is_dir():  # folders of other eval sets or settings are not read again
            for p in top.iterdir():
                if p != folder:
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
        ev = build_eval(cfg, files, folder / "eval")
        order = np.argsort(doc_ids, kind="stable")
        ids, chars = doc_ids[order], n_chars[order]
        spans, found, per_item = self._scan(ctx, folder, ids, ev)
        # the drop rule, on the struck characters (spans of a document are disjoint)
        removed = np.zeros(len(ids), dtype=np.int64)
        np.add.at(removed, np.searchsorted(ids, spans[:, 0]), spans[:, 2] - spans[:, 1])
        drop = over_fraction(removed, chars, cfg.drop_fraction)
        self._items, verdicts = self._verdicts(ev, found, per_item, cfg)
        minus = np.full(len(spans), -1, dtype=np.int64)
        return Cuts(doc_id=spans[:, 0].copy(), char_start=spans[:, 1].copy(), char_end=spans[:, 2].copy(),
                    src_doc_id=minus, src_char_start=minus, src_char_end=minus, dropped=ids[drop],
                    removed_chars=int(removed[~drop].sum()),
                    extra={"src_item_id": ev.first_item[spans[:, 3]] if len(spans) else minus},
                    detail={"eval_files": len(files), "eval_items": ev.n_items, "eval_ngrams": ev.n_table,
                            "eval_ngrams_found": int(len(found)), **verdicts, "ngram": cfg.ngram, "margin": cfg.margin,
                            "contaminated_at": cfg.contaminated_at, "drop_fraction": cfg.drop_fraction})

    def _scan(self, ctx: Context, folder: Path, ids: np.ndarray, ev: EvalSet) -> tuple[np.ndarray, np.ndarray]:
        """Every chunk's spans, in document order; the eval n-grams found; per item the
        documents holding one of its n-grams."""
        cfg = ctx.wf.decontaminate
        if not len(ids) or not ev.n_table:
            return np.zeros((0, 4), np.int64), np.zeros(0, np.int64), np.zeros(ev.n_items, np.int64)
        offsets = TextStore(ctx.ws.root).offsets
        save_npy(folder / "docs.npy", ids)
        total = int((offsets[ids + 1] - offsets[ids]).sum())
        size = max(MIN_CHUNK_BYTES, min(CHUNK_BYTES, total // max(1, 2 * ctx.executor.workers) + 1))
        ingest = ctx.ws.checksum("ingest")  # the texts
        table_sum = chain(*(_file_sum(folder / "eval" / f"{n}.npy") for n in TABLE_FILES))
        jobs = []
        for k, (i, j) in enumerate(text_chunks(offsets, ids, size)):
            out = folder / f"chunk_{k:05d}"
            task = ScanChunk(str(ctx.ws.root), str(folder / "docs.npy"), i, j, str(folder / "eval"), cfg.ngram,
                             cfg.margin, f"{out}_spans.npy", f"{out}_found.npy", ev.n_items)
            # the chunk's documents and the table it scans against: a rerun reuses what matches
            jobs.append(ShardJob(k, chain(VERSION, ingest, table_sum, cfg.ngram, cfg.margin, _ids_sum(ids[i:j])),
                                 [Path(task.out_spans), Path(task.out_found)], task))
        self.map_shards(ctx, self.name, self.name, jobs)
        spans = np.concatenate([np.load(j.files[0]) for j in jobs])
        found, per_item = [], np.zeros(ev.n_items, dtype=np.int64)
        for j in jobs:
            f = np.load(j.files[1])
            found.append(f[:len(f) - ev.n_items])
            per_item += f[len(f) - ev.n_items:]
        return spans, _distinct(np.concatenate(found)), per_item

    @staticmethod
    def _verdicts(ev: EvalSet, found: np.ndarray, matched_docs: np.ndarray, cfg: DecontaminateConfig
                  ) -> tuple[list[tuple], dict[str, int]]:
        """The eval_items rows, and how many items got each verdict."""
        n_items = ev.n_items
        matched = np.zeros(max(ev.n_table, 1), dtype=bool)
        matched[found] = True
        n_matched = np.bincount(ev.pair_item[matched[ev.pair_ng]], minlength=n_items)
        rows, counts = [], {"contaminated": 0, "partial": 0, "clean": 0}
        for i in range(n_items):
            total, got = int(ev.n_ngrams[i]), int(n_matched[i])
            overlap = got / total if total else None
            verdict = ("clean" if overlap is None or overlap == 0 else
                       "contaminated" if overlap >= cfg.contaminated_at else "partial")
            counts[verdict] += 1
            rows.append((i, ev.files[i], ev.rows[i], ev.fields[i], total, got, overlap, verdict,
                         int(matched_docs[i])))
        return rows, counts

    def summary(self, d: dict[str, Any]) -> str:
        return (super().summary(d) + f"; eval items: {d['contaminated']} contaminated, {d['partial']} partial, "
                f"{d['clean']} clean")


def _distinct(a: np.ndarray) -> np.ndarray:
    """np.unique by sorting (numpy 2's hashing np.unique is 30x slower on a million int64)."""
    a = np.sort(a)
    return a[np.r_[True, a[1:] != a[:-1]]] if len(a) else a


def _file_sum(path: Path) -> str:
    h = xxhash.xxh3_64()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            h.update(chunk)
    return h.hexdigest()


def _ids_sum(ids: np.ndarray) -> str:
    return xxhash.xxh3_64(np.ascontiguousarray(ids, dtype=np.int64).tobytes()).hexdigest()


# ---- the clean eval rows


def check_clean_eval(wf: Workflow, root: Path, inputs: list, output: str | Path | None) -> None:
    """Before any work: the file can be written, is outside the work folder `root` and none of
    the `inputs`, the eval files or the `output` (outputs.claimed), and is named in the eval
    files' format (when they have one with a writer: a .txt eval set may be written as JSONL
    or Parquet)."""
    from .. import formats
    from ..outputs import CLEAN_EVAL, EVAL, claimed
    from ..writers import check_output, check_outside

    cfg = wf.decontaminate
    path = Path(cfg.write_clean_eval)
    name = "decontaminate.write_clean_eval"
    check_outside(path, root, name=name)
    files = eval_files(cfg)
    check_output(path, inputs, [*((str(f.path), EVAL) for f in files),
                                *(c for c in claimed(wf, None if output is None else str(output))
                                  if c[1] != CLEAN_EVAL)], name=name)
    kinds = {f.format for f in files}
    fmt, _ = formats.output_kind(path)
    if len(kinds) == 1 and formats.BY_NAME[next(iter(kinds))].writer is not None and fmt.name not in kinds:
        want = formats.BY_NAME[next(iter(kinds))]
        also = f" (or {want.suffixes[0]}.gz, .zst)" if want.compressions else ""
        raise SadedupError(f"decontaminate.write_clean_eval {path}: the eval files are {want.name}; name it "
                           f"{want.suffixes[0]}{also} to keep their format")


def write_clean_eval(ctx: Context, path: Path) -> tuple[int, int]:
    """Writes the eval rows all of whose texts were judged clean, as they were read (JSONL
    lines byte for byte); returns (eval rows, rows written)."""
    from .. import formats
    from ..writers import open_writer

    cfg = ctx.wf.decontaminate
    files = eval_files(cfg)
    with ctx.ws.engine.connect() as c:
        bad = {(f, r) for f, r in c.exec_driver_sql("SELECT DISTINCT eval_file, eval_row FROM eval_items "
                                                    "WHERE verdict != 'clean'")}
    w = open_writer(path, cfg.text_fields[0], formats.output_schema(files))
    rows = written = 0
    names = {inp.path: eval_name(inp) for inp in files}
    try:
        for inp, rec, _ in eval_rows(cfg, files):
            rows += 1
            if (names[inp.path], rec.row) not in bad:
                w.write(rec, None)
                written += 1
        w.close()
    except BaseException:
        w.abort()
        raise
    return rows, written

