"""The journal's read indexes, which a bulk load builds after its rows.

Ten of journal_entries' indexes serve reads only: the head walks, the cursors' branch
order and the session-start lookups. Kept current row by row, they took a quarter of a
large legacy import; built once after the rows (CREATE INDEX sorts, then writes each page
once) they cost a few seconds. The index a write walks stays: the dedup trigger and
bulk_insert's look-up of a session's heads go through journal_by_session, and the UNIQUE
(workspace_id, id) index is the table's own.

While they are missing every answer is still right (no read depends on an index for its
result) but reads walk the whole table, and the session-start queries, which name their
indexes, run without them (wake.py). An import that is stopped builds them on its way out;
one that is killed leaves them to its next run or to `doctor --repair`, and doctor says
which are missing (doctor/schema.py)."""

from __future__ import annotations

import functools
from typing import Any

import apsw

from ..migrations import schema_sql

# The one index of the journal that writes walk: no load drops it.
WRITE_PATH = "journal_by_session"


@functools.cache
def read_indexes() -> dict[str, str]:
    """name -> CREATE INDEX statement of every read index, in schema.sql's order."""
    conn = apsw.Connection(":memory:")
    try:
        conn.execute(schema_sql())
        return {
            str(name): str(sql)
            for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_schema WHERE type = 'index'"
                " AND tbl_name = 'journal_entries' AND sql IS NOT NULL AND name <> ?",
                (WRITE_PATH,),
            )
        }
    finally:
        conn.close()


def missing(conn: Any) -> list[str]:
    """The read indexes the store lacks, in schema.sql's order."""
    have = {
        str(n)
        for (n,) in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'journal_entries'"
        )
    }
    return [n for n in read_indexes() if n not in have]


def drop(conn: Any) -> None:
    """Drop every read index, inside the caller's write transaction."""
    for name in read_indexes():
        conn.execute(f'DROP INDEX IF EXISTS "{name}"')


def build(conn: Any) -> list[str]:
    """Make every missing read index from schema.sql, inside the caller's write
    transaction; the names made."""
    made = missing(conn)
    statements = read_indexes()
    for name in made:
        conn.execute(statements[name])
    return made


def is_missing_index(exc: BaseException) -> bool:
    """Whether a statement failed because an index it names is not there."""
    return isinstance(exc, apsw.SQLError) and "no such index" in str(exc)
