"""Peers that cannot lie (issue 32, items 3 and 4): a pull checks every row of a peer's file
against what its id proves (recall_sqlite/sync/peer_rows.py) and refuses, counts and names
per kind what it cannot prove, never failing the whole pull for one row; and every
removal it applies names the machine that asked for it, kept as it travels on.

The peer files are tampered with as someone who can write a replica location would:
through SQLite, with the schema's triggers and CHECKs out of the way where they stand."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import open_store
from recall_sqlite.store import context_of
from recall_sqlite.summaries import summary_uid
from recall_sqlite.sync.pull import merge_file
from tests.unit.sync.test_sync_merge import Machine, entry


@pytest.fixture
def pair(tmp_path: Path) -> Any:
    machines = [Machine(tmp_path, f"p{i}") for i in range(3)]
    yield machines
    for m in machines:
        m.store.close()


def tampered(machine: Machine, tmp: Path, *sql: tuple[str, tuple[Any, ...]]) -> Path:
    """A copy of `machine`'s file with `sql` run on it, its guards lifted."""
    copy = machine.snapshot(tmp)
    conn = apsw.Connection(str(copy))
    conn.execute("PRAGMA ignore_check_constraints = ON")
    for stmt, params in sql:
        conn.execute(stmt, params)
    conn.close()
    return copy


def pull_file(into: Machine, source: Machine, path: Path) -> Any:
    return merge_file(context_of(into.store), path, into.book, machine=source.id, me=into.id)


def summary_row(machine: Machine) -> dict[str, Any]:
    (row,) = context_of(machine.store).db.query(
        "SELECT id, branch, kind, text, created_at, author, covers_from, covers_to FROM summaries"
    )
    keys = ("id", "branch", "kind", "text", "created_at", "author", "from", "to")
    return dict(zip(keys, row, strict=True))


def reuid(fields: dict[str, Any]) -> bytes:
    """The uid a forger would compute for fields of their choosing (summary_uid itself)."""
    return summary_uid(
        fields["branch"],
        fields["kind"],
        fields["text"],
        fields["created_at"],
        fields["author"],
        fields["from"],
        fields["to"],
        [],
    )


def test_a_tampered_summary_is_refused_counted_and_doctor_finds_it(
    pair: list[Machine], tmp_path: Path
) -> None:
    a, b, _ = pair
    a.journals["."].append(entry(1))
    a.store.summaries.add("the real summary", branch="main")
    copy = tampered(a, tmp_path, ("UPDATE summaries SET text = 'a lie'", ()))
    report = pull_file(b, a, copy)
    assert report.rejected_summaries == 1 and report.summaries == 0
    assert report.entries == 1  # the rest of the peer's rows still arrive
    assert b.store.summaries.latest("main") is None
    # The quick doctor (not only --deep) sees the changed text in the tampered file.
    with open_store(root=a.root, db_path=copy) as s:
        kinds = {f.kind for f in s.doctor().findings}
    assert "summary_content" in kinds


BAD_TEXTS = {
    "NUL": "hello\x00world",
    "5 MiB": "x" * (5 << 20),
}


@pytest.mark.parametrize("what", sorted(BAD_TEXTS))
def test_a_summary_a_local_write_would_refuse_is_refused_even_with_its_uid_forged(
    pair: list[Machine], tmp_path: Path, what: str
) -> None:
    a, b, _ = pair
    a.store.summaries.add("fine", branch="main")
    fields = {**summary_row(a), "text": BAD_TEXTS[what]}
    copy = tampered(
        a, tmp_path, ("UPDATE summaries SET text = ?, uid = ?", (fields["text"], reuid(fields)))
    )
    report = pull_file(b, a, copy)
    assert (report.rejected_summaries, report.summaries) == (1, 0)
    assert b.store.summaries.latest("main") is None


def test_a_summary_with_a_random_uid_is_refused(pair: list[Machine], tmp_path: Path) -> None:
    a, b, _ = pair
    a.store.summaries.add("fine", branch="main")
    copy = tampered(a, tmp_path, ("UPDATE summaries SET uid = ?", (secrets.token_bytes(16),)))
    assert pull_file(b, a, copy).rejected_summaries == 1
    assert b.store.summaries.latest("main") is None


def test_one_summary_not_utf8_is_refused_and_the_pull_goes_on(
    pair: list[Machine], tmp_path: Path
) -> None:
    a, b, _ = pair
    kept = a.journals["."].append(entry(2))
    a.store.summaries.add("bad one", branch="main")
    a.store.summaries.add("good one", branch="feat")
    copy = tampered(
        a,
        tmp_path,
        ("UPDATE summaries SET text = CAST(x'fffe41' AS TEXT) WHERE branch = 'main'", ()),
    )
    report = pull_file(b, a, copy)
    assert (report.rejected_summaries, report.summaries, report.entries) == (1, 1, 1)
    assert b.store.summaries.latest("feat").text == "good one"  # type: ignore[union-attr]
    assert b.store.journal.get(kept.id) is not None


def test_a_pulled_range_summary_stays_provable_on_the_third_machine(
    pair: list[Machine], tmp_path: Path
) -> None:
    from recall_sqlite.summaries import CoverRange

    a, b, c = pair
    b.journals["."].append(entry(7))  # b's positions differ from a's
    for i in range(3):
        a.journals["."].append(entry(10 + i))
    a.store.summaries.add("a range", branch="main", covers=CoverRange(2, 3))
    b.pull(a, tmp_path)
    report = c.pull(b, tmp_path)
    assert (report.summaries, report.rejected_summaries) == (1, 0)
    for m in (b, c):
        assert not [f for f in m.store.doctor(deep=True).findings if f.kind == "summary_content"]


def vector_rows(machine: Machine) -> str:
    eid = machine.journals["."].append(entry(3)).id
    machine.store.vectors.put(("entry", eid), np.array([1, 2, 3, 4], np.float32), model="m4")
    return eid


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE vectors SET embedding = x'00000000'",  # shorter than its dimension
        "UPDATE vectors SET embedding = zeroblob(16)",  # a zero vector: no cosine
        "UPDATE vectors SET embedding = x'0000c07f0000803f0000803f0000803f'",  # NaN
        "UPDATE vectors SET dim = 100000, embedding = zeroblob(400000)",  # beyond any model
        "UPDATE vectors SET created_at = 'yesterday'",
        "UPDATE vectors SET model = CAST(x'ff' AS TEXT)",
    ],
)
def test_a_vector_a_local_put_would_refuse_is_refused(
    pair: list[Machine], tmp_path: Path, sql: str
) -> None:
    a, b, _ = pair
    vector_rows(a)
    copy = tampered(
        a,
        tmp_path,
        ("DROP TRIGGER vectors_check_update", ()),
        (sql, ()),
    )
    report = pull_file(b, a, copy)
    assert (report.rejected_vectors, report.vectors, report.entries) == (1, 0, 1)
    assert b.store.vectors.stats().to_dict()["models"] == []


# -- who asked ------------------------------------------------------------------------------


def asked(machine: Machine) -> list[tuple[str, str | None]]:
    return sorted(
        (bytes(i).hex(), by)
        for i, by in context_of(machine.store).db.query(
            "SELECT id, asked_by FROM journal_tombstones WHERE formula = 2"
        )
    )


def test_a_forget_names_the_machine_that_asked_on_every_machine(
    pair: list[Machine], tmp_path: Path
) -> None:
    a, b, c = pair
    got = a.journals["."].append(entry(5))
    b.pull(a, tmp_path)
    c.pull(a, tmp_path)
    a.store.journal.forget([got.id])
    assert asked(a) == [(got.id, None)]  # this machine's own
    report = b.pull(a, tmp_path)
    assert report.forgotten == 1
    assert [(m, e) for m, e, _, _ in report.forgotten_by] == [(a.id, 1)]
    assert asked(b) == [(got.id, a.id)]
    # c pulls it from b, which got it from a: it still names a, never b.
    report = c.pull(b, tmp_path)
    assert [(m, e) for m, e, _, _ in report.forgotten_by] == [(a.id, 1)]
    assert asked(c) == [(got.id, a.id)]
    assert c.store.journal.get(got.id) is None
    # The view at the sqlite3 prompt says so too, and holds no byte of the text.
    rows = context_of(c.store).db.query("SELECT kind, id, asked_by FROM forgotten")
    assert rows == [("entry", got.id, a.id)]


def test_summary_and_vector_removals_name_who_asked(pair: list[Machine], tmp_path: Path) -> None:
    a, b, _ = pair
    eid = vector_rows(a)
    s = a.store.summaries.add("to remove", branch="main")
    b.pull(a, tmp_path)
    a.store.summaries.remove(s.id)
    a.store.vectors.delete(("entry", eid), model="m4")
    report = b.pull(a, tmp_path)
    assert report.forgotten_by == ((a.id, 0, 1, 1),)
    rows = context_of(b.store).db.query("SELECT kind, asked_by FROM forgotten ORDER BY kind")
    assert rows == [("entry vector", a.id), ("summary", a.id)]


@pytest.mark.parametrize(
    "asker",
    ["../../escaped", "ABCDEF0123456789", "short", "this machine's own"],
)
def test_a_tombstone_naming_no_machine_or_this_one_is_refused(
    pair: list[Machine], tmp_path: Path, asker: str
) -> None:
    a, b, _ = pair
    got = b.journals["."].append(entry(8))
    asker = b.id if asker == "this machine's own" else asker
    copy = tampered(
        a,
        tmp_path,
        (
            "INSERT INTO journal_tombstones (workspace_id, id, formula, forgotten_at, asked_by)"
            " VALUES (1, ?, 2, '2026-01-01T00:00:00Z', ?)",
            (bytes.fromhex(got.id), asker),
        ),
    )
    report = pull_file(b, a, copy)
    assert (report.rejected_tombstones, report.forgotten) == (1, 0)
    assert b.store.journal.get(got.id) is not None


# -- any tampering ------------------------------------------------------------------------

# (column, a value of the forger's choosing): each changes what the uid was made of.
TAMPERS = st.one_of(
    st.tuples(st.just("text"), st.text(min_size=1, max_size=40)),
    st.tuples(st.just("kind"), st.text(min_size=1, max_size=10)),
    st.tuples(st.just("author"), st.one_of(st.none(), st.text(min_size=1, max_size=10))),
    st.tuples(st.just("branch"), st.one_of(st.none(), st.text(max_size=10))),
    st.tuples(
        st.just("created_at"),
        st.sampled_from(["2026-01-01T00:00:00.000001+00:00", "not a time", ""]),
    ),
    st.tuples(st.just("uid"), st.binary(min_size=16, max_size=16)),
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(tamper=TAMPERS)
def test_any_tampered_summary_is_refused_and_counted(
    tmp_path_factory: pytest.TempPathFactory, tamper: tuple[str, Any]
) -> None:
    tmp = tmp_path_factory.mktemp("tamper")
    a, b = Machine(tmp, "t0"), Machine(tmp, "t1")
    try:
        a.store.summaries.add("honest", branch="main", author="me")
        a.store.summaries.add("tampered", branch="feat", author="me")
        column, value = tamper
        (before,) = context_of(a.store).db.query(
            f"SELECT {column} FROM summaries WHERE text = 'tampered'"
        )[0]
        copy = tampered(
            a,
            tmp,
            (
                f"UPDATE summaries SET {column} = ? WHERE text = 'tampered'",
                (value,),
            ),
        )
        report = pull_file(b, a, copy)
        unchanged = value == before
        assert report.rejected_summaries == (0 if unchanged else 1)
        assert report.summaries == (2 if unchanged else 1)
        texts = {s.text for s in b.store.summaries.list(None, limit=None)} | {
            s.text for s in b.store.summaries.list("main", limit=None)
        }
        assert "honest" in texts
        # Idempotent: a second pull refuses it again and writes nothing.
        before_changes = context_of(b.store).db.conn.total_changes()
        again = pull_file(b, a, copy)
        assert not again.changed
        assert context_of(b.store).db.conn.total_changes() == before_changes
    finally:
        a.store.close()
        b.store.close()


def test_forgotten_by_travels_in_json(pair: list[Machine], tmp_path: Path) -> None:
    a, b, _ = pair
    got = a.journals["."].append(entry(9))
    b.pull(a, tmp_path)
    a.store.journal.forget([got.id])
    data = json.loads(json.dumps(b.pull(a, tmp_path).to_dict()))
    assert data["forgotten_by"] == [{"machine": a.id, "entries": 1, "summaries": 0, "vectors": 0}]


def test_one_entry_version_not_utf8_is_refused_and_the_pull_goes_on(
    pair: list[Machine], tmp_path: Path
) -> None:
    a, b, _ = pair
    bad = a.journals["."].append(entry(1))
    good = [a.journals["."].append(entry(i)) for i in (2, 3)]
    copy = tampered(
        a,
        tmp_path,
        ("DROP TRIGGER journal_entries_immutable", ()),
        (
            "UPDATE journal_entries SET focus = CAST(x'fffe41' AS TEXT) WHERE id = ?",
            (bytes.fromhex(bad.id),),
        ),
    )
    report = pull_file(b, a, copy)
    assert (report.rejected, report.entries) == (1, 2)
    assert b.store.journal.get(bad.id) is None
    assert all(b.store.journal.get(g.id) is not None for g in good)
    again = pull_file(b, a, copy)  # read past it: the next pull starts after
    assert (again.entries, again.changed) == (0, False)


def test_the_pull_line_names_refusals_per_kind_and_who_forgot(
    pair: list[Machine], tmp_path: Path
) -> None:
    from recall_sqlite.cli.sync import _arrived

    a, b, _ = pair
    got = a.journals["."].append(entry(4))
    a.store.summaries.add("fine", branch="main")
    b.pull(a, tmp_path)
    a.store.journal.forget([got.id])
    a.store.summaries.add("another", branch="feat")
    copy = tampered(a, tmp_path, ("UPDATE summaries SET text = 'a lie' WHERE branch = 'feat'", ()))
    line = _arrived(pull_file(b, a, copy).to_dict())
    assert "REFUSED 1 summary(ies)" in line
    assert f"machine {a.id} forgot 1 entries" in line


def test_a_summary_whose_source_was_forgotten_there_arrives_unproven(
    pair: list[Machine], tmp_path: Path
) -> None:
    """Its uid was made with an id the peer no longer names: it cannot be proven, so it is
    kept as it came, counted apart, and no doctor here calls it damaged (as none there)."""
    a, b, c = pair
    first, second = (a.journals["."].append(entry(i)) for i in (1, 2))
    a.store.summaries.add("names both", branch="main", covers=[first.id, second.id])
    a.store.journal.forget([first.id])
    report = b.pull(a, tmp_path)
    assert (report.summaries, report.summaries_unproven, report.rejected_summaries) == (1, 1, 0)
    assert c.pull(b, tmp_path).summaries_unproven == 1  # and so on, machine to machine
    for m in (a, b, c):
        assert not [f for f in m.store.doctor(deep=True).findings if f.kind == "summary_content"]
        (s,) = m.store.summaries.list("main", limit=None)
        assert s.entry_ids == (second.id,)
