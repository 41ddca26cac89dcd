"""Activated synapt answers with the whole worktree history from any subdirectory and from a
linked worktree of a plain git repository; stock synapt 0.30.0 does not. Layouts are made by
running synapt's own CLI from the directory a user would stand in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from recall_sqlite import open_store
from tests.helpers import git

BIN = Path(sys.executable).parent
STOCK = [str(BIN / "synapt")]
ACTIVATED = [str(BIN / "recall-sqlite"), "synapt"]


def run(cmd: list[str], cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*cmd, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )


def write(cmd: list[str], cwd: Path, focus: str) -> None:
    res = run(
        cmd, cwd, "recall", "journal", "--write", "--focus", focus, "--next", f"after {focus}"
    )
    assert res.returncode == 0, res.stderr


def nested_journals(top: Path, canonical_root: Path) -> list[Path]:
    canonical = canonical_root / ".synapt"
    return [p for p in top.rglob("journal.jsonl") if canonical not in p.parents]


def test_stock_synapt_loses_history_written_from_a_subdirectory(repo: Path) -> None:
    write(STOCK, repo / "server" / "api", "api work")
    assert (repo / "server/api/.synapt/recall/worktrees/repo/journal.jsonl").is_file()
    assert (
        run(STOCK, repo, "recall", "journal", "--list").stdout.strip() == "No journal entries yet."
    )


@pytest.mark.slow
def test_activated_reads_the_whole_worktree_from_any_directory(repo: Path) -> None:
    write(ACTIVATED, repo / "server" / "api", "api work")
    write(ACTIVATED, repo, "root work")
    write(ACTIVATED, repo / "server", "server work")
    for where in (repo, repo / "server", repo / "server" / "api"):
        listed = run(ACTIVATED, where, "recall", "journal", "--list", "--show", "9").stdout
        assert all(f in listed for f in ("api work", "root work", "server work")), where
    read = run(ACTIVATED, repo, "recall", "journal", "--read").stdout
    assert "Last session" in read and "server work" in read
    assert "after api work [carried since" in read
    assert nested_journals(repo, repo) == []
    with open_store(repo) as store:
        assert store.journal.read(10).total == 3


@pytest.mark.slow
def test_first_use_imports_what_stock_synapt_left_nested(repo: Path) -> None:
    write(STOCK, repo / "server" / "api", "stock api work")
    write(STOCK, repo, "stock root work")
    listed = run(ACTIVATED, repo, "recall", "journal", "--list").stdout
    assert "stock api work" in listed and "stock root work" in listed
    # The first read is already whole, and the canonical bucket (the mirror) holds it too,
    # for synapt's own file readers.
    mirror = (repo / ".synapt/recall/worktrees/repo/journal.jsonl").read_text()
    assert "stock api work" in mirror
    hook = run(ACTIVATED, repo, "recall", "hook", "session-start", stdin="{}")
    assert hook.returncode == 0 and '"shown":2' in hook.stdout


@pytest.mark.slow
def test_linked_worktree_keeps_its_own_whole_history(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt-feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    (wt / "pkg").mkdir()
    write(STOCK, wt / "pkg", "stock feature work")
    assert run(STOCK, wt, "recall", "journal", "--list").stdout.strip() == "No journal entries yet."
    stock_files = sorted(wt.rglob("journal.jsonl"))
    assert stock_files  # stock synapt nested its journal below the linked worktree
    write(ACTIVATED, wt / "pkg", "feature work")
    write(ACTIVATED, repo, "main work")
    listed = run(ACTIVATED, wt, "recall", "journal", "--list").stdout
    assert "feature work" in listed and "stock feature work" in listed
    assert "main work" not in listed  # the desk keeps its own history
    main_listed = run(ACTIVATED, repo, "recall", "journal", "--list").stdout
    assert "main work" in main_listed and "feature work" not in main_listed
    # The linked worktree's bucket lies in the main checkout's data directory, never nested.
    assert (repo / ".synapt/recall/worktrees/wt-feature/journal.jsonl").is_file()
    assert sorted(wt.rglob("journal.jsonl")) == stock_files
    assert not list(wt.rglob("recall-sqlite.db"))


def test_a_store_problem_is_one_line_and_a_non_zero_exit(repo: Path) -> None:
    data = repo / ".synapt" / "recall"
    data.mkdir(parents=True)
    (data / "recall-sqlite.db").write_bytes(b"this is not a database" * 100)
    res = run(ACTIVATED, repo / "server", "recall", "journal", "--read")
    assert res.returncode == 1  # a runtime failure, as the README says (not a usage mistake)
    assert "Traceback" not in res.stderr
    assert res.stderr.startswith("recall-sqlite synapt: ") and res.stderr.count("\n") == 1
    assert not list(repo.rglob("journal.jsonl"))  # no silent JSONL fallback
