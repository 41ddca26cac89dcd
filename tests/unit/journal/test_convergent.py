"""Convergent identities (schema v7): an entry version's id is its content's, the same in
every store; a forgotten id is never stored again by any writer; tombstones of the pre-v7
formula still keep a re-import out."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from recall_sqlite import InvalidEntryError, open_store
from recall_sqlite.demo import synapt_line
from recall_sqlite.journal.codec import encode, pre_v7_entry_id
from recall_sqlite.store import context_of
from recall_sqlite.timestamps import parse_timestamp
from tests.conftest import entry, make_workspace

E = entry("2026-01-01T00:00:00Z", session_id="s", focus="the same everywhere")


def test_one_version_has_one_id_in_every_store(tmp_path: Path) -> None:
    ids = set()
    for name in ("a", "b"):
        with open_store(make_workspace(tmp_path, name)) as s:
            ids.add(s.journal.append(E).id)
    assert len(ids) == 1


def test_two_workspaces_of_one_file_each_keep_their_copy(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    got = []
    for name in ("a", "b"):
        with open_store(make_workspace(tmp_path, name), db_path=db) as s:
            r = s.journal.append(E)
            got.append((r.id, r.created))
            assert s.journal.read().total == 1
    assert got[0][0] == got[1][0] and got[0][1] and got[1][1]


def test_a_forgotten_version_is_never_stored_again(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        eid = s.journal.append(E).id
        s.journal.forget(eid)
        with pytest.raises(InvalidEntryError, match="forgotten"):
            s.journal.append(E)
        with pytest.raises(InvalidEntryError, match="forgotten"):
            s.journal.append_many([entry(f"2026-01-0{i + 2}T00:00:00Z") for i in range(3)] + [E])
        assert s.journal.read().total == 0  # the batch was refused whole
        s.journal.append(entry("2026-01-01T00:00:00Z", session_id="s", focus="changed"))
        path = context_of(s).db.path
    shell = apsw.Connection(str(path))
    with pytest.raises(apsw.ConstraintError, match="forgotten"):
        shell.execute(
            "INSERT INTO journal_entries (id, workspace_id, worktree_id, timestamp, ts_us,"
            " stored_us) VALUES (?, 1, 1, 'x', 0, 0)",
            (bytes.fromhex(eid),),
        )
    shell.close()


def test_a_pre_v7_tombstone_still_keeps_a_re_import_out(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    bucket = root / ".synapt" / "recall" / "worktrees" / "proj" / "journal.jsonl"
    bucket.parent.mkdir(parents=True)
    line = synapt_line(timestamp="2026-01-01T00:00:00+00:00", session_id="s", focus="secret")
    bucket.write_text(line + "\n" + synapt_line(timestamp="2026-01-02T00:00:00+00:00") + "\n")
    with open_store(root) as s:
        # What a store migrated from v6 holds after a forget there: the old formula's id.
        f = {"timestamp": "2026-01-01T00:00:00+00:00", "session_id": "s", "focus": "secret"}
        _, _, canon = encode(
            f["timestamp"], parse_timestamp(f["timestamp"]), "s", "", "secret",
            [], [], [], [], [], False, False, "", "", False, None,
        )  # fmt: skip
        old = pre_v7_entry_id(s.workspace.id, canon)
        with context_of(s).db.write() as conn:
            conn.execute(
                "INSERT INTO journal_tombstones (workspace_id, id, formula, forgotten_at)"
                " VALUES (?, ?, 1, 'x')",
                (context_of(s).workspace_pk, old),
            )
        report = s.legacy.import_paths()
        assert report.ok
        assert report.to_dict()["imported"] == 1 and report.to_dict()["quarantined"] == 1
        assert [e.focus for e in s.journal.read(10).entries] == [""]
        assert s.legacy.verify(deep=True).ok
