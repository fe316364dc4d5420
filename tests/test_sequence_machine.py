"""Sequences of user commands on one work folder, drawn by Hypothesis: every command, in any
order, interrupted anywhere, with settings changed in between, either succeeds or is refused in
one line (exit status != 0, one line on stderr, no traceback), and every successful full `run`
or `export` leaves the output and the documents/spans/clusters tables of a fresh run with the
folder's settings. Read-only commands (status, sql, explain) never change the folder.

The commands are the real CLI in subprocesses; the fresh runs they are held to run in this
process (sadedup.run), once per setting. test_sequences.py holds the sequences this machine
found, reduced, as plain tests.

    SADEDUP_SEQ_EXAMPLES=200 python -m pytest -p no:cacheprovider -q tests/test_sequence_machine.py

runs the long search (200 sequences of up to SADEDUP_SEQ_STEPS=15 commands; SADEDUP_SEQ_LOG=FILE
follows it); by default a few
short sequences keep the suite's cost under a minute.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from helpers import decisions, sequence_corpus
from hypothesis import HealthCheck, Phase, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

import sadedup
from sadedup.config import builtin_workflows
from sadedup.errors import SadedupError

LONG = int(os.environ.get("SADEDUP_SEQ_EXAMPLES", "0"))
STEPS = int(os.environ.get("SADEDUP_SEQ_STEPS", "15" if LONG else "8"))
LOG = os.environ.get("SADEDUP_SEQ_LOG")  # a file to follow the long search in: each command as it runs

WORKFLOWS = sorted(builtin_workflows())
# the settings a user changes between commands: each moves decisions on this corpus (or the
# shard plan, which must not)
POOL = {
    "minhash.threshold": ("0.7", "0.8"),
    "substring.min_length": ("20", "30"),
    "exact.keep": ("first", "longest"),
    "substring.shard_tokens": ("auto", "8000"),
    "stages": ("exact,minhash,substring", "exact,minhash", "substring", "minhash,substring",
               "exact,lines,substring"),
}
SETS = st.lists(st.sampled_from([(k, v) for k, vs in POOL.items() for v in vs]), max_size=2,
                unique_by=lambda kv: kv[0])
WORKERS = st.sampled_from([None, 1, 2])
STAGES = ("ingest", "exact", "minhash", "lines", "tokenize", "build", "repeats", "remove", "export")
# what a damaged one of makes the folder's own record unreadable: refusals (until --restart) are
# then right, and what the folder remembers of its settings may be gone
META = ("state.json", "sadedup.db", ".sadedup-workdir")
ENV = {**os.environ, "CI": "1"}


@dataclass(frozen=True)
class Settings:
    """What a work folder is configured with: a workflow and the --set values laid over it."""
    workflow: str = "default"
    sets: tuple[tuple[str, str], ...] = ()

    def then(self, workflow: str | None, sets: list[tuple[str, str]]) -> "Settings":
        """After a command with `workflow` (None: the folder keeps its own) and `sets`."""
        merged = {} if workflow is not None else dict(self.sets)
        merged.update(sets)
        return Settings(workflow or self.workflow, tuple(sorted(merged.items())))

    def overrides(self) -> list[str]:
        return [f"{k}={v}" for k, v in self.sets]


class Fresh:
    """The output and decisions of a fresh run of the corpus with given Settings (None when a
    fresh run refuses them), made in this process once per Settings."""

    def __init__(self, corpus: Path, base: Path) -> None:
        self.corpus, self.base, self.done = corpus, base, {}

    def __call__(self, s: Settings) -> tuple[bytes, list] | None:
        if s not in self.done:
            d = Path(tempfile.mkdtemp(dir=self.base))
            try:
                sadedup.run(self.corpus, d / "out.jsonl", d / "work", workflow=s.workflow, overrides=s.overrides(),
                            executor="inline", quiet=True)
                self.done[s] = (d / "out.jsonl").read_bytes(), decisions(d / "work")
            except SadedupError:
                self.done[s] = None
            finally:
                shutil.rmtree(d, ignore_errors=True)
        return self.done[s]


def snapshot(folder: Path) -> dict[str, tuple[int, str]] | None:
    """Every file under `folder`, by relative path: size and content hash."""
    if not folder.exists():
        return None
    return {str(p.relative_to(folder)): (p.stat().st_size, hashlib.sha1(p.read_bytes()).hexdigest())
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


def said(line: str) -> None:
    """A command and its outcome: in the falsifying example's report, and in LOG as it runs."""
    note(line)
    if LOG:
        with open(LOG, "a") as f:
            f.write(line + "\n")


def _default_sigint() -> None:
    """The child answers Ctrl-C as from a terminal even when this process ignores SIGINT (a
    test runner started in the background of a shell without job control)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def well_formed(p: subprocess.CompletedProcess, quiet: bool, interrupted: int | None = None) -> None:
    """Success, or a refusal in one line; with `interrupted` (the signal sent) also the line of
    an interruption (exit 128 + signal), or death by the signal before Python answers signals."""
    err = p.stderr
    if interrupted == signal.SIGINT and err.rstrip().endswith("KeyboardInterrupt") and \
            not re.search(r'File "[^"]*/sadedup/', err):
        # Ctrl-C in the interpreter's own start-up (its site module, an editable install's
        # finder among the .pth files), before any module of sadedup ran
        return
    assert "Traceback" not in err, err
    if p.returncode == 0:
        return
    lines = err.strip().splitlines()
    if interrupted is not None and p.returncode == -interrupted:
        assert not lines, err  # killed before the interpreter set its handlers: nothing ran
        return
    assert p.returncode > 0, (p.returncode, err)
    assert lines, f"exit {p.returncode} and nothing on stderr"
    if interrupted is not None and p.returncode == 128 + interrupted:
        name = "SIGTERM" if interrupted == signal.SIGTERM else "Ctrl-C"
        assert lines[-1] == f"sadedup: interrupted ({name}); rerun the same command to resume", err
    else:
        assert lines[-1].startswith("sadedup: error: "), err
    if quiet:
        assert len(lines) == 1, err
    else:
        assert not any(x.startswith(("sadedup: error", "sadedup: internal error")) for x in lines[:-1]), err


class Sequences(RuleBasedStateMachine):
    """One user, one work folder, one corpus. The model: the Settings the folder may hold (more
    than one after an interrupted or refused command, which may or may not have recorded its
    own), whether it is configured, its recorded output, and what each output file may hold."""

    def __init__(self, corpus: Path, fresh: Fresh, base: Path) -> None:
        super().__init__()
        said("---- a new sequence")
        self.corpus, self.fresh = corpus, fresh
        self.home = Path(tempfile.mkdtemp(dir=base))
        self.work = self.home / "w"
        self.outs = {"out": self.home / "out.jsonl", "other": self.home / "other.jsonl"}
        self.cands: set[Settings] = {Settings()}
        self.configured: bool | None = False  # None: maybe (an interrupted first command)
        self.output: set[Path] = set()  # the folder's recorded output (one of them)
        self.output_sure = False  # a successful command recorded one (a refused one may not have)
        self.contents: dict[Path, bytes | None] = {p: None for p in self.outs.values()}
        self.meta_damaged = False  # state.json, the database or the marker damaged since the last --restart
        self.current: bool | None = False  # True: every stage done (status must say so, export must succeed)

    # ---- running commands

    def command(self, *args, quiet: bool = True) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "sadedup.cli", *(["-q"] if quiet else []), *map(str, args)]
        p = subprocess.run(argv, capture_output=True, text=True, cwd=self.home, env=ENV, timeout=600,
                           preexec_fn=_default_sigint)
        said(f"$ sadedup {' '.join(map(str, argv[3:]))}  -> {p.returncode} {p.stderr.strip()[-300:]!r}")
        well_formed(p, quiet)
        return p

    def after(self, p: subprocess.CompletedProcess, workflow: str | None, sets: list, output: Path | None,
              full: bool, inputs: bool, restart: bool = False) -> None:
        """The model after a command that configures the folder (run, ingest, a stage command
        with --set, export --output); `full`: it ends in an export of everything. `restart`:
        the folder's settings are forgotten, as on an empty folder."""
        new = {c.then(workflow, sets) for c in (self.cands if not restart else [Settings()])}
        if self.meta_damaged:  # the folder may have lost its own settings: the default's are laid over
            new.add(Settings().then(workflow, sets))
        targets = {output} if output is not None else set(self.output)
        if p.returncode == 0:
            self.cands = new
            if inputs:
                self.configured = True
            if full:
                self.check_fresh(targets)
                self.current = True
            else:
                if output is not None:
                    self.output = {output}
                    self.output_sure = True
                self.current = None
                self.check_outputs(set(), set())
            return
        # a refused or interrupted command may have recorded its settings (and its output)
        # before it stopped: either holds
        self.cands = self.cands | new
        if inputs and not self.configured:
            self.configured = None
        self.current = None
        if output is not None:
            self.output = self.output | {output}
        self.check_outputs(new, targets if full else set())

    def check_fresh(self, targets: set[Path]) -> None:
        """The output (one of the `targets` the command may have written) and the decisions
        equal a fresh run's with one of the Settings the folder may hold (which then is the one
        it holds)."""
        assert targets, "a run succeeded without an output to write"
        got = decisions(self.work)
        matches, seen = set(), {}
        for path in targets:
            seen[path] = path.read_bytes() if path.exists() else None
            for c in self.cands:
                if self.fresh(c) == (seen[path], got):
                    matches.add((path, c))
        if not matches:
            lines = []
            for c in sorted(self.cands, key=repr):
                want = self.fresh(c)
                if want is None:
                    lines.append(f"{c}: a fresh run refuses these settings")
                    continue
                diff = [(w, g) for w, g in zip(want[1], got) if w != g][:3]
                lines.append(f"{c}: output {'same' if want[0] in seen.values() else 'differs'}, "
                             f"{len(want[1])} vs {len(got)} decision rows, first differences {diff}")
            raise AssertionError("not the output of a fresh run:\n" + "\n".join(lines))
        self.cands = {c for _, c in matches}
        self.output = {path for path, _ in matches}
        self.output_sure = True
        for path in self.output:
            self.contents[path] = seen[path]
        self.check_outputs(set(), set())

    def check_outputs(self, maybe: set[Settings], targets: set[Path]) -> None:
        """Each output file holds what it held, or (one of the `targets` of an unfinished
        command) a fresh run's output with one of the `maybe` Settings: never a partial or
        mixed one."""
        for path, was in self.contents.items():
            now = path.read_bytes() if path.exists() else None
            if now == was:
                continue
            allowed = {f[0] for f in map(self.fresh, maybe) if f is not None} if path in targets else set()
            assert now in allowed, f"{path.name} changed to {len(now or b'')} bytes that no fresh run writes"
            self.contents[path] = now

    def sound(self) -> bool:
        """Whether the folder's own record is intact, so a run with what it needs must succeed."""
        return not self.meta_damaged

    def out(self) -> Path:
        """The output a command that must name one names: the recorded one, or out.jsonl."""
        return min(self.output) if self.output else self.outs["out"]

    # ---- the rules: what a user does

    @initialize(first=st.sampled_from([True, True, True, False]), length=st.sampled_from(["20", "30"]), workers=WORKERS)
    def start(self, first: bool, length: str, workers: int | None) -> None:
        """Most sequences start from a first run, as most users do."""
        if first:
            self.run(None, False, [("substring.min_length", length)], workers, True, "out", True)

    @rule(workflow=st.one_of(st.none(), st.sampled_from(WORKFLOWS)), as_path=st.booleans(), sets=SETS,
          workers=WORKERS, give_input=st.booleans(), output=st.sampled_from([None, "out", "other"]),
          quiet=st.booleans())
    def run(self, workflow: str | None, as_path: bool, sets: list, workers: int | None, give_input: bool,
            output: str | None, quiet: bool) -> None:
        """`sadedup run`, a workflow named (by name or path) or not, --input and --output given or
        left to the folder's record."""
        p = self.command("run", *self.run_args(workflow, as_path, sets, workers, give_input, output), quiet=quiet)
        out = self.outs[output] if output else None
        if p.returncode != 0 and self.sound() and (give_input or self.configured) and (out or self.output_sure):
            raise AssertionError(f"a run on a sound folder refused: {p.stderr}")
        self.after(p, workflow, with_workers(sets, workers), out, True, give_input)

    @rule(change=st.sampled_from([(k, v) for k, vs in POOL.items() for v in vs]), workers=WORKERS)
    def rerun_changed(self, change: tuple[str, str], workers: int | None) -> None:
        """The commonest way a folder goes stale: the same run again with one setting changed
        (drawn as often as every other command, so a short search meets it)."""
        self.run(None, False, [change], workers, True, "out", True)

    def run_args(self, workflow, as_path, sets, workers, give_input, output) -> list:
        named = [] if workflow is None else [
            str(builtin_workflows()[workflow]) if as_path else workflow]
        return [*named, *(["--input", self.corpus] if give_input else []),
                *(["--output", self.outs[output]] if output else []), "--workdir", self.work,
                *(x for k, v in sets for x in ("--set", f"{k}={v}")),
                *(["--workers", str(workers)] if workers is not None else [])]

    @rule(workflow=st.one_of(st.none(), st.sampled_from(WORKFLOWS)), sets=SETS, workers=WORKERS)
    def restart(self, workflow: str | None, sets: list, workers: int | None) -> None:
        p = self.command("run", *self.run_args(workflow, False, sets, workers, True, "out"), "--restart")
        if p.returncode == 0:
            self.meta_damaged = False
        elif self.sound():
            raise AssertionError(f"--restart of a sound folder refused: {p.stderr}")
        self.after(p, workflow, with_workers(sets, workers), self.outs["out"], True, True, restart=True)

    @rule(stage=st.sampled_from(STAGES), sets=SETS, workers=WORKERS, quiet=st.booleans())
    def stage(self, stage: str, sets: list, workers: int | None, quiet: bool) -> None:
        """One stage command, with or without a changed setting."""
        extra = [*(x for k, v in sets for x in ("--set", f"{k}={v}")),
                 *(["--workers", str(workers)] if workers is not None else [])]
        if stage == "ingest":
            p = self.command("ingest", "--input", self.corpus, "--workdir", self.work, *extra, quiet=quiet)
        else:
            p = self.command(stage, self.work, *extra, quiet=quiet)
        if p.returncode != 0 and stage != "ingest":  # refused: it keeps nothing of its --set
            self.check_outputs(set(), set())
            return
        self.after(p, None, with_workers(sets, workers), None, stage == "export", stage == "ingest")

    @rule(to=st.sampled_from(["out", "other"]))
    def export(self, to: str) -> None:
        """`sadedup export` to the folder's output or to another."""
        was_current = self.current
        p = self.command("export", self.work, "--output", self.outs[to])
        if was_current and self.sound():
            assert p.returncode == 0, f"export of a current folder refused: {p.stderr}"
        if p.returncode == 0:
            self.after(p, None, [], self.outs[to], True, False)
        else:
            self.check_outputs(set(), set())

    @rule(data=st.data(), how=st.sampled_from(["delete", "truncate", "empty"]))
    def damage(self, data, how: str) -> None:
        """A file of the work folder deleted, cut to half its size or emptied."""
        files = sorted(str(p.relative_to(self.work)) for p in self.work.rglob("*") if p.is_file()) \
            if self.work.exists() else []
        if not files:
            return
        # drawn from a fixed range, not from the list: which files a folder holds may differ
        # between replays of one sequence (an interrupted command's leftovers), and a draw
        # whose range moves is an error of Hypothesis's, not a finding
        name = files[data.draw(st.integers(0, 1 << 16), label="file index") % len(files)]
        f = self.work / name
        if how == "delete":
            f.unlink()
        else:
            os.truncate(f, 0 if how == "empty" else f.stat().st_size // 2)
        said(f"# {name} damaged: {how}")  # what the commands after it met, in the report and the log
        if name.startswith(META):
            self.meta_damaged = True
        self.current = None

    @rule(sig=st.sampled_from([signal.SIGINT, signal.SIGTERM]), delay=st.floats(0, 1.5),
          workflow=st.one_of(st.none(), st.sampled_from(WORKFLOWS)), sets=SETS, workers=WORKERS,
          what=st.sampled_from(["run", "export"]))
    def interrupted(self, sig: int, delay: float, workflow: str | None, sets: list, workers: int | None,
                    what: str) -> None:
        """Ctrl-C or a kill of the whole process group, after a short while."""
        out = self.out()
        if what == "run":
            argv = ["run", *self.run_args(workflow, False, sets, workers, True, None), "--output", out]
        else:
            argv, workflow, sets, workers = ["export", self.work, "--output", out], None, [], None
        proc = subprocess.Popen([sys.executable, "-m", "sadedup.cli", "-q", *map(str, argv)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=self.home,
                                env=ENV, start_new_session=True, preexec_fn=_default_sigint)
        time.sleep(delay)
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        _, err = proc.communicate(timeout=600)
        p = subprocess.CompletedProcess(argv, proc.returncode, "", err)
        said(f"$ sadedup -q {' '.join(map(str, argv))}  ({signal.Signals(sig).name} after {delay:.2f} s) -> "
             f"{p.returncode} {err.strip()[-300:]!r}")
        well_formed(p, True, interrupted=sig)
        if what == "export" and p.returncode != 0:
            self.check_outputs(self.cands, {out})
            self.current = None
            return
        self.after(p, workflow, with_workers(sets, workers), out, True, what == "run")

    @rule(verify=st.booleans(), json=st.booleans())
    def status(self, verify: bool, json: bool) -> None:
        p = self.read_only("status", self.work, *(["--verify"] if verify else []),
                           *(["--format", "json"] if json else []))
        if self.current and self.sound() and not json:
            assert p.returncode == 0 and "pending: nothing" in p.stdout, p.stdout + p.stderr

    @rule(query=st.sampled_from(["SELECT status, reason, count(*) FROM documents GROUP BY 1, 2",
                                 "SELECT * FROM spans LIMIT 3", "SELECT * FROM stages",
                                 "DELETE FROM spans", "UPDATE documents SET status = 'kept'",
                                 "PRAGMA user_version = 9", "CREATE TABLE mine (a)"]),
          fmt=st.sampled_from(["table", "csv", "json"]))
    def sql(self, query: str, fmt: str) -> None:
        p = self.read_only("sql", self.work, query, "--format", fmt)
        if not query.startswith("SELECT"):
            assert p.returncode != 0, f"sql wrote: {query}"

    @rule(doc=st.sampled_from(["0", "5", "40", "150", "d7", "d200", "9999"]), json=st.booleans())
    def explain(self, doc: str, json: bool) -> None:
        self.read_only("explain", self.work, doc, *(["--format", "json"] if json else []))

    def read_only(self, *args) -> subprocess.CompletedProcess:
        """A command that must change nothing: not the work folder, not an output."""
        before = snapshot(self.work)
        p = self.command(*args)
        assert snapshot(self.work) == before, f"sadedup {args[0]} changed the work folder"
        self.check_outputs(set(), set())
        return p

    def teardown(self) -> None:
        """Every sequence ends checked: a plain rerun (then --restart, when the folder's own
        record was damaged) gives a fresh run's output."""
        try:
            out = self.out()
            p = self.command("run", "--input", self.corpus, "--output", out, "--workdir", self.work)
            if p.returncode != 0:
                assert not self.sound(), f"the rerun that ends the sequence refused: {p.stderr}"
                self.after(p, None, [], out, True, True)
                p = self.command("run", "--input", self.corpus, "--output", out, "--workdir", self.work, "--restart")
                if p.returncode != 0:  # only a folder that no longer says sadedup made it
                    assert not (self.work / ".sadedup-workdir").exists(), p.stderr
                    return
                self.meta_damaged = False
            self.after(p, None, [], out, True, True)
        finally:
            shutil.rmtree(self.home, ignore_errors=True)


def with_workers(sets: list, workers: int | None) -> list:
    """--workers N is run.workers=N, recorded as a --set is."""
    return [*sets, *([("run.workers", str(workers))] if workers is not None else [])]


def test_user_sequences_end_fresh_or_refused(tmp_path_factory):
    corpus = sequence_corpus(tmp_path_factory.mktemp("machine") / "in.jsonl")
    base = tmp_path_factory.mktemp("sequences")
    fresh = Fresh(corpus, base)
    run_state_machine_as_test(
        lambda: Sequences(corpus, fresh, base),
        settings=settings(max_examples=LONG or 4, stateful_step_count=STEPS, deadline=None, derandomize=not LONG,
                          database=None, suppress_health_check=list(HealthCheck),
                          phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink]))
