"""The `sadedup` command: a thin layer over the Python API in sadedup.pipeline / sadedup.inspect."""
from __future__ import annotations

import os
import signal
import sys


def _interrupted_line(signum: int) -> str:
    name = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"
    return f"sadedup: interrupted ({name}); rerun the same command to resume"


def _signal_while_loading(signum: int, frame: Any) -> None:
    """Ctrl-C or SIGTERM while the command's modules load, before main() answers signals:
    nothing is written yet, so the process ends here, with the line of an interruption, not
    Python's traceback of the import it stopped (or an exit that import machinery may eat)."""
    os.write(2, (_interrupted_line(signum) + "\n").encode())
    os._exit(128 + signum)


# only in the command itself (`python -m sadedup.cli`, the `sadedup` script), not in a program
# that imports this module, and only where Python's own handler is in place: a pool worker,
# which imports this module as its main one, starts with SIGINT ignored and keeps it so
if (__name__ == "__main__" or os.path.basename(sys.argv[0]) == "sadedup") and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _signal_while_loading)
    signal.signal(signal.SIGTERM, _signal_while_loading)

# numpy's OpenBLAS starts a thread per core at import, which spins before it sleeps: 0.1 s
# of wall per process (the command and every pool worker, which inherit this) for BLAS calls
# sadedup never makes. Only in the command, and a user's own setting wins.
if __name__ == "__main__" or os.path.basename(sys.argv[0]) == "sadedup":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# the handlers above are set before the imports, which take most of a command's start
import functools
import gc
import importlib
import re
import traceback
from pathlib import Path
from typing import Annotated, Any, Optional, get_args, get_origin

import typer
import typer.core
import typer.main
from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import __version__, graph, lazy_submodule
from . import formats

# A spawned pool worker imports the main module again (multiprocessing's spawn), which is
# this one under `python -m sadedup.cli` and the `sadedup` script: the commands' modules are
# loaded when a command uses them, so a worker does not import the whole API for nothing.
api = lazy_submodule("api")
insp = lazy_submodule("inspect")
pipeline = lazy_submodule("pipeline")
from .errors import Interrupted, SadedupError, environment_error
from .progress import result, say, set_quiet

_debug = False


def _set_debug(value: bool) -> None:
    global _debug
    if value:
        _debug = True


def _set_quiet(value: bool) -> None:
    if value:
        set_quiet(True)


def _version(value: bool) -> None:
    if value:
        print(f"sadedup {__version__}")
        raise typer.Exit()


GLOBAL = "Global options (before or after the command)"
Quiet = Annotated[bool, typer.Option("--quiet", "-q", callback=_set_quiet, expose_value=False, rich_help_panel=GLOBAL,
                                     help="Print only results, warnings and errors (no progress, no notes).")]
Debug = Annotated[bool, typer.Option("--debug", callback=_set_debug, expose_value=False, rich_help_panel=GLOBAL,
                                     help="Show tracebacks on errors.")]


@functools.cache
def _global_params() -> tuple:
    """The click parameters of -q and --debug, for every command to take after its name too."""
    flags = typer.Typer(add_completion=False)

    @flags.command()
    def _flags(quiet: Quiet = False, debug: Debug = False) -> None:
        pass

    return tuple(typer.main.get_command(flags).params)


def _bare_flags(params: list) -> list:
    """A flag shows no value type in the help (typer would show <bool>)."""
    for p in params:
        if getattr(p, "is_flag", False) and getattr(p, "metavar", None) is None:
            p.metavar = ""
    return params


_MISS = object()
_DIGITS = re.compile(r"0|[1-9][0-9]{0,17}")


class _PlainCoercion:
    """Typer 0.2x coerces every option's value (a default or None too) through a pydantic
    TypeAdapter it builds on first use: importing pydantic and building the adapters cost each
    command 0.44G instructions (5% of a 100 MB MinHash run's whole process) before it did
    anything. The values sadedup's options take come as click parsed them: text stays text,
    a list of texts a list, a parser's result is the result, a plain decimal an int. Those are
    given here as typer's adapters give them; anything else (a bad number, a bool spelt out, a
    parser that refuses) goes to typer's own coercion, so its errors and results are typer's."""

    def __init__(self, param: Any) -> None:
        self.param = param
        self.full: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        multi = param.multiple or param.nargs == -1
        if value is None:
            return () if multi else None
        if multi:
            got = self._list(value) if isinstance(value, (list, tuple)) else _MISS
        else:
            got = self._leaf(value)
        if got is not _MISS:
            return got
        if self.full is None:
            self.full = typer.core.build_runtime_param(param.type_descriptor)
        return self.full.coerce(value, param=param, ctx=ctx)

    def _list(self, values: Any) -> Any:
        out = [self._leaf(v) for v in values]
        return _MISS if any(v is _MISS for v in out) else out

    def _leaf(self, value: Any) -> Any:
        d = self.param.type_descriptor
        info, kind = d.parameter_info, d.annotation
        if get_origin(kind) is list:
            kind = get_args(kind)[0]
        if info.parser is not None:
            try:
                return info.parser(value)
            except Exception:
                return _MISS  # typer's coercion calls it again and says what it says
        if kind is str and type(value) is str:
            return value
        if kind is bool and type(value) is bool:
            return value
        if kind is int and info.min is None and info.max is None and not info.clamp:
            if type(value) is int:
                return value
            if type(value) is str and _DIGITS.fullmatch(value):
                return int(value)
        return _MISS


def _plain_coercion(params: list) -> list:
    """Typer's parameters (0.2x: those with a runtime coercion not built yet) get _PlainCoercion."""
    for p in params:
        if getattr(p, "_runtime_param", _MISS) is None and hasattr(p, "type_descriptor") and \
                hasattr(typer.core, "build_runtime_param"):
            p._runtime_param = _PlainCoercion(p)
    return params


class _Command(typer.core.TyperCommand):
    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.params.extend(_global_params())

    def invoke(self, ctx: Any) -> Any:
        _collect_after_imports()
        return super().invoke(ctx)

    def get_params(self, ctx: Any) -> list:
        return _plain_coercion(_bare_flags(super().get_params(ctx)))


class _Group(typer.core.TyperGroup):
    def get_params(self, ctx: Any) -> list:
        return _plain_coercion(_bare_flags(super().get_params(ctx)))


app = typer.Typer(
    name="sadedup",
    cls=_Group,
    help="Deduplicate LLM training corpora: exact and near-duplicate documents, and repeated passages, "
         "with every decision recorded in SQLite.\n\n"
         "Quick start: `sadedup run` dedups the bundled sample corpus; "
         "`sadedup run --input data.jsonl --output clean.jsonl --workdir work/` your own. "
         "Then ask why: `sadedup sql work/ \"SELECT reason, count(*) FROM documents GROUP BY reason\"`.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
command = functools.partial(app.command, cls=_Command)

def _folder(value: str) -> Path:
    from .locations import local_folder

    return local_folder(value)


def _reference_folder(value: str) -> Path:
    from .locations import local_folder

    return local_folder(value, "reference")


Workdir = Annotated[Path, typer.Option("--workdir", "-w", metavar="DIR", parser=_folder,
                                       help="Work folder: artifacts and sadedup.db live here.")]
WorkdirArg = Annotated[Path, typer.Argument(parser=_folder, help="Work folder of a run (holds sadedup.db).")]
Sets = Annotated[Optional[list[str]], typer.Option(
    "--set", "-s", metavar="KEY=VALUE", help="Override a workflow key, SECTION.KEY=VALUE, e.g. substring.min_length=50 or "
                        "stages=substring (lists are comma-separated). Repeatable.")]
Inputs = Annotated[Optional[list[str]], typer.Option(
    "--input", "-i", metavar="PATH", help=f"A {formats.listed()} file, a folder of them (read sorted by path), "
                          "a glob ('crawl/*.jsonl.zst', quoted) or an fsspec URL (s3://bucket/crawl/, "
                          "hf://datasets/...). Repeatable; documents are ordered by the order given.")]
WorkflowArg = Annotated[Optional[str], typer.Argument(
    help="Workflow: a built-in name (default, c4, fineweb, keep_first) or a path to a .toml file.")]
Executor = Annotated[Optional[str], typer.Option(metavar="NAME", help="Where tasks run: local (a process pool), inline or dask (default: run.executor; dask needs --set run.scheduler=tcp://HOST:PORT).")]
Workers = Annotated[Optional[int], typer.Option(metavar="N", help="Worker processes (default: run.workers, 0 = every core).")]
Budget = Annotated[Optional[str], typer.Option(
    "--memory-budget", "-m", metavar="SIZE", help="Memory the run may use, e.g. 4GB or 512MB (default: run.memory_budget, auto = 40% "
                                  "of the memory this process may use). Shard sizes and buffers derive from it.")]
Restart = Annotated[bool, typer.Option("--restart", help="Forget everything sadedup wrote in the work folder, its "
                                                       "recorded inputs, output, settings and references too, and "
                                                       "start over as on an empty folder (other files stay; a folder "
                                                       "sadedup did not make is refused).")]
References = Annotated[Optional[list[Path]], typer.Option(
    "--reference", "-r", metavar="DIR", parser=_reference_folder, help="A finished work folder to deduplicate against (run.reference): its kept "
                                             "documents come first and are never dropped or cut; a new document "
                                             "repeating them is dropped or cut, as in one run over its inputs and "
                                             "then these. Repeatable, in document order; replaces the recorded ones.")]


CleanEval = Annotated[Optional[Path], typer.Option(
    "--write-clean-eval", metavar="FILE", help="With the decontaminate stage: write the eval rows all of whose texts "
                                               "were judged clean to FILE, in the eval files' format (the workflow "
                                               "key decontaminate.write_clean_eval).")]


def _clean_eval(path: Path | None) -> list[str]:
    """--write-clean-eval is decontaminate.write_clean_eval, made absolute: the work folder
    records it, and a later run from another folder writes the same file."""
    return [] if path is None else [f"decontaminate.write_clean_eval={path.resolve()}"]


def _choice(*names: str, of: Any = None):
    """A callback that accepts one of names, or of the names `of()` returns when it is called:
    typer evaluates every command's options whatever command runs, so a list kept in a module
    that imports SQLAlchemy (sadedup.inspect's FORMATS) is read only when its option is used."""
    def check(value: str) -> str:
        allowed = of() if of is not None else names
        if value not in allowed:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(allowed)}")
        return value
    return check


Result = Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", callback=_choice("text", "json"),
                                     help="text: one line saying what was done; json: the stage's detail "
                                          "(counts, timings, settings), as recorded in the stages table.")]
RunFormat = Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", callback=_choice("text", "json"),
                                        help="text: a table of what was kept and dropped; json: the counts, the "
                                             "output path and each stage's detail.")]


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, expose_value=False,
                                                help="Print sadedup's version and exit.")] = False,
          quiet: Quiet = False, debug: Debug = False):
    pass


def _sets(overrides: list[str] | None, memory_budget: str | None, workers: int | None = None) -> list[str]:
    """--memory-budget and --workers are shorthands for their workflow keys (shard sizes derive
    from both, so they must be the values the run records)."""
    return [*(overrides or []), *([f"run.memory_budget={memory_budget}"] if memory_budget else []),
            *([f"run.workers={workers}"] if workers is not None else [])]


def _sample_paths() -> tuple[list[Path], Path, Path]:
    from importlib import resources

    sample = Path(str(resources.files("sadedup.data") / "sample.jsonl.gz"))
    return [sample], Path("sadedup-sample.jsonl.gz"), Path("sadedup-sample-work")


@command()
def run(workflow: WorkflowArg = None, input: Inputs = None,
        output: Annotated[Optional[str], typer.Option(
            "--output", "-o", metavar="PATH", help=f"Output file or URL, with --input: its suffix picks the format "
                                                   f"({formats.listed(output=True)}); "
                                                   "{shard:05d} in the name writes one part per input file (or per "
                                                   "run.output_rows rows). On an existing work folder: "
                                                   "the recorded one.")] = None,
        workdir: Annotated[Optional[Path], typer.Option(
            "--workdir", "-w", metavar="DIR", parser=_folder, help="Work folder, with --input (sadedup.db and the artifacts live "
                                                   "here). Alone: resume the run recorded there.")] = None,
        set: Sets = None, memory_budget: Budget = None, restart: Restart = False, executor: Executor = None, workers: Workers = None,
        write_clean_eval: CleanEval = None, reference: References = None, format: RunFormat = "text"):
    """Run every stage of a workflow: ingest, exact, minhash, lines, passages, decontaminate, substring
    (tokenize, candidates, build, repeats, remove), export; the workflow's `stages` says which run.

    Give --input, --output and --workdir together. Work already done in the work folder is
    skipped, so rerunning after a crash resumes; a stage whose settings or inputs changed is
    redone, with everything after it. On an existing work folder, --workdir alone reuses the
    recorded --input and --output. With none of the three, dedups the sample corpus bundled
    with sadedup into sadedup-sample.jsonl.gz and sadedup-sample-work/ in the current folder.

    Example: sadedup run --input data.jsonl --output clean.jsonl --workdir work/

    Example (a new dump against a finished run): sadedup run --input dump2/ --output clean2.jsonl --workdir work2/
    --reference work/
    """
    inputs: list[Path] | None = input or None
    if not input and workdir is None:
        if output is not None:
            raise SadedupError("--output goes with --input and --workdir (or --workdir of an existing run): "
                               "pass --input PATH --workdir DIR too")
        inputs, output, workdir = _sample_paths()
        say(f"sadedup: no --input given: deduplicating the bundled sample corpus {inputs[0].name} into "
            f"{output} and {workdir}/ in the current folder")
    if workdir is None:
        raise SadedupError("--input goes with --workdir: pass --workdir DIR (and --output PATH)")
    res = api.run(inputs, output, workdir, workflow, _sets(set, memory_budget, workers) + _clean_eval(write_clean_eval),
                  restart=restart,
                  executor=executor, references=reference or None)
    if format == "json":
        _write(insp.to_json(res.to_dict()))
    else:
        _print_summary(res)


def _stdout() -> Console:
    """Tables and text for stdout: no markup read in the data, as wide as the terminal (200
    columns in a pipe)."""
    return Console(highlight=False, markup=False, emoji=False, width=None if sys.stdout.isatty() else 200)


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _print_summary(res: api.RunResult) -> None:
    t = Table(title=f"sadedup: {res.workdir}", show_edge=False)
    for c in ("status", "reason", "documents"):
        t.add_column(c)
    t.add_row("kept", "", str(res.kept))
    for reason, n in sorted(res.dropped.items()):
        t.add_row("dropped", reason, str(n))
    t.add_row("set aside", "input_errors", str(res.input_errors))
    _stdout().print(t)
    result(f"output: {_as_typed(res.output)} ({res.kept} documents); "
           f"audit: sadedup sql {res.workdir} \"SELECT * FROM spans LIMIT 5\"")


@command()
def ingest(workflow: WorkflowArg = None, input: Inputs = None, workdir: Workdir = ..., set: Sets = None, memory_budget: Budget = None,
           restart: Restart = False, executor: Executor = None, workers: Workers = None,
        format: Result = "text"):
    """Read the inputs into the work folder: one `documents` row per valid input row, the rest in
    `input_errors` with file, row and reason. Uncompressed JSONL is read in pieces in parallel.

    Example: sadedup ingest --input data.jsonl --workdir work/"""
    _report("ingest", pipeline.ingest(input or [], workdir, workflow, _sets(set, memory_budget, workers), restart,
                                      executor)["ingest"], format)


@command()
def exact(workdir: WorkdirArg, set: Sets = None, memory_budget: Budget = None, executor: Executor = None, workers: Workers = None,
        format: Result = "text"):
    """Drop exact duplicate documents: same text after NFC and whitespace folding (lower-casing with
    --set exact.lowercase=true); one per group is kept by exact.keep (first, longest, shortest, column:NAME).

    Example: sadedup exact work/ --set exact.keep=longest"""
    _report("exact", pipeline.exact(workdir, _sets(set, memory_budget, workers), executor), format)


@command()
def minhash(workdir: WorkdirArg, set: Sets = None, memory_budget: Budget = None, executor: Executor = None, workers: Workers = None,
        format: Result = "text"):
    """Drop near-duplicate documents: MinHash signatures of word 5-grams, LSH bands (14 x 8), verified
    pairs joined into clusters, one kept per cluster by minhash.keep.

    Example: sadedup minhash work/ --set minhash.threshold=0.7"""
    _report("minhash", pipeline.minhash(workdir, _sets(set, memory_budget, workers), executor), format)


@command()
def tokenize(workdir: WorkdirArg, set: Sets = None, memory_budget: Budget = None, executor: Executor = None, workers: Workers = None,
        format: Result = "text"):
    """Tokenize the surviving documents and cut them into shards of whole documents.

    Example: sadedup tokenize work/ --set substring.tokenizer=train:bpe:8000"""
    _report("tokenize", pipeline.tokenize(workdir, _sets(set, memory_budget, workers), executor), format)


@command()
def build(workdir: WorkdirArg, set: Sets = None, memory_budget: Budget = None, executor: Executor = None, workers: Workers = None,
        format: Result = "text"):
    """Find each shard's candidate text (the regions that can hold a repeated window) and build its
    suffix array and LCP array (.npy); finished shards are kept on rerun. With
    --set substring.prefilter=false the arrays cover all of each shard's text.

    Example: sadedup build work/ --workers 4"""
    _report("build", pipeline.build(workdir, _sets(set, memory_budget, workers), executor), format)


@command()
def repeats(workdir: WorkdirArg, set: Sets = None, memory_budget: Budget = None, executor: Executor = None, workers: Workers = None,
        format: Result = "text"):
    """Merge the shards' suffix arrays into groups of equal L-token windows across the corpus.

    Example: sadedup repeats work/"""
    _report("repeats", pipeline.repeats(workdir, _sets(set, memory_budget, workers), executor), format)


@command()
def remove(workdir: WorkdirArg, set: Sets = None, memory_budget: Budget = None, executor: Executor = None, workers: Workers = None,
        format: Result = "text"):
    """Apply the keep rule (first / none) and the drop rule; record spans and decisions.

    Example: sadedup remove work/ --set substring.drop_fraction=0.5"""
    _report("remove", pipeline.remove(workdir, _sets(set, memory_budget, workers), executor), format)


def _stage_command(name: str, help: str) -> None:
    """The command of a stage that declares its help in the graph: the same options as every
    stage command, and its result said the same way."""
    def run_stage(workdir: WorkdirArg, set: Sets = None, memory_budget: Budget = None, executor: Executor = None,
                  workers: Workers = None, format: Result = "text"):
        _report(name, pipeline.run_stage(name, workdir, _sets(set, memory_budget, workers), executor), format)

    # decontaminate also writes the clean eval rows, as `run` does
    def run_decontaminate(workdir: WorkdirArg, set: Sets = None, memory_budget: Budget = None,
                          executor: Executor = None, workers: Workers = None, write_clean_eval: CleanEval = None,
                          format: Result = "text"):
        _report(name, pipeline.run_stage(name, workdir, _sets(set, memory_budget, workers) +
                                         _clean_eval(write_clean_eval), executor), format)

    fn = run_decontaminate if name == "decontaminate" else run_stage
    fn.__doc__ = help
    command(name)(fn)


for _node in graph.NODES:
    if _node.help:
        _stage_command(_node.name, _node.help)


@command()
def export(workdir: WorkdirArg,
           output: Annotated[Optional[str], typer.Option("--output", "-o", help="Output file or URL (default: the "
                                                          "run's --output).")] = None,
           set: Sets = None, memory_budget: Budget = None, executor: Executor = None, workers: Workers = None,
        format: Result = "text"):
    """Write the kept documents in input order and format, with the removed passages cut out.
    Uncompressed JSONL inputs are cut into pieces written in parallel and joined in order.

    Example: sadedup export work/ --output clean.parquet"""
    _report("export", pipeline.export(workdir, output, _sets(set, memory_budget, workers), executor), format)


@command()
def status(workdir: WorkdirArg,
           verify: Annotated[bool, typer.Option("--verify", help="Read every artifact back and compare its "
                                                              "checksum (slow on a large corpus).")] = False,
           format: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", callback=_choice("table", "json"),
                                               help="table or json.")] = "table"):
    """What is done, what is pending, stale (its settings or what it read changed since it ran),
    running now, interrupted or failed, stage by stage, and why; artifacts are checked by size (--verify: by
    checksum). --format json gives both lists for scripts: "stages" ({stage, state, why}) and
    "records" (every stage and shard record).

    Example: sadedup status work/ --format json"""
    rows = insp.status(workdir)
    stages = pipeline.status(workdir, verify)
    live = any(s["state"] == "running" for s in stages)  # else a record left running is a dead run's
    if format == "json":
        _write(insp.to_json({"stages": stages, "records": rows}, indent=1))
        return
    t = Table(show_edge=False)
    for c in ("stage", "shard", "status", "finished", "detail"):
        t.add_column(c)
    for r in rows:
        detail = r["error"] or ", ".join(f"{k}={v}" for k, v in r["detail"].items())
        st = "interrupted" if r["status"] == "running" and not live else r["status"]
        t.add_row(r["stage"], "" if r["shard"] is None else str(r["shard"]), st, r["finished_at"] or "", Text(detail))
    _stdout().print(t)
    pending = [s for s in stages if s["state"] != "done"]
    print("pending: " + ("; ".join(f"{s['stage']} ({s['state']}: {s['why']})" for s in pending) if pending
                         else "nothing"))


def _as_typed(output: str | Path) -> str:
    """An output inside the current folder as a path from it (the folder records it absolute,
    so that a later command elsewhere means the same file; the user typed it relative)."""
    path = str(output)
    if "://" in path or not Path(path).is_absolute():
        return path
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


@command()
def sql(workdir: WorkdirArg, query: Annotated[str, typer.Argument(help="One SQL statement; the database is "
                                                                      "opened read-only.")],
        format: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT",
                                            callback=_choice(of=lambda: insp.FORMATS),
                                            help="table, csv, json (one array) or jsonl (one object a line).")]
        = "table"):
    """Query the provenance database read-only. Tables: runs, documents, spans, clusters,
    cluster_members, stages, input_errors, refs, eval_items.

    In the table, NULL is shown as NULL (dimmed) and a text that reads NULL as 'NULL'; in csv
    NULL is an empty field and the empty text ""; in json and jsonl NULL is null. A BLOB is its
    hex literal, X'0A1B'.

    Example: sadedup sql work/ "SELECT doc_id, coverage FROM documents ORDER BY coverage DESC LIMIT 10"
    """
    cols, rows = insp.sql(workdir, query)
    if format == "table":
        t = Table(show_edge=False)
        for c in cols:
            t.add_column(Text(c))
        for r in rows:
            t.add_row(*[Text(insp.display(v), style="dim" if v is None else "") for v in r])
        _stdout().print(t)
    else:
        _write(insp.format_rows(cols, rows, format))


@command(context_settings={"ignore_unknown_options": True})  # a negative doc_id is not an option
def explain(workdir: WorkdirArg, doc: Annotated[str, typer.Argument(help="A doc_id, or the value of the "
                                                                        "input's id field.")],
            by_id: Annotated[bool, typer.Option("--id", help="DOC is a value of the input's id field.")] = False,
            by_doc_id: Annotated[bool, typer.Option("--doc-id", help="DOC is a doc_id.")] = False,
            format: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", callback=_choice("text", "json"),
                                                help="text, or json: the document's row, its spans (with the "
                                                     "removed and the earlier text) and its clusters.")] = "text"):
    """Say why a document was kept, cut or dropped, showing each removed span beside the
    earlier text it duplicated. A number is taken as a doc_id (and it says so when it is also
    a document's id); --id or --doc-id decide.

    Example: sadedup explain work/ doc-00042"""
    if by_id and by_doc_id:
        raise SadedupError("give --id or --doc-id, not both")
    info = insp.explain(workdir, doc, "id" if by_id else "doc_id" if by_doc_id else None)
    if format == "json":
        _write(insp.to_json(info, indent=1))
        return
    d = info["document"]
    out = _stdout()
    if info.get("note"):
        out.print(f"note: {info['note']}")
    verdict = d["status"] if d["reason"] is None else f"{d['status']} ({d['reason']})"
    if d["status"] == "kept" and info["spans"]:
        verdict = f"kept, cut in {len(info['spans'])} place(s)"
    out.print(f"document {d['doc_id']} (id {d['ext_id']!r}, {d['source']} row {d['source_row']}): {verdict}")
    if d["n_tokens"] is not None:
        out.print(f"  {d['removed_tokens']} of {d['n_tokens']} tokens removed (coverage {d['coverage']:.3f})")
    for c in info["clusters"]:
        kept_in = f" of reference {c['kept_ref']}" if c.get("kept_ref") is not None else ""
        out.print(f"  {c['method']} cluster {c['cluster_id']} of {c['size']}: kept document {c['kept_doc_id']}{kept_in} "
                  f"by rule {c['keep_rule']}" + (f", similarity {c['similarity']:.3f}" if c["similarity"] else ""))
    for s in info["spans"]:
        out.print(f"  span {s['span_id']} ({s['method']}): " + _span_line(s))
        out.print(f"    removed: {_clip(s['text'])}")
        out.print(f"    earlier: {_clip(s['source_text'])}")


def _span_line(s: dict) -> str:
    """Where a span is and what it duplicated, in the units its stage works in."""
    where = (f"tokens [{s['tok_start']}, {s['tok_end']}), " if s["tok_start"] is not None else "") + \
        f"chars [{s['char_start']}, {s['char_end']})"
    if s.get("eval_item"):
        e = s["eval_item"]
        return f"{where} matches eval item {e['eval_file']} row {e['eval_row']} field {e['field']!r}"
    if s["src_doc_id"] is None:
        return where
    at = f"token {s['src_tok_start']}" if s["src_tok_start"] is not None else f"char {s['src_char_start']}"
    sim = f", similarity {s['similarity']:.3f}" if s.get("similarity") is not None else ""
    ref = f" of reference {s['src_ref']}" if s.get("src_ref") is not None else ""
    return f"{where} duplicates document {s['src_doc_id']}{ref} at {at}{sim}"


def _clip(text: str | None, n: int = 160) -> str:
    return "(none)" if text is None else _quoted(text, n)


SearchText = Annotated[str, typer.Argument(metavar="TEXT", help="The text to search for, tokenized alone with the "
                                                                  "run's tokenizer (quote it; put -- before it when it "
                                                                  "starts with -).")]


@command(context_settings={"ignore_unknown_options": True})  # a TEXT such as "-x" is not an option
def count(workdir: WorkdirArg, text: SearchText, executor: Executor = None,
          format: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", callback=_choice("text", "json"),
                                              help='text: the number; json: {"count": N}.')] = "text"):
    """Count the occurrences of TEXT in the documents the substring stage tokenized: start
    positions where TEXT's tokens occur consecutively inside one document (overlapping ones
    count, none across documents), by binary search over the stored suffix arrays. A folder
    built with the prefilter (substring.prefilter = true, the default) first gets full-text
    suffix arrays, once, as `sadedup index` builds them.

    Example: sadedup count work/ "Terms of Service"
    """
    n = api.count(workdir, text, executor=executor)
    _write(insp.to_json({"count": n}) if format == "json" else f"{n}\n")


@command(context_settings={"ignore_unknown_options": True})
def locate(workdir: WorkdirArg, text: SearchText,
           limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", min=0,
                                              help="List the first N occurrences (0: every one).")] = 10,
           executor: Executor = None,
           format: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", callback=_choice("text", "json"),
                                               help='text, or json: {"count": N, "occurrences": [{"doc_id", '
                                                    '"ext_id", "char_start", "char_end"}, ...]}.')] = "text"):
    """Where TEXT occurs: the count (as `sadedup count` gives it) and the first N occurrences in
    the order the substring stage visits documents, then by position, each with its doc_id,
    the input's id and the character offsets (code points of the original text), shown in
    its context.

    Example: sadedup locate work/ "Terms of Service" --limit 5 --format json
    """
    from . import occurrences

    res = api.locate(workdir, text, limit, executor=executor)
    if format == "json":
        _write(insp.to_json(res, indent=1))
        return
    occ = res["occurrences"]
    out = _stdout()
    shown = "all listed" if len(occ) == res["count"] else f"the first {len(occ)}"
    out.print(Text(f"{res['count']} occurrence{'' if res['count'] == 1 else 's'} of {_quoted(text, 60)}"
                   + (f"; {shown}:" if occ else "")))
    for o in occ:
        before, match, after = occurrences.context(workdir, o["doc_id"], o["char_start"], o["char_end"])
        middle = match if len(match) <= 120 else match[:60] + " ... " + match[-60:]
        out.print(Text(f"  doc_id {o['doc_id']} (id {o['ext_id']!r}) chars [{o['char_start']}, {o['char_end']}): "
                       f"{repr(before + '[' + middle + ']' + after)}"))


def _quoted(text: str, n: int) -> str:
    """repr() of a text (escapes and all), its middle left out past n characters."""
    return repr(text if len(text) <= n else text[: n // 2] + " ... " + text[-n // 2:])


@command()
def index(workdir: WorkdirArg, executor: Executor = None, format: Result = "text"):
    """Build the full-text suffix arrays that count and locate search, when the stored ones
    cover only the candidate text (substring.prefilter = true, the default): one suffix sort
    per shard on the run's workers, kept in the work folder, recorded in the stages table
    (stage index) and reused until the tokenized shards change. With substring.prefilter =
    false the build stage's arrays cover all the text and nothing is built.

    Example: sadedup index work/"""
    from . import occurrences

    detail = api.index(workdir, executor=executor)
    if format == "json":
        _write(insp.to_json(insp.public(detail)))
    else:
        result(occurrences.index_summary(detail))


Thresholds = Annotated[Optional[str], typer.Option(
    "--minhash-threshold", metavar="T,T,...", help="minhash.threshold values, comma-separated (each in (0, 1]): what "
                                                  "the minhash stage would drop at each, from its stored candidate "
                                                  "pairs.")]
Lengths = Annotated[Optional[str], typer.Option(
    "--min-length", metavar="L,L,...", help="substring.min_length values, comma-separated: what the substring stage "
                                           "would cut and drop at each, from the stored suffix and LCP arrays (with "
                                           "the prefilter, lengths from the run's own up).")]


@command()
def report(workdir: WorkdirArg,
           output: Annotated[Optional[Path], typer.Option(
               "--output", "-o", metavar="FILE", help="Where to write the HTML page (default report.html in the "
                                                     "current folder; with --format json, only when given).")] = None,
           format: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", callback=_choice("text", "json"),
                                               help="text: write the page and say where; json: print the report's "
                                                    "numbers on stdout.")] = "text",
           seed: Annotated[int, typer.Option(metavar="N", help="Seed of the review sample and of the sampled "
                                                               "candidate pairs (same seed, same report).")] = 0,
           sample: Annotated[int, typer.Option(metavar="N", help="Clusters and spans shown per method for "
                                                                 "review.")] = 6,
           minhash_threshold: Thresholds = None, min_length: Lengths = None, executor: Executor = None,
           workers: Workers = None):
    """Write the audit report of a work folder: one self-contained HTML page (inline CSS and SVG
    plots; nothing is fetched) with documents, characters and tokens in and out per stage, the
    MinHash candidate pairs, banding and S-curve with measured points (signature agreement
    against exact Jaccard on a sample of candidate pairs), cluster sizes and the largest
    clusters and LSH buckets, span coverage and lengths and the most repeated passages per span
    stage, a per-source breakdown, decontamination verdicts, a seeded sample of clusters and
    spans side by side, and per-stage time and disk. --format json prints the same numbers.
    With --minhash-threshold / --min-length it plots that sweep too.

    Example: sadedup report work/ -o report.html --min-length 200,400"""
    out = output if output is not None or format == "json" else Path("report.html")
    data = api.report(workdir, out, seed=seed, sample=sample, minhash_thresholds=minhash_threshold,
                      min_lengths=min_length, executor=executor, workers=workers)
    if format == "json":
        _write(insp.to_json(data, indent=1))
        return
    d = data["documents"]
    left = data["unfinished"]
    partial = (f"; unfinished: {', '.join(x['stage'] for x in left)} not done, see `sadedup status {workdir}`"
               if left else "")
    result(f"report: {out} ({d['input']} documents in, {d['kept']} kept; {data['chars']['input']} characters in, "
           f"{data['chars']['output']} out{partial})")


@command()
def sweep(workdir: WorkdirArg, minhash_threshold: Thresholds = None, min_length: Lengths = None,
          format: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", callback=_choice("text", "json"),
                                              help="text: a table per setting; json: {minhash_threshold: [...], "
                                                   "min_length: [...], as_run, unanswered}.")] = "text",
          executor: Executor = None, workers: Workers = None):
    """What other settings would decide, from the work folder's stored artifacts, without
    recomputing signatures or suffix arrays and without touching the run's decisions: per
    minhash.threshold the documents the minhash stage keeps and drops and the characters it
    removes; per substring.min_length the same for the substring stage (and the documents cut).
    Each answer equals what a run with that one setting changed decides for that stage. Values
    the stored artifacts cannot answer are named on one line (with the prefilter, lengths below
    the run's own).

    Example: sadedup sweep work/ --minhash-threshold 0.6,0.7,0.9 --min-length 200,400"""
    from .sweeps import LENGTH, THRESHOLD, unanswered_line

    res = api.sweep(workdir, minhash_threshold, min_length, executor=executor, workers=workers)
    if format == "json":
        _write(insp.to_json(res, indent=1))
        return
    out = _stdout()
    for setting, name, extra in ((THRESHOLD, "minhash.threshold", ["clusters"]),
                                 (LENGTH, "substring.min_length", ["cut", "spans"])):
        if not res[setting]:
            continue
        t = Table(title=f"{name} (the minhash stage)" if setting == THRESHOLD else f"{name} (the substring stage)",
                  show_edge=False)
        for c in (name, "documents", "kept", "dropped", "removed chars", *extra):
            t.add_column(c, justify="right")
        for r in res[setting]:
            mark = " (as run)" if r["value"] == res["as_run"].get(setting) else ""
            t.add_row(f"{r['value']:g}{mark}", *(str(r[k]) for k in ("documents", "kept", "dropped", "removed_chars",
                                                                       *extra)))
        out.print(t)
    for u in res["unanswered"]:
        result(unanswered_line(u))


def summary_line(name: str, detail: dict) -> str:
    """The stage's own one-line summary of its detail; for a stage whose earlier result was
    reused, that result, said so."""
    try:
        line = graph.node(name).stage().summary(detail)
    except Exception:  # a record from an older sadedup may lack a count
        line = None
    line = line or f"{name}: done"
    return f"{line} (done before, nothing redone)" if detail.get("skipped") else line


def _report(name: str, detail: dict, fmt: str) -> None:
    """A stage command's result on stdout: one line, or with --format json the stage's detail."""
    if fmt == "json":
        _write(insp.to_json(insp.public(detail)))
    else:
        result(summary_line(name, detail))


def _click_errors() -> tuple[tuple[type, ...], tuple[type, ...], tuple[type, ...]]:
    """(usage errors, aborts, no-args-is-help) of click, and of the copy of click typer carries."""
    found: dict[str, list[type]] = {"ClickException": [], "Abort": [], "NoArgsIsHelpError": []}
    for name in ("typer._click.exceptions", "typer.exceptions", "click.exceptions"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        for kind, types in found.items():
            t = getattr(mod, kind, None)
            if isinstance(t, type) and t not in types:
                types.append(t)
    return tuple(found["ClickException"]), tuple(found["Abort"]), tuple(found["NoArgsIsHelpError"])


def _one_line(text: str, limit: int = 400) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _fail(message: str, code: int, exc: BaseException | None = None) -> None:
    if _debug and exc is not None:
        traceback.print_exception(exc)
    print(f"sadedup: error: {_one_line(message)}", file=sys.stderr)
    sys.exit(code)


_signalled: int | None = None


def _on_signal(signum, frame) -> None:
    """SIGINT and SIGTERM end the command as an exception, so every stage records where it
    stopped and the workers go; a second signal ends the process at once. The signal is
    also remembered: raised inside a lazily loaded module's import, the exception is dropped
    by the import machinery (the module's __spec__ lookup clears it), and the command then
    fails on the half-loaded module instead ("cannot import name ..."): main() says it was
    interrupted whatever it ends with."""
    global _signalled
    _signalled = signum
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise Interrupted(signum)


def _interrupted(signum: int) -> None:
    print(_interrupted_line(signum), file=sys.stderr)
    sys.exit(128 + signum)


def _collect_after_imports() -> None:
    """The cyclic garbage collector back on (main turns it off) once the modules a command's
    work uses are loaded, with everything made so far frozen out of its sight: the imports
    make a few hundred thousand objects that live as long as the process, and every full
    collection walked them again (a 100 MB MinHash run: 0.21 s of its ~3.5 s of CPU in the
    collector, 0.025 s so)."""
    for lazy in (api, pipeline, insp):
        getattr(lazy, "__name__")  # a lazily loaded module executes on first attribute access
    gc.freeze()
    gc.enable()


def main() -> None:
    """Exit 0 on success; on any failure a non-zero exit and one line on stderr (a traceback
    only with --debug); 130 / 143 when interrupted by SIGINT / SIGTERM."""
    gc.disable()  # while the command's modules load (see _collect_after_imports)
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    try:
        code = app(standalone_mode=False, prog_name="sadedup")
        if isinstance(code, int) and code == 130:  # typer's word for a KeyboardInterrupt it caught
            _interrupted(signal.SIGINT)
        if _signalled is not None:  # the interrupt was dropped on its way (see _on_signal)
            _interrupted(_signalled)
        if isinstance(code, int) and code:
            sys.exit(code)
    except Interrupted as e:
        _interrupted(e.signum)
    except KeyboardInterrupt:
        _interrupted(signal.SIGINT)
    except SystemExit:
        raise
    except Exception as e:  # a SadedupError, click usage errors, the disk, and the unexpected
        if _signalled is not None:  # what the interrupt left half done failed (see _on_signal)
            _interrupted(_signalled)
        if isinstance(e, SadedupError):
            _fail(str(e), 2, e if e.__cause__ is not None else None)
        usage, abort, noargs = _click_errors()
        if noargs and isinstance(e, noargs):
            sys.exit(2)  # the help was printed
        if isinstance(e, usage):
            command = getattr(getattr(e, "ctx", None), "command_path", None) or "sadedup"
            _fail(f"{e.format_message()} (see `{_one_line(command)} --help`)", getattr(e, "exit_code", 2) or 2)
        if isinstance(e, abort):
            print("sadedup: aborted", file=sys.stderr)
            sys.exit(1)
        err = environment_error(e)
        if err is not None:
            _fail(str(err), 2, e)
        if _debug:
            traceback.print_exc()
        orig = getattr(e, "orig", None)  # SQLAlchemy's errors carry the SQL over several lines
        what = f"{type(orig).__name__}: {orig}" if isinstance(orig, Exception) else f"{type(e).__name__}: {e}"
        print(f"sadedup: internal error: {_one_line(what)} (rerun with --debug for the traceback)", file=sys.stderr)
        sys.exit(1)
    finally:
        # the process ends after this: its exit would collect every object the command left
        # (0.5-1.3 s of gc_collect_main after an incremental bench run, py-spy); frozen, they
        # are left to the operating system. Files and the database are closed by now.
        gc.freeze()


if __name__ == "__main__":
    main()
