"""The dedup order and the tie order (journal/order.py) are the ones every writer applies:
the insert trigger of schema.sql, the bulk path and derived.py's definition agree with
`py_key` on random histories, and reads list sessions by instant, then tie order."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import JournalEntry, open_store
from recall_sqlite.derived import check
from recall_sqlite.journal import order
from recall_sqlite.journal.codec import session_tie
from recall_sqlite.journal.journal import BULK_MIN_ROWS
from recall_sqlite.migrations import schema_sql
from recall_sqlite.store import context_of
from tests.conftest import make_workspace

VERSION = st.fixed_dictionaries(
    {
        "session_id": st.sampled_from(["a", "b", ""]),
        "minute": st.integers(0, 3),
        "auto": st.booleans(),
        "focus": st.sampled_from(["", "f"]),
        "done": st.sampled_from([[], ["d"]]),
        "next_steps": st.sampled_from([[], ["n"]]),
        "tag": st.integers(0, 10**6),  # keeps versions distinct (and their ids apart)
    }
)


def _entry(v: dict[str, Any]) -> dict[str, Any]:
    return {
        "timestamp": f"2026-01-01T10:0{v['minute']}:00Z",
        "session_id": v["session_id"],
        "auto": v["auto"],
        "focus": v["focus"],
        "done": v["done"],
        "next_steps": v["next_steps"],
        "files_modified": [f"f{v['tag']}"],
    }


def _expected_heads(versions: list[dict[str, Any]]) -> set[int]:
    """Insertion indexes of the versions reads show, by order.py's definition alone."""
    best: dict[str, tuple[tuple[int, int, int, bytes], int]] = {}
    heads: set[int] = set()
    for i, v in enumerate(versions):
        e = _entry(v)
        rich = sum(bool(e[f]) for f in ("focus", "done", "next_steps"))
        entry_id = JournalEntry.from_mapping(e).encode()[0]
        key = order.py_key(v["auto"], v["minute"], rich, entry_id)
        if not v["session_id"]:
            heads.add(i)
        elif v["session_id"] not in best or key < best[v["session_id"]][0]:
            best[v["session_id"]] = (key, i)
    return heads | {i for _, i in best.values()}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(VERSION, min_size=1, max_size=BULK_MIN_ROWS + 8, unique_by=lambda v: v["tag"]))
def test_triggers_bulk_and_definition_pick_the_heads_py_key_picks(
    tmp_path_factory: Any, versions: list[dict[str, Any]]
) -> None:
    want = _expected_heads(versions)
    for bulk in (False, True):
        root = make_workspace(tmp_path_factory.mktemp("ws"))
        with open_store(root) as s:
            if bulk:
                got = s.journal.append_many([_entry(v) for v in versions])
            else:
                got = [s.journal.append(_entry(v)) for v in versions]
            seqs = [r.seq for r in got]
            shown = {
                int(seq)
                for (seq,) in context_of(s).db.query(
                    "SELECT seq FROM journal_entries WHERE head_ws = 1"
                )
            }
            assert shown == {seqs[i] for i in want}, bulk
            with context_of(s).db.read() as conn:
                assert check(conn) == [], bulk


def test_order_by_is_the_dedup_order_best_first() -> None:
    assert order.order_by() == "auto, ts_us DESC, rich DESC, id"
    assert order.order_by("e") == "e.auto, e.ts_us DESC, e.rich DESC, e.id"
    assert order.READ_ORDER == "ts_us DESC, sid_order"
    assert order.HEAD_INDEX_ORDER == "ts_us, sid_order DESC"


def test_beats_is_the_strict_dedup_order() -> None:
    import apsw

    conn = apsw.Connection(":memory:")
    ids = (b"\x00" * 16, b"\x01" + b"\x00" * 15)
    values = [(a, t, r, i) for a in (0, 1) for t in (0, 1) for r in (0, 1, 2) for i in ids]
    expr = order.beats("n.", "o.")
    for new in values:
        for old in values:
            (got,) = conn.execute(
                f"SELECT {expr} FROM (SELECT ? AS auto, ? AS ts_us, ? AS rich, ? AS id) n,"
                " (SELECT ? AS auto, ? AS ts_us, ? AS rich, ? AS id) o",
                (*new, *old),
            ).fetchall()[0]
            assert bool(got) == (order.py_key(*new) < order.py_key(*old)), (new, old)


def _normalised(sql: str) -> str:
    return " ".join(re.sub(r"--[^\n]*", "", sql).split())


def test_schema_sql_says_the_definition() -> None:
    """The triggers of schema.sql are made from order.py: the demotions of the insert
    trigger say `beats()`, the promotions of the delete trigger order by `order_by()`, and
    the head indexes hold the read order (reversed: they are walked backwards)."""
    schema = _normalised(schema_sql())
    assert schema.count(f"AND ({_normalised(order.beats())});") == 2
    assert schema.count(f"ORDER BY {order.order_by()} LIMIT 1") == 2
    assert schema.count(f"{order.HEAD_INDEX_ORDER}) WHERE head_") == 4


def test_sessions_at_one_instant_follow_their_tie_order(tmp_path: Any) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        for sid in ("s1", "s2", "s3", "s4"):
            s.journal.append({"timestamp": "2026-01-01T10:00:00Z", "session_id": sid, "focus": sid})
        s.journal.append({"timestamp": "2026-01-01T10:00:00Z", "focus": "no session"})
        got = [e.focus for e in s.journal.read(10).entries]
    # A hash of the session id, whatever the insertion order; sessions before the rest.
    want = sorted(("s1", "s2", "s3", "s4"), key=session_tie)
    assert got == [*want, "no session"]
