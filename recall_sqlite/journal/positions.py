"""Journal positions as hosts give them to cursors and summaries: an insertion seq (0 =
before everything) or an entry id, checked against this workspace and the journal's end."""

from __future__ import annotations

from ..checks import parse_entry_id, require_int
from ..context import StoreContext
from ..db import as_int
from ..errors import InvalidInputError, UnknownEntryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection


def journal_end(conn: Connection) -> int:
    """The highest position there is: the last insertion seq of the whole journal. Any
    entry still to come gets a larger one (AUTOINCREMENT never reuses)."""
    return as_int(
        conn.execute("SELECT coalesce(max(seq), 0) FROM journal_entries").fetchall()[0][0]
    )


def resolve_position(
    conn: Connection,
    ctx: StoreContext,
    value: object,
    *,
    what: str,
    branch: str | None = None,
    current: int | None = None,
) -> int:
    """A position given as an int (a seq, 0 = before everything) or as an entry id (that
    entry's seq; with `branch`, the entry must be on it). An int is 0, `current` (where a
    cursor already stands), or the position of one of this workspace's entries: never
    beyond the journal's end, never a position of another workspace's journal in a shared
    database (its seqs interleave with this one's)."""
    if isinstance(value, str):
        raw = parse_entry_id(value)
        rows = conn.execute(
            "SELECT seq, branch FROM journal_entries WHERE id = ? AND workspace_id = ?",
            (raw, ctx.workspace_pk),
        ).fetchall()
        if not rows:
            raise UnknownEntryError(f"{what}: no entry {value} in this workspace")
        seq, entry_branch = as_int(rows[0][0]), str(rows[0][1])
        if branch is not None and entry_branch != branch:
            raise UnknownEntryError(
                f"{what}: entry {value} is on branch {entry_branch!r}, not {branch!r}"
            )
        return seq
    position = require_int(what, value, minimum=0)
    # This workspace's end, not the file's: on a shared database another workspace's
    # positions are not this one's to use, and the message must not reveal how far the
    # journal of another workspace goes.
    end = as_int(
        conn.execute(
            "SELECT coalesce(max(seq), 0) FROM journal_entries WHERE workspace_id = ?",
            (ctx.workspace_pk,),
        ).fetchall()[0][0]
    )
    if position > end:
        raise InvalidInputError(
            f"{what} {position} is beyond the end of this workspace's journal ({end}): "
            "entries still to come would be marked read"
        )
    if position in (0, current):
        return position
    ours = conn.execute(
        "SELECT 1 FROM journal_entries WHERE seq = ? AND workspace_id = ?",
        (position, ctx.workspace_pk),
    ).fetchall()
    if not ours:
        # The same words whether the seq is another workspace's or nobody's (forgotten):
        # nothing about another workspace's journal shows through.
        raise InvalidInputError(
            f"{what} {position} is not the position of an entry of this workspace's journal"
            " (positions are entries' `position`s, or a result's next_position)"
        )
    return position
