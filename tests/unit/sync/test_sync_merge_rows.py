"""A pull's new entry versions go through the schema's per-row insert when few and through
journal/bulk.py when many (recall_sqlite/sync/merge_rows.py): random peer histories, their
sessions overlapping the ones stored here, merged both ways into copies of one store leave
identical tables, and derived.check finds nothing to say of either."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import derived, open_store
from recall_sqlite.store import context_of
from recall_sqlite.sync import merge, merge_rows
from recall_sqlite.sync.peers import PeerBook
from recall_sqlite.sync.pull import merge_file

from .test_sync_merge import Machine, run

# Every table a merge can change (journal_bulk and journal_rehome are empty outside a
# write); `stored_us` is the instant of the merge itself, the one column that may differ.
TABLES = (
    "worktrees",
    "journal_entries",
    "journal_counts_wt",
    "journal_counts_ws",
    "journal_tombstones",
    "journal_bulk",
    "journal_rehome",
    "summaries",
    "summary_sources",
    "summary_tombstones",
    "vectors",
    "vector_generations",
    "vector_changes",
    "vector_tombstones",
    "sqlite_sequence",
)


def _appends(machine: int) -> st.SearchStrategy[tuple[str, int, int, int]]:
    return st.tuples(st.just("append"), st.just(machine), st.integers(0, 60), st.integers(0, 2))


# Mostly appends on both machines (the peer's must outnumber what it shares with this
# one), now and then a forget, a pull, an embedding or a summary.
history = st.lists(
    st.one_of(
        _appends(0),
        _appends(1),
        _appends(1),
        _appends(1),
        st.tuples(st.just("forget"), st.integers(0, 1), st.integers(0, 60), st.just(0)),
        st.tuples(st.just("pull"), st.integers(0, 1), st.integers(0, 1), st.just(0)),
        st.tuples(st.just("vector"), st.integers(0, 1), st.integers(0, 60), st.integers(0, 3)),
        st.tuples(st.just("summary"), st.integers(0, 1), st.integers(0, 5), st.integers(0, 2)),
    ),
    min_size=10,
    max_size=80,
)


def tables(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    out: dict[str, list[tuple[Any, ...]]] = {}
    for name in TABLES:
        cols = [c for (_, c, *_) in conn.execute(f"PRAGMA table_info({name})")]
        shown = ["NULL" if c == "stored_us" else c for c in cols]
        out[name] = sorted(
            conn.execute(f"SELECT {', '.join(shown)} FROM {name}").fetchall(), key=repr
        )
    conn.close()
    return out


def merged(
    target: Machine, peer: Path, tmp: Path, name: str, bulk_min: int, monkeypatch: Any
) -> Path:
    """The target's file copied and the peer's merged into the copy, every new row written
    through the bulk path (bulk_min 0) or the row path (bulk_min past any batch)."""
    path = target.snapshot(tmp)
    path = path.rename(tmp / f"{name}.db")
    monkeypatch.setattr(merge_rows, "BULK_MIN_ROWS", bulk_min)
    with open_store(root=target.root, db_path=path) as s:
        merge_file(
            context_of(s), peer, PeerBook(tmp / f"{name}.json"), machine="f" * 16, me=target.id
        )
        with context_of(s).db.read() as conn:
            assert derived.check(conn, context_of(s).workspace_pk) == []
    return path


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=history, write_rows=st.sampled_from([3, 5_000]))
def test_the_row_path_and_the_bulk_path_leave_the_same_store(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    steps: Any,
    write_rows: int,
) -> None:
    tmp = tmp_path_factory.mktemp("paths")
    machines = [Machine(tmp, f"m{i}") for i in range(2)]
    try:
        run(machines, tmp, steps)
        target, peer = machines
        theirs = peer.snapshot(tmp)
        # A pull's rows split over several transactions, or all in one.
        monkeypatch.setattr(merge, "WRITE_ROWS", write_rows)
        by_bulk = merged(target, theirs, tmp, "bulk", 0, monkeypatch)
        by_row = merged(target, theirs, tmp, "row", 10**9, monkeypatch)
        assert tables(by_bulk) == tables(by_row)
    finally:
        for m in machines:
            m.store.close()


def test_the_path_follows_the_batch_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bulk.py takes a batch from BULK_MIN_ROWS rows, whether they start sessions or
    add versions to sessions stored here; the row path takes a smaller one."""
    calls: list[int] = []
    from recall_sqlite.journal.bulk import bulk_insert as real

    def counted(conn: Any, rows: Any, **kw: Any) -> Any:
        calls.append(len(rows))
        return real(conn, rows, **kw)

    monkeypatch.setattr(merge_rows, "bulk_insert", counted)
    n = merge_rows.BULK_MIN_ROWS

    def pull(name: str, sessions: list[str], stored: list[str]) -> list[int]:
        """Sessions `stored` held here, the peer holding later versions of `sessions`:
        the sizes of the batches bulk.py took in the pull."""
        root = tmp_path / name
        root.mkdir()
        peer, here = Machine(root, "peer"), Machine(root, "here")
        try:
            here.store.journal.append_many(
                [{"timestamp": "2026-05-01T10:00:00+00:00", "session_id": s} for s in stored]
            )
            peer.store.journal.append_many(
                [
                    {"timestamp": "2026-05-02T10:00:00+00:00", "session_id": s, "focus": f"{i}"}
                    for i, s in enumerate(sessions)
                ]
            )
            calls.clear()
            assert here.pull(peer, root).entries == len(sessions)
            with context_of(here.store).db.read() as conn:
                assert derived.check(conn, context_of(here.store).workspace_pk) == []
            return list(calls)
        finally:
            peer.store.close()
            here.store.close()

    new = [f"s{i}" for i in range(3 * n)]
    assert pull("below", new[: n - 1], []) == []
    assert pull("at", new[:n], []) == [n]
    assert pull("sessionless", [""] * n, []) == [n]
    assert pull("held", new[:n], new[:n]) == [n]
    assert pull("one held", new[: n - 1], new[: n - 1]) == []
    assert pull("many held", new[: 3 * n], new[: 3 * n]) == [3 * n]
