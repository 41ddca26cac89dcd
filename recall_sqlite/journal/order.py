"""The two orders of the journal, defined once: which version of a session reads show (the
dedup order) and how sessions at one instant are ordered (the tie order).

* **Dedup** (synapt 0.30.0's `_dedup_entries` with its `_entry_richness`): of the versions
  of one session, the first in `DEDUP` wins: non-auto before auto, then the newest, then
  the one with more of focus/done/decisions/next_steps, then the smaller id. Entries
  without a session id are never merged: each is its own head.
* **Ties**: reads order by instant, newest first; sessions at the same instant by their
  `sid_order`, a hash of the session id (journal/codec.py `tie_key`); an entry without a
  session after every session (NO_SESSION_ORDER plus a hash of its id).

Both end in content, never in a local insertion order, so every store that holds the same
versions (another machine's after a pull, a re-import in another order) shows the same
heads in the same order. synapt breaks both last ties by file order instead (the earlier
line wins, the session first seen first): the two differ only between versions or sessions
at the very same microsecond.

Everything that applies the orders is made from these definitions or held to them by a
test: derived.py's window queries use `order_by()`, journal/bulk.py's replay compares
`py_key()`s, and tests/unit/journal/test_order.py checks that schema.sql's triggers say
`beats()` and `order_by()`, and that all of them agree on random histories."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

# (column, ascending): the dedup order, best first. The id makes it total.
DEDUP: Final = (("auto", True), ("ts_us", False), ("rich", False), ("id", True))
# The tie order column of sessions at one instant, and the bit that puts an entry without
# a session after every session.
TIE_COLUMN: Final = "sid_order"
NO_SESSION_ORDER: Final = 1 << 62


def order_by(alias: str = "") -> str:
    """The dedup order as an ORDER BY list, best first."""
    a = f"{alias}." if alias else ""
    return ", ".join(f"{a}{col}" + ("" if asc else " DESC") for col, asc in DEDUP)


def beats(new: str = "NEW.", old: str = "") -> str:
    """SQL that is true when the version `new` strictly precedes `old` in the dedup order."""
    keys = DEDUP
    clauses: list[str] = []
    for i, (col, asc) in enumerate(keys):
        same = [f"{new}{c} = {old}{c}" for c, _ in keys[:i]]
        cmp = f"{new}{col} {'<' if asc else '>'} {old}{col}"
        clauses.append(" AND ".join([*same, cmp]))
    return " OR ".join(f"({c})" for c in clauses)


def py_key(auto: int, ts_us: int, rich: int, entry_id: bytes) -> tuple[int, int, int, bytes]:
    """The dedup order of a version as a Python sort key (smaller is better)."""
    return (int(auto), -int(ts_us), -int(rich), bytes(entry_id))


# How reads list entries: newest first, sessions at one instant in their tie order.
READ_ORDER: Final = f"ts_us DESC, {TIE_COLUMN}"
# The same order reversed, as the head indexes of schema.sql hold it: reads walk them
# backwards, and ascending keys fill their pages (new heads land at the right end).
HEAD_INDEX_ORDER: Final = f"ts_us, {TIE_COLUMN} DESC"
