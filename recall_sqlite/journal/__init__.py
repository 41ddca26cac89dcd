"""The journal family: entry versions with synapt 0.30.0's semantics.

codec.py      the one definition of an entry row (canonical JSON, ids, columns, decoding)
order.py      the dedup order and the tie order of sessions, defined once
entry.py      JournalEntry: validation, and building entries from rows
journal.py    Journal (`store.journal`): append, read, latest, pending, write, search, forget
host.py       JournalHost (`store.journal.host`): what synapt's adapter needs beyond those
heads.py      the statements both share: newest n heads, the previous meaningful, done lists
results.py    what its calls return (with scope, total, elsewhere: see scope.py)
bulk.py       batch inserts with the state row-by-row inserts leave
carry.py      carry-forward of unresolved next steps
forget.py     forget: remove entry versions and every byte of them
positions.py  journal positions (insertion seqs) as cursors and summaries take them
deferred.py   the head indexes a bulk load builds after its rows
wake.py       what synapt's session start reads, in a few index steps (the activated hook)
"""

from __future__ import annotations

from .carry import CarryReport
from .codec import is_meaningful, rich_count
from .entry import JournalEntry
from .results import AppendResult, PendingResult, ReadResult, WriteResult

TYPE_CHECKING = False


def __getattr__(name: str) -> object:
    # Journal, the one name that needs the store, is loaded on first use (PEP 562): the
    # legacy import's worker processes read lines with the codec and never open a store.
    if name != "Journal":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .journal import Journal

    globals()["Journal"] = Journal
    return Journal


if TYPE_CHECKING:
    from .journal import Journal as Journal

__all__ = [
    "AppendResult",
    "CarryReport",
    "Journal",
    "JournalEntry",
    "PendingResult",
    "ReadResult",
    "WriteResult",
    "is_meaningful",
    "rich_count",
]
