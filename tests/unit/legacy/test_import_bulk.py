"""The legacy import with the journal's head indexes built after the rows (journal/deferred.py),
asked for: the store ends as the import keeping them current leaves it, and an import that
is not asked keeps them current whatever its size (readers need them meanwhile)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import apsw
import pytest

from recall_sqlite import open_store
from recall_sqlite.doctor.schema import differences
from recall_sqlite.journal import deferred
from recall_sqlite.store import context_of
from tests.behaviour.test_legacy_kill import _clone, _corpus, _snapshot
from tests.conftest import make_workspace


@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "base")
    _corpus(root, random.Random(7))
    open_store(root).close()  # the workspace id every clone shares
    return root


def _import(root: Path, defer: bool | None = None) -> list[list[str]]:
    """Import everything; what a second connection saw missing at each progress step."""
    seen: list[list[str]] = []
    with open_store(root, root=root) as store:
        other = apsw.Connection(str(store.workspace.db_path), flags=apsw.SQLITE_OPEN_READONLY)

        def watch(done: int, total: int) -> None:
            seen.append(deferred.missing(other))

        # (None: the default, not passed)
        asked: dict[str, Any] = {} if defer is None else {"defer_indexes": defer}
        try:
            report = store.legacy.import_paths([root], chunk_lines=100, progress=watch, **asked)
        finally:
            other.close()
        assert report.ok, report.to_dict()
        with context_of(store).db.read() as conn:
            assert not differences(conn)
        assert store.doctor().ok
    return seen


def test_a_bulk_load_ends_as_the_row_by_row_import(base: Path, tmp_path: Path) -> None:
    rows, bulk = _clone(base, tmp_path / "rows"), _clone(base, tmp_path / "bulk")
    assert not any(_import(rows, False))
    seen = _import(bulk, True)
    # Readers saw the head indexes missing while the rows went in.
    assert sum(1 for m in seen if m == list(deferred.statements())) > 10
    assert _snapshot(bulk) == _snapshot(rows)


def test_an_import_keeps_the_head_indexes_unless_asked(base: Path, tmp_path: Path) -> None:
    """A first import into an empty store, as large as a load gets here: readers never
    find an index missing, and a re-run with appended lines drops nothing either."""
    root = _clone(base, tmp_path / "large")
    assert not any(_import(root)), "the default keeps every index current"

    def schema_version() -> int:
        with open_store(root, root=root) as store:
            return int(context_of(store).db.query("PRAGMA schema_version")[0][0])

    before = schema_version()
    path = root / ".synapt" / "recall" / "worktrees" / "docs" / "journal.jsonl"
    lines = path.read_text().splitlines()
    with path.open("a") as fh:
        fh.write("\n".join(lines[:5]).replace("focus", "focus again") + "\n")
    assert not any(_import(root))
    assert schema_version() == before


def test_a_stopped_load_builds_the_head_indexes_on_its_way_out(base: Path, tmp_path: Path) -> None:
    root = _clone(base, tmp_path / "stopped")
    calls = 0

    def stop(done: int, total: int) -> None:
        nonlocal calls
        calls += 1
        if calls == 5:
            raise KeyboardInterrupt

    with open_store(root, root=root) as store:
        with pytest.raises(KeyboardInterrupt):
            store.legacy.import_paths([root], chunk_lines=100, progress=stop, defer_indexes=True)
        with context_of(store).db.read() as conn:
            assert not deferred.missing(conn)
        assert context_of(store).db.query("SELECT status FROM import_runs")[-1][0] == "interrupted"
        assert store.journal.read(5).entries, "the stop came after some rows were in"


STOPPED_CHILD = """
import os, signal, sys
from recall_sqlite.cli import main
from recall_sqlite.journal import deferred
from recall_sqlite.legacy import chunks
commit = chunks.Chunker._commit
def commit_then_signal(self, *args, **kwargs):
    done = commit(self, *args, **kwargs)
    with self.ctx.db.read() as conn:
        print("missing:", *deferred.missing(conn), flush=True)
    os.kill(os.getpid(), getattr(signal, sys.argv[2]))
    return done
chunks.Chunker._commit = commit_then_signal
sys.exit(main(["--cwd", sys.argv[1], "import", "--defer-indexes"]))
"""


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_a_terminated_cli_import_builds_the_head_indexes_before_it_exits(
    base: Path, tmp_path: Path, signame: str
) -> None:
    root = _clone(base, tmp_path / "terminated")
    done = subprocess.run(
        [sys.executable, "-c", STOPPED_CHILD, str(root), signame],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (130, "recall-sqlite: interrupted\n")
    assert done.stdout.splitlines()[0] == "missing: " + " ".join(deferred.DEFERRED)
    with open_store(root, root=root) as store:
        with context_of(store).db.read() as conn:
            assert not deferred.missing(conn)
        assert context_of(store).db.query("SELECT status FROM import_runs")[-1][0] == "interrupted"
        assert store.journal.read(5, all_worktrees=True).entries


def test_small_sources_share_a_transaction_and_end_as_if_each_committed_alone(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three sources of 901 lines, chunks of 1,500 lines: the first source's rows are held,
    and written with the second source's first 599 lines (a chunk's worth together) in one
    transaction; the rest of the second and the third source's when the import ends.
    Without chunks.SHARE_TAILS each source is committed alone. The stores are the same."""
    from recall_sqlite.legacy import chunks

    stores: dict[bool, Any] = {}
    commits = {False: 0, True: 0}
    # Each chunk written: its lines, whether it is its source's last, whether it shares
    # a transaction.
    written: dict[bool, list[tuple[int, bool, bool]]] = {False: [], True: []}
    one_chunk = chunks.Chunker._commit

    def recorded(self: Any, found: Any, quarantine: Any, line_no: int, *rest: Any) -> Any:
        expected, final = rest[3], rest[4]
        shared = self.ctx.db.sharing is not None
        written[chunks.SHARE_TAILS].append((line_no - expected[1], final, shared))
        return one_chunk(self, found, quarantine, line_no, *rest)

    monkeypatch.setattr(chunks.Chunker, "_commit", recorded)

    def counter(share: bool) -> Any:
        def count() -> bool:
            commits[share] += 1
            return False  # (True would turn the commit into a rollback)

        return count

    for share in (False, True):
        monkeypatch.setattr(chunks, "SHARE_TAILS", share)
        root = _clone(base, tmp_path / f"share{share}")
        with open_store(root, root=root) as store:
            context_of(store).db.conn.set_commit_hook(counter(share))
            report = store.legacy.import_paths([root], chunk_lines=1500, jobs=1)
        assert report.ok and [s.lines for s in report.sources] == [901] * 3
        stores[share] = _snapshot(root)
    assert written[False] == [(901, True, False)] * 3
    assert written[True] == [(901, True, True), (599, False, True), (302, True, True)] + [
        (901, True, True)
    ]
    assert commits[True] == commits[False] - 1, commits
    assert stores[True] == stores[False]


def test_no_lock_is_held_while_a_source_is_read(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source's last chunk is held in memory, not in an open transaction: as each next
    source starts, another writer takes the write lock at once, and sees the held rows
    not written yet."""
    from recall_sqlite.legacy.importer import Importer

    one_source = Importer._import_source
    root = _clone(base, tmp_path / "free")
    seen: list[int] = []

    def checked(self: Importer, *args: Any) -> Any:
        other = apsw.Connection(str(root / ".synapt" / "recall" / "recall-sqlite.db"))
        try:
            other.execute("BEGIN IMMEDIATE")  # busy timeout 0: BusyError if held
            seen.append(int(other.execute("SELECT count(*) FROM journal_entries").fetchall()[0][0]))
            other.execute("ROLLBACK")
        finally:
            other.close()
        return one_source(self, *args)

    monkeypatch.setattr(Importer, "_import_source", checked)
    with open_store(root, root=root) as store:
        report = store.legacy.import_paths([root], chunk_lines=10_000, jobs=1)
    assert report.ok and len(report.sources) == 3
    assert seen == [0, 0, 0], "the rows of the sources before were written already"
    with open_store(root, root=root) as store:
        assert context_of(store).db.query("SELECT count(*) FROM journal_entries")[0][0] > 0


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_while_an_import_runs_and_left_as_it_was(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    """Python's cyclic collector is off while the chunks are written, as it was afterwards,
    and the import leaves no pile of cycles for it (a cycle made per line or per chunk
    would be thousands of objects here)."""
    import gc

    from recall_sqlite.legacy import chunks

    during: list[bool] = []
    one_chunk = chunks.Chunker._commit

    def watched(self: Any, *args: Any) -> Any:
        during.append(gc.isenabled())
        return one_chunk(self, *args)

    monkeypatch.setattr(chunks.Chunker, "_commit", watched)
    root = _clone(base, tmp_path / "collector")
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with open_store(root, root=root) as store:
            gc.collect()
            report = store.legacy.import_paths([root], chunk_lines=100, jobs=1)
            assert gc.isenabled() is enabled
            gc.disable()
            left = gc.collect()
    finally:
        (gc.enable if was else gc.disable)()
    assert report.ok and len(during) > 20 and not any(during)
    assert left < 200, left


def _moves(conn: apsw.Connection, moved: list[str]) -> None:
    """Record each statement that moves staged rows into the journal."""

    def trace(_cursor: Any, sql: str, _bindings: Any) -> bool:
        if sql.startswith("INSERT INTO main.journal_entries"):
            moved.append(sql)
        return True

    conn.exec_trace = trace


def test_the_chunks_of_a_shared_transaction_go_into_the_journal_by_one_move(
    base: Path, tmp_path: Path
) -> None:
    """Three sources of 901 lines, chunks of 1,500 lines: two transactions, each the rows
    of two sources' chunks, each moved by one statement (a move per chunk journals the
    same index pages again for each: bench/RESULTS.md, row 'import: statement journals')."""
    root = _clone(base, tmp_path / "moves")
    moved: list[str] = []
    with open_store(root, root=root) as store:
        _moves(context_of(store).db.conn, moved)
        report = store.legacy.import_paths([root], chunk_lines=1500, jobs=1)
    assert report.ok and [s.lines for s in report.sources] == [901] * 3
    assert len(moved) == 2, moved


def _faulty_second_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second chunk written fails once its rows have joined the batch (as a source's
    file can fail it: an OSError)."""
    from recall_sqlite.journal.bulk import Batch

    calls: list[int] = []
    real = Batch.duplicates

    def failing(self: Batch, provenance: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise OSError(5, "planted")
        real(self, provenance)

    monkeypatch.setattr(Batch, "duplicates", failing)


def test_a_chunk_that_fails_in_a_shared_transaction_leaves_what_its_own_commit_would(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second source fails after its rows joined the batch: its rows are dropped, and
    the store ends as when each source commits alone and the same one fails; an import
    after it takes the failed source whole, in both."""
    from recall_sqlite.legacy import chunks

    stores: dict[bool, Any] = {}
    for share in (False, True):
        with monkeypatch.context() as mp:
            mp.setattr(chunks, "SHARE_TAILS", share)
            _faulty_second_part(mp)
            root = _clone(base, tmp_path / f"fails{share}")
            with open_store(root, root=root) as store:
                report = store.legacy.import_paths([root], chunk_lines=1500, jobs=1)
            assert [s.action for s in report.sources] == ["new", "failed", "new"], share
            assert "planted" in report.sources[1].note
            first = _snapshot(root)
            with open_store(root, root=root) as store:
                again = store.legacy.import_paths([root], chunk_lines=1500, jobs=1)
                assert again.ok and store.doctor().ok
            stores[share] = (first, _snapshot(root))
    assert stores[True] == stores[False]
    assert [s[4] for s in stores[True][0]["sources"]] == [901, 0, 901]


def test_a_batch_that_fails_to_be_written_rolls_back_its_whole_transaction(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing a shared transaction's rows fails after the chunks recorded their lines: no
    chunk of it is committed (a source recorded without its rows would never be read
    again), the import fails, and the next one ends as an import that never failed."""
    from recall_sqlite.errors import RecallError
    from recall_sqlite.journal.bulk import Batch

    clean = _clone(base, tmp_path / "clean")
    with open_store(clean, root=clean) as store:
        assert store.legacy.import_paths([clean], chunk_lines=1500, jobs=1).ok
    real = Batch.finish

    def failing(self: Batch, conn: apsw.Connection) -> None:
        real(self, conn)
        raise apsw.FullError("planted: the disk is full")

    root = _clone(base, tmp_path / "rolled")
    with open_store(root, root=root) as store:
        with monkeypatch.context() as mp:
            mp.setattr(Batch, "finish", failing)
            with pytest.raises(RecallError, match="disk is full"):
                store.legacy.import_paths([root], chunk_lines=1500, jobs=1)
        q = context_of(store).db.query
        assert q("SELECT count(*) FROM journal_entries") == [(0,)]
        assert q("SELECT sum(lines) FROM import_sources") == [(0,)]
        assert store.legacy.import_paths([root], chunk_lines=1500, jobs=1).ok
    assert _snapshot(root) == _snapshot(clean)


def test_a_stop_between_a_chunks_savepoint_and_its_keep_writes_its_rows(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop (Ctrl-C) after a held chunk's savepoint was released and before the batch was
    told: its record says its lines are in, so its rows are written with the batch (what
    the savepoint left decides, not the Python state); the next import ends as one that
    was never stopped."""
    from recall_sqlite.journal.bulk import Batch

    clean = _clone(base, tmp_path / "clean")
    with open_store(clean, root=clean) as store:
        assert store.legacy.import_paths([clean], chunk_lines=1500, jobs=1).ok
    root = _clone(base, tmp_path / "stopped")
    with open_store(root, root=root) as store:
        with monkeypatch.context() as mp:

            def stop(self: Batch) -> None:
                raise KeyboardInterrupt

            mp.setattr(Batch, "keep", stop)
            with pytest.raises(KeyboardInterrupt):
                store.legacy.import_paths([root], chunk_lines=1500, jobs=1)
        q = context_of(store).db.query
        assert q("SELECT sum(lines) FROM import_sources") == [(901,)]
        # (every line of it accounted for: an entry's provenance, or quarantined)
        accounted = (
            "SELECT (SELECT count(*) FROM entry_provenance) + (SELECT count(*) FROM quarantine)"
        )
        assert q(accounted) == [(901,)]
        assert store.legacy.import_paths([root], chunk_lines=1500, jobs=1).ok
    assert _snapshot(root) == _snapshot(clean)
