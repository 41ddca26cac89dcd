"""A pull's new entry versions written into this store: through the schema's own per-row
insert (its head trigger) or through journal/bulk.py (the trigger replayed once for the
batch). Both leave the same rows, seqs, heads, counts and vector generations
(tests/unit/sync/test_sync_merge_rows.py holds it); which is faster depends on how many
rows there are and on how many of them add a version to a session stored here (each of
those demotes a stored head: a statement of its own in either path, so bulk.py gains on
them only in a large batch). bench/RESULTS.md, row 'merge: row or bulk path'."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..journal import codec
from ..journal.bulk import bulk_insert
from ..journal.codec import ROW_COLUMNS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection, SQLiteValue

# bulk.py from this many rows that start a session here (or have none) ...
BULK_MIN_ROWS = 128
# ... or from this many rows in all, whatever their sessions (measured break-evens).
BULK_MIN_ANY = 2048

_WS, _SID = ROW_COLUMNS.index("workspace_id"), ROW_COLUMNS.index("session_id")


def store_versions(conn: Connection, rows: Sequence[Sequence[SQLiteValue]]) -> int:
    """Insert rows (codec.ROW_COLUMNS order, one workspace, none stored or forgotten here:
    the caller has left those out inside this same write transaction); how many were
    stored."""
    if not rows:
        return 0
    if len(rows) >= BULK_MIN_ANY or (
        len(rows) >= BULK_MIN_ROWS and _starting(conn, rows) >= BULK_MIN_ROWS
    ):
        return sum(1 for s in bulk_insert(conn, rows).values() if s.created)
    stored = 0
    for r in rows:
        stored += len(conn.execute(codec.INSERT_SQL, r).fetchall())
    return stored


def _starting(conn: Connection, rows: Sequence[Sequence[SQLiteValue]]) -> int:
    """How many of the rows have no session, or one this store holds no version of."""
    sids = sorted({str(r[_SID]) for r in rows if r[_SID] != ""})
    held = {
        str(s)
        for (s,) in conn.execute(
            "SELECT j.value FROM json_each(?) j WHERE EXISTS (SELECT 1 FROM journal_entries e"
            " WHERE e.workspace_id = ? AND e.session_id = j.value)",
            (json.dumps(sids), rows[0][_WS]),
        )
    }
    return sum(1 for r in rows if r[_SID] not in held)
