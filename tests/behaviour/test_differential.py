"""Differential tests against the real synapt 0.30.0: the same entries written with its
append_entry to a JSONL bucket and appended to our store give the same answers."""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import JournalEntry, open_store
from recall_sqlite.legacy.export import synapt_order
from tests.conftest import make_workspace

sj = pytest.importorskip("synapt.recall.journal")

_counter = itertools.count()

_item = st.sampled_from(
    ["a", "b", "c", "- a", "B", "shared step", "x [carried since 2026-01-01]", ""]
)
_minutes = st.integers(0, 40)


@st.composite
def _entry(draw: st.DrawFn) -> JournalEntry:
    minute = draw(_minutes)
    second = draw(st.integers(0, 1))
    return JournalEntry(
        timestamp=(dt.datetime(2026, 1, 1, 10, 0) + dt.timedelta(minutes=minute, seconds=second))
        .replace(tzinfo=dt.timezone.utc)
        .isoformat(),
        session_id=draw(st.sampled_from(["", "s1", "s2", "s3", "s4"])),
        branch=draw(st.sampled_from(["", "main"])),
        focus=draw(st.sampled_from(["", "focus", "other focus"])),
        done=draw(st.lists(_item, max_size=2)),
        decisions=draw(st.lists(st.sampled_from(["d1", "d2"]), max_size=1)),
        next_steps=draw(st.lists(_item, max_size=3)),
        files_modified=draw(st.lists(st.sampled_from(["f.py", "g.py"]), max_size=1)),
        auto=draw(st.booleans()),
        enriched=draw(st.booleans()),
    )


def _key(e: object) -> tuple[object, ...]:
    d = e.synapt_dict() if isinstance(e, JournalEntry) else e.to_dict()  # type: ignore[attr-defined]
    return tuple(sorted((k, repr(v)) for k, v in d.items()))


def _oracle_input(entries: list[JournalEntry]) -> list[JournalEntry]:
    """Our store collapses identical content onto one row (that is the content-addressed
    key). synapt keeps identical lines; for entries WITH a session id its dedup collapses
    them anyway, for entries WITHOUT one it would show the same entry twice. Feed synapt the
    de-duplicated stream so both sides see the same distinct entries, in the order an
    export writes them: synapt breaks ties by file order, the store by content (the one
    documented difference, journal/order.py), and that order makes the two the same."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for e in entries:
        k = _key(e)
        if k not in seen:
            seen.add(k)
            c = e.copy()
            c.validate()
            c.id = c.encode()[0].hex()
            out.append(c)
    return synapt_order(out)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_entry(), max_size=14), st.integers(1, 8))
def test_reads_match_synapt(tmp_path: Path, entries: list[JournalEntry], n: int) -> None:
    case = tmp_path / f"c{next(_counter)}"
    bucket = case / "journal.jsonl"
    for e in _oracle_input(entries):
        sj.append_entry(sj.JournalEntry(**e.synapt_dict()), bucket)
    with open_store(make_workspace(case)) as store:
        for e in entries:
            store.journal.append(e)

        theirs = sj.read_entries(bucket, n=n) if bucket.exists() else []
        ours = store.journal.read(n=n).entries
        assert [_key(e) for e in ours] == [_key(e) for e in theirs]
        # one worktree: the workspace-wide dedup (a separate index and trigger) must agree
        wide = store.journal.read(n=n, all_worktrees=True).entries
        assert [_key(e) for e in wide] == [_key(e) for e in theirs]

        for meaningful in (False, True):
            t = sj.read_latest(bucket, meaningful=meaningful) if bucket.exists() else None
            o = store.journal.latest(meaningful=meaningful).entry
            assert (o and _key(o)) == (t and _key(t))

        t_pending = sj.pending_next_steps(bucket) if bucket.exists() else []
        assert store.journal.pending_next_steps().pending == t_pending

        for sid in ("", "s1", "s2"):
            t_prev = sj.read_previous_meaningful(sid, bucket) if bucket.exists() else None
            o_prev = store.journal.host.previous_meaningful(sid)
            assert (o_prev and _key(o_prev)) == (t_prev and _key(t_prev))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(_entry(), max_size=6),
    st.lists(_item, max_size=4),
    st.lists(_item, max_size=4),
    st.sampled_from(["", "s1", "s9"]),
)
def test_carry_forward_matches_synapt(
    tmp_path: Path, history: list[JournalEntry], done: list[str], next_steps: list[str], sid: str
) -> None:
    case = tmp_path / f"w{next(_counter)}"
    bucket = case / "journal.jsonl"
    for e in _oracle_input(history):
        sj.append_entry(sj.JournalEntry(**e.synapt_dict()), bucket)
    with open_store(make_workspace(case)) as store:
        for e in history:
            store.journal.append(e)
        previous = sj.read_previous_meaningful(sid, bucket) if bucket.exists() else None
        same = sj.session_done_items(sid, bucket) if bucket.exists() else []
        expected, report = sj.merge_carried_forward_with_report(
            [s for s in next_steps], [d for d in done], previous, same_session_done=same
        )
        if not (done or next_steps):
            done = ["something"]
            expected, report = sj.merge_carried_forward_with_report(
                list(next_steps), done, previous, same_session_done=same
            )
        w = store.journal.write(
            focus="",
            done=done,
            next_steps=next_steps,
            session_id=sid,
            timestamp="2026-02-01T00:00:00+00:00",
        )
        # our bound marker names our own command; everything else is identical
        norm = [s.split("; recall_journal")[0] for s in expected]
        assert [s.split("; `recall-sqlite")[0] for s in w.entry.next_steps] == norm
        assert (
            w.carry.carried,
            w.carry.retired_by_done,
            w.carry.retired_earlier,
            w.carry.withheld,
        ) == (report.carried, report.retired_by_done, report.retired_earlier, report.withheld)
