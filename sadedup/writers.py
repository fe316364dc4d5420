"""Output in the input's format: JSONL (plain, .gz, .zst) or Parquet, written atomically.

Kept rows whose text is unchanged are written as the very bytes they were read as (JSONL)
or the same values (Parquet); only the text field of cut rows changes.
"""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from .errors import SadedupError
from .readers import Record, detect


class Writer:
    def __init__(self, path: Path, text_field: str) -> None:
        self.path = Path(path)
        self.tmp = self.path.with_name(self.path.name + ".partial")
        self.text_field = text_field
        self.rows = 0

    def write(self, rec: Record, text: str | None) -> None:
        raise NotImplementedError

    def close(self) -> None:
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        self.tmp.unlink(missing_ok=True)


class JsonlWriter(Writer):
    def __init__(self, path: Path, text_field: str, compression: str | None) -> None:
        super().__init__(path, text_field)
        raw = open(self.tmp, "wb")
        if compression == "gzip":
            self.f = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0)
            self._raw = raw
        elif compression == "zstd":
            self.f = zstandard.ZstdCompressor(level=3).stream_writer(raw)
            self._raw = raw
        else:
            self.f, self._raw = raw, None

    def write(self, rec: Record, text: str | None) -> None:
        """text None: unchanged."""
        if text is None and rec.raw is not None:
            line = rec.raw
        else:
            obj = dict(rec.obj) if rec.obj is not None else {"id": rec.ext_id}
            obj[self.text_field] = rec.text if text is None else text
            line = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        self.f.write(line)
        self.f.write(b"\n")
        self.rows += 1

    def close(self) -> None:
        self.f.close()
        if self._raw is not None:
            self._raw.close()
        super().close()

    def abort(self) -> None:
        try:
            self.f.close()
        finally:
            super().abort()


class ParquetWriter(Writer):
    BATCH = 8192

    def __init__(self, path: Path, text_field: str, schema: pa.Schema | None) -> None:
        super().__init__(path, text_field)
        self.schema = schema
        self.buf: list[dict] = []
        self.w: pq.ParquetWriter | None = None

    def write(self, rec: Record, text: str | None) -> None:
        obj = dict(rec.obj) if rec.obj is not None else {"id": rec.ext_id}
        obj[self.text_field] = rec.text if text is None else text
        self.buf.append(obj)
        self.rows += 1
        if len(self.buf) >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        if not self.buf:
            return
        try:
            table = pa.Table.from_pylist(self.buf, schema=self.schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise SadedupError(f"output {self.path}: rows do not fit one Parquet schema ({e})") from None
        if self.w is None:
            self.schema = table.schema
            self.w = pq.ParquetWriter(self.tmp, table.schema)
        self.w.write_table(table)
        self.buf = []

    def close(self) -> None:
        self._flush()
        if self.w is None:
            schema = self.schema or pa.schema([("id", pa.string()), (self.text_field, pa.string())])
            self.w = pq.ParquetWriter(self.tmp, schema)
        self.w.close()
        super().close()

    def abort(self) -> None:
        if self.w is not None:
            self.w.close()
        super().abort()


def open_writer(path: Path, text_field: str, parquet_schema: pa.Schema | None = None) -> Writer:
    """A writer for the output path's format, named by its suffix."""
    kind = detect(Path(path))
    if kind is None or kind.format == "txt":
        raise SadedupError(f"output {path}: name it .jsonl, .jsonl.gz, .jsonl.zst or .parquet")
    if not Path(path).parent.exists():
        raise SadedupError(f"output {path}: folder {Path(path).parent} does not exist")
    if kind.format == "parquet":
        return ParquetWriter(path, text_field, parquet_schema)
    return JsonlWriter(path, text_field, kind.compression)
