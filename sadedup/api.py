"""The Python API as a script calls it: one path or several, a workflow by name, path or
`Workflow` object, overrides as a dict or as "section.key=value" strings, `quiet=`, a typed
result; and `dedup()` for a table held in memory.

Each function is the CLI command of the same name (sadedup.pipeline does the work).
"""
from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, Union

from . import inspect as insp
from .locations import has_glob, is_url, without_file_scheme
from . import pipeline, progress
from .config import Workflow
from .errors import ConfigError, SadedupError

PathLike = Union[str, "os.PathLike[str]"]
Inputs = Union[PathLike, Sequence[PathLike]]
Overrides = Union[Mapping[str, Any], Sequence[str], str]
WorkflowLike = Union[PathLike, Workflow]

__all__ = ["RunResult", "run", "ingest", "exact", "minhash", "lines", "passages", "decontaminate", "tokenize", "build", "repeats", "remove", "export",
           "dedup", "report", "sweep", "count", "locate", "index"]


# ---- what a script passes, as the pipeline takes it

def _path(p: str | os.PathLike) -> str | Path:
    """A local path as a Path (file:// taken as one); a URL or a glob as the string it is (a
    Path would fold `//`)."""
    p = without_file_scheme(p)
    return str(p) if isinstance(p, str) and (is_url(p) or has_glob(p)) else Path(p)


def _inputs(inputs: Inputs | None) -> list[str | Path] | None:
    """One path (str or PathLike) or a sequence of them; never the characters of a string."""
    if inputs is None:
        return None
    if isinstance(inputs, (str, os.PathLike)):
        return [_path(inputs)]
    if isinstance(inputs, (bytes, bytearray)) or not isinstance(inputs, (Sequence, set, frozenset, Iterator)):
        raise SadedupError(f"inputs: expected a path or a list of paths, not {type(inputs).__name__}"
                           + (" (for a table in memory, use sadedup.dedup)" if hasattr(inputs, "schema") else ""))
    out = []
    for p in inputs:
        if not isinstance(p, (str, os.PathLike)):
            raise SadedupError(f"inputs: expected paths, not {type(p).__name__} {p!r}")
        out.append(_path(p))
    return out


def _value(v: Any) -> str:
    """A Python value as `--set` text: true/false, auto for None, lists comma-separated."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "auto"
    if isinstance(v, (list, tuple)):
        return ",".join(map(str, v))
    return str(v)


def _overrides(overrides: Overrides | None) -> list[str]:
    """{"substring.min_length": 50} (or {"substring": {"min_length": 50}}), or a list of
    "section.key=value" strings, or one such string."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, Mapping):
        out = []
        for k, v in overrides.items():
            if isinstance(v, Mapping):
                out += [f"{k}.{kk}={_value(vv)}" for kk, vv in v.items()]
            else:
                out.append(f"{k}={_value(v)}")
        return out
    items = list(overrides)
    bad = [x for x in items if not isinstance(x, str)]
    if bad:
        raise ConfigError(f"overrides: expected a dict or \"section.key=value\" strings, not {bad[0]!r}")
    return items


def _workflow(workflow: WorkflowLike | None) -> tuple[str | None, list[str]]:
    """A name or path as it is; a Workflow object as every one of its keys set over the default."""
    if workflow is None:
        return None, []
    if isinstance(workflow, Workflow):
        d = workflow.to_dict()
        if d.pop("sources", None):  # a list of tables: no section.key=value says it
            raise ConfigError("workflow: a Workflow with [[sources]] cannot be passed as an object; pass the path of "
                              "the workflow file that has them")
        sets = [f"stages={_value(d.pop('stages'))}"]
        for section, values in d.items():
            sets += [f"{section}.{k}={_value(v)}" for k, v in values.items()]
        return None, sets
    if isinstance(workflow, (str, os.PathLike)):
        return os.fspath(workflow), []
    raise ConfigError(f"workflow: expected a name, a path or a sadedup Workflow, not {type(workflow).__name__}")


def _options(executor: str | None, workers: int | None) -> dict[str, Any]:
    """Only what the caller gave: the pipeline's own defaults stand for the rest."""
    return {**({"executor": executor} if executor is not None else {}),
            **({"workers": workers} if workers is not None else {})}


@contextmanager
def _quiet(quiet: bool | None) -> Iterator[None]:
    """quiet=True: no progress and no notes, for this call (warnings and errors still come)."""
    if quiet is None:
        yield
        return
    was = progress.quiet()
    progress.set_quiet(quiet)
    try:
        yield
    finally:
        progress.set_quiet(was)


# ---- the result of a run

@dataclass(frozen=True)
class RunResult(Mapping[str, dict]):
    """What `sadedup.run` did.

    Attributes:
        workdir: the work folder (its `sadedup.db` says why each byte went).
        output: the file written.
        documents: input rows that are documents.
        kept: documents written to the output (`cut` of them with passages cut out).
        dropped: documents left out, by reason: `exact_duplicate`, `near_duplicate`,
            `substring_coverage`.
        cut: kept documents whose text lost passages (None without an export record).
        input_errors: input rows (or files) that are not documents, in `input_errors`.
        stages: each stage's detail as recorded in the `stages` table (counts, timings,
            settings), with `"skipped": True` for a stage whose earlier result was reused.

    It is also a read-only mapping from stage name to that detail, so `result["export"]["rows"]`
    and `result["exact"].get("skipped")` work as they did when `run` returned a dict.
    """

    workdir: Path
    output: Path | None
    documents: int
    kept: int
    dropped: dict[str, int]
    cut: int | None
    input_errors: int
    stages: dict[str, dict[str, Any]]

    def __getitem__(self, stage: str) -> dict[str, Any]:
        return self.stages[stage]

    def __iter__(self) -> Iterator[str]:
        return iter(self.stages)

    def __len__(self) -> int:
        return len(self.stages)

    @property
    def skipped(self) -> list[str]:
        """The stages whose recorded result was reused."""
        return [s for s, d in self.stages.items() if isinstance(d, dict) and d.get("skipped")]

    def to_dict(self) -> dict[str, Any]:
        """Plain values, for JSON."""
        return {"workdir": str(self.workdir), "output": None if self.output is None else str(self.output),
                "documents": self.documents, "kept": self.kept, "dropped": dict(self.dropped), "cut": self.cut,
                "input_errors": self.input_errors, "stages": self.stages}

    @classmethod
    def of(cls, workdir: PathLike, stages: dict[str, dict[str, Any]]) -> "RunResult":
        """The result of a run on `workdir` whose stages returned `stages`, counted in its database."""
        _, rows = insp.sql(workdir, "SELECT status, reason, count(*) FROM documents GROUP BY 1, 2")
        kept = sum(n for status, _, n in rows if status == "kept")
        dropped = {reason or status: n for status, reason, n in rows if status != "kept"}
        errors = insp.sql(workdir, "SELECT count(*) FROM input_errors")[1][0][0]
        export = stages.get("export") or {}
        output = export.get("output")
        return cls(workdir=Path(workdir), output=None if output is None else _path(output),
                   documents=sum(n for _, _, n in rows), kept=kept, dropped=dropped, cut=export.get("cut"),
                   input_errors=errors, stages={k: insp.public(d) if isinstance(d, dict) else d
                                                for k, d in stages.items()})


# ---- the commands

def run(inputs: Inputs | None, output: PathLike | None, workdir: PathLike, workflow: WorkflowLike | None = None,
        overrides: Overrides | None = None, restart: bool = False, executor: str | None = None,
        workers: int | None = None, quiet: bool | None = None, references: Inputs | None = None) -> RunResult:
    """Runs every stage of the workflow and writes the output; work already done in `workdir`
    is reused (a rerun resumes).

    Args:
        inputs: a path, or a list of paths: files (.jsonl[.gz|.zst], .parquet, .txt) or
            folders of them. None on an existing work folder: the recorded inputs.
        output: the file to write; its suffix picks the format. None: the recorded one.
        workdir: the work folder (artifacts and sadedup.db).
        workflow: a built-in name ("default", "c4", "fineweb", "keep_first"), a .toml path, or
            a `sadedup.config.Workflow` object (e.g. from `sadedup.load_workflow`).
        overrides: {"substring.min_length": 50, "stages": ["substring"]} or
            ["substring.min_length=50", "stages=substring"], applied over the workflow.
        restart: forget what sadedup wrote in `workdir` first, its recorded settings and references too.
        executor, workers: where per-shard work runs and how many processes (default: the
            workflow's run.workers, 0 = every core this process may use).
        quiet: True for no progress bars or notes (warnings still come).
        references: a finished work folder, or a list of them, to deduplicate against
            (`--reference`, run.reference): their kept documents come first and are never
            dropped or cut. None: the workflow's (on an existing folder, the recorded ones).

    Returns:
        A `RunResult`: counts (documents, kept, dropped by reason, cut, input_errors), the
        output path and each stage's detail; `result["minhash"]` is that stage's detail.
    """
    name, sets = _workflow(workflow)
    with _quiet(quiet):
        stages = pipeline.run(_inputs(inputs), output, workdir, name, [*sets, *_overrides(overrides)],
                              restart=restart, references=_inputs(references), **_options(executor, workers))
    return RunResult.of(workdir, stages)


def ingest(inputs: Inputs, workdir: PathLike, workflow: WorkflowLike | None = None,
           overrides: Overrides | None = None, restart: bool = False, executor: str | None = None,
           workers: int | None = None, quiet: bool | None = None) -> dict[str, Any]:
    """Reads the inputs (a path or a list of paths) into the work folder; returns
    {"ingest": detail}. The other arguments are those of `run`."""
    name, sets = _workflow(workflow)
    with _quiet(quiet):
        return pipeline.ingest(_inputs(inputs) or [], workdir, name, [*sets, *_overrides(overrides)], restart,
                               **_options(executor, workers))


def _stage(fn: Any, workdir: PathLike, overrides: Overrides | None, executor: str | None, workers: int | None,
           quiet: bool | None, **kw: Any) -> dict[str, Any]:
    with _quiet(quiet):
        return fn(workdir, overrides=_overrides(overrides), **kw, **_options(executor, workers))


def exact(workdir: PathLike, overrides: Overrides | None = None, executor: str | None = None,
          workers: int | None = None, quiet: bool | None = None) -> dict[str, Any]:
    """Drops exact duplicate documents; returns the stage's detail (see `run` for the arguments)."""
    return _stage(pipeline.exact, workdir, overrides, executor, workers, quiet)


def minhash(workdir: PathLike, overrides: Overrides | None = None, executor: str | None = None,
            workers: int | None = None, quiet: bool | None = None) -> dict[str, Any]:
    """Drops near-duplicate documents; returns the stage's detail."""
    return _stage(pipeline.minhash, workdir, overrides, executor, workers, quiet)


def _span_stage(name: str, doc: str):
    """The API function of a span stage: runs it on a work folder, returns its detail."""
    def run_it(workdir: PathLike, overrides: Overrides | None = None, executor: str | None = None,
               workers: int | None = None, quiet: bool | None = None) -> dict[str, Any]:
        def stage(workdir, overrides=None, **kw):
            return pipeline.run_stage(name, workdir, overrides, **kw)

        return _stage(stage, workdir, overrides, executor, workers, quiet)

    run_it.__name__ = run_it.__qualname__ = name
    run_it.__doc__ = doc
    return run_it


lines = _span_stage("lines", "Cuts repeated lines (the `lines` stage; see README, Line dedup); returns the stage's "
                             "detail.")
passages = _span_stage("passages", "Cuts near-duplicate passages (the `passages` stage; see README); returns the "
                                   "stage's detail.")
decontaminate = _span_stage("decontaminate", "Cuts text that overlaps the eval sets (the `decontaminate` stage; see "
                                             "README, Decontamination); returns the stage's detail.")


def tokenize(workdir: PathLike, overrides: Overrides | None = None, executor: str | None = None,
             workers: int | None = None, quiet: bool | None = None) -> dict[str, Any]:
    """Tokenizes the surviving documents into shards; returns the stage's detail."""
    return _stage(pipeline.tokenize, workdir, overrides, executor, workers, quiet)


def build(workdir: PathLike, overrides: Overrides | None = None, executor: str | None = None,
          workers: int | None = None, quiet: bool | None = None) -> dict[str, Any]:
    """Builds each shard's suffix and LCP arrays; returns the stage's detail."""
    return _stage(pipeline.build, workdir, overrides, executor, workers, quiet)


def repeats(workdir: PathLike, overrides: Overrides | None = None, executor: str | None = None,
            workers: int | None = None, quiet: bool | None = None) -> dict[str, Any]:
    """Groups equal L-token windows across all shards; returns the stage's detail."""
    return _stage(pipeline.repeats, workdir, overrides, executor, workers, quiet)


def remove(workdir: PathLike, overrides: Overrides | None = None, executor: str | None = None,
           workers: int | None = None, quiet: bool | None = None) -> dict[str, Any]:
    """Applies the keep and drop rules, records spans and decisions; returns the stage's detail."""
    return _stage(pipeline.remove, workdir, overrides, executor, workers, quiet)


def export(workdir: PathLike, output: PathLike | None = None, overrides: Overrides | None = None,
           executor: str | None = None, workers: int | None = None, quiet: bool | None = None) -> dict[str, Any]:
    """Writes the kept documents, cut, to `output` (default: the recorded one); returns the
    stage's detail."""
    return _stage(pipeline.export, workdir, overrides, executor, workers, quiet, output=output)


# ---- count and locate (sadedup.occurrences does the work)

def count(workdir: PathLike, text: str, executor: str | None = None, quiet: bool | None = None) -> int:
    """Occurrences of `text` in the documents the substring stage tokenized: start positions
    where its tokens (tokenized alone with the run's tokenizer) occur consecutively inside
    one document, overlapping ones included. When the folder's suffix arrays cover only the
    candidate text (substring.prefilter), the full-text ones are built first, once (as
    `index` does; `executor` runs that)."""
    from . import occurrences

    with _quiet(quiet):
        return occurrences.count(workdir, text, executor=executor)


def locate(workdir: PathLike, text: str, limit: int | None = 10, executor: str | None = None,
           quiet: bool | None = None) -> dict[str, Any]:
    """{"count": N, "occurrences": [{"doc_id", "ext_id", "char_start", "char_end"}, ...]}: the
    count as `count` gives it and the first `limit` occurrences (every one with None or 0),
    in the order the substring stage visits documents, then by position; the character
    offsets are code points of the original text."""
    from . import occurrences

    with _quiet(quiet):
        return occurrences.locate(workdir, text, limit, executor=executor)


def index(workdir: PathLike, executor: str | None = None, quiet: bool | None = None) -> dict[str, Any]:
    """Builds the full-text suffix arrays `count` and `locate` search, once per tokenization
    (nothing when the build stage's arrays already cover all the text); returns the detail
    recorded in the stages table (stage "index")."""
    from . import occurrences

    with _quiet(quiet):
        return occurrences.build_index(workdir, executor)


# ---- the audit report and what-if sweeps (sadedup.audit, sadedup.sweeps)

def report(workdir: PathLike, output: PathLike | None = None, *, seed: int = 0, sample: int = 6,
           minhash_thresholds: str | Sequence[float] | None = None, min_lengths: str | Sequence[int] | None = None,
           executor: str | None = None, workers: int | None = None, quiet: bool | None = None) -> dict[str, Any]:
    """The audit report of a work folder as a dict (what `sadedup report --format json`
    prints: "documents" {input, kept, dropped {reason: n}, ...}, "chars" {input, output, ...},
    "minhash" {candidate_pairs, candidate_pair_share, bands, rows, measured, ...}, "stages",
    "spans" per method, "sample", "resources", "unfinished" (the stages not done, as status
    says them: a folder mid-way), ...); with `output`, the self-contained HTML
    page is written there too. `seed` draws the review sample and the sampled candidate pairs;
    `minhash_thresholds` / `min_lengths` add a sweep (see `sweep`)."""
    from . import audit as rep

    with _quiet(quiet):
        return rep.report(workdir, output, seed=seed, sample=sample, minhash_thresholds=minhash_thresholds,
                          min_lengths=min_lengths, executor=executor, workers=workers)


def sweep(workdir: PathLike, minhash_thresholds: str | Sequence[float] | None = None,
          min_lengths: str | Sequence[int] | None = None, executor: str | None = None, workers: int | None = None,
          quiet: bool | None = None) -> dict[str, Any]:
    """What the minhash stage would decide at other thresholds and the substring stage at
    other window lengths, from the stored artifacts (nothing is recomputed from scratch and
    nothing the run decided changes): {"minhash_threshold": [{value, documents, kept, dropped,
    removed_chars, ...}], "min_length": [...], "as_run", "unanswered": [{setting, values,
    why}]}. Values are "0.6,0.7" or a list."""
    from . import sweeps as sw

    with _quiet(quiet):
        return sw.sweep(workdir, minhash_thresholds, min_lengths, executor=executor, workers=workers)


# ---- a table in memory

T = TypeVar("T")


def _is_hf_dataset(data: Any) -> bool:
    """A Hugging Face datasets.Dataset (checked without importing `datasets`)."""
    datasets = sys.modules.get("datasets")
    return datasets is not None and isinstance(data, getattr(datasets, "Dataset", ()))


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def table_folder(workdir: PathLike) -> Path:
    """Where `dedup` keeps the Parquet files of a work folder's table: beside the work folder
    (neither may be inside it), in `.<workdir name>.sadedup-table/`."""
    w = Path(workdir).resolve()
    return w.parent / f".{w.name}.sadedup-table"


def dedup(data: T, workdir: PathLike, *, workflow: WorkflowLike | None = None, overrides: Overrides | None = None,
          text_field: str | None = None, restart: bool = False, executor: str | None = None,
          workers: int | None = None, quiet: bool | None = None) -> T:
    """Deduplicates a table in memory: a `pyarrow.Table`, or a Hugging Face `datasets.Dataset`.

    Returns the same type: the kept rows in their order, every column kept, the text column
    with the removed passages cut out. The provenance database is `workdir/sadedup.db` (query
    it with `sadedup.sql(workdir, ...)`, `sadedup.explain(workdir, doc)`). The table is written
    to `input.parquet` and the result read back from `output.parquet`, both in
    `table_folder(workdir)` beside the work folder; calling again with the same table and
    settings reuses the finished work. A different table on the same work folder needs
    `restart=True`.

    Args:
        data: the table; its text column is `text_field` (default: the workflow's
            input.text_field, "text"), its id column the workflow's input.id_field ("id").
        workdir, workflow, overrides, restart, executor, workers, quiet: as for `run`.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    hf = _is_hf_dataset(data)
    if not hf and not isinstance(data, pa.Table):
        raise TypeError(f"dedup: expected a pyarrow.Table or a datasets.Dataset, not {type(data).__name__}")
    folder = table_folder(workdir)
    folder.mkdir(parents=True, exist_ok=True)
    src, out = folder / "input.parquet", folder / "output.parquet"
    tmp = folder / "input.parquet.partial"
    if hf:
        data.to_parquet(str(tmp))  # type: ignore[attr-defined]
    else:
        pq.write_table(data, tmp)
    # the same table again keeps the file it was read from (its size and time are recorded)
    if src.is_file() and src.stat().st_size == tmp.stat().st_size and _digest(src) == _digest(tmp):
        tmp.unlink()
    else:
        os.replace(tmp, src)
    sets = _overrides(overrides) + ([f"input.text_field={text_field}"] if text_field is not None else [])
    try:
        run([src], out, workdir, workflow, sets, restart=restart, executor=executor, workers=workers, quiet=quiet)
    except SadedupError as e:  # the CLI's words for what a caller of this function says with restart=True
        if "--restart" not in str(e):
            raise
        raise SadedupError(str(e).replace("rerun with --restart", "pass restart=True")
                           .replace("--restart", "restart=True")) from None
    table = pq.read_table(out)
    if hf:
        import datasets  # imported already: data is one of its Datasets

        return datasets.Dataset(table, split=data.split)  # type: ignore[attr-defined,return-value]
    if table.schema != data.schema:
        try:
            table = table.cast(data.schema)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
            pass
    return table  # type: ignore[return-value]
