"""Health that can be made true again: after `git worktree remove`, `git worktree move` or
moving the project, `doctor --repair` records what happened (a removed worktree is kept as
gone, its history readable with --all-worktrees; a moved one gets its new root; the
workspace's new root replaces the old) and doctor exits 0 afterwards; `worktree forget NAME`
forgets one for good."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import apsw

from tests.helpers import add_worktree, git, new_repo, run_cli, stock_write, user_env


def _cli(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, env=user_env(home))


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    feat = add_worktree(repo, tmp_path / "proj-feat")
    (feat / "sub").mkdir()
    stock_write(repo, home, "main work")
    stock_write(feat, home, "feat work")
    stock_write(feat / "sub", home, "feat nested work")  # a store inside the worktree's tree
    assert _cli(repo, home, "import").returncode == 0
    assert _cli(feat, home, "journal", "write", "--focus", "seen live in feat").returncode == 0
    assert _cli(repo, home, "doctor").returncode == 0
    return home, repo, feat


def _worktrees(repo: Path, home: Path) -> dict[str, dict[str, object]]:
    rows = json.loads(_cli(repo, home, "worktree", "list", "--json").stdout)["worktrees"]
    return {str(r["key"]): r for r in rows}


def test_a_removed_worktree_is_kept_as_gone(tmp_path: Path) -> None:
    home, repo, feat = _setup(tmp_path)
    git(repo, "worktree", "remove", "--force", str(feat))
    before = _cli(repo, home, "doctor")
    assert before.returncode == 1 and "moved_worktree" in before.stdout
    assert _cli(repo, home, "verify").returncode == 1  # its nested store vanished with it
    fixed = _cli(repo, home, "doctor", "--repair")
    assert fixed.returncode == 0, fixed.stdout
    assert "'@proj-feat'" in fixed.stdout and "gone" in fixed.stdout
    for _ in range(2):  # and it stays healthy
        assert _cli(repo, home, "doctor").returncode == 0
        verify = _cli(repo, home, "verify")
        assert verify.returncode == 0, verify.stdout
        assert "gone" in verify.stdout
    read = json.loads(_cli(repo, home, "journal", "read", "--all-worktrees", "--json").stdout)
    assert {e["focus"] for e in read["entries"] if e["worktree"] == "@proj-feat"} == {
        "feat work",
        "feat nested work",
        "seen live in feat",
    }
    assert _worktrees(repo, home)["@proj-feat"]["root_exists"] is False
    # The worktree comes back under its name: live again, nothing to acknowledge.
    add_worktree(repo, feat, branch="feat2")
    assert _cli(feat, home, "journal", "write", "--focus", "back").returncode == 0
    assert _cli(repo, home, "doctor").returncode == 0


def test_a_moved_worktree_gets_its_new_root(tmp_path: Path) -> None:
    home, repo, feat = _setup(tmp_path)
    moved = tmp_path / "elsewhere" / "proj-feat"
    moved.parent.mkdir()
    git(repo, "worktree", "move", str(feat), str(moved))
    assert _cli(repo, home, "doctor").returncode == 1
    fixed = _cli(repo, home, "doctor", "--repair")
    assert fixed.returncode == 0 and "moved from" in fixed.stdout, fixed.stdout
    assert _worktrees(repo, home)["@proj-feat"]["root"] == str(moved)
    assert _cli(repo, home, "doctor").returncode == 0


def test_a_moved_workspace_records_its_new_root(tmp_path: Path) -> None:
    home, repo, feat = _setup(tmp_path)
    git(repo, "worktree", "remove", "--force", str(feat))
    moved = tmp_path / "renamed"
    shutil.move(str(repo), str(moved))
    before = _cli(moved, home, "doctor")
    assert before.returncode == 1 and "moved_workspace" in before.stdout
    fixed = _cli(moved, home, "doctor", "--repair")
    assert fixed.returncode == 0, fixed.stdout
    assert f"moved from {repo} to {moved}" in fixed.stdout
    assert _cli(moved, home, "doctor").returncode == 0
    assert _cli(moved, home, "verify").returncode == 0
    conn = apsw.Connection(
        str(moved / ".synapt/recall/recall-sqlite.db"), flags=apsw.SQLITE_OPEN_READONLY
    )
    try:
        roots = [r for (r,) in conn.execute("SELECT root FROM workspace_roots")]
    finally:
        conn.close()
    assert roots == [str(moved)]


def test_worktree_forget(tmp_path: Path) -> None:
    home, repo, feat = _setup(tmp_path)
    for name in ("nosuch", "."):
        res = _cli(repo, home, "worktree", "forget", name)
        assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    res = _cli(repo, home, "worktree", "forget", "proj-feat", "--scrub-sources", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["worktree"] == "@proj-feat" and len(data["forget"]["entries"]) == 3
    read = json.loads(_cli(repo, home, "journal", "read", "--all-worktrees", "--json").stdout)
    assert [e["focus"] for e in read["entries"]] == ["main work"]
    # No synapt bucket of the workspace holds its lines any more.
    for path in [*repo.rglob("*.jsonl"), *feat.rglob("*.jsonl")]:
        assert b"feat" not in path.read_bytes(), path
    assert _cli(repo, home, "doctor").returncode == 0
    assert _cli(repo, home, "verify").returncode == 0
