"""The journal family: entry versions with synapt 0.30.0's semantics.

codec.py     the one definition of an entry row (fields, canonical JSON, ids, columns)
entry.py     JournalEntry: validation, and building entries from rows
family.py    Journal (`store.journal`): append, read, latest, pending, write
results.py   what its calls return (scope, total, elsewhere: never a silent partial answer)
bulk.py      batch inserts with the state row-by-row inserts leave
carry.py     carry-forward of unresolved next steps
positions.py journal positions (insertion seqs) as cursors and summaries take them
"""

from __future__ import annotations

from .carry import CarryReport
from .entry import JournalEntry
from .family import Journal
from .results import AppendResult, Elsewhere, PendingResult, ReadResult, Scope, WriteResult

__all__ = [
    "AppendResult",
    "CarryReport",
    "Elsewhere",
    "Journal",
    "JournalEntry",
    "PendingResult",
    "ReadResult",
    "Scope",
    "WriteResult",
]
