"""The statements the journal's reads share with its host calls (journal.py, host.py): the
walk of a head index for "newest n", the previous meaningful head a write carries from,
and a session's done lists."""

from __future__ import annotations

from ..jsontext import loads
from ..memo import memo
from . import codec
from .entry import JournalEntry
from .order import READ_ORDER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from apsw import Connection

    from .. import scope
    from ..context import StoreContext
    from ..db import Row

ENTRY_COLUMNS = codec.select_list()


def walk(conn: Connection, k: scope.Keys, n: int) -> list[Row]:
    """The newest `n` heads of a scope, in read order."""
    params = k.params()
    params["n"] = n
    rows: list[Row] = conn.execute(_walk_sql(k.shown_sql("")), params).fetchall()
    return rows


@memo
def _walk_sql(shown: str) -> str:
    """The "newest n" statement of one scope shape: a walk of one partial head index."""
    return (
        f"SELECT {ENTRY_COLUMNS} FROM journal_entries WHERE {shown} ORDER BY {READ_ORDER} LIMIT :n"
    )


def previous_meaningful(
    conn: Connection, ctx: StoreContext, current_session_id: str
) -> JournalEntry | None:
    """The newest meaningful head of the current worktree in another session."""
    params: list[Any] = [ctx.workspace_pk, ctx.worktree_pk]
    skip = ""
    # An empty current id excludes nothing (synapt skips only a named session).
    if current_session_id:
        skip = " AND session_id <> ?"
        params.append(current_session_id)
    sql = (
        f"SELECT {ENTRY_COLUMNS} FROM journal_entries"
        " WHERE workspace_id = ? AND worktree_id = ?"
        f" AND head_wt = 1 AND meaningful = 1{skip} ORDER BY {READ_ORDER} LIMIT 1"
    )
    rows = conn.execute(sql, params).fetchall()
    return JournalEntry.from_rows(rows[:1], ctx.worktree_key_of)[0] if rows else None


def done_lists(
    conn: Connection, ctx: StoreContext, session_ids: Sequence[str], all_worktrees: bool
) -> list[list[str]]:
    """The done list of every stored version of the sessions, oldest first: one statement
    for all of them (pending steps ask for a window of 20 sessions at each session start)."""
    if not session_ids:
        return []
    marks = ", ".join("?" * len(session_ids))
    sql = f"SELECT done FROM journal_entries WHERE workspace_id = ? AND session_id IN ({marks})"
    params: list[Any] = [ctx.workspace_pk, *session_ids]
    if not all_worktrees:
        sql += " AND worktree_id = ?"
        params.append(ctx.worktree_pk)
    return [loads(done) for (done,) in conn.execute(sql + " ORDER BY seq", params)]
