"""sadedup: exact, near-duplicate and substring deduplication with SQL-queryable provenance.

The CLI is a thin layer over these functions; they take the same names and options:

    import sadedup
    result = sadedup.run("data.jsonl", "clean.jsonl", "work/", overrides={"stages": "substring"})
    print(result.kept, result.dropped, result.output)
    cols, rows = sadedup.sql("work/", "SELECT reason, count(*) FROM documents GROUP BY reason")
    clean = sadedup.dedup(table, workdir="work/")   # a pyarrow.Table in, a pyarrow.Table out
"""
__version__ = "0.1.0"

import importlib.util
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

# A pool worker imports the package, sadedup.executor and its tasks' modules, and nothing
# it runs touches the database: it starts (spawned, on every run) without SQLAlchemy, a third
# of its imports' CPU, and without the API. So sadedup.db, which defines the schema with
# SQLAlchemy, is loaded when a name of it is first used (importlib's LazyLoader; `from . import
# db` finds it set on the package and loads nothing), and the names below on first use (PEP 562).


def lazy_submodule(name: str) -> ModuleType:
    """sadedup.`name`, executed when one of its names is first used (the one already imported,
    if it is): for modules a pool worker imports but never uses."""
    if f"{__name__}.{name}" in sys.modules:
        return sys.modules[f"{__name__}.{name}"]
    spec = importlib.util.find_spec(f"{__name__}.{name}")
    assert spec is not None and spec.loader is not None
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    globals()[name] = module  # as an import sets a submodule on its package
    return module


db = lazy_submodule("db")

_FROM = {"RunResult": "api", "build": "api", "count": "api", "decontaminate": "api", "dedup": "api",
         "exact": "api", "export": "api", "index": "api", "ingest": "api", "lines": "api", "locate": "api",
         "minhash": "api", "passages": "api", "remove": "api", "repeats": "api", "run": "api",
         "tokenize": "api", "report": "api", "sweep": "api", "Workflow": "config", "load_workflow": "config",
         "ConfigError": "errors", "SadedupError": "errors", "explain": "inspect", "sql": "inspect",
         "status": "inspect", "Occurrences": "occurrences"}

if TYPE_CHECKING:
    from .api import (RunResult, build, count, decontaminate, dedup, exact, export, index, ingest, lines,
                      locate, minhash, passages, remove, repeats, report, run, sweep, tokenize)
    from .config import Workflow, load_workflow
    from .errors import ConfigError, SadedupError
    from .inspect import explain, sql, status
    from .occurrences import Occurrences


def __getattr__(name: str) -> Any:
    if name not in _FROM:
        # a submodule (sadedup.pipeline, ...), which importing the API used to set here
        if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
            return importlib.import_module(f".{name}", __name__)
        raise AttributeError(f"module 'sadedup' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_FROM[name]}", __name__), name)
    globals()[name] = value  # once looked up, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [*_FROM, "__version__"]
