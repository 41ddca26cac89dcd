"""Read-only and reader-friendly opens, an identity that is never lost, trust rules for
paths, and stores deleted or replaced under a running host."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import apsw
import pytest

from recall_sqlite import NoStoreError, open_store
from recall_sqlite.errors import (
    CorruptStoreError,
    StoreError,
    StoreGoneError,
    WorkspaceError,
)
from recall_sqlite.store import context_of
from tests.conftest import make_workspace
from tests.helpers import run_cli


def _write(root: Path, focus: str = "hello") -> str:
    with open_store(root) as s:
        return s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": focus}).id


def test_a_read_on_a_fresh_workspace_creates_nothing(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    for argv in (["journal", "read"], ["journal", "pending"], ["where"], ["doctor"]):
        res = run_cli("--cwd", str(root), *argv)
        assert res.returncode == 0, res.stderr
        assert "no store yet" in res.stdout.lower()
    assert not (root / ".synapt").exists()
    with pytest.raises(NoStoreError):
        open_store(root, read_only=True)
    assert not (root / ".synapt").exists()
    res = run_cli("--cwd", str(root), "--db", str(tmp_path / "missing" / "x.db"), "journal", "read")
    assert res.returncode == 0 and not (tmp_path / "missing").exists()


def test_read_only_flag_reads_and_refuses_writes(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    _write(root)
    res = run_cli("--read-only", "--cwd", str(root), "journal", "read", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["total"] == 1
    res = run_cli("--read-only", "--cwd", str(root), "journal", "write", "--focus", "x")
    assert res.returncode == 1 and "read-only" in res.stderr and res.stderr.count("\n") == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_store_on_unwritable_media_opens_read_only(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    _write(root)
    data = root / ".synapt" / "recall"
    for p in data.iterdir():
        if p.name.endswith(("-wal", "-shm")):
            p.unlink()
    modes = {p: p.stat().st_mode for p in [data, *data.iterdir()]}
    for p in modes:
        p.chmod(stat.S_IMODE(modes[p]) & ~0o222)
    try:
        with open_store(root, read_only=True) as s:
            assert s.journal.read().total == 1
        res = run_cli("--cwd", str(root), "journal", "read", "--json")
        assert res.returncode == 0 and json.loads(res.stdout)["total"] == 1, res.stderr
    finally:
        for p, m in modes.items():
            p.chmod(stat.S_IMODE(m))


def test_read_only_bind_mount(tmp_path: Path) -> None:
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root and mount")
    root = make_workspace(tmp_path / "src")
    _write(root)
    with open_store(root) as s:  # a clean close checkpoints the WAL away
        path = context_of(s).db.path
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    ro = tmp_path / "ro"
    ro.mkdir()
    res = subprocess.run(["mount", "--bind", "-o", "ro", str(root), str(ro)], capture_output=True)
    if res.returncode != 0:
        pytest.skip(f"bind mount impossible here: {res.stderr!r}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(ro)], capture_output=True)
        if os.access(ro, os.W_OK) and _writable(ro):
            pytest.skip("the bind mount is not read-only here")
        with open_store(ro, read_only=True) as s:
            assert s.journal.read().total == 1
        res = run_cli("--cwd", str(ro), "journal", "read", "--json")
        assert res.returncode == 0 and json.loads(res.stdout)["total"] == 1, res.stderr
    finally:
        subprocess.run(["umount", str(ro)], capture_output=True)


def _writable(d: Path) -> bool:
    try:
        (d / ".probe").write_text("x")
    except OSError:
        return False
    (d / ".probe").unlink()
    return True


def test_a_reader_answers_while_a_write_lock_is_held(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    _write(root)
    # A last_seen older than the refresh interval makes a write open want to register.
    shell = apsw.Connection(str(root / ".synapt" / "recall" / "recall-sqlite.db"))
    shell.execute("UPDATE workspace_roots SET last_seen = '2000-01-01T00:00:00Z'")
    shell.execute("UPDATE worktrees SET last_seen = '2000-01-01T00:00:00Z'")
    shell.execute("BEGIN IMMEDIATE")  # an import holding the write lock
    try:
        started = time.monotonic()
        with open_store(root, read_only=True) as s:
            assert s.journal.read().total == 1
        # The busy timeout is 10 s: an open that waited on the lock could not get near this.
        assert time.monotonic() - started < 0.1 * 10
        started = time.monotonic()
        res = run_cli("--cwd", str(root), "journal", "read", "--json")
        assert res.returncode == 0 and json.loads(res.stdout)["total"] == 1
        assert time.monotonic() - started < 5
    finally:
        shell.execute("ROLLBACK")
        shell.close()


def test_a_lost_workspace_json_keeps_its_id(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    _write(root)
    wsfile = root / ".synapt" / "recall" / "workspace.json"
    uuid = json.loads(wsfile.read_text())["workspace_id"]
    wsfile.unlink()
    with open_store(root, read_only=True) as s:
        assert s.workspace.id == uuid and s.journal.read().total == 1
        assert any("missing" in w for w in s.workspace.warnings)
    assert not wsfile.exists()
    with open_store(root) as s:
        assert s.workspace.id == uuid and s.journal.read().total == 1
        assert any("restored" in w for w in s.workspace.warnings)
    assert json.loads(wsfile.read_text())["workspace_id"] == uuid


def test_a_symlinked_data_dir_leaving_the_workspace_is_refused(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".synapt").symlink_to(elsewhere)
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        open_store(root)
    assert list(elsewhere.iterdir()) == []
    res = run_cli("--cwd", str(root), "journal", "write", "--focus", "x")
    assert res.returncode == 2 and "outside the workspace" in res.stderr
    # set explicitly, it is the user's choice
    os.environ["SYNAPT_RECALL_ROOT"] = str(root)
    try:
        with open_store(root) as s:
            assert s.workspace.resolved_by == "SYNAPT_RECALL_ROOT"
    finally:
        del os.environ["SYNAPT_RECALL_ROOT"]


def test_no_file_through_a_dangling_symlink(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    target = tmp_path / "target.db"
    db = tmp_path / "link.db"
    db.symlink_to(target)
    with pytest.raises(StoreError, match="dangling symlink"):
        open_store(root, db_path=db)
    assert not target.exists()


def test_created_directories_are_private_and_gitignored(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    old = os.umask(0)
    try:
        _write(root)
    finally:
        os.umask(old)
    for d in (root / ".synapt", root / ".synapt" / "recall"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    assert (root / ".synapt" / ".gitignore").read_text().strip().endswith("*")


def test_a_database_named_in_a_missing_directory_creates_nothing(tmp_path: Path) -> None:
    # A typo in --db must not make a directory tree somewhere (the store makes only its
    # own data directory).
    root = make_workspace(tmp_path)
    with pytest.raises(WorkspaceError, match="does not exist"):
        open_store(root, db_path=tmp_path / "a" / "b" / "x.db")
    assert not (tmp_path / "a").exists()


def test_a_store_deleted_under_the_host_refuses_writes(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "a"})
        shutil.rmtree(root / ".synapt")
        with pytest.raises(StoreGoneError):
            s.journal.append({"timestamp": "2026-01-02T00:00:00Z", "focus": "b"})


def test_a_zero_byte_store_is_not_recreated_silently(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    db = tmp_path / "x.db"
    db.write_bytes(b"")
    os.utime(db, (time.time() - 3600, time.time() - 3600))
    with pytest.raises(CorruptStoreError, match="0 bytes"):
        open_store(root, db_path=db)
    res = run_cli("--cwd", str(root), "--db", str(db), "journal", "write", "--focus", "x")
    assert res.returncode == 1 and res.stderr.count("\n") == 1


def test_the_copy_warning_says_histories_merge(tmp_path: Path) -> None:
    shared = tmp_path / "shared.db"
    a = make_workspace(tmp_path, "a")
    with open_store(a, db_path=shared):
        pass
    b = tmp_path / "b"
    shutil.copytree(a, b)
    with open_store(b, db_path=shared) as s:
        assert any("merged history" in w for w in s.workspace.warnings)


def test_doctor_cli_exit_codes(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    _write(root)
    res = run_cli("--cwd", str(root), "doctor", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["ok"] is True
    shell = apsw.Connection(str(root / ".synapt" / "recall" / "recall-sqlite.db"))
    shell.execute("UPDATE journal_counts_wt SET heads = 7")
    shell.close()
    res = run_cli("--cwd", str(root), "doctor", "--json")
    data = json.loads(res.stdout)
    assert res.returncode == 1 and not data["ok"] and data["findings"][0]["kind"] == "counts_wt"
    res = run_cli("--cwd", str(root), "doctor", "--repair")
    assert res.returncode == 0 and "repaired:" in res.stdout
