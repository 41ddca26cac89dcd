"""A pull's new entry versions written into this store: few through the schema's own
per-row insert (its head trigger), many through journal/bulk.py (the trigger replayed once
for the batch). Both leave the same rows, seqs, heads, counts and vector generations
(tests/unit/sync/test_sync_merge_rows.py holds it); which is faster depends on the batch
size alone (bench/RESULTS.md, row 'merge: row or bulk path')."""

from __future__ import annotations

from collections.abc import Sequence

from ..journal import codec
from ..journal.bulk import bulk_insert

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection, SQLiteValue

# From this many new versions on, a merge writes through bulk.py (measured break-even).
BULK_MIN_ROWS = 24


def store_versions(
    conn: Connection, rows: Sequence[Sequence[SQLiteValue]], *, bulk: bool | None = None
) -> int:
    """Insert rows (codec.ROW_COLUMNS order, one workspace, none stored or forgotten here:
    the caller has left those out inside this same write transaction); how many were
    stored. `bulk` forces one path (the tests compare them; None: chosen by size)."""
    if not rows:
        return 0
    if bulk if bulk is not None else len(rows) >= BULK_MIN_ROWS:
        return sum(1 for s in bulk_insert(conn, rows).values() if s.created)
    stored = 0
    for r in rows:
        stored += len(conn.execute(codec.INSERT_SQL, r).fetchall())
    return stored
