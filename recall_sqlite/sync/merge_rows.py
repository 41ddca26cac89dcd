"""A pull's new entry versions written into this store: through the schema's own per-row
insert (its head trigger) or through journal/bulk.py (the trigger replayed once for the
batch). Both leave the same rows, seqs, heads, counts and vector generations
(tests/unit/sync/test_sync_merge_rows.py holds it); bulk.py is faster from two rows on."""

from __future__ import annotations

from collections.abc import Sequence

from ..journal import codec
from ..journal.bulk import bulk_insert

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection, SQLiteValue

# bulk.py from this many rows, whatever their sessions: its staged insert is faster than
# the trigger path from two rows on, for versions that start a session and for versions
# that beat a stored head alike (bench/merge_paths.py; bench/RESULTS.md, row 'merge: row
# or bulk path').
BULK_MIN_ROWS = 2
_HELD_SQL = "SELECT 1 FROM journal_entries WHERE workspace_id = ? AND id = ?"
_WS, _ID = (codec.ROW_COLUMNS.index(n) for n in ("workspace_id", "id"))


def store_versions(conn: Connection, rows: Sequence[Sequence[SQLiteValue]]) -> int:
    """Insert rows (codec.ROW_COLUMNS order, one workspace, none forgotten here: the
    caller has left those out inside this same write transaction); how many were stored.
    A row whose id is stored already (by another process since the caller read) is left
    out, and costs no seq either way."""
    if len(rows) >= BULK_MIN_ROWS:
        return sum(1 for s in bulk_insert(conn, rows).values() if s.created)
    stored = 0
    for r in rows:
        # (The schema's INSERT ... ON CONFLICT DO NOTHING would burn a seq on a stored id.)
        if not conn.execute(_HELD_SQL, (r[_WS], r[_ID])).fetchall():
            stored += len(conn.execute(codec.INSERT_SQL, r).fetchall())
    return stored
