"""More than one machine, without the transport: three stores of one repository write,
forget, summarise and embed at random, pull each other's files in random order, and after
everyone has pulled everyone they give identical answers; a pull is idempotent; what remains
is exactly the union of what was written minus what was forgotten (recall_sqlite/sync/merge.py).

The same merge runs on a file Litestream restored (tests/behaviour/test_sync_litestream.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import ALL_BRANCHES, InvalidEntryError, derived, identity, open_store
from recall_sqlite.context import StoreContext
from recall_sqlite.journal.journal import Journal
from recall_sqlite.store import Store, context_of
from recall_sqlite.sync import peers
from recall_sqlite.sync.peers import PeerBook
from recall_sqlite.sync.pull import merge_file

KEY = "github.com/example/repo"
WORKTREES = (".", "@feat", "@zeta")
WORDS = ("alpha", "bravo", "charlie", "delta", "echo")


class Machine:
    def __init__(self, tmp: Path, name: str) -> None:
        self.name = name
        # A machine id of the shape sync mints (checks.is_machine_id).
        self.id = hashlib.sha256(name.encode()).hexdigest()[:16]
        self.root = tmp / name
        self.root.mkdir()
        self.store = open_store(root=self.root, db_path=self.root / "recall.db")
        peers.set_sync_key(context_of(self.store), KEY)
        ctx = context_of(self.store)
        with context_of(self.store).db.write() as conn:
            self.worktrees = {
                key: identity.ensure_worktree(conn, ctx.workspace_pk, key, key, None)
                for key in WORKTREES
            }
        self.journals = {
            key: Journal(
                StoreContext(ctx.db, ctx.workspace_pk, ctx.workspace_uuid, pk, key, "main"),
                searcher=self.store._search_journal,
            )
            for key, pk in self.worktrees.items()
        }
        self.copies = 0
        self.book = PeerBook(self.root / "peers.json")

    def pull(self, other: Machine, tmp: Path) -> Any:
        return merge_file(
            context_of(self.store),
            other.snapshot(tmp),
            self.book,
            machine=other.id,
            me=self.id,
        )

    def snapshot(self, into: Path) -> Path:
        """A consistent copy of this machine's file, as a restore would give."""
        self.copies += 1
        path = into / f"{self.name}-{self.copies}.db"
        dst = apsw.Connection(str(path))
        with dst.backup("main", context_of(self.store).db.conn, "main") as b:
            b.step(-1)
        dst.close()
        return path


def entry(i: int) -> dict[str, Any]:
    """A small pool, so machines write the same versions, sessions collide and timestamps
    tie."""
    return {
        "timestamp": f"2026-05-0{1 + i % 3}T10:00:0{i % 2}+00:00",
        "session_id": ("", "s1", "s2", "s3")[i % 4],
        "branch": ("main", "feat")[i % 2],
        "focus": f"{WORDS[i % 5]} {WORDS[(i // 5) % 5]} {i}",
        "next_steps": [f"step {i % 7}"] if i % 3 else [],
        "done": [f"step {(i + 1) % 7}"] if i % 4 == 1 else [],
        "auto": i % 5 == 0,
    }


ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 2), st.integers(0, 40), st.integers(0, 2)),
        st.tuples(st.just("forget"), st.integers(0, 2), st.integers(0, 40), st.just(0)),
        st.tuples(st.just("pull"), st.integers(0, 2), st.integers(0, 2), st.just(0)),
        st.tuples(st.just("summary"), st.integers(0, 2), st.integers(0, 5), st.integers(0, 2)),
        st.tuples(st.just("unsummary"), st.integers(0, 2), st.integers(0, 5), st.just(0)),
        st.tuples(st.just("vector"), st.integers(0, 2), st.integers(0, 40), st.integers(0, 3)),
        st.tuples(st.just("unvector"), st.integers(0, 2), st.integers(0, 40), st.just(0)),
    ),
    max_size=40,
)


def run(machines: list[Machine], tmp: Path, steps: list[tuple[str, int, int, int]]) -> set[str]:
    """Apply the steps; the ids written anywhere and not forgotten anywhere (the oracle)."""
    written: set[str] = set()
    forgotten: set[str] = set()
    for op, m, x, y in steps:
        machine = machines[m]
        store = machine.store
        if op == "append":
            try:
                got = machine.journals[WORKTREES[y]].append(entry(x))
            except InvalidEntryError:
                continue  # forgotten here already: refused
            written.add(got.id)
        elif op == "forget":
            eid = _id_of(store, entry(x))
            if eid is not None:
                store.journal.forget([eid])
                forgotten.add(eid)
        elif op == "pull" and x != m:
            machine.pull(machines[x], tmp)
        elif op == "summary":
            ids = [i for i in (_id_of(store, entry(k)) for k in range(x, x + 3)) if i]
            store.summaries.add(
                f"summary {x} by {machine.name}",
                branch=(None, "main", "feat")[y],
                covers=ids or None,
            )
        elif op == "unsummary":
            found = [s for s in store.summaries.list(ALL_BRANCHES, limit=None)]
            if found:
                store.summaries.remove(found[x % len(found)].id)
        elif op == "vector":
            eid = _id_of(store, entry(x))
            if eid is not None:
                vec = np.ones(4, dtype=np.float32)
                vec[y] += 1 + m
                store.vectors.put(("entry", eid), vec, model="m4")
        elif op == "unvector":
            eid = _id_of(store, entry(x))
            if eid is not None:
                store.vectors.delete(("entry", eid), model="m4")
    return written - forgotten


def _id_of(store: Store, data: dict[str, Any]) -> str | None:
    from recall_sqlite.journal.entry import JournalEntry

    eid = JournalEntry.from_mapping(data).encode()[0]
    rows = context_of(store).db.query(
        "SELECT 1 FROM journal_entries WHERE workspace_id = ? AND id = ?",
        (context_of(store).workspace_pk, eid),
    )
    return eid.hex() if rows else None


def pull_all(machines: list[Machine], tmp: Path) -> list[bool]:
    changed = []
    for m in machines:
        for n in machines:
            if n is not m:
                changed.append(m.pull(n, tmp).changed)
    return changed


def answers(machine: Machine) -> dict[str, Any]:
    """Everything a reader can see, free of local numbering (seqs, summary ids)."""
    store = machine.store
    out: dict[str, Any] = {}
    for key, journal in machine.journals.items():
        for all_wt in (False, True):
            for branch in (None, "main", "feat"):
                r = journal.read(n=100, branch=branch, all_worktrees=all_wt)
                out[f"read {key} {all_wt} {branch}"] = (
                    [(e.id, e.worktree, e.focus, e.session_id) for e in r.entries],
                    r.total,
                    r.elsewhere.to_dict(),
                )
            p = journal.pending_next_steps(all_worktrees=all_wt)
            out[f"pending {key} {all_wt}"] = (p.pending, p.sessions_considered)
            for word in ("alpha", "bravo delta"):
                s = journal.search(word, n=50, all_worktrees=all_wt)
                out[f"search {key} {all_wt} {word}"] = (
                    [(h.entry.id, round(h.score, 9)) for h in s.hits],
                    s.total,
                    s.elsewhere.to_dict(),
                )
    ws = context_of(store).workspace_pk
    out["versions"] = sorted(
        (bytes(i).hex(), k, hws, hwt)
        for i, k, hws, hwt in context_of(store).db.query(
            "SELECT e.id, t.key, e.head_ws, e.head_wt FROM journal_entries e"
            " JOIN worktrees t ON t.id = e.worktree_id WHERE e.workspace_id = ?",
            (ws,),
        )
    )
    # Every removal with the machine that asked for it (NULL here: this machine's own),
    # the same on every machine.
    me = machine.id
    out["tombstones"] = sorted(
        (bytes(i).hex(), str(by or me))
        for i, by in context_of(store).db.query(
            "SELECT id, asked_by FROM journal_tombstones WHERE workspace_id = ? AND formula = 2",
            (ws,),
        )
    )
    out["summary_tombstones"] = sorted(
        (bytes(u).hex(), str(by or me))
        for u, by in context_of(store).db.query(
            "SELECT uid, asked_by FROM summary_tombstones WHERE workspace_id = ?", (ws,)
        )
    )
    out["summaries"] = [
        (s.text, s.branch, s.kind, s.created_at, s.current, s.entry_ids)
        for s in store.summaries.list(ALL_BRANCHES, limit=None)
    ]
    out["vectors"] = sorted(
        (bytes(o).hex(), m, bytes(b).hex())
        for o, m, b in context_of(store).db.query(
            "SELECT e.id, v.model, v.embedding FROM vectors v"
            " JOIN journal_entries e ON e.seq = v.entry_seq WHERE v.workspace_id = ?",
            (ws,),
        )
    )
    return out


@pytest.fixture
def trio(tmp_path: Path) -> list[Machine]:
    machines = [Machine(tmp_path, f"m{i}") for i in range(3)]
    yield machines
    for m in machines:
        m.store.close()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=ops)
def test_three_machines_converge(tmp_path_factory: pytest.TempPathFactory, steps: Any) -> None:
    tmp = tmp_path_factory.mktemp("trio")
    machines = [Machine(tmp, f"m{i}") for i in range(3)]
    try:
        remaining = run(machines, tmp, steps)
        pull_all(machines, tmp)
        first = answers(machines[0])
        for m in machines[1:]:
            assert answers(m) == first, m.name
        # The union minus the forgotten, exactly.
        assert {v[0] for v in first["versions"]} == remaining
        for m in machines:
            with context_of(m.store).db.read() as conn:
                assert derived.check(conn, context_of(m.store).workspace_pk) == []
        # Idempotent: a second round changes nothing, writes nothing (or two idle machines
        # would replicate each other's bookkeeping for ever) and answers the same.
        before = [context_of(m.store).db.conn.total_changes() for m in machines]
        assert not any(pull_all(machines, tmp))
        assert [context_of(m.store).db.conn.total_changes() for m in machines] == before
        assert answers(machines[1]) == first
    finally:
        for m in machines:
            m.store.close()


def test_pulled_entries_are_unread_and_forgets_travel(trio: list[Machine], tmp_path: Path) -> None:
    a, b, c = trio
    b.journals["."].append(entry(3))
    b.store.cursors.advance(
        "agent", "feat", to=b.store.cursors.unread("agent", "feat").next_position
    )
    got = a.journals["."].append(entry(1))
    report = b.pull(a, tmp_path)
    assert report.entries == 1
    assert [e.id for e in b.store.cursors.unread("agent", "feat").entries] == [got.id]
    c.pull(a, tmp_path)
    a.store.journal.forget([got.id])
    report = b.pull(a, tmp_path)
    assert report.forgotten == 1 and report.tombstones == 1
    assert b.store.journal.get(got.id) is None
    # Never back: c still holds it, and b refuses it from c and from a writer.
    assert b.pull(c, tmp_path).entries == 0
    assert b.store.journal.get(got.id) is None
    with pytest.raises(InvalidEntryError):
        b.journals["."].append(entry(1))
    c.pull(b, tmp_path)
    assert c.store.journal.get(got.id) is None


def test_a_row_whose_id_is_not_its_content_is_refused(trio: list[Machine], tmp_path: Path) -> None:
    a, b, _ = trio
    got = a.journals["."].append(entry(2))
    copy = a.snapshot(tmp_path)
    conn = apsw.Connection(str(copy))
    # A damaged or foreign peer: its row no longer hashes to its id.
    conn.execute("DROP TRIGGER journal_entries_immutable")
    conn.execute(
        "UPDATE journal_entries SET focus = 'tampered' WHERE id = ?", (bytes.fromhex(got.id),)
    )
    conn.close()
    report = merge_file(context_of(b.store), copy, b.book, machine=a.id, me=b.id)
    assert report.rejected == 1 and report.entries == 0
    assert b.store.journal.get(got.id) is None


def test_of_a_put_and_a_delete_the_later_wins(trio: list[Machine], tmp_path: Path) -> None:
    a, b, _ = trio
    eid = a.journals["."].append(entry(4)).id
    owner = ("entry", eid)
    big, small = np.array([9, 9, 9, 9], np.float32), np.array([1, 0, 0, 0], np.float32)
    a.store.vectors.put(owner, big, model="m4")
    b.pull(a, tmp_path)
    b.store.vectors.put(owner, small, model="m4")  # later, though its bytes sort first
    a.pull(b, tmp_path)
    for m in (a, b):
        got = m.store.vectors.get(owner, model="m4")
        assert got is not None and np.allclose(got, small / np.linalg.norm(small))
    a.store.vectors.delete(owner, model="m4")  # a delete after the put wins ...
    b.pull(a, tmp_path)
    a.pull(b, tmp_path)
    assert a.store.vectors.get(owner, model="m4") is None
    assert b.store.vectors.get(owner, model="m4") is None
    b.store.vectors.put(owner, big, model="m4")  # ... and a put after the delete
    a.pull(b, tmp_path)
    b.pull(a, tmp_path)
    for m in (a, b):
        assert m.store.vectors.get(owner, model="m4") is not None


def test_a_removed_summary_stays_removed_and_chains_follow_creation(
    trio: list[Machine], tmp_path: Path
) -> None:
    a, b, c = trio
    first = a.store.summaries.add("first, on a", branch="main")
    b.pull(a, tmp_path)
    second = b.store.summaries.add("second, on b", branch="main")
    third = a.store.summaries.add("third, on a", branch="main")  # a never saw b's
    a.pull(b, tmp_path)
    b.pull(a, tmp_path)
    for m in (a, b):
        chain = [(s.text, s.current) for s in m.store.summaries.list("main", limit=None)]
        assert chain == [(third.text, True), (second.text, False), (first.text, False)]
    c.pull(b, tmp_path)
    removed = [s for s in a.store.summaries.list("main") if s.text == second.text][0]
    a.store.summaries.remove(removed.id)
    b.pull(a, tmp_path)
    a.pull(c, tmp_path)  # c still has it: not back
    for m in (a, b):
        chain = [(s.text, s.current) for s in m.store.summaries.list("main", limit=None)]
        assert chain == [(third.text, True), (first.text, False)]


def test_a_version_in_two_worktrees_lies_in_the_smaller_key(
    trio: list[Machine], tmp_path: Path
) -> None:
    a, b, _ = trio
    eid = a.journals["@zeta"].append(entry(6)).id
    assert b.journals["@feat"].append(entry(6)).id == eid
    a.pull(b, tmp_path)
    b.pull(a, tmp_path)
    for m in (a, b):
        assert m.store.journal.get(eid).worktree == "@feat"  # type: ignore[union-attr]
        assert [e.id for e in m.journals["@feat"].read(n=9).entries] == [eid]
        assert m.journals["@zeta"].read(n=9).entries == []


# -- rounds: read and proven in a thread beside the writes ---------------------------------


def _ids(m: Machine) -> set[bytes]:
    return {bytes(i) for (i,) in context_of(m.store).db.query("SELECT id FROM journal_entries")}


def _failing_at(
    monkeypatch: pytest.MonkeyPatch, peer: Machine, name: str, call: int, error: Exception
) -> Any:
    """12 distinct versions on `peer`, pulled 2 a round, with merge.`name` raising `error`
    on its `call`-th call; the real function, to put back."""
    from recall_sqlite.sync import merge

    for i in range(12):
        peer.journals["."].append({**entry(i), "focus": f"version {i}"})
    monkeypatch.setattr(merge, "CHUNK", 2)
    real = getattr(merge, name)
    calls: list[int] = []

    def planted(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == call:
            raise error
        return real(*args)

    monkeypatch.setattr(merge, name, planted)
    return real


def _reading_threads() -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name == "recall-merge-read"]


def test_a_pull_in_many_rounds_stores_what_one_round_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rounds of 3 versions, written 2 a transaction, some of each round held here already
    (a few in a worktree with a larger key: moved): the same store as one round of all."""
    from recall_sqlite.sync import merge

    from .test_sync_merge_rows import tables

    a, b = Machine(tmp_path, "a"), Machine(tmp_path, "b")
    try:
        for i in range(25):
            a.journals["." if i % 3 else "@feat"].append(entry(i))
            if i % 4 == 0:
                b.journals["@zeta" if i % 8 else "."].append(entry(i))
        peer = a.snapshot(tmp_path)
        got = []
        for name, chunk, rows in (("one", 10_000, 5_000), ("many", 3, 2)):
            monkeypatch.setattr(merge, "CHUNK", chunk)
            monkeypatch.setattr(merge, "WRITE_ROWS", rows)
            path = b.snapshot(tmp_path).rename(tmp_path / f"{name}.db")
            with open_store(root=b.root, db_path=path) as s:
                report = merge_file(
                    context_of(s), peer, PeerBook(tmp_path / f"{name}.json"), machine=a.id
                )
                assert report.entries > 0 and report.moved > 0
            got.append(tables(path))
        assert got[0] == got[1]
        assert not _reading_threads()
    finally:
        a.store.close()
        b.store.close()


def test_a_failed_write_stops_the_reading_thread(
    trio: list[Machine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails mid-pull reaches the caller, the thread reading the next rounds
    ends with it, and the next pull merges everything."""
    from recall_sqlite.sync import merge

    a, b, _ = trio
    write = _failing_at(monkeypatch, a, "_write_versions", 2, RuntimeError("planted failure"))
    with pytest.raises(RuntimeError, match="planted failure"):
        b.pull(a, tmp_path)
    assert not _reading_threads()
    assert 0 < len(_ids(b)) < len(_ids(a))  # the first round's transaction stays
    monkeypatch.setattr(merge, "_write_versions", write)
    b.pull(a, tmp_path)
    assert _ids(b) == _ids(a)


def test_a_failed_read_reaches_the_caller_after_the_rounds_before_it(
    trio: list[Machine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_sqlite.errors import CorruptStoreError

    a, b, _ = trio
    planted = CorruptStoreError("planted: the peer's file is damaged")
    _failing_at(monkeypatch, a, "_prepare", 3, planted)
    with pytest.raises(CorruptStoreError, match="planted"):
        b.pull(a, tmp_path)
    assert not _reading_threads()
    assert len(_ids(b)) == 4  # the two rounds before it, written
