"""Two workspaces in one database file: every API that takes an id or a position refuses
(or returns nothing of) the other workspace's values, and no message reveals its size."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_sqlite import CoverRange, RecallError, open_store
from tests.conftest import make_workspace


def test_ids_and_positions_of_another_workspace(tmp_path: Path) -> None:
    shared = tmp_path / "shared.db"
    a = open_store(make_workspace(tmp_path, "a"), db_path=shared)
    b = open_store(make_workspace(tmp_path, "b"), db_path=shared)
    mine = a.journal.append(
        {"timestamp": "2026-01-01T00:00:00Z", "session_id": "s", "focus": "a's"}
    )
    theirs = [
        b.journal.append(
            {"timestamp": f"2026-01-0{i + 1}T00:00:00Z", "session_id": "s", "focus": f"b's {i}"}
        )
        for i in range(5)
    ]
    other = theirs[-1]
    assert a.journal.get(other.id) is None
    with pytest.raises(RecallError):
        a.journal.forget(other.id)
    assert b.journal.get(other.id) is not None
    with pytest.raises(RecallError):
        a.cursors.advance("c", "", to=other.id)
    with pytest.raises(RecallError) as info:
        a.cursors.advance("c", "", to=other.seq)
    assert str(other.seq) not in str(info.value).replace(f"{other.seq} is", "")
    with pytest.raises(RecallError):
        a.summaries.add("t", kind="k", covers=[other.id])
    with pytest.raises(RecallError):
        a.summaries.add("t", kind="k", covers=CoverRange(other.seq, other.seq))
    assert [e.id for e in a.journal.read(10, all_worktrees=True).entries] == [mine.id]
    a.journal.forget(session_id="s")
    assert len(b.journal.read(10).entries) == 1 and b.journal.read(10).total == 1
    assert b.doctor().ok
    a.close()
    b.close()
