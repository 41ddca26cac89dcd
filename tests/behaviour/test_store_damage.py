"""Damage is never "no store yet" (issue 16, point 5): an empty file, a file that is not a
store, a store missing where the workspace's id says one was made, a WAL without its
database are errors on every read and in doctor, and no write starts a new store over
them without --force (which keeps the damaged files). And the store's files as a reader
leaves them: a directory named as the database, a database in a directory that does not
exist, no -wal/-shm left by a read (issue 16, point 9)."""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from recall_sqlite import CorruptStoreError, NotAStoreError, StoreError, open_store
from recall_sqlite.errors import WorkspaceError
from tests.conftest import make_workspace
from tests.helpers import run_cli

READS = (["journal", "read"], ["journal", "search", "x"], ["summary", "list"], ["where"])


def _store(root: Path) -> Path:
    with open_store(root) as s:
        s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "kept history"})
        return s.workspace.db_path


def _truncate(db: Path) -> None:
    db.write_bytes(b"")  # just now: no grace period makes this "a store being created"


def _garbage(db: Path) -> None:
    db.write_bytes(b"this is not a database, it was overwritten\n" * 100)


def _lose(db: Path) -> None:
    db.unlink()


def _orphan_wal(db: Path) -> None:
    Path(f"{db}-wal").write_bytes(b"\x37\x7f\x06\x82" + b"\x00" * 4000)
    db.unlink()


DAMAGE: dict[str, Callable[[Path], None]] = {
    "empty": _truncate,
    "not a store": _garbage,
    "missing with an id": _lose,
    "wal without its database": _orphan_wal,
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damage_is_an_error_on_read_and_write_and_in_doctor(tmp_path: Path, kind: str) -> None:
    root = make_workspace(tmp_path)
    db = _store(root)
    DAMAGE[kind](db)
    before = sorted((p.name, p.read_bytes()) for p in db.parent.iterdir())
    for argv in READS:
        res = run_cli("--cwd", str(root), *argv)
        assert res.returncode == 1, (argv, res.stdout, res.stderr)
        assert res.stderr.count("\n") == 1 and "no store yet" not in res.stderr.lower()
        assert "import" in res.stderr and "backup" in res.stderr
    res = run_cli("--cwd", str(root), "doctor", "--json")
    assert res.returncode == 1
    assert json.loads(res.stdout)["findings"][0]["kind"] == "damaged_store"
    for flags in ([], ["--read-only"]):
        res = run_cli("--cwd", str(root), *flags, "journal", "write", "--focus", "new")
        assert res.returncode == 1 and "--force" in res.stderr, res.stderr
    with pytest.raises((CorruptStoreError, NotAStoreError)):
        open_store(root)
    with pytest.raises((CorruptStoreError, NotAStoreError)):
        open_store(root, read_only=True)
    # Nothing was written over the damage, and no id minted or store created beside it.
    assert sorted((p.name, p.read_bytes()) for p in db.parent.iterdir()) == before


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_force_starts_a_new_store_keeping_the_damaged_files(tmp_path: Path, kind: str) -> None:
    root = make_workspace(tmp_path)
    db = _store(root)
    DAMAGE[kind](db)
    kept = {p.name: p.read_bytes() for p in db.parent.iterdir() if p.name.startswith(db.name)}
    res = run_cli("--cwd", str(root), "--force", "journal", "write", "--focus", "new")
    assert res.returncode == 0, res.stderr
    res = run_cli("--cwd", str(root), "journal", "read", "--json")
    assert [e["focus"] for e in json.loads(res.stdout)["entries"]] == ["new"]
    aside = {p.name: p.read_bytes() for p in db.parent.iterdir() if ".damaged-" in p.name}
    for name, content in kept.items():
        if not name.endswith("-shm"):
            assert content in aside.values(), name


def test_an_explicit_database_that_does_not_exist_yet_is_not_damage(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    _store(root)  # the workspace has an id and a store of its own
    other = tmp_path / "elsewhere.db"
    res = run_cli("--cwd", str(root), "--db", str(other), "journal", "write", "--focus", "x")
    assert res.returncode == 0, res.stderr
    res = run_cli("--cwd", str(root), "--db", str(tmp_path / "none.db"), "journal", "read")
    assert res.returncode == 0 and "no store yet" in res.stdout.lower()


def test_a_directory_named_as_the_database_is_a_clear_error(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    for argv in (["journal", "read"], ["journal", "write", "--focus", "x"], ["doctor"]):
        res = run_cli("--cwd", str(root), "--db", str(tmp_path), *argv)
        assert res.returncode == 2, (argv, res.stderr)
        assert "is a directory" in res.stderr and "no store" not in res.stderr.lower()
    with pytest.raises(WorkspaceError, match="is a directory"):
        open_store(root, db_path=tmp_path)
    assert not (root / ".synapt").exists()


def test_a_database_in_a_missing_directory_creates_nothing_anywhere(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    missing = tmp_path / "nonexistent" / "x.db"
    res = run_cli("--cwd", str(root), "--db", str(missing), "journal", "write", "--focus", "x")
    assert res.returncode == 2 and "does not exist" in res.stderr
    assert not missing.parent.exists()
    assert not (root / ".synapt").exists()  # not even a workspace id for the typo
    if not os.path.exists("/nonexistent"):
        res = run_cli("--cwd", str(root), "--db", "/nonexistent/x.db", "journal", "write")
        assert res.returncode == 2 and not os.path.exists("/nonexistent")


def _listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


READ_COMMANDS = (
    ["journal", "read"],
    ["journal", "pending"],
    ["journal", "search", "history"],
    ["summary", "latest"],
    ["summary", "list"],
    ["summary", "search", "history"],
    ["cursor", "show"],
    ["cursor", "unread", "hook"],
    ["vectors", "stats"],
    ["where"],
    ["doctor"],
    ["worktree", "list"],
)


def test_reads_leave_no_wal_or_shm_behind(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    db = _store(root)
    clean = _listing(db.parent)
    assert not [n for n in clean if n.endswith(("-wal", "-shm"))]
    for argv in READ_COMMANDS:
        res = run_cli("--cwd", str(root), *argv)
        assert res.returncode == 0, (argv, res.stderr)
        assert _listing(db.parent) == clean, argv
    with open_store(root, read_only=True) as s:
        assert s.journal.read().total == 1
    assert _listing(db.parent) == clean


def test_a_reader_keeps_the_wal_files_another_process_uses(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    _store(root)
    writer = open_store(root)  # another process's connection, in spirit: this one
    try:
        writer.journal.append({"timestamp": "2026-01-02T00:00:00Z", "focus": "more"})
        res = run_cli("--cwd", str(root), "journal", "read", "--json")
        assert json.loads(res.stdout)["total"] == 2
        assert Path(f"{writer.workspace.db_path}-wal").exists()
        writer.journal.append({"timestamp": "2026-01-03T00:00:00Z", "focus": "still writes"})
    finally:
        writer.close()
    with open_store(root, read_only=True) as s:
        assert s.journal.read().total == 3


def _open_and_append(args: tuple[str, int]) -> str:
    root, i = args
    with open_store(root) as s:
        s.journal.append({"timestamp": f"2026-01-01T00:00:{i:02d}Z", "focus": f"racer {i}"})
        return s.workspace.id


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
def test_racing_first_opens_share_one_new_store(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with multiprocessing.get_context("fork").Pool(6) as pool:
        ids = pool.map(_open_and_append, [(str(root), i) for i in range(12)])
    assert len(set(ids)) == 1
    with open_store(root, read_only=True) as s:
        assert s.journal.read(20).total == 12
    leftovers = [p.name for p in (root / ".synapt" / "recall").iterdir() if p.name.endswith(".new")]
    assert leftovers == []


def test_a_store_built_by_hand_is_still_refused_when_empty(tmp_path: Path) -> None:
    # An empty SQLite database (a shell's `sqlite3 x.db VACUUM`) holds nothing to lose: a
    # write makes it a store; a read says it is not one.
    import apsw

    root = make_workspace(tmp_path)
    db = tmp_path / "hand.db"
    conn = apsw.Connection(str(db))
    conn.execute("VACUUM")
    conn.close()
    with pytest.raises(StoreError, match="holds no recall-sqlite store"):
        open_store(root, db_path=db, read_only=True)
    with open_store(root, db_path=db) as s:
        assert s.journal.read().total == 0
