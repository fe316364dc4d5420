"""Ingest: every input row becomes a document or an `input_errors` row, streamed.

Writes the documents' UTF-8 text once, concatenated (`ingest/texts.bin`, with int64 offsets),
so later stages read memory-mapped bytes instead of parsing the inputs again.

The inputs are read in pieces on the executor (an uncompressed JSONL file cut at line
starts, any other file whole; see `readers.input_pieces`): each task writes its documents'
text to a part file and returns what the database needs per row. The driver takes the
pieces in input order, numbers the documents, appends the parts to texts.bin and writes
the rows, so the result is that of reading the inputs one row after another.
"""
from __future__ import annotations

import os
import pickle
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import faults, formats
from ..progress import bar
from ..errors import note_path
from ..locations import as_path
from ..executor import imap_reading, in_order
from ..readers import (PIECE_BYTES, InputFile, Record, TextFieldSeen, expand_inputs, input_pieces, json_ext_id,
                       jsonl_documents, open_parquet, read_records)
from ..workspace import append_file, file_bytes, save_npy
from .base import Context, Stage, driver_wrote
from .sizing import max_document_tokens


ROWS_PER_CHUNK = 50_000


@dataclass(frozen=True)
class IngestPiece:
    """Task: one piece of an input (`lines` of an uncompressed JSONL file, else all of it)."""
    path: str
    format: str
    compression: str | None
    lines: tuple[int, int, int] | None
    part: str
    text_field: str
    id_field: str
    limit: int

    def __call__(self, on_read=lambda n: None) -> dict[str, Any]:
        return ingest_piece(self, on_read)


def ingest_piece(t: IngestPiece, on_read=lambda n: None) -> dict[str, Any]:
    """One piece of an input. Its documents' UTF-8 text goes to `part`, one after another,
    and what the database needs per row to `part`.rows, in pickled chunks of ROWS_PER_CHUNK
    rows (a compressed file is one piece however large): (row, ext_id, characters, bytes)
    per document and (row, error) per row set aside. Uncompressed JSONL is read a block of
    documents at a time (readers.jsonl_documents), the rows it leaves to Python one by one."""
    inp, part, limit = InputFile(as_path(t.path), t.format, t.compression), t.part, t.limit
    docs: list[tuple] = []
    errors: list[tuple] = []
    chunks = 0
    seen = TextFieldSeen(t.text_field)  # whether any row has the text field, and which fields they have
    try:
        with open(part, "wb", buffering=1 << 22) as texts, open(part + ".rows", "wb") as rows:
            def record(rec: Record) -> None:
                if not seen.found:
                    seen.add(rec)
                if rec.error is None:
                    data = rec.text.encode("utf-8")
                    if len(data) > limit:
                        rec.error = (f"document of {len(data)} bytes is over the {limit}-token limit that "
                                     f"run.memory_budget allows; raise the budget to keep it")
                faults.point("ingest.row")
                if rec.error is not None:
                    errors.append((rec.row, rec.error))
                else:
                    texts.write(data)
                    docs.append((rec.row, json_ext_id(rec.ext_id), len(rec.text), len(data)))

            if formats.splittable(inp):
                for item in jsonl_documents(inp, t.text_field, t.id_field, limit, on_read, piece=t.lines):
                    if isinstance(item, Record):
                        record(item)
                    else:
                        data, batch = item
                        seen.found = True  # documents: rows with the text field
                        faults.points("ingest.row", len(batch))
                        texts.write(data)
                        docs += batch
                    if len(docs) + len(errors) >= ROWS_PER_CHUNK:
                        pickle.dump((docs, errors), rows, protocol=pickle.HIGHEST_PROTOCOL)
                        docs, errors, chunks = [], [], chunks + 1
            else:
                for rec in read_records(inp, t.text_field, t.id_field, on_read, piece=t.lines):
                    record(rec)
                    if len(docs) + len(errors) >= ROWS_PER_CHUNK:
                        pickle.dump((docs, errors), rows, protocol=pickle.HIGHEST_PROTOCOL)
                        docs, errors, chunks = [], [], chunks + 1
            pickle.dump((docs, errors), rows, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError as e:  # reading errors are SadedupErrors: this is a part file
        raise note_path(e, part)
    return {"chunks": chunks + 1, "text_field": seen, "wrote": file_bytes([part, part + ".rows"])}


def _row_chunks(path: Path, chunks: int) -> Iterator[tuple[list, list]]:
    with open(path, "rb") as f:
        for _ in range(chunks):
            yield pickle.load(f)


class Ingest(Stage):
    name = "ingest"

    def __init__(self, piece_bytes: int = 4 * PIECE_BYTES) -> None:
        # larger pieces than export's: ingest is the first stage, and a piece of 64 MB is
        # parsed in about the time the pool takes to start
        self.piece_bytes = piece_bytes

    def settings(self, ctx: Context) -> Any:
        row = ctx.ws.stage_row(self.name)
        if row is not None and row.status == "done":
            # what it read is current only while the inputs are as they were: else status said
            # ingest and every stage after it done, and a stage command ran on the former text
            ctx.ws.check_inputs()
        state = ctx.ws.read_state() or {}
        wf = ctx.wf
        return [state.get("inputs"), wf.input.text_field, wf.input.id_field, max_document_tokens(wf)]

    def files(self, ctx: Context) -> list[Path]:
        out = ctx.ws.root / "ingest"
        return [out / "texts.bin", out / "offsets.npy"]

    def summary(self, d: dict[str, Any]) -> str:
        return (f"ingest: {d['documents']} documents from {d['input_files']} file(s), {d['input_errors']} row(s) "
                f"set aside in input_errors")

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        ws, wf = ctx.ws, ctx.wf
        out = ws.root / "ingest"
        tmp = ws.root / "ingest.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        state = ws.read_state()
        inputs, _ = expand_inputs([d["path"] for d in state["inputs"]])
        skipped = [tuple(x) for x in state.get("unsupported") or []]
        limit = max_document_tokens(wf)
        text_field, id_field = wf.input.text_field, wf.input.id_field
        for inp in inputs:  # a Parquet file without the text column stops the run before any work
            if inp.format == "parquet":
                open_parquet(inp.path, text_field)
        pieces = input_pieces(inputs, ctx.executor.workers, self.piece_bytes)
        one = len(pieces) == 1  # then the part is texts.bin itself
        tasks = [IngestPiece(str(inp.path), inp.format, inp.compression, lines,
                             str(tmp / ("texts.bin" if one else f"texts_{i:05d}.part")), text_field, id_field, limit)
                 for i, (inp, lines, _) in enumerate(pieces)]
        n_docs = pos = 0
        offsets = [np.zeros(1, dtype=np.int64)]
        seen: dict[str, TextFieldSeen] = {}  # per file, over its pieces
        try:
            with ExitStack() as stack:
                rows_out = stack.enter_context(ws.prov.new_documents())
                texts = None if one else stack.enter_context(open(tmp / "texts.bin", "wb"))
                b = stack.enter_context(bar("ingest", sum(p[2] for p in pieces), "bytes"))
                rows_out.errors((src, None, why) for src, why in skipped)
                # the pieces in input order, each as soon as those before it are in
                for nxt, res in in_order(imap_reading(ctx.executor, tasks, [p[2] for p in pieces], b.advance)):
                    source, part = pieces[nxt][0].name, Path(tasks[nxt].part)
                    if texts is not None:
                        append_file(texts, part)
                        part.unlink()
                    rows = part.with_name(part.name + ".rows")
                    for docs, errors in _row_chunks(rows, res["chunks"]):
                        rows_out.documents((n_docs + j, source, row, ext, nc, nb, "kept")
                                           for j, (row, ext, nc, nb) in enumerate(docs))
                        rows_out.errors((source, row, why) for row, why in errors)
                        sizes = np.array([d[3] for d in docs], dtype=np.int64)
                        offsets.append(pos + np.cumsum(sizes))
                        n_docs += len(sizes)
                        pos += int(sizes.sum())
                    rows.unlink()
                    seen.setdefault(source, TextFieldSeen(text_field)).update(res["text_field"])
                    last = nxt + 1 == len(pieces) or pieces[nxt + 1][0].name != source
                    if last and pieces[nxt][0].format != "txt":  # a .txt file is its text: no fields
                        seen.pop(source).check(source)  # the file's last piece: a row had the field?
        except OSError as e:  # the database's failures are not OSErrors: this is texts.bin
            raise note_path(e, tmp / "texts.bin")
        save_npy(tmp / "offsets.npy", np.concatenate(offsets))
        driver_wrote(ctx, [tmp / "offsets.npy"] + ([] if one else [tmp / "texts.bin"]))
        shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
        with ws.engine.connect() as c:
            n_err = c.exec_driver_sql("SELECT count(*) FROM input_errors").scalar()
        return {"documents": n_docs, "input_errors": n_err, "bytes": pos, "input_files": len(inputs)}
