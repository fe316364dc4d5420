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

import shutil
import sqlite3
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from .. import faults
from ..db import DB_NAME, column_rows
from ..errors import SadedupError
from ..executor import imap_reading
from ..progress import bar, say
from ..readers import PIECE_BYTES, InputFile, expand_inputs, input_pieces, read_records
from ..workspace import append_file, describe_input, npy_in_place, replaced
from ..writers import check_output, open_writer
from .base import Context, Stage, chain
from .docs import document_stages_key

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
                schema_from: str | None, on_read=lambda n: None) -> dict[str, int]:
    """Task: the kept documents of `pieces`, in order and cut, written to `part`. A piece is
    (path, format, compression, lines or None, first doc index, end doc index): `lines` is
    (start, end, rows before start) of an uncompressed JSONL file."""
    d = {name: np.load(Path(decisions) / f"{name}.npy", mmap_mode="r") for name in DECISIONS}
    schema = pq.ParquetFile(schema_from).schema_arrow if schema_from else None
    writer = open_writer(Path(part), text_field, schema)
    kept = changed = 0
    end = (None, None, None)
    try:
        for path, fmt, compression, lines, a, b in pieces:
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
                    writer.write(rec, cut(rec.text, doc_spans) if doc_spans else None)
                    kept += 1
                    changed += bool(doc_spans)
                doc_id, row, keep = next(docs, end)
            if row is not None:
                raise SadedupError(f"input {path} changed since ingest: row {row} is gone; rerun with --restart")
        writer.close()
    except BaseException:
        writer.abort()
        raise
    return {"rows": kept, "cut": changed}


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

    def key(self, ctx: Context) -> str:
        from .remove import Remove

        up = Remove().key(ctx) if "substring" in ctx.wf.stages else document_stages_key(ctx)
        return chain("export", up, str(self._output(ctx).resolve()))

    def run(self, ctx: Context) -> dict[str, Any]:
        ws, wf = ctx.ws, ctx.wf
        out = self._output(ctx)
        key = self.key(ctx)
        if not ctx.force and ws.is_done(self.name, key, files=[out]):
            return ws.stage_detail(self.name) | {"skipped": True}
        if out.resolve().is_relative_to(ws.root.resolve()):
            raise SadedupError(f"output {out} is inside the work folder {ws.root}; write it elsewhere")
        ws.mark(self.name, key, "running")
        t0 = time.perf_counter()
        recorded = ws.read_state()["inputs"]
        inputs, _ = expand_inputs([d["path"] for d in recorded])
        for inp, was in zip(inputs, recorded):  # the rows are matched to documents by file and row
            if describe_input(inp) != was:
                raise SadedupError(f"input {inp.path} changed since it was ingested (size or modification time); "
                                   f"rerun with --restart to start over")
        check_output(out, [d["path"] for d in recorded])
        schema_from = str(inputs[0].path) if inputs and all(f.format == "parquet" for f in inputs) else None
        decisions = ws.root / "export.partial"
        parts_dir = out.with_name(f".{out.name}.sadedup-parts")  # a name no one else would pick: it is emptied
        for folder in (decisions, parts_dir):
            shutil.rmtree(folder, ignore_errors=True)
        decisions.mkdir()
        try:
            ranges = _snapshot_decisions(ws.root / DB_NAME, decisions)
            pieces, sizes = _plan(inputs, ranges, np.load(decisions / "doc_row.npy", mmap_mode="r"),
                                  ctx.executor.workers, self.piece_bytes)
            if out.suffix == ".parquet" or len(pieces) == 1:
                tasks = [(pieces, str(decisions), str(out), wf.input.text_field, wf.input.id_field, schema_from)]
                sizes = [sum(sizes)]
            else:
                parts_dir.mkdir()
                tasks = [([p], str(decisions), str(parts_dir / f"part_{i:05d}.{out.name}"), wf.input.text_field,
                          wf.input.id_field, schema_from) for i, p in enumerate(pieces)]
            kept = changed = 0
            with bar("export", sum(sizes), "bytes") as b:
                for _, res in imap_reading(ctx.executor, export_part, tasks, sizes, b.advance):
                    kept, changed = kept + res["rows"], changed + res["cut"]
            if len(tasks) > 1:
                _join([Path(t[2]) for t in tasks], out)
        finally:
            for folder in (decisions, parts_dir):
                shutil.rmtree(folder, ignore_errors=True)
        detail = {"output": str(out), "rows": kept, "cut": changed, "pieces": len(tasks),
                  "seconds": round(time.perf_counter() - t0, 3)}
        ws.mark(self.name, key, "done", files=[out], **detail)
        say(f"export: {kept} document(s) written to {out} ({changed} with passages cut)")
        return detail
