"""The README's examples run. Every ```python block runs, in order, in one namespace; every
```sh block runs as a bash script (`set -e`); both in a scratch workspace (a gr2 root with a
git checkout, the current directory) with the installed `recall-sqlite` on PATH. Blocks
tagged otherwise (```text for synopses with placeholders, ```bash for the quick start,
which CI itself runs) are prose."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)


def blocks(kind: str) -> list[str]:
    return [body for tag, body in FENCE.findall(README.read_text(encoding="utf-8")) if tag == kind]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / ".grip").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    monkeypatch.chdir(root)
    return root


def test_there_are_examples_of_both_kinds() -> None:
    assert len(blocks("python")) >= 3 and len(blocks("sh")) >= 2


@pytest.mark.slow
def test_readme_examples_run(scratch: Path) -> None:
    pytest.importorskip("numpy")
    namespace: dict[str, object] = {"__name__": "readme"}
    for i, code in enumerate(blocks("python")):
        try:
            exec(compile(code, f"README python block {i + 1}", "exec"), namespace)
        except Exception as exc:  # the block's own error, with its place, is the message
            pytest.fail(f"README python block {i + 1} failed: {exc!r}\n{code}")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    for i, script in enumerate(blocks("sh")):
        res = subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert res.returncode == 0, (
            f"README sh block {i + 1} failed:\n{script}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
        )
