"""The file formats sadedup reads and writes, each declared once, in FORMATS.

A format has the suffixes a file of it is named with, the compressions it may carry, the
function that reads its rows (in `readers`) and the writer that writes them (in `writers`),
or no writer when it is input only. Detection (`detect`), the lists of suffixes that
messages and help texts name (`listed`), `writers.check_output` and `writers.open_writer`
all derive from it. Readers and writers are named as "module:attribute" and looked up when
first used: those modules import this one.

Inside an input folder some names are not data even when their suffix is: a plain `.json`
file there is metadata (a Hugging Face folder's dataset_infos.json, dataset_info.json,
state.json), so it is skipped and recorded; named with --input it is read as JSONL.
Compressed `.json.gz` / `.json.zst` files are data (that is how C4 ships).

Parquet output needs one schema for all the rows: `output_schema` unifies the Parquet
inputs' schemas (int32 and int64 give int64, a column some files lack is nullable; the first
file's schema metadata stays), and refuses, naming the column and the two files, types no
promotion reconciles.
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pyarrow takes a fifth of a second to import: only the Parquet paths import it, where they run
    import pyarrow as pa

from .errors import SadedupError
from .locations import Url, as_path


@dataclass(frozen=True)
class Compression:
    name: str
    suffixes: tuple[str, ...]      # the first is the one messages name
    magics: tuple[bytes, ...]      # what a file of it starts with


COMPRESSIONS = (
    Compression("gzip", (".gz",), (b"\x1f\x8b",)),
    # a zstd frame, or a skippable frame (magic 0x184D2A50 to 0x184D2A5F, little-endian)
    Compression("zstd", (".zst", ".zstd"), (b"\x28\xb5\x2f\xfd",) + tuple(bytes([0x50 + i, 0x2A, 0x4D, 0x18])
                                                                         for i in range(16))),
)


@dataclass(frozen=True)
class Format:
    name: str                          # InputFile.format
    suffixes: tuple[str, ...]          # before any compression suffix; the first is the one messages name
    reader: str                        # "module:function": (inp, text_field, id_field, on_read, piece) -> Records
    writer: str | None = None          # "module:class": (path, text_field, compression, schema) -> Writer
    compressions: tuple[str, ...] = ()  # beside none
    pieces: bool = False               # uncompressed, it can be read in pieces cut at line starts
    metadata_suffixes: tuple[str, ...] = ()  # uncompressed, inside a folder: metadata, not data; never an output

    def read(self, *args, **kw):
        return _resolve(self.reader)(*args, **kw)

    def open_writer(self, path: Path, text_field: str, compression: str | None, schema: pa.Schema | None):
        return _resolve(self.writer)(path, text_field, compression, schema)


FORMATS = (
    Format("jsonl", (".jsonl", ".ndjson", ".json"), "sadedup.readers:_jsonl_records", "sadedup.writers:JsonlWriter",
           compressions=("gzip", "zstd"), pieces=True, metadata_suffixes=(".json",)),
    Format("parquet", (".parquet", ".pq"), "sadedup.readers:_parquet_records", "sadedup.writers:ParquetWriter"),
    Format("txt", (".txt",), "sadedup.readers:_txt_record"),
)
BY_NAME = {f.name: f for f in FORMATS}


def parquet_source(path):
    """What pyarrow opens: a local path as it is, an object behind a URL as a file."""
    return path.open("rb") if isinstance(path, Url) else path


def _resolve(ref: str):
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class InputFile:
    path: Path           # or a locations.Url: both answer open, stat, read_bytes, name
    format: str          # a Format's name: jsonl, parquet, txt
    compression: str | None

    @property
    def name(self) -> str:
        return str(self.path)


def _split(path: Path) -> tuple[str, str | None]:
    """(data suffix, compression) of a file name, lower case: ("", None) when it has none."""
    suffixes = [s.lower() for s in Path(as_path(path).name).suffixes]
    compression = None
    if suffixes:
        for c in COMPRESSIONS:
            if suffixes[-1] in c.suffixes:
                compression = c.name
                suffixes = suffixes[:-1]
                break
    return (suffixes[-1] if suffixes else ""), compression


def _lookup(path: Path) -> tuple[Format, str | None, str] | None:
    suffix, compression = _split(path)
    for f in FORMATS:
        if suffix in f.suffixes and (compression is None or compression in f.compressions):
            return f, compression, suffix
    return None


def detect(path: Path, in_folder: bool = False) -> InputFile | None:
    """The input a file name says it is (data.jsonl, data.jsonl.gz, data.jsonl.zst,
    data.parquet, doc.txt), or None. `in_folder`: the file was found inside an input folder,
    where a plain .json file is metadata, not rows."""
    found = _lookup(path)
    if found is None:
        return None
    f, compression, suffix = found
    if in_folder and compression is None and suffix in f.metadata_suffixes:
        return None
    return InputFile(as_path(path), f.name, compression)


def format_of(inp: InputFile) -> Format:
    return BY_NAME[inp.format]


def splittable(inp: InputFile) -> bool:
    """Can be read in pieces cut at line starts (see readers.line_pieces). Not an object
    behind a URL: finding the line starts reads it whole, once more over the network."""
    return format_of(inp).pieces and inp.compression is None and not isinstance(inp.path, Url)


def _names(output: bool) -> list[str]:
    out = []
    for f in FORMATS:
        if output and f.writer is None:
            continue
        out.append(f.suffixes[0])
        out += [f.suffixes[0] + c.suffixes[0] for c in COMPRESSIONS if c.name in f.compressions]
    return out


def listed(output: bool = False) -> str:
    """The suffixes to name a file with, for messages: ".jsonl, .jsonl.gz, .jsonl.zst, .parquet
    or .txt" (inputs), ".jsonl, .jsonl.gz, .jsonl.zst or .parquet" (outputs)."""
    names = _names(output)
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


def skip_reason(path: Path) -> str:
    """Why a file inside an input folder is not read (detect(path, in_folder=True) is None)."""
    found = _lookup(path)
    if found is not None and found[1] is None and found[2] in found[0].metadata_suffixes:
        return (f"a {found[2]} file inside a folder is taken for metadata: not read "
                f"(name it with --input to read its rows)")
    return f"unsupported file type {''.join(Path(path).suffixes) or '(none)'}: not read (use {listed()})"


def output_kind(path: str | Path) -> tuple[Format, str | None]:
    """The format and compression an output name asks for; refuses any other name."""
    found = _lookup(path)
    if found is None or found[0].writer is None or (found[1] is None and found[2] in found[0].metadata_suffixes):
        raise SadedupError(f"output {path}: name it {listed(output=True)}")
    return found[0], found[1]


def check_compressed(inp: InputFile) -> None:
    """A file named as compressed must start as its compression does (an empty file is an
    empty input): a plain file named .jsonl.gz is a misnamed file, not a row error."""
    if inp.compression is None:
        _check_not_compressed(inp)
        return
    c = next(c for c in COMPRESSIONS if c.name == inp.compression)
    try:
        with inp.path.open("rb") as f:
            head = f.read(max(4, *map(len, c.magics)))
    except OSError as e:
        raise SadedupError(f"input {inp.path}: {e.strerror or e} (cannot open the file)") from None
    if head and not any(head.startswith(m) or m.startswith(head) for m in c.magics):
        raise SadedupError(f"input {inp.path}: not a {c.name} file (it starts with {head!r}); "
                           f"name it for what it holds")


def _check_not_compressed(inp: InputFile) -> None:
    """A local text input (.jsonl, .txt) holding gzip or zstd data (`gzip -c a.jsonl > a.jsonl`)
    was read as text: every line an invalid-JSON row, a run of nothing that exits 0. Those
    magics (1f 8b, 28 b5 2f fd) are not UTF-8, so no text file starts with them: refused,
    naming the file. Remote objects are not opened for this (one more request each)."""
    if inp.format not in ("jsonl", "txt") or not isinstance(inp.path, Path):
        return
    try:
        with open(inp.path, "rb") as f:
            head = f.read(4)
    except OSError:
        return  # said where it is read
    for c in COMPRESSIONS:
        if head.startswith(c.magics[0]):
            raise SadedupError(f"input {inp.path}: {c.name}-compressed data in a file not named so; name it "
                               f"{inp.path.name}{c.suffixes[0]} (it starts with {head!r})")


def folder_without_data(folder: Path, skipped: list[tuple[str, str]]) -> SadedupError:
    names = sorted(os.path.relpath(p, os.path.abspath(folder)) for p, _ in skipped)
    shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    return SadedupError(f"input folder {folder}: no file in it is read ({len(names)} skipped: {shown}); "
                        f"use {listed()}")


# ---- Parquet output: one schema


def _decoded(t: pa.DataType) -> pa.DataType:
    import pyarrow as pa

    return t.value_type if pa.types.is_dictionary(t) else t


def _merge(a: pa.Field, b: pa.Field) -> pa.Field | None:
    """One field for both (pyarrow's permissive promotion; dictionary-encoded values as
    their values when the encodings differ), or None."""
    import pyarrow as pa

    for x, y in ((a, b), (a.with_type(_decoded(a.type)), b.with_type(_decoded(b.type)))):
        try:
            return pa.unify_schemas([pa.schema([x]), pa.schema([y])], promote_options="permissive").field(0)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            pass
    return None


def unify(schemas: Sequence[tuple[Any, pa.Schema]], conflict) -> pa.Schema | None:
    """One schema for all (fields in order of first appearance, the first schema's metadata;
    a field some schemas lack is nullable). `schemas` are (where, schema); on two types that
    do not merge, raises conflict(name, where it was, its type, where, the other type)."""
    fields: dict[str, pa.Field] = {}
    origin: dict[str, Any] = {}
    seen: dict[str, int] = {}
    metadata = None
    for i, (where, schema) in enumerate(schemas):
        if i == 0:
            metadata = schema.metadata
        for f in schema:
            if f.name not in fields:
                fields[f.name], origin[f.name], seen[f.name] = f, where, 1
                continue
            seen[f.name] += 1
            merged = _merge(fields[f.name], f)
            if merged is None:
                raise conflict(f.name, origin[f.name], fields[f.name].type, where, f.type)
            if merged.type != fields[f.name].type:
                origin[f.name] = where  # the type now is this one's
            fields[f.name] = merged
    if not fields:
        return None
    import pyarrow as pa

    n = len(schemas)
    return pa.schema([f if seen[f.name] == n else f.with_nullable(True) for f in fields.values()], metadata=metadata)


def output_schema(inputs: Sequence[InputFile], text_field: str | None = None) -> pa.Schema | None:
    """The schema Parquet output of these inputs is written with, as far as the Parquet
    inputs decide it (None without Parquet inputs; rows of other formats add their fields
    when they are written). Reads the files' footers only. Refuses, naming the column and two
    files, types that do not merge: a column that is text in one file and a number in
    another. With `text_field`, each file is also checked to have a text column."""
    from .readers import open_parquet

    schemas = []
    for inp in inputs:
        if inp.format != "parquet":
            continue
        if text_field is not None:
            schema = open_parquet(inp.path, text_field).schema_arrow
        else:
            try:
                import pyarrow.parquet as pq

                schema = pq.read_schema(parquet_source(inp.path))
            except PermissionError as e:
                raise SadedupError(f"input {inp.path}: {e.strerror or e} (cannot open the file)") from None
            except Exception as e:  # pyarrow raises several types for a bad file
                raise SadedupError(f"input {inp.path}: not a readable Parquet file ({e})") from None
        schemas.append((inp.path, schema))

    def conflict(name, a, ta, b, tb):
        return SadedupError(f"inputs {a} and {b}: column {name!r} is {ta} in the first and {tb} in the second; "
                            f"a Parquet output has one type per column (write .jsonl output instead)")

    return unify(schemas, conflict)


def check_output_schema(output: str | Path, inputs: Sequence[InputFile], text_field: str | None = None) -> None:
    """Before any work: Parquet output of Parquet inputs whose schemas do not merge is refused."""
    if output_kind(output)[0].name == "parquet":
        output_schema(inputs, text_field)


def parquet_codec(inputs: Sequence[InputFile], default: str = "snappy") -> str:
    """The compression codec Parquet output keeps: that of the first Parquet input's first
    column chunk (its footer only is read), or `default` when no input is Parquet."""
    import pyarrow.parquet as pq

    for inp in inputs:
        if inp.format != "parquet":
            continue
        md = pq.read_metadata(parquet_source(inp.path))
        if md.num_row_groups and md.num_columns:
            codec = md.row_group(0).column(0).compression.lower()
            return "none" if codec == "uncompressed" else codec
        return default
    return default
