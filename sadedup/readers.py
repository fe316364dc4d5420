"""Streaming input: JSONL (plain, .gz, .zst), Parquet and folders of .txt files.

Rows are read one line (or one Parquet batch) at a time: the corpus is never held in memory.
Each row comes out as a Record that either carries a text or says, in one line, why it is
not a document; the caller puts those in `input_errors`. Row numbers are 1-based lines of the
file (JSONL: blank lines are counted but skipped) or rows (Parquet).
"""
from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow.parquet as pq
import zstandard

from .errors import SadedupError

BOM = b"\xef\xbb\xbf"
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet",
           ".txt": "txt"}
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}


@dataclass(frozen=True)
class InputFile:
    path: Path
    format: str          # jsonl, parquet, txt
    compression: str | None

    @property
    def name(self) -> str:
        return str(self.path)


@dataclass
class Record:
    source: str
    row: int
    text: str | None = None
    ext_id: Any = None
    error: str | None = None
    raw: bytes | None = None       # the JSONL line as read (no BOM, no line end)
    obj: dict | None = None        # the parsed row


def detect(path: Path) -> InputFile | None:
    """Format from the file name: data.jsonl, data.jsonl.gz, data.jsonl.zst, data.parquet, doc.txt."""
    suffixes = [s.lower() for s in path.suffixes]
    compression = None
    if suffixes and suffixes[-1] in COMPRESSIONS:
        compression = COMPRESSIONS[suffixes[-1]]
        suffixes = suffixes[:-1]
    if not suffixes or suffixes[-1] not in FORMATS:
        return None
    fmt = FORMATS[suffixes[-1]]
    if fmt == "parquet" and compression:
        return None
    return InputFile(path, fmt, compression)


def expand_inputs(paths: list[str | Path]) -> tuple[list[InputFile], list[tuple[str, str]]]:
    """Files in the order given, a folder's files sorted by path.

    Returns the readable inputs and, for files inside folders that are no known format,
    (path, reason) pairs for `input_errors`. A named path that is missing or of an unknown
    format stops the run.
    """
    files: list[InputFile] = []
    skipped: list[tuple[str, str]] = []
    if not paths:
        raise SadedupError("no input given: pass --input PATH (a file or a folder)")
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file())
            for f in found:
                inp = detect(f)
                if inp is None:
                    skipped.append((str(f), f"unsupported file type {''.join(f.suffixes) or '(none)'} in folder {p}"))
                else:
                    files.append(inp)
        elif p.is_file():
            inp = detect(p)
            if inp is None:
                raise SadedupError(f"input {p}: unknown format (use .jsonl, .jsonl.gz, .jsonl.zst, .parquet or .txt)")
            files.append(inp)
        elif p.exists():
            raise SadedupError(f"input {p}: not a regular file or folder")
        else:
            raise SadedupError(f"input {p}: no such file or folder")
    for f in files:
        if not os.access(f.path, os.R_OK):
            raise SadedupError(f"input {f.path}: permission denied")
    return files, skipped


class _Counting(io.RawIOBase):
    """Counts bytes read from the underlying file, for progress on compressed input."""

    def __init__(self, f: BinaryIO, on_read) -> None:
        self.f, self.on_read = f, on_read

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = self.f.readinto(b)
        if n:
            self.on_read(n)
        return n

    def close(self) -> None:
        self.f.close()
        super().close()


def _open_binary(inp: InputFile, on_read) -> BinaryIO:
    raw = io.BufferedReader(_Counting(open(inp.path, "rb"), on_read), 1 << 20)
    if inp.compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if inp.compression == "zstd":
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        return io.BufferedReader(reader, 1 << 20)
    return raw


def parse_json_row(line: bytes, source: str, row: int, text_field: str, id_field: str) -> Record:
    rec = Record(source, row, raw=line)
    try:
        s = line.decode("utf-8")
    except UnicodeDecodeError as e:
        rec.error = f"invalid UTF-8 at byte {e.start + 1} of the line"
        return rec
    try:
        obj = json.loads(s)
    except json.JSONDecodeError as e:
        rec.error = f"invalid JSON: {e.msg} at column {e.colno}"
        return rec
    except RecursionError:
        rec.error = "invalid JSON: nested too deeply"
        return rec
    if not isinstance(obj, dict):
        rec.error = f"not a JSON object but {type(obj).__name__}"
        return rec
    rec.obj = obj
    return _with_text(rec, obj, text_field, id_field)


def _with_text(rec: Record, obj: dict, text_field: str, id_field: str) -> Record:
    if text_field not in obj:
        rec.error = f"missing text field {text_field!r}"
        return rec
    text = obj[text_field]
    if not isinstance(text, str):
        kind = "null" if text is None else type(text).__name__
        rec.error = f"text field {text_field!r} is {kind}, not a string"
        return rec
    bad = _surrogate_at(text)
    if bad is not None:
        rec.error = f"text has an unpaired surrogate at character {bad}"
        return rec
    rec.text = text
    rec.ext_id = obj.get(id_field)
    return rec


def _surrogate_at(text: str) -> int | None:
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as e:
        return e.start


def _jsonl_records(inp: InputFile, text_field: str, id_field: str, on_read) -> Iterator[Record]:
    source = inp.name
    row = 0
    try:
        with _open_binary(inp, on_read) as f:
            for line in f:
                row += 1
                if row == 1 and line.startswith(BOM):
                    line = line[len(BOM):]
                line = line.rstrip(b"\r\n")
                if not line.strip():
                    continue
                yield parse_json_row(line, source, row, text_field, id_field)
    except (EOFError, gzip.BadGzipFile, zlib.error, zstandard.ZstdError, OSError) as e:
        # A damaged tail: the rows before it stand, the rest cannot be read; say so in the database.
        yield Record(source, row + 1, error=f"file is truncated or corrupt after row {row}: {e}")


def _parquet_records(inp: InputFile, text_field: str, id_field: str, on_read) -> Iterator[Record]:
    source = inp.name
    try:
        pf = pq.ParquetFile(inp.path)
    except Exception as e:  # pyarrow raises several types for a bad file
        raise SadedupError(f"input {inp.path}: not a readable Parquet file ({e})") from None
    names = pf.schema_arrow.names
    if text_field not in names:
        raise SadedupError(f"input {inp.path}: no column {text_field!r} (columns: {', '.join(names)}); "
                           f"set input.text_field")
    row = 0
    size = os.path.getsize(inp.path)
    per_group = size // max(pf.num_row_groups, 1)
    for g in range(pf.num_row_groups):
        for batch in pf.iter_batches(batch_size=8192, row_groups=[g]):
            for obj in batch.to_pylist():
                row += 1
                yield _with_text(Record(source, row, obj=obj), obj, text_field, id_field)
        on_read(per_group)


def _txt_record(inp: InputFile, on_read) -> Iterator[Record]:
    data = inp.path.read_bytes()
    on_read(len(data))
    if data.startswith(BOM):
        data = data[len(BOM):]
    rec = Record(inp.name, 1, ext_id=inp.path.name)
    try:
        rec.text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        rec.error = f"invalid UTF-8 at byte {e.start + 1}"
    yield rec


def read_records(inp: InputFile, text_field: str, id_field: str, on_read=lambda n: None) -> Iterator[Record]:
    """Every row of one input file, in order."""
    if inp.format == "jsonl":
        return _jsonl_records(inp, text_field, id_field, on_read)
    if inp.format == "parquet":
        return _parquet_records(inp, text_field, id_field, on_read)
    return _txt_record(inp, on_read)


def json_ext_id(value: Any) -> Any:
    """The id as SQLite can hold it: strings and integers as they are, anything else as JSON."""
    if value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)
                                                    and -(1 << 63) <= value < (1 << 63)):
        return value
    if isinstance(value, float):
        return value
    return json.dumps(value, ensure_ascii=False)
