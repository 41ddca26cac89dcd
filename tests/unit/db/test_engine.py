"""The database file: identity checks, private modes, read-only use, bad input that leaves
nothing half-written, and proof that ordinary SQLite tools read the same rows."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import apsw
import pytest

from recall_sqlite import (
    ForeignDatabaseError,
    InvalidEntryError,
    NotAStoreError,
    ReadOnlyStoreError,
    SchemaTooNewError,
    WorkspaceError,
    open_store,
)
from recall_sqlite.db import APPLICATION_ID
from recall_sqlite.migrations import SCHEMA_VERSION
from recall_sqlite.store import context_of
from tests.conftest import entry, make_workspace


def _count(path: Path) -> int:
    with open_store(path.parent, db_path=path) as s:
        return int(context_of(s).db.query("SELECT count(*) FROM journal_entries")[0][0])


def test_pragmas_and_identity(store: object) -> None:
    s = store
    conn = context_of(s).db.conn  # type: ignore[attr-defined]
    assert conn.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchall()[0][0] == 1  # NORMAL
    assert conn.execute("PRAGMA foreign_keys").fetchall()[0][0] == 1
    assert conn.execute("PRAGMA application_id").fetchall()[0][0] == APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchall()[0][0] == SCHEMA_VERSION
    # Freed pages are zeroed in the TEMP database too (a batch of entries is staged there).
    s.journal.append_many(  # type: ignore[attr-defined]
        [entry(focus=f"staged {i}", session_id=f"s{i}") for i in range(16)]
    )
    for schema in ("main", "temp"):
        assert conn.execute(f"PRAGMA {schema}.secure_delete").fetchall()[0][0] == 1, schema
    strict = {
        r[0]
        for r in conn.execute("SELECT name FROM pragma_table_list WHERE schema='main' AND strict=1")
    }
    assert {"journal_entries", "summaries", "cursors", "vectors", "quarantine"} <= strict


def test_default_database_is_private_and_not_synapts_index(workspace_root: Path) -> None:
    with open_store(workspace_root) as s:
        path = s.workspace.db_path
        assert path.parent == workspace_root.resolve() / ".synapt" / "recall"
        assert path.name != "recall.db" and "index" not in path.parts
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_db_argument_and_environment_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path)
    env_db = tmp_path / "env.db"
    monkeypatch.setenv("RECALL_SQLITE_DB", str(env_db))
    with open_store(root) as s:
        assert s.workspace.db_path == env_db
    arg_db = tmp_path / "arg.db"
    with open_store(root, db_path=arg_db) as s:
        assert s.workspace.db_path == arg_db


def test_not_sqlite_file_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"definitely not a database\n" * 200)
    with pytest.raises(NotAStoreError, match="not an SQLite database"):
        open_store(make_workspace(tmp_path), db_path=junk)
    assert junk.read_bytes().startswith(b"definitely")


def test_other_applications_database_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE t (x)")
    with pytest.raises(ForeignDatabaseError):
        open_store(make_workspace(tmp_path), db_path=other)
    tagged = tmp_path / "tagged.db"
    with sqlite3.connect(tagged) as c:
        c.execute("PRAGMA application_id=12345")
    with pytest.raises(ForeignDatabaseError, match="another application"):
        open_store(make_workspace(tmp_path), db_path=tagged)


def test_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    db = tmp_path / "s.db"
    open_store(root, db_path=db).close()
    conn = apsw.Connection(str(db))
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(SchemaTooNewError, match="upgrade"):
        open_store(root, db_path=db)
    conn = apsw.Connection(str(db))
    assert conn.execute("PRAGMA user_version").fetchall()[0][0] == SCHEMA_VERSION + 1


def test_read_only_store_reads_and_refuses_writes(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append(entry(session_id="a", focus="kept"))
    with open_store(root, read_only=True) as ro:
        assert [e.focus for e in ro.journal.read().entries] == ["kept"]
        with pytest.raises(ReadOnlyStoreError):
            ro.journal.append(entry(session_id="b", focus="no"))
    with open_store(root) as s:
        assert s.journal.read().total == 1


def test_missing_override_root_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    typo = tmp_path / "typo"
    monkeypatch.setenv("SYNAPT_RECALL_ROOT", str(typo))
    with pytest.raises(WorkspaceError):
        open_store(tmp_path)
    assert not typo.exists()


@pytest.mark.parametrize(
    "bad, reason",
    [
        ({"session_id": "s"}, "no timestamp"),
        ({"timestamp": None}, "no timestamp"),
        ({"timestamp": "tomorrow"}, "unparseable timestamp"),
        ({"timestamp": 1700000000}, "timestamp must be"),
        ({"timestamp": "2026-13-01T00:00:00Z"}, "invalid timestamp"),
        (entry(done="not a list"), "done must be a list"),
        (entry(done=[1]), "done item must be a string"),
        (entry(focus=["x"]), "focus must be a string"),
        (entry(auto="yes"), "auto must be true or false"),
        (entry(focus="a\x00b"), "NUL"),
        (entry(focus="a\ud800b"), "lone surrogate"),
        (entry(next_steps=["ok", "bad\udfff"]), "lone surrogate"),
        (entry(weird={"k": float("nan")}), "extra fields"),
        ([1, 2], "JSON object"),
    ],
)
def test_bad_entries_are_typed_errors_and_write_nothing(
    tmp_path: Path, bad: object, reason: str
) -> None:
    with open_store(make_workspace(tmp_path)) as s:
        with pytest.raises(InvalidEntryError, match=reason):
            s.journal.append(bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidEntryError):
            s.journal.append_many([entry(session_id="fine", focus="x"), bad])  # type: ignore[list-item]
        assert context_of(s).db.query("SELECT count(*) FROM journal_entries")[0][0] == 0


def test_null_fields_are_normalised_to_empty(store: object) -> None:
    s = store
    r = s.journal.append(entry(session_id=None, focus=None, done=None, auto=None))  # type: ignore[attr-defined]
    got = s.journal.get(r.id)  # type: ignore[attr-defined]
    assert (got.session_id, got.focus, got.done, got.auto) == ("", "", [], False)


def test_entries_are_immutable_in_sql(store: object) -> None:
    s = store
    s.journal.append(entry(session_id="a", focus="x"))  # type: ignore[attr-defined]
    with pytest.raises(Exception, match="immutable"):
        context_of(s).db.query("UPDATE journal_entries SET focus = 'edited'")  # type: ignore[attr-defined]


def test_sqlite3_shell_and_stdlib_reader_see_the_same_rows(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append(entry("2026-01-01T10:00:00Z", session_id="a", focus="first", done=["d"]))
        s.journal.append(entry("2026-01-01T11:00:00Z", session_id="a", focus="second"))
        s.journal.append(entry("2026-01-01T12:00:00Z", session_id="b", focus="third"))
        ours = [(e.id, e.focus) for e in s.journal.read(n=10).entries]
        db = s.workspace.db_path
    # A separate process with the stdlib sqlite3 module (a different SQLite library) and
    # sqlite-utils, after every apsw connection to the file is closed.
    script = textwrap.dedent(f"""
        import json, sqlite3, sqlite_utils
        c = sqlite3.connect({str(db)!r})
        rows = c.execute("SELECT id, focus FROM journal ORDER BY seq DESC").fetchall()
        db = sqlite_utils.Database({str(db)!r})
        names = set(db.table_names()) | set(db.view_names())
        print(json.dumps({{"rows": rows, "names": sorted(names)}}))
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout
    data = json.loads(out)
    assert [tuple(r) for r in data["rows"]] == sorted(ours, key=lambda r: r[1], reverse=True)
    assert {"journal", "journal_versions", "journal_entries", "summaries"} <= set(data["names"])

    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("no sqlite3 shell on this machine")
    res = subprocess.run(
        [
            shell,
            "-readonly",
            str(db),
            "SELECT focus FROM journal ORDER BY utc DESC;SELECT count(*) FROM journal_versions;",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    assert res.stdout.split() == ["third", "second", "3"]


def test_private_modes_survive_a_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        root = make_workspace(tmp_path)
        with open_store(root) as s:
            s.journal.append(entry(focus="secret"))
            path = s.workspace.db_path
        for p in [path, *path.parent.glob(path.name + "-*")]:
            assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0, p
    finally:
        os.umask(old)


def test_a_busy_error_names_the_wait_sqlite_reports(tmp_path: Path) -> None:
    # A read snapshot gone stale (another writer committed after it began) cannot become a
    # write: SQLITE_BUSY_SNAPSHOT, said as such; a plain writer's lock is said as before.
    from recall_sqlite.db import translate

    path = str(tmp_path / "x.db")
    first = apsw.Connection(path)
    first.execute("PRAGMA journal_mode=WAL").fetchall()
    first.execute("CREATE TABLE t (x)")
    second = apsw.Connection(path)
    second.execute("BEGIN")
    second.execute("SELECT count(*) FROM t").fetchall()
    first.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(apsw.BusyError) as stale:
        second.execute("INSERT INTO t VALUES (2)")
    assert str(translate(stale.value, path)).endswith("past 10000 ms (SQLITE_BUSY_SNAPSHOT)")
    second.execute("ROLLBACK")
    first.execute("BEGIN IMMEDIATE")
    second.set_busy_timeout(10)
    with pytest.raises(apsw.BusyError) as locked:
        second.execute("BEGIN IMMEDIATE")
    assert str(translate(locked.value, path)).endswith(
        "stayed locked by another writer past 10000 ms"
    )
