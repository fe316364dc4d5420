"""Export: the kept documents, in input order, in the input's format, text cut by the spans.

The inputs are streamed again and matched row by row to the `documents` table; only the
text field of a cut document changes (the original text with each recorded character span
removed), every other row and field passes through untouched.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from .. import faults
from ..db import DB_NAME
from ..errors import SadedupError
from ..progress import bar, say
from ..readers import expand_inputs, read_records
from ..workspace import describe_input
from ..writers import check_output, open_writer
from .base import Context, Stage, chain
from .docs import document_stages_key


def cut(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with every [start, end) character span removed (spans sorted, disjoint)."""
    pieces, at = [], 0
    for a, b in spans:
        pieces.append(text[at:a])
        at = max(at, b)
    pieces.append(text[at:])
    return "".join(pieces)


class Export(Stage):
    name = "export"

    def __init__(self, output: str | Path | None = None) -> None:
        self.output = output

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
        recorded = ws.read_state()["inputs"]
        inputs, _ = expand_inputs([d["path"] for d in recorded])
        for inp, was in zip(inputs, recorded):  # the rows are matched to documents by file and row
            if describe_input(inp) != was:
                raise SadedupError(f"input {inp.path} changed since it was ingested (size or modification time); "
                                   f"rerun with --restart to start over")
        check_output(out, [d["path"] for d in recorded])
        schema = None
        if inputs and all(f.format == "parquet" for f in inputs):
            schema = pq.ParquetFile(inputs[0].path).schema_arrow
        writer = open_writer(out, wf.input.text_field, schema)
        con_docs = sqlite3.connect(ws.root / DB_NAME)
        con_spans = sqlite3.connect(ws.root / DB_NAME)
        docs = con_docs.execute("SELECT doc_id, source, source_row, status FROM documents ORDER BY doc_id")
        spans = con_spans.execute("SELECT doc_id, char_start, char_end FROM spans ORDER BY doc_id, char_start")
        next_doc = docs.fetchone()
        next_span = spans.fetchone()
        kept = changed = 0
        total = sum(f.path.stat().st_size for f in inputs)
        try:
            with bar("export", total, "bytes") as b:
                for inp in inputs:
                    for rec in read_records(inp, wf.input.text_field, wf.input.id_field, b.advance):
                        if next_doc is None or (rec.source, rec.row) != (next_doc[1], next_doc[2]):
                            continue  # an input_errors row
                        doc_id, status = next_doc[0], next_doc[3]
                        next_doc = docs.fetchone()
                        doc_spans = []
                        while next_span is not None and next_span[0] < doc_id:
                            next_span = spans.fetchone()
                        while next_span is not None and next_span[0] == doc_id:
                            if next_span[2] > next_span[1]:
                                doc_spans.append((next_span[1], next_span[2]))
                            next_span = spans.fetchone()
                        faults.point("export.row")
                        if status != "kept":
                            continue
                        if doc_spans:
                            writer.write(rec, cut(rec.text, doc_spans))
                            changed += 1
                        else:
                            writer.write(rec, None)
                        kept += 1
            if next_doc is not None:
                raise SadedupError(f"input {next_doc[1]} changed since ingest: row {next_doc[2]} is gone; "
                                   f"rerun with --restart")
            writer.close()
        except BaseException:
            writer.abort()
            raise
        finally:
            con_docs.close()
            con_spans.close()
        detail = {"output": str(out), "rows": kept, "cut": changed}
        ws.mark(self.name, key, "done", files=[out], **detail)
        say(f"export: {kept} document(s) written to {out} ({changed} with passages cut)")
        return detail
