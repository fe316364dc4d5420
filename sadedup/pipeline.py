"""The Python API: every CLI command is one of these functions, with the same options.

Which stages exist, their order and what each reads come from sadedup.graph; this module
opens the work folder, brings stages current in that order and refuses to run a stage, or
to export, on top of work that is not current.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import json
import os
import tempfile
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import __version__, db, faults, graph, reference
from .config import Workflow, anchored, apply_overrides, load_workflow, unmatched_sources, workflow_from_dict
from .errors import InputsChanged, Interrupted, SadedupError, damaged, environment_error
from .executor import make_executor
from .readers import expand_inputs
from .stages.base import Context, Stage
from .stages.sizing import MIN_SPLIT_TOKENS, check_budget, shard_tokens
from .tokenizers import check_spec
from .workspace import STATE, Workspace, load_state, made_by_sadedup, owned_names, ran_here, state_missing
from .locations import has_glob, is_url
from .outputs import check_not_anothers, claimed, output_of, written_by

# modules the workers import while the driver ingests (numpy, pydivsufsort, the native core)
PRELOAD = ("sadedup.stages.build", "sadedup.stages.repeats")


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


def _with_workers(overrides: list[str] | None, workers: int | None) -> list[str]:
    """`workers` is run.workers: the one route, so the count the shards were planned for is
    the count recorded."""
    return [*(overrides or []), *([f"run.workers={workers}"] if workers is not None else [])]


def _resolved(wf: Workflow) -> dict[str, Any]:
    """The workflow with every derived value spelled out, as stored in `runs.config`."""
    d = wf.to_dict()
    d["resolved"] = {"substring.min_length": wf.substring.window, "substring.shard_tokens": shard_tokens(wf),
                     "run.memory_budget_bytes": wf.run.budget_bytes, "run.workers": wf.run.n_workers}
    return d


def _recorded_output(root: Path) -> str | None:
    """The output a work folder records, for leaving it out of its inputs; None when it
    records none or its state cannot be read (refused by name elsewhere)."""
    try:
        return load_state(root / STATE).get("output") if (root / STATE).is_file() else None
    except SadedupError:
        return None


def _recorded_workflow(workdir: str | Path, restart: bool = False) -> Workflow | None:
    """The workflow a work folder sadedup made was last configured with; None for a folder
    that records none. One that cannot be read is refused: a run going on with the default
    workflow in its place would redo the folder's work otherwise than it was configured, with
    no word. `restart`: a damaged one is None (the folder is started over and forgets it anyway)."""
    root = Path(workdir)
    path = root / STATE
    if not made_by_sadedup(root):
        return None
    if not path.exists():
        if not restart and ran_here(root):  # a command ran here after state.json was written: it was lost
            raise state_missing(path)
        return None
    try:
        state = load_state(path)
    except SadedupError:
        if restart:
            return None
        raise
    try:
        return workflow_from_dict(state["workflow"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, SadedupError) as e:
        if restart:
            return None
        why = f"no {e} in it" if isinstance(e, KeyError) else str(e)
        raise damaged(path, why) from None


def _say_kept(workdir: str | Path, wf: Workflow, overrides: list[str] | None) -> None:
    """One line when the folder's own workflow is kept and differs from what the default one
    with this command's --set would be: the command did not go back to the default."""
    try:
        default = anchored(load_workflow(None, overrides))
    except SadedupError:
        return
    # the references are the folder's (kept or replaced by --reference), not the workflow's:
    # given or not, they make no difference from the default here
    default = dataclasses.replace(default, run=dataclasses.replace(default.run, reference=wf.run.reference))
    if reference.anchor(default).to_dict() != wf.to_dict():
        from .progress import say

        say(f"{workdir}: its recorded workflow is kept, with this command's --set (name a workflow, such as "
            "default, to switch)")


def _open(workdir: str | Path, workflow: str | None, overrides: list[str] | None, inputs, output,
          restart: bool, references: list[str | Path] | None = None) -> Workspace:
    """The work folder, locked and configured for this command. Everything that can be
    checked without the folder is checked before it is touched. Without a workflow named, a
    work folder keeps the one it has (and --set changes it): rerunning a command without its
    workflow argument never switches the folder back to the default. `references`: the
    --reference folders, in place of the workflow's run.reference."""
    # --restart forgets the folder's workflow with the rest: the command runs as it would on
    # an empty folder (the default or the named workflow, this command's --set on top)
    forgotten = _recorded_workflow(workdir, restart) if restart else None
    recorded = _recorded_workflow(workdir, restart) if workflow is None and not restart else None
    kept_refs: tuple[str, ...] = ()
    wf = anchored(apply_overrides(recorded, overrides or []) if recorded is not None
                  else load_workflow(workflow, overrides))
    if references is not None:
        wf = dataclasses.replace(wf, run=dataclasses.replace(wf.run, reference=tuple(map(str, references))))
    elif workflow is not None and not restart and not wf.run.reference and \
            not any(o.partition("=")[0].strip() == "run.reference" for o in overrides or []):
        # the folder's references are kept like its inputs when a workflow is named: only
        # --reference (or --set run.reference) replaces them; switching to one that names none
        # silently made the run forget them and keep what they would have dropped
        was = _recorded_workflow(workdir, restart)
        if was is not None and was.run.reference:
            wf = dataclasses.replace(wf, run=dataclasses.replace(wf.run, reference=was.run.reference))
            kept_refs = was.run.reference
    wf = reference.anchor(wf)
    check_budget(wf)  # a shard size or signature size over the budget is refused before any work
    check_spec(wf.substring.tokenizer)  # so is a tokenizer file that cannot load
    files = unsupported = None
    root = Path(workdir).resolve()
    if inputs:
        mine = written_by(root, output if output is not None else _recorded_output(root),
                          wf.decontaminate.write_clean_eval)
        files, unsupported = expand_inputs(list(inputs), mine)
        given = [Path(g) for g in inputs if not (is_url(g) or has_glob(g))]  # a glob's files are in `files`
        for p in given:
            if p.is_dir() and root.is_relative_to(p.resolve()):
                raise SadedupError(f"work folder {workdir} is inside the input folder {p}; put it elsewhere "
                                   f"(its own files would become inputs)")
        for p in given + [f.path for f in files if isinstance(f.path, Path)]:
            if p.resolve().is_relative_to(root):
                raise SadedupError(f"input {p} is inside the work folder {workdir}; put the work folder elsewhere")
    if output is not None:
        _check_output(output, list(inputs or []), workdir, wf, [f.path for f in files or []])
    if restart and files is None:  # said before the folder is emptied, not after
        raise SadedupError("--restart forgets the recorded inputs: pass --input PATH too")
    if restart:
        _check_not_inside_what_restart_deletes(root)
    refs = reference.check(wf, root, output)  # a reference that is unfinished or made otherwise: refused before any write
    for ref, upstream in reference.unlisted_upstream(refs):
        from .progress import warn
        warn(f"reference {ref} was deduplicated against {upstream}, which is not a reference here: documents "
             f"it dropped as copies of that folder's are not seen (add --reference {upstream} to dedup against both)")
    try:
        if output is not None:  # after the references: one's own output is refused as that, by name
            check_not_anothers(output_of(output), root)
        ws = Workspace(workdir, create=True)
        ws.lock()
        faults.point("workdir.locked")  # made and locked, its database not yet made
    except BaseException:
        reference.close_all(refs)
        raise
    try:
        if restart:
            kept = ws.reset()
            if kept:
                from .progress import say

                say(f"--restart: kept {len(kept)} entr{'y' if len(kept) == 1 else 'ies'} sadedup did not write "
                    f"in {workdir} ({', '.join(kept[:3])}{', ...' if len(kept) > 3 else ''})")
        state = ws.read_state()
        if files is None and not (state or {}).get("inputs"):
            raise SadedupError("no input given: pass --input PATH (a file or a folder)")
        if files is None:  # the recorded inputs, as they are now: refused before the command's
            ws.check_inputs()  # settings are kept, and not after the work
        _check_clean_eval(wf, ws.root, [f.path for f in files] if files is not None else
                          [d["path"] for d in state["inputs"]], output if output is not None else ws.output)
        ws.configure(wf, files, output, unsupported=unsupported, given=list(map(str, inputs)) if inputs else None)
        _warn_unmatched_sources(ws)
        reference.adopt(ws, refs)
        _retire(ws)
        if recorded is not None:  # said once the command goes ahead, not before a refusal
            _say_kept(workdir, wf, overrides)
        if forgotten is not None:
            _say_forgotten(workdir, forgotten, wf, workflow)
        if kept_refs:  # so is this
            from .progress import say

            say(f"{workdir}: its recorded references are kept ({', '.join(kept_refs)}); --reference or "
                f"--set run.reference= replaces them")
    except BaseException:
        reference.close_all(refs)
        ws.unlock()
        raise
    return ws


def _say_forgotten(workdir: str | Path, was: Workflow, now: Workflow, named: str | None) -> None:
    """After --restart: what of the folder's former workflow this run no longer has, as a
    warning (-q does not hide it): the run decides otherwise than the folder did."""
    from .progress import warn

    if was.run.reference and not now.run.reference:
        warn(f"--restart forgot the references of {workdir} ({', '.join(was.run.reference)}); pass --reference "
             f"again to deduplicate against them")
    if _without_references(was).to_dict() != _without_references(now).to_dict():
        warn(f"--restart: {workdir} starts over with {f'workflow {named}' if named else 'the default workflow'} and "
             f"this command's --set; its former settings are forgotten")


def _without_references(wf: Workflow) -> Workflow:
    return dataclasses.replace(wf, run=dataclasses.replace(wf.run, reference=()))


def _warn_unmatched_sources(ws: Workspace) -> None:
    """One warning per [[sources]] entry that fits none of the folder's input files (matched as
    documents.source records them)."""
    if ws.workflow.sources:
        from .progress import warn

        paths = [d["path"] for d in (ws.read_state() or {}).get("inputs") or []]
        for entry in unmatched_sources(ws.workflow.sources, paths):
            warn(f"{entry} fits none of the input files, so its settings apply to no document")


def _check_not_inside_what_restart_deletes(root: Path) -> None:
    """--restart from inside a folder it deletes (`cd work/ingest`) emptied the work folder and
    then failed on the vanished current folder, on every later try too: refused first."""
    try:
        here = Path.cwd().resolve()
    except FileNotFoundError:
        raise SadedupError("the current folder no longer exists; run the command from another folder") from None
    if here.is_relative_to(root) and here != root and here.relative_to(root).parts[0] in owned_names():
        raise SadedupError(f"the current folder {here} is inside {root / here.relative_to(root).parts[0]}, which "
                           f"--restart deletes; run the command from another folder")


def _check_output(output: str | Path, inputs: list, workdir: str | Path, wf: Workflow, files: list = ()) -> None:
    """Everything about the output that can be known before any work. `files`: those the
    inputs stand for (a folder's, a glob's), which a part of a sharded output may name."""
    from .writers import check_outside

    out = output_of(output)
    if not out.remote:
        check_outside(out.first, workdir, shown=output)
    out.check(inputs, [*((str(f), "one of the inputs") for f in files), *claimed(wf, None)])
    if out.remote:
        return  # the check wrote a probe object there
    output = out.first
    parent = Path(output).resolve().parent
    # found now, not at export: a file made and removed there, as access() says yes to root
    # anywhere (/proc, a read-only bind mount) and export failed hours later on its lock file
    try:
        fd, probe = tempfile.mkstemp(prefix=".sadedup-probe-", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise SadedupError(f"output {output}: cannot write in {parent} ({e.strerror.lower() if e.strerror else e})") \
            from None


def _check_clean_eval(wf: Workflow, root: Path, inputs: list, output: str | Path | None) -> None:
    """The file of the clean eval rows, refused before any work when it would write over an
    input, an eval file, the output or the work folder (as --output is)."""
    if wf.decontaminate.write_clean_eval and graph.enabled("decontaminate", wf):
        from .stages.decontaminate import check_clean_eval

        check_clean_eval(wf, root, inputs, output)


def _reopen(workdir: str | Path, overrides: list[str] | None, output: str | Path | None = None,
            require: str | None = None) -> Workspace:
    """An existing work folder, locked, its workflow changed by `overrides`, its output
    (what `run` and `export` write by default) set to `output` when given. `require`: the
    stage the command runs, refused (`_require`) with the changed workflow before any of the
    change is kept: a refused command leaves the folder as it was."""
    ws = Workspace(workdir)
    ws.lock()
    try:
        if overrides or output is not None:
            wf = reference.anchor(anchored(apply_overrides(ws.workflow, overrides or [])))
            if output is not None:
                named, files = ws.held_apart()
                _check_output(output, named, workdir, wf, [f for f, _ in files])
            check_budget(wf)
            refs = reference.check(wf, ws.root, output)
            if output is not None:
                check_not_anothers(output_of(output), ws.root)
            old = ws.read_state()
            _check_clean_eval(wf, ws.root, [d["path"] for d in (old or {}).get("inputs") or []],
                              output if output is not None else ws.output)
            ws.configure(wf, None, None if output is None else str(output))
            reference.adopt(ws, refs)
            if require is not None:
                try:
                    _require(ws, require)
                except SadedupError:
                    if old is not None:
                        ws.write_state(old)
                    raise
            _retire(ws)
        elif require is not None:
            _require(ws, require)
    except BaseException:
        reference.release(ws)
        ws.unlock()
        raise
    return ws


def _retire(ws: Workspace) -> None:
    """Decisions of deciding stages the workflow does not run are taken back."""
    for name in ws.prov.holding([n.name for n in graph.retired(ws.workflow)]):
        ws.prov.retract(name)


@contextmanager
def _session(ws: Workspace, command: str, executor: str) -> Iterator[Context]:
    """A `runs` row for a command that changes the work folder, its executor, and the lock
    for its duration. An interrupted command drops its workers' tasks at once."""
    wf = ws.workflow
    _warn_machine(wf)
    try:
        ctx = Context(ws, make_executor(executor or wf.run.executor, wf.run.n_workers, wf.run.scheduler))
    except BaseException:
        ws.unlock()
        raise
    check = getattr(ctx.executor, "check_workdir", None)
    try:
        if check is not None:  # workers elsewhere must see this folder, before any work
            check(str(ws.root))
        reference.hold(ws)  # the references locked against writers for the command, and listed in refs
        run_id = ws.prov.start_run(command, __version__, json.dumps(_resolved(wf), sort_keys=True),
                                   json.dumps((ws.read_state() or {}).get("inputs")))
    except BaseException:
        ctx.executor.close()
        reference.release(ws)
        ws.unlock()
        raise
    status, error, abort = "failed", None, False
    try:
        yield ctx
        status = "done"
    except BaseException as e:
        abort = isinstance(e, (Interrupted, KeyboardInterrupt))
        status = "interrupted" if abort else "failed"
        error = "interrupted" if abort else f"{type(e).__name__}: {e}"
        raise
    finally:
        try:
            ctx.executor.close(abort=abort)
            ws.prov.finish_run(run_id, status, error)  # the database settled by unlock, below
        finally:
            reference.release(ws)
            ws.unlock()


def _warn_machine(wf: Workflow) -> None:
    """Settings this machine cannot give: said, not refused (they are the user's call)."""
    from .config import machine_cores, machine_memory
    from .progress import warn

    cores = machine_cores()
    if wf.run.n_workers > cores:
        warn(f"run.workers={wf.run.n_workers} but this machine gives {cores} core(s); "
             f"no more processes than tasks are started")
    total = machine_memory()
    if wf.run.budget_bytes > total:
        warn(f"run.memory_budget={wf.run.memory_budget} is more than this machine's "
             f"{total / 1e9:.1f} GB of memory; shards sized for it may not fit")


def standing(ws: Workspace, verify: bool = True, of: Collection[str] | None = None) -> list[dict[str, Any]]:
    """Every stage the folder's workflow runs, in order, with its state: done, pending (never
    ran), stale (what it read, or its settings, changed since it ran; or its files are
    damaged), interrupted or failed, and why. `verify` also checks artifacts' checksums.
    `of`: only those stages and the ones they depend on (a stage's state depends on nothing
    else), so a command about one stage neither imports nor checks the stages after it.

    `ws` itself is not changed: the stages are asked through a view of it (same folder, same
    database connection) whose `verify` is the argument, so a caller's Workspace keeps its
    own setting whatever happens here."""
    # the connection made on `ws` first, so the view shares it: a view copied from a folder
    # with none yet opened its own, never closed (a writer's kept the write-ahead log on
    # after every stage command)
    ws.read("SELECT 1")
    view = copy.copy(ws)
    view.verify = verify
    wf = view.workflow
    ctx = Context(view)
    out: list[dict[str, Any]] = []
    current: dict[str, bool] = {}
    wanted = None if of is None else {u for name in of for u in (name, *graph.before(name, wf))}
    live = view.writer()  # a run holds the folder: its `running` stage is running, not interrupted
    for n in graph.plan(wf):
        if wanted is not None and n.name not in wanted:
            continue
        stage = n.stage()
        row = view.stage_row(n.name)
        state, why = "done", None
        if row is None:
            state, why = "pending", "not run yet"
        elif row.status == "failed":
            state, why = ("interrupted", "interrupted") if row.error == "interrupted" else ("failed", row.error)
        elif row.status == "running":
            ran_by = json.loads(row.detail or "{}").get("pid")  # None: marked by an older sadedup
            state, why = ("running", f"running now (sadedup{live} holds the folder)") \
                if live is not None and (ran_by is None or live.pid == ran_by) else ("interrupted", "interrupted")
        else:
            waiting = [u for u in graph.upstream(n.name, wf) if not current[u]]
            try:
                key = stage.key(ctx)
                if waiting:
                    state, why = "stale", f"{waiting[0]} is not current"
                elif row.key != key:
                    state, why = "stale", _what_changed(stage, ctx, row)
                elif not stage.done(ctx, key):
                    state, why = "stale", "its files are missing or damaged"
            except InputsChanged as e:  # what it was made from is not there any more
                state, why = "stale", str(e)
            except SadedupError as e:  # what it needs is not there (no output named yet, say)
                state, why = "pending", str(e)
        current[n.name] = state == "done"
        out.append({"stage": n.name, "state": state, "why": why})
    return out


def status(workdir: str | Path, verify: bool = False) -> list[dict[str, Any]]:
    """Every stage of the work folder's workflow with its state and why (see `standing`);
    artifacts are checked by size, or with `verify` read back and checksummed. Its read-only
    connection is closed before it returns (a caller in a long-lived process holds nothing open)."""
    ws = Workspace(workdir, readonly=True)
    try:
        return standing(ws, verify=verify)
    finally:
        ws.close()


def _what_changed(stage: Stage, ctx: Context, row) -> str:
    was = {s[0]: s for s in json.loads(row.detail or "{}").get("stamps", [])}
    for s in stage.stamps(ctx):
        if was.get(s[0]) != s:
            return f"{s[0]} changed since it ran"
    return "its settings changed since it ran"


def _require(ws: Workspace, name: str) -> None:
    """A stage command refuses to run on top of stages that are not current."""
    ws.check_inputs()  # said as it is: ingest's own advice (`run`) would be refused for it too
    wf = ws.workflow
    if not graph.enabled(name, wf):
        n = graph.node(name)
        why = f"stages={','.join(wf.stages)}" if n.method not in wf.stages else "its setting turns it off"
        raise SadedupError(f"stage {name} is not part of this work folder's workflow ({why}); "
                           f"add it with --set")
    # export reads the decisions, not the artifacts: their sizes are checked, not their sums
    states = {s["stage"]: s for s in standing(ws, verify=name != "export", of=_needs(ws, name))}
    s = first_not_done(ws, name, states)
    if s is not None:
        raise SadedupError(f"stage {name} needs {s['stage']} first ({s['why']}): run `{stage_command(ws, s['stage'])}`")


def _needs(ws: Workspace, name: str) -> set[str]:
    """The stages that must be current before stage `name` runs (not those it runs itself first)."""
    return set(graph.before(name, ws.workflow)) - set(graph.node(name).stage().runs_after)


def stage_command(ws: Workspace, name: str) -> str:
    """The command a refusal advises to bring stage `name` of this folder current: one place, so
    that every advice names a command that runs (a stage command refuses while a stage it needs
    is not current, so an advice names the first such stage: `first_not_done`). A stage without a
    command of its own (candidates) is run by the command of the stage that runs it first (build)."""
    if name == "ingest":
        return f"sadedup run --workdir {ws.root}"
    runner = next((n.name for n in graph.NODES if name in n.stage().runs_after), name)
    return f"sadedup {runner} {ws.root}"


def first_not_done(ws: Workspace, name: str, states: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """Of the stages `name` needs (their `standing` entries in `states`, by stage), the first in
    run order that is not done, None when all are."""
    needed = _needs(ws, name)
    return next((s for s in states.values() if s["stage"] in needed and s["state"] != "done"), None)


def _run_stages(ctx: Context, names: list[str]) -> dict[str, Any]:
    return {n: graph.node(n).stage().run(ctx) for n in names}


@_plain_errors
def run(inputs: list[str | Path] | None, output: str | Path | None, workdir: str | Path, workflow: str | None = None,
        overrides: list[str] | None = None, restart: bool = False, executor: str | None = None,
        workers: int | None = None, references: list[str | Path] | None = None) -> dict[str, Any]:
    """Runs every stage the workflow lists, skipping work already done in `workdir`. Without
    inputs (or output), those recorded in the work folder; without `references` (--reference),
    the workflow's run.reference (on an existing folder: the recorded ones)."""
    if restart and output is None:  # said before the folder is emptied, not after
        both = inputs is None
        raise SadedupError(f"--restart forgets the recorded {'inputs and output' if both else 'output'}: "
                           f"pass {'--input PATH and ' if both else ''}--output PATH too")
    ws = _open(workdir, workflow, _with_workers(overrides, workers), inputs, output, restart, references)
    if ws.output is None:
        ws.unlock()
        raise SadedupError("no output given: pass --output PATH")
    with _session(ws, "run", executor) as ctx:
        # a corpus this large is read in pieces and gets a shard per worker (stages/sizing.py):
        # start the workers now
        if sum(d["size"] for d in ws.read_state()["inputs"]) > 2 * MIN_SPLIT_TOKENS:
            ctx.executor.warm(PRELOAD)
        return _run_stages(ctx, [n.name for n in graph.plan(ctx.wf)])


@_plain_errors
def ingest(inputs: list[str | Path], workdir: str | Path, workflow: str | None = None,
           overrides: list[str] | None = None, restart: bool = False, executor: str | None = None,
           workers: int | None = None) -> dict[str, Any]:
    """Reads the inputs into the work folder: documents, input_errors, texts."""
    ws = _open(workdir, workflow, _with_workers(overrides, workers), inputs, None, restart)
    with _session(ws, "ingest", executor) as ctx:
        return _run_stages(ctx, ["ingest"])


def stage(name: str, workdir: str | Path, overrides: list[str] | None = None, executor: str | None = None,
          workers: int | None = None, **kw: Any) -> dict[str, Any]:
    """Runs one stage (and the stages its command includes) on an existing work folder."""
    ws = _reopen(workdir, _with_workers(overrides, workers), kw.pop("output", None), require=name)
    with _session(ws, name, executor) as ctx:
        first = [s for s in graph.node(name).stage().runs_after if graph.enabled(s, ctx.wf)]
        done = _run_stages(ctx, first)
        s = graph.node(name).stage() if not kw else type(graph.node(name).stage())(**kw)
        return {name: s.run(ctx)} | done


@_plain_errors
def run_stage(name: str, workdir: str | Path, overrides: list[str] | None = None, executor: str | None = None,
              workers: int | None = None) -> dict[str, Any]:
    """Runs stage `name` on an existing work folder; its recorded detail."""
    return stage(name, workdir, overrides, executor, workers)[name]


@_plain_errors
def exact(workdir, overrides=None, executor=None, workers=None):
    """Drops exact duplicate documents (normalized-text hash), one kept per group."""
    return stage("exact", workdir, overrides, executor, workers)["exact"]


@_plain_errors
def minhash(workdir, overrides=None, executor=None, workers=None):
    """Drops near-duplicate documents (MinHash-LSH clusters), one kept per cluster."""
    return stage("minhash", workdir, overrides, executor, workers)["minhash"]


@_plain_errors
def tokenize(workdir, overrides=None, executor=None, workers=None):
    """Tokenizes the documents that survived the document stages and cuts them into shards."""
    return stage("tokenize", workdir, overrides, executor, workers)["tokenize"]


@_plain_errors
def build(workdir, overrides=None, executor=None, workers=None):
    """Finds each shard's candidate text and builds its suffix and LCP arrays (over all the
    text with substring.prefilter off); finished shards are kept."""
    out = stage("build", workdir, overrides, executor, workers)
    return out.pop("build") | out


@_plain_errors
def repeats(workdir, overrides=None, executor=None, workers=None):
    """Groups equal L-token windows across all shards."""
    return stage("repeats", workdir, overrides, executor, workers)["repeats"]


@_plain_errors
def remove(workdir, overrides=None, executor=None, workers=None):
    """Applies the keep rule and the drop rule; writes spans and decisions to the database."""
    return stage("remove", workdir, overrides, executor, workers)["remove"]


@_plain_errors
def export(workdir, output=None, overrides=None, executor=None, workers=None):
    """Writes the kept documents, cut, in the input's format; refuses while any stage it
    depends on is not current."""
    kw = {"output": output} if output is not None else {}
    return stage("export", workdir, overrides, executor, workers, **kw)["export"]
