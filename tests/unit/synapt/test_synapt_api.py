"""synapt's journal API on the store, in process: activation, the functions against stock
synapt 0.30.0 over the same history, and errors through synapt's own paths."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import synapt.recall.journal as sj

from recall_sqlite import RecallError, open_store
from recall_sqlite.errors import HostError
from recall_sqlite.synapt import patch
from tests.conftest import make_workspace
from tests.helpers import new_repo

E = sj.JournalEntry
HISTORY = [
    E("2026-01-01T09:00:00+00:00", session_id="s1", focus="start", next_steps=["a", "b"]),
    E(
        "2026-01-01T09:30:00+00:00",
        session_id="s1",
        focus="start",
        done=["a"],
        next_steps=["b", "c"],
    ),
    E("2026-01-02T10:00:00Z", session_id="s2", files_modified=["x.py"], auto=True),
    E("2026-01-02T11:00:00+02:00", session_id="s3", focus="auto only", auto=True),
    E("2026-01-03T08:00:00", focus="no session", decisions=["keep it"], next_steps=["d"]),
    E("2026-01-04T08:00:00.5+00:00", session_id="s4", focus="latest", done=["c"]),
    E("2026-01-05T08:00:00+00:00", session_id="s5", files_modified=["y.py"], auto=True),
]


@pytest.fixture
def stock() -> Iterator[None]:
    patch.deactivate()
    yield
    patch.deactivate()


def git_repo(path: Path) -> Path:
    return new_repo(path, commit=False)


def answers() -> dict[str, Any]:
    """What synapt's journal functions say, from the current directory (path=None)."""

    def dicts(entries: list[Any]) -> list[dict[str, Any]]:
        return [e.to_dict() for e in entries]

    latest = sj.read_latest(meaningful=True)
    prev = sj.read_previous_meaningful("s4")
    return {
        "entries": dicts(sj.read_entries(n=50)),
        "entries2": dicts(sj.read_entries(n=2)),
        "latest": sj.read_latest().to_dict(),
        "meaningful": latest.to_dict() if latest else None,
        "previous": prev.to_dict() if prev else None,
        "pending": sj.pending_next_steps(),
        "done_s1": sj.session_done_items("s1"),
        "all": dicts(sj._read_all_entries(sj._journal_path())),
        "ids": sorted(sj._read_all_session_ids(sj._journal_path())),
    }


def test_activation_rebinds_every_copy_and_is_idempotent(stock: None) -> None:
    import synapt.recall.resume as resume  # loaded before activation: its copy is rebound

    from recall_sqlite.synapt import activate, api

    places = set(activate())
    import synapt.recall.cli as cli
    import synapt.recall.consolidate as consolidate  # loaded after: copies the rebound one
    import synapt.recall.enrich as enrich

    for place in (
        "synapt.recall.journal.read_entries",
        "synapt.recall.resume.read_entries",
        "synapt.recall.cli.append_entry",
        "synapt.recall.cli._journal_path",
        "synapt.recall.journal.compact_journal",
    ):
        assert place in places
    assert resume.read_entries is api.read_entries
    assert cli._read_all_session_ids is api._read_all_session_ids
    assert consolidate._journal_path is enrich._journal_path is api._journal_path
    assert consolidate._read_all_entries is api._read_all_entries
    assert enrich.append_entry is api.append_entry
    assert set(activate()) == places
    assert sj.read_entries is api.read_entries


def test_an_unknown_synapt_version_is_refused_and_nothing_is_patched(
    stock: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import synapt.recall

    original = sj.read_entries
    monkeypatch.setattr(synapt.recall, "__version__", "0.31.0")
    with pytest.raises(HostError, match="synapt 0.31.0 is not supported"):
        patch.activate()
    assert sj.read_entries is original and not patch.is_active()


def test_the_api_answers_as_stock_synapt_over_the_same_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch.deactivate()
    stock_root = git_repo(tmp_path / "a" / "repo")
    monkeypatch.chdir(stock_root)
    for e in HISTORY:
        sj.append_entry(e)
    expected = answers()
    # Activated over the JSONL stock synapt wrote (imported on first use) ...
    patch.activate()
    try:
        assert answers() == expected
        # ... and activated from the start in a fresh repository.
        fresh = git_repo(tmp_path / "b" / "repo")
        monkeypatch.chdir(fresh)
        for e in HISTORY:
            assert sj.append_entry(e) == fresh / ".synapt/recall/worktrees/repo/journal.jsonl"
        assert answers() == expected
        # The mirror is the line synapt would have written, and compaction rewrites nothing.
        mirror = fresh / ".synapt/recall/worktrees/repo/journal.jsonl"
        stock_file = stock_root / ".synapt/recall/worktrees/repo/journal.jsonl"
        assert mirror.read_bytes() == stock_file.read_bytes()
        assert sj.compact_journal() == 0 and mirror.read_bytes() == stock_file.read_bytes()
        with open_store(fresh) as store:
            assert store.journal.read(50).total == len(expected["entries"])
    finally:
        patch.deactivate()


def test_a_bucket_path_names_its_worktree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, activated: None
) -> None:
    root = make_workspace(tmp_path, "ws")  # a gr2 workspace with a repository "api" in it
    new_repo(root / "api", commit=False)
    monkeypatch.chdir(root / "api")
    # Stock synapt keeps one bucket per gr2 desk (the nearest .grip): the store keeps
    # the repository as a worktree of its own, and mirrors it where synapt reads.
    shared = root / ".synapt/recall/worktrees/ws/journal.jsonl"
    assert sj.append_entry(E("2026-01-01T09:00:00Z", session_id="x", focus="in api")) == shared
    monkeypatch.chdir(root)
    assert sj.append_entry(E("2026-01-01T10:00:00Z", session_id="y", focus="at root")) == shared
    assert [e.focus for e in sj.read_entries()] == ["at root"]
    # A bucket path named after the repository still selects it.
    bucket = root / ".synapt/recall/worktrees/api/journal.jsonl"
    assert [e.focus for e in sj.read_entries(bucket)] == ["in api"]
    # Its entries are in this very bucket for synapt: not "newer elsewhere".
    assert sj.newer_journal_elsewhere(sj._journal_path(), "2026-01-01T08:00:00Z") is None


def test_a_linked_worktree_is_mirrored_and_named_where_synapt_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, activated: None
) -> None:
    main = git_repo(tmp_path / "repo")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(
        ["git", "-C", str(main), "commit", "-q", "--allow-empty", "-m", "i"], check=True, env=env
    )
    linked = tmp_path / "repo-feat"
    subprocess.run(
        ["git", "-C", str(main), "worktree", "add", "-q", str(linked)], check=True, env=env
    )
    # What stock synapt reads from the linked worktree's root: the main checkout's store,
    # a bucket named after the worktree's directory (never the store's key `@repo-feat`).
    bucket = main / ".synapt/recall/worktrees/repo-feat/journal.jsonl"
    monkeypatch.chdir(linked)
    assert sj.append_entry(E("2026-01-01T09:00:00Z", session_id="x", focus="in feat")) == bucket
    assert [json.loads(line)["focus"] for line in bucket.read_text().splitlines()] == ["in feat"]
    monkeypatch.chdir(main)
    found = sj.newer_journal_elsewhere(sj._journal_path(), "2026-01-01T08:00:00Z")
    assert found == (bucket, "2026-01-01T09:00:00Z")
    assert sj.newer_journal_elsewhere(sj._journal_path(), "2026-01-01T09:00:00Z") is None


def test_a_file_outside_any_data_directory_is_synapts_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, activated: None
) -> None:
    monkeypatch.chdir(git_repo(tmp_path / "repo"))
    own = tmp_path / "export" / "entries.jsonl"
    sj.append_entry(E("2026-01-01T09:00:00Z", focus="exported"), own)
    assert [e.focus for e in sj.read_entries(own)] == ["exported"]
    assert not (tmp_path / "repo" / ".synapt" / "recall" / "recall-sqlite.db").exists()


def test_a_store_problem_is_a_readable_mcp_tool_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, activated: None
) -> None:
    from synapt.recall import server

    monkeypatch.chdir(git_repo(tmp_path / "repo"))
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database" * 200)
    monkeypatch.setenv("RECALL_SQLITE_DB", str(bad))
    answer = server.recall_journal("write", focus="x")
    assert answer.startswith("Journal failed: recall-sqlite store: ")
    assert "\n" not in answer and "Traceback" not in answer
    assert server.recall_journal("read").startswith("Journal failed: recall-sqlite store: ")
    assert not list((tmp_path / "repo").rglob("journal.jsonl"))
    with pytest.raises(RecallError):
        sj.read_entries()


def test_collapsed_fields_are_refused_with_synapts_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, activated: None
) -> None:
    monkeypatch.chdir(git_repo(tmp_path / "repo"))
    with pytest.raises(sj.JournalFieldCollapse):
        sj.append_entry(E("2026-01-01T09:00:00Z", focus="x</focus><done>y"))
    assert sj.read_entries() == []


def test_the_journal_path_of_recall_sqlite_imports_neither_synapt_nor_mcp(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "repo")
    code = (
        "import sys; from recall_sqlite.cli import main; import recall_sqlite.synapt;"
        f" main(['--cwd', {str(root)!r}, 'journal', 'read']);"
        " bad = sorted(m for m in sys.modules if m.split('.')[0] in ('synapt', 'mcp'));"
        " assert not bad, bad"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_copying_a_workspace_copies_nothing_of_the_adapter_state(tmp_path: Path) -> None:
    # The first-use marker lives in the workspace's own data directory, so a fresh clone
    # (no .synapt) is searched again.
    patch.deactivate()
    root = git_repo(tmp_path / "repo")
    shutil.copytree(root, tmp_path / "clone")
    assert not (tmp_path / "clone" / ".synapt").exists()
