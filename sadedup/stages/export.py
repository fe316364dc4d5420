"""Export: the kept documents, in input order, in the input's format, text cut by the spans.

The inputs are streamed again and matched row by row to the documents' decisions; only the
text field of a cut document changes (the original text with each recorded character span
removed), every other row and field passes through untouched.

The work is cut into pieces that run in parallel: a file, or for uncompressed JSONL a range
of whole lines of at least PIECE_BYTES. The documents are numbered in input order, so a
piece's documents are one range of doc_ids and its spans one range of the spans. The driver
snapshots the decisions from the database into arrays (`<workdir>/export.partial/`); each
task writes its piece to a part file next to the output, and the driver appends each part to
the output, in order, as soon as the parts before it are in, while the workers write the
parts after it (gzip members and zstd frames may follow one another). Parquet output is one
task.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import sqlite3
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import db, faults, formats
from ..store import column_rows
from ..errors import SadedupError
from ..executor import imap_reading, in_order
from ..progress import bar, warn
from ..readers import (PIECE_BYTES, InputFile, expand_inputs, input_pieces, jsonl_kept, jsonl_lines, parquet_batches,
                       parse_json_row, read_records)
from ..locations import as_path, expand_glob, upload
from ..outputs import Output, check_not_anothers, claimed, describe, mark_written, output_lock, output_of
from ..workspace import append_file, deferred_signals, npy_in_place, replaced
from ..writers import ParquetLayout, RowSchema, check_outside, open_writer, row_of
from .base import Context, Stage, driver_wrote

if TYPE_CHECKING:  # pyarrow takes a fifth of a second to import: only the Parquet paths import it, where they run
    import pyarrow as pa

DECISIONS = ("doc_id", "doc_row", "doc_kept", "span_doc", "span_start", "span_end")


def cut(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with every [start, end) character span removed (spans sorted, disjoint)."""
    pieces, at = [], 0
    for a, b in spans:
        pieces.append(text[at:a])
        at = max(at, b)
    pieces.append(text[at:])
    return "".join(pieces)


ROWS_BLOCK = 1 << 16  # decisions are read this many rows at a time: a piece may hold millions


def export_part(pieces: list[tuple], decisions: str, parts: list[str], text_field: str, id_field: str,
                schema_from: pa.Schema | None = None, on_read=lambda n: None, rows_per_part: int = 0,
                uploads: list[str] | None = None, layout: ParquetLayout | None = None,
                shown: list[str] | None = None) -> dict[str, int]:
    """Task: the kept documents of `pieces`, in order and cut, written to `parts[0]`, or with
    `rows_per_part` to parts[0], parts[1], ... of that many rows each. A piece is (path,
    format, compression, lines or None, first doc index, end doc index): `lines` is (start,
    end, rows before start) of an uncompressed JSONL file. With `uploads`, each finished part
    is uploaded to the URL beside it and its local file removed. Errors name `shown[i]` for
    parts[i] (the output a staged part is written for) when given.

    Parquet output is in one schema: `schema_from`, the Parquet inputs' schemas unified
    (formats.output_schema; found here when None), and, for rows read as JSON or text, every
    field of every kept row (a first pass over those rows: the one case where an input is
    read twice). Parquet inputs go to Parquet output as Arrow batches."""
    d = {name: np.load(Path(decisions) / f"{name}.npy", mmap_mode="r") for name in DECISIONS}
    end = (None, None, None)

    def rows_of(piece, on_read, parse=True):
        """(record, cut text or None) of every kept document of a piece, in order. Without
        `parse`, a JSONL row that is not cut comes as read (only `raw`): copied to JSONL
        output, it needs no decoding, which was half of export's time."""
        path, fmt, compression, lines, a, b = piece
        inp = InputFile(as_path(path), fmt, compression)
        raw = not parse and fmt == "jsonl"
        records = jsonl_lines(inp, on_read, lines) if raw else read_records(inp, text_field, id_field, on_read,
                                                                             piece=lines)
        docs = column_rows([d[k][a:b] for k in ("doc_id", "doc_row", "doc_kept")], ROWS_BLOCK)
        s0 = int(np.searchsorted(d["span_doc"], d["doc_id"][a])) if b > a else 0
        s1 = int(np.searchsorted(d["span_doc"], d["doc_id"][b - 1], side="right")) if b > a else 0
        spans = column_rows([d[k][s0:s1] for k in ("span_doc", "span_start", "span_end")], ROWS_BLOCK)
        doc_id, row, keep = next(docs, end)
        span = next(spans, end)
        for rec in records:
            if rec.row != row:
                continue  # an input_errors row
            doc_spans = []
            while span[0] is not None and span[0] < doc_id:
                span = next(spans, end)
            while span[0] == doc_id:
                if span[2] > span[1]:
                    doc_spans.append((span[1], span[2]))
                span = next(spans, end)
            faults.point("export.row")
            if keep:
                if raw and doc_spans:
                    rec = parse_json_row(rec.raw, rec.source, rec.row, text_field, id_field)
                yield rec, (cut(rec.text, doc_spans) if doc_spans else None)
            doc_id, row, keep = next(docs, end)
        if row is not None:
            raise SadedupError(f"input {path} changed since ingest: row {row} is gone; rerun with --restart")

    def copied(piece, out: _Parts, on_read) -> int | None:
        """The kept rows of a JSONL piece with no document cut, copied as read a block of
        lines at a time (readers.jsonl_kept: what rows_of gives there, without an object per
        row); None for any other piece. Returns the rows written."""
        path, fmt, compression, lines, a, b = piece
        if fmt != "jsonl" or compression is not None:
            return None
        if b > a and np.searchsorted(d["span_doc"], d["doc_id"][a]) != np.searchsorted(
                d["span_doc"], d["doc_id"][b - 1], side="right"):
            return None
        rows, keep = np.ascontiguousarray(d["doc_row"][a:b]), np.ascontiguousarray(d["doc_kept"][a:b])
        matched, wrote = jsonl_kept(InputFile(as_path(path), fmt, compression), rows, keep, out.write_lines, on_read,
                                    lines)
        faults.points("export.row", matched)
        if matched < len(rows):
            raise SadedupError(f"input {path} changed since ingest: row {int(rows[matched])} is gone; "
                               f"rerun with --restart")
        return wrote

    def batches_of(piece, on_read):
        """(batch of the kept rows, {position in it: cut text}) of a Parquet file, in order."""
        import pyarrow as pa

        path, fmt, compression, _, a, b = piece
        rows, keep, ids = d["doc_row"][a:b], d["doc_kept"][a:b], d["doc_id"][a:b]
        at = 0  # the file's documents in the batches before
        for before, batch in parquet_batches(InputFile(as_path(path), fmt, compression), text_field, on_read):
            faults.point("export.row")
            upto = int(np.searchsorted(rows, before + batch.num_rows, side="right"))
            sel = np.asarray(keep[at:upto]).astype(bool)
            take = np.asarray(rows[at:upto])[sel] - before - 1
            kept_ids = np.asarray(ids[at:upto])[sel]
            at = upto
            lo = np.searchsorted(d["span_doc"], kept_ids)
            hi = np.searchsorted(d["span_doc"], kept_ids, side="right")
            texts = {}
            if (hi > lo).any():
                col = batch.column(text_field)
                for k in np.flatnonzero(hi > lo):
                    doc_spans = [(int(x), int(y)) for x, y in zip(d["span_start"][lo[k]:hi[k]],
                                                                  d["span_end"][lo[k]:hi[k]]) if y > x]
                    if doc_spans:
                        texts[int(k)] = cut(col[int(take[k])].as_py(), doc_spans)
            yield batch.take(pa.array(take, pa.int64())), texts
        if at != b - a:
            raise SadedupError(f"input {path} changed since ingest: row {int(rows[at])} is gone; rerun with --restart")

    to_parquet = formats.output_kind(parts[0])[0].name == "parquet"
    schema = None
    if to_parquet:
        schema = schema_from if schema_from is not None else formats.output_schema(
            [InputFile(as_path(p[0]), p[1], p[2]) for p in pieces], text_field)
        others = [p for p in pieces if p[1] != "parquet"]
        if others:  # every field of every row read as JSON or text: a pass over them first
            rs = RowSchema((shown or parts)[0], schema)
            for p in others:
                for rec, _ in rows_of(p, lambda n: None):
                    rs.add(row_of(rec, text_field), rec.source, rec.row)
            schema = rs.result()
    out = _Parts(parts, rows_per_part, text_field, schema, uploads, layout, shown or parts)
    kept = changed = 0
    try:
        for piece in pieces:
            if to_parquet and piece[1] == "parquet":
                for batch, texts in batches_of(piece, on_read):
                    out.write_batch(batch, texts)
                    kept, changed = kept + batch.num_rows, changed + len(texts)
                continue
            wrote = None if to_parquet or rows_per_part else copied(piece, out, on_read)
            if wrote is not None:
                kept += wrote
                continue
            for rec, text in rows_of(piece, on_read, parse=to_parquet):
                out.write(rec, text)
                kept, changed = kept + 1, changed + (text is not None)
        out.close()
    except BaseException:
        out.abort()
        raise
    return {"rows": kept, "cut": changed, "parts": out.opened, "wrote": out.wrote}


class _Parts:
    """One writer after another: rows go to parts[0] until it holds `rows_per_part` rows (0:
    no limit), then to parts[1], ... Every part named is written, an empty one too (a file
    with no kept row keeps its place among the parts). A finished part is uploaded to its URL
    in `uploads`, when given, and its local file removed."""

    def __init__(self, parts: list[str], rows_per_part: int, text_field: str, schema: pa.Schema | None,
                 uploads: list[str] | None, layout: ParquetLayout | None, shown: list[str]) -> None:
        self.parts, self.limit, self.uploads, self.shown = parts, rows_per_part, uploads, shown
        self.open_one = lambda i: open_writer(Path(parts[i]), text_field, schema, layout, shown[i])
        self.at, self.rows = 0, 0
        self.w = self.open_one(0)
        self.opened = 1
        self.wrote = 0  # bytes of the finished parts (executor.tally)

    def _room(self) -> int:
        if not self.limit:
            return 1 << 62
        if self.rows >= self.limit:
            self._next()
        return self.limit - self.rows

    def _next(self) -> None:
        self._finish()
        self.at += 1
        if self.at >= len(self.parts):
            raise SadedupError(f"output {self.shown[0]}: more rows than the parts planned for them; "
                               f"rerun with --restart")
        self.w, self.rows = self.open_one(self.at), 0
        self.opened += 1

    def _finish(self) -> None:
        self.w.close()
        self.wrote += os.path.getsize(self.parts[self.at])
        if self.uploads is not None:
            local = Path(self.parts[self.at])
            upload(local, as_path(self.uploads[self.at]))
            local.unlink(missing_ok=True)

    def write(self, rec, text) -> None:
        self._room()
        self.w.write(rec, text)
        self.rows += 1

    def write_lines(self, lines: memoryview, n: int) -> None:
        """n JSONL rows as read (JSONL output in one part only: they are not counted out)."""
        assert not self.limit
        self.w.write_lines(lines, n)
        self.rows += n

    def write_batch(self, batch: pa.RecordBatch, texts: dict[int, str]) -> None:
        at = 0
        while at < batch.num_rows or (at == 0 and batch.num_rows == 0):
            n = min(self._room(), batch.num_rows - at)
            part = {i - at: t for i, t in texts.items() if at <= i < at + n}
            self.w.write_batch(batch.slice(at, n) if (at or n < batch.num_rows) else batch, part)
            self.rows += n
            at += n
            if batch.num_rows == 0:
                break

    def close(self) -> None:
        self._finish()
        while self.at + 1 < len(self.parts):  # parts that got no row: written empty
            self.at += 1
            self.w, self.rows = self.open_one(self.at), 0
            self.opened += 1
            self._finish()

    def abort(self) -> None:
        self.w.abort()


@dataclass(frozen=True)
class ExportPart:
    """Task: the kept documents of `pieces`, in order and cut, into the files `parts`."""
    pieces: list
    decisions: str
    parts: list
    text_field: str
    id_field: str
    schema_from: pa.Schema | None
    rows_per_part: int = 0
    uploads: list | None = None
    layout: ParquetLayout | None = None
    shown: list | None = None

    def __call__(self, on_read=lambda n: None) -> dict[str, int]:
        return export_part(self.pieces, self.decisions, self.parts, self.text_field, self.id_field, self.schema_from,
                           on_read, self.rows_per_part, self.uploads, self.layout, self.shown)


def _columns_to_files(con: sqlite3.Connection, table: str, columns: list[str], order: str, folder: Path,
                      names: list[str]) -> None:
    """Integer columns of a query, streamed into one int64 .npy per column (never the whole
    result in Python objects: a corpus may hold tens of millions of rows)."""
    n = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    cursor = con.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}")
    with ExitStack() as files:
        outs = [files.enter_context(npy_in_place(folder / f"{name}.npy", np.int64, n)) for name in names]
        at = 0
        while batch := cursor.fetchmany(1 << 16):
            block = np.array(batch, dtype=np.int64).reshape(len(batch), len(columns))
            for j, out in enumerate(outs):
                out[at:at + len(block)] = block[:, j]
            at += len(block)


def _snapshot_decisions(db_path: Path, folder: Path) -> dict[str, tuple[int, int]]:
    """The decisions export needs, from the database to arrays in `folder` for the tasks:
    the documents in doc_id order, the spans in (doc_id, char_start) order. Returns each
    source's range of documents (they are numbered in input order)."""
    con = sqlite3.connect(db_path)
    try:
        _columns_to_files(con, "documents", ["doc_id", "source_row", "status = 'kept'"], "doc_id", folder,
                          ["doc_id", "doc_row", "doc_kept"])
        _columns_to_files(con, "spans", ["doc_id", "char_start", "char_end"], "doc_id, char_start", folder,
                          ["span_doc", "span_start", "span_end"])
        sources = con.execute("SELECT source, count(*) FROM documents GROUP BY source ORDER BY min(doc_id)").fetchall()
    finally:
        con.close()
    ends = np.cumsum([n for _, n in sources], dtype=np.int64)
    return {src: (int(e - n), int(e)) for (src, n), e in zip(sources, ends)}


def _plan(inputs: list[InputFile], ranges: dict[str, tuple[int, int]], rows: np.ndarray, workers: int,
          piece_bytes: int) -> tuple[list[tuple], list[int]]:
    """The pieces (as export_part takes them), in output order, each with its documents:
    those of its file past the rows before it, up to where the next piece's begin; and
    each piece's bytes."""
    left = dict(ranges)
    pieces, sizes = [], []
    for inp, lines, nbytes in input_pieces(inputs, workers, piece_bytes):
        sizes.append(nbytes)
        a, b = ranges.get(inp.name, (0, 0))
        left.pop(inp.name, None)
        first = a if lines is None else a + int(np.searchsorted(rows[a:b], lines[2], side="right"))
        if pieces and pieces[-1][0] == str(inp.path):
            pieces[-1] = pieces[-1][:5] + (first,)
        pieces.append((str(inp.path), inp.format, inp.compression, lines, first, b))
    if left:
        raise SadedupError(f"documents come from {next(iter(left))}, which is not among the inputs; "
                           f"rerun with --restart")
    return pieces, sizes


class Export(Stage):
    name = "export"

    def __init__(self, output: str | Path | None = None, piece_bytes: int = PIECE_BYTES) -> None:
        self.output = output
        self.piece_bytes = piece_bytes
        self._written: list[str] | None = None  # the parts this run wrote, for its record
        self._before: tuple[str | None, list[str]] = (None, [])  # (output, parts) of the last export

    def _output(self, ctx: Context) -> Output:
        out = self.output or ctx.ws.output
        if not out:
            raise SadedupError("no output path: pass --output PATH")
        return output_of(out).absolute()

    def settings(self, ctx: Context) -> Any:
        row = ctx.ws.stage_row(self.name)
        if row is not None and row.status == "done":
            # a finished output is current only while the inputs it was cut from are; one not
            # written yet finds a change itself, as it reads them (and records the failure)
            ctx.ws.check_inputs()
        out, run = self._output(ctx), ctx.wf.run
        parquet = formats.output_kind(out.first)[0].name == "parquet"
        return [out.spec, run.output_rows if out.sharded else None, run.row_group_rows if parquet else None]

    def _parts(self, ctx: Context) -> list[str]:
        """The files it wrote: this run's, or those recorded."""
        if self._written is not None:
            return self._written
        return ctx.ws.stage_detail(self.name).get("parts") or []

    def files(self, ctx: Context) -> list[Path]:
        out = self._output(ctx)
        if out.remote:
            return []  # objects: whole() compares their size and ETag with the record
        return [Path(p) for p in self._parts(ctx)] if out.sharded else [out.local()]

    def whole(self, ctx: Context, key: str) -> bool:
        out = self._output(ctx)
        if not out.remote:
            return True
        recorded = ctx.ws.stage_detail(self.name).get("objects") or []
        try:
            return bool(recorded) and all(describe(d["path"]) == d for d in recorded)
        except SadedupError:
            return False

    def run(self, ctx: Context) -> dict[str, Any]:
        # what the last export wrote, read before the record is marked running
        last = ctx.ws.stage_detail(self.name)
        self._before = (last.get("spec"), last.get("parts") or [])
        return super().run(ctx)

    def summary(self, d: dict[str, Any]) -> str:
        where = d["output"] if len(d.get("parts") or [1]) <= 1 else f"{len(d['parts'])} parts {d['output']}"
        return f"export: {d['rows']} document(s) written to {where} ({d['cut']} with passages cut)"

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        out = self._output(ctx)
        if not out.remote:
            check_outside(out.local(), ctx.ws.root, shown=out.spec)
        check_not_anothers(out, ctx.ws.root)
        recorded = ctx.ws.read_state()["inputs"]
        named, files = ctx.ws.held_apart()
        out.check(named, [*files, *claimed(ctx.wf, None)])  # before its lock file is made beside it
        if out.remote:  # an object store has no lock to take: one writer per URL is the user's to keep
            return self._write(ctx, out, recorded)
        with output_lock(out.local()):
            return self._write(ctx, out, recorded)

    def _write(self, ctx: Context, out: Output, recorded: list[dict]) -> dict[str, Any]:
        ws, wf = ctx.ws, ctx.wf
        ws.check_inputs()  # the rows are matched to documents by file and row
        inputs, _ = expand_inputs([d["path"] for d in recorded])
        # Parquet output: the Parquet inputs' schemas, unified (a conflict stops the run here)
        parquet = formats.output_kind(out.first)[0].name == "parquet"
        schema_from = formats.output_schema(inputs, wf.input.text_field) if parquet else None
        layout = ParquetLayout(formats.parquet_codec(inputs), wf.run.row_group_rows) if parquet else None
        decisions = ws.root / "export.partial"
        # parts are written beside the output, or for a URL in the work folder, then uploaded
        staging = decisions / "staging" if out.remote else out.local().with_name(
            f".{out.local().name}.sadedup-parts")  # a name no one else would pick: it is emptied
        for folder in (decisions, staging):
            shutil.rmtree(folder, ignore_errors=True)
        decisions.mkdir()
        spec, parts = self._before
        before = parts if spec == out.spec else []
        try:
            ranges = _snapshot_decisions(ws.root / db.DB_NAME, decisions)
            driver_wrote(ctx, [decisions / f"{name}.npy" for name in DECISIONS])
            kept_rows = np.load(decisions / "doc_kept.npy", mmap_mode="r")
            pieces, sizes = _plan(inputs, ranges, np.load(decisions / "doc_row.npy", mmap_mode="r"),
                                  ctx.executor.workers, self.piece_bytes)
            staging.mkdir()
            task = functools.partial(ExportPart, decisions=str(decisions), text_field=wf.input.text_field,
                                     id_field=wf.input.id_field, schema_from=schema_from, layout=layout)
            if out.sharded:
                tasks, sizes, names = _sharded_tasks(task, out, inputs, ranges, kept_rows, pieces, sizes,
                                                     wf.run.output_rows, staging)
            elif parquet or len(pieces) == 1 or out.remote:  # one file, written by one task
                name = str(staging / out.local().name) if not out.remote else str(staging / out.url().name)
                tasks = [task(pieces, parts=[name], shown=[out.spec])]
                sizes, names = [sum(sizes)], [out.spec]
            else:  # pieces in parallel, joined in order
                tasks = [task([p], parts=[str(staging / f"part_{i:05d}.{out.local().name}")], shown=[out.spec])
                         for i, p in enumerate(pieces)]
                names = [out.spec]
            kept = changed = 0
            joined = not out.sharded and len(tasks) > 1
            with ExitStack() as stack:
                b = stack.enter_context(bar("export", sum(sizes), "bytes"))
                # pieces in parallel, joined in order: each part is appended (and removed) as
                # soon as those before it are, while the workers still write the ones after it,
                # instead of the whole output copied once the last part is written
                w = stack.enter_context(replaced(out.local(), ".joined", staging)) if joined else None
                for i, res in in_order(imap_reading(ctx.executor, tasks, sizes, b.advance)):
                    kept, changed = kept + res["rows"], changed + res["cut"]
                    if w is not None:
                        part = Path(tasks[i].parts[0])
                        append_file(w, part)
                        part.unlink()
            if out.remote and not out.sharded:
                upload(Path(tasks[0].parts[0]), out.url())
            elif not out.remote and not joined:
                _move_in([Path(p) for t in tasks for p in t.parts], [out.local(i) for i in range(len(names))],
                         before, names)
            if joined:
                driver_wrote(ctx, [out.local()])
        finally:
            for folder in (decisions, staging):
                shutil.rmtree(folder, ignore_errors=True)
        _remove_stale(before, names)
        mark_written(names, ws.root)
        self._written = names
        detail = {"output": str(self.output or ws.output), "spec": out.spec, "rows": kept, "cut": changed,
                  "pieces": len(tasks), "parts": names}
        if out.remote:
            detail["objects"] = [describe(n) for n in names]
        _warn_strangers(out, names)
        return detail


def _sharded_tasks(task, out: Output, inputs: list[InputFile], ranges: dict[str, tuple[int, int]],
                   kept: np.ndarray, pieces: list[tuple], sizes: list[int], rows_per_part: int,
                   staging: Path) -> tuple[list, list[int], list[str]]:
    """One task per input file, writing its parts: one part per file, or ceil(kept / N) parts
    of N rows, numbered on across the files in input order. For a URL each part is written in
    `staging` and uploaded by the task."""
    tasks, task_sizes, names = [], [], []
    for inp in inputs:
        mine = [i for i, p in enumerate(pieces) if p[0] == str(inp.path)]
        a, b = ranges.get(inp.name, (0, 0))
        n_kept = int(np.count_nonzero(kept[a:b]))
        n_parts = 1 if not rows_per_part else -(-n_kept // rows_per_part)
        if not n_parts:
            continue
        first = len(names)
        these = [out.part(first + k) for k in range(n_parts)]
        names += these
        local = [str(staging / f"{first + k:06d}.{as_path(n).name}") for k, n in enumerate(these)]
        tasks.append(task([pieces[i] for i in mine], parts=local, rows_per_part=rows_per_part,
                          uploads=these if out.remote else None, shown=these))
        task_sizes.append(sum(sizes[i] for i in mine))
    return tasks, task_sizes, names


def _move_in(written: list[Path], final: list[Path], before: list[str], names: list[str]) -> None:
    """The parts, written in the staging folder, renamed over the former ones (and the former
    ones this export has no part for removed) only once every one is written: an export killed
    midway leaves the former output whole, never new parts beside old ones. Signals wait until
    the renames are done (a Ctrl-C here would leave that mixture too); they are one directory's
    renames, a few milliseconds."""
    with deferred_signals():
        for src, dst in zip(written, final, strict=True):
            os.replace(src, dst)
        _remove_stale(before, names)


def _remove_stale(before: list[str], now: list[str]) -> None:
    """Parts an earlier export of this output wrote that this one did not (fewer parts now):
    left in place they would read as part of the output."""
    for name in sorted(set(before) - set(now)):
        p = as_path(name)
        try:
            if isinstance(p, Path):
                p.unlink(missing_ok=True)
            else:
                p.fs.rm_file(p.fspath)
        except (OSError, FileNotFoundError):
            pass


def _warn_strangers(out: Output, names: list[str]) -> None:
    """Files beside the parts that match their pattern but were not written now: a reader
    globbing the parts would take them in."""
    if not out.sharded:
        return
    pattern = re.sub(r"\{shard[^}]*\}", "*", out.spec)
    try:
        found = {str(p) for p in expand_glob(pattern)}
    except SadedupError:
        return
    extra = sorted(found - set(names))
    if extra:
        warn(f"{len(extra)} file(s) beside the output match {pattern} but are not part of it "
             f"(e.g. {extra[0]}); remove them before reading the parts with a glob")
