"""Streaming input: JSONL (plain, .gz, .zst), Parquet and folders of .txt files.

Rows are read one line (or one Parquet batch) at a time: the corpus is never held in memory.
Each row comes out as a Record that either carries a text or says, in one line, why it is
not a document; the caller puts those in `input_errors`. Row numbers are 1-based lines of the
file (JSONL: blank lines are counted but skipped) or rows (Parquet).

What is a row error and what stops the run:

- row errors (a Record with `error`): invalid JSON (a raw control character such as NUL
  included), a row that is not an object, invalid UTF-8, a missing or non-string text field
  (null in Parquet too), an unpaired surrogate; a compressed file that is cut short or
  damaged gives one error row, numbered after its last whole row, and its earlier rows stand;
- valid: empty or whitespace-only text, escaped NULs, any id (duplicates, objects), CRLF line
  ends, a UTF-8 byte-order mark at the start of a line (the file's, or a file glued to it);
- run errors (SadedupError, naming the file): a file that cannot be opened or read (permission,
  a failing disk), a Parquet file that is unreadable or has no text column, a file named as
  compressed that is not (a plain file named .jsonl.gz) or whose data is damaged before its
  first row, an input folder that cannot be listed or in which no file is read. Entries of
  an input folder that are not read (unknown type, a plain .json file: metadata such as a
  Hugging Face folder's dataset_infos.json, a link to a folder, a broken link) are returned
  by expand_inputs for `input_errors`. A file in which no row has the text field is found by
  the caller, with TextFieldSeen (the rows of one file may be read in several pieces).

Which suffixes are which format, and which reader reads it, is declared in `formats`.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson
import zstandard

from . import formats
from .errors import SadedupError
from .formats import InputFile, detect  # noqa: F401  (imported from here by other modules)
from .locations import Url, expand_glob, has_glob, hidden, is_url, list_folder, without_file_scheme

if TYPE_CHECKING:  # pyarrow takes a fifth of a second to import: only the Parquet paths import it, where they run
    import pyarrow as pa
    import pyarrow.parquet as pq

BOM = b"\xef\xbb\xbf"


@dataclass
class Record:
    source: str
    row: int
    text: str | None = None
    ext_id: Any = None
    error: str | None = None
    raw: bytes | None = None       # the JSONL line as read (no BOM, no line end)
    obj: dict | None = None        # the parsed row


def expand_inputs(paths: list[str | Path], leave_out: Callable[[str], bool] | None = None
                  ) -> tuple[list[InputFile], list[tuple[str, str]]]:
    """Files in the order given, a folder's files sorted by path. `leave_out`: local files
    of a folder or a glob, by absolute path, that are not listed at all (sadedup's own:
    outputs.written_by).

    Returns the readable inputs and, for entries inside folders that are not read (no known
    format, a plain .json file, a link to a folder, a broken link, not a regular file),
    (absolute path, reason) pairs for `input_errors`: nothing listed in a folder is skipped
    silently. Names starting with "." inside a folder are not listed, as a glob's `*` never
    matches them (locations.hidden_below). A named path that is missing or of an unknown
    format, any file or folder that cannot be read, a file named as compressed that is not,
    and a folder holding files but no data file stop the run.
    """
    files: list[InputFile] = []
    skipped: list[tuple[str, str]] = []
    if not paths:
        raise SadedupError("no input given: pass --input PATH (a file or a folder)")
    for given in map(without_file_scheme, paths):
        if is_url(given) or (has_glob(given) and not os.path.lexists(given)):
            try:
                files += _expand_pattern(str(given), skipped, leave_out)
            except SadedupError as e:
                said = str(e)
                raise SadedupError(said if said.startswith("input ") else f"input {said}") from None
            continue
        p = Path(given)
        if p.is_dir():
            found, odd = _walk(p)
            if leave_out is not None:
                found = [f for f in found if not leave_out(os.path.abspath(f))]
                odd = [o for o in odd if not leave_out(o[0])]
            here = []
            for f in found:
                inp = detect(f, in_folder=True)
                if inp is None:
                    odd.append((os.path.abspath(f), formats.skip_reason(f)))
                else:
                    here.append(inp)
            if not here and odd:  # a folder of other files (datasets' save_to_disk: .arrow): not a run over nothing
                raise formats.folder_without_data(p, odd)
            files += here
            skipped.extend(odd)
        elif p.is_file():
            inp = detect(p)
            if inp is None:
                raise SadedupError(f"input {p}: unknown format (use {formats.listed()})")
            files.append(inp)
        elif p.exists():
            raise SadedupError(f"input {p}: not a regular file or folder")
        elif p.is_symlink():
            raise SadedupError(f"input {p}: a broken link (its target does not exist)")
        else:
            raise SadedupError(f"input {p}: no such file or folder")
    seen: dict[Path, Path] = {}
    for f in files:
        if not isinstance(f.path, Url) and not os.access(f.path, os.R_OK):
            raise SadedupError(f"input {f.path}: permission denied (cannot read the file)")
        real = f.path.resolve()
        if real in seen:  # its rows would be documents twice, under the same file and row
            also = "" if seen[real] == f.path else f" (also as {seen[real]})"
            raise SadedupError(f"input {f.path} is given twice{also}; give each file once")
        seen[real] = f.path
        formats.check_compressed(f)
    skipped.sort()
    return files, skipped


def _expand_pattern(given: str, skipped: list[tuple[str, str]],
                    leave_out: Callable[[str], bool] | None = None) -> list[InputFile]:
    """The inputs a glob (local or remote), a URL of an object or a URL of a folder names, in
    path order. Files of a folder or a glob that are not of a known format go to `skipped`
    (they are named in input_errors, as for a local folder); a pattern that matches nothing
    stops the run."""
    if has_glob(given):
        found, what = expand_glob(given), "glob"
        if leave_out is not None:
            found = [f for f in found if isinstance(f, Url) or not leave_out(os.path.abspath(f))]
        if not found:
            raise SadedupError(f"input {given}: the pattern matches no file")
    else:
        url = Url(given)
        if url.is_file():
            inp = detect(url)
            if inp is None:
                raise SadedupError(f"input {given}: unknown format (use {formats.listed()})")
            return [inp]
        if not url.is_dir():
            raise SadedupError(f"input {given}: no such object or folder")
        found, what = list_folder(url), "folder"
    here, odd = [], []
    for f in found:
        inp = detect(f, in_folder=True)
        if inp is None:  # a local one by its absolute path, as a folder's are (and as listed again later)
            odd.append((str(f) if isinstance(f, Url) else os.path.abspath(f), formats.skip_reason(Path(f.name))))
        else:
            here.append(inp)
    if not here:
        raise SadedupError(f"input {given}: the {what} holds no file to read (use {formats.listed()})")
    skipped.extend(odd)
    return here


def _walk(folder: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """Every regular file under `folder` (links to files followed), sorted by path; and the
    entries that are not read, with why. Hidden entries (locations.hidden) are not listed at
    all. An unreadable folder stops the run."""
    found: list[Path] = []
    odd: list[tuple[str, str]] = []

    def fail(e: OSError) -> None:
        raise SadedupError(f"input folder {e.filename}: {e.strerror or e} (cannot list it)")

    for root, dirs, names in os.walk(folder, onerror=fail):
        top = Path(root)
        dirs[:] = [d for d in dirs if not hidden(d)]
        names = [n for n in names if not hidden(n)]
        for d in list(dirs):
            if (top / d).is_symlink():
                dirs.remove(d)
                odd.append((os.path.abspath(top / d), "a link to a folder: not followed "
                                                      "(give the folder as its own --input)"))
        for n in names:
            f = top / n
            if f.is_file():
                found.append(f)
            elif f.is_symlink() and not f.exists():
                odd.append((os.path.abspath(f), "a broken link: not read"))
            else:
                odd.append((os.path.abspath(f), "not a regular file: not read"))
    return sorted(found), odd


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


class _ZstdRaw(io.RawIOBase):
    """Zstandard frames, one after another, decompressed as a raw stream.

    Unlike zstandard's stream_reader, a file that ends inside a frame is an error (EOFError),
    not a quiet end of data. Input is fed in small pieces, so a highly compressible frame
    never expands into more than a few hundred megabytes at once.
    """

    CHUNK = 1 << 13

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.dctx = zstandard.ZstdDecompressor()
        self.obj = None
        self.pending = b""
        self.out = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while not len(self.out):
            data, self.pending = self.pending or self.f.read(self.CHUNK), b""
            if not data:
                if self.obj is not None and not self.obj.eof:
                    raise EOFError("Compressed file ended before the end-of-frame marker was reached")
                return 0
            if self.obj is None or self.obj.eof:
                self.obj = self.dctx.decompressobj()
            self.out = memoryview(self.obj.decompress(data))
            if self.obj.eof:
                self.pending = self.obj.unused_data
        n = min(len(b), len(self.out))
        b[:n] = self.out[:n]
        self.out = self.out[n:]
        return n

    def close(self) -> None:
        self.f.close()
        super().close()


def _open_binary(inp: InputFile, on_read, start: int = 0) -> BinaryIO:
    try:
        f = inp.path.open("rb")
        if start:
            f.seek(start)
    except OSError as e:
        raise SadedupError(f"input {inp.path}: {e.strerror or e} (cannot open the file)") from None
    raw = io.BufferedReader(_Counting(f, on_read), 1 << 20)
    if inp.compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if inp.compression == "zstd":
        return io.BufferedReader(_ZstdRaw(raw), 1 << 20)
    return raw


def parse_json_row(line: bytes, source: str, row: int, text_field: str, id_field: str) -> Record:
    rec = Record(source, row, raw=line)
    try:
        obj = orjson.loads(line)
        strict = not _may_hold_big_int(obj)
    except orjson.JSONDecodeError:
        strict = False
    if not strict:
        # json.loads accepts what JSON allows beyond orjson (NaN, lone surrogates), keeps
        # integers of any size exact and words the errors
        obj = _parse_json_lenient(line, rec)
        if rec.error is not None:
            return rec
    if not isinstance(obj, dict):
        rec.error = f"not a JSON object but {'null' if obj is None else type(obj).__name__}"
        return rec
    rec.obj = obj
    # orjson's strings are valid UTF-8 already; json's may hold unpaired surrogates
    return _with_text(rec, obj, text_field, id_field, check_surrogates=not strict)


def _may_hold_big_int(obj: Any) -> bool:
    """orjson reads an integer beyond 64 bits as a float: a row with a float or a nested
    value anywhere is parsed again by json to keep such numbers exact."""
    if not isinstance(obj, dict):
        return False
    return not _LOSSY.isdisjoint(map(type, obj.values()))  # a loop in C: it runs on every row


_LOSSY = frozenset((float, dict, list))


def _parse_json_lenient(line: bytes, rec: Record) -> Any:
    """The parsed row, or None with rec.error saying why not."""
    try:
        s = line.decode("utf-8")
    except UnicodeDecodeError as e:
        rec.error = f"invalid UTF-8 at byte {e.start + 1} of the line"
        return None
    try:
        return json.loads(s)
    except json.JSONDecodeError as e:
        # json's messages name a position themselves ("Invalid control character at")
        msg = e.msg[: -len(" at")] if e.msg.endswith(" at") else e.msg
        rec.error = f"invalid JSON: {msg} at column {e.colno}"
    except RecursionError:
        rec.error = "invalid JSON: nested too deeply"
    return None


def _with_text(rec: Record, obj: dict, text_field: str, id_field: str, check_surrogates: bool = True) -> Record:
    if text_field not in obj:
        rec.error = f"missing text field {text_field!r}"
        return rec
    text = obj[text_field]
    if not isinstance(text, str):
        kind = "null" if text is None else type(text).__name__
        rec.error = f"text field {text_field!r} is {kind}, not a string"
        return rec
    bad = _surrogate_at(text) if check_surrogates else None
    if bad is not None:
        rec.error = f"text has an unpaired surrogate at character {bad}"
        return rec
    ext_id = obj.get(id_field)
    if check_surrogates and ext_id is not None and not isinstance(ext_id, (int, float, bool)):
        as_stored = json_ext_id(ext_id)  # what the database would hold: it takes UTF-8 only
        bad = _surrogate_at(as_stored) if isinstance(as_stored, str) else None
        if bad is not None:
            rec.error = f"id field {id_field!r} has an unpaired surrogate at character {bad}"
            return rec
    rec.text = text
    rec.ext_id = ext_id
    return rec


def _surrogate_at(text: str) -> int | None:
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as e:
        return e.start


def _jsonl_records(inp: InputFile, text_field: str, id_field: str, on_read,
                   piece: tuple[int, int, int] | None = None) -> Iterator[Record]:
    return jsonl_lines(inp, on_read, piece, lambda line, source, row: parse_json_row(line, source, row, text_field,
                                                                                      id_field))


def _unparsed(line: bytes, source: str, row: int) -> Record:
    return Record(source, row, raw=line)


def jsonl_lines(inp: InputFile, on_read=lambda n: None, piece: tuple[int, int, int] | None = None,
                parse: Callable[[bytes, str, int], Record] = _unparsed) -> Iterator[Record]:
    """The rows of a JSONL input (or of one piece of it, as `read_records` takes it), each
    parse(line, source, row) (the line without BOM or line end); by default as read, not
    parsed, a Record with only `raw`: export copies kept rows so without decoding them. A
    compressed file cut short or damaged gives one error Record after its last whole row."""
    source = inp.name
    row, at, end = 0, 0, None
    if piece is not None:  # (start, end, rows before start): start and end are line starts
        at, end, row = piece
    f = _open_binary(inp, on_read, at)
    try:
        with f:
            # a compressed stream line by line: the rows before a damaged spot are all given
            lines = _split_lines(f, None if end is None else end - at) if inp.compression is None else f
            for line in lines:
                row += 1
                if line.startswith(BOM):  # the file's first line, or a file concatenated to another
                    line = line[len(BOM):]
                if line.endswith((b"\n", b"\r")):
                    line = line.rstrip(b"\r\n")
                if not line or line.isspace():  # what strip() would empty, without its copy
                    continue
                yield parse(line, source, row)
    except EOFError:
        # A cut-off tail: the rows before it stand, the rest cannot be read; say so in the database.
        yield Record(source, row + 1, error=f"file is truncated after row {row}: the compressed data ends early, "
                                            f"so the rest of the file cannot be read")
    except (gzip.BadGzipFile, zlib.error, zstandard.ZstdError) as e:
        if row == 0:  # nothing of it is data: the file's problem, as an unreadable Parquet file is
            raise SadedupError(f"input {inp.path}: not a readable {inp.compression} file ({e}): "
                               f"no row of it can be read") from None
        yield Record(source, row + 1, error=f"file is corrupt after row {row} ({e}): "
                                            f"the rest of the file cannot be read")
    except OSError as e:  # the disk, not the data: a rerun may read it
        raise SadedupError(f"input {inp.path}: {e.strerror or e} while reading after row {row}") from None


_BLOCK = 1 << 22


def _line_blocks(read: Callable[[int], bytes], size: int | None) -> Iterator[tuple[bytes, int, int]]:
    """The next `size` bytes of a file (all of it: None) as (buf, a, b): buf[a:b] is whole
    lines, each with its line feed, in file order, read `_BLOCK` bytes at a time with no copy
    of a block (only a line that spans blocks is joined). buf[:a] is then the tail of the line
    just given (a > 0 only then) and buf[b:] holds no line feed. A last line without a line
    feed is given with one; the empty rest after a final line feed is nothing."""
    rest: list[bytes] = []  # the start of a line longer than what is read so far
    while True:
        block = read(_BLOCK if size is None else min(_BLOCK, size))
        if not block:
            if rest:
                rest.append(b"\n")
                tail = b"".join(rest)
                yield tail, 0, len(tail)
            return
        if size is not None:
            size -= len(block)
        a = 0
        if rest:
            i = block.find(b"\n")
            if i < 0:
                rest.append(block)
                continue
            rest.append(block[:i + 1])
            head, rest = b"".join(rest), []
            yield head, 0, len(head)
            a = i + 1
        b = block.rfind(b"\n") + 1
        if b > a:
            yield block, a, b
        if len(block) > max(a, b):
            rest.append(block[max(a, b):])


def _split_lines(f: BinaryIO, size: int | None) -> Iterator[bytes]:
    """The lines of the next `size` bytes of f (all of it: None), without their line feed:
    one copy of each line instead of readline's and rstrip's."""
    for buf, a, b in _line_blocks(f.read, size):
        # buf.split gives buf[:a] (one line feed there at most, at a - 1) as its first part
        # and buf[b:] (none) as its last: both dropped, without slicing the block itself
        yield from buf.split(b"\n")[1 if a else 0:-1]


def jsonl_kept(inp: InputFile, rows: Any, kept: Any, write: Callable[[memoryview, int], None], on_read=lambda n: None,
               piece: tuple[int, int, int] | None = None) -> tuple[int, int]:
    """The lines of an uncompressed JSONL input (or of one piece, as `read_records` takes it)
    that documents come from: rows (their row numbers, ascending; int64) each matched in turn
    to its line, those with kept[k] != 0 handed to `write` as read, as jsonl_lines gives them
    and each with a line feed, a block of lines at a time (with how many lines) (native/jsonl.c: export's copy of
    kept rows without a Python object per line). Returns (documents matched, lines written);
    fewer documents than rows when the input lost rows since they were read."""
    from . import native  # numpy and the C module: reading rows needs neither, only this copy

    row = 0 if piece is None else piece[2]
    at = lines = 0
    out = bytearray(_BLOCK + 1)
    for buf, a, b in _uncompressed_blocks(inp, on_read, piece, lambda: row):
        if len(out) < b - a:
            out = bytearray(b - a)
        n, row, at, w = native.jsonl_kept(buf, a, b, row, rows, kept, at, out)
        lines += w
        with memoryview(out) as mv:
            write(mv[:n], w)
    return at, lines


def _uncompressed_blocks(inp: InputFile, on_read, piece: tuple[int, int, int] | None,
                         row: Callable[[], int]) -> Iterator[tuple[bytes, int, int]]:
    """_line_blocks of an uncompressed JSONL input (or of one piece: (start, end, rows before
    start), start and end line starts), for the native readers; a read error names the file
    and the row reached (`row()`, the reader's count)."""
    if inp.compression is not None:
        raise ValueError("the native JSONL readers read uncompressed JSONL only")
    start, size = (0, None) if piece is None else (piece[0], piece[1] - piece[0])
    with _open_binary(inp, on_read, start) as f:
        def read(n: int) -> bytes:
            try:
                return f.read(n)
            except OSError as e:  # the disk, not the data: a rerun may read it (a write error is the output's)
                raise SadedupError(f"input {inp.path}: {e.strerror or e} while reading after row {row()}") from None

        yield from _line_blocks(read, size)


def jsonl_documents(inp: InputFile, text_field: str, id_field: str, limit: int, on_read=lambda n: None,
                    piece: tuple[int, int, int] | None = None) -> Iterator[Record | tuple[memoryview, list[tuple]]]:
    """The rows of an uncompressed JSONL input (or of one piece, as `read_records` takes it),
    as ingest takes them: runs of documents read by native/jsonl_docs.c, each run as (its
    texts' UTF-8 one after another, (row, ext_id as json_ext_id gives it, characters, bytes)
    per document), the texts valid until the next item is asked for; and every other row as
    the Record parse_json_row makes of it (an error, a row of a kind only Python reads, a text
    over `limit` bytes). The same rows, texts and ids as read_records gives, a block of lines
    at a time instead of a Python object per row."""
    from . import native  # numpy and the C module, as jsonl_kept

    row = 0 if piece is None else piece[2]
    source, tf, idf = inp.name, text_field.encode("utf-8"), id_field.encode("utf-8")
    out = ids = bytearray()
    for buf, a, b in _uncompressed_blocks(inp, on_read, piece, lambda: row):
        if len(out) < b - a:  # new buffers, not resized ones: the last run's texts may still be held
            out, ids = bytearray(b - a), bytearray(b - a)
        while a < b:
            a, row, n, docs, bad = native.jsonl_docs(buf, a, b, row, tf, idf, limit, out, ids)
            if docs:
                yield memoryview(out)[:n], docs
            if bad is not None:
                yield parse_json_row(buf[bad[0]:bad[1]], source, row, text_field, id_field)


def open_parquet(path: Path, text_field: str) -> pq.ParquetFile:
    """A Parquet input, checked to be readable and to have the text column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(formats.parquet_source(path))
    except SadedupError:
        raise
    except PermissionError as e:
        raise SadedupError(f"input {path}: {e.strerror or e} (cannot open the file)") from None
    except Exception as e:  # pyarrow raises several types for a bad file
        raise SadedupError(f"input {path}: not a readable Parquet file ({e})") from None
    names = pf.schema_arrow.names
    if text_field not in names:
        raise SadedupError(f"input {path}: no column {text_field!r} (columns: {', '.join(names)}); "
                           f"set input.text_field")
    typ = pf.schema_arrow.field(text_field).type
    value = typ.value_type if pa.types.is_dictionary(typ) else typ
    is_view = getattr(pa.types, "is_string_view", lambda t: False)
    if not (pa.types.is_string(value) or pa.types.is_large_string(value) or is_view(value)
            or pa.types.is_null(value)):
        # every row would be an error: the wrong column, not bad rows
        raise SadedupError(f"input {path}: column {text_field!r} holds {typ}, not text; set input.text_field")
    return pf


def parquet_batches(inp: InputFile, text_field: str, on_read=lambda n: None, corrupt=None
                    ) -> Iterator[tuple[int, pa.RecordBatch]]:
    """A Parquet input's rows as Arrow batches: (rows before the batch, batch). A file that
    is corrupt part way ends early: corrupt(rows read, error) is called, if given."""
    import pyarrow as pa

    pf = open_parquet(inp.path, text_field)
    row = 0
    size = inp.path.stat().st_size
    per_group = size // max(pf.num_row_groups, 1)
    try:
        for g in range(pf.num_row_groups):
            for batch in pf.iter_batches(batch_size=8192, row_groups=[g]):
                yield row, batch
                row += batch.num_rows
            on_read(per_group)
    except (pa.ArrowException, OSError) as e:
        if corrupt is not None:
            corrupt(row, e)


def _parquet_records(inp: InputFile, text_field: str, id_field: str, on_read, piece=None) -> Iterator[Record]:
    source = inp.name
    bad = []
    for row, batch in parquet_batches(inp, text_field, on_read, lambda n, e: bad.append((n, e))):
        for obj in batch.to_pylist():
            row += 1
            yield _with_text(Record(source, row, obj=obj), obj, text_field, id_field)
    for row, e in bad:
        yield Record(source, row + 1, error=f"file is corrupt after row {row} ({e}): "
                                            f"the rest of the file cannot be read")


def _txt_record(inp: InputFile, text_field: str, id_field: str, on_read, piece=None) -> Iterator[Record]:
    try:
        data = inp.path.read_bytes()
    except OSError as e:
        raise SadedupError(f"input {inp.path}: {e.strerror or e} (cannot read the file)") from None
    on_read(len(data))
    if data.startswith(BOM):
        data = data[len(BOM):]
    rec = Record(inp.name, 1, ext_id=inp.path.name, obj={id_field: inp.path.name})
    try:
        rec.text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        rec.error = f"invalid UTF-8 at byte {e.start + 1}"
    yield rec


def read_records(inp: InputFile, text_field: str, id_field: str, on_read=lambda n: None,
                 piece: tuple[int, int, int] | None = None) -> Iterator[Record]:
    """Every row of one input file, in order; or, for uncompressed JSONL, of one piece of it:
    (start, end, rows before start), the rows that start in bytes [start, end), which must
    be line starts (see `line_pieces`)."""
    if piece is not None and not formats.splittable(inp):
        raise ValueError("only uncompressed JSONL can be read in pieces")
    return formats.format_of(inp).read(inp, text_field, id_field, on_read, piece)


class TextFieldSeen:
    """Whether any row of an input had the text field, and if none did, the fields its rows
    had: an input in which no row has it was read with the wrong input.text_field. Pieces of
    one file are counted apart and merged (`update`); stops looking once the field is found,
    so `if not seen.found: seen.add(rec)` costs one attribute test per row after that."""

    MAX_FIELDS = 20  # named in the message; the rest are counted

    def __init__(self, text_field: str) -> None:
        self.text_field = text_field
        self.found = False
        self.objects = 0              # rows that are JSON objects (or Parquet or txt rows)
        self.fields: dict[str, None] = {}  # in order of first appearance
        self.more = False

    def add(self, rec: Record) -> None:
        if self.found or rec.obj is None:
            return
        if rec.error is None or self.text_field in rec.obj:
            self.found = True
            return
        self.objects += 1
        if len(self.fields) < self.MAX_FIELDS:
            for k in rec.obj:
                if k not in self.fields:
                    if len(self.fields) == self.MAX_FIELDS:
                        self.more = True
                        break
                    self.fields[k] = None
        elif not self.more:
            self.more = any(k not in self.fields for k in rec.obj)

    def update(self, other: TextFieldSeen) -> None:
        self.found = self.found or other.found
        self.objects += other.objects
        for k in other.fields:
            if k not in self.fields and len(self.fields) < self.MAX_FIELDS:
                self.fields[k] = None
            elif k not in self.fields:
                self.more = True
        self.more = self.more or other.more

    def check(self, source: str) -> None:
        """Raises when rows were read and none had the text field (no rows: an empty input)."""
        if self.found or not self.objects:
            return
        seen = ", ".join(self.fields) + (", ..." if self.more else "") if self.fields else "none"
        raise SadedupError(f"input {source}: no row has the text field {self.text_field!r} (fields seen: {seen}); "
                           f"set input.text_field")


PIECE_BYTES = 16 << 20  # an input smaller than this is read in one piece
MAX_PIECE_BYTES = 256 << 20  # nor is a piece larger than this, where it can be cut


def input_pieces(inputs: list[InputFile], workers: int, piece_bytes: int = PIECE_BYTES
                 ) -> list[tuple[InputFile, tuple[int, int, int] | None, int]]:
    """The inputs as pieces to read in parallel, in order: (input, lines, bytes). An
    uncompressed JSONL file is cut at line starts (`lines` as `read_records` takes them):
    with more than one worker into pieces of at least `piece_bytes`, 4 per worker, and in
    any case into pieces of at most MAX_PIECE_BYTES. Any other input is one piece (lines
    None)."""
    out = []
    for inp in inputs:
        size = inp.path.stat().st_size
        n = max(min(-(-size // piece_bytes), 4 * workers) if workers > 1 else 1, -(-size // MAX_PIECE_BYTES))
        if n > 1 and formats.splittable(inp):
            out += [(inp, lines, lines[1] - lines[0]) for lines in line_pieces(inp, n)]
        else:
            out.append((inp, None, size))
    return out


def line_pieces(inp: InputFile, pieces: int) -> list[tuple[int, int, int]]:
    """About `pieces` byte ranges of an uncompressed JSONL file, cut at line starts, each with
    the number of rows before it: (start, end, rows before start), for `read_records`. Rows
    are counted as the reader counts them, one per line feed."""
    size = inp.path.stat().st_size
    cuts = [0]
    with open(inp.path, "rb") as f:
        for i in range(1, max(pieces, 1)):
            f.seek(max(i * size // pieces - 1, cuts[-1]))
            f.readline()  # to the end of the line the guess fell in
            at = f.tell()
            if at >= size:
                break
            if at > cuts[-1]:
                cuts.append(at)
        cuts.append(size)
        out, rows = [], 0
        for a, b in zip(cuts[:-1], cuts[1:]):
            out.append((a, b, rows))
            f.seek(a)
            left = b - a
            while left:
                chunk = f.read(min(left, 1 << 24))
                if not chunk:
                    break
                rows += chunk.count(b"\n")
                left -= len(chunk)
    return out


def json_ext_id(value: Any) -> Any:
    """The id as SQLite can hold it: strings and integers as they are, anything else as JSON."""
    if value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)
                                                    and -(1 << 63) <= value < (1 << 63)):
        return value
    if isinstance(value, float):
        return value
    return json.dumps(value, ensure_ascii=False)
