"""Bad input through the real `sadedup` command on real files (issue 5, item 4).

Row-level problems go to `input_errors` and the run goes on; each test asserts the exact
`input_errors` rows, that every input row is in `documents` or `input_errors` exactly once,
and that every other row is in the output, byte for byte. Run-level problems stop the run
with a non-zero exit and one exact line on stderr that names the file, and no traceback.

The documents are distinct random word sequences, so no stage removes anything from them
and every valid row must come out unchanged.
"""
from __future__ import annotations

import gzip
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from helpers import db_rows, read_jsonl

from sadedup.config import load_workflow
from sadedup.stages.sizing import max_document_tokens

# --workers 1: these runs are a few documents, and a pool of two would cost more than the run
# (two processes importing sadedup, ~2.5 s of CPU a command); the pool itself is exercised by
# test_cli's piece tests, test_substring_semantics, test_sequences' interrupts, test_dask and
# test_conventions' worker count
FAST = ["--set", "substring.min_length=50", "--workers", "1"]

_rng = random.Random(2024)
_WORDS = ["".join(_rng.choice("abcdefghijklmnop") for _ in range(6)) for _ in range(3000)]


def texts(n: int, seed: int = 0, words: int = 30) -> list[str]:
    """Distinct documents of random words: no exact, near or 50-byte repeat among them."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(words)) for _ in range(n)]


def line(i, text) -> bytes:
    return json.dumps({"id": i, "text": text}, ensure_ascii=False).encode("utf-8")


def write_lines(path: Path, lines: list[bytes], sep: bytes = b"\n") -> Path:
    path.write_bytes(sep.join(lines) + sep)
    return path


def src(path: Path) -> str:
    """How `documents.source` and `input_errors.source` name a file."""
    return str(path.resolve())


def run(cli, tmp_path, *inputs, args=(), check=True, out="out.jsonl"):
    ins = [x for i in inputs for x in ("--input", i)]
    return cli("run", *ins, "--output", tmp_path / out, "--workdir", tmp_path / "w", *FAST, *args, check=check)


def input_errors(work: Path) -> list[tuple]:
    return db_rows(work, "SELECT source, source_row, error FROM input_errors ORDER BY error_id")


def jsonl_rows(path: Path) -> list[tuple[str, int]]:
    """(source, row) of every non-blank line of a plain JSONL file."""
    return [(src(path), i + 1) for i, ln in enumerate(path.read_bytes().split(b"\n")) if ln.strip()]


def assert_accounted(work: Path, rows: list[tuple[str, int]]) -> None:
    """Every input row is in `documents` or `input_errors` exactly once, and nothing else is."""
    docs = db_rows(work, "SELECT source, source_row FROM documents")
    errs = db_rows(work, "SELECT source, source_row FROM input_errors WHERE source_row IS NOT NULL")
    both = docs + errs
    assert len(both) == len(set(both)), "a row is recorded twice"
    assert sorted(both) == sorted(rows)


def assert_output(work: Path, out: Path, lines: list[bytes]) -> None:
    """The output is exactly these input lines, in order, and exactly the kept documents."""
    assert out.read_bytes() == b"".join(ln + b"\n" for ln in lines)
    kept = db_rows(work, "SELECT count(*) FROM documents WHERE status = 'kept'")[0][0]
    assert kept == len(lines)


def assert_one_line(p: subprocess.CompletedProcess, message: str) -> None:
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines() == [f"sadedup: error: {message}"]


# ---- row-level problems: quarantined, the run goes on

def test_invalid_json_line(cli, tmp_path):
    t = texts(4, 1)
    lines = [line(1, t[0]), b'{"id": 2, "text": "never closed', line(3, t[1]), b"{not json}", line(5, t[2]),
             b'{"id": 6, "text": "a"} trailing', b'{"id": 7, "text": "b",}', line(8, t[3])]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == [
        (src(inp), 2, "invalid JSON: Unterminated string starting at column 19"),
        (src(inp), 4, "invalid JSON: Expecting property name enclosed in double quotes at column 2"),
        (src(inp), 6, "invalid JSON: Extra data at column 24"),
        (src(inp), 7, "invalid JSON: Expecting property name enclosed in double quotes at column 23"),
    ]
    assert_accounted(w, jsonl_rows(inp))
    assert_output(w, tmp_path / "out.jsonl", [lines[0], lines[2], lines[4], lines[7]])


def _compressed_rows(n: int) -> tuple[list[bytes], bytes]:
    lines = [line(i, t) for i, t in enumerate(texts(n, 2))]
    return lines, b"".join(ln + b"\n" for ln in lines)


def test_truncated_gzip(cli, tmp_path):
    lines, raw = _compressed_rows(300)
    gz = gzip.compress(raw)
    cut = gz[: len(gz) * 2 // 3]
    inp = tmp_path / "in.jsonl.gz"
    inp.write_bytes(cut)
    whole = zlib.decompressobj(31).decompress(cut).count(b"\n")  # rows the cut file still holds whole
    assert 50 < whole < 300
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == [(src(inp), whole + 1, f"file is truncated after row {whole}: the compressed data "
                                                     f"ends early, so the rest of the file cannot be read")]
    assert_accounted(w, [(src(inp), r) for r in range(1, whole + 2)])
    assert_output(w, tmp_path / "out.jsonl", lines[:whole])


def test_truncated_zstd(cli, tmp_path):
    lines, raw = _compressed_rows(300)
    # several frames, as pzstd and zstd --long write them; cut inside the second
    frames = [zstandard.ZstdCompressor().compress(raw[a:a + 40_000]) for a in range(0, len(raw), 40_000)]
    data = b"".join(frames)
    cut = data[: len(frames[0]) + len(frames[1]) // 2]
    inp = tmp_path / "in.jsonl.zst"
    inp.write_bytes(cut)
    whole = (zstandard.ZstdDecompressor().decompress(frames[0])
             + zstandard.ZstdDecompressor().decompressobj().decompress(cut[len(frames[0]):])).count(b"\n")
    assert 50 < whole < 300
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == [(src(inp), whole + 1, f"file is truncated after row {whole}: the compressed data "
                                                     f"ends early, so the rest of the file cannot be read")]
    assert_accounted(w, [(src(inp), r) for r in range(1, whole + 2)])
    assert_output(w, tmp_path / "out.jsonl", lines[:whole])
    # the whole file, read across its frames, loses nothing
    full = tmp_path / "full.jsonl.zst"
    full.write_bytes(data)
    cli("run", "--input", full, "--output", tmp_path / "full.jsonl", "--workdir", tmp_path / "w2", *FAST)
    assert input_errors(tmp_path / "w2") == []
    assert (tmp_path / "full.jsonl").read_bytes() == raw


def test_corrupt_gzip(cli, tmp_path):
    """A gzip file of two members whose second is not gzip at all (two files glued together,
    one of them damaged): the first member's rows stand. (Damage inside a deflate stream is
    found only by the member's CRC at its end: gzip cannot say which rows it touched.)"""
    lines, raw = _compressed_rows(300)
    first = b"".join(ln + b"\n" for ln in lines[:140])
    inp = tmp_path / "in.jsonl.gz"
    inp.write_bytes(gzip.compress(first) + b"PK\x03\x04" + gzip.compress(raw[len(first):])[4:])
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == [(src(inp), 141, "file is corrupt after row 140 (Not a gzipped file (b'PK')): "
                                               "the rest of the file cannot be read")]
    assert_accounted(w, [(src(inp), r) for r in range(1, 142)])
    assert_output(w, tmp_path / "out.jsonl", lines[:140])


def test_invalid_utf8_and_unpaired_surrogates(cli, tmp_path):
    t = texts(3, 3)
    bad = b'{"id": 2, "text": "caf\xe9 au lait"}'
    lines = [line(1, t[0]), bad, line(3, t[1]), b'{"id": 4, "text": "half \\udc80 a pair"}',
             b'{"id": 5, "text": "\xf0\x9f\x9a"}', line(6, t[2])]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    txt = tmp_path / "latin1.txt"
    txt.write_bytes("déjà vu".encode("latin-1"))
    run(cli, tmp_path, inp, txt)
    w = tmp_path / "w"
    assert input_errors(w) == [
        (src(inp), 2, "invalid UTF-8 at byte 23 of the line"),
        (src(inp), 4, "text has an unpaired surrogate at character 5"),
        (src(inp), 5, "invalid UTF-8 at byte 20 of the line"),
        (src(txt), 1, "invalid UTF-8 at byte 2"),
    ]
    assert_accounted(w, jsonl_rows(inp) + [(src(txt), 1)])
    assert_output(w, tmp_path / "out.jsonl", [lines[0], lines[2], lines[5]])


def test_missing_text_field(cli, tmp_path):
    t = texts(3, 4)
    lines = [line(1, t[0]), json.dumps({"id": 2, "body": t[1]}).encode(), json.dumps({"id": 3}).encode(),
             json.dumps({"id": 4, "Text": "case matters"}).encode(), line(5, t[2])]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == [(src(inp), r, "missing text field 'text'") for r in (2, 3, 4)]
    assert_accounted(w, jsonl_rows(inp))
    assert_output(w, tmp_path / "out.jsonl", [lines[0], lines[4]])


def test_null_or_numeric_text(cli, tmp_path):
    t = texts(2, 5)
    values = [None, 17, 1.5, True, ["a", "list"], {"an": "object"}]
    lines = [line(0, t[0])] + [json.dumps({"id": i + 1, "text": v}).encode() for i, v in enumerate(values)] \
        + [line(7, t[1])]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    kinds = ["null", "int", "float", "bool", "list", "dict"]
    assert input_errors(w) == [(src(inp), i + 2, f"text field 'text' is {k}, not a string") for i, k in enumerate(kinds)]
    assert_accounted(w, jsonl_rows(inp))
    assert_output(w, tmp_path / "out.jsonl", [lines[0], lines[-1]])


def test_empty_and_whitespace_only_text_are_documents(cli, tmp_path):
    t = texts(2, 6)
    lines = [line(1, t[0]), line(2, ""), line(3, " \t\n "), line(4, t[1])]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == []
    assert_accounted(w, jsonl_rows(inp))
    # both are documents; normalized (whitespace collapsed) they are the same empty text, so the
    # exact stage keeps the first; neither is dropped by the substring drop rule
    assert db_rows(w, "SELECT source_row, n_chars, status, reason FROM documents ORDER BY doc_id") == [
        (1, len(t[0]), "kept", None), (2, 0, "kept", None), (3, 4, "dropped", "exact_duplicate"),
        (4, len(t[1]), "kept", None)]
    assert_output(w, tmp_path / "out.jsonl", [lines[0], lines[1], lines[3]])
    # without the exact stage both come out as they went in
    cli("run", "--input", inp, "--output", tmp_path / "o2.jsonl", "--workdir", tmp_path / "w2", *FAST,
        "--set", "stages=minhash,substring")
    assert db_rows(tmp_path / "w2", "SELECT n_tokens, removed_tokens, status FROM documents WHERE source_row IN (2, 3) "
                                    "ORDER BY doc_id") == [(0, 0, "kept"), (4, 0, "kept")]
    assert_output(tmp_path / "w2", tmp_path / "o2.jsonl", lines)


def test_nul_bytes(cli, tmp_path):
    t = texts(3, 7)
    lines = [line(1, t[0]), line(2, "before\x00after " + t[1]),   # escaped \u0000 in the text: a document
             b'{"id": 3,\x00 "text": "raw NUL between tokens"}',   # outside a string: not JSON
             b'{"id": 4, "text": "raw \x00 NUL inside a string"}',  # a raw control character: not JSON
             line(5, t[2])]
    assert b"\\u0000" in lines[1]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == [
        (src(inp), 3, "invalid JSON: Expecting property name enclosed in double quotes at column 10"),
        (src(inp), 4, "invalid JSON: Invalid control character at column 24"),
    ]
    assert_accounted(w, jsonl_rows(inp))
    assert_output(w, tmp_path / "out.jsonl", [lines[0], lines[1], lines[4]])
    assert read_jsonl(tmp_path / "out.jsonl")[1]["text"].startswith("before\x00after ")
    assert db_rows(w, "SELECT n_chars, n_tokens FROM documents WHERE source_row = 2") == \
        [(len(t[1]) + 13, len(t[1]) + 13)]


def test_50_mb_document_gets_its_own_shard(cli, tmp_path):
    letters = (b"abcdefghijklmnopqrstuvwxyz " * 10)[:256]
    big = random.Random(8).randbytes(50_000_000).translate(letters).decode("ascii")
    t = texts(2, 8)
    lines = [line("before", t[0]), line("big", big), line("after", t[1])]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    del big
    run(cli, tmp_path, inp, args=["--set", "stages=substring", "--set", "substring.shard_tokens=1000"])
    w = tmp_path / "w"
    assert input_errors(w) == []
    assert_accounted(w, jsonl_rows(inp))
    assert_output(w, tmp_path / "out.jsonl", lines)
    shards = db_rows(w, "SELECT json_extract(detail, '$.documents'), json_extract(detail, '$.tokens') FROM stages "
                        "WHERE stage = 'tokenize' AND shard >= 0 ORDER BY shard")
    assert shards == [(1, len(t[0])), (1, 50_000_000), (1, len(t[1]))]


def test_byte_order_mark(cli, tmp_path):
    t = texts(5, 9)
    bom = b"\xef\xbb\xbf"
    lines = [line(1, t[0]), line(2, t[1]), line(3, t[2])]
    inp = tmp_path / "in.jsonl"
    inp.write_bytes(bom + lines[0] + b"\n" + lines[1] + b"\n" + bom + lines[2] + b"\n")  # a concatenated file, too
    gz = tmp_path / "in2.jsonl.gz"
    gz.write_bytes(gzip.compress(bom + line(4, t[3]) + b"\n"))
    txt = tmp_path / "doc.txt"
    txt.write_bytes(bom + t[4].encode())
    run(cli, tmp_path, inp, gz, txt)
    w = tmp_path / "w"
    assert input_errors(w) == []
    assert_accounted(w, jsonl_rows(inp) + [(src(gz), 1), (src(txt), 1)])
    assert_output(w, tmp_path / "out.jsonl", lines + [line(4, t[3]), json.dumps({"id": "doc.txt", "text": t[4]}).encode()])
    assert db_rows(w, "SELECT n_chars FROM documents ORDER BY doc_id") == [(len(x),) for x in t]


def test_crlf_line_ends(cli, tmp_path):
    t = texts(3, 10)
    lines = [line(1, t[0]), line(2, t[1] + "\r\nsecond line of the text"), b"", line(4, t[2])]
    inp = write_lines(tmp_path / "in.jsonl", lines, sep=b"\r\n")
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == []
    assert_accounted(w, [(src(inp), r) for r in (1, 2, 4)])
    assert_output(w, tmp_path / "out.jsonl", [lines[0], lines[1], lines[3]])
    assert read_jsonl(tmp_path / "out.jsonl")[1]["text"].endswith("\r\nsecond line of the text")


def test_duplicate_ids(cli, tmp_path):
    t = texts(5, 11)
    lines = [line(1, t[0]), line(1, t[1]), line("1", t[2]), json.dumps({"text": t[3]}).encode(), line(1, t[4])]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == []
    assert_accounted(w, jsonl_rows(inp))
    assert_output(w, tmp_path / "out.jsonl", lines)
    # ext_id is a TEXT column: the number 1 and the string "1" read back alike
    assert db_rows(w, "SELECT doc_id, ext_id FROM documents ORDER BY doc_id") == \
        [(0, "1"), (1, "1"), (2, "1"), (3, None), (4, "1")]


def test_blank_lines(cli, tmp_path):
    t = texts(3, 12)
    lines = [b"", line(2, t[0]), b"", b"   ", b"\t", line(6, t[1]), line(7, t[2]), b"", b""]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == []
    assert db_rows(w, "SELECT source_row FROM documents ORDER BY doc_id") == [(2,), (6,), (7,)]
    assert_accounted(w, [(src(inp), r) for r in (2, 6, 7)])
    assert_output(w, tmp_path / "out.jsonl", [lines[1], lines[5], lines[6]])


def test_empty_file(cli, tmp_path):
    t = texts(2, 13)
    empty = tmp_path / "a_empty.jsonl"
    empty.write_bytes(b"")
    empty_gz = tmp_path / "b_empty.jsonl.gz"
    empty_gz.write_bytes(gzip.compress(b""))
    empty_pq = tmp_path / "c_empty.parquet"
    pq.write_table(pa.table({"id": pa.array([], pa.int64()), "text": pa.array([], pa.string())}), empty_pq)
    lines = [line(1, t[0]), line(2, t[1])]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, empty, empty_gz, empty_pq, inp)
    w = tmp_path / "w"
    assert input_errors(w) == []
    assert_accounted(w, jsonl_rows(inp))
    assert_output(w, tmp_path / "out.jsonl", lines)
    # nothing at all is a run with nothing to do, not an error
    p = cli("run", "--input", empty, "--output", tmp_path / "o2.jsonl", "--workdir", tmp_path / "w2", *FAST)
    assert p.returncode == 0 and (tmp_path / "o2.jsonl").read_bytes() == b""


def test_missing_path(cli, tmp_path):
    good = write_lines(tmp_path / "in.jsonl", [line(1, "x")])
    missing = tmp_path / "nope" / "missing.jsonl"
    p = run(cli, tmp_path, good, missing, check=False)
    assert_one_line(p, f"input {missing}: no such file or folder")
    assert not (tmp_path / "w").exists() and not (tmp_path / "out.jsonl").exists()
    link = tmp_path / "dangling.jsonl"
    link.symlink_to(tmp_path / "gone.jsonl")
    p = run(cli, tmp_path, good, link, check=False)
    assert_one_line(p, f"input {link}: a broken link (its target does not exist)")


def test_same_file_given_twice(cli, tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    inp = write_lines(d / "in.jsonl", [line(1, "text")])
    p = run(cli, tmp_path, inp, inp, check=False)
    assert_one_line(p, f"input {inp} is given twice; give each file once")
    p = run(cli, tmp_path, d, inp, check=False)
    assert_one_line(p, f"input {inp} is given twice; give each file once")
    link = tmp_path / "alias.jsonl"
    link.symlink_to(inp)
    p = run(cli, tmp_path, inp, link, check=False)
    assert_one_line(p, f"input {link} is given twice (also as {inp}); give each file once")
    assert not (tmp_path / "w").exists()


def test_folder_of_mixed_formats(cli, tmp_path):
    t = texts(8, 14)
    d = tmp_path / "corpus"
    (d / "sub").mkdir(parents=True)
    (d / "sub" / "deeper").mkdir()
    a = write_lines(d / "a.jsonl", [line("a1", t[0]), line("a2", t[1])])
    b = d / "b.jsonl.gz"
    b.write_bytes(gzip.compress(line("b1", t[2]) + b"\n"))
    c = d / "c.parquet"
    pq.write_table(pa.table({"id": ["c1", "c2"], "text": [t[3], t[4]]}), c)
    e = d / "e.csv"
    e.write_text("id,text\n1,not read\n")
    f = d / "sub" / "f.txt"
    f.write_text(t[5])
    g = d / "sub" / "README"
    g.write_text("about this corpus")
    h = d / "sub" / "deeper" / "h.jsonl.zst"
    h.write_bytes(zstandard.ZstdCompressor().compress(line("h1", t[6]) + b"\n"))
    i = d / "sub" / "i.json.bz2"
    i.write_bytes(b"BZh9")
    broken = d / "sub" / "old.jsonl"
    broken.symlink_to(d / "gone.jsonl")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_lines(elsewhere / "x.jsonl", [line("x1", t[7])])
    linked = d / "zlinked"
    linked.symlink_to(elsewhere)
    run(cli, tmp_path, d)
    w = tmp_path / "w"
    use = "(use .jsonl, .jsonl.gz, .jsonl.zst, .parquet or .txt)"
    assert input_errors(w) == sorted([
        (str(e), None, f"unsupported file type .csv: not read {use}"),
        (str(g), None, f"unsupported file type (none): not read {use}"),
        (str(i), None, f"unsupported file type .json.bz2: not read {use}"),
        (str(broken), None, "a broken link: not read"),
        (str(linked), None, "a link to a folder: not followed (give the folder as its own --input)"),
    ])
    rows = [(src(a), 1), (src(a), 2), (src(b), 1), (src(c), 1), (src(c), 2), (src(h), 1), (src(f), 1)]
    assert db_rows(w, "SELECT source, source_row FROM documents ORDER BY doc_id") == rows  # sorted by path
    assert_accounted(w, rows)
    assert_output(w, tmp_path / "out.jsonl", [
        line("a1", t[0]), line("a2", t[1]), line("b1", t[2]), line("c1", t[3]), line("c2", t[4]), line("h1", t[6]),
        json.dumps({"id": "f.txt", "text": t[5]}).encode()])
    # a new unsupported file is a change of the inputs like any other
    (d / "notes.md").write_text("new")
    p = run(cli, tmp_path, d, check=False)
    assert_one_line(p, f"inputs changed since work folder {w} was made ({d / 'notes.md'} is new); "
                       f"rerun with --restart to start over")


def test_parquet_without_text_column(cli, tmp_path):
    t = texts(3, 15)
    first = write_lines(tmp_path / "a.jsonl", [json.dumps({"id": 1, "body": t[0]}).encode()])
    inp = tmp_path / "b.parquet"
    pq.write_table(pa.table({"id": [2, 3], "body": [t[1], t[2]]}), inp)
    p = run(cli, tmp_path, first, inp, check=False)
    assert_one_line(p, f"input {inp.resolve()}: no column 'text' (columns: id, body); set input.text_field")
    assert not (tmp_path / "out.jsonl").exists()
    assert db_rows(tmp_path / "w", "SELECT count(*) FROM documents")[0][0] == 0  # stopped before any row
    # done as the message says, the same command resumes and every row of both files comes out
    run(cli, tmp_path, first, inp, args=["--set", "input.text_field=body"])
    assert input_errors(tmp_path / "w") == []
    assert_accounted(tmp_path / "w", jsonl_rows(first) + [(src(inp), 1), (src(inp), 2)])
    assert_output(tmp_path / "w", tmp_path / "out.jsonl", [json.dumps({"id": i + 1, "body": x}).encode()
                                                           for i, x in enumerate(t)])


def test_parquet_text_column_that_is_not_text(cli, tmp_path):
    inp = tmp_path / "in.parquet"
    pq.write_table(pa.table({"text": [1, 2], "body": ["one", "two"]}), inp)
    p = run(cli, tmp_path, inp, out="out.parquet", check=False)
    assert_one_line(p, f"input {inp.resolve()}: column 'text' holds int64, not text; set input.text_field")
    raw = tmp_path / "raw.parquet"
    pq.write_table(pa.table({"text": [b"one", b"two"]}), raw)
    # other inputs in the same work folder need no --restart: nothing was read from the first
    p = run(cli, tmp_path, raw, out="out.parquet", check=False)
    assert_one_line(p, f"input {raw.resolve()}: column 'text' holds binary, not text; set input.text_field")
    # dictionary-encoded text is text
    enc = tmp_path / "enc.parquet"
    pq.write_table(pa.table({"text": pa.array(["one", "two", "one"]).dictionary_encode()}), enc)
    cli("run", "--input", enc, "--output", tmp_path / "o.parquet", "--workdir", tmp_path / "w2", *FAST,
        "--set", "stages=substring")
    assert pq.read_table(tmp_path / "o.parquet").column("text").to_pylist() == ["one", "two", "one"]


def test_parquet_null_text_values(cli, tmp_path):
    t = texts(3, 16)
    inp = tmp_path / "in.parquet"
    table = pa.table({"id": ["p1", "p2", "p3", "p4"], "text": [t[0], None, t[1], t[2]],
                      "score": [1.0, 2.0, None, 4.0]})
    pq.write_table(table, inp, row_group_size=2)
    run(cli, tmp_path, inp, out="out.parquet")
    w = tmp_path / "w"
    assert input_errors(w) == [(src(inp), 2, "text field 'text' is null, not a string")]
    assert_accounted(w, [(src(inp), r) for r in (1, 2, 3, 4)])
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.schema == table.schema
    assert out.to_pylist() == [r for r in table.to_pylist() if r["id"] != "p2"]


def test_json_row_that_is_not_an_object(cli, tmp_path):
    t = texts(2, 17)
    lines = [line(1, t[0]), json.dumps([1, "text"]).encode(), b'"just a string"', b"42", b"null", b"true",
             line(7, t[1])]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == [(src(inp), r, f"not a JSON object but {k}")
                               for r, k in ((2, "list"), (3, "str"), (4, "int"), (5, "null"), (6, "bool"))]
    assert_accounted(w, jsonl_rows(inp))
    assert_output(w, tmp_path / "out.jsonl", [lines[0], lines[-1]])


def test_id_that_is_an_object(cli, tmp_path):
    t = texts(5, 18)
    ids = [{"shard": 3, "n": 1}, [1, 2], 1.5, True, 2 ** 70]
    lines = [json.dumps({"id": i, "text": x}).encode() for i, x in zip(ids, t)]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == []
    assert_accounted(w, jsonl_rows(inp))
    assert_output(w, tmp_path / "out.jsonl", lines)
    assert db_rows(w, "SELECT ext_id FROM documents ORDER BY doc_id") == [
        ('{"shard": 3, "n": 1}',), ("[1, 2]",), ("1.5",), ("true",), (str(2 ** 70),)]


def test_document_over_the_memory_budget(cli, tmp_path):
    budget = ["--set", f"run.memory_budget={136 << 20}B", "--set", "run.workers=1"]
    limit = max_document_tokens(load_workflow(None, [a for a in budget if a != "--set"]))
    assert 100_000 < limit < 2_000_000
    t = texts(2, 19)
    words = " ".join(texts(limit // 150, 20, words=30))
    assert len(words) > limit
    fits, over = words[:limit], words[-(limit + 1):]
    lines = [line(1, t[0]), line(2, over), line(3, fits), line(4, t[1])]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp, args=budget)
    w = tmp_path / "w"
    assert input_errors(w) == [(src(inp), 2, f"document of {limit + 1} bytes is over the {limit}-token limit that "
                                             f"run.memory_budget allows; raise the budget to keep it")]
    assert_accounted(w, jsonl_rows(inp))
    assert_output(w, tmp_path / "out.jsonl", [lines[0], lines[2], lines[3]])


def test_shard_smaller_than_one_document(cli, tmp_path):
    t = texts(7, 21)
    fresh = t[6]
    lines = [line(i, x) for i, x in enumerate(t[:6])] + [line(6, fresh + " " + t[0][:100])]  # quotes document 0
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp, args=["--set", "substring.shard_tokens=10", "--set", "stages=substring"])
    w = tmp_path / "w"
    assert input_errors(w) == []
    assert_accounted(w, jsonl_rows(inp))
    shards = db_rows(w, "SELECT json_extract(detail, '$.documents') FROM stages WHERE stage = 'tokenize' "
                        "AND shard >= 0 ORDER BY shard")
    assert shards == [(1,)] * 7  # every document is over 10 tokens: each has a shard of its own
    assert db_rows(w, "SELECT doc_id, char_start, char_end, src_doc_id, src_tok_start FROM spans") == \
        [(6, len(fresh) + 1, len(fresh) + 101, 0, 0)]
    assert_output(w, tmp_path / "out.jsonl", lines[:6] + [line(6, fresh + " ")])
    # the same decisions as with one shard for all
    cli("run", "--input", inp, "--output", tmp_path / "ref.jsonl", "--workdir", tmp_path / "ref", *FAST,
        "--set", "stages=substring")
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "ref.jsonl").read_bytes()
    spans = "SELECT doc_id, tok_start, tok_end, src_doc_id, src_tok_start FROM spans ORDER BY span_id"
    assert db_rows(w, spans) == db_rows(tmp_path / "ref", spans)


# ---- files the system will not let us read or write

def _without_read_override() -> list[str]:
    """A command prefix under which chmod 000 keeps sadedup out, as it keeps any user out.
    root reads every file through CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH: drop them (the
    process stays root, so it still finds its Python under /root)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make a file unreadable")
    prefix = [setpriv, "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "open('/proc/1/environ').read()"], capture_output=True)
    if probe.returncode == 0 or b"PermissionError" not in probe.stderr:
        pytest.skip("cannot drop the capabilities that let root read every file")
    return prefix


def _sadedup(prefix: list[str], cwd: Path, *args, preexec_fn=None) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", "sadedup.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "CI": "1"}, timeout=600, preexec_fn=preexec_fn)


def test_unreadable_file(cli, tmp_path):
    prefix = _without_read_override()
    t = texts(3, 22)
    good = write_lines(tmp_path / "a.jsonl", [line(1, t[0])])
    locked = write_lines(tmp_path / "b.jsonl", [line(2, t[1])])
    locked.chmod(0)
    args = ["run", "--input", good, "--input", locked, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w",
            *FAST]
    p = _sadedup(prefix, tmp_path, *args)
    assert_one_line(p, f"input {locked}: permission denied (cannot read the file)")
    assert not (tmp_path / "w").exists()
    # inside a folder: the file, and a folder that cannot be listed
    d = tmp_path / "corpus"
    (d / "sub").mkdir(parents=True)
    write_lines(d / "a.jsonl", [line(1, t[0])])
    inner = write_lines(d / "sub" / "b.jsonl", [line(2, t[1])])
    inner.chmod(0)
    args = ["run", "--input", d, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w", *FAST]
    p = _sadedup(prefix, tmp_path, *args)
    assert_one_line(p, f"input {inner}: permission denied (cannot read the file)")
    inner.chmod(0o644)
    (d / "sub").chmod(0)
    try:
        p = _sadedup(prefix, tmp_path, *args)
        assert_one_line(p, f"input folder {d / 'sub'}: Permission denied (cannot list it)")
    finally:
        (d / "sub").chmod(0o755)
    # readable again, the same command runs and loses nothing
    locked.chmod(0o644)
    p = _sadedup(prefix, tmp_path, "run", "--input", good, "--input", locked, "--output", tmp_path / "out.jsonl",
                 "--workdir", tmp_path / "w", *FAST)
    assert p.returncode == 0, p.stderr
    assert_output(tmp_path / "w", tmp_path / "out.jsonl", [line(1, t[0]), line(2, t[1])])


def _dump(work: Path) -> list:
    return (db_rows(work, "SELECT doc_id, source, source_row, ext_id, status, reason, n_tokens, removed_tokens "
                          "FROM documents ORDER BY doc_id")
            + db_rows(work, "SELECT * FROM spans ORDER BY span_id")
            + db_rows(work, "SELECT * FROM clusters ORDER BY cluster_id")
            + db_rows(work, "SELECT source, source_row, error FROM input_errors ORDER BY error_id"))


@pytest.fixture(scope="module")
def full_disk_corpus(tmp_path_factory):
    """Rows with a large field beside the text, so the output is the largest file a run writes;
    copies and quotes, so every stage has work to do; a bad row, so input_errors has one."""
    d = tmp_path_factory.mktemp("fulldisk")
    t = texts(150, 23, words=200)
    rng = random.Random(23)
    t += [t[i] for i in range(0, 20)] + [t[i][:500] + " " + t[i + 40][:200] for i in range(20)]
    rows = [json.dumps({"id": i, "text": x, "meta": rng.randbytes(3000).hex()}).encode() for i, x in enumerate(t)]
    inp = write_lines(d / "in.jsonl", rows + [b"{broken"])
    # --workers 1: the files these tests fill (texts.bin, the database, the signatures, the
    # output) are written by the driver either way (one piece, one chunk, one part), and a pool
    # of two would start anew for each of the dozen runs
    opts = ["--set", "substring.min_length=40", "--set", "substring.shard_tokens=50000", "--workers", "1"]
    p = _sadedup([], d, "run", "--input", inp, "--output", d / "ref.jsonl", "--workdir", d / "ref", *opts)
    assert p.returncode == 0, p.stderr
    assert db_rows(d / "ref", "SELECT count(*) FROM documents WHERE status = 'dropped'")[0][0] == 40
    assert db_rows(d / "ref", "SELECT count(*) FROM spans")[0][0] >= 20
    sizes = {f.name: f.stat().st_size for f in (d / "ref").rglob("*") if f.is_file()}
    assert sizes["texts.bin"] > 200_000 and max(sizes.values()) < 800_000 < (d / "ref.jsonl").stat().st_size
    return inp, d / "ref.jsonl", _dump(d / "ref"), opts


# the first file over the limit: texts.bin during ingest, the database (its write-ahead log)
# in the middle of the run, the output during export
@pytest.mark.parametrize("limit, where", [(200_000, "texts"), (400_000, "database"), (800_000, "output")])
def test_full_disk_then_rerun_resumes(full_disk_corpus, tmp_path, limit, where):
    """RLIMIT_FSIZE makes every write past `limit` bytes of a file fail with EFBIG (CPython
    ignores SIGXFSZ), as a full disk makes it fail with ENOSPC: the run stops with one line
    naming the file; once the limit is gone, the same command resumes and finishes with the
    output and records of a run that never failed, without redoing a finished stage."""
    inp, ref, ref_dump, opts = full_disk_corpus
    out, work = tmp_path / "out.jsonl", tmp_path / "work"
    args = ["run", "--input", inp, "--output", out, "--workdir", work, *opts]

    def small_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    p = _sadedup([], tmp_path, "--quiet", *args, preexec_fn=small_disk)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    (msg,) = p.stderr.strip().splitlines()
    resume = "rerun the same command to resume"
    if where == "texts":
        assert msg == (f"sadedup: error: file too large while writing {work}/ingest.partial/texts.bin: raise the file "
                       f"size limit (ulimit -f) or free space, and {resume}")
    elif where == "output":
        # the output is written in a staging folder beside it and renamed in when whole
        assert msg == (f"sadedup: error: file too large while writing {tmp_path}/.out.jsonl.sadedup-parts/"
                       f"out.jsonl.partial: raise the file size limit (ulimit -f) or free space, and {resume}")
    else:
        assert msg.startswith("sadedup: error: disk I/O error (SQLITE_IOERR")
        assert msg.endswith(f") while writing {work}/sadedup.db: check that the disk has room and works, and {resume}")
    assert not out.exists() and not Path(f"{out}.partial").exists()
    assert not (tmp_path / ".out.jsonl.sadedup-parts").exists()
    done = "SELECT stage, shard, finished_at FROM stages WHERE status = 'done'"
    records = {(r[0], r[1]): r[2] for r in db_rows(work, done)}
    before = {s: f for (s, k), f in records.items() if k == -1}
    if where == "output":
        assert set(before) >= {"ingest", "exact", "minhash", "tokenize", "build", "repeats", "remove"}
        assert db_rows(work, "SELECT status FROM stages WHERE stage = 'export'") == [("failed",)]
    elif where == "database":
        assert "ingest" in before and "remove" not in before
    else:
        assert before == {}
    p = _sadedup([], tmp_path, *args)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == ref.read_bytes()
    assert _dump(work) == ref_dump
    after = {(r[0], r[1]): r[2] for r in db_rows(work, done)}
    # every stage and shard finished before the failure is kept as it was, its record untouched
    assert {k for k, f in records.items() if after.get(k) != f} == set(), "finished work was redone"


@pytest.fixture
def small_filesystem(tmp_path):
    """(folder, mount(size), grow(size)): a tmpfs at tmp_path/disk, unmounted afterwards.
    Needs root with CAP_SYS_ADMIN; skipped where mounting is not allowed."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = []

    def mount(size: str) -> None:
        if os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("mounting a small filesystem needs root")
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)], capture_output=True,
                           text=True)
        if p.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
        mounted.append(disk)

    def grow(size: str) -> None:
        subprocess.run(["mount", "-o", f"remount,size={size}", str(disk)], check=True)

    yield disk, mount, grow
    for d in mounted:
        subprocess.run(["umount", "-l", str(d)], check=False)


@pytest.mark.parametrize("size, where", [
    ("500k", "sadedup.db"),
    ("680k", "minhash/"),  # memory-mapped artifacts: their blocks are reserved before mapping
])
def test_full_filesystem_then_rerun_resumes(full_disk_corpus, small_filesystem, tmp_path, size, where):
    """A real full disk (ENOSPC, which SQLite reports as SQLITE_FULL): one line naming the file;
    after the filesystem grows, the same command resumes to the output of a clean run."""
    inp, ref, ref_dump, opts = full_disk_corpus
    disk, mount, grow = small_filesystem
    mount(size)
    out, work = tmp_path / "out.jsonl", disk / "w"
    args = ["run", "--input", inp, "--output", out, "--workdir", work, *opts]
    p = _sadedup([], tmp_path, "--quiet", *args)
    assert p.returncode > 0 and "Traceback" not in p.stderr
    (msg,) = p.stderr.strip().splitlines()
    assert msg.startswith(f"sadedup: error: no space left on the device while writing {work}/{where}")
    assert msg.endswith(": free space and rerun the same command to resume")
    grow("64m")
    p = _sadedup([], tmp_path, *args)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == ref.read_bytes()
    assert _dump(work) == ref_dump


def test_full_filesystem_under_numpy_save(small_filesystem):
    """np.save writes with fwrite and reports a full disk without an error number ("Not
    enough free space to write ..."): it is still the one-line disk-full error, naming the
    file."""
    import numpy as np

    from sadedup.errors import WriteError, environment_error
    from sadedup.workspace import save_npy

    disk, mount, _ = small_filesystem
    mount("64k")
    with pytest.raises(OSError) as info:
        save_npy(disk / "big.npy", np.zeros(1 << 20, np.uint8))
    err = environment_error(info.value)
    assert isinstance(err, WriteError)
    assert str(err) == (f"no space left on the device while writing {disk}/big.npy.tmp: free space and rerun the "
                        f"same command to resume")


# ---- configuration: refused before any work, with the key named

def _refused(cli, tmp_path, args, message, workflow=None):
    inp = write_lines(tmp_path / "in.jsonl", [line(1, "text")])
    wf = [workflow] if workflow else []
    p = cli("run", *wf, "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", *args,
            check=False)
    assert_one_line(p, message)
    assert not (tmp_path / "w").exists() and not (tmp_path / "o.jsonl").exists()


def test_unknown_workflow_keys(cli, tmp_path):
    wf = tmp_path / "mine.toml"
    wf.write_text('stages = ["substring"]\n[substring]\nmin_lenght = 5\n')
    _refused(cli, tmp_path, [], f"unknown workflow key 'substring.min_lenght' in {wf} (known in [substring]: "
                                "tokenizer, min_length, drop_fraction, keep, shard_tokens, tokenizer_sample, prefilter)", wf)
    wf.write_text('stages = ["substring"]\n[dedup]\nmin_length = 5\n')
    _refused(cli, tmp_path, [], f"unknown workflow key 'dedup' in {wf} (known: stages, input, exact, minhash, "
                                "lines, passages, decontaminate, substring, run, [[sources]])", wf)
    _refused(cli, tmp_path, ["--set", "minhash.bandz=3"], "unknown workflow key 'minhash.bandz' in --set (known in "
             "[minhash]: ngram, shingle, num_perm, bands, rows, threshold, verify, keep, seed, lowercase)")


def test_bands_times_rows_over_num_perm(cli, tmp_path):
    _refused(cli, tmp_path, ["--set", "minhash.bands=16", "--set", "minhash.rows=8"],
             "workflow key minhash.bands: minhash.bands * minhash.rows = 128 exceeds minhash.num_perm = 112")
    _refused(cli, tmp_path, ["--set", "minhash.num_perm=64"],
             "workflow key minhash.bands: minhash.bands * minhash.rows = 112 exceeds minhash.num_perm = 64")


@pytest.mark.parametrize("value", ["0", "-5"])
def test_min_length_below_one(cli, tmp_path, value):
    _refused(cli, tmp_path, ["--set", f"substring.min_length={value}"],
             f"workflow key substring.min_length: must be from 1 to 65535 (or auto), not {value}")


@pytest.mark.parametrize("value, shown", [("0", "0.0"), ("1.5", "1.5"), ("-0.1", "-0.1"), ("nan", "nan")])
def test_drop_fraction_outside_zero_one(cli, tmp_path, value, shown):
    _refused(cli, tmp_path, ["--set", f"substring.drop_fraction={value}"],
             f"workflow key substring.drop_fraction: must be in (0, 1], not {shown}")


def test_missing_tokenizer_file(cli, tmp_path):
    for spec in (f"hf:{tmp_path / 'nope' / 'tokenizer.json'}", f"sp:{tmp_path / 'nope.model'}"):
        _refused(cli, tmp_path, ["--set", "stages=substring", "--set", f"substring.tokenizer={spec}"],
                 f"substring.tokenizer: no such file {spec[3:]}")


def test_output_inside_the_work_folder(cli, tmp_path):
    for out in ("out.jsonl", "sub/out.jsonl"):
        inp = write_lines(tmp_path / "in.jsonl", [line(1, "text")])
        p = cli("run", "--input", inp, "--output", tmp_path / "w" / out, "--workdir", tmp_path / "w", *FAST,
                check=False)
        assert_one_line(p, f"output {tmp_path / 'w' / out} is inside the work folder {tmp_path / 'w'}; "
                           f"write it elsewhere")
        assert not (tmp_path / "w").exists()


def test_output_path_refused_before_any_work(cli, tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    inp = write_lines(d / "in.jsonl", [line(1, "text")])
    (tmp_path / "afolder.jsonl").mkdir()
    for out, message in (
            (tmp_path / "out.csv", "name it .jsonl, .jsonl.gz, .jsonl.zst or .parquet"),
            (tmp_path / "out.txt", "name it .jsonl, .jsonl.gz, .jsonl.zst or .parquet"),
            (tmp_path / "nofolder" / "out.jsonl", f"folder {tmp_path / 'nofolder'} does not exist"),
            (tmp_path / "afolder.jsonl", "is a folder; name a file"),
            (inp / "out.jsonl", f"folder {inp} is a file, not a folder")):
        p = cli("run", "--input", inp, "--output", out, "--workdir", tmp_path / "w", check=False)
        assert_one_line(p, f"output {out}: {message}")
        assert not (tmp_path / "w").exists()
    for out in ("", " "):  # an empty --output was Path("."), refused as "output ." (no file the user named)
        p = cli("run", "--input", inp, "--output", out, "--workdir", tmp_path / "w", check=False)
        assert_one_line(p, f"output {out!r} is empty: name a file (.jsonl, .jsonl.gz, .jsonl.zst or .parquet)")
        assert not (tmp_path / "w").exists()
    # overwriting the corpus, or writing where the next run would read it as input
    p = cli("run", "--input", inp, "--output", inp, "--workdir", tmp_path / "w", check=False)
    assert_one_line(p, f"output {inp} is one of the inputs; write it elsewhere")
    p = cli("run", "--input", d, "--output", d / "out.jsonl", "--workdir", tmp_path / "w", check=False)
    assert_one_line(p, f"output {d / 'out.jsonl'} is inside the input folder {d}; write it elsewhere")
    assert not (tmp_path / "w").exists() and inp.read_bytes() == line(1, "text") + b"\n"


def test_export_and_report_refuse_where_they_cannot_write_before_any_work(cli, tmp_path):
    """`export --output ""` said "output ."; `report -o FILE/r.html` (under a file) and
    `report -o FOLDER` built the whole report and then failed on its temporary file, in words
    of the operating system's ("Not a directory: .../r.html.partial")."""
    inp = write_lines(tmp_path / "in.jsonl", [line(1, "text"), line(2, "text")])
    cli("run", "--input", inp, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w", *FAST)
    p = cli("export", tmp_path / "w", "--output", "", check=False)
    assert_one_line(p, "output '' is empty: name a file (.jsonl, .jsonl.gz, .jsonl.zst or .parquet)")
    (tmp_path / "folder.html").mkdir()
    for out, message in ((inp / "r.html", f"folder {inp} is a file, not a folder"),
                         (tmp_path / "folder.html", "is a folder; name a file"),
                         (tmp_path / "nofolder" / "r.html", f"folder {tmp_path / 'nofolder'} does not exist")):
        p = cli("report", tmp_path / "w", "-o", out, check=False)
        assert_one_line(p, f"report {out}: {message}")
    p = cli("export", tmp_path / "w", "--output", inp / "x.jsonl", check=False)
    assert_one_line(p, f"output {inp / 'x.jsonl'}: folder {inp} is a file, not a folder")


def test_a_part_of_a_sharded_output_over_an_input_is_refused(cli, tmp_path):
    """Only the first part was checked: with inputs a.jsonl and q-00001.jsonl, output
    q-{shard:05d}.jsonl wrote its part 1 over the second input (given by name or by a glob)."""
    a = write_lines(tmp_path / "a.jsonl", [line(1, "one")])
    q = write_lines(tmp_path / "q-00001.jsonl", [line(2, "two")])
    for given in (["--input", a, "--input", q], ["--input", str(tmp_path / "*.jsonl")]):
        p = cli("run", *given, "--output", tmp_path / "q-{shard:05d}.jsonl", "--workdir", tmp_path / "w", check=False)
        assert_one_line(p, f"output {tmp_path / 'q-{shard:05d}.jsonl'}: its part q-00001.jsonl is one of the inputs; "
                           f"write it elsewhere")
        assert not (tmp_path / "w").exists() and q.read_bytes() == line(2, "two") + b"\n"


def test_usage_errors_are_one_line(cli, tmp_path):
    for args, message in ((["run", "--bogus"], "No such option: --bogus (see `sadedup run --help`)"),
                          (["run", "--workers", "x"], "Invalid value for '--workers': Input should be a valid "
                                                      "integer, unable to parse string as an integer (see "
                                                      "`sadedup run --help`)"),
                          (["nocommand"], "No such command 'nocommand'. (see `sadedup --help`)")):
        p = cli(*args, check=False)
        assert p.returncode == 2
        assert_one_line(p, message)


def test_rows_orjson_refuses_or_rounds_are_read_as_json_reads_them(cli, tmp_path):
    """NaN, a lone surrogate outside the text and integers beyond 64 bits are valid to
    Python's json; the fast parser refuses or rounds them, and such rows must come through
    exactly as before: kept, their ids exact, their lines unchanged."""
    t = texts(4, 23)
    lines = [b'{"id": 1, "score": NaN, "text": ' + json.dumps(t[0]).encode() + b"}",
             b'{"id": 2, "note": "\\ud800", "text": ' + json.dumps(t[1]).encode() + b"}",
             b'{"id": 36893488147419103232, "text": ' + json.dumps(t[2]).encode() + b"}",
             b'{"id": 4, "meta": {"n": -18446744073709551617}, "text": ' + json.dumps(t[3]).encode() + b"}"]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp)
    w = tmp_path / "w"
    assert input_errors(w) == []
    assert_accounted(w, jsonl_rows(inp))
    assert_output(w, tmp_path / "out.jsonl", lines)
    # (ext_id has TEXT affinity: every id reads back as text)
    assert db_rows(w, "SELECT ext_id FROM documents ORDER BY doc_id") == [("1",), ("2",), ("36893488147419103232",), ("4",)]
