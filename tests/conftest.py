import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


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
