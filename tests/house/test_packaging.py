"""schema.sql ships inside the wheel and is read from there: build the wheel, install it in
a fresh venv (away from the source tree) and open a store with the installed command."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.helpers import REPO


@pytest.mark.slow
def test_wheel_carries_schema_and_opens_a_store(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("synapt_recall_sqlite-*.whl")
    with zipfile.ZipFile(wheel) as z:
        assert "recall_sqlite/schema.sql" in z.namelist()
        names = z.namelist()
        assert "recall_sqlite/py.typed" in names  # hosts get our types
        assert any(n.endswith("licenses/LICENSE") for n in names)
        shipped = z.read("recall_sqlite/schema.sql")
        assert shipped == (REPO / "schema.sql").read_bytes()

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True
    )
    ws = tmp_path / "ws"
    (ws / ".grip").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    cmd = env_dir / "bin" / "recall-sqlite"

    def outside_run(*argv: str) -> subprocess.CompletedProcess[str]:
        """`argv` run as a user would, from a directory that is not the source tree."""
        return subprocess.run(
            argv, check=True, capture_output=True, text=True, cwd=outside, env=env
        )

    outside_run(str(cmd), "--cwd", str(ws), "journal", "write", "--focus", "from wheel")
    out = outside_run(str(cmd), "--cwd", str(ws), "journal", "read", "--json").stdout
    assert [e["focus"] for e in json.loads(out)["entries"]] == ["from wheel"]
    # The command is the project's own script (its shebang made this venv's python by the
    # installer), and a read through it never imports `re`: the wrapper an installer
    # generates for an entry point does, to tidy argv[0] for Windows.
    assert cmd.read_text().startswith(f"#!{py}")
    timed = outside_run(
        str(py), "-X", "importtime", str(cmd), "--cwd", str(ws), "journal", "read", "--json"
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in timed.stderr.splitlines()}
    assert "recall_sqlite.cli" in imported and "re" not in imported and "enum" not in imported
    where = outside_run(str(py), "-c", "import recall_sqlite.db as d; print(d.__file__)").stdout
    assert str(env_dir) in where  # the installed copy, not the source tree
