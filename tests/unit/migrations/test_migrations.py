"""Schema migrations: every frozen store of an earlier version (tests/stores/vN, built with
that version's code by tests/stores/make_store.py) migrates to exactly the schema a fresh
store gets, stays consistent, and every read answers as it did before."""

from __future__ import annotations

import json
import re
import shutil
import sys
import types
from pathlib import Path
from typing import Any

import apsw
import pytest

import recall_sqlite.db as db_mod
from recall_sqlite import SchemaTooNewError, open_store
from recall_sqlite import migrations as migrations_mod
from recall_sqlite.migrations import SCHEMA_VERSION
from recall_sqlite.store import context_of
from tests.helpers import TESTS
from tests.stores.make_store import answers, legacy_bucket

STORES = TESTS / "stores"
FROZEN = sorted(p for p in STORES.iterdir() if p.is_dir() and re.fullmatch(r"v\d+", p.name))


def _normalise(sql: str | None) -> str:
    if sql is None:
        return ""
    sql = re.sub(r"--[^\n]*", "", sql)
    sql = re.sub(r"\s+", " ", sql).strip()
    return re.sub(r"\s*([(),;=])\s*", r"\1", sql)


def shape(path: Path) -> dict[str, Any]:
    """Everything sqlite_schema says about the file, plus what the pragmas say of each table
    (column types, defaults, keys, STRICT, foreign keys)."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        objects = {
            (t, n): _normalise(sql)
            for t, n, sql in conn.execute(
                "SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_autoindex%'"
            )
        }
        tables = [n for t, n in objects if t == "table"]
        pragmas = {
            n: (
                conn.execute(f"PRAGMA table_xinfo('{n}')").fetchall(),
                conn.execute(f"PRAGMA foreign_key_list('{n}')").fetchall(),
                conn.execute(f"PRAGMA table_list('{n}')").fetchall(),
            )
            for n in tables
        }
        return {"objects": objects, "pragmas": pragmas}
    finally:
        conn.close()


def _workspace(base: Path, uuid: str) -> Path:
    """The layout make_store.py used: a gr2 root and a checkout `desk` on branch feat."""
    root = base / "proj"
    (root / ".grip").mkdir(parents=True)
    (root / "desk" / ".git").mkdir(parents=True)
    (root / "desk" / ".git" / "HEAD").write_text("ref: refs/heads/feat\n")
    data = root / ".synapt" / "recall"
    data.mkdir(parents=True)
    (data / "workspace.json").write_text(json.dumps({"workspace_id": uuid}))
    return root


def _migrated(frozen: Path, base: Path) -> tuple[Path, Path, dict[str, Any]]:
    expected = json.loads((frozen / "expected.json").read_text())
    root = _workspace(base, expected["workspace_id"])
    db = base / "store.db"
    shutil.copyfile(frozen / "store.db", db)
    return root, db, expected


def test_there_is_a_frozen_store_of_every_earlier_version() -> None:
    versions = {int(p.name[1:]) for p in FROZEN}
    assert versions == set(range(1, SCHEMA_VERSION)) | ({1} if SCHEMA_VERSION == 1 else set())


@pytest.mark.parametrize("frozen", FROZEN, ids=lambda p: p.name)
def test_migrated_store_has_the_fresh_schema(frozen: Path, tmp_path: Path) -> None:
    root, db, _ = _migrated(frozen, tmp_path / "old")
    open_store(root, db_path=db).close()
    fresh_root = tmp_path / "fresh" / "proj"
    (fresh_root / ".grip").mkdir(parents=True)
    fresh = tmp_path / "fresh.db"
    open_store(fresh_root, db_path=fresh).close()
    got, want = shape(db), shape(fresh)
    assert got["objects"] == want["objects"]
    assert got["pragmas"] == want["pragmas"]
    conn = apsw.Connection(str(db))
    assert conn.execute("PRAGMA user_version").fetchall()[0][0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()


@pytest.mark.parametrize("frozen", FROZEN, ids=lambda p: p.name)
def test_migrated_store_answers_as_before(frozen: Path, tmp_path: Path) -> None:
    root, db, expected = _migrated(frozen, tmp_path)
    got = json.loads(json.dumps(answers(root, db)))
    if int(frozen.name[1:]) < 7:
        # v7 re-keyed every entry version by its content alone: the same answers, each
        # id the new one of the version the old one named.
        expected["answers"] = _renamed(expected["answers"], _v7_ids(root, db, expected))
    assert _as_then(got, expected["answers"]) == expected["answers"]
    with open_store(root, db_path=db) as s:
        # Every row re-hashed from its content, the indexes token by token: nothing a
        # migration wrote differs from what its content gives.
        kinds = {f.kind for f in s.doctor(deep=True).findings}
    assert not kinds & {"entry_content", "entry_derived", "summary_content", "search_index"}


# Fields results gained after a frozen store was written (a field is only ever added):
# compared as the version then answered, with each addition at its neutral value.
ADDED = {"other_machines": 0}
# What every answer said from issue 34 on (its scope and what lies outside it): where the
# version then did not say it, compared without it (tests/unit/answers/ holds its values).
SAID_LATER = ("scope", "elsewhere")


def _as_then(got: Any, then: Any) -> Any:
    if isinstance(got, dict) and isinstance(then, dict):
        for name, neutral in ADDED.items():
            if name in got and name not in then:
                assert got[name] == neutral, name
        return {
            k: _as_then(v, then.get(k))
            for k, v in got.items()
            if k in then or (k not in ADDED and k not in SAID_LATER)
        }
    if isinstance(got, list) and isinstance(then, list) and len(got) == len(then):
        return [_as_then(g, t) for g, t in zip(got, then, strict=True)]
    return got


def _v7_ids(root: Path, db: Path, expected: dict[str, Any]) -> dict[str, str]:
    """Old (workspace-salted) id -> v7 id of every version of the migrated store."""
    from recall_sqlite.journal.codec import encode, pre_v7_entry_id
    from recall_sqlite.timestamps import parse_timestamp

    out: dict[str, str] = {}
    with open_store(root, db_path=db) as s:
        for e in s.journal.versions(all_worktrees=True):
            f = e.synapt_dict()
            _, _, canon = encode(
                f["timestamp"], parse_timestamp(f["timestamp"]), f["session_id"], f["branch"],
                f["focus"], f["done"], f["decisions"], f["next_steps"], f["files_modified"],
                f["git_log"], f["auto"], f["enriched"], f["griptree"], f["agent_id"],
                f["repair"], e.extra or None,
            )  # fmt: skip
            assert e.id is not None
            out[pre_v7_entry_id(expected["workspace_id"], canon).hex()] = e.id
    return out


def _renamed(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, list):
        return [_renamed(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, ids) for k, v in value.items()}
    return value


def test_newer_file_is_refused_untouched(tmp_path: Path) -> None:
    root, db, _ = _migrated(FROZEN[-1], tmp_path)
    open_store(root, db_path=db).close()
    conn = apsw.Connection(str(db))
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    before = db.read_bytes()
    with pytest.raises(SchemaTooNewError, match="upgrade recall-sqlite"):
        open_store(root, db_path=db)
    assert db.read_bytes() == before


def _fake_step(monkeypatch: pytest.MonkeyPatch, body: Any) -> None:
    """Pretend the code has one more schema version whose step is `body`."""
    name = f"v{SCHEMA_VERSION + 1:03d}_test"
    module = types.ModuleType(f"{migrations_mod.__name__}.{name}")
    module.migrate = body  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(migrations_mod, "STEPS", (*migrations_mod.STEPS, name))
    monkeypatch.setattr(db_mod, "SCHEMA_VERSION", SCHEMA_VERSION + 1)


def test_a_step_runs_once_and_stamps_its_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, db, _ = _migrated(FROZEN[-1], tmp_path)
    open_store(root, db_path=db).close()
    calls: list[int] = []

    def migrate(conn: Any) -> None:
        calls.append(1)
        conn.execute("CREATE TABLE step_test (x INTEGER) STRICT")

    _fake_step(monkeypatch, migrate)
    open_store(root, db_path=db).close()
    open_store(root, db_path=db).close()
    assert calls == [1]
    conn = apsw.Connection(str(db))
    assert conn.execute("PRAGMA user_version").fetchall()[0][0] == SCHEMA_VERSION + 1
    assert conn.execute("SELECT count(*) FROM step_test").fetchall() == [(0,)]
    conn.close()


def test_a_failing_step_leaves_the_previous_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, db, expected = _migrated(FROZEN[-1], tmp_path)
    open_store(root, db_path=db).close()

    def migrate(conn: Any) -> None:
        conn.execute("DROP VIEW journal")
        raise RuntimeError("step failed half way")

    _fake_step(monkeypatch, migrate)
    with pytest.raises(RuntimeError, match="half way"):
        open_store(root, db_path=db)
    monkeypatch.undo()
    conn = apsw.Connection(str(db))
    assert conn.execute("PRAGMA user_version").fetchall()[0][0] == SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'journal'").fetchall() == [
        (1,)
    ]
    conn.close()
    if FROZEN[-1].name == f"v{SCHEMA_VERSION}":
        assert json.loads(json.dumps(answers(root, db))) == expected["answers"]


@pytest.mark.parametrize("frozen", FROZEN, ids=lambda p: p.name)
def test_migrated_store_is_searchable(frozen: Path, tmp_path: Path) -> None:
    """Rows written before the search index existed are indexed by the step: a search
    finds exactly the shown entries (and current summaries) that hold the words."""
    from recall_sqlite.search.index import check_index

    root, db, _ = _migrated(frozen, tmp_path)
    for where in (root, root / "desk"):
        with open_store(where, db_path=db) as s:
            with context_of(s).db.read() as conn:
                assert check_index(conn).ok
            for kw in ({}, {"all_worktrees": True}, {"branch": "main"}):
                read = s.journal.read(1000, **kw)  # type: ignore[arg-type]
                want = sorted(
                    e.id or ""
                    for e in read.entries
                    if "websocket" in e.focus and "gateway" in e.focus
                )
                found = s.journal.search("websocket gateway", 1000, **kw)  # type: ignore[arg-type]
                assert want and sorted(e.id or "" for e in found.entries) == want
                assert found.total == len(want)
            legacy = s.journal.search("legacy step", all_worktrees=True)
            assert legacy.total == 5
    with open_store(root, db_path=db) as s:
        got = s.summaries.search("main")
        assert [x.text for x in got.summaries] == ["newer day on main"]
        assert s.summaries.search("main", include_superseded=True).total == 2


def test_v3_rekeys_linked_worktrees_and_makes_bookkeeping_relative(tmp_path: Path) -> None:
    """The v1 store keyed a linked worktree by its absolute path and its import sources by
    absolute paths: after the step the worktree carries git's admin name and the sources
    are relative to the root, so verify holds at a root the store was never opened at."""
    v1 = STORES / "v1"
    root, db, _ = _migrated(v1, tmp_path)
    (root / ".git" / "worktrees" / "side").mkdir(parents=True)
    side = tmp_path / "side-desk"
    side.mkdir()
    admin = root / ".git" / "worktrees" / "side"
    (admin / "commondir").write_text("../..\n")
    (admin / "HEAD").write_text("ref: refs/heads/side\n")
    (admin / "gitdir").write_text(f"{side}/.git\n")
    (side / ".git").write_text(f"gitdir: {admin}\n")
    conn = apsw.Connection(str(db))
    old_root = conn.execute("SELECT root FROM workspace_roots").fetchall()[0][0]
    assert str(conn.execute("SELECT path FROM import_sources").fetchall()[0][0]).startswith(
        old_root
    )
    ws_pk = conn.execute("SELECT id FROM workspaces").fetchall()[0][0]
    # what v1 recorded for a linked worktree outside the root, and a source inside it
    conn.execute(
        "INSERT INTO worktrees (workspace_id, key, name, root, first_seen, last_seen)"
        " VALUES (?, ?, 'side-desk', ?, ?, ?)",
        (ws_pk, side.as_posix(), str(side), "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
    )
    conn.execute(
        "INSERT INTO workspace_roots VALUES (?, ?, ?, ?)",
        (ws_pk, str(root), "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
    )
    wt_pk = conn.execute("SELECT id FROM worktrees WHERE key = ?", (side.as_posix(),)).fetchall()[
        0
    ][0]
    conn.execute(
        "INSERT INTO import_sources (workspace_id, path, bucket, layout, worktree_id,"
        " sha256) VALUES (?, ?, 'side-desk', 'worktrees', ?, 'e')",
        (ws_pk, f"{side}/lib/.synapt/recall/worktrees/side-desk/journal.jsonl", wt_pk),
    )
    conn.close()
    open_store(root, db_path=db).close()
    conn = apsw.Connection(str(db))
    keys = {k for (k,) in conn.execute("SELECT key FROM worktrees")}
    paths = sorted(str(p) for (p,) in conn.execute("SELECT path FROM import_sources"))
    conn.close()
    assert keys == {".", "desk", "@side"}
    assert paths == [
        ".synapt/recall/worktrees/proj/journal.jsonl",
        "@side:lib/.synapt/recall/worktrees/side-desk/journal.jsonl",
    ]
    # the bucket as make_store wrote it, now at the new root: verify holds, and a re-import
    # of it reads nothing and quarantines nothing a second time
    bucket = root / ".synapt" / "recall" / "worktrees" / "proj" / "journal.jsonl"
    bucket.parent.mkdir(parents=True)
    bucket.write_text(legacy_bucket())
    with open_store(root, db_path=db) as s:
        v = s.legacy.verify([bucket], deep=True)
        assert v.ok, v.to_dict()
        before = context_of(s).db.query("SELECT count(*) FROM quarantine")
        again = s.legacy.import_paths([bucket]).to_dict()
        assert again["lines_total"] == 0 and again["quarantined"] == 0
        assert context_of(s).db.query("SELECT count(*) FROM quarantine") == before
