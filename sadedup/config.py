"""Workflow files: TOML in, one validated, fully resolved configuration out.

A workflow names the stages to run and the options of each. Every key is checked before
any work starts: an unknown key, a wrong type or a value out of range is a ConfigError that
names the key. `--set section.key=value` overrides use the same checks, parsed by the
key's declared type (lists are comma-separated).
"""
from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any, Optional, get_type_hints, get_args, get_origin, Union

from .errors import ConfigError, SadedupError
from .graph import DEFAULT_METHODS
from .graph import METHODS as STAGES


def _check(cond: bool, key: str, msg: str) -> None:
    if not cond:
        raise ConfigError(f"workflow key {key}: {msg}")


@dataclass(frozen=True)
class InputConfig:
    text_field: str = "text"
    id_field: str = "id"
    # a numeric input field: the substring stage visits documents by it, highest first (ties
    # and missing values by input order), so the copy kept is the one of highest priority
    priority: str = ""

    def validate(self) -> None:
        _check(bool(self.text_field), "input.text_field", "must not be empty")


@dataclass(frozen=True)
class ExactConfig:
    lowercase: bool = False
    keep: str = "first"

    def validate(self) -> None:
        _check(self.keep in ("first", "longest", "shortest") or self.keep.startswith("column:"),
               "exact.keep", f"must be first, longest, shortest or column:NAME, not {self.keep!r}")


@dataclass(frozen=True)
class MinhashConfig:
    ngram: int = 5
    shingle: str = "word"
    num_perm: int = 112
    bands: int = 14
    rows: int = 8
    threshold: float = 0.8
    verify: str = "estimate"
    keep: str = "first"
    seed: int = 1
    lowercase: bool = True

    def validate(self) -> None:
        _check(self.ngram >= 1, "minhash.ngram", f"must be >= 1, not {self.ngram}")
        _check(self.shingle in ("word", "char"), "minhash.shingle", f"must be word or char, not {self.shingle!r}")
        _check(self.num_perm >= 1, "minhash.num_perm", f"must be >= 1, not {self.num_perm}")
        _check(self.bands >= 1, "minhash.bands", f"must be >= 1, not {self.bands}")
        _check(self.rows >= 1, "minhash.rows", f"must be >= 1, not {self.rows}")
        _check(self.bands * self.rows <= self.num_perm, "minhash.bands",
               f"minhash.bands * minhash.rows = {self.bands * self.rows} exceeds minhash.num_perm = {self.num_perm}")
        _check(0.0 < self.threshold <= 1.0, "minhash.threshold", f"must be in (0, 1], not {self.threshold}")
        _check(self.verify in ("estimate", "exact"), "minhash.verify", f"must be estimate or exact, not {self.verify!r}")
        _check(self.keep in ("first", "longest", "shortest") or self.keep.startswith("column:"),
               "minhash.keep", f"must be first, longest, shortest or column:NAME, not {self.keep!r}")


@dataclass(frozen=True)
class LinesConfig:
    """The lines stage: repeated lines cut out of the documents (sadedup/stages/lines.py)."""
    # "first": a line goes when its key occurred earlier in surviving text (C4);
    # "none": a line goes from every document when its key is in min_docs documents or more
    keep: str = "first"
    min_docs: int = 2
    drop_fraction: float = 0.8

    def validate(self) -> None:
        _check(self.keep in ("first", "none"), "lines.keep", f"must be first or none, not {self.keep!r}")
        # a line in one document only is not repeated across documents
        _check(self.min_docs >= 2, "lines.min_docs", f"must be >= 2, not {self.min_docs}")
        _check(0.0 < self.drop_fraction <= 1.0, "lines.drop_fraction", f"must be in (0, 1], not {self.drop_fraction}")


@dataclass(frozen=True)
class SubstringConfig:
    tokenizer: str = "bytes"
    # None ("auto"): the tokenizer's default, 100 for bytes, 50 for subword tokenizers
    min_length: Optional[int] = None
    drop_fraction: float = 0.8
    keep: str = "first"
    # None ("auto"): derived from run.memory_budget
    shard_tokens: Optional[int] = None
    # text sampled (evenly over the corpus) to train a train:bpe|unigram:VOCAB tokenizer
    tokenizer_sample: str = "100MB"
    # build suffix arrays over the text that can hold a repeated window only (winnowing,
    # exact); false keeps suffix arrays of all the text, for queries at any length
    prefilter: bool = True

    def validate(self) -> None:
        _check(self.min_length is None or 1 <= self.min_length <= 65535, "substring.min_length",
               f"must be from 1 to 65535 (or auto), not {self.min_length}")
        _check(0.0 < self.drop_fraction <= 1.0, "substring.drop_fraction",
               f"must be in (0, 1], not {self.drop_fraction}")
        _check(self.keep in ("first", "none"), "substring.keep", f"must be first or none, not {self.keep!r}")
        _check(self.shard_tokens is None or self.shard_tokens >= 1, "substring.shard_tokens",
               f"must be >= 1 (or auto), not {self.shard_tokens}")
        from .tokenizers import parse_spec

        parse_spec(self.tokenizer)
        parse_size(self.tokenizer_sample, "substring.tokenizer_sample")

    @property
    def window(self) -> int:
        """The window length L actually used."""
        if self.min_length:
            return self.min_length
        return 100 if self.tokenizer == "bytes" else 50


@dataclass(frozen=True)
class PassagesConfig:
    """The passages stage: near-duplicate chunks of words cut out of the documents."""
    # a chunk is this many consecutive \w+ words, one starting at every multiple of `stride`
    words: int = 256
    stride: int = 128
    threshold: float = 0.8
    verify: str = "estimate"
    # MinHash over the chunks' word n-grams, defaults as in [minhash]
    ngram: int = 5
    num_perm: int = 112
    bands: int = 14
    rows: int = 8
    drop_fraction: float = 0.8

    def validate(self) -> None:
        _check(self.words >= 1, "passages.words", f"must be >= 1, not {self.words}")
        # a stride past `words` would leave words in no chunk, never looked at
        _check(1 <= self.stride <= self.words, "passages.stride",
               f"must be from 1 to passages.words = {self.words}, not {self.stride}")
        _check(1 <= self.ngram <= self.words, "passages.ngram",
               f"must be from 1 to passages.words = {self.words}, not {self.ngram}")
        _check(self.num_perm >= 1, "passages.num_perm", f"must be >= 1, not {self.num_perm}")
        _check(self.bands >= 1, "passages.bands", f"must be >= 1, not {self.bands}")
        _check(self.rows >= 1, "passages.rows", f"must be >= 1, not {self.rows}")
        _check(self.bands * self.rows <= self.num_perm, "passages.bands",
               f"passages.bands * passages.rows = {self.bands * self.rows} exceeds passages.num_perm = "
               f"{self.num_perm}")
        _check(0.0 < self.threshold <= 1.0, "passages.threshold", f"must be in (0, 1], not {self.threshold}")
        _check(self.verify in ("estimate", "exact"), "passages.verify",
               f"must be estimate or exact, not {self.verify!r}")
        _check(0.0 < self.drop_fraction <= 1.0, "passages.drop_fraction",
               f"must be in (0, 1], not {self.drop_fraction}")


@dataclass(frozen=True)
class DecontaminateConfig:
    """The decontaminate stage: text sharing word n-grams with evaluation sets is cut."""
    # eval files or folders, in any input format (relative paths: from the folder the command
    # that configured the work folder ran in; recorded absolute)
    eval: tuple[str, ...] = ()
    # each listed field of an eval row is an eval text of its own
    text_fields: tuple[str, ...] = ("text",)
    # words (\w+ matches, compared case-folded) in an n-gram
    ngram: int = 13
    # code points struck on each side of a matched n-gram, within the document
    margin: int = 0
    # an eval text is contaminated when at least this share of its n-grams occur in the corpus
    contaminated_at: float = 0.5
    drop_fraction: float = 0.8
    # a file to write the eval rows whose every text is clean to, in the eval files' format
    # (an output of the stage, not a setting: changing it redoes nothing)
    write_clean_eval: str = ""

    def validate(self) -> None:
        _check(all(p.strip() for p in self.eval), "decontaminate.eval", "names an empty path")
        _check(len(self.text_fields) >= 1 and all(self.text_fields), "decontaminate.text_fields",
               "must name at least one field, none of them empty")
        _check(len(set(self.text_fields)) == len(self.text_fields), "decontaminate.text_fields",
               f"names a field twice: {', '.join(self.text_fields)}")
        _check(1 <= self.ngram <= 1000, "decontaminate.ngram", f"must be from 1 to 1000, not {self.ngram}")
        _check(self.margin >= 0, "decontaminate.margin", f"must be >= 0, not {self.margin}")
        _check(0.0 < self.contaminated_at <= 1.0, "decontaminate.contaminated_at",
               f"must be in (0, 1], not {self.contaminated_at}")
        _check(0.0 < self.drop_fraction <= 1.0, "decontaminate.drop_fraction",
               f"must be in (0, 1], not {self.drop_fraction}")
        if self.write_clean_eval:
            from .formats import output_kind

            try:
                output_kind(self.write_clean_eval)
            except SadedupError as e:
                raise ConfigError(f"workflow key decontaminate.write_clean_eval: {e}") from None

    def check_stages(self, stages: tuple[str, ...]) -> None:
        """What the stage needs from the rest of the workflow."""
        if "decontaminate" in stages:
            _check(bool(self.eval), "decontaminate.eval", "must name at least one eval file when stages lists "
                                                          "decontaminate (--set decontaminate.eval=PATH,...)")
        _check(not self.write_clean_eval or "decontaminate" in stages, "decontaminate.write_clean_eval",
               "needs decontaminate in stages (or set it empty: --set decontaminate.write_clean_eval=)")


@dataclass(frozen=True)
class SourceConfig:
    """One [[sources]] entry of a workflow file: settings for the documents of the input files
    it matches. Only workflow files carry them (--set cannot write a list of tables)."""
    # a glob (fnmatch: `*` crosses `/` too) on the input file's path as recorded in
    # documents.source (absolute), or on its name
    match: str
    # higher first in document order, for every keep-first rule; ties by input order
    priority: int = 0
    # a MinHash pair is a near duplicate at the higher of its two documents' thresholds
    minhash_threshold: Optional[float] = None
    # lines.keep = "none": a line is struck from this source's documents at this many documents
    lines_min_docs: Optional[int] = None

    # TOML keys of an entry -> fields: nested tables name the section they override
    KEYS = {("match",): "match", ("priority",): "priority", ("minhash", "threshold"): "minhash_threshold",
            ("lines", "min_docs"): "lines_min_docs"}

    def matches(self, path: str) -> bool:
        return fnmatch.fnmatchcase(path, self.match) or fnmatch.fnmatchcase(Path(path).name, self.match)

    def validate(self, key: str) -> None:
        _check(bool(self.match.strip()), f"{key} match", "must not be empty")
        if self.minhash_threshold is not None:
            _check(0.0 < self.minhash_threshold <= 1.0, f"{key} minhash.threshold",
                   f"must be in (0, 1], not {self.minhash_threshold}")
        if self.lines_min_docs is not None:
            _check(self.lines_min_docs >= 2, f"{key} lines.min_docs", f"must be >= 2, not {self.lines_min_docs}")

    def to_dict(self) -> dict[str, Any]:
        """As written in a workflow file (what _source reads back)."""
        d: dict[str, Any] = {"match": self.match, "priority": self.priority}
        if self.minhash_threshold is not None:
            d["minhash"] = {"threshold": self.minhash_threshold}
        if self.lines_min_docs is not None:
            d["lines"] = {"min_docs": self.lines_min_docs}
        return d


def unmatched_sources(sources: tuple[SourceConfig, ...] | list[SourceConfig], paths: list[str]) -> list[str]:
    """The [[sources]] entries that fit none of the input files `paths`, each as a user names
    it (`[[sources]] #2 match = "*forum*"`): a typo in a glob otherwise applies its settings to
    no document without a word."""
    return [f"[[sources]] #{n} match = {s.match!r}" for n, s in enumerate(sources, 1)
            if not any(s.matches(p) for p in paths)]


def _source(n: int, value: Any, origin: str) -> SourceConfig:
    """The n-th (from 1) [[sources]] table, every key checked and named."""
    key = f"[[sources]] #{n}"
    _check(isinstance(value, dict), key, f"must be a table with match = \"GLOB\", not {value!r}")
    hints = get_type_hints(SourceConfig)
    got: dict[str, Any] = {}
    for k, v in value.items():
        paths = [(k,)] if not isinstance(v, dict) else [(k, sub) for sub in v]
        for path in paths:
            name = SourceConfig.KEYS.get(path)
            if name is None:
                known = ", ".join(".".join(p) for p in SourceConfig.KEYS)
                raise ConfigError(f"unknown workflow key {'.'.join(path)!r} in {key} of {origin} (known in "
                                  f"[[sources]]: {known})")
            got[name] = _coerce(f"{key} {'.'.join(path)}", hints[name], v if len(path) == 1 else v[path[1]], False)
    _check("match" in got, key, "needs match = \"GLOB\" (the input files it applies to)")
    return SourceConfig(**got)


@dataclass(frozen=True)
class RunConfig:
    # "auto" = 40% of the memory this process may use; or a size like "4GB", "512MB"
    memory_budget: str = "auto"
    # 0 = every core this process may run on
    workers: int = 0
    # where tasks run (sadedup.executor.EXECUTORS): local, inline or dask
    executor: str = "local"
    # the Dask scheduler, tcp://HOST:PORT, for executor = "dask"
    scheduler: str = ""
    # sharded output ({shard} in --output): 0 = one part per input file; N = parts of at most
    # N rows (a part holds the rows of one input file only)
    output_rows: int = 0
    # rows per row group of Parquet output (fewer when 64 MB of rows come first)
    row_group_rows: int = 32768
    # finished work folders to deduplicate against (--reference; sadedup/reference.py): their
    # kept documents come before this run's, are never dropped or cut, and their artifacts are
    # read, never written (relative paths: from the current folder, made absolute when recorded)
    reference: tuple[str, ...] = ()

    def validate(self) -> None:
        from .executor import EXECUTORS

        _check(self.output_rows >= 0, "run.output_rows", f"must be >= 0, not {self.output_rows}")
        _check(self.row_group_rows >= 1, "run.row_group_rows", f"must be >= 1, not {self.row_group_rows}")
        _check(all(p.strip() for p in self.reference), "run.reference", "names an empty path")

        parse_size(self.memory_budget, "run.memory_budget")
        _check(self.workers >= 0, "run.workers", f"must be >= 0, not {self.workers}")
        _check(self.executor in EXECUTORS, "run.executor",
               f"must be one of {', '.join(EXECUTORS)}, not {self.executor!r}")
        _check(self.executor != "dask" or bool(self.scheduler), "run.scheduler",
               "must name the Dask scheduler (tcp://HOST:PORT) when run.executor is dask")

    @property
    def budget_bytes(self) -> int:
        return parse_size(self.memory_budget, "run.memory_budget")

    @property
    def n_workers(self) -> int:
        return self.workers or machine_cores()


@dataclass(frozen=True)
class Workflow:
    stages: tuple[str, ...] = DEFAULT_METHODS
    input: InputConfig = field(default_factory=InputConfig)
    exact: ExactConfig = field(default_factory=ExactConfig)
    minhash: MinhashConfig = field(default_factory=MinhashConfig)
    lines: LinesConfig = field(default_factory=LinesConfig)
    passages: PassagesConfig = field(default_factory=PassagesConfig)
    decontaminate: DecontaminateConfig = field(default_factory=DecontaminateConfig)
    substring: SubstringConfig = field(default_factory=SubstringConfig)
    run: RunConfig = field(default_factory=RunConfig)
    # [[sources]] entries, the first matching one applies to a document (SourceConfig)
    sources: tuple[SourceConfig, ...] = ()

    def validate(self) -> "Workflow":
        _check(len(self.stages) > 0, "stages", "must name at least one stage")
        for s in self.stages:
            _check(s in STAGES, "stages", f"unknown stage {s!r} (choose from {', '.join(STAGES)})")
        _check(list(self.stages) == sorted(set(self.stages), key=STAGES.index), "stages",
               f"must be in the order {', '.join(STAGES)}, each once")
        for f in fields(self):
            sub = getattr(self, f.name)
            if dataclasses.is_dataclass(sub):
                sub.validate()
        self.decontaminate.check_stages(self.stages)
        for n, src in enumerate(self.sources, 1):
            src.validate(f"[[sources]] #{n}")
        return self

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["stages"] = list(self.stages)
        # [[sources]] only when there are some: a stored workflow without them reads as before
        d.pop("sources")
        if self.sources:
            d["sources"] = [src.to_dict() for src in self.sources]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


_SECTIONS = {f.name: f for f in fields(Workflow) if f.name not in ("stages", "sources")}

# What the machine gives this process: the cores it may run on (its CPU affinity, which
# container runtimes and `taskset` restrict) and the memory its control group allows.
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
_UNLIMITED = 1 << 60  # cgroup v1 says "no limit" with a number near 2^63


def machine_cores() -> int:
    """Cores this process may run on: its CPU affinity where the system has one."""
    if hasattr(os, "sched_getaffinity"):
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except OSError:
            pass
    return os.cpu_count() or 1


def physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def cgroup_memory_limit() -> int | None:
    """The smallest memory limit of this process's control group and those above it:
    cgroup v2 `memory.max`, v1 `memory.limit_in_bytes`; None when there is none."""
    own: dict[str, str] = {}  # "" (v2) or "memory" (v1) -> the group's path
    try:
        for line in PROC_CGROUP.read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers == "":
                own[""] = path
            elif "memory" in controllers.split(","):
                own["memory"] = path
    except (OSError, ValueError):
        pass
    limits = []
    for mount, name in (("", "memory.max"), ("memory", "memory.limit_in_bytes")):
        top = CGROUP_ROOT / mount if mount else CGROUP_ROOT
        d = top / own.get(mount, "/").strip("/")
        while True:  # the group, then each group above it up to the mount point
            try:
                text = (d / name).read_text().strip()
            except OSError:
                text = ""
            if text.isdigit() and 0 < int(text) < _UNLIMITED:
                limits.append(int(text))
            if d == top or top not in d.parents:
                break
            d = d.parent
    return min(limits) if limits else None


def machine_memory() -> int:
    """Memory this process may use: the machine's, or its control group's limit if smaller."""
    total = physical_memory()
    limit = cgroup_memory_limit()
    return min(total, limit) if limit else total


def parse_size(text: str, key: str) -> int:
    """'4GB' -> 4e9 bytes, 'auto' -> 40% of the memory this process may use (machine_memory)."""
    t = str(text).strip().upper().replace(" ", "")
    if t == "AUTO":
        return int(machine_memory() * 0.4)
    units = {"TIB": 1 << 40, "GIB": 1 << 30, "MIB": 1 << 20, "KIB": 1 << 10,
             "TB": 10**12, "GB": 10**9, "MB": 10**6, "KB": 10**3, "T": 10**12, "G": 10**9,
             "M": 10**6, "K": 10**3, "B": 1}
    for u, mult in units.items():
        if t.endswith(u):
            num = t[: -len(u)]
            break
    else:
        num, mult = t, 1
    try:
        value = float(num)
    except ValueError:
        raise ConfigError(f"workflow key {key}: {text!r} is not a size like 4GB or 512MB") from None
    _check(value > 0, key, f"must be a positive size, not {text!r}")
    return int(value * mult)


def _coerce(key: str, typ: Any, value: Any, from_text: bool) -> Any:
    """Checks (or, for --set text, parses) one value against its declared type.

    Optional keys take the string "auto" for their derived default."""
    if get_origin(typ) is Union:
        if value is None or value == "auto":
            return None
        typ = next(t for t in get_args(typ) if t is not type(None))
    if get_origin(typ) is tuple:  # a list of strings: comma-separated in --set
        if from_text and isinstance(value, str):
            value = [s.strip() for s in value.split(",") if s.strip()]
        _check(isinstance(value, (list, tuple)) and all(isinstance(s, str) for s in value), key,
               f"expects a list of strings, not {value!r}")
        return tuple(value)
    if typ is bool:
        if from_text and isinstance(value, str):
            low = value.lower()
            _check(low in ("true", "false", "1", "0", "yes", "no"), key, f"expects true or false, not {value!r}")
            return low in ("true", "1", "yes")
        _check(isinstance(value, bool), key, f"expects true or false, not {value!r}")
        return value
    if typ is int:
        if from_text and isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                raise ConfigError(f"workflow key {key}: expects a whole number, not {value!r}") from None
        _check(isinstance(value, int) and not isinstance(value, bool), key, f"expects a whole number, not {value!r}")
        return value
    if typ is float:
        if from_text and isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                raise ConfigError(f"workflow key {key}: expects a number, not {value!r}") from None
        _check(isinstance(value, (int, float)) and not isinstance(value, bool), key, f"expects a number, not {value!r}")
        return float(value)
    if typ is str:
        _check(isinstance(value, str), key, f"expects a string, not {value!r}")
        return value
    raise AssertionError(typ)


def _apply(wf: Workflow, data: dict[str, Any], from_text: bool, origin: str) -> Workflow:
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key == "stages":
            if from_text and isinstance(value, str):
                value = [s.strip() for s in value.split(",") if s.strip()]
            _check(isinstance(value, list) and all(isinstance(s, str) for s in value), "stages",
                   f"expects a list of stage names, not {value!r}")
            changes["stages"] = tuple(value)
            continue
        if key == "sources":
            if from_text:
                raise ConfigError("--set cannot give [[sources]] (a list of tables): write them in a workflow file "
                                  "and pass its path as the workflow")
            _check(isinstance(value, list), "sources", "must be [[sources]] tables, each with match = \"GLOB\"")
            changes["sources"] = tuple(_source(n, v, origin) for n, v in enumerate(value, 1))
            continue
        if key not in _SECTIONS:
            raise ConfigError(f"unknown workflow key {key!r} in {origin} "
                              f"(known: stages, {', '.join(_SECTIONS)}, [[sources]])")
        _check(isinstance(value, dict), key, "must be a table of keys")
        section = getattr(wf, key)
        hints = get_type_hints(type(section))
        sub: dict[str, Any] = {}
        for k, v in value.items():
            full = f"{key}.{k}"
            if k not in hints:
                raise ConfigError(f"unknown workflow key {full!r} in {origin} (known in [{key}]: {', '.join(hints)})")
            sub[k] = _coerce(full, hints[k], v, from_text)
        changes[key] = dataclasses.replace(section, **sub)
    return dataclasses.replace(wf, **changes)


def builtin_workflows() -> dict[str, Path]:
    """The workflow files installed with the package, by stem."""
    root = resources.files("sadedup.workflows")
    return {Path(p.name).stem: Path(str(p)) for p in root.iterdir() if p.name.endswith(".toml")}


def resolve_workflow_path(name: str | None) -> Path:
    if name is None:
        name = "default"
    p = Path(name)
    if p.suffix == ".toml" or p.exists():
        if not p.is_file():
            raise ConfigError(f"workflow file {name} does not exist")
        return p
    known = builtin_workflows()
    if name not in known:
        raise ConfigError(f"no workflow named {name!r}: give a .toml path or one of {', '.join(sorted(known))}")
    return known[name]


def anchored(wf: Workflow, base: Path | None = None) -> Workflow:
    """The workflow with its relative file paths (eval sets, the clean-eval file) made absolute
    against `base` (the folder the command runs in), as the work folder records them: later
    commands run from another folder then mean the same files. URLs stay as they are."""
    from .locations import is_url, without_file_scheme

    base = Path(base or Path.cwd())

    def fix(p: str) -> str:
        p = without_file_scheme(p)
        return p if not p or is_url(p) or Path(p).is_absolute() else str(base / p)

    d = wf.decontaminate
    return replace(wf, decontaminate=replace(d, eval=tuple(fix(p) for p in d.eval),
                                             write_clean_eval=fix(d.write_clean_eval)))


def load_workflow(name: str | None = None, overrides: list[str] | None = None) -> Workflow:
    """Reads a workflow (a path or a built-in name), applies `section.key=value` overrides."""
    path = resolve_workflow_path(name)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"workflow file {path} is not valid TOML: {e}") from None
    wf = _apply(Workflow(), data, False, str(path))
    return apply_overrides(wf, overrides or [])


def apply_overrides(wf: Workflow, overrides: list[str]) -> Workflow:
    for item in overrides:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected SECTION.KEY=VALUE")
        if key == "stages":
            wf = _apply(wf, {"stages": value}, True, "--set")
            continue
        if key.partition(".")[0] == "sources":
            wf = _apply(wf, {"sources": value}, True, "--set")
        section, dot, k = key.partition(".")
        if not dot:
            raise ConfigError(f"--set {item!r}: expected SECTION.KEY=VALUE")
        wf = _apply(wf, {section: {k: value}}, True, "--set")
    return wf.validate()


def workflow_from_dict(d: dict[str, Any]) -> Workflow:
    return _apply(Workflow(), d, False, "stored configuration").validate()
