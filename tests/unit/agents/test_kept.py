"""agents/kept.py: the MCP server's reads share one read-only store while it answers as a
fresh open would, and open anew when anything a fresh open depends on has changed (a
write is seen either way; a new branch, a replaced file, a worktree the store learns of)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from recall_sqlite import open_store
from recall_sqlite.agents.kept import KeptStore
from recall_sqlite.agents.mcp_server import call
from recall_sqlite.errors import NoStoreError
from tests.helpers import add_worktree, git, new_repo


def _write(cwd: Path, focus: str, session: str) -> None:
    with open_store(cwd) as store:
        store.journal.write(focus=focus, session_id=session)


def _foci(cwd: Path, kept: KeptStore) -> list[str]:
    got = call(str(cwd), "journal_read", {"n": 50}, None, kept)
    return [e["focus"] for e in got["entries"]]


@pytest.fixture
def kept() -> Any:
    k = KeptStore()
    yield k
    k.close()


def test_reads_share_one_store_and_see_every_write(tmp_path: Path, kept: KeptStore) -> None:
    repo = new_repo(tmp_path / "repo")
    _write(repo, "first", "s1")
    first = kept.read(str(repo), None, lambda s: s)
    assert kept.read(str(repo), None, lambda s: s) is first
    assert first.read_only
    _write(repo, "second", "s2")  # another connection commits after the open
    assert _foci(repo, kept) == ["second", "first"]
    assert kept.read(str(repo), None, lambda s: s) is first


def test_a_new_branch_opens_anew(tmp_path: Path, kept: KeptStore) -> None:
    repo = new_repo(tmp_path / "repo")
    _write(repo, "on main", "s1")
    before = kept.read(str(repo), None, lambda s: s)
    git(repo, "checkout", "-q", "-b", "feature")
    _write(repo, "on feature", "s2")
    got = call(str(repo), "journal_read", {"n": 5, "branch": None}, None, kept)
    after = kept.read(str(repo), None, lambda s: s)
    assert after is not before
    assert after.workspace.branch == "feature"
    assert got["scope"]["worktree"] == "."
    assert {e["focus"] for e in got["entries"]} == {"on main", "on feature"}


def test_a_replaced_file_is_read_anew(tmp_path: Path, kept: KeptStore) -> None:
    repo = new_repo(tmp_path / "repo")
    _write(repo, "kept text", "s1")
    db = str(kept.read(str(repo), None, lambda s: s).workspace.db_path)
    assert _foci(repo, kept) == ["kept text"]
    # A restore puts another file in place (another inode), as `sync restore --force` does.
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    with open_store(repo, db_path=copy) as other:
        other.journal.write(focus="from the replacement", session_id="s9")
    (tmp_path / "copy.db").replace(db)
    for suffix in ("-wal", "-shm"):
        Path(db + suffix).unlink(missing_ok=True)
    assert "from the replacement" in _foci(repo, kept)


def test_an_unknown_worktree_is_not_kept(tmp_path: Path, kept: KeptStore) -> None:
    repo = new_repo(tmp_path / "repo")
    _write(repo, "main's", "s1")
    wt = add_worktree(repo, tmp_path / "wt", "wt")
    # The store does not know the linked worktree yet: it reads as empty, and is not kept.
    assert _foci(wt, kept) == []
    assert kept.read(str(wt), None, lambda s: s) is not kept.read(str(wt), None, lambda s: s)
    _write(wt, "the worktree's", "s2")
    assert _foci(wt, kept) == ["the worktree's"]
    assert kept.read(str(wt), None, lambda s: s) is kept.read(str(wt), None, lambda s: s)


def test_a_busy_kept_store_is_not_shared(tmp_path: Path, kept: KeptStore) -> None:
    repo = new_repo(tmp_path / "repo")
    _write(repo, "x", "s1")
    outer = kept.read(str(repo), None, lambda s: s)
    inner = kept.read(str(repo), None, lambda s: kept.read(str(repo), None, lambda t: t))
    assert inner is not outer
    assert kept.read(str(repo), None, lambda s: s) is outer


def test_no_store_keeps_nothing(tmp_path: Path, kept: KeptStore) -> None:
    repo = new_repo(tmp_path / "repo")
    with pytest.raises(NoStoreError):
        kept.read(str(repo), None, lambda s: s)
    assert not (repo / ".synapt").exists()
    # The tool answers the CLI's empty read there, and still creates nothing.
    assert call(str(repo), "journal_read", {}, None, kept)["entries"] == []
    assert not (repo / ".synapt").exists()
