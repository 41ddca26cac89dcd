"""Cursors: per-branch reading positions in insertion order, deduplicated like journal
reads, never backwards, safe across processes."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from recall_sqlite import InvalidInputError, NotFoundError, Store, open_store
from recall_sqlite.cursors import _UNREAD_SQL
from recall_sqlite.errors import UnknownEntryError
from recall_sqlite.store import context_of
from tests.conftest import entry, make_workspace
from tests.helpers import cli_here, run_at_once

ODD_BRANCHES = ["", "feat/ünïcode-✓", 'it\'s "quoted"', "100%_like", "*", "a\nb", " ", "x" * 300]


def _append(
    store: Store, branch: str = "main", ts: str = "2026-01-01T00:00:00Z", **fields: Any
) -> int:
    return store.journal.append(entry(ts, branch=branch, **fields)).seq


def _ids(result: Any) -> list[str]:
    return [e.id for e in result.entries]


def _table_counts(store: Store) -> tuple[int, ...]:
    return tuple(
        context_of(store).db.query(f"SELECT count(*) FROM {t}")[0][0]
        for t in ("cursors", "summaries", "summary_sources")
    )


# -- basics ------------------------------------------------------------------------------------


def test_never_seen_consumer_stands_at_zero_and_reading_writes_nothing(store: Store) -> None:
    _append(store, focus="a")
    before = _table_counts(store)
    cursor = store.cursors.get("new-consumer", "main")
    assert (cursor.position, cursor.updated_at, cursor.end) == (0, None, 1)
    assert len(store.cursors.unread("new-consumer", "main")) == 1
    assert _table_counts(store) == before


def test_unread_is_oldest_first_by_insertion_not_timestamp(store: Store) -> None:
    late = _append(store, ts="2026-03-01T00:00:00Z", focus="newest timestamp, first in")
    early = _append(store, ts="2020-01-01T00:00:00Z", focus="oldest timestamp, second in")
    result = store.cursors.unread("c", "main")
    assert [i.position for i in result.items] == [late, early]
    assert [e.focus for e in result.entries] == [
        "newest timestamp, first in",
        "oldest timestamp, second in",
    ]


def test_advance_marks_read_and_late_old_entry_is_still_unread(store: Store) -> None:
    for i in range(3):
        _append(store, ts=f"2026-01-0{i + 1}T00:00:00Z", focus=f"e{i}", session_id=f"s{i}")
    first = store.cursors.unread("hook", "main")
    move = store.cursors.advance("hook", "main", to=first.next_position)
    assert move.moved and move.position == first.next_position
    assert len(store.cursors.unread("hook", "main")) == 0
    # An import of an old bucket: timestamp years before everything read, seq after.
    old = store.journal.append(
        entry("2019-05-05T00:00:00Z", branch="main", session_id="old", focus="imported late")
    )
    again = store.cursors.unread("hook", "main")
    assert _ids(again) == [old.id]


def test_unread_filters_branch_and_workspace_in_sql(store: Store, other: Store) -> None:
    mine = store.journal.append(entry(branch="main", focus="mine")).id
    store.journal.append(entry(branch="dev", focus="other branch"))
    other.journal.append(entry(branch="main", focus="other workspace"))
    assert _ids(store.cursors.unread("c", "main")) == [mine]
    assert [e.focus for e in other.cursors.unread("c", "main").entries] == ["other workspace"]


def test_unread_covers_every_worktree_of_the_branch(store: Store, workspace_root: Path) -> None:
    desk = workspace_root / "desk2"
    (desk / ".git").mkdir(parents=True)
    with open_store(desk, db_path=store.workspace.db_path) as s2:
        assert s2.workspace.id == store.workspace.id and s2.workspace.worktree != "."
        a = store.journal.append(entry(branch="main", focus="root desk")).id
        b = s2.journal.append(entry(branch="main", focus="second desk")).id
        assert _ids(s2.cursors.unread("c", "main")) == [a, b]
        assert _ids(store.cursors.unread("c", "main")) == [a, b]


def test_limit_more_and_next_position_walk_without_skipping(store: Store) -> None:
    seqs = [_append(store, focus=f"e{i}", session_id=f"s{i}") for i in range(7)]
    seen: list[int] = []
    while True:
        r = store.cursors.unread("c", "main", limit=3)
        seen += [i.position for i in r.items]
        store.cursors.advance("c", "main", to=r.next_position)
        if not r.more:
            break
    assert seen == seqs


def test_more_is_false_when_limit_equals_remaining(store: Store) -> None:
    for i in range(3):
        _append(store, focus=f"e{i}", session_id=f"s{i}")
    r = store.cursors.unread("c", "main", limit=3)
    assert len(r) == 3 and not r.more and r.next_position == 3


def test_next_position_passes_trailing_skipped_versions(store: Store) -> None:
    _append(store, session_id="s", focus="rich", done=["x"], ts="2026-01-02T00:00:00Z")
    # An auto version, older: not what reads show, so unread skips it.
    poor = _append(store, session_id="s", auto=True, ts="2026-01-01T00:00:00Z")
    r = store.cursors.unread("c", "main")
    assert len(r) == 1 and r.next_position == poor


# -- dedup and richer versions -------------------------------------------------------------------


def test_dedup_within_window_shows_only_the_version_reads_show(store: Store) -> None:
    _append(store, session_id="s", focus="v1", ts="2026-01-01T00:00:00Z")
    v2 = store.journal.append(
        entry("2026-01-02T00:00:00Z", branch="main", session_id="s", focus="v2", done=["d"])
    ).id
    r = store.cursors.unread("c", "main")
    assert _ids(r) == [v2]
    assert [e.id for e in store.journal.read(10, branch="main", all_worktrees=True).entries] == [v2]


def test_richer_version_of_read_session_is_delivered_as_revision(store: Store) -> None:
    _append(store, session_id="s", focus="v1", ts="2026-01-01T00:00:00Z")
    _append(store, session_id="t", focus="other session", ts="2026-01-01T00:00:01Z")
    r = store.cursors.unread("c", "main")
    assert [i.revision for i in r.items] == [False, False]
    store.cursors.advance("c", "main", to=r.next_position)
    # Late enrichment: richer, newer version of the already-read session.
    richer = store.journal.append(
        entry("2026-01-03T00:00:00Z", branch="main", session_id="s", focus="v1", done=["enriched"])
    ).id
    r2 = store.cursors.unread("c", "main")
    assert _ids(r2) == [richer] and r2.items[0].revision is True
    store.cursors.advance("c", "main", to=r2.next_position)
    # A poorer version (auto) of the same session: reads would not show it, neither does unread.
    _append(store, session_id="s", auto=True, focus="auto", ts="2026-02-01T00:00:00Z")
    # An identical append is the same row: nothing new either.
    store.journal.append(
        entry("2026-01-03T00:00:00Z", branch="main", session_id="s", focus="v1", done=["enriched"])
    )
    assert len(store.cursors.unread("c", "main")) == 0


def test_revision_is_false_after_reset(store: Store) -> None:
    _append(store, session_id="s", focus="v1", ts="2026-01-01T00:00:00Z")
    store.cursors.advance("c", "main", to=1)
    _append(store, session_id="s", focus="v2", done=["d"], ts="2026-01-02T00:00:00Z")
    assert store.cursors.unread("c", "main").items[0].revision
    store.cursors.reset("c", "main")
    assert [i.revision for i in store.cursors.unread("c", "main").items] == [False]


# -- advance / reset -----------------------------------------------------------------------------


def test_advance_never_moves_backwards_and_reports_real_position(store: Store) -> None:
    for i in range(5):
        _append(store, focus=f"e{i}", session_id=f"s{i}")
    store.cursors.advance("c", "main", to=4)
    move = store.cursors.advance("c", "main", to=2)
    assert not move.moved and move.position == 4 and move.requested == 2 and move.previous == 4
    assert store.cursors.get("c", "main").position == 4
    assert [i.position for i in store.cursors.unread("c", "main").items] == [5]


def test_advance_to_entry_id_and_its_branch_is_checked(store: Store) -> None:
    a = store.journal.append(entry(branch="main", focus="a", session_id="a"))
    store.journal.append(entry(branch="main", focus="b", session_id="b"))
    d = store.journal.append(entry(branch="dev", focus="d"))
    assert store.cursors.advance("c", "main", to=a.id).position == a.seq
    before = _table_counts(store)
    with pytest.raises(UnknownEntryError, match="branch 'dev'"):
        store.cursors.advance("c", "main", to=d.id)
    with pytest.raises(UnknownEntryError):
        store.cursors.advance("c", "main", to="00" * 16)
    assert _table_counts(store) == before and store.cursors.get("c", "main").position == a.seq


def test_advance_beyond_the_journal_end_is_refused(store: Store) -> None:
    _append(store)
    with pytest.raises(InvalidInputError, match="beyond the end"):
        store.cursors.advance("c", "main", to=2)
    assert store.cursors.get("c", "main").updated_at is None
    # Up to the end of the whole journal is fine, even past this branch's last entry.
    _append(store, branch="dev")
    assert store.cursors.advance("c", "main", to=2).position == 2
    later = _append(store, branch="main", focus="later")
    assert [i.position for i in store.cursors.unread("c", "main").items] == [later]


def test_reset_moves_back_and_redelivers(store: Store) -> None:
    seqs = [_append(store, focus=f"e{i}", session_id=f"s{i}") for i in range(3)]
    store.cursors.advance("c", "main", to=3)
    move = store.cursors.reset("c", "main", to=1)
    assert move.moved and move.previous == 3 and move.position == 1
    assert [i.position for i in store.cursors.unread("c", "main").items] == seqs[1:]
    assert store.cursors.reset("c", "main").position == 0
    assert len(store.cursors.unread("c", "main")) == 3


def test_cursors_are_per_consumer_and_branch(store: Store, other: Store) -> None:
    _append(store, "main")
    _append(store, "dev")
    store.cursors.advance("a", "main", to=2)
    assert store.cursors.get("b", "main").position == 0
    assert store.cursors.get("a", "dev").position == 0
    assert other.cursors.get("a", "main").position == 0
    assert [(c.consumer, c.branch) for c in store.cursors.list()] == [("a", "main")]
    assert other.cursors.list() == []


@pytest.mark.parametrize("branch", ODD_BRANCHES)
def test_any_branch_name_works(store: Store, branch: str) -> None:
    assert len(store.cursors.unread("c", branch)) == 0  # no entries yet
    assert store.cursors.get("c", branch).end == 0
    _append(store, "main", focus="decoy")  # must never match
    seq = _append(store, branch, focus="mine")
    r = store.cursors.unread("c", branch)
    assert [(i.position, i.entry.branch) for i in r.items] == [(seq, branch)]
    assert store.cursors.advance("c", branch, to=r.next_position).position == seq
    assert len(store.cursors.unread("c", branch)) == 0
    assert [c.branch for c in store.cursors.list(branch)] == [branch]


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.get("", "main"),
        lambda c: c.unread("   ", "main"),
        lambda c: c.unread(None, "main"),
        lambda c: c.advance("", "main", to=0),
        lambda c: c.advance("c", "ma\x00in", to=0),
        lambda c: c.advance("c", None, to=0),
        lambda c: c.advance("c", "main", to=-1),
        lambda c: c.advance("c", "main", to=True),
        lambda c: c.advance("c", "main", to=1.0),
        lambda c: c.advance("c", "main", to="not-hex"),
        lambda c: c.reset("c", "main", to=99),
        lambda c: c.reset("\ud800", "main"),
        lambda c: c.unread("c", "main", limit=0),
        lambda c: c.take("c", "main", limit=-3),
    ],
)
def test_bad_input_is_a_typed_error_and_writes_nothing(store: Store, call: Any) -> None:
    _append(store)
    before = _table_counts(store)
    with pytest.raises(InvalidInputError):
        call(store.cursors)
    assert _table_counts(store) == before


def test_unknown_entry_error_is_both_input_and_lookup_error() -> None:
    assert issubclass(UnknownEntryError, InvalidInputError)
    assert issubclass(UnknownEntryError, NotFoundError)


# -- the SQL stays an index walk from the position ---------------------------------------------


def test_unread_walks_branch_seq_index_and_session_index(store: Store) -> None:
    plan = " | ".join(
        r[3]
        for r in context_of(store).db.query("EXPLAIN QUERY PLAN " + _UNREAD_SQL, (1, "main", 0, 5))
    )
    assert "journal_by_branch_seq (workspace_id=? AND branch=? AND seq>?)" in plan
    assert "journal_by_session (workspace_id=? AND session_id=? AND rowid<?)" in plan
    assert "SCAN" not in plan


# -- take ------------------------------------------------------------------------------------------


def test_take_delivers_and_advances_atomically(store: Store) -> None:
    seqs = [_append(store, focus=f"e{i}", session_id=f"s{i}") for i in range(5)]
    first = store.cursors.take("c", "main", limit=2)
    assert [i.position for i in first.items] == seqs[:2] and first.more
    assert store.cursors.get("c", "main").position == seqs[1]
    rest = store.cursors.take("c", "main")
    assert [i.position for i in rest.items] == seqs[2:] and not rest.more
    assert len(store.cursors.take("c", "main")) == 0


# -- several processes -----------------------------------------------------------------------------

_CHILD = r"""
import json, sys, time
from pathlib import Path
from recall_sqlite import open_store
root, db, go, mode, consumer, targets = sys.argv[1:7]
store = open_store(root, db_path=db)
print("ready", flush=True)
while not Path(go).exists():
    time.sleep(0.002)
out = []
if mode == "advance":
    for t in json.loads(targets):
        out.append([t, store.cursors.advance(consumer, "main", to=t).position])
else:
    while True:
        r = store.cursors.take(consumer, "main", limit=int(targets))
        out += [i.entry.id for i in r.items]
        if not r.more:
            break
        time.sleep(0.001)   # let the other takers in between transactions
print(json.dumps(out), flush=True)
"""


def _run_children(store: Store, tmp_path: Path, argsets: list[list[str]]) -> list[Any]:
    go = tmp_path / "go"
    root, db = str(store.workspace.root), str(store.workspace.db_path)
    return run_at_once(_CHILD, [[root, db, str(go), *a] for a in argsets], go)


def test_concurrent_advances_end_at_the_maximum(store: Store, tmp_path: Path) -> None:
    store.journal.append_many([entry(branch="main", session_id=f"s{i}") for i in range(60)])
    import random

    rng = random.Random(7)
    plans = [[rng.randint(0, 60) for _ in range(25)] for _ in range(4)]
    results = _run_children(store, tmp_path, [["advance", "hook", json.dumps(p)] for p in plans])
    for pairs in results:
        seen = [pos for _, pos in pairs]
        assert all(pos >= asked for asked, pos in pairs)  # never behind what it asked
        assert seen == sorted(seen)  # nobody saw it move back
    assert store.cursors.get("hook", "main").position == max(max(p) for p in plans)


def test_concurrent_takers_split_the_entries_exactly(store: Store, tmp_path: Path) -> None:
    appended = store.journal.append_many(
        [entry(branch="main", session_id=f"s{i}", focus=f"e{i}") for i in range(120)]
    )
    # One entry per take: many small write transactions, so the takers interleave.
    results = _run_children(store, tmp_path, [["take", "worker", "1"] for _ in range(3)])
    taken = [i for r in results for i in r]
    assert sorted(taken) == sorted(a.id for a in appended)  # none lost, none twice


# -- the state machine ---------------------------------------------------------------------------

BRANCHES = ("main", "feat/ü %_", "")
CONSUMERS = ("hook", "summariser")


class CursorMachine(RuleBasedStateMachine):
    """Appends (new sessions, late entries with old timestamps, richer and poorer versions of
    old sessions, identical re-appends, other worktrees and another workspace), reads with and
    without limits, advances, takes and resets. Checked: every delivery is an entry of this
    workspace on the cursor's branch, no version reaches a consumer twice between resets, the
    `revision` flag is exact, and after a full drain every version reads show was delivered."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="cursor-sm-"))
        db = self.dir / "store.db"
        root = make_workspace(self.dir, "ws")
        (root / "desk2" / ".git").mkdir(parents=True)
        self.store = open_store(root, db_path=db)
        self.desk2 = open_store(root / "desk2", db_path=db)
        self.other = open_store(make_workspace(self.dir, "other"), db_path=db)
        self.versions: dict[str, tuple[str, str, int]] = {}  # id -> (branch, session, seq)
        self.payloads: list[tuple[dict[str, Any], bool]] = []
        self.delivered: dict[tuple[str, str], dict[str, int]] = {}
        self.tick = 0

    def teardown(self) -> None:
        for s in (self.store, self.desk2, self.other):
            s.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- appends --

    def _record(self, payload: dict[str, Any], desk2: bool) -> None:
        result = (self.desk2 if desk2 else self.store).journal.append(payload)
        if result.created:
            self.versions[result.id] = (
                payload["branch"],
                payload.get("session_id", ""),
                result.seq,
            )
            self.payloads.append((payload, desk2))

    @rule(
        branch=st.sampled_from(BRANCHES),
        session=st.integers(0, 5),
        old=st.booleans(),
        rich=st.integers(0, 3),
        auto=st.booleans(),
        desk2=st.booleans(),
    )
    def append(
        self, branch: str, session: int, old: bool, rich: int, auto: bool, desk2: bool
    ) -> None:
        self.tick += 1
        ts = (
            f"2020-01-01T00:00:{session:02d}Z"
            if old
            else f"2026-01-01T{self.tick // 3600:02d}:{self.tick // 60 % 60:02d}:"
            f"{self.tick % 60:02d}Z"
        )
        fields = {"focus": f"f{self.tick}", "done": ["d"], "decisions": ["x"], "next_steps": ["n"]}
        payload: dict[str, Any] = {
            "timestamp": ts,
            "branch": branch,
            "session_id": "" if session == 0 else f"s{session}",
            "auto": auto,
            "files_modified": [f"f{self.tick}"],
        }
        payload.update(dict(list(fields.items())[:rich]))
        self._record(payload, desk2)

    @precondition(lambda self: bool(self.payloads))
    @rule(data=st.data())
    def append_identical_again(self, data: st.DataObject) -> None:
        payload, desk2 = data.draw(st.sampled_from(self.payloads))
        before = len(self.versions)
        (self.desk2 if desk2 else self.store).journal.append(payload)
        assert len(self.versions) == before

    @rule(branch=st.sampled_from(BRANCHES))
    def append_other_workspace(self, branch: str) -> None:
        self.tick += 1
        self.other.journal.append(entry(branch=branch, focus=f"other {self.tick}", session_id="s1"))

    # -- reading --

    def _deliver(self, consumer: str, branch: str, r: Any) -> None:
        got = self.delivered.setdefault((consumer, branch), {})
        last = r.position
        for item in r.items:
            assert item.entry.id in self.versions, "another workspace's entry delivered"
            b, session, seq = self.versions[item.entry.id]
            assert b == branch == item.entry.branch, "another branch's entry delivered"
            assert seq == item.position > last, "not in insertion order"
            last = seq
            assert item.entry.id not in got, "delivered twice"
            got[item.entry.id] = seq
            passed = any(
                vb == branch and vs == session and vq <= r.position
                for vb, vs, vq in self.versions.values()
            )
            assert item.revision == (session != "" and passed)
        assert r.next_position >= last

    @rule(
        consumer=st.sampled_from(CONSUMERS),
        branch=st.sampled_from(BRANCHES),
        limit=st.one_of(st.none(), st.integers(1, 3)),
        take=st.booleans(),
    )
    def read_and_advance(self, consumer: str, branch: str, limit: int | None, take: bool) -> None:
        if take:
            r = self.store.cursors.take(consumer, branch, limit=limit)
        else:
            r = self.store.cursors.unread(consumer, branch, limit=limit)
            again = self.store.cursors.unread(consumer, branch, limit=limit)
            assert _ids(again) == _ids(r), "unread must not mark anything read"
            move = self.store.cursors.advance(consumer, branch, to=r.next_position)
            assert move.position == max(r.position, r.next_position)
        self._deliver(consumer, branch, r)

    @rule(
        consumer=st.sampled_from(CONSUMERS),
        branch=st.sampled_from(BRANCHES),
        back=st.integers(0, 4),
    )
    def advance_backwards_is_ignored(self, consumer: str, branch: str, back: int) -> None:
        now = self.store.cursors.get(consumer, branch).position
        move = self.store.cursors.advance(consumer, branch, to=self._own(now - back))
        assert move.position == now and not move.moved

    def _own(self, at_most: int) -> int:
        """The nearest position at or below `at_most` that is this workspace's (the other
        workspace's positions interleave and are refused)."""
        return max([0, *(q for _, _, q in self.versions.values() if q <= at_most)])

    @rule(consumer=st.sampled_from(CONSUMERS), branch=st.sampled_from(BRANCHES), data=st.data())
    def reset(self, consumer: str, branch: str, data: st.DataObject) -> None:
        now = self.store.cursors.get(consumer, branch).position
        to = self._own(data.draw(st.integers(0, now)))
        assert self.store.cursors.reset(consumer, branch, to=to).position == to
        got = self.delivered.setdefault((consumer, branch), {})
        for vid in [v for v, seq in got.items() if seq > to]:
            del got[vid]

    @rule(consumer=st.sampled_from(CONSUMERS), branch=st.sampled_from(BRANCHES))
    def drain_and_compare_with_journal_reads(self, consumer: str, branch: str) -> None:
        while True:
            r = self.store.cursors.unread(consumer, branch, limit=4)
            self._deliver(consumer, branch, r)
            self.store.cursors.advance(consumer, branch, to=r.next_position)
            if not r.more:
                break
        shown = self.store.journal.read(10_000, branch=branch, all_worktrees=True).entries
        missing = {e.id for e in shown} - set(self.delivered[(consumer, branch)])
        assert not missing, "a version reads show was never delivered"

    @invariant()
    def cursor_never_beyond_journal(self) -> None:
        end = context_of(self.store).db.query("SELECT coalesce(max(seq), 0) FROM journal_entries")[
            0
        ][0]
        for c in self.store.cursors.list():
            assert 0 <= c.position <= end


CursorMachine.TestCase.settings = settings(
    max_examples=20,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestCursorMachine = CursorMachine.TestCase


# -- CLI -------------------------------------------------------------------------------------------


def test_cli_cursor_commands(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    ids = [
        store.journal.append(entry(branch="main", session_id=f"s{i}", focus=f"e{i}")).id
        for i in range(3)
    ]
    code, out, _ = cli_here(
        capsys, store, "cursor", "unread", "hook", "--branch", "main", "--limit", "2"
    )
    assert code == 0 and "2 unread for hook" in out and "Focus: e0" in out
    assert "cursor advance hook --branch main --to 2" in out
    code, out, _ = cli_here(capsys, store, "cursor", "unread", "hook", "--branch", "main", "--json")
    data = json.loads(out)
    assert [e["id"] for e in data["entries"]] == ids and data["next_position"] == 3
    code, out, _ = cli_here(
        capsys, store, "cursor", "advance", "hook", "--branch", "main", "--to", ids[1], "--json"
    )
    assert json.loads(out)["position"] == 2
    code, out, _ = cli_here(
        capsys, store, "cursor", "advance", "hook", "--branch", "main", "--to", "1"
    )
    assert code == 0 and "stays at 2" in out and "never moves back" in out
    code, out, _ = cli_here(capsys, store, "cursor", "show", "hook", "--branch", "main")
    assert "position 2 of 3, 1 unread" in out
    code, out, _ = cli_here(capsys, store, "cursor", "show", "--all-branches", "--json")
    assert [c["consumer"] for c in json.loads(out)["cursors"]] == ["hook"]
    code, out, _ = cli_here(capsys, store, "cursor", "reset", "hook", "--branch", "main")
    assert code == 0 and "2 -> 0" in out
    code, out, _ = cli_here(
        capsys, store, "cursor", "unread", "hook", "--branch", "main", "--take", "--json"
    )
    assert len(json.loads(out)["entries"]) == 3
    assert store.cursors.get("hook", "main").position == 3


def test_cli_cursor_branch_defaults_to_the_current_branch(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    # The fixture workspace is not a git checkout: its branch is '' (as journal writes use).
    assert store.workspace.branch == ""
    store.journal.append(entry(branch="", focus="no branch"))
    store.journal.append(entry(branch="main", focus="main"))
    code, out, _ = cli_here(capsys, store, "cursor", "unread", "hook", "--json")
    assert [e["focus"] for e in json.loads(out)["entries"]] == ["no branch"]
    code, out, _ = cli_here(capsys, store, "cursor", "advance", "hook", "--to", "2")
    assert code == 0 and store.cursors.get("hook", "").position == 2


def test_cli_cursor_errors_are_one_line(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli_here(capsys, store, "cursor", "advance", "", "--to", "0")
    assert code == 2 and err.count("\n") == 1 and "consumer must not be empty" in err
    code, out, err = cli_here(capsys, store, "cursor", "advance", "c", "--to", "5")
    assert code == 2 and "beyond the end" in err
