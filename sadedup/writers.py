"""Output in the input's format: JSONL (plain, .gz, .zst) or Parquet, written atomically.

Kept rows whose text is unchanged are written as the very bytes they were read as (JSONL)
or the same values (Parquet); only the text field of cut rows changes. A cut JSONL row is
the line as it was read with only the text's value replaced (`splice_text`): numbers such as
1e400, NaN literals, escapes and lone surrogates in its other fields stay as they were. Rows
that were not JSON (Parquet, txt) are encoded as json.dumps does, but a float that JSON has
no number for (NaN, infinity) is written as null.

Parquet output has one schema for every row: the Parquet inputs' schemas unified
(formats.output_schema) and, for rows read as JSON or text, every field of every row
(RowSchema, a pass over the rows before they are written); Parquet batches are written as
Arrow batches cast to it. Everything goes to `<output>.partial` first and is renamed into
place by close(); a failed write (a full disk) names that file, and abort() removes it.
"""
from __future__ import annotations

import base64
import datetime as _dt
import decimal
import fnmatch
import functools
import gzip
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import zstandard

from . import formats
from .errors import SadedupError, note_path
from .locations import has_glob, is_url, without_file_scheme
from .readers import Record, expand_inputs

if TYPE_CHECKING:  # pyarrow takes a fifth of a second to import: only the Parquet paths import it, where they run
    import pyarrow as pa
    import pyarrow.parquet as pq


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


def _finite(v: Any) -> Any:
    """The value with every NaN or infinite float (nested too) as None."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


# ---- the text's value in a JSON line, found without decoding the rest

_WS = b" \t\n\r"
_SCALAR = re.compile(rb"-?(?:Infinity|(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|NaN|true|false|null")
_NESTED = re.compile(rb'["{}\[\]]')
_QUOTE, _BACKSLASH = 0x22, 0x5C


def _string_end(raw: bytes, i: int) -> int:
    """Where the JSON string starting at raw[i] (a quote) ends: the first quote after it not
    escaped by an odd run of backslashes (bytes.find: most of a line is its text)."""
    j = i + 1
    while True:
        k = raw.find(b'"', j)
        if k < 0:
            raise ValueError("unterminated string")
        b = k - 1
        while raw[b] == _BACKSLASH:
            b -= 1
        if (k - 1 - b) % 2 == 0:
            return k + 1
        j = k + 1


def _skip_value(raw: bytes, i: int) -> int:
    """Where the JSON value starting at raw[i] ends."""
    c = raw[i]
    if c == _QUOTE:
        return _string_end(raw, i)
    if c in b"{[":
        depth = 0
        while True:
            m = _NESTED.search(raw, i)
            c = raw[m.start()]
            if c == _QUOTE:
                i = _string_end(raw, m.start())
                continue
            depth += 1 if c in b"{[" else -1
            i = m.end()
            if depth == 0:
                return i
    return _SCALAR.match(raw, i).end()


def text_span(raw: bytes, field: str) -> tuple[int, int] | None:
    """The byte range of the value of top-level key `field` in a JSON object line that
    json.loads reads (escaped keys compared decoded; the last of repeated keys, as json.loads
    takes it), or None when the line is not such an object or has no such key."""
    plain = _key_bytes(field)
    span = None
    try:
        i = 0
        while raw[i] in _WS:
            i += 1
        if raw[i] != 0x7B:  # {
            return None
        i += 1
        while raw[i] in _WS:
            i += 1
        if raw[i] == 0x7D:  # }
            return None
        while True:
            if raw[i] != _QUOTE:
                return None
            k = _string_end(raw, i)
            key = raw[i:k]
            while raw[k] in _WS:
                k += 1
            if raw[k] != 0x3A:  # :
                return None
            start = k + 1
            while raw[start] in _WS:
                start += 1
            i = end = _skip_value(raw, start)
            if key == plain or (b"\\" in key and json.loads(key) == field):
                span = (start, end)
            while raw[i] in _WS:
                i += 1
            if raw[i] == 0x7D:
                return span
            if raw[i] != 0x2C:  # ,
                return None
            i += 1
            while raw[i] in _WS:
                i += 1
    except (AttributeError, IndexError, ValueError):  # not the JSON expected
        return None


@functools.lru_cache(maxsize=8)
def _key_bytes(field: str) -> bytes:
    return json.dumps(field, ensure_ascii=False).encode("utf-8")


def splice_text(raw: bytes, field: str, text: str) -> bytes | None:
    """The JSON line with the value of its text field replaced by `text` (encoded as
    json.dumps(text, ensure_ascii=False) encodes it) and every other byte as it was; None
    when the line has no such field."""
    span = text_span(raw, field)
    if span is None:
        return None
    return b"".join((raw[:span[0]], orjson.dumps(text), raw[span[1]:]))


class Writer:
    def __init__(self, path: Path, text_field: str) -> None:
        self.path = Path(path)
        self.tmp = self.path.with_name(self.path.name + ".partial")
        self.shown: str | Path = self.path  # the name errors give: the user's output, not a staged file
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
        return row_of(rec, self.text_field, text)


def row_of(rec: Record, text_field: str, text: str | None = None) -> dict:
    """The row a record is written as: its fields, the text `text` when given."""
    obj = dict(rec.obj) if rec.obj is not None else {"id": rec.ext_id}
    obj[text_field] = rec.text if text is None else text
    return obj


# stands for the text while the rest of a row is encoded (private-use code points)
_MARK = "\ue000sadedup:text\ue001"
_MARK_JSON = json.dumps(_MARK, ensure_ascii=False)


class JsonlWriter(Writer):
    def __init__(self, path: Path, text_field: str, compression: str | None = None,
                 schema: pa.Schema | None = None) -> None:
        super().__init__(path, text_field)
        raw = open(self.tmp, "wb", buffering=1 << 20)  # rows of a few kB: one system call per MB, not per row
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
        if rec.raw is not None and text is None:
            line = rec.raw
        elif rec.raw is None or (line := splice_text(rec.raw, self.text_field, text)) is None:
            line = self._encode(self._row(rec, text))
        try:
            self.f.write(line)
            self.f.write(b"\n")
        except OSError as e:
            raise note_path(e, self.tmp)
        self.rows += 1

    def write_lines(self, lines: memoryview, n: int) -> None:
        """n rows as read, each with its line feed (readers.jsonl_kept)."""
        try:
            self.f.write(lines)
        except OSError as e:
            raise note_path(e, self.tmp)
        self.rows += n

    def _encode(self, row: dict) -> bytes:
        """json.dumps(row, ensure_ascii=False), byte for byte, but the text (most of the
        bytes) is escaped by orjson: the same escapes for every code point, 10x faster.
        NaN and infinite floats are written as null (JSON has no such numbers)."""
        try:
            return self._dumps(row)
        except UnicodeEncodeError:  # a lone surrogate (json.loads reads them): written as its escape
            return json.dumps(_finite(row), default=_json_value, allow_nan=False).encode("utf-8")
        except ValueError:  # "Out of range float values are not JSON compliant"
            return self._encode(_finite(row))

    def _dumps(self, row: dict) -> bytes:
        text = row.get(self.text_field)
        if not isinstance(text, str) or len(text) < 1024:
            return json.dumps(row, ensure_ascii=False, default=_json_value, allow_nan=False).encode("utf-8")
        head = json.dumps({**row, self.text_field: _MARK}, ensure_ascii=False, default=_json_value, allow_nan=False)
        i = head.find(_MARK_JSON)
        if i < 0 or head.find(_MARK_JSON, i + 1) >= 0:  # the marker inside another field
            return json.dumps(row, ensure_ascii=False, default=_json_value, allow_nan=False).encode("utf-8")
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


class RowSchema:
    """The schema for Parquet output of rows read as JSON or text: every field of every row,
    in order of first appearance, after those of `start` (the Parquet inputs' schema, whose
    metadata it keeps). Rows are added one by one (a pass over them before they are written)
    and typed by Arrow a chunk at a time; ints and floats in one field give double. A field
    whose values have types no promotion reconciles (text in one row, a number in another)
    is refused, naming the field and the row."""

    CHUNK = 8192

    def __init__(self, output: str | Path, start: pa.Schema | None = None) -> None:
        self.output = output
        self.schema = start
        self.rows: list[tuple[dict, str, int]] = []

    def add(self, row: dict, source: str, n: int) -> None:
        self.rows.append((row, source, n))
        if len(self.rows) >= self.CHUNK:
            self._type()

    def result(self) -> pa.Schema | None:
        self._type()
        return self.schema

    def _type(self) -> None:
        import pyarrow as pa

        if not self.rows:
            return
        try:
            chunk = pa.schema(list(pa.array([r for r, _, _ in self.rows]).type))
            self.schema = chunk if self.schema is None else formats.unify(
                [(None, self.schema), (None, chunk)], lambda *a: _Conflict())
        except (pa.ArrowException, OverflowError, _Conflict):
            self._row_by_row()  # to name the field and the row
        self.rows = []

    def _row_by_row(self) -> None:
        import pyarrow as pa

        schema = self.schema
        for row, source, n in self.rows:
            try:
                typed = pa.schema(list(pa.array([row]).type))
            except (pa.ArrowException, OverflowError) as e:
                for k, v in row.items():
                    try:
                        pa.array([v])
                    except (pa.ArrowException, OverflowError) as e2:
                        raise SadedupError(f"output {self.output}: field {k!r} in row {n} of {source} has no Parquet "
                                           f"type ({e2}); write .jsonl output instead") from None
                raise SadedupError(f"output {self.output}: row {n} of {source} has no Parquet type ({e}); "
                                   f"write .jsonl output instead") from None

            def conflict(name, _a, was, _b, now):
                return SadedupError(f"output {self.output}: field {name!r} is {now} in row {n} of {source} but {was} "
                                    f"in the rows before it; a Parquet column has one type (write .jsonl output "
                                    f"instead)")

            schema = typed if schema is None else formats.unify([(None, schema), (None, typed)], conflict)
        self.schema = schema


class _Conflict(Exception):
    pass


def _conform(batch: pa.RecordBatch, schema: pa.Schema, output: Path) -> pa.Table:
    """The batch as a table of `schema`: its columns cast, in the schema's order, the
    schema's other columns null."""
    import pyarrow as pa

    names = batch.schema.names
    cols = []
    for f in schema:
        if f.name not in names:
            cols.append(pa.nulls(batch.num_rows, f.type))
            continue
        col = batch.column(names.index(f.name))
        if col.type != f.type:
            try:
                col = col.cast(f.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
                raise SadedupError(f"output {output}: column {f.name!r} of {col.type} cannot be written as "
                                   f"{f.type} ({e})") from None
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=schema)


def _with_texts(batch: pa.RecordBatch, text_field: str, texts: dict[int, str]) -> pa.RecordBatch:
    """The batch with the text of row i replaced by texts[i], in the column's own type."""
    import pyarrow as pa
    import pyarrow.compute as pc  # here: its import costs every command a tenth of a second

    i = batch.schema.get_field_index(text_field)
    col = batch.column(i)
    plain = col if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) else col.cast(pa.large_string())
    mask = np.zeros(len(col), dtype=bool)
    at = sorted(texts)
    mask[at] = True
    new = pc.replace_with_mask(plain, pa.array(mask), pa.array([texts[j] for j in at], plain.type))
    if new.type != col.type:
        new = new.cast(col.type)
    cols = batch.columns
    cols[i] = new
    return pa.RecordBatch.from_arrays(cols, schema=batch.schema)


class ParquetWriter(Writer):
    """Rows one by one (write: rows read as JSON or text, or Parquet rows as dicts) or Parquet
    batches whole (write_batch), all in one schema: give it, covering every row (see
    formats.output_schema and RowSchema); without one, the first rows written decide it.
    Row groups are of layout.row_group_rows rows (fewer when GROUP_BYTES of rows come first),
    in the order written."""

    BATCH = 8192              # rows given one by one become a table this many at a time
    GROUP_BYTES = 64 << 20    # a row group is written before its rows take more memory than this

    def __init__(self, path: Path, text_field: str, compression: str | None = None,
                 schema: pa.Schema | None = None) -> None:
        super().__init__(path, text_field)
        self.schema = schema
        self.buf: list[dict] = []          # rows given one by one, not yet a table
        self.pending: list[pa.Table] = []  # tables not yet written
        self.pending_rows = 0
        self.pending_bytes = 0
        self.layout = ParquetLayout()
        self.w: pq.ParquetWriter | None = None

    def write(self, rec: Record, text: str | None) -> None:
        self.buf.append(self._row(rec, text))
        self.rows += 1
        if len(self.buf) >= self.BATCH:
            self._table_of_rows()

    def write_batch(self, batch: pa.RecordBatch, texts: dict[int, str] | None = None) -> None:
        """Rows of a Parquet input as they are, but the text of row i is texts[i]."""
        self._table_of_rows()  # rows written one by one before come first
        if self.schema is None:
            self.schema = batch.schema
        if not batch.num_rows:
            return
        if texts:
            batch = _with_texts(batch, self.text_field, texts)
        self._pend(_conform(batch, self.schema, self.shown))
        self.rows += batch.num_rows

    def _table_of_rows(self) -> None:
        import pyarrow as pa

        if not self.buf:
            return
        if self.schema is None:
            rs = RowSchema(self.shown)
            for j, row in enumerate(self.buf):
                rs.add(row, "the rows written", j + 1)
            self.schema = rs.result()
        try:
            table = pa.Table.from_pylist(self.buf, schema=self.schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
            raise SadedupError(f"output {self.shown}: rows do not fit one Parquet schema ({e})") from None
        self.buf = []
        self._pend(table)

    def _pend(self, table: pa.Table) -> None:
        self.pending.append(table)
        self.pending_rows += table.num_rows
        self.pending_bytes += table.nbytes
        if self.pending_rows >= self.layout.row_group_rows or self.pending_bytes >= self.GROUP_BYTES:
            self._flush()

    def _flush(self) -> None:
        """Everything given so far, written."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._table_of_rows()
        if not self.pending:
            return
        table = self.pending[0] if len(self.pending) == 1 else pa.concat_tables(self.pending)
        self.pending, self.pending_rows, self.pending_bytes = [], 0, 0
        try:
            if self.w is None:
                self.w = pq.ParquetWriter(self.tmp, self.schema, compression=self.layout.codec)
            self.w.write_table(table, row_group_size=self.layout.row_group_rows)
        except OSError as e:
            raise note_path(e, self.tmp)

    def close(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._flush()
        try:
            if self.w is None:
                schema = self.schema or pa.schema([("id", pa.string()), (self.text_field, pa.string())])
                self.w = pq.ParquetWriter(self.tmp, schema, compression=self.layout.codec)
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


def check_output(path: str | Path, inputs: list[str | Path] = (), claimed: list[tuple[str, str]] = (),
                 name: str = "output") -> None:
    """Refuses, before any work, an output sadedup cannot write or must not: an unknown format,
    a missing folder, a folder, one of the inputs, a file inside an input folder, one of the
    `claimed` (path, what it is) files the work folder reads or writes besides (outputs.claimed),
    Parquet output of Parquet inputs whose schemas do not merge (formats.output_schema). `name`:
    how the messages call the file (the setting that names it)."""
    path = Path(path)
    fmt, _ = formats.output_kind(path)
    check_target(path, name)
    check_apart(path, inputs, claimed, name)
    if fmt.name == "parquet" and inputs:
        formats.output_schema(expand_inputs(list(inputs))[0])


def check_target(path: str | Path, name: str = "output", shown: str | Path | None = None) -> None:
    """Refuses a file to write (`name` says which; `shown`: as the user named it) whose folder
    is missing or is a file, or that is itself a folder: said before any work, not when the
    finished result is renamed into place."""
    path = Path(path)
    shown = path if shown is None else shown
    if not path.parent.is_dir():
        why = "is a file, not a folder" if path.parent.exists() else "does not exist"
        raise SadedupError(f"{name} {shown}: folder {path.parent} {why}")
    if path.is_dir():
        raise SadedupError(f"{name} {shown}: is a folder; name a file")


def check_outside(path: str | Path, workdir: str | Path, name: str = "output", shown: str | Path | None = None) -> None:
    """Refuses a file to write (`name` says which; `shown`: as the user named it, default
    `path`) inside the work folder: its files are sadedup's own, which a rerun replaces and
    --restart deletes."""
    if Path(path).resolve().is_relative_to(Path(workdir).resolve()):
        raise SadedupError(f"{name} {path if shown is None else shown} is inside the work folder {workdir}; "
                           f"write it elsewhere")


def check_apart(path: str | Path, inputs: list[str | Path] = (), claimed: list[tuple[str, str]] = (),
                name: str = "output") -> None:
    """Refuses a file to write (`name` says which) that is one of the inputs, matches an input
    glob or lies inside an input folder, or is one of the `claimed` (path, what it is) files
    (outputs.claimed). A local path is compared with the local ones, resolved; a URL with the
    URLs, as given (a trailing "/" aside): writing it would replace the rows being read."""
    remote = is_url(str(path))
    real = None if remote else Path(path).resolve()
    for i, what in [*((i, "") for i in inputs), *claimed]:
        i = without_file_scheme(str(i))
        if is_url(i) != remote:
            continue
        if remote:
            out, given = str(path).rstrip("/"), str(i).rstrip("/")
            if has_glob(given):
                same, inside = fnmatch.fnmatchcase(out, given), False
            else:
                same, inside = out == given, out.startswith(given + "/")
        else:
            local = Path(i)
            same = real == local.resolve()
            inside = not same and local.is_dir() and real.is_relative_to(local.resolve())
        if same:
            matches = f" (it matches {i})" if remote and has_glob(str(i)) else ""
            raise SadedupError(f"{name} {path} is {what or 'one of the inputs'}{matches}; write it elsewhere")
        if inside:
            shown = i if remote else local
            where = f"{shown}, {what}" if what else f"the input folder {shown}"
            raise SadedupError(f"{name} {path} is inside {where}; write it elsewhere")


@dataclass(frozen=True)
class ParquetLayout:
    """How Parquet output is laid out: the codec (the Parquet inputs' own, see
    formats.parquet_codec) and the rows per row group."""
    codec: str = "snappy"
    row_group_rows: int = 32768


def open_writer(path: Path, text_field: str, parquet_schema: pa.Schema | None = None,
                layout: ParquetLayout | None = None, shown: str | Path | None = None) -> Writer:
    """A writer for the output path's format, named by its suffix; its errors name `shown`
    (the output the file is staged for) when given."""
    check_output(path)
    fmt, compression = formats.output_kind(path)
    w = fmt.open_writer(Path(path), text_field, compression, parquet_schema)
    if layout is not None and isinstance(w, ParquetWriter):
        w.layout = layout
    if shown is not None:
        w.shown = shown
    return w
