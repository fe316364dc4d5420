"""The Python API: every CLI command is one of these functions, with the same options."""
from __future__ import annotations

import functools
import inspect
import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import __version__, db

from .config import Workflow, apply_overrides, load_workflow
from .errors import SadedupError, environment_error
from .executor import make_executor
from .readers import expand_inputs
from .stages.base import Context
from .stages.build import Build
from .stages.candidates import Candidates
from .stages.docs import REASONS
from .stages.exact import Exact
from .stages.export import Export
from .stages.minhash import MinHash
from .stages.ingest import Ingest
from .stages.remove import Remove
from .stages.repeats import Repeats
from .stages.sizing import MIN_SPLIT_TOKENS, shard_tokens
from .stages.tokenize import Tokenize
from .tokenizers import check_spec
from .workspace import Workspace
from .writers import check_output

DOCUMENT_STAGES = {"exact": Exact, "minhash": MinHash}
SUBSTRING_STAGES = (Tokenize, Candidates, Build, Repeats, Remove)


def _plain_errors(fn):
    """A full disk or a file the system refuses becomes a one-line SadedupError naming the file."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        try:
            return fn(*args, **kw)
        except SadedupError:
            raise
        except Exception as e:
            try:
                workdir = sig.bind(*args, **kw).arguments.get("workdir")
            except TypeError:
                workdir = None
            err = environment_error(e, workdir)
            if err is None:
                raise
            raise err from e

    return wrapper


def _context(ws: Workspace, executor: str, workers: int | None) -> Context:
    wf = ws.workflow
    return Context(ws, make_executor(executor, workers or wf.run.n_workers))


def _open(workdir: str | Path, workflow: str | None, overrides: list[str] | None, inputs, output,
          restart: bool) -> Workspace:
    wf = load_workflow(workflow, overrides)
    shard_tokens(wf)  # a shard size over the budget is refused before any work
    check_spec(wf.substring.tokenizer)  # so is a tokenizer file that cannot load
    files = unsupported = None
    if inputs:
        files, unsupported = expand_inputs(list(inputs))
    if output is not None and Path(output).resolve().is_relative_to(Path(workdir).resolve()):
        raise SadedupError(f"output {output} is inside the work folder {workdir}; write it elsewhere")
    if output is not None:
        check_output(output, list(inputs or []))
    ws = Workspace(workdir, create=True)
    ws.lock()
    try:
        if files is None and ws.read_state() is None:
            raise SadedupError("no input given: pass --input PATH (a file or a folder)")
        ws.configure(wf, files, output, restart=restart, unsupported=unsupported)
    except BaseException:
        ws.unlock()
        raise
    return ws


def _resolved(wf: Workflow) -> dict[str, Any]:
    """The workflow with every derived value spelled out, as stored in `runs.config`."""
    d = wf.to_dict()
    d["resolved"] = {"substring.min_length": wf.substring.window, "substring.shard_tokens": shard_tokens(wf),
                     "run.memory_budget_bytes": wf.run.budget_bytes, "run.workers": wf.run.n_workers}
    return d


@contextmanager
def _recorded(ws: Workspace, command: str):
    """A `runs` row for every command that changes the work folder; the lock for its duration."""
    with ws.engine.begin() as c:
        run_id = c.execute(db.runs.insert().values(
            command=command, started_at=db.now(), status="running", version=__version__,
            config=json.dumps(_resolved(ws.workflow), sort_keys=True), inputs=json.dumps((ws.read_state() or {}).get("inputs")))).inserted_primary_key[0]
    status, error = "failed", None
    try:
        yield
        status = "done"
    except BaseException as e:
        error = f"{type(e).__name__}: {e}"
        raise
    finally:
        with ws.engine.begin() as c:
            c.execute(db.runs.update().where(db.runs.c.run_id == run_id).values(
                finished_at=db.now(), status=status, error=error))
        ws.unlock()


@contextmanager
def _closing(ctx: Context):
    try:
        yield ctx
    finally:
        ctx.executor.close()


def _execute(stage, ctx: Context) -> dict[str, Any]:
    """Runs one stage; a failure is recorded on the stage before it reaches the user."""
    try:
        return stage.run(ctx)
    except BaseException as e:
        why = "interrupted" if isinstance(e, KeyboardInterrupt) else f"{type(e).__name__}: {e}"
        try:
            ctx.ws.mark(stage.name, stage.key(ctx), "failed", error=why)
        except Exception:
            pass
        raise


@_plain_errors
def run(inputs: list[str | Path], output: str | Path, workdir: str | Path, workflow: str | None = None,
        overrides: list[str] | None = None, restart: bool = False, executor: str = "local",
        workers: int | None = None) -> dict[str, Any]:
    """Runs every stage the workflow lists, skipping work already done in `workdir`."""
    ws = _open(workdir, workflow, overrides, inputs, output, restart)
    with _recorded(ws, "run"), _closing(_context(ws, executor, workers)) as ctx:
        wf = ctx.wf
        # a corpus this large is read in pieces and gets a shard per worker (stages/sizing.py):
        # start the workers now
        if sum(d["size"] for d in ws.read_state()["inputs"]) > 2 * MIN_SPLIT_TOKENS:
            ctx.executor.warm()
        summary: dict[str, Any] = {"ingest": _execute(Ingest(), ctx)}
        _clear_unlisted(ws, wf)
        for s in ("exact", "minhash"):
            if s in wf.stages:
                summary[s] = _execute(_document_stage(s)(), ctx)
        if "substring" in wf.stages:
            for stage in SUBSTRING_STAGES:
                summary[stage.name] = _execute(stage(), ctx)
        summary["export"] = _execute(Export(output), ctx)
        return summary


def _document_stage(name: str):
    return DOCUMENT_STAGES[name]


def _clear_unlisted(ws: Workspace, wf: Workflow) -> None:
    """Decisions of stages the workflow no longer lists are taken back."""
    gone = [REASONS[s] for s in REASONS if s not in wf.stages]
    if not gone:
        return
    with ws.engine.begin() as c:
        marks = ", ".join("?" * len(gone))
        c.exec_driver_sql(f"UPDATE documents SET status = 'kept', reason = NULL WHERE reason IN ({marks})", tuple(gone))
        if "substring" not in wf.stages:
            c.exec_driver_sql("DELETE FROM spans")
        for method in ("exact", "minhash"):
            if method not in wf.stages:
                c.exec_driver_sql("DELETE FROM cluster_members WHERE cluster_id IN "
                                  "(SELECT cluster_id FROM clusters WHERE method = ?)", (method,))
                c.exec_driver_sql("DELETE FROM clusters WHERE method = ?", (method,))


@_plain_errors
def ingest(inputs: list[str | Path], workdir: str | Path, workflow: str | None = None,
           overrides: list[str] | None = None, restart: bool = False, executor: str = "local",
           workers: int | None = None) -> dict[str, Any]:
    """Reads the inputs into the work folder: documents, input_errors, texts."""
    ws = _open(workdir, workflow, overrides, inputs, None, restart)
    with _recorded(ws, "ingest"), _closing(_context(ws, executor, workers)) as ctx:
        return _execute(Ingest(), ctx)


def _stage(stage, workdir, overrides=None, executor="local", workers=None, **kw) -> dict[str, Any]:
    ws = Workspace(workdir)
    ws.lock()
    if overrides:
        try:
            wf = apply_overrides(ws.workflow, overrides)
        except BaseException:
            ws.unlock()
            raise
        ws.configure(wf, None, None)
    with _recorded(ws, stage.name), _closing(_context(ws, executor, workers)) as ctx:
        _require(ws, stage)
        before = {s.name: _execute(s(), ctx) for s in stage.runs_after}
        return _execute(stage(**kw), ctx) | before


def _require(ws: Workspace, stage) -> None:
    """A stage command refuses to run before the stages it reads from."""
    wf = ws.workflow
    order = ["ingest", *[s for s in ("exact", "minhash") if s in wf.stages], "tokenize", "build", "repeats",
             "remove"]
    name = stage.name
    if name == "export":
        name = "remove" if "substring" in wf.stages else None
        order = order + ["remove"] if name is None else order
    if name in order:
        for before in order[: order.index(name)]:
            row = ws.stage_row(before)
            if row is None or row.status != "done":
                how = f"sadedup ingest --input ... --workdir {ws.root}" if before == "ingest" else \
                    f"sadedup {before} {ws.root}"
                raise SadedupError(f"stage {stage.name} needs {before} first: run `{how}`")


@_plain_errors
def exact(workdir, overrides=None, executor="local", workers=None):
    """Drops exact duplicate documents (normalized-text hash), one kept per group."""
    return _stage(Exact, workdir, overrides, executor, workers)


@_plain_errors
def minhash(workdir, overrides=None, executor="local", workers=None):
    """Drops near-duplicate documents (MinHash-LSH clusters), one kept per cluster."""
    return _stage(MinHash, workdir, overrides, executor, workers)


@_plain_errors
def tokenize(workdir, overrides=None, executor="local", workers=None):
    """Tokenizes the documents that survived the document stages and cuts them into shards."""
    return _stage(Tokenize, workdir, overrides, executor, workers)


@_plain_errors
def build(workdir, overrides=None, executor="local", workers=None):
    """Builds each shard's suffix and LCP arrays, over its candidate text unless
    substring.prefilter is off (resumes: finished shards are kept)."""
    return _stage(Build, workdir, overrides, executor, workers)


@_plain_errors
def repeats(workdir, overrides=None, executor="local", workers=None):
    """Groups equal L-token windows across all shards."""
    return _stage(Repeats, workdir, overrides, executor, workers)


@_plain_errors
def remove(workdir, overrides=None, executor="local", workers=None):
    """Applies the keep rule and the drop rule; writes spans and decisions to the database."""
    return _stage(Remove, workdir, overrides, executor, workers)


@_plain_errors
def export(workdir, output=None, overrides=None, executor="local", workers=None):
    """Writes the kept documents, cut, in the input's format."""
    return _stage(Export, workdir, overrides, executor, workers, output=output)
