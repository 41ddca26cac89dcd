"""The two orders of the journal, defined once: which version of a session reads show (the
dedup order) and how sessions at one instant are ordered (the tie order).

* **Dedup** (synapt 0.30.0's `_dedup_entries` with its `_entry_richness`): of the versions
  of one session, the first in `DEDUP` wins: non-auto before auto, then the newest, then
  the one with more of focus/done/decisions/next_steps, then the one stored first. Entries
  without a session id are never merged: each is its own head.
* **Ties**: reads order by instant, newest first; sessions at the same instant by their
  `sid_order`, the first stored seq of the session; an entry without a session after every
  session (its seq + NO_SESSION_ORDER).

Everything that applies the orders is made from these definitions or held to them by a
test: derived.py's window queries use `order_by()`, journal/bulk.py's replay compares
`py_key()`s, and tests/test_order.py checks that schema.sql's triggers say `beats()` and
`order_by()`, and agree with derived.py on random histories."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

# (column, ascending): the dedup order, best first. `seq` breaks a full tie.
DEDUP: Final = (("auto", True), ("ts_us", False), ("rich", False), ("seq", True))
# The tie order column of sessions at one instant, and what a session-less entry adds to
# its seq so it sorts after every session.
TIE_COLUMN: Final = "sid_order"
NO_SESSION_ORDER: Final = 1 << 60


def order_by(alias: str = "") -> str:
    """The dedup order as an ORDER BY list, best first."""
    a = f"{alias}." if alias else ""
    return ", ".join(f"{a}{col}" + ("" if asc else " DESC") for col, asc in DEDUP)


def beats(new: str = "NEW.", old: str = "") -> str:
    """SQL that is true when the version `new` strictly precedes `old` in the dedup order,
    leaving out the final tie-break: a full tie keeps the version stored first, and a
    version being inserted is always stored after the ones it is compared with."""
    keys = DEDUP[:-1]
    clauses: list[str] = []
    for i, (col, asc) in enumerate(keys):
        same = [f"{new}{c} = {old}{c}" for c, _ in keys[:i]]
        cmp = f"{new}{col} {'<' if asc else '>'} {old}{col}"
        clauses.append(" AND ".join([*same, cmp]))
    return " OR ".join(f"({c})" for c in clauses)


def py_key(auto: Any, ts_us: Any, rich: Any) -> tuple[int, int, int]:
    """The dedup order of a version as a Python sort key (smaller is better), without the
    final tie-break (the replay keeps the earlier version on a full tie, as the trigger)."""
    return (int(auto), -int(ts_us), -int(rich))


# How reads list entries: newest first, sessions at one instant in their tie order.
READ_ORDER: Final = f"ts_us DESC, {TIE_COLUMN}"
