"""The code stays typed and tidy: ruff and mypy --strict run as part of the test command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO


def _tool(name: str) -> list[str]:
    exe = Path(sys.executable).with_name(name)
    if exe.exists():
        return [str(exe)]
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return [found]


def test_ruff() -> None:
    res = subprocess.run(
        [*_tool("ruff"), "check", "recall_sqlite", "tests", "bench"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_ruff_format() -> None:
    """One formatting, applied by the tool: nobody argues about layout in a review."""
    res = subprocess.run(
        [*_tool("ruff"), "format", "--check", "recall_sqlite", "tests", "bench"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.slow
def test_mypy_strict() -> None:
    res = subprocess.run(
        [*_tool("mypy"), "recall_sqlite"], cwd=REPO, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stdout + res.stderr
