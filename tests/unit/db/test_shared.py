"""Database.shared(): one write transaction for a run of writes, each a savepoint in it;
what is settled is committed, a failed write undoes only itself, the writes that ended well
are kept when an exception ends the block, and other threads wait as for any write."""

from __future__ import annotations

import threading
from pathlib import Path

import apsw
import pytest

from recall_sqlite import open_store
from recall_sqlite.db import Database
from recall_sqlite.errors import StoreError
from recall_sqlite.store import context_of


@pytest.fixture
def db(tmp_path: Path) -> Database:
    (tmp_path / ".git").mkdir()
    open_store(tmp_path, root=tmp_path).close()
    store = open_store(tmp_path, root=tmp_path)
    database = context_of(store).db
    with database.write() as conn:
        conn.execute("CREATE TABLE t (v INTEGER)")
    return database


def _seen_elsewhere(db: Database) -> list[int]:
    other = apsw.Connection(db.file, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [int(v) for (v,) in other.execute("SELECT v FROM t ORDER BY v")]  # type: ignore[arg-type]
    finally:
        other.close()


def _put(db: Database, v: int) -> None:
    with db.write() as conn:
        conn.execute("INSERT INTO t VALUES (?)", (v,))


def test_writes_are_seen_inside_at_once_and_outside_once_settled(db: Database) -> None:
    with db.shared() as shared:
        _put(db, 1)
        _put(db, 2)
        with db.read() as conn:
            assert conn.execute("SELECT count(*) FROM t").fetchall() == [(2,)]
        assert db.query("SELECT count(*) FROM t") == [(2,)]
        assert _seen_elsewhere(db) == []
        shared.settle()
        assert _seen_elsewhere(db) == [1, 2]
        _put(db, 3)
        assert _seen_elsewhere(db) == [1, 2]
    assert _seen_elsewhere(db) == [1, 2, 3]


def test_a_failed_write_undoes_only_itself(db: Database) -> None:
    with db.shared():
        _put(db, 1)
        with pytest.raises(RuntimeError), db.write() as conn:
            conn.execute("INSERT INTO t VALUES (2)")
            raise RuntimeError("planted")
        _put(db, 3)
    assert _seen_elsewhere(db) == [1, 3]


def test_an_exception_out_of_the_block_keeps_the_writes_that_ended_well(db: Database) -> None:
    with pytest.raises(KeyboardInterrupt), db.shared():
        _put(db, 1)
        with db.write() as conn:
            conn.execute("INSERT INTO t VALUES (2)")
            raise KeyboardInterrupt
    assert _seen_elsewhere(db) == [1]
    _put(db, 4)  # the connection is out of the transaction and the lock is free
    assert _seen_elsewhere(db) == [1, 4]


def test_a_transaction_sqlite_rolled_back_is_an_error_not_a_silent_loss(db: Database) -> None:
    with pytest.raises(StoreError, match="rolled back"), db.shared():
        _put(db, 1)
        with db.write() as conn:
            conn.execute("INSERT INTO t VALUES (2)")
            conn.execute("ROLLBACK")  # as SQLite does on a full disk
            raise StoreError("planted: the disk is full")
    assert _seen_elsewhere(db) == []
    _put(db, 5)
    assert _seen_elsewhere(db) == [5]


def test_another_thread_waits_for_the_open_transaction_and_stays_out_of_it(
    db: Database,
) -> None:
    started, wrote = threading.Event(), threading.Event()

    def other() -> None:
        started.set()
        _put(db, 10)
        wrote.set()

    with db.shared() as shared:
        _put(db, 1)
        thread = threading.Thread(target=other)
        thread.start()
        started.wait(5)
        assert not wrote.wait(0.3), "another thread wrote into the open shared transaction"
        shared.settle()
        assert wrote.wait(5)
        thread.join(5)
        assert _seen_elsewhere(db) == [1, 10], "the other write was not a commit of its own"
        _put(db, 2)
    assert _seen_elsewhere(db) == [1, 2, 10]


def test_one_shared_transaction_at_a_time(db: Database) -> None:
    with db.shared(), pytest.raises(StoreError, match="already"), db.shared():
        pass
    _put(db, 1)
    assert _seen_elsewhere(db) == [1]


def test_abandon_rolls_back_the_writes_that_ended_well_too(db: Database) -> None:
    with db.shared() as shared:
        _put(db, 1)
        _put(db, 2)
        shared.abandon()
        assert not shared.open
        _put(db, 3)  # a transaction of its own, committed as the block ends
    assert _seen_elsewhere(db) == [3]
    _put(db, 4)
    assert _seen_elsewhere(db) == [3, 4]
