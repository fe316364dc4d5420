import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


def _same_tree_for_children() -> None:
    """Every `python -m sadedup.cli` a test starts (and the pool workers it spawns) imports
    the sadedup this test process imported: from a temporary folder, a child would otherwise
    find whichever checkout is installed, and a second checkout's tests would test the first
    one's code. Only when the package and its native core sit in one folder (built in place),
    so the child finds both there."""
    import sadedup
    import sadedup._native

    pkg = Path(sadedup.__file__).resolve().parent
    if Path(sadedup._native.__file__).resolve().parent == pkg:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(pkg.parent), os.environ.get("PYTHONPATH")) if p)


_same_tree_for_children()


@pytest.fixture
def cli(tmp_path):
    """Runs the real `sadedup` command; returns the CompletedProcess."""

    def run(*args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
        full_env = {**os.environ, "CI": "1", **(env or {})}
        p = subprocess.run([sys.executable, "-m", "sadedup.cli", *map(str, args)], capture_output=True, text=True,
                           cwd=tmp_path, env=full_env, timeout=600)
        if check and p.returncode != 0:
            raise AssertionError(f"sadedup {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr}")
        return p

    return run


@pytest.fixture(scope="session")
def command_help(tmp_path_factory):
    """command_help(*words): the stdout of the real `sadedup *words --help` at 200 columns,
    run once per session for every test that reads that help (a run is a process importing
    sadedup, a second each, and two files read every command's)."""
    seen: dict[tuple[str, ...], str] = {}

    def get(*words: str) -> str:
        if words not in seen:
            p = subprocess.run([sys.executable, "-m", "sadedup.cli", *words, "--help"], capture_output=True, text=True,
                               cwd=tmp_path_factory.getbasetemp(), env={**os.environ, "CI": "1", "COLUMNS": "200"},
                               timeout=600)
            assert p.returncode == 0, p.stderr
            seen[words] = p.stdout
        return seen[words]

    return get


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """(folder, CompletedProcess) of the real `sadedup run` with no arguments (the bundled
    sample, the README's first command) in an empty folder: run once per session for the
    tests that read it, which must leave the folder as it is."""
    d = tmp_path_factory.mktemp("sample")
    p = subprocess.run([sys.executable, "-m", "sadedup.cli", "run"], capture_output=True, text=True, cwd=d,
                       env={**os.environ, "CI": "1"}, timeout=600)
    assert p.returncode == 0, p.stderr
    return d, p
