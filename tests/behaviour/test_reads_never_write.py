"""Reads never write (issue 19, point 3): every read command and library read opens the store
read-only, creates nothing where there is no store, works on a read-only file and in a
read-only directory, and never waits on the write lock, also when the workspace has not been
used for a long time (the hourly registration refresh is the write that used to wait)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from recall_sqlite import open_store
from recall_sqlite.cli import main
from tests.conftest import make_workspace
from tests.helpers import run_cli

ENTRY = "2026-01-01T00:00:00Z"

READ_COMMANDS: dict[str, list[str]] = {
    "where": ["where"],
    "journal read": ["journal", "read"],
    "journal pending": ["journal", "pending"],
    "journal search": ["journal", "search", "gateway"],
    "summary latest": ["summary", "latest", "--all-branches"],
    "summary list": ["summary", "list", "--all-branches"],
    "summary search": ["summary", "search", "gateway"],
    "cursor show": ["cursor", "show", "hook"],
    "cursor unread": ["cursor", "unread", "hook"],
    "vectors stats": ["vectors", "stats"],
    "vectors search": ["vectors", "search", "--like", "ENTRY"],
    "doctor": ["doctor"],
    "worktree list": ["worktree", "list"],
}
# What the store answers to each (a word the text output must hold), once it exists.
ANSWERS = {
    "journal read": "gateway",
    "journal search": "gateway",
    "summary latest": "gateway",
    "summary list": "gateway",
    "summary search": "gateway",
    "cursor unread": "1 unread",
    "vectors stats": "m1",
    "vectors search": "of 1 in scope",
}


def _cli(root: Path, argv: list[str], entry_id: str = "") -> tuple[int, str, str, float]:
    argv = [entry_id if a == "ENTRY" else a for a in argv]
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--cwd", str(root), *argv])
    return code, out.getvalue(), err.getvalue(), time.monotonic() - started


def _build(root: Path) -> str:
    with open_store(root) as s:
        e = s.journal.append(
            {"timestamp": ENTRY, "session_id": "s", "focus": "websocket gateway", "done": ["x"]}
        )
        s.summaries.add("the gateway summary", kind="day")
        s.vectors.put(("entry", e.id), [0.1, 0.2, 0.3], model="m1")
        return e.id or ""


def _snapshot(directory: Path) -> list[tuple[str, bytes]]:
    return sorted((p.name, p.read_bytes()) for p in directory.iterdir())


@contextlib.contextmanager
def _immutable(*paths: Path) -> Iterator[None]:
    """Read-only for everyone, root included (chattr +i); skips where that is impossible."""
    done: list[Path] = []
    try:
        for p in paths:
            res = subprocess.run(["chattr", "+i", str(p)], capture_output=True)
            if res.returncode != 0:
                pytest.skip(f"chattr +i impossible here: {res.stderr!r}")
            done.append(p)
        yield
    finally:
        for p in done:
            subprocess.run(["chattr", "-i", str(p)], capture_output=True)


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, str]:
    if shutil.which("chattr") is None:
        pytest.skip("needs chattr")
    root = make_workspace(tmp_path)
    return root, _build(root)


@pytest.mark.parametrize("name", sorted(READ_COMMANDS))
def test_no_store_creates_nothing(tmp_path: Path, name: str) -> None:
    root = make_workspace(tmp_path)
    code, out, err, _ = _cli(root, READ_COMMANDS[name], "00" * 16)
    assert code == 0, err
    assert "no store yet" in out.lower(), out
    assert sorted(p.name for p in root.iterdir()) == [".grip"]


@pytest.mark.parametrize("name", sorted(READ_COMMANDS))
def test_a_read_only_file(built: tuple[Path, str], name: str) -> None:
    root, eid = built
    db = root / ".synapt" / "recall" / "recall-sqlite.db"
    before = db.read_bytes()
    with _immutable(db):
        code, out, err, _ = _cli(root, READ_COMMANDS[name], eid)
    assert code == 0, err
    assert ANSWERS.get(name, "") in out
    assert db.read_bytes() == before


@pytest.mark.parametrize("name", sorted(READ_COMMANDS))
def test_a_read_only_directory(built: tuple[Path, str], name: str) -> None:
    root, eid = built
    data = root / ".synapt" / "recall"
    before = _snapshot(data)
    with _immutable(data, *data.iterdir()):
        code, out, err, _ = _cli(root, READ_COMMANDS[name], eid)
    assert code == 0, err
    assert ANSWERS.get(name, "") in out
    assert _snapshot(data) == before


def _hold_write_lock(db: Path, *, idle: bool) -> apsw.Connection:
    shell = apsw.Connection(str(db))
    if idle:
        # Nobody has used the workspace for years: an open would want to refresh last_seen.
        shell.execute("UPDATE workspace_roots SET last_seen = '2000-01-01T00:00:00Z'")
        shell.execute("UPDATE worktrees SET last_seen = '2000-01-01T00:00:00Z'")
        shell.execute("UPDATE workspaces SET last_seen = '2000-01-01T00:00:00Z'")
    shell.execute("BEGIN IMMEDIATE")  # an import, say, holding the lock for minutes
    return shell


@pytest.mark.parametrize("idle", [False, True], ids=["busy", "idle and busy"])
@pytest.mark.parametrize("name", sorted(READ_COMMANDS))
def test_the_write_lock_held_never_makes_a_read_wait(
    built: tuple[Path, str], name: str, idle: bool
) -> None:
    root, eid = built
    db = root / ".synapt" / "recall" / "recall-sqlite.db"
    shell = _hold_write_lock(db, idle=idle)
    try:
        code, out, err, took = _cli(root, READ_COMMANDS[name], eid)
    finally:
        shell.execute("ROLLBACK")
    assert code == 0, err
    assert ANSWERS.get(name, "") in out
    assert took < 2.0, took  # the busy timeout is 10 s
    if idle:
        seen = shell.execute("SELECT last_seen FROM workspace_roots").fetchall()
        assert seen == [("2000-01-01T00:00:00Z",)]  # the read wrote nothing
    shell.close()


def test_a_read_command_in_its_own_process_does_not_wait(built: tuple[Path, str]) -> None:
    root, _ = built
    shell = _hold_write_lock(root / ".synapt" / "recall" / "recall-sqlite.db", idle=True)
    try:
        for argv in (["journal", "search", "gateway"], ["summary", "list"], ["cursor", "show"]):
            started = time.monotonic()
            res = run_cli("--cwd", str(root), *argv, "--json")
            assert res.returncode == 0, res.stderr
            json.loads(res.stdout)
            assert time.monotonic() - started < 5
    finally:
        shell.execute("ROLLBACK")
        shell.close()


# -- the library --------------------------------------------------------------------------


def test_library_reads_on_a_read_only_file_and_directory(built: tuple[Path, str]) -> None:
    root, eid = built
    data = root / ".synapt" / "recall"
    db = data / "recall-sqlite.db"
    before = db.read_bytes()
    with _immutable(db):
        for read_only in (True, False):
            with open_store(root, read_only=read_only) as s:
                assert s.journal.search("gateway").total == 1
                assert s.summaries.latest(kind="day") is not None
                assert s.vectors.search_like(("entry", eid), 1, model="m1").searched == 1
                if not read_only:
                    assert any("opened read-only" in w for w in s.workspace.warnings)
    # (A file this process may not write in a directory it may: SQLite's read-only
    # connection leaves the empty -wal/-shm it made; only a writer may remove them.)
    assert db.read_bytes() == before
    before_dir = _snapshot(data)
    with _immutable(data, *data.iterdir()):
        for read_only in (True, False):
            with open_store(root, read_only=read_only) as s:
                assert s.journal.read().total == 1
    assert _snapshot(data) == before_dir


@pytest.mark.parametrize("read_only", [True, False])
def test_library_opens_never_wait_on_the_write_lock(
    built: tuple[Path, str], read_only: bool
) -> None:
    root, _ = built
    shell = _hold_write_lock(root / ".synapt" / "recall" / "recall-sqlite.db", idle=True)
    try:
        started = time.monotonic()
        with open_store(root, read_only=read_only) as s:
            assert s.journal.read().total == 1
            assert s.cursors.unread("hook", "").items
        assert time.monotonic() - started < 2.0
    finally:
        shell.execute("ROLLBACK")
    # With the lock free again, a write open refreshes what it skipped.
    with open_store(root) as s:
        s.journal.read()
    seen = shell.execute("SELECT last_seen FROM workspace_roots").fetchall()
    assert seen != [("2000-01-01T00:00:00Z",)]
    shell.close()


def test_library_read_only_open_of_no_store_creates_nothing(tmp_path: Path) -> None:
    from recall_sqlite import NoStoreError

    root = make_workspace(tmp_path)
    with pytest.raises(NoStoreError):
        open_store(root, read_only=True)
    assert sorted(p.name for p in root.iterdir()) == [".grip"]
