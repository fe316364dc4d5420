"""Formats as a registry (issue 12, items 4 and 5): detection, folders of shards with their
metadata files, Parquet schemas across shards and across JSONL rows, inputs that yield no
document, and JSON output that keeps every byte of a row but its text.

Run-level problems stop the run with one exact line on stderr naming the file; rows whose
text did not change come out as the bytes they were read as (JSONL).
"""
from __future__ import annotations

import gzip
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import db_rows
from hypothesis import given, settings
from hypothesis import strategies as st
from test_bad_input import FAST, assert_one_line, input_errors, line, src, texts, write_lines

from sadedup import formats
from sadedup.errors import SadedupError
from sadedup.readers import TextFieldSeen, detect, parse_json_row
from sadedup.writers import check_output, splice_text

SUBSTRING = [*FAST, "--set", "stages=substring"]


def run(cli, tmp_path, *inputs, out="out.jsonl", args=SUBSTRING, check=True):
    ins = [x for i in inputs for x in ("--input", i)]
    # --quiet: a run stopped part way prints only its error
    return cli("--quiet", "run", *ins, "--output", tmp_path / out, "--workdir", tmp_path / "w", *args, check=check)


def quoting(t: list[str], fresh: str) -> tuple[str, str]:
    """A text that quotes 100 characters of t[0] after a fresh part, and what the substring
    stage leaves of it (the quote cut, with keep=first)."""
    return fresh + " " + t[0][:100], fresh + " "


def strict_json(raw: bytes):
    """JSON as the standard has it: NaN and Infinity are not numbers."""
    def refuse(token):
        raise ValueError(f"not JSON: {token}")
    return json.loads(raw, parse_constant=refuse)


# ---- the registry

def test_suffix_lists_come_from_the_registry():
    assert formats.listed() == ".jsonl, .jsonl.gz, .jsonl.zst, .parquet or .txt"
    assert formats.listed(output=True) == ".jsonl, .jsonl.gz, .jsonl.zst or .parquet"
    assert [f.name for f in formats.FORMATS] == ["jsonl", "parquet", "txt"]
    assert [f.name for f in formats.FORMATS if f.writer] == ["jsonl", "parquet"]


@pytest.mark.parametrize("name, named, in_folder", [
    ("data.jsonl", ("jsonl", None), ("jsonl", None)),
    ("DATA.JSONL.GZ", ("jsonl", "gzip"), ("jsonl", "gzip")),
    ("x.ndjson.zst", ("jsonl", "zstd"), ("jsonl", "zstd")),
    ("x.jsonl.zstd", ("jsonl", "zstd"), ("jsonl", "zstd")),
    ("train-00000-of-00002.parquet", ("parquet", None), ("parquet", None)),
    ("x.pq", ("parquet", None), ("parquet", None)),
    ("doc.txt", ("txt", None), ("txt", None)),
    # a plain .json is read when named, but inside a folder it is a metadata file
    ("rows.json", ("jsonl", None), None),
    ("dataset_infos.json", ("jsonl", None), None),
    ("c4-train.00000-of-01024.json.gz", ("jsonl", "gzip"), ("jsonl", "gzip")),  # as C4 ships
    ("x.parquet.gz", None, None),
    ("doc.txt.gz", None, None),  # was taken for text and read as compressed bytes
    ("README.md", None, None),
    (".gitattributes", None, None),
    ("data.arrow", None, None),
])
def test_detect(name, named, in_folder):
    def kind(inp):
        return None if inp is None else (inp.format, inp.compression)
    assert kind(detect(Path(name))) == named
    assert kind(detect(Path(name), in_folder=True)) == in_folder


def test_output_names(tmp_path):
    for ok in ("o.jsonl", "o.jsonl.gz", "o.jsonl.zst", "o.ndjson", "o.parquet"):
        check_output(tmp_path / ok)
    for bad in ("o.txt", "o.csv", "o.json", "o.parquet.gz", "o"):
        with pytest.raises(SadedupError, match=r"name it \.jsonl, \.jsonl\.gz, \.jsonl\.zst or \.parquet$"):
            check_output(tmp_path / bad)


# ---- files that are not data, inside a folder

def _hf_shards(d: Path, t: list[str]) -> tuple[pa.Schema, list[dict]]:
    """A Hugging Face dataset as the Hub stores it: Parquet shards under data/ whose schema
    carries the `huggingface` metadata, a dataset card, dataset_infos.json, .gitattributes."""
    (d / "data").mkdir(parents=True)
    features = {"id": {"dtype": "int64", "_type": "Value"}, "text": {"dtype": "large_string", "_type": "Value"},
                "score": {"dtype": "float32", "_type": "Value"}}
    schema = pa.schema([("id", pa.int64()), ("text", pa.large_string()), ("score", pa.float32())],
                       metadata={"huggingface": json.dumps({"info": {"features": features}})})
    rows = [{"id": i, "text": x, "score": i / 4} for i, x in enumerate(t)]
    half = len(rows) // 2
    for k, part in enumerate((rows[:half], rows[half:])):
        pq.write_table(pa.Table.from_pylist(part, schema=schema), d / "data" / f"train-0000{k}-of-00002.parquet")
    (d / "README.md").write_text("---\nlicense: mit\n---\n# A dataset\n")
    (d / "dataset_infos.json").write_text(json.dumps({"default": {"features": features}}, indent=2))
    (d / ".gitattributes").write_text("*.parquet filter=lfs diff=lfs merge=lfs -text\n")
    return schema, rows


def test_huggingface_folder(cli, tmp_path):
    """Its data is read, its metadata files recorded in input_errors, and what is hidden
    (.gitattributes, .git/) not listed at all."""
    t = texts(6, 30)
    d = tmp_path / "dataset"
    schema, rows = _hf_shards(d, t)
    (d / "state.json").write_text('{"_fingerprint": "abc"}')
    (d / "data" / "dataset_info.json").write_text('{"text": "not a row"}')
    # cloned from the Hub: git's own folder (a shard's blob in it, under its hash) and a
    # half-written hidden file are no one's data: not listed, as a glob's * skips them
    (d / ".git" / "lfs" / "objects" / "ab").mkdir(parents=True)
    (d / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    shutil.copy(d / "data" / "train-00000-of-00002.parquet", d / ".git" / "lfs" / "objects" / "ab" / "abcdef")
    (d / "data" / ".train-00002-of-00002.parquet.tmp.jsonl").write_text('{"text": "a half-written row"}\n')
    run(cli, tmp_path, d, out="out.parquet")
    w = tmp_path / "w"
    why_json = "a .json file inside a folder is taken for metadata: not read (name it with --input to read its rows)"
    use = f"(use {formats.listed()})"
    assert input_errors(w) == sorted([
        (str(d / "README.md"), None, f"unsupported file type .md: not read {use}"),
        (str(d / "data" / "dataset_info.json"), None, why_json),
        (str(d / "dataset_infos.json"), None, why_json),
        (str(d / "state.json"), None, why_json),
    ])
    assert db_rows(w, "SELECT count(*) FROM documents")[0][0] == len(rows)
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.schema.equals(schema, check_metadata=True)
    assert out.to_pylist() == rows
    # a git command in the folder changes only what is hidden: the run's inputs are as they were
    (d / ".git" / "index").write_bytes(b"DIRC")
    assert "pending: nothing" in cli("status", w).stdout


def test_json_named_explicitly_is_read_as_jsonl(cli, tmp_path):
    t = texts(2, 31)
    lines = [line(1, t[0]), line(2, t[1])]
    inp = write_lines(tmp_path / "rows.json", lines)
    run(cli, tmp_path, inp)
    assert (tmp_path / "out.jsonl").read_bytes() == b"".join(x + b"\n" for x in lines)


def test_folder_with_no_data_file(cli, tmp_path):
    """A folder saved by datasets' save_to_disk (Arrow files and JSON metadata): nothing in it
    is read, which is an error, not a run over nothing."""
    d = tmp_path / "saved"
    d.mkdir()
    (d / "data-00000-of-00001.arrow").write_bytes(b"ARROW1")
    (d / "dataset_info.json").write_text("{}")
    (d / "state.json").write_text("{}")
    p = run(cli, tmp_path, d, check=False)
    assert_one_line(p, f"input folder {d}: no file in it is read (3 skipped: data-00000-of-00001.arrow, "
                       f"dataset_info.json, state.json); use {formats.listed()}")
    assert not (tmp_path / "w").exists()


# ---- Parquet output: one schema for all the inputs

def test_parquet_shards_with_differing_schemas_are_unified(cli, tmp_path):
    t = texts(6, 32)
    cut_in, cut_out = quoting(t, texts(1, 33, words=40)[0])
    d = tmp_path / "shards"
    d.mkdir()
    meta = {b"huggingface": b'{"info": {}}'}
    a = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "text": pa.array(t[:3], pa.large_string()),
                  "score": pa.array([0.5, 1.5, 2.5])}).replace_schema_metadata(meta)
    b = pa.table({"id": pa.array([4, 5, 6], pa.int64()), "text": pa.array([t[3], cut_in, t[4]], pa.large_string()),
                  "lang": ["en", "fr", "de"]})
    pq.write_table(a, d / "a.parquet")
    pq.write_table(b, d / "b.parquet")
    run(cli, tmp_path, d, out="out.parquet")
    assert input_errors(tmp_path / "w") == []
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.schema == pa.schema([("id", pa.int64()), ("text", pa.large_string()), ("score", pa.float64()),
                                    ("lang", pa.string())])
    assert out.schema.metadata == meta
    assert out.to_pylist() == [
        {"id": 1, "text": t[0], "score": 0.5, "lang": None}, {"id": 2, "text": t[1], "score": 1.5, "lang": None},
        {"id": 3, "text": t[2], "score": 2.5, "lang": None}, {"id": 4, "text": t[3], "score": None, "lang": "en"},
        {"id": 5, "text": cut_out, "score": None, "lang": "fr"}, {"id": 6, "text": t[4], "score": None, "lang": "de"}]


def test_parquet_schema_conflict_refused_before_any_work(cli, tmp_path):
    t = texts(4, 34)
    d = tmp_path / "shards"
    d.mkdir()
    pq.write_table(pa.table({"text": t[:2], "meta": ["x", "y"]}), d / "a.parquet")
    pq.write_table(pa.table({"text": t[2:], "meta": [1, 2]}), d / "b.parquet")
    p = run(cli, tmp_path, d, out="out.parquet", check=False)
    assert_one_line(p, f"inputs {d / 'a.parquet'} and {d / 'b.parquet'}: column 'meta' is string in the first and "
                       f"int64 in the second; a Parquet output has one type per column (write .jsonl output instead)")
    assert not (tmp_path / "w").exists()
    # JSONL output has no such limit
    run(cli, tmp_path, d, out="out.jsonl")
    assert [json.loads(x)["meta"] for x in (tmp_path / "out.jsonl").read_text().splitlines()] == ["x", "y", 1, 2]


def test_jsonl_rows_with_different_fields_to_parquet(cli, tmp_path):
    """Every field of every row comes out, null where a row lacks it, even a field first seen
    after the first batch the writer buffers."""
    n = 8300
    t = texts(n, 35, words=8)
    first = texts(1, 36, words=30)[0]
    cut_in, cut_out = quoting([first], texts(1, 37, words=40)[0])
    rows = [{"id": 0, "text": first}] + [{"id": i + 1, "text": x} for i, x in enumerate(t)]
    rows[2]["url"] = "https://example.com/2"
    rows[5]["score"] = 1
    rows[6]["score"] = 2.5
    rows[7]["text"] = cut_in
    rows[7]["tags"] = ["a", "b"]
    rows[-1]["late"] = {"k": [1, 2]}
    inp = write_lines(tmp_path / "in.jsonl", [json.dumps(r).encode() for r in rows])
    run(cli, tmp_path, inp, out="out.parquet")
    assert input_errors(tmp_path / "w") == []
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.schema.names == ["id", "text", "url", "score", "tags", "late"]
    assert out.schema.field("score").type == pa.float64()
    got = out.to_pylist()
    assert len(got) == len(rows)
    blank = dict.fromkeys(out.schema.names)
    want = [blank | r for r in rows]
    want[7]["text"] = cut_out
    assert got[:10] == want[:10] and got[-1] == want[-1]
    assert got == want


def test_jsonl_field_type_conflict_to_parquet_is_refused(cli, tmp_path):
    t = texts(3, 38)
    lines = [json.dumps({"id": 1, "text": t[0], "score": 3}).encode(),
             json.dumps({"id": 2, "text": t[1]}).encode(),
             json.dumps({"id": 3, "text": t[2], "score": "high"}).encode()]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    p = run(cli, tmp_path, inp, out="out.parquet", check=False)
    assert_one_line(p, f"output {tmp_path / 'out.parquet'}: field 'score' is string in row 3 of {src(inp)} but int64 "
                       f"in the rows before it; a Parquet column has one type (write .jsonl output instead)")
    assert not (tmp_path / "out.parquet").exists()
    run(cli, tmp_path, inp, out="out.jsonl")
    assert (tmp_path / "out.jsonl").read_bytes() == b"".join(x + b"\n" for x in lines)


# ---- inputs that yield no document

def test_text_field_in_no_row(cli, tmp_path):
    t = texts(3, 39)
    good = write_lines(tmp_path / "a.jsonl", [line(1, t[0])])
    inp = write_lines(tmp_path / "b.jsonl", [line(2, t[1]), json.dumps({"id": 3, "url": "u", "text": t[2]}).encode()])
    p = run(cli, tmp_path, good, inp, args=[*SUBSTRING, "--set", "input.text_field=body"], check=False)
    assert_one_line(p, f"input {src(good)}: no row has the text field 'body' (fields seen: id, text); "
                       f"set input.text_field")
    # a file where some rows have it is fine: the others are row errors
    both = write_lines(tmp_path / "c.jsonl", [json.dumps({"id": 1, "body": t[0]}).encode(), line(2, t[1])])
    cli("run", "--input", both, "--output", tmp_path / "o2.jsonl", "--workdir", tmp_path / "w2", *SUBSTRING,
        "--set", "input.text_field=body")
    assert input_errors(tmp_path / "w2") == [(src(both), 2, "missing text field 'body'")]


def test_text_field_seen_over_pieces():
    """What ingest keeps per piece of a file and merges in order: the field found in any
    piece is found; in none, the fields of all pieces are named, in order of appearance."""
    def piece(*objs, bad=0):
        seen = TextFieldSeen("body")
        for i, o in enumerate(objs):
            seen.add(parse_json_row(json.dumps(o).encode(), "f", i + 1, "body", "id"))
        for _ in range(bad):
            seen.add(parse_json_row(b"{not json", "f", 9, "body", "id"))
        return seen

    merged = TextFieldSeen("body")
    for p in (piece({"id": 1, "text": "a"}), piece({"url": "u"}, bad=2), piece({"id": 2, "body": None})):
        merged.update(p)
    merged.check("f")  # a null body is still the field: those are row errors
    merged = TextFieldSeen("body")
    for p in (piece({"id": 1, "text": "a"}), piece(bad=3), piece({"url": "u", "id": 2})):
        merged.update(p)
    with pytest.raises(SadedupError, match=r"^input f: no row has the text field 'body' \(fields seen: id, text, "
                                           r"url\); set input.text_field$"):
        merged.check("f")
    piece(bad=5).check("f")  # no row was an object: nothing says the field is wrong
    wide = piece(*({f"k{i}": i} for i in range(30)))
    with pytest.raises(SadedupError, match=r"\(fields seen: k0, k1, .*, k19, \.\.\.\)"):
        wide.check("f")


@pytest.mark.parametrize("name, kind, suffix", [("in.jsonl", "gzip", ".gz"), ("in.jsonl", "zstd", ".zst"),
                                                ("in.txt", "gzip", ".gz")])
def test_compressed_file_named_plain(cli, tmp_path, name, kind, suffix):
    """`gzip -c a.jsonl > a.jsonl` was read as text: every line an invalid-JSON row in
    input_errors, zero documents, exit 0. Now one line naming the file, before any work (also
    with --restart on a finished folder, which is then not emptied)."""
    import zstandard

    t = texts(2, 40)
    good = write_lines(tmp_path / "a.jsonl", [line(1, t[0])])
    data = line(2, t[1]) + b"\n"
    packed = gzip.compress(data) if kind == "gzip" else zstandard.ZstdCompressor().compress(data)
    inp = tmp_path / name
    inp.write_bytes(packed)
    p = run(cli, tmp_path, good, inp, check=False)
    assert_one_line(p, f"input {inp}: {kind}-compressed data in a file not named so; name it {name}{suffix} "
                       f"(it starts with {packed[:4]!r})")
    assert not (tmp_path / "w").exists()
    run(cli, tmp_path, good)
    p = run(cli, tmp_path, inp, args=[*SUBSTRING, "--restart"], check=False)
    assert p.returncode == 2 and "compressed data in a file not named so" in p.stderr
    assert db_rows(tmp_path / "w", "SELECT count(*) FROM documents") == [(1,)]


@pytest.mark.parametrize("name, kind", [("in.jsonl.gz", "gzip"), ("in.jsonl.zst", "zstd")])
def test_plain_file_named_compressed(cli, tmp_path, name, kind):
    t = texts(2, 40)
    good = write_lines(tmp_path / "a.jsonl", [line(1, t[0])])
    inp = write_lines(tmp_path / name, [line(2, t[1])])
    p = run(cli, tmp_path, good, inp, check=False)
    assert_one_line(p, f"input {inp}: not a {kind} file (it starts with b'{{\"id'); name it for what it holds")
    assert not (tmp_path / "w").exists()
    # inside a folder too
    d = tmp_path / "corpus"
    d.mkdir()
    inner = write_lines(d / name, [line(2, t[1])])
    p = run(cli, tmp_path, d, check=False)
    assert_one_line(p, f"input {inner}: not a {kind} file (it starts with b'{{\"id'); name it for what it holds")


def test_gzip_damaged_at_its_start(cli, tmp_path):
    """The gzip header is right but the data is not: no row can be read, which is the file's
    problem, not a row's."""
    t = texts(2, 41)
    good = write_lines(tmp_path / "a.jsonl", [line(1, t[0])])
    data = bytearray(gzip.compress(line(2, t[1]) + b"\n"))
    data[10:20] = b"\xff" * 10
    inp = tmp_path / "b.jsonl.gz"
    inp.write_bytes(bytes(data))
    p = run(cli, tmp_path, good, inp, check=False)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    (msg,) = p.stderr.strip().splitlines()
    assert msg.startswith(f"sadedup: error: input {src(inp)}: not a readable gzip file (")
    assert msg.endswith("): no row of it can be read")


# ---- JSON output: the input's own bytes outside the text

def test_cut_rows_keep_every_other_byte(cli, tmp_path):
    t = texts(6, 42)
    fresh = texts(5, 43, words=40)
    cuts = [quoting(t, f) for f in fresh]
    enc = [json.dumps(c[0]).encode() for c in cuts]
    lines = [
        line(0, t[0]),
        # numbers beyond a double: valid JSON, to be written as they were, never as Infinity
        b'{"id":1,"big":1e400,"neg":-1e400,"list":[1E+400,{"k":-1e400}],"text":' + enc[0] + b"}",
        # NaN and Infinity literals (Python's json takes them): kept as they are
        b'{"id": 2, "score": NaN, "inf": -Infinity, "text": ' + enc[1] + b"}",
        # a lone surrogate in another field, and a field escaped differently than json.dumps would
        b'{"id": 3, "note": "caf\\u00e9 \\ud800", "text": ' + enc[2] + b', "after": "\\/"}',
        # the text field twice: the last one is the text (as json.loads reads it), its key escaped
        b'{"text": "a decoy", "id": 4, "te\\u0078t": ' + enc[3] + b"}",
        # odd spacing around the text
        b'{ "id" : 5 ,\t"text"\t:\t' + enc[4] + b" , \"z\" : [ ] }",
        line(6, t[1]),
    ]
    inp = write_lines(tmp_path / "in.jsonl", lines)
    run(cli, tmp_path, inp)
    assert input_errors(tmp_path / "w") == []
    got = (tmp_path / "out.jsonl").read_bytes().split(b"\n")[:-1]
    # the quote is cut from each (a little more where the fresh texts end alike)
    spans = dict(db_rows(tmp_path / "w", "SELECT doc_id, char_start FROM spans WHERE char_end = ?",
                         (len(cuts[0][0]),)))
    assert sorted(spans) == [1, 2, 3, 4, 5] and all(spans[i] <= len(cuts[i - 1][1]) for i in spans)
    want = [lines[0]] + [x.replace(e, json.dumps(c[0][:spans[i + 1]], ensure_ascii=False).encode())
                         for i, (x, e, c) in enumerate(zip(lines[1:6], enc, cuts))] + [lines[6]]
    assert want[4].startswith(b'{"text": "a decoy"')  # the decoy stays
    assert got == want


def test_parquet_nan_and_infinity_to_jsonl_are_null(cli, tmp_path):
    t = texts(4, 44)
    inp = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3, 4], "text": t, "score": [math.nan, math.inf, -math.inf, 0.5],
                             "v": [[math.nan, 1.0], [], None, [2.0]]}), inp)
    run(cli, tmp_path, inp)
    got = [strict_json(x) for x in (tmp_path / "out.jsonl").read_bytes().splitlines()]
    assert got == [{"id": 1, "text": t[0], "score": None, "v": [None, 1.0]},
                   {"id": 2, "text": t[1], "score": None, "v": []},
                   {"id": 3, "text": t[2], "score": None, "v": None},
                   {"id": 4, "text": t[3], "score": 0.5, "v": [2.0]}]


# the splice itself, on rows json.loads reads

_keys = st.sampled_from(["id", "url", "text", "te\\u0078t", "meta", "t\\\"x", "\\u00e9"])
_scalars = st.sampled_from([b"1", b"-0.5e-3", b"1e400", b"NaN", b"-Infinity", b"true", b"null", b'"a\\"b"',
                            b'"\\ud800"', b'"caf\xc3\xa9"', b'"{[\\\\"'])
_ws = st.sampled_from([b"", b" ", b"\t", b"\r\n  "])


@st.composite
def _values(draw, depth=0):
    if depth > 2 or draw(st.booleans()):
        return draw(_scalars)
    items = draw(st.lists(_values(depth + 1), max_size=3))
    if draw(st.booleans()):
        return b"[" + b",".join(draw(_ws) + v + draw(_ws) for v in items) + b"]"
    return b"{" + b",".join(b'"' + draw(_keys).encode() + b'":' + draw(_ws) + v for v in items) + b"}"


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_splice_replaces_exactly_the_text_value(data):
    """Any row json.loads reads (NaN, numbers beyond a double, escaped and repeated keys, a
    "text" key inside nested values, any spacing): only the last top-level text value changes."""
    def is_text(k: str) -> bool:
        return json.loads(f'"{k}"') == "text"

    keys = data.draw(st.lists(_keys, min_size=1, max_size=6))
    if not any(map(is_text, keys)):
        keys.insert(data.draw(st.integers(0, len(keys))), data.draw(st.sampled_from(["text", "te\\u0078t"])))
    members = []  # (before the value, the value, after it)
    for k in keys:
        if is_text(k):
            v = json.dumps(data.draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)),
                           ensure_ascii=data.draw(st.booleans())).encode()
        else:
            v = data.draw(_values())
        members.append((data.draw(_ws) + b'"' + k.encode() + b'"' + data.draw(_ws) + b":" + data.draw(_ws), v,
                        data.draw(_ws)))
    lead, trail = data.draw(_ws), data.draw(_ws)

    def row(ms):
        return lead + b"{" + b",".join(a + v + b for a, v, b in ms) + b"}" + trail

    raw = row(members)
    obj = json.loads(raw)
    new = data.draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30))
    last = max(i for i, k in enumerate(keys) if is_text(k))
    members[last] = (members[last][0], json.dumps(new, ensure_ascii=False).encode(), members[last][2])
    out = splice_text(raw, "text", new)
    assert out == row(members)
    assert json.dumps(json.loads(out)) == json.dumps(obj | {"text": new})


@pytest.mark.parametrize("block", [1, 2, 5, 4096])
def test_jsonl_rows_across_read_blocks(tmp_path, monkeypatch, block):
    """An uncompressed JSONL file is read in blocks split at line feeds: a line cut by a
    block's end, a BOM, CR line ends, blank and whitespace-only lines and a last line without
    a line feed give the rows (numbers and bytes) that reading line by line gives, over the
    whole file and over pieces of it."""
    from sadedup import readers

    data = (b"\xef\xbb\xbf" + line(1, "a") + b"\r\n\n  \t\n" + line(4, "x" * 50) + b"\r\r\n\r\n"
            + b"\xef\xbb\xbf" + line(7, "b") + b"\n" + line(8, "c"))
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    want = []
    for row, raw in enumerate(data.split(b"\n"), 1):  # the rows as documented: one per line feed
        raw = raw.removeprefix(b"\xef\xbb\xbf").rstrip(b"\r")
        if raw.strip():
            want.append((row, raw))
    monkeypatch.setattr(readers, "_BLOCK", block)
    inp = detect(path)
    assert [(r.row, r.raw) for r in readers.jsonl_lines(inp)] == want
    pieces = readers.line_pieces(inp, 3)
    assert len(pieces) == 3
    assert [(r.row, r.raw) for p in pieces for r in readers.jsonl_lines(inp, piece=p)] == want
    assert [r.row for r in readers.read_records(inp, "text", "id")] == [1, 4, 6, 7]


@pytest.mark.parametrize("block", [1, 2, 5, 4096])
def test_kept_rows_copied_in_blocks_are_the_rows_as_read(tmp_path, monkeypatch, block):
    """Export's copy of kept JSONL rows a block of lines at a time (readers.jsonl_kept,
    native/jsonl.c) writes the lines jsonl_lines gives for the same documents, each with a
    line feed, over the whole file and over pieces of it: lines cut by a block's end, BOMs,
    CR line ends, blank and whitespace-only lines (vertical tab and form feed too), a row that
    is no document (set aside), a last line without a line feed; a document whose row the file
    no longer has is where the matching stops."""
    from sadedup import readers

    data = (b"\xef\xbb\xbf" + line(1, "a") + b"\r\n\n  \t\n" + line(4, "x" * 50) + b"\r\r\n\r\n"
            + b"\xef\xbb\xbf" + line(7, "b") + b"\n\x0b\x0c \r\n{not json\n" + line(10, " y ") + b"\n"
            + b"\xef\xbb\xbf\r\n" + line(12, "c"))
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(readers, "_BLOCK", block)
    inp = detect(path)

    def copy(docs, keep, piece=None):
        got = []
        matched, lines = readers.jsonl_kept(inp, np.array([r for r, _ in docs], dtype=np.int64),
                                            np.array(keep, dtype=np.int64), lambda mv, n: got.append((bytes(mv), n)),
                                            piece=piece)
        assert sum(n for _, n in got) == lines == sum(keep[:matched])
        return matched, b"".join(b for b, _ in got)

    def want(docs, keep):
        return b"".join(raw + b"\n" for (_, raw), k in zip(docs, keep) if k)

    docs = [(r.row, r.raw) for r in readers.jsonl_lines(inp) if not r.raw.startswith(b"{not")]
    assert [r for r, _ in docs] == [1, 4, 6, 9, 11]
    for keep in ([1, 0, 1, 1, 0], [0, 1, 0, 0, 1], [1] * 5, [0] * 5):
        assert copy(docs, keep) == (len(docs), want(docs, keep))
        pieces, at, got = readers.line_pieces(inp, 3), 0, b""
        for p in pieces:
            rows = {r.row for r in readers.jsonl_lines(inp, piece=p)}
            mine = [d for d in docs if d[0] in rows]
            matched, out = copy(mine, keep[at:at + len(mine)], p)
            assert matched == len(mine)
            got, at = got + out, at + len(mine)
        assert got == want(docs, keep)
    assert copy(docs + [(12, b"")], [1] * 6) == (len(docs), want(docs, [1] * 5))  # row 12 is gone
    for blank in (2, 3, 5, 7, 10):  # blank or whitespace only: no document comes from there
        assert copy([docs[0], (blank, b""), docs[1]], [1, 1, 1])[0] == 1


# ---- ingest's native reading of JSONL rows (readers.jsonl_documents, native/jsonl_docs.c)

def _rows_as_read(inp, limit: int) -> list[tuple]:
    """What ingest makes of every row read one by one (read_records): (row, ext_id, characters,
    text bytes) per document, (row, error) per row set aside."""
    from sadedup.readers import json_ext_id, read_records

    out = []
    for rec in read_records(inp, "text", "id"):
        data = rec.text.encode("utf-8") if rec.error is None else b""
        out.append((rec.row, rec.error) if rec.error is not None else (rec.row, "over") if len(data) > limit
                   else (rec.row, json_ext_id(rec.ext_id), len(rec.text), data))
    return out


def _rows_in_blocks(inp, limit: int, piece=None) -> list[tuple]:
    from sadedup.readers import Record, jsonl_documents, json_ext_id

    out = []
    for item in jsonl_documents(inp, "text", "id", limit, piece=piece):
        if isinstance(item, Record):
            data = item.text.encode("utf-8") if item.error is None else b""
            out.append((item.row, item.error) if item.error is not None else (item.row, "over") if len(data) > limit
                       else (item.row, json_ext_id(item.ext_id), len(item.text), data))
            continue
        texts, docs = item
        at = 0
        for row, ext, nc, nb in docs:
            out.append((row, ext, nc, bytes(texts[at:at + nb])))
            at += nb
        assert at == len(texts)
    return out


_SPECIAL = st.sampled_from(["", "a\"b", "back\\slash", "tab\there", "nul\x00", "\u2028", "é", "\U0001F600", "text", "id",
                            "\udc00", "a\ud800", "\ud800\udc00", "\udbff\udfff!", "\ud83dx"])
_JSON_STRINGS = st.one_of(st.text(max_size=12), _SPECIAL)  # any code point, surrogates too (json.dumps escapes them)


def _json_value(draw, depth: int = 0) -> bytes:
    """A JSON value; one in eight or so is not valid JSON, or not valid UTF-8, or holds what
    only Python's json reads (unpaired surrogates)."""
    if draw(st.integers(0, 7)) == 0:  # raw bytes inside a string, numbers and words JSON does not have
        return draw(st.sampled_from([b'"\xff"', b'"\xc0\x80"', b'"\xed\xa0\x80"', b'"\xf4\x90\x80\x80"', b'"\xe2\x82"',
                                     b'"\x01"', b'"\\x41"', b'"\\u12"', b'"\\ud800"', b'"\\udc00x"', b'"\\ud800\\u0041"',
                                     b"NaN", b"Infinity", b"01", b"1.", b"-", b"0x1", b"tru", b"None", b"[1,]", b"{,}"]))
    kind = draw(st.integers(0, 7 if depth < 3 else 4))
    if kind == 0:
        return json.dumps(draw(_JSON_STRINGS), ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    if kind == 1:
        return str(draw(st.integers(-(1 << 70), 1 << 70) | st.integers(-100, 100))).encode()
    if kind == 2:
        return draw(st.sampled_from([b"1.5", b"-0", b"-0.0", b"1e5", b"1E+400", b"123456789012345678",
                                     b"-123456789012345678", b"1234567890123456789", b"true", b"false", b"null"]))
    if kind == 3:  # escapes and characters spelled in every way JSON allows
        return b'"' + b"".join(draw(st.lists(st.sampled_from([b"w", b" ", b"\\u00e9", "é".encode(), b"\\n", b"\\\\",
                                                               b'\\"', b"\\/", b"\\ud83d\\ude00", b"\\uD83D\\uDE00",
                                                               b"\\u0000", b"\\b\\f\\r\\t", b"\\u20AC"]),
                                             max_size=20))) + b'"'
    if kind == 4:
        return draw(st.sampled_from([b"[]", b"{}", b"[ ]", b'{"a": [1, {"b": null}]}']))
    if kind in (5, 6):
        return b"[" + b",".join(_json_value(draw, depth + 1) for _ in range(draw(st.integers(0, 3)))) + b"]"
    return b"{" + b",".join(json.dumps(draw(_JSON_STRINGS)).encode() + b":" + _json_value(draw, depth + 1)
                            for _ in range(draw(st.integers(0, 3)))) + b"}"


@st.composite
def _jsonl_line(draw) -> bytes:
    if draw(st.integers(0, 19)) == 0:
        return draw(st.sampled_from([b"", b"  \t", b"\x0b\x0c", b"[1, 2]", b"\"text\"", b"{}", b"{\"text\": \"a\"} x",
                                     b"{\"text\": \"a\",}", b"{'text': 'a'}", b"{\"text\": \"a\"}}", b"{\"text\" \"a\"}",
                                     b"\x0c{\"text\": \"a\"}", b"[" * 70 + b"]" * 70,
                                     b"{\"text\": \"a\", \"x\": " + b"[" * 70 + b"]" * 70 + b"}"]))
    keys = draw(st.lists(st.sampled_from([b'"text"', b'"id"', b'"other"', b'"te\\u0078t"', b'"i\\u0064"', b'"Text"',
                                          b'"t"']), max_size=5))
    if b'"text"' not in keys and draw(st.integers(0, 3)):
        keys.insert(draw(st.integers(0, len(keys))), b'"text"')
    members = []
    for k in keys:
        v = _json_value(draw) if k != b'"text"' or draw(st.integers(0, 3)) == 0 else \
            json.dumps(draw(_JSON_STRINGS if draw(st.booleans()) else _SPECIAL),
                       ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
        ws = draw(st.sampled_from([b"", b" ", b"\t", b"\r", b" \n "]))
        members.append(k + ws + b":" + ws + v)
    lead, trail = draw(st.sampled_from([b"", b" ", b"\xef\xbb\xbf", b"\xef\xbb\xbf "])), \
        draw(st.sampled_from([b"", b" ", b"\r", b"\r\r", b"\t\r"]))
    return lead + b"{" + b",".join(members) + b"}" + trail


@settings(max_examples=300, deadline=None)
@given(st.lists(_jsonl_line(), min_size=1, max_size=16), st.sampled_from([1 << 40, 3]), st.sampled_from([1, 7, 4096]),
       st.booleans())
def test_native_rows_are_the_rows_read_one_by_one(tmp_path_factory, lines, limit, block, final_newline):
    """Ingest's block reading of uncompressed JSONL (readers.jsonl_documents: native/jsonl_docs.c
    takes the rows it can, Python the rest) gives every row as reading them one by one does:
    the same documents (row, ext_id, characters, UTF-8 text) and the same errors, over strict
    and broken JSON, escapes and surrogates (paired, unpaired, as UTF-8), invalid UTF-8,
    control characters, duplicate and escaped keys, ids of every kind (big integers, floats,
    -0, booleans, objects), nesting deeper than the native path goes, BOMs, CRs, blank lines,
    texts over the size limit, lines cut by the read blocks, whole files and pieces."""
    from sadedup import readers

    path = tmp_path_factory.mktemp("rows") / "in.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if final_newline else b""))
    inp = detect(path)
    orig = readers._BLOCK
    readers._BLOCK = block
    try:
        want = _rows_as_read(inp, limit)
        assert _rows_in_blocks(inp, limit) == want
        if path.stat().st_size:
            pieces = readers.line_pieces(inp, 3)
            assert [r for p in pieces for r in _rows_in_blocks(inp, limit, piece=p)] == want
    finally:
        readers._BLOCK = orig


_TRICKY_ROWS = [
    b'{"text": "a", "id": 1}', b'{"id": "x", "text": "\\u00e9\\ud83d\\ude00\\n\\"\\\\\\/\\b\\f\\r\\t\\u0000"}',
    b'{"text": "\\udc00"}', b'{"text": "a\\ud800"}', b'{"text": "\\ud800\\u0041"}', b'{"text": "\\ud800\\ud800\\udc00"}',
    b'{"text": "a", "id": "\\udc00"}', b'{"text": "a", "other": "\\ud800"}', b'{"text": "a", "text": "b"}',
    b'{"text": "a", "text": 1}', b'{"text": 1, "text": "a"}', b'{"text": "a", "id": 1, "id": 2}', b'{"te\\u0078t": "a"}',
    b'{"text": "a", "i\\u0064": 1}', b'{"text": "a", "id": 123456789012345678}', b'{"text": "a", "id": 1234567890123456789}',
    b'{"text": "a", "id": 99999999999999999999999}', b'{"text": "a", "id": -0}', b'{"text": "a", "id": 1.0}',
    b'{"text": "a", "id": 1e2}', b'{"text": "a", "id": true}', b'{"text": "a", "id": false}', b'{"text": "a", "id": null}',
    b'{"text": "a", "id": {"k": 1}}', b'{"text": "a", "id": [1]}', b'{"text": "a", "x": NaN}', b'{"text": "a", "x": 1.5}',
    b'{"text": "a", "x": ' + b"[" * 63 + b"]" * 63 + b"}", b'{"text": "a", "x": ' + b"[" * 64 + b"]" * 64 + b"}",
    b'{"text": "a", "x": ' + b"[" * 2000 + b"]" * 2000 + b"}", b'{"text": "\xc0\x80"}', b'{"text": "\xed\xa0\x80"}',
    b'{"text": "\xf4\x90\x80\x80"}', b'{"text": "\xe2\x82"}', b'{"text": "\xf0\x9f\x98\x80 \xe2\x82\xac \xc3\xa9"}',
    b'{"text": "a\x01"}', b'{"text": "a\tb"}', b'{"text": "a"} x', b'{"text": "a",}', b'{"text": "a"}}', b'{"text" "a"}',
    b'{"text": "\\x41"}', b'{"text": "\\u12"}', b'\x0c{"text": "a"}', b'{"text": "a"}\x0c', b' \t{"text" :\r"a" }\t ',
    b'{"text": "12345"}', b'{"text": "1234"}', b'{"text": "\\u00e9\\u00e9"}', b"{}", b"[]", b'"text"', b"null",
    b'{"text": "a", "x": "\xff"}', b'{"text": "a", "x": 01}', b'{"text": "a", "x": -}', b'{"text": "a", "x": tru}',
    b'{"Text": "a"}', b'{"text": ""}', b'{"text": "a", "x": {"y": [1, 2, {"z": null}], "w": "\\ud83d\\ude00"}}',
]


@pytest.mark.parametrize("limit", [1 << 40, 4])
def test_native_rows_tricky_lines(tmp_path, limit):
    """Rows at the edges of what native/jsonl_docs.c takes, each as read one by one: unpaired
    surrogate escapes in the text, the id and other fields, duplicate and escaped keys, ids of
    every kind (18 and 19 digits, beyond 64 bits, -0, floats, booleans, objects), NaN, nesting
    at, past and far past the native limit, overlong and surrogate UTF-8, control characters,
    text after the object, texts at and over the size limit (4 bytes; é is two)."""
    from sadedup import readers

    path = tmp_path / "in.jsonl"
    for row in _TRICKY_ROWS:
        path.write_bytes(b'{"text": "before"}\n' + row + b'\n{"text": "after"}\n')
        inp = detect(path)
        assert _rows_in_blocks(inp, limit) == _rows_as_read(inp, limit), row
    path.write_bytes(b"\n".join(_TRICKY_ROWS) + b"\n")
    inp = detect(path)
    want = _rows_as_read(inp, limit)
    assert _rows_in_blocks(inp, limit) == want
    assert sum(1 for r in want if len(r) == 4) > 10 and sum(1 for r in want if len(r) == 2) > 10
