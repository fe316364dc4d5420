"""Output in the input's format: JSONL (plain, .gz, .zst) or Parquet, written atomically.

Kept rows whose text is unchanged are written as the very bytes they were read as (JSONL)
or the same values (Parquet); only the text field of cut rows changes. Everything goes to
`<output>.partial` first and is renamed into place by close(); a failed write (a full disk)
names that file, and abort() removes it.
"""
from __future__ import annotations

import base64
import datetime as _dt
import decimal
import gzip
import json
import os
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from .errors import SadedupError, note_path
from .readers import Record, detect


def _json_value(v: Any) -> Any:
    """Parquet values JSON has no type for: dates and times as ISO text, decimals as numbers,
    bytes as text (UTF-8, else base64)."""
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, _dt.timedelta):
        return v.total_seconds()
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(b).decode("ascii")
    raise TypeError(f"{type(v).__name__} has no JSON form")


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
        """Cleanup after a failure: never raises, removes the partial file."""
        self.tmp.unlink(missing_ok=True)

    def _row(self, rec: Record, text: str | None) -> dict:
        obj = dict(rec.obj) if rec.obj is not None else {"id": rec.ext_id}
        obj[self.text_field] = rec.text if text is None else text
        return obj


# stands for the text while the rest of a row is encoded (private-use code points)
_MARK = "\ue000sadedup:text\ue001"
_MARK_JSON = json.dumps(_MARK, ensure_ascii=False)


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
            line = self._encode(self._row(rec, text))
        try:
            self.f.write(line)
            self.f.write(b"\n")
        except OSError as e:
            raise note_path(e, self.tmp)
        self.rows += 1

    def _encode(self, row: dict) -> bytes:
        """json.dumps(row, ensure_ascii=False), byte for byte, but the text (most of the
        bytes) is escaped by orjson: the same escapes for every code point, 10x faster."""
        text = row.get(self.text_field)
        if not isinstance(text, str) or len(text) < 1024:
            return json.dumps(row, ensure_ascii=False, default=_json_value).encode("utf-8")
        head = json.dumps({**row, self.text_field: _MARK}, ensure_ascii=False, default=_json_value)
        i = head.find(_MARK_JSON)
        if i < 0 or head.find(_MARK_JSON, i + 1) >= 0:  # the marker inside another field
            return json.dumps(row, ensure_ascii=False, default=_json_value).encode("utf-8")
        return b"".join((head[:i].encode("utf-8"), orjson.dumps(text), head[i + len(_MARK_JSON):].encode("utf-8")))

    def close(self) -> None:
        try:
            self.f.close()
            if self._raw is not None:
                self._raw.close()
        except OSError as e:
            raise note_path(e, self.tmp)
        super().close()

    def abort(self) -> None:
        for f in (self.f, self._raw):
            try:
                if f is not None:
                    f.close()
            except Exception:
                pass  # a full disk fails the final flush too; the file goes anyway
        super().abort()


class ParquetWriter(Writer):
    BATCH = 8192

    def __init__(self, path: Path, text_field: str, schema: pa.Schema | None) -> None:
        super().__init__(path, text_field)
        self.schema = schema
        self.buf: list[dict] = []
        self.w: pq.ParquetWriter | None = None

    def write(self, rec: Record, text: str | None) -> None:
        self.buf.append(self._row(rec, text))
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
        try:
            if self.w is None:
                self.schema = table.schema
                self.w = pq.ParquetWriter(self.tmp, table.schema)
            self.w.write_table(table)
        except OSError as e:
            raise note_path(e, self.tmp)
        self.buf = []

    def close(self) -> None:
        self._flush()
        try:
            if self.w is None:
                schema = self.schema or pa.schema([("id", pa.string()), (self.text_field, pa.string())])
                self.w = pq.ParquetWriter(self.tmp, schema)
            self.w.close()
        except OSError as e:
            raise note_path(e, self.tmp)
        super().close()

    def abort(self) -> None:
        try:
            if self.w is not None:
                self.w.close()
        except Exception:
            pass
        super().abort()


def check_output(path: str | Path, inputs: list[str | Path] = ()) -> None:
    """Refuses, before any work, an output sadedup cannot write or must not: an unknown format,
    a missing folder, a folder, one of the inputs, a file inside an input folder."""
    path = Path(path)
    kind = detect(path)
    if kind is None or kind.format == "txt":
        raise SadedupError(f"output {path}: name it .jsonl, .jsonl.gz, .jsonl.zst or .parquet")
    if not path.parent.is_dir():
        raise SadedupError(f"output {path}: folder {path.parent} does not exist")
    if path.is_dir():
        raise SadedupError(f"output {path}: is a folder; name a file")
    real = path.resolve()
    for i in map(Path, inputs):
        if real == i.resolve():
            raise SadedupError(f"output {path} is one of the inputs; write it elsewhere")
        if i.is_dir() and real.is_relative_to(i.resolve()):
            raise SadedupError(f"output {path} is inside the input folder {i}; write it elsewhere")


def open_writer(path: Path, text_field: str, parquet_schema: pa.Schema | None = None) -> Writer:
    """A writer for the output path's format, named by its suffix."""
    check_output(path)
    kind = detect(Path(path))
    if kind.format == "parquet":
        return ParquetWriter(path, text_field, parquet_schema)
    return JsonlWriter(path, text_field, kind.compression)
