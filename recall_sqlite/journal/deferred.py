"""The journal's head indexes, which an import asked to (`import --defer-indexes`) builds
after its rows.

The four head indexes (the walks of "newest n" per worktree and workspace, with and without
a branch) and the search's index of the shown versions change with every head: a new
version enters them and the one it beats leaves. Built once after the rows (CREATE INDEX
sorts, then writes each page once) they cost less than kept current, but not by much since
a batch is staged (bench/RESULTS.md, row 'import: deferred indexes'), and while they are
missing the reads an agent makes at its session start walk the whole journal: so an import
keeps them current unless asked. Every other index stays current through any load: the
session index that the writes walk (the dedup trigger, bulk_insert's look-up of a
session's heads), the branch order that cursors walk and synapt's session-start indexes.

While they are missing every answer is still right (no read depends on an index for its
result) but reads of the newest entries walk the whole journal, a search reads each match's
row, and the statements that name one of them (wake.py's unclean-end check, the search) run
without their hint. An import that is stopped builds them on its way out; one that is
killed leaves them to its next run or to `doctor --repair`, and doctor says which are
missing (doctor/schema.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import apsw

from ..migrations import schema_objects

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Bindings, Connection, Cursor

    from ..db import Executes

# The head indexes (schema.sql), in its order.
DEFERRED = (
    "journal_heads_wt",
    "journal_heads_wt_branch",
    "journal_heads_ws",
    "journal_heads_ws_branch",
    "journal_heads_by_seq",
)


@functools.cache
def statements() -> dict[str, str]:
    """name -> CREATE INDEX statement (schema.sql's) of every index a load defers."""
    made = {
        name: str(sql)
        for _, name, sql in schema_objects("type = 'index' AND tbl_name = 'journal_entries'")
    }
    return {name: made[name] for name in DEFERRED}


def missing(conn: Connection) -> list[str]:
    """The deferred indexes the store lacks, in DEFERRED's order."""
    have = {
        str(n)
        for (n,) in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'journal_entries'"
        )
    }
    return [n for n in statements() if n not in have]


def drop(conn: Connection) -> None:
    """Drop every deferred index, inside the caller's write transaction."""
    for name in statements():
        conn.execute(f'DROP INDEX IF EXISTS "{name}"')


def build(conn: Connection) -> list[str]:
    """Make every missing deferred index from schema.sql, inside the caller's write
    transaction; the names made."""
    made = missing(conn)
    made_by = statements()
    for name in made:
        conn.execute(made_by[name])
    return made


def is_missing_index(exc: BaseException) -> bool:
    """Whether a statement failed because an index it names is not there."""
    return isinstance(exc, apsw.SQLError) and "no such index" in str(exc)


_T = TypeVar("_T")


def hinted(conn: Connection, look: Callable[[Executes], _T]) -> _T:
    """`look(conn)`; where an index its statements name (`INDEXED BY`) is missing, as one
    of these is while a load has yet to build it, the same statements again without their
    hints, in the same snapshot."""
    try:
        return look(conn)
    except apsw.SQLError as exc:
        if not is_missing_index(exc):
            raise
        return look(_Unhinted(conn))


class _Unhinted:
    """A connection whose statements run without their `INDEXED BY` clauses."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Bindings | None = ()) -> Cursor:
        import re

        return self._conn.execute(re.sub(r" INDEXED BY \w+", "", sql), params)
