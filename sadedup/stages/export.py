"""Export: the kept documents, in input order, in the input's format, text cut by the spans.

The inputs are streamed again and matched row by row to the documents' decisions; only the
text field of a cut document changes (the original text with each recorded character span
removed), every other row and field passes through untouched.

The work is cut into pieces that run in parallel: a file, or for uncompressed JSONL a range
of whole lines of at least PIECE_BYTES. The documents are numbered in input order, so a
piece's documents are one range of doc_ids and its spans one range of the spans. The driver
snapshots the decisions from the database into arrays (`<workdir>/export.partial/`); each
task writes its piece to a part file next to the output, and the parts are joined in order
(gzip members and zstd frames may follow one another). Parquet output is one task.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from .. import faults, formats
from ..db import DB_NAME, column_rows
from ..errors import SadedupError
from ..executor import imap_reading
from ..progress import bar
from ..readers import PIECE_BYTES, InputFile, expand_inputs, input_pieces, parquet_batches, read_records
from ..workspace import append_file, describe_input, npy_in_place, replaced
from ..writers import RowSchema, check_output, open_writer, row_of
from .base import Context, Stage

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


def export_part(pieces: list[tuple], decisions: str, part: str, text_field: str, id_field: str,
                schema_from: pa.Schema | None = None, on_read=lambda n: None) -> dict[str, int]:
    """Task: the kept documents of `pieces`, in order and cut, written to `part`. A piece is
    (path, format, compression, lines or None, first doc index, end doc index): `lines` is
    (start, end, rows before start) of an uncompressed JSONL file.

    Parquet output is in one schema: `schema_from`, the Parquet inputs' schemas unified
    (formats.output_schema; found here when None), and, for rows read as JSON or text, every
    field of every kept row (a first pass over those rows: the one case where an input is
    read twice). Parquet inputs go to Parquet output as Arrow batches."""
    d = {name: np.load(Path(decisions) / f"{name}.npy", mmap_mode="r") for name in DECISIONS}
    end = (None, None, None)

    def rows_of(piece, on_read):
        """(record, cut text or None) of every kept document of a piece, in order."""
        path, fmt, compression, lines, a, b = piece
        inp = InputFile(Path(path), fmt, compression)
        docs = column_rows([d[k][a:b] for k in ("doc_id", "doc_row", "doc_kept")], ROWS_BLOCK)
        s0 = int(np.searchsorted(d["span_doc"], d["doc_id"][a])) if b > a else 0
        s1 = int(np.searchsorted(d["span_doc"], d["doc_id"][b - 1], side="right")) if b > a else 0
        spans = column_rows([d[k][s0:s1] for k in ("span_doc", "span_start", "span_end")], ROWS_BLOCK)
        doc_id, row, keep = next(docs, end)
        span = next(spans, end)
        for rec in read_records(inp, text_field, id_field, on_read, piece=lines):
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
                yield rec, (cut(rec.text, doc_spans) if doc_spans else None)
            doc_id, row, keep = next(docs, end)
        if row is not None:
            raise SadedupError(f"input {path} changed since ingest: row {row} is gone; rerun with --restart")

    def batches_of(piece, on_read):
        """(batch of the kept rows, {position in it: cut text}) of a Parquet file, in order."""
        path, fmt, compression, _, a, b = piece
        rows, keep, ids = d["doc_row"][a:b], d["doc_kept"][a:b], d["doc_id"][a:b]
        at = 0  # the file's documents in the batches before
        for before, batch in parquet_batches(InputFile(Path(path), fmt, compression), text_field, on_read):
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

    to_parquet = formats.output_kind(part)[0].name == "parquet"
    schema = None
    if to_parquet:
        schema = schema_from if schema_from is not None else formats.output_schema(
            [InputFile(Path(p[0]), p[1], p[2]) for p in pieces], text_field)
        others = [p for p in pieces if p[1] != "parquet"]
        if others:  # every field of every row read as JSON or text: a pass over them first
            rs = RowSchema(part, schema)
            for p in others:
                for rec, _ in rows_of(p, lambda n: None):
                    rs.add(row_of(rec, text_field), rec.source, rec.row)
            schema = rs.result()
    writer = open_writer(Path(part), text_field, schema)
    kept = changed = 0
    try:
        for piece in pieces:
            if to_parquet and piece[1] == "parquet":
                for batch, texts in batches_of(piece, on_read):
                    writer.write_batch(batch, texts)
                    kept, changed = kept + batch.num_rows, changed + len(texts)
                continue
            for rec, text in rows_of(piece, on_read):
                writer.write(rec, text)
                kept, changed = kept + 1, changed + (text is not None)
        writer.close()
    except BaseException:
        writer.abort()
        raise
    return {"rows": kept, "cut": changed}


@dataclass(frozen=True)
class ExportPart:
    """Task: the kept documents of `pieces`, in order and cut, into the file `part`."""
    pieces: list
    decisions: str
    part: str
    text_field: str
    id_field: str
    schema_from: pa.Schema | None

    def __call__(self, on_read=lambda n: None) -> dict[str, int]:
        return export_part(self.pieces, self.decisions, self.part, self.text_field, self.id_field, self.schema_from,
                           on_read)


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


@contextmanager
def output_lock(out: Path) -> Iterator[None]:
    """One writer per output path, whichever work folder it comes from: the loser of two
    exports to one file is told, instead of both renaming their file over the other's."""
    lock = out.with_name(f".{out.name}.sadedup-lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(fd, 64, 0).decode(errors="replace").strip()
            raise SadedupError(f"output {out} is being written by another sadedup run"
                               f"{f' (pid {other})' if other else ''}; wait for it or write elsewhere") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _join(parts: list[Path], out: Path) -> None:
    """The part files, one after another, into `out`."""
    with replaced(out, ".partial") as w:
        for p in parts:
            append_file(w, p)


class Export(Stage):
    name = "export"

    def __init__(self, output: str | Path | None = None, piece_bytes: int = PIECE_BYTES) -> None:
        self.output = output
        self.piece_bytes = piece_bytes

    def _output(self, ctx: Context) -> Path:
        out = self.output or ctx.ws.output
        if not out:
            raise SadedupError("no output path: pass --output PATH")
        return Path(out)

    def settings(self, ctx: Context) -> Any:
        return str(self._output(ctx).resolve())

    def files(self, ctx: Context) -> list[Path]:
        return [self._output(ctx)]

    def summary(self, d: dict[str, Any]) -> str:
        return f"export: {d['rows']} document(s) written to {d['output']} ({d['cut']} with passages cut)"

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        out = self._output(ctx)
        if out.resolve().is_relative_to(ctx.ws.root.resolve()):
            raise SadedupError(f"output {out} is inside the work folder {ctx.ws.root}; write it elsewhere")
        recorded = ctx.ws.read_state()["inputs"]
        check_output(out, [d["path"] for d in recorded])  # before its lock file is made beside it
        with output_lock(out):
            return self._write(ctx, out, recorded)

    def _write(self, ctx: Context, out: Path, recorded: list[dict]) -> dict[str, Any]:
        ws, wf = ctx.ws, ctx.wf
        inputs, _ = expand_inputs([d["path"] for d in recorded])
        for inp, was in zip(inputs, recorded):  # the rows are matched to documents by file and row
            if describe_input(inp) != was:
                raise SadedupError(f"input {inp.path} changed since it was ingested (size or modification time); "
                                   f"rerun with --restart to start over")
        # Parquet output: the Parquet inputs' schemas, unified (a conflict stops the run here)
        parquet = formats.output_kind(out)[0].name == "parquet"
        schema_from = formats.output_schema(inputs, wf.input.text_field) if parquet else None
        decisions = ws.root / "export.partial"
        parts_dir = out.with_name(f".{out.name}.sadedup-parts")  # a name no one else would pick: it is emptied
        for folder in (decisions, parts_dir):
            shutil.rmtree(folder, ignore_errors=True)
        decisions.mkdir()
        try:
            ranges = _snapshot_decisions(ws.root / DB_NAME, decisions)
            pieces, sizes = _plan(inputs, ranges, np.load(decisions / "doc_row.npy", mmap_mode="r"),
                                  ctx.executor.workers, self.piece_bytes)
            if parquet or len(pieces) == 1:  # Parquet output is one file, written by one task
                tasks = [ExportPart(pieces, str(decisions), str(out), wf.input.text_field, wf.input.id_field,
                                    schema_from)]
                sizes = [sum(sizes)]
            else:
                parts_dir.mkdir()
                tasks = [ExportPart([p], str(decisions), str(parts_dir / f"part_{i:05d}.{out.name}"),
                                    wf.input.text_field, wf.input.id_field, schema_from) for i, p in enumerate(pieces)]
            kept = changed = 0
            with bar("export", sum(sizes), "bytes") as b:
                for _, res in imap_reading(ctx.executor, tasks, sizes, b.advance):
                    kept, changed = kept + res["rows"], changed + res["cut"]
            if len(tasks) > 1:
                _join([Path(t.part) for t in tasks], out)
        finally:
            for folder in (decisions, parts_dir):
                shutil.rmtree(folder, ignore_errors=True)
        return {"output": str(out), "rows": kept, "cut": changed, "pieces": len(tasks)}
