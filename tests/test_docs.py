"""The README is the manual: every command it does not show is a command nobody finds."""
from __future__ import annotations

import re
from pathlib import Path

import typer.main

from sadedup.cli import app
from sadedup.db import metadata

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_readme_starts_with_the_two_setup_commands():
    block = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert block == ["pip install . && sadedup run", "pip install -e '.[test]' && python -m pytest"]
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert block[1] in ci


def test_readme_shows_every_command():
    names = [c.name for c in typer.main.get_command(app).commands.values()]
    assert len(names) >= 12
    missing = [n for n in names if not re.search(rf"sadedup {n}\b", README)]
    assert not missing, f"README never shows: {missing}"


def test_readme_describes_every_table():
    missing = [t for t in metadata.tables if f"`{t}`" not in README]
    assert not missing, f"README never describes: {missing}"


def test_readme_describes_every_column():
    """Users write SQL against these columns: each is named in the README's tables."""
    missing = [f"{t.name}.{c.name}" for t in metadata.tables.values() for c in t.columns
               if not re.search(rf"(^|[|,(] *){c.name}\b", README, re.M)]
    assert not missing, f"README never describes: {missing}"


def test_every_command_is_a_python_function():
    """The CLI is a thin layer over the API: each command has a function of its name in
    `sadedup`, with a docstring (a new stage's command made from the graph included)."""
    import typer

    import sadedup
    from sadedup.cli import app

    names = sorted(typer.main.get_command(app).commands)
    assert {"run", "lines", "passages", "decontaminate", "count", "report"} <= set(names)
    missing = [n for n in names if not callable(getattr(sadedup, n, None)) or not getattr(sadedup, n).__doc__]
    assert missing == []


def test_help_names_every_stage_and_table(command_help):
    """`run --help` lists every stage of the graph and `sql --help` every table a query can
    read: a stage or table added later without them is a help that lies by omission."""
    from sadedup.graph import NODES

    run_help = " ".join(command_help("run").split())
    assert [n.name for n in NODES if not re.search(rf"\b{n.name}\b", run_help)] == []
    sql_help = " ".join(command_help("sql").split())
    assert [t for t in metadata.tables if not re.search(rf"\b{t}\b", sql_help)] == []
