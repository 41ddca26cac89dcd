"""A pull proves every arriving version against its id. Plain rows are hashed as they are
(merge._plain_content) and everything else goes through the journal's validator: the two
must accept exactly the same rows with the same content."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from recall_sqlite import limits
from recall_sqlite.errors import RecallError
from recall_sqlite.journal import codec
from recall_sqlite.journal.entry import JournalEntry, decode_lists
from recall_sqlite.sync import merge
from recall_sqlite.timestamps import parse_timestamp

if TYPE_CHECKING:
    from recall_sqlite.db import Row

LIMIT = 96  # bytes per field, small enough that generated text crosses it

ODD_TEXT = ("", "plain", "a\x00b", "\ud800", "é" * 30, "x" * (LIMIT + 1), "\U0001f600" * 25)
texts = st.one_of(st.text(max_size=40), st.sampled_from(ODD_TEXT))
not_text = st.one_of(st.integers(-2, 3), st.none(), st.floats(allow_nan=False))
values = st.one_of(texts, not_text)
timestamps = st.one_of(
    st.sampled_from(
        (
            "2026-03-01T10:00:00.123456+00:00",
            "2026-03-01T10:00:00+00:00",
            "2026-02-30T10:00:00+00:00",  # no such day
            "2026-03-01 10:00:00",
            "2026-03-01T10:00:00Z",
            "not a time",
            "",
        )
    ),
    values,
)
TS = "2026-03-01T10:00:00+00:00"
EMPTY: tuple[Any, ...] = ([], [], [], [], [], None)
lists = st.one_of(st.lists(texts, max_size=4), st.lists(st.one_of(texts, not_text), max_size=4))
extras: st.SearchStrategy[dict[str, Any] | None] = st.one_of(
    st.none(), st.just({}), st.dictionaries(st.text(max_size=5), texts, max_size=2)
)


def _row(ts: object, scalars: list[Any], flags: list[Any], lst: list[Any]) -> list[Any]:
    """A peer's row in codec.SELECT_COLUMNS order, with a placeholder id."""
    sid, branch, focus, griptree, agent = scalars
    auto, enriched, repair = flags
    return [
        1,
        b"\0" * 16,
        1,
        sid,
        branch,
        ts,
        focus,
        auto,
        enriched,
        repair,
        griptree,
        agent,
        json.dumps(lst),
    ]


def _unchecked_id(ts: Any, scalars: list[Any], flags: list[Any], lst: tuple[Any, ...]) -> bytes:
    sid, branch, focus, griptree, agent = scalars
    done, decisions, next_steps, files, git_log, extra = lst
    digest, _, _ = codec.encode(
        ts,
        parse_timestamp(ts),
        sid,
        branch,
        focus,
        done,
        decisions,
        next_steps,
        files,
        git_log,
        bool(flags[0]),
        bool(flags[1]),
        griptree,
        agent,
        bool(flags[2]),
        extra or None,
    )
    return digest


def _slow(row: list[Any], rid: bytes) -> Row | None:
    """The journal validator's verdict on a row: its content, or None."""
    (e,) = JournalEntry.from_rows([row], str)
    return merge._verified(e, rid)


@pytest.fixture(autouse=True)
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "_field_limit", [LIMIT])


@settings(max_examples=400, deadline=None)
@given(
    ts=timestamps,
    scalars=st.one_of(
        st.lists(texts, min_size=5, max_size=5), st.lists(values, min_size=5, max_size=5)
    ),
    flags=st.lists(st.one_of(st.integers(-1, 2), st.none(), texts), min_size=3, max_size=3),
    lst=st.tuples(lists, lists, lists, lists, lists, extras),
    genuine=st.booleans(),
)
# What the plain path must send to the validator, each with its true hash (a lying peer).
@example(ts=TS, scalars=["s", "main", "a\x00b", "", ""], flags=[0, 0, 0], lst=EMPTY, genuine=True)
@example(
    ts=TS,
    scalars=["s", "main", "ok", "", ""],
    flags=[0, 0, 0],
    lst=(["\ud800"], [], [], [], [], None),
    genuine=True,
)
@example(
    ts=TS,
    scalars=["s", "main", "x" * (LIMIT + 1), "", ""],
    flags=[0, 0, 0],
    lst=EMPTY,
    genuine=True,
)
@example(ts=TS, scalars=["s", 7, "ok", "", ""], flags=[0, 0, 0], lst=EMPTY, genuine=True)
@example(
    ts=TS,
    scalars=["s", "main", "ok", "", ""],
    flags=[0, 0, 0],
    lst=([], [], [], [], [], {"k": "v"}),
    genuine=True,
)
@example(
    ts="2026-03-01T10:00:00+00:00",
    scalars=["s", "main", "ok", "", ""],
    flags=[0, 1, 0],
    lst=(["a"], [], [], ["f.py"], [], None),
    genuine=True,
)
def test_plain_rows_are_proven_as_the_validator_proves_them(
    ts: object, scalars: list[Any], flags: list[Any], lst: tuple[Any, ...], genuine: bool
) -> None:
    row = _row(ts, scalars, flags, list(lst))
    # The id a peer would give this content, hashed without asking whether it is valid:
    # a lying peer's rows carry the right hash of content the validator refuses.
    try:
        true_id = _unchecked_id(ts, scalars, flags, lst)
    except (RecallError, ValueError, TypeError, AttributeError):
        true_id = b"\1" * 16
    rid = true_id if genuine else b"\2" * 16
    row[1] = rid
    (decoded,) = decode_lists([row])
    fast = merge._proven(tuple(row), rid, decoded, limits.max_field_bytes(), {})
    assert fast == _slow(row, rid)


def test_a_plain_row_is_hashed_without_the_validator(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path is taken for a plain row (so the test above compares two paths)."""
    row = _row(
        "2026-03-01T10:00:00+00:00",
        ["s", "main", "ok", "", ""],
        [0, 0, 0],
        [["a"], [], [], [], [], None],
    )
    (e,) = JournalEntry.from_rows([row], str)
    rid, content = e.encode()
    row[1] = rid
    monkeypatch.setattr(merge, "_verified", None)  # called: a TypeError
    (decoded,) = decode_lists([row])
    assert merge._proven(tuple(row), rid, decoded, limits.max_field_bytes(), {}) == content
