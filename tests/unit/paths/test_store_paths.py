"""Paths never relative to where a process stands (issue 19, point 2), and a store that keeps
its identity when it is copied or restored without its workspace.json (point 5)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from recall_sqlite import open_store
from tests.helpers import git, new_repo, run_cli, user_env


def _depths(root: Path) -> list[Path]:
    deep = root / "server" / "api"
    deep.mkdir(parents=True, exist_ok=True)
    return [root, root / "server", deep]


def test_a_relative_db_option_names_one_store_from_every_depth(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "repo")
    (root / "state").mkdir()
    for i, where in enumerate(_depths(root)):
        res = run_cli("--db", "state/memory.db", "journal", "write", "--focus", f"w{i}", cwd=where)
        assert res.returncode == 0, res.stderr
    for where in _depths(root):
        res = run_cli("--db", "state/memory.db", "journal", "read", "--json", cwd=where)
        assert sorted(e["focus"] for e in json.loads(res.stdout)["entries"]) == ["w0", "w1", "w2"]
        res = run_cli("--db", "state/memory.db", "where", "--json", cwd=where)
        assert json.loads(res.stdout)["db_path"] == str(root / "state" / "memory.db")
    assert not (root / "server" / "state").exists()


def test_a_relative_environment_variable_names_one_store_from_every_depth(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "repo")
    env = user_env(RECALL_SQLITE_DB="memory.db")
    for i, where in enumerate(_depths(root)):
        res = run_cli("journal", "write", "--focus", f"e{i}", cwd=where, env=env)
        assert res.returncode == 0, res.stderr
        res = run_cli("journal", "read", "--json", cwd=where, env=env)
        assert json.loads(res.stdout)["total"] == i + 1
    assert (root / "memory.db").is_file()
    assert not (root / "server" / "memory.db").exists()


def test_the_library_resolves_a_relative_db_path_against_the_root(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "repo")
    paths = set()
    for where in _depths(root):
        with open_store(where, db_path="lib.db") as s:
            s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": str(where)})
            paths.add(s.workspace.db_path)
    assert paths == {root / "lib.db"}


def _history(root: Path, focus: str = "the old history") -> str:
    with open_store(root) as s:
        s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "session_id": "a", "focus": focus})
        return s.workspace.id


def test_a_store_copied_into_a_clone_elsewhere_keeps_its_id(tmp_path: Path) -> None:
    origin = new_repo(tmp_path / "origin")
    uuid = _history(origin)
    clone = tmp_path / "elsewhere" / "clone"
    clone.parent.mkdir()
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    (clone / ".synapt" / "recall").mkdir(parents=True)
    shutil.copy2(origin / ".synapt/recall/recall-sqlite.db", clone / ".synapt/recall")
    res = run_cli("--cwd", str(clone), "journal", "read", "--json")
    assert res.returncode == 0, res.stderr
    assert [e["focus"] for e in json.loads(res.stdout)["entries"]] == ["the old history"]
    assert not (clone / ".synapt/recall/workspace.json").exists()  # a read wrote nothing
    with open_store(clone) as s:
        assert s.workspace.id == uuid
        assert any("copied or restored store" in w for w in s.workspace.warnings)
        s.journal.append({"timestamp": "2026-01-02T00:00:00Z", "session_id": "b", "focus": "new"})
        assert s.journal.read(5).total == 2
    ws = json.loads((clone / ".synapt/recall/workspace.json").read_text())
    assert ws["workspace_id"] == uuid
    # The origin still carries the id: a copy, reported as such, never silently shared.
    res = run_cli("--cwd", str(clone), "doctor", "--json")
    kinds = {f["kind"] for f in json.loads(res.stdout)["findings"]}
    assert kinds == {"copied_workspace"}, res.stdout


def test_a_restored_store_after_workspace_json_was_lost_keeps_its_id(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "repo")
    uuid = _history(root)
    backup = tmp_path / "backup.db"
    shutil.copy2(root / ".synapt/recall/recall-sqlite.db", backup)
    shutil.rmtree(root / ".synapt")
    (root / ".synapt" / "recall").mkdir(parents=True)
    shutil.copy2(backup, root / ".synapt/recall/recall-sqlite.db")
    with open_store(root) as s:
        assert s.workspace.id == uuid and s.journal.read().total == 1
