"""The bulk insert path (journal_bulk.py) leaves exactly the state the row-by-row trigger
path leaves: every column of every entry, the per-scope counts, the vector generations
and change log, and the AUTOINCREMENT sequence."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import Store
from recall_sqlite.journal.bulk import Batch, bulk_insert
from recall_sqlite.journal.codec import INSERT_SQL, tie_key
from recall_sqlite.migrations import schema_sql
from recall_sqlite.store import context_of
from tests.conftest import entry

# (workspace, worktree) pairs: two workspaces, two worktrees in the first.
DESKS = ((1, 1), (1, 2), (2, 3))
SESSIONS = ("", "s1", "s2", "s3")
BRANCHES = ("", "main", "dev")
TIMES = (1_000, 2_000, 3_000)  # few instants: many equal timestamps


def _db() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute(schema_sql())
    for ws in (1, 2):
        conn.execute(
            "INSERT INTO workspaces (id, uuid, first_seen, last_seen) VALUES (?, ?, 't', 't')",
            (ws, f"uuid-{ws}"),
        )
    for ws, wt in DESKS:
        conn.execute(
            "INSERT INTO worktrees (id, workspace_id, key, name, first_seen, last_seen)"
            " VALUES (?, ?, ?, ?, 't', 't')",
            (wt, ws, f"wt{wt}", f"wt{wt}"),
        )
    for ws in (1, 2):
        conn.execute("INSERT INTO vector_models VALUES (?, 'm', 1)", (ws,))
    return conn


def _row(
    desk: int, sid: int, branch: int, ts: int, auto: bool, rich: int, mean: bool, salt: int
) -> tuple[Any, ...]:
    """A journal row in codec.ROW_COLUMNS order; equal arguments give an equal id (a
    duplicate)."""
    ws, wt = DESKS[desk]
    fields = (ws, wt, SESSIONS[sid], BRANCHES[branch], TIMES[ts], auto, rich, mean, salt)
    rid = hashlib.sha256(repr(fields).encode()).digest()[:16]
    return (
        rid,
        ws,
        wt,
        7,
        SESSIONS[sid],
        BRANCHES[branch],
        f"t{TIMES[ts]}",
        TIMES[ts],
        f"focus {salt}",
        "[]",
        "[]",
        "[]",
        "[]",
        "[]",
        int(auto),
        0,
        0,
        "",
        "",
        None,
        rich,
        int(mean),
        tie_key(SESSIONS[sid], rid),
    )


def _rows_st(desks: int, max_size: int) -> st.SearchStrategy[list[tuple[Any, ...]]]:
    """Lists of rows of the first `desks` (workspace, worktree) pairs of DESKS."""
    return st.lists(
        st.builds(
            _row,
            st.integers(0, desks - 1),
            st.integers(0, 3),
            st.integers(0, 2),
            st.integers(0, 2),
            st.booleans(),
            st.integers(0, 4),
            st.booleans(),
            st.integers(0, 3),
        ),
        max_size=max_size,
    )


rows_st = _rows_st(len(DESKS), 40)


def _one_by_one(conn: apsw.Connection, rows: Sequence[tuple[Any, ...]], burn: bool) -> None:
    """The reference: each row through the trigger path; `burn=False` looks the id up
    first (the importer), `burn=True` lets the conflicting INSERT burn its seq."""
    conn.execute("BEGIN IMMEDIATE")
    for r in rows:
        if (
            not burn
            and conn.execute(
                "SELECT 1 FROM journal_entries WHERE workspace_id = ? AND id = ?", (r[1], r[0])
            ).fetchall()
        ):
            continue
        conn.execute(INSERT_SQL, r).fetchall()
    conn.execute("COMMIT")


def _bulk(conn: apsw.Connection, rows: Sequence[tuple[Any, ...]], burn: bool) -> None:
    """bulk_insert takes one workspace's rows per call: each run of one workspace's rows,
    in order (which gives the seqs the one-by-one path gives)."""
    conn.execute("BEGIN IMMEDIATE")
    for _, run in itertools.groupby(rows, key=lambda r: r[1]):
        bulk_insert(conn, list(run), burn_duplicates=burn)
    conn.execute("COMMIT")


def _add_vectors(conn: apsw.Connection, every: int) -> None:
    """Vectors on every `every`-th stored entry, so head changes bump generations."""
    conn.execute(
        "INSERT INTO vectors (workspace_id, model, dim, entry_seq, owner_kind, branch,"
        " worktree_id, embedding, created_at)"
        " SELECT workspace_id, 'm', 1, seq, 'entry', branch, worktree_id, x'0000803f', 't'"
        " FROM journal_entries WHERE seq % ? = 0"
        " AND seq NOT IN (SELECT entry_seq FROM vectors WHERE entry_seq IS NOT NULL)",
        (every,),
    )


def _state(conn: apsw.Connection) -> dict[str, list[tuple[Any, ...]]]:
    tables = {
        "journal_entries": "seq",
        "journal_counts_ws": "workspace_id, branch",
        "journal_counts_wt": "workspace_id, worktree_id, branch",
        "vector_generations": "workspace_id, model",
        "vector_changes": "1, 2, 3, 4",
        "vectors": "id",
        "journal_bulk": "1",
    }
    state = {
        t: conn.execute(f"SELECT * FROM {t} ORDER BY {o}").fetchall() for t, o in tables.items()
    }
    state["sqlite_sequence"] = conn.execute(
        "SELECT * FROM sqlite_sequence ORDER BY name"
    ).fetchall()
    return state


def _check_invariants(conn: apsw.Connection) -> None:
    """Independent of the trigger: one head per session scope, and it is the best version
    by (auto ASC, ts_us DESC, rich DESC, id ASC); counts equal the heads; the tie order is
    the content's."""
    rows = conn.execute(
        "SELECT id, workspace_id, worktree_id, session_id, auto, ts_us, rich, head_ws,"
        " head_wt, sid_order FROM journal_entries"
    ).fetchall()
    best: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for rid, ws, wt, sid, auto, ts, rich, _, _, sid_order in rows:
        assert sid_order == tie_key(sid, rid)
        if sid == "":
            continue
        for scope in ((ws, sid), (ws, wt, sid)):
            rank = (auto, -ts, -rich, rid)
            if scope not in best or rank < best[scope]:
                best[scope] = rank
    for rid, ws, wt, sid, auto, ts, rich, hws, hwt, _ in rows:
        rank = (auto, -ts, -rich, rid)
        assert hws == (1 if sid == "" else int(best[(ws, sid)] == rank))
        assert hwt == (1 if sid == "" else int(best[(ws, wt, sid)] == rank))
    counted = conn.execute(
        "SELECT c.heads, (SELECT count(*) FROM journal_entries e WHERE e.workspace_id ="
        " c.workspace_id AND e.branch = c.branch AND e.head_ws = 1) FROM journal_counts_ws c"
    ).fetchall()
    assert all(a == b for a, b in counted)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=rows_st, batch=rows_st, after=rows_st, burn=st.booleans(), vectors=st.integers(1, 3))
def test_bulk_equals_one_by_one(
    before: list[tuple[Any, ...]],
    batch: list[tuple[Any, ...]],
    after: list[tuple[Any, ...]],
    burn: bool,
    vectors: int,
) -> None:
    ref, bulk = _db(), _db()
    for conn in (ref, bulk):
        _one_by_one(conn, before, burn)
        _add_vectors(conn, vectors)
    _one_by_one(ref, batch, burn)
    _bulk(bulk, batch, burn)
    assert _state(bulk) == _state(ref)
    _check_invariants(bulk)
    # A second bulk batch, and single appends after it, still agree.
    _one_by_one(ref, before[::-1] + after, burn)
    _bulk(bulk, before[::-1] + after, burn)
    for conn in (ref, bulk):
        _add_vectors(conn, 2)
        _one_by_one(conn, after[::-1] + batch[:3], burn)
    assert _state(bulk) == _state(ref)
    _check_invariants(bulk)


# A batch's parts: rows of the first workspace, each part kept or not (its caller's
# savepoint failed after it was added).
parts_st = st.lists(st.tuples(_rows_st(2, 15), st.booleans()), max_size=5)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=rows_st, parts=parts_st, burn=st.booleans(), vectors=st.integers(1, 3))
def test_a_batch_of_parts_equals_one_by_one_of_the_parts_kept(
    before: list[tuple[Any, ...]],
    parts: list[tuple[list[tuple[Any, ...]], bool]],
    burn: bool,
    vectors: int,
) -> None:
    """Parts added to one Batch and written together leave the state the rows of the parts
    kept leave one by one; each part's answer gives every id its seq, created only where
    neither the store nor an earlier kept part had it."""
    ref, bulk = _db(), _db()
    for conn in (ref, bulk):
        _one_by_one(conn, before, burn)
        _add_vectors(conn, vectors)
    _one_by_one(ref, [r for rows, keep in parts if keep for r in rows], burn)
    bulk.execute("BEGIN IMMEDIATE")
    batch = Batch(burn_duplicates=burn)
    answers = []
    for rows, keep in parts:
        got = batch.add(bulk, rows)
        if keep:
            batch.keep()
            answers.append((rows, got))
    batch.finish(bulk)
    bulk.execute("COMMIT")
    assert _state(bulk) == _state(ref)
    _check_invariants(bulk)
    seqs = dict(ref.execute("SELECT id, seq FROM journal_entries WHERE workspace_id = 1"))
    known = {r[0] for r in before if r[1] == 1}
    for rows, got in answers:
        assert {rid: (s.seq, s.created) for rid, s in got.items()} == {
            r[0]: (seqs[r[0]], r[0] not in known) for r in rows
        }
        known |= {r[0] for r in rows}


def _rows(*specs: tuple[int, ...]) -> list[tuple[Any, ...]]:
    return [_row(*s) for s in specs]  # type: ignore[arg-type]


def test_a_full_tie_goes_to_the_smaller_id_in_either_order() -> None:
    # same session, same class, same instant, same richness: the smaller id is the head,
    # whichever came first (so every store holding both agrees)
    rows = _rows((0, 1, 1, 0, False, 2, True, 1), (0, 1, 1, 0, False, 2, True, 2))
    smaller = min(r[0] for r in rows)
    for order in (rows, rows[::-1]):
        for write in (_bulk, _one_by_one):
            conn = _db()
            write(conn, order, False)
            heads = conn.execute("SELECT id FROM journal_entries WHERE head_ws = 1").fetchall()
            assert heads == [(smaller,)], write


def test_dedup_rule_order_in_bulk() -> None:
    # non-auto beats a newer auto; among non-auto newer beats richer; then richer wins
    rows = _rows(
        (0, 1, 1, 2, True, 4, True, 1),  # seq 1: auto, newest, richest
        (0, 1, 1, 0, False, 0, False, 2),  # seq 2: non-auto, oldest: beats 1
        (0, 1, 1, 1, False, 0, False, 3),  # seq 3: non-auto, newer: beats 2
        (0, 1, 1, 1, False, 3, True, 4),  # seq 4: same instant, richer: beats 3
        (0, 1, 1, 1, False, 3, True, 5),
    )  # seq 5: a full tie with 4: the smaller id (4's, here) stays
    conn = _db()
    _bulk(conn, rows, False)
    assert conn.execute("SELECT seq FROM journal_entries WHERE head_ws = 1").fetchall() == [(4,)]
    # every version was a head once on the trigger path, so its branch has a count row
    assert conn.execute("SELECT * FROM journal_counts_ws").fetchall() == [(1, "main", 1, 1)]


def test_count_rows_of_branches_that_lost_their_head_are_kept() -> None:
    rows = _rows(
        (0, 1, 1, 0, True, 0, False, 1),  # branch main, auto: a head at first
        (0, 1, 2, 0, False, 0, True, 2),
    )  # branch dev, non-auto: takes over
    ref, conn = _db(), _db()
    _one_by_one(ref, rows, False)
    _bulk(conn, rows, False)
    want = [(1, "dev", 1, 1), (1, "main", 0, 0)]
    assert conn.execute("SELECT * FROM journal_counts_ws ORDER BY branch").fetchall() == want
    assert _state(conn) == _state(ref)


def test_demoting_a_stored_head_bumps_its_vectors_generation() -> None:
    conn = _db()
    _one_by_one(conn, _rows((0, 1, 1, 0, True, 0, False, 1)), False)
    _add_vectors(conn, 1)
    _bulk(conn, _rows((0, 1, 1, 0, False, 0, False, 2)), False)
    # head_ws and head_wt are demoted by two statements, as by the trigger: two bumps
    assert conn.execute("SELECT generation FROM vector_generations").fetchall() == [(3,)]
    assert conn.execute("SELECT generation FROM vector_changes").fetchall() == [(2,), (3,)]


def test_burnt_seqs_match_conflicting_inserts() -> None:
    a, b = _rows((0, 1, 1, 0, False, 0, False, 1), (0, 2, 1, 0, False, 0, False, 2))
    ref, conn = _db(), _db()
    _one_by_one(ref, [a, a, b, a], True)
    _bulk(conn, [a, a, b, a], True)
    assert conn.execute("SELECT seq FROM journal_entries").fetchall() == [(1,), (3,)]
    assert _state(conn) == _state(ref)
    _bulk(conn, [a], True)  # all duplicates: still burns, as the INSERT would
    assert conn.execute("SELECT seq FROM sqlite_sequence").fetchall() == [(5,)]


def test_importer_numbering_does_not_burn() -> None:
    a, b = _rows((0, 1, 1, 0, False, 0, False, 1), (0, 2, 1, 0, False, 0, False, 2))
    conn = _db()
    _bulk(conn, [a], False)
    got = []
    conn.execute("BEGIN IMMEDIATE")
    got.append(bulk_insert(conn, [a, b, b], burn_duplicates=False))
    conn.execute("COMMIT")
    assert conn.execute("SELECT seq FROM journal_entries").fetchall() == [(1,), (2,)]
    assert got[0][a[0]] == (1, False) and got[0][b[0]] == (2, True)


def test_single_append_after_bulk_still_dedups() -> None:
    conn = _db()
    _bulk(conn, _rows((0, 1, 1, 0, True, 1, False, 1), (0, 1, 1, 0, True, 2, False, 2)), False)
    assert conn.execute("SELECT count(*) FROM journal_bulk").fetchall() == [(0,)]
    _one_by_one(conn, _rows((0, 1, 1, 0, False, 0, False, 3)), False)  # the trigger runs
    assert conn.execute(
        "SELECT seq, head_ws, head_wt FROM journal_entries ORDER BY seq"
    ).fetchall() == [(1, 0, 0), (2, 0, 0), (3, 1, 1)]


def test_a_failure_leaves_no_guard_and_no_rows() -> None:
    conn = _db()
    good = _row(0, 1, 1, 0, False, 0, False, 1)
    other = _row(0, 2, 1, 0, False, 0, False, 2)
    bad = (*other[:14], 5, *other[15:])  # auto = 5 breaks its CHECK
    conn.execute("BEGIN IMMEDIATE")
    with pytest.raises(apsw.ConstraintError):
        bulk_insert(conn, [good, bad])  # auto = 5 breaks a CHECK mid-way
    # the caller's transaction is still open and clean: commit it
    assert conn.execute("SELECT count(*) FROM journal_bulk").fetchall() == [(0,)]
    conn.execute("COMMIT")
    assert conn.execute("SELECT count(*) FROM journal_entries").fetchall() == [(0,)]
    assert conn.execute("SELECT count(*) FROM journal_counts_ws").fetchall() == [(0,)]


def test_outside_a_transaction_is_refused() -> None:
    from recall_sqlite.errors import StoreError

    with pytest.raises(StoreError):
        bulk_insert(_db(), _rows((0, 1, 1, 0, False, 0, False, 1)))


# -- through the store ----------------------------------------------------------------------


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    from recall_sqlite import open_store
    from tests.conftest import make_workspace

    a = open_store(make_workspace(tmp_path, "a"), db_path=tmp_path / "a.db")
    b = open_store(make_workspace(tmp_path, "b"), db_path=tmp_path / "b.db")
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def test_append_many_large_batch_equals_single_appends(two: tuple[Store, Store]) -> None:
    a, b = two
    entries = [
        entry(
            f"2026-01-01T00:00:{i % 7:02d}Z",
            session_id=f"s{i % 5}" if i % 4 else "",
            focus=f"f{i % 11}",
            auto=bool(i % 3),
            done=["d"] * (i % 2),
        )
        for i in range(200)
    ]
    got = a.journal.append_many(entries + entries[:10])
    want = [b.journal.append(e) for e in entries + entries[:10]]
    assert [(g.created, g.seq) for g in got] == [(w.created, w.seq) for w in want]
    cols = "seq, session_id, ts_us, auto, rich, sid_order, head_wt, head_ws, meaningful"
    sql = f"SELECT {cols} FROM journal_entries ORDER BY seq"
    assert context_of(a).db.query(sql) == context_of(b).db.query(sql)
    for t in ("journal_counts_ws", "journal_counts_wt", "sqlite_sequence"):
        q = f"SELECT * FROM {t} ORDER BY 1, 2"
        assert context_of(a).db.query(q) == context_of(b).db.query(q)
    assert a.journal.read(n=50).total == b.journal.read(n=50).total


def test_bulk_runs_no_per_row_trigger() -> None:
    """The guard switches the insert trigger off for the batch: no UPDATE of an entry runs
    but the demotions of heads stored before it (the point of the bulk path)."""
    conn = _db()
    _one_by_one(conn, _rows((0, 1, 1, 0, True, 0, False, 1)), False)
    conn.execute("CREATE TEMP TABLE updates (seq INTEGER)")
    conn.execute(
        "CREATE TEMP TRIGGER count_updates AFTER UPDATE ON main.journal_entries"
        " BEGIN INSERT INTO updates VALUES (NEW.seq); END"
    )
    batch = [
        _row(d, s, b, t, a, 1, True, 9)
        for d in range(3)
        for s in range(4)
        for b in range(3)
        for t in range(3)
        for a in (False, True)
    ]
    _bulk(conn, batch, False)
    assert conn.execute("SELECT seq FROM updates").fetchall() == [(1,), (1,)]
    _one_by_one(conn, _rows((0, 2, 1, 0, True, 0, False, 1)), False)
    assert conn.execute("SELECT count(*) FROM updates").fetchall()[0][0] > 2
    _check_invariants(conn)
