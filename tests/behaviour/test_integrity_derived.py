"""Derived state has one definition (recall_sqlite/derived.py), and every way of writing or
removing entries leaves the store equal to it: appends, bulk batches, forget, and DELETEs
from a sqlite3 shell. A tamper of each derived column is found and repaired."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import derived, open_store
from recall_sqlite.errors import InvalidEntryError
from recall_sqlite.journal.journal import BULK_MIN_ROWS
from recall_sqlite.store import context_of
from tests.conftest import make_workspace

SESSIONS = ["", "a", "b", "c"]


def _entry(i: int, sid: str, ts: int, auto: bool, rich: int, branch: str) -> dict[str, Any]:
    return {
        "timestamp": f"2026-01-01T00:00:{ts:02d}Z",
        "session_id": sid,
        "branch": branch,
        "focus": f"focus {i}" if rich > 0 else "",
        "done": [f"d{i}"] if rich > 1 else [],
        "next_steps": [f"n{i}"] if rich > 2 else [],
        "auto": auto,
    }


entries = st.builds(
    lambda sid, ts, auto, rich, br: (sid, ts, auto, rich, br),
    st.sampled_from(SESSIONS),
    st.integers(0, 3),
    st.booleans(),
    st.integers(0, 3),
    st.sampled_from(["main", "feat"]),
)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.sampled_from([".", "desk"]), entries),
        st.tuples(
            st.just("bulk"),
            st.sampled_from([".", "desk"]),
            st.lists(entries, min_size=BULK_MIN_ROWS, max_size=BULK_MIN_ROWS + 8),
        ),
        st.tuples(st.just("forget"), st.integers(0, 50)),
        st.tuples(st.just("forget_session"), st.sampled_from(SESSIONS[1:])),
        st.tuples(st.just("shell_delete"), st.integers(0, 50)),
    ),
    min_size=1,
    max_size=12,
)


@contextlib.contextmanager
def _unless_forgotten() -> Iterator[None]:
    """A write of a version forgotten before is refused, whole: a tombstone wins."""
    try:
        yield
    except InvalidEntryError as exc:
        assert "was forgotten" in str(exc)


def _check(store: Any) -> list[Any]:
    with context_of(store).db.read() as conn:
        return derived.check(conn)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops)
def test_any_sequence_of_writes_and_removals_matches_the_definition(
    tmp_path_factory: pytest.TempPathFactory, sequence: list[Any]
) -> None:
    root = make_workspace(tmp_path_factory.mktemp("ws"))
    (root / "desk" / ".git").mkdir(parents=True)
    open_store(root / "desk").close()
    counter = 0
    with open_store(root) as store:
        db_path = context_of(store).db.path
        for op in sequence:
            if op[0] == "append":
                counter += 1
                with _unless_forgotten():
                    store.journal.append(_entry(counter, *op[2]), worktree=op[1])
            elif op[0] == "bulk":
                batch = []
                for e in op[2]:
                    counter += 1
                    batch.append(_entry(counter, *e))
                with _unless_forgotten():
                    store.journal.append_many(batch, worktree=op[1])
            elif op[0] == "forget":
                rows = context_of(store).db.query(
                    "SELECT lower(hex(id)) FROM journal_entries ORDER BY seq"
                )
                if rows:
                    store.journal.forget(rows[op[1] % len(rows)][0])
            elif op[0] == "forget_session":
                if context_of(store).db.query(
                    "SELECT 1 FROM journal_entries WHERE session_id = ?", (op[1],)
                ):
                    store.journal.forget(session_id=op[1])
            else:
                # A person at the sqlite3 prompt: another connection, foreign keys off.
                shell = apsw.Connection(str(db_path))
                rows = shell.execute("SELECT seq FROM journal_entries ORDER BY seq").fetchall()
                if rows:
                    shell.execute(
                        "DELETE FROM journal_entries WHERE seq = ?", (rows[op[1] % len(rows)][0],)
                    )
                shell.close()
            assert _check(store) == [], op
        assert store.doctor().ok


def _populated(tmp_path: Path) -> Any:
    root = make_workspace(tmp_path)
    store = open_store(root)
    for i in range(12):
        store.journal.append(
            _entry(i, SESSIONS[i % 4], i % 4, i % 3 == 0, i % 4, ["main", "feat"][i % 2])
        )
    return store


TAMPERS = {
    "heads": "UPDATE journal_entries SET head_ws = 1 - head_ws WHERE seq = 2",
    "heads_wt": "UPDATE journal_entries SET head_wt = 0 WHERE head_wt = 1",
    "counts_ws": "UPDATE journal_counts_ws SET heads = heads + 2",
    "counts_wt": "DELETE FROM journal_counts_wt",
    "meaningful": "UPDATE journal_counts_ws SET meaningful = 0",
    "bulk_guard": "INSERT INTO journal_bulk VALUES (1)",
}
KIND = {"heads_wt": "heads", "meaningful": "counts_ws"}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_a_shell_tamper_of_each_derived_column_is_found_and_repaired(
    tmp_path: Path, name: str
) -> None:
    store = _populated(tmp_path)
    before = store.journal.read(50, all_worktrees=True).to_dict()
    shell = apsw.Connection(str(context_of(store).db.path))
    shell.execute(TAMPERS[name])
    shell.close()
    found = store.doctor()
    assert not found.ok
    assert KIND.get(name, name) in {f.kind for f in found.findings}
    fixed = store.doctor(repair=True)
    assert fixed.ok, fixed.to_dict()
    assert fixed.repaired
    assert store.journal.read(50, all_worktrees=True).to_dict() == before
    store.close()


def test_vector_tampers_are_found_and_repaired(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    store = _populated(tmp_path)
    rows = context_of(store).db.query(
        "SELECT lower(hex(id)) FROM journal_entries ORDER BY seq LIMIT 3"
    )
    from recall_sqlite.vectors import Owner

    store.vectors.put_many(
        [Owner.entry(r[0]) for r in rows], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], model="m"
    )
    shell = apsw.Connection(str(context_of(store).db.path))
    shell.execute("UPDATE vector_generations SET vectors = 7")
    shell.execute("PRAGMA foreign_keys=OFF")
    shell.execute("DROP TRIGGER vectors_follow_entry_delete")  # an old or foreign writer
    shell.execute(
        "DELETE FROM journal_entries WHERE seq = (SELECT entry_seq FROM vectors"
        " ORDER BY id LIMIT 1)"
    )
    shell.close()
    kinds = {f.kind for f in store.doctor().findings}
    assert {"vector_counts", "orphan_vectors"} <= kinds
    fixed = store.doctor(repair=True)
    assert not {"vector_counts", "orphan_vectors"} & {f.kind for f in fixed.findings}
    store.close()


def test_the_definition_equals_what_the_triggers_maintain_on_mixed_rows(tmp_path: Path) -> None:
    store = _populated(tmp_path)
    batch = [
        _entry(100 + i, SESSIONS[i % 4], i % 4, i % 5 == 0, i % 4, ["main", "x"][i % 2])
        for i in range(300)
    ]
    store.journal.append_many(batch)
    assert _check(store) == []
    # and the rebuild of only a batch's sessions is a no-op on a right store
    with context_of(store).db.write() as conn:
        r = derived.rebuild(conn, context_of(store).workspace_pk, sessions=["a", "b"], since_seq=0)
    assert not r.changed
    store.close()


def test_a_shell_delete_keeps_reads_honest(tmp_path: Path) -> None:
    store = _populated(tmp_path)
    total = store.journal.read(50).total
    shell = apsw.Connection(str(context_of(store).db.path))
    shell.execute("DELETE FROM journal_entries WHERE session_id = ''")
    shell.close()
    r = store.journal.read(50)
    assert r.total == len(r.entries) < total
    store.close()


def test_removing_a_head_promotes_the_next_version_in_both_scopes(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    (root / "desk" / ".git").mkdir(parents=True)
    open_store(root / "desk").close()
    with open_store(root) as store:
        ids = [
            store.journal.append(
                _entry(i, "s", i, False, 3, "main"), worktree=(".", "desk")[i % 2]
            ).id
            for i in range(4)
        ]
        for eid in reversed(ids[1:]):  # newest first: each removal takes away a head
            store.journal.forget(eid)
            assert _check(store) == []
            r = store.journal.read(5, all_worktrees=True)
            assert r.total == 1 and r.entries[0].id != eid
        shell = apsw.Connection(str(context_of(store).db.path))
        store.journal.append(_entry(9, "s", 9, False, 3, "main"))
        shell.execute(
            "DELETE FROM journal_entries WHERE seq = (SELECT max(seq) FROM journal_entries)"
        )
        shell.close()
        assert _check(store) == []
        assert store.journal.read(5, all_worktrees=True).entries[0].id == ids[0]


def test_doctor_finds_and_repairs_a_tampered_search_index(tmp_path: Path) -> None:

    root = tmp_path / "ws"
    (root / ".grip").mkdir(parents=True)
    with open_store(root) as store:
        store.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "gateway plan"})
        with context_of(store).db.write() as conn:  # as a person at the prompt could
            conn.execute("INSERT INTO journal_fts (journal_fts) VALUES ('delete-all')")
        assert store.journal.search("gateway").total == 0
        assert "search_index" in {f.kind for f in store.doctor().findings}
        fixed = store.doctor(repair=True)
        assert any("full-text index" in r for r in fixed.repaired) and fixed.ok
        assert store.journal.search("gateway").total == 1


def test_doctor_names_synapt_stores_not_yet_imported(tmp_path: Path) -> None:
    from recall_sqlite.demo import synapt_line

    root = tmp_path / "ws"
    (root / ".grip").mkdir(parents=True)
    bucket = root / "sub" / ".synapt" / "recall" / "worktrees" / "ws" / "journal.jsonl"
    bucket.parent.mkdir(parents=True)
    bucket.write_text(synapt_line(timestamp="2026-01-01T00:00:00+00:00", focus="nested") + "\n")
    with open_store(root) as store:
        found = [f for f in store.doctor().findings if f.kind == "legacy"]
        assert found and "sub/.synapt/recall/worktrees/ws/journal.jsonl" in found[0].message
        store.legacy.import_paths()
        assert not [f for f in store.doctor().findings if f.kind == "legacy"]


def test_doctor_finds_and_empties_a_left_rehome_guard(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as store:
        with context_of(store).db.write() as conn:  # what a person at the prompt could commit
            conn.execute(
                "INSERT INTO journal_rehome (workspace_id) VALUES (?)",
                (context_of(store).workspace_pk,),
            )
        assert "rehome_guard" in {f.kind for f in store.doctor().findings}
        fixed = store.doctor(repair=True)
        assert fixed.ok and any("journal_rehome" in r for r in fixed.repaired)


def test_survey_takes_one_string_as_one_path(tmp_path: Path) -> None:
    from recall_sqlite import InvalidInputError
    from recall_sqlite.legacy import survey

    root = make_workspace(tmp_path)
    assert survey(str(root), root=root).lines_total == 0  # not its characters
    with pytest.raises(InvalidInputError):
        survey(True, root=root)  # type: ignore[arg-type]


def test_the_tie_order_is_content_a_shell_cannot_change(tmp_path: Path) -> None:
    """sid_order is written with the row from its content (journal/order.py): like every
    content column it is immutable, so there is no derived tie order to go wrong."""
    store = _populated(tmp_path)
    try:
        shell = apsw.Connection(str(context_of(store).db.path))
        with pytest.raises(apsw.ConstraintError, match="immutable"):
            shell.execute("UPDATE journal_entries SET sid_order = 999 WHERE seq = 3")
        shell.close()
    finally:
        store.close()
