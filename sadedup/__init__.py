"""sadedup: exact, near-duplicate and substring deduplication with SQL-queryable provenance.

The CLI is a thin layer over these functions; they take the same names and options:

    import sadedup
    result = sadedup.run("data.jsonl", "clean.jsonl", "work/", overrides={"stages": "substring"})
    print(result.kept, result.dropped, result.output)
    cols, rows = sadedup.sql("work/", "SELECT reason, count(*) FROM documents GROUP BY reason")
    clean = sadedup.dedup(table, workdir="work/")   # a pyarrow.Table in, a pyarrow.Table out
"""
__version__ = "0.1.0"

from .api import (RunResult, build, count, decontaminate, dedup, exact, export, index, ingest, lines,  # noqa: E402
                  locate, minhash, passages, remove, repeats, run, tokenize)
from .config import Workflow, load_workflow  # noqa: E402
from .errors import ConfigError, SadedupError  # noqa: E402
from .inspect import explain, sql, status  # noqa: E402
from .api import report, sweep  # noqa: E402
from .occurrences import Occurrences  # noqa: E402

__all__ = ["run", "ingest", "exact", "minhash", "lines", "passages", "decontaminate", "tokenize", "build", "repeats", "remove", "export", "status", "sql", "explain",
           "dedup", "report", "sweep", "count", "locate", "index", "Occurrences", "RunResult", "Workflow", "load_workflow", "SadedupError", "ConfigError", "__version__"]
