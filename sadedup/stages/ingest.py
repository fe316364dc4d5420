"""Ingest: every input row becomes a document or an `input_errors` row, streamed.

Writes the documents' UTF-8 text once, concatenated (`ingest/texts.bin`, with int64 offsets),
so later stages read memory-mapped bytes instead of parsing the inputs again.
"""
from __future__ import annotations

import os
import shutil
from typing import Any

import numpy as np

from .. import db, faults
from ..progress import bar, say
from ..errors import note_path
from ..readers import expand_inputs, json_ext_id, open_parquet, read_records
from ..workspace import save_npy
from .base import Context, Stage, chain
from .sizing import max_document_tokens


class Ingest(Stage):
    name = "ingest"

    def key(self, ctx: Context) -> str:
        state = ctx.ws.read_state() or {}
        wf = ctx.wf
        return chain("ingest", state.get("inputs"), wf.input.text_field, wf.input.id_field,
                     max_document_tokens(wf))

    def run(self, ctx: Context) -> dict[str, Any]:
        ws, wf = ctx.ws, ctx.wf
        key = self.key(ctx)
        out = ws.root / "ingest"
        files = [out / "texts.bin", out / "offsets.npy"]
        if not ctx.force and ws.is_done(self.name, key, files=files):
            return ws.stage_detail(self.name) | {"skipped": True}
        ws.mark(self.name, key, "running")
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
        total = sum(f.path.stat().st_size for f in inputs)
        n_docs = 0
        pos = 0
        offsets = [np.zeros(1, dtype=np.int64)]
        chunk: list[int] = []
        try:
            with ws.engine.begin() as conn, open(tmp / "texts.bin", "wb", buffering=1 << 22) as texts, \
                    bar("ingest", total, "bytes") as b:
                # a fresh ingest replaces every document and error row
                for t in (db.spans, db.cluster_members, db.clusters, db.documents, db.input_errors):
                    conn.execute(t.delete())
                doc_rows: list[tuple] = []
                err_rows: list[tuple] = [(src, None, why) for src, why in skipped]
                for inp in inputs:
                    for rec in read_records(inp, text_field, id_field, b.advance):
                        if rec.error is None:
                            data = rec.text.encode("utf-8")
                            if len(data) > limit:
                                rec.error = (f"document of {len(data)} bytes is over the {limit}-token limit that "
                                             f"run.memory_budget allows; raise the budget to keep it")
                        faults.point("ingest.row")
                        if rec.error is not None:
                            err_rows.append((rec.source, rec.row, rec.error))
                            continue
                        texts.write(data)
                        pos += len(data)
                        chunk.append(pos)
                        doc_rows.append((n_docs, rec.source, rec.row, json_ext_id(rec.ext_id), len(rec.text),
                                         len(data), "kept"))
                        n_docs += 1
                        if len(doc_rows) >= 50_000:
                            self._flush(conn, doc_rows, err_rows, offsets, chunk)
                self._flush(conn, doc_rows, err_rows, offsets, chunk)
        except OSError as e:  # the database's failures are not OSErrors: this is texts.bin
            raise note_path(e, tmp / "texts.bin")
        save_npy(tmp / "offsets.npy", np.concatenate(offsets))
        shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
        with ws.engine.connect() as c:
            n_err = c.exec_driver_sql("SELECT count(*) FROM input_errors").scalar()
        detail = {"documents": n_docs, "input_errors": n_err, "bytes": pos, "input_files": len(inputs)}
        ws.mark(self.name, key, "done", files=files, artifact=out, **detail)
        say(f"ingest: {n_docs} documents from {len(inputs)} file(s), {n_err} row(s) set aside in input_errors")
        return detail

    @staticmethod
    def _flush(conn, doc_rows, err_rows, offsets, chunk) -> None:
        db.bulk_insert(conn, db.documents, ["doc_id", "source", "source_row", "ext_id", "n_chars", "n_bytes",
                                            "status"], doc_rows)
        db.bulk_insert(conn, db.input_errors, ["source", "source_row", "error"], err_rows)
        offsets.append(np.asarray(chunk, dtype=np.int64))
        doc_rows.clear()
        err_rows.clear()
        chunk.clear()
