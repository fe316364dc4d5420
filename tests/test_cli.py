"""The real `sadedup` command on real files: formats, accounting, status, sql, explain, errors."""
from __future__ import annotations

import gzip
import json
import os
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from corpus import planted_corpus, write_jsonl
from helpers import db_rows, read_jsonl

# --workers 1: these runs are a few documents, and a pool of two would cost more than the run
# (two processes importing sadedup, ~2.5 s of CPU a command); the pool itself is exercised by
# test_cli's piece tests, test_substring_semantics, test_sequences' interrupts, test_dask and
# test_conventions' worker count
SUBSTRING = ["--set", "stages=substring", "--set", "substring.min_length=20", "--workers", "1"]

COMMANDS = ["run", "ingest", "exact", "minhash", "tokenize", "build", "repeats", "remove", "export", "status", "sql", "explain"]


def docs_fixture(n=60, seed=3):
    return planted_corpus(random.Random(seed), n, 400)


def test_every_command_has_help(cli, command_help):
    top = cli("--help").stdout  # at the default width
    for c in COMMANDS:
        assert c in top
        out = command_help(c)  # each command's, as test_conventions reads it too
        assert "Usage" in out and len(out) > 200, c


def test_accounting_and_formats(cli, tmp_path):
    docs = docs_fixture()
    inp = write_jsonl(tmp_path / "in.jsonl", docs)
    cli("run", "--input", inp, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w", *SUBSTRING)
    kept = db_rows(tmp_path / "w", "SELECT ext_id FROM documents WHERE status = 'kept' ORDER BY doc_id")
    rows = read_jsonl(tmp_path / "out.jsonl")
    assert [r["id"] for r in rows] == [k[0] for k in kept]
    assert len(db_rows(tmp_path / "w", "SELECT doc_id FROM documents")) == len(docs)
    # the same corpus as .gz, .zst and Parquet gives the same decisions, in its own format
    raw = inp.read_bytes()
    (tmp_path / "in.jsonl.gz").write_bytes(gzip.compress(raw))
    (tmp_path / "in.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(raw))
    pq.write_table(pa.Table.from_pylist([json.loads(l) for l in raw.splitlines()]), tmp_path / "in.parquet",
                   row_group_size=17)
    base = [(r["id"], r["text"]) for r in rows]
    for name, out in (("in.jsonl.gz", "out.jsonl.gz"), ("in.jsonl.zst", "out.jsonl.zst"), ("in.parquet", "out.parquet")):
        w = tmp_path / f"w-{name}"
        cli("run", "--input", tmp_path / name, "--output", tmp_path / out, "--workdir", w, *SUBSTRING)
        if out.endswith(".parquet"):
            got = pq.read_table(tmp_path / out).to_pylist()
            assert pq.read_table(tmp_path / out).schema.names == pq.read_table(tmp_path / "in.parquet").schema.names
        elif out.endswith(".gz"):
            got = [json.loads(l) for l in gzip.decompress((tmp_path / out).read_bytes()).splitlines()]
        else:
            got = [json.loads(l) for l in zstandard.ZstdDecompressor().stream_reader(
                (tmp_path / out).read_bytes()).read().splitlines()]
        assert [(r["id"], r["text"]) for r in got] == base, name
        assert all(r["meta"]["n"] == int(r["id"][1:]) for r in got)


def test_bad_rows_are_quarantined(cli, tmp_path):
    good = "a perfectly fine document " * 3
    lines = [
        "\ufeff" + json.dumps({"id": 1, "text": good}),           # 1: BOM, fine
        "{not json",                                              # 2
        json.dumps({"id": 3}),                                    # 3: no text
        json.dumps({"id": 4, "text": None}),                      # 4
        json.dumps({"id": 5, "text": 17}),                        # 5
        "",                                                       # 6: blank, skipped
        '{"id": 7, "text": "bad \\ud800 surrogate"}',             # 7
        json.dumps([1, 2]),                                       # 8
        json.dumps({"id": 9, "text": ""}),                        # 9: empty is a document
        json.dumps({"id": 10, "text": "   "}),                    # 10: whitespace too
        json.dumps({"id": 1, "text": "other words, same id"}),   # 11: duplicate id is fine
    ]
    data = "\r\n".join(lines).encode("utf-8") + b"\n" + b'{"id": 12, "text": "\xff\xfe"}\n'
    inp = tmp_path / "in.jsonl"
    inp.write_bytes(data)
    p = cli("run", "--input", inp, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w", *SUBSTRING)
    errors = db_rows(tmp_path / "w", "SELECT source_row, error FROM input_errors ORDER BY source_row")
    assert [e[0] for e in errors] == [2, 3, 4, 5, 7, 8, 12]
    reasons = dict(errors)
    assert reasons[3] == "missing text field 'text'"
    assert reasons[4] == "text field 'text' is null, not a string"
    assert reasons[5] == "text field 'text' is int, not a string"
    assert reasons[7] == "text has an unpaired surrogate at character 4"
    assert reasons[8] == "not a JSON object but list"
    assert reasons[12].startswith("invalid UTF-8")
    assert reasons[2].startswith("invalid JSON")
    docs = db_rows(tmp_path / "w", "SELECT source_row, ext_id FROM documents ORDER BY doc_id")
    assert [d[0] for d in docs] == [1, 9, 10, 11]
    out = read_jsonl(tmp_path / "out.jsonl")
    assert [r["id"] for r in out] == [1, 9, 10, 1]
    assert "7 row(s) set aside" in p.stderr


def test_sql_is_read_only_and_formats(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", docs_fixture(20))
    cli("run", "--input", inp, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w", *SUBSTRING)
    for stmt in ("DELETE FROM documents", "DROP TABLE spans", "UPDATE documents SET status = 'x'",
                 "INSERT INTO runs (command) VALUES ('x')"):
        p = cli("sql", tmp_path / "w", stmt, check=False)
        assert p.returncode != 0 and "read-only" in p.stderr and "Traceback" not in p.stderr
        assert len(p.stderr.strip().splitlines()) == 1
    assert db_rows(tmp_path / "w", "SELECT count(*) FROM documents")[0][0] == 20
    out = cli("sql", tmp_path / "w", "SELECT doc_id, status FROM documents ORDER BY doc_id LIMIT 3", "--format", "json")
    assert [r["doc_id"] for r in json.loads(out.stdout)] == [0, 1, 2]
    out = cli("sql", tmp_path / "w", "SELECT count(*) AS n FROM documents", "--format", "csv")
    assert out.stdout.splitlines() == ["n", "20"]


def test_explain_and_status(cli, tmp_path):
    passage = "This passage is shared by two documents and is long enough to be a duplicate."
    docs = ["First document. " + passage, "Second one, unrelated text here.", "Third, with a longer introduction of its own words: " + passage + " And a new ending."]
    inp = write_jsonl(tmp_path / "in.jsonl", docs)
    cli("run", "--input", inp, "--output", tmp_path / "out.jsonl", "--workdir", tmp_path / "w", *SUBSTRING)
    out = cli("explain", tmp_path / "w", "d2").stdout
    assert "kept, cut in 1 place(s)" in out and "duplicates document 0" in out
    assert passage[:40] in out
    out = cli("explain", tmp_path / "w", "1").stdout
    assert "document 1" in out and "kept" in out
    p = cli("explain", tmp_path / "w", "nope", check=False)
    assert p.returncode != 0 and "no document with doc_id or id 'nope'" in p.stderr
    st = cli("status", tmp_path / "w").stdout
    for stage in ("ingest", "tokenize", "build", "repeats", "remove", "export"):
        assert stage in st
    assert "pending: nothing" in st


def test_stage_by_stage_equals_run(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", docs_fixture(40))
    cli("run", "--input", inp, "--output", tmp_path / "a.jsonl", "--workdir", tmp_path / "w1", *SUBSTRING)
    w = tmp_path / "w2"
    cli("ingest", "--input", inp, "--workdir", w, *SUBSTRING)
    st = cli("status", w).stdout
    assert "pending: tokenize" in st
    for stage in ("tokenize", "build", "repeats", "remove"):
        cli(stage, w)
    cli("export", w, "--output", tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    # remove under another drop rule, then the default one again (--set is kept for the
    # next command): the spans are replaced, not added to, and their indexes rebuilt
    spans = db_rows(w, "SELECT * FROM spans ORDER BY span_id")
    cli("remove", w, "--set", "substring.drop_fraction=0.99")
    assert db_rows(w, "SELECT * FROM spans ORDER BY span_id") != spans
    cli("remove", w, "--set", "substring.drop_fraction=0.8")
    assert db_rows(w, "SELECT * FROM spans ORDER BY span_id") == spans
    indexes = db_rows(w, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'spans'")
    assert sorted(i[0] for i in indexes) == ["spans_doc", "spans_src"]


@pytest.mark.parametrize("args, message", [
    (["--set", "substring.nope=1"], "unknown workflow key 'substring.nope'"),
    (["--set", "substring.min_length=0x"], "substring.min_length: expects a whole number"),
    (["--set", "substring.drop_fraction=1.5"], "substring.drop_fraction: must be in (0, 1]"),
    (["--set", "substring.keep=last"], "substring.keep: must be first or none"),
    (["--set", "minhash.bands=20"], "exceeds minhash.num_perm"),
    (["--set", "stages=substring,exact"], "stages: must be in the order"),
    (["--set", "substring.shard_tokens=1000000000000"], "substring.shard_tokens=1000000000000 needs more memory"),
])
def test_configuration_errors_are_one_line(cli, tmp_path, args, message):
    inp = write_jsonl(tmp_path / "in.jsonl", ["x"])
    p = cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", *args, check=False)
    assert p.returncode != 0
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert not (tmp_path / "w" / "ingest").exists()


def test_run_level_errors(cli, tmp_path):
    p = cli("run", "--input", tmp_path / "missing.jsonl", "--output", tmp_path / "o.jsonl", "--workdir",
            tmp_path / "w", check=False)
    assert p.returncode != 0 and "missing.jsonl: no such file or folder" in p.stderr
    inp = write_jsonl(tmp_path / "in.jsonl", ["x"])
    p = cli("run", "--input", inp, "--output", tmp_path / "w" / "o.jsonl", "--workdir", tmp_path / "w", check=False)
    assert p.returncode != 0 and "inside the work folder" in p.stderr
    p = cli("status", tmp_path / "nowhere", check=False)
    assert p.returncode != 0 and "not a sadedup work folder" in p.stderr


def test_status_names_a_failed_stage_and_its_reason(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", docs_fixture(10))
    w = tmp_path / "w"
    cli("ingest", "--input", inp, "--workdir", w, *SUBSTRING)
    for stage in ("tokenize", "build", "repeats", "remove"):
        cli(stage, w)
    # an output folder that does not exist is refused before any work: nothing is marked
    p = cli("export", w, "--output", tmp_path / "missing" / "out.jsonl", check=False)
    assert p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1 and "does not exist" in p.stderr
    assert "pending: export (pending: not run yet)" in cli("status", w).stdout
    # an input changed under the work folder refuses the export before it starts, and says why;
    # status says it of ingest, from which every stage after it is stale
    os.utime(inp, ns=(1, 1))
    p = cli("export", w, "--output", tmp_path / "out.jsonl", check=False)
    assert p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1
    why = f"inputs changed since work folder {w} was made ({inp} was modified)"
    assert why in p.stderr
    st = cli("status", w).stdout
    assert f"pending: ingest (stale: {why}" in " ".join(st.split())
    assert "tokenize (stale: ingest is not current)" in st


def test_memory_budget_sets_the_shard_size(cli, tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", docs_fixture(30) * 400)
    cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w", *SUBSTRING,
        "--memory-budget", f"{(128 << 20) + (16 << 20)}B", "--workers", "1")
    detail = json.loads(db_rows(tmp_path / "w", "SELECT detail FROM stages WHERE stage = 'tokenize' AND shard = -1")[0][0])
    assert detail["shard_tokens"] == (16 << 20) // 14 and detail["shards"] > 1
    p = cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w2", *SUBSTRING,
            "--memory-budget", "lots", check=False)
    assert p.returncode != 0 and "run.memory_budget: 'lots' is not a size" in p.stderr
    p = cli("run", "--input", inp, "--output", tmp_path / "o.jsonl", "--workdir", tmp_path / "w2", *SUBSTRING,
            "--memory-budget", "100MB", "--workers", "2", check=False)
    assert p.returncode != 0 and "run.memory_budget=100MB is too small" in p.stderr


def awkward_inputs(tmp_path):
    """A folder of two JSONL files, the first with bad rows, blank lines and CRLF ends."""
    docs = docs_fixture(80)
    first = write_jsonl(tmp_path / "a.jsonl", docs[:50]).read_bytes().splitlines(keepends=True)
    lines = []
    for i, line in enumerate(first):
        lines.append(line.replace(b"\n", b"\r\n") if i % 7 == 3 else line)
        if i % 11 == 5:
            lines.append(b"{not json\n" if i % 2 else b"\n")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_bytes(b"".join(lines))
    write_jsonl(tmp_path / "in" / "b.jsonl", docs[50:])
    return tmp_path / "in"


class InlineAsTwo:
    """Runs tasks in this process (so module constants can be patched) but plans for two
    workers, as the pool would."""
    workers = 2

    def imap(self, tasks):
        from sadedup.executor import InlineExecutor
        yield from reversed(list(InlineExecutor().imap(tasks)))  # out of order, as a pool may

    def close(self, abort: bool = False) -> None:
        pass


def piece_executor(pool: str, monkeypatch, module, constant: str):
    """A pool of two processes, or InlineAsTwo with `module.constant` (rows per chunk or
    block) set to a few, so that the pieces' rows go back and forth in several chunks."""
    from sadedup.executor import LocalExecutor

    if pool == "processes":
        return LocalExecutor(2)
    monkeypatch.setattr(module, constant, 3)
    return InlineAsTwo()


@pytest.mark.parametrize("pool", ["processes", "inline, small chunks"])
def test_ingest_in_pieces_equals_one_piece(cli, tmp_path, monkeypatch, pool):
    """Uncompressed JSONL is read in pieces: the documents, their rows, the rows set aside
    and texts.bin are those of reading it in one piece, on worker processes, and inline with
    pieces finishing in reverse and rows passed back a few at a time."""
    from sadedup.stages import ingest
    from sadedup.stages.base import Context
    from sadedup.stages.ingest import Ingest
    from sadedup.workspace import Workspace

    inp = awkward_inputs(tmp_path)
    w = tmp_path / "w"
    cli("ingest", "--input", inp, "--workdir", w, "--workers", "1")

    def state():
        return (db_rows(w, "SELECT * FROM documents ORDER BY doc_id"),
                db_rows(w, "SELECT source, source_row, error FROM input_errors ORDER BY source, source_row"),
                (w / "ingest" / "texts.bin").read_bytes(), (w / "ingest" / "offsets.npy").read_bytes())

    one = state()
    assert one[1] and len(one[0]) == 80
    executor = piece_executor(pool, monkeypatch, ingest, "ROWS_PER_CHUNK")
    try:
        detail = Ingest(piece_bytes=3000).run(Context(Workspace(w), executor, force=True))
    finally:
        executor.close()
    assert state() == one and detail["documents"] == 80
    assert not list((w / "ingest").glob("*.part"))


@pytest.mark.parametrize("pool", ["processes", "inline, small blocks"])
def test_export_in_pieces_equals_one_piece(cli, tmp_path, monkeypatch, pool):
    """Uncompressed JSONL is exported in pieces and joined: the bytes are those of one piece,
    with bad rows, blank lines, CRLF ends and a second file in the way; on worker processes,
    and inline with the decisions read back a few rows at a time."""
    from sadedup.stages import export
    from sadedup.stages.base import Context
    from sadedup.stages.export import Export
    from sadedup.workspace import Workspace

    inp = awkward_inputs(tmp_path)
    w = tmp_path / "w"
    cli("run", "--input", inp, "--output", tmp_path / "one.jsonl", "--workdir", w, "--workers", "1",
        *SUBSTRING)
    assert db_rows(w, "SELECT count(*) FROM input_errors")[0][0] > 0
    assert db_rows(w, "SELECT count(*) FROM spans")[0][0] > 0
    ws = Workspace(w)
    executor = piece_executor(pool, monkeypatch, export, "ROWS_BLOCK")
    try:
        for name in ("pieces.jsonl", "pieces.jsonl.gz"):
            detail = Export(tmp_path / name, piece_bytes=3000).run(Context(ws, executor, force=True))
            assert detail["pieces"] > 4
            got = (tmp_path / name).read_bytes()
            assert (gzip.decompress(got) if name.endswith(".gz") else got) == (tmp_path / "one.jsonl").read_bytes()
            assert not (tmp_path / f".{name}.sadedup-parts").exists() and not (w / "export.partial").exists()
            assert sorted(p.name for p in tmp_path.iterdir() if "pieces" in p.name) == sorted(
                n for n in ("pieces.jsonl", "pieces.jsonl.gz") if (tmp_path / n).exists())
    finally:
        executor.close()


class InOrderWatched:
    """Runs tasks in this process one after another, in order, planning for two workers;
    before each task it notes the part files the tasks before it wrote that are still there."""
    workers = 2

    def __init__(self) -> None:
        self.left: list[list[str]] = []

    def imap(self, tasks):
        from sadedup.executor import InlineExecutor

        for i, task in enumerate(tasks):
            self.left.append([t.parts[0] for t in tasks[:i] if Path(t.parts[0]).exists()])
            yield from ((i, r) for _, r in InlineExecutor().imap([task]))

    def close(self, abort: bool = False) -> None:
        pass


def test_export_appends_each_part_before_the_next_is_written(cli, tmp_path):
    """Export's parts are appended to the output as soon as every part before them is in,
    not joined after the last one: when a task starts, the parts before it are already in
    the output (and removed), so the driver's copy overlaps the workers' parts and no whole
    output is copied after the last task. The output is the one-piece output."""
    from sadedup.stages.base import Context
    from sadedup.stages.export import Export
    from sadedup.workspace import Workspace

    inp = awkward_inputs(tmp_path)
    w = tmp_path / "w"
    cli("run", "--input", inp, "--output", tmp_path / "one.jsonl", "--workdir", w, "--workers", "1", *SUBSTRING)
    executor = InOrderWatched()
    detail = Export(tmp_path / "pieces.jsonl", piece_bytes=3000).run(Context(Workspace(w), executor, force=True))
    assert detail["pieces"] > 4 and len(executor.left) == detail["pieces"]
    assert executor.left == [[] for _ in executor.left]
    assert (tmp_path / "pieces.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    assert not (tmp_path / ".pieces.jsonl.sadedup-parts").exists()


@pytest.mark.parametrize("stage", ["ingest", "export"])
def test_a_lone_large_piece_reports_progress_as_it_reads(cli, tmp_path, monkeypatch, stage):
    """A compressed input is one piece however large: it runs in the driver and moves the
    progress bar block by block (the reader's own counts), up to the file's size, rather than
    once at its end."""
    from sadedup.executor import LocalExecutor
    from sadedup.stages import export, ingest
    from sadedup.stages.base import Context
    from sadedup.workspace import Workspace

    rng = random.Random(5)
    docs = ["".join(rng.choice("abcdefghij ") for _ in range(20_000)) for _ in range(120)]
    raw = write_jsonl(tmp_path / "in.jsonl", docs).read_bytes()
    gz = tmp_path / "in.jsonl.gz"
    gz.write_bytes(gzip.compress(raw, compresslevel=0))  # stored: the reader reads it in many blocks
    w = tmp_path / "w"
    cli("run", "--input", gz, "--output", tmp_path / "one.jsonl.gz", "--workdir", w, "--workers", "1",
        *SUBSTRING)
    steps: list[float] = []

    class Recording:
        def __init__(self, *args, **kw):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def advance(self, n: float = 1) -> None:
            steps.append(n)

    module = ingest if stage == "ingest" else export
    monkeypatch.setattr(module, "bar", Recording)
    run = module.Ingest() if stage == "ingest" else module.Export(tmp_path / "again.jsonl.gz")
    executor = LocalExecutor(2)
    try:
        run.run(Context(Workspace(w), executor, force=True))
    finally:
        executor.close()
    # 2.4 MB read in 1 MB blocks: three steps; a bar that moves only when the piece ends takes one
    assert len(steps) >= 3 and sum(steps) == gz.stat().st_size
