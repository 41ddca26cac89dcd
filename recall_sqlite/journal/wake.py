"""What synapt 0.30.0's session start reads of the journal, from a handful of index steps
instead of every stored version (the activated hook: recall_sqlite/synapt/startup.py).

synapt's `generate_startup_context` reads all versions, deduplicates them, and then looks at
very little: the three newest rich heads (sorted by the timestamp's *text*, stable), how
many rich heads there are, the newest authored head (not auto, with content), and, on a
feature branch, the newest version of that branch; when a session is starting, also the
authored heads its unclean-end check can see. `wake` returns just those versions, each set
in the order synapt would meet it (positions, and sessions in the order they first appear
in the worktree), so synapt's own code computes the same answer from them as from the whole
history; `rich_heads` is the one figure it cannot (its count of the whole list).

Every query is a walk of a partial index of schema.sql (journal_wake_*), on the current
worktree, as synapt's bucket is, and names it: the planner would otherwise take a head
index and sort. Where an import has yet to build the head index that the unclean-end check
names (deferred.py), the same queries run unhinted."""

from __future__ import annotations

import json

from .._record import Frozen
from ..db import as_int
from . import codec, deferred

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from apsw import SQLiteValue

    from ..context import StoreContext
    from ..db import Executes, Row
    from .entry import JournalEntry

    # Rows of journal_entries (codec.select_list) into entries, in their order.
    Decode = Callable[[list[Row]], list[JournalEntry]]

_COLUMNS = codec.select_list()
_SEQ, _SID = codec.SELECT_INDEX["seq"], codec.SELECT_INDEX["session_id"]
_TS = codec.SELECT_INDEX["timestamp"]
_AUTHORED = "auto = 0 AND (rich > 0 OR files_modified <> '[]')"
# The branches whose newest version synapt does not look up (no branch, and these); the
# partial index journal_wake_branch leaves out the same ones, in the same words.
TRUNKS = ("main", "master")
_LOOKED_UP = f"branch NOT IN ({', '.join(repr(b) for b in ('', *TRUNKS))})"
_HERE = "workspace_id = :ws AND worktree_id = :wt"
_RICH = (
    f"SELECT {_COLUMNS} FROM journal_entries INDEXED BY journal_wake_rich"
    f" WHERE {_HERE} AND head_wt = 1 AND rich > 0 ORDER BY timestamp DESC LIMIT :n"
)
_RICH_AT = (
    f"SELECT {_COLUMNS} FROM journal_entries INDEXED BY journal_wake_rich"
    f" WHERE {_HERE} AND head_wt = 1 AND rich > 0 AND timestamp = :ts LIMIT :n"
)
_AUTHORED_TOP = (
    f"SELECT {_COLUMNS} FROM journal_entries INDEXED BY journal_wake_authored"
    f" WHERE {_HERE} AND head_wt = 1 AND {_AUTHORED} ORDER BY timestamp DESC LIMIT 1"
)
_BRANCH_TOP = (
    f"SELECT {_COLUMNS} FROM journal_entries INDEXED BY journal_wake_branch"
    f" WHERE {_HERE} AND branch = :br AND {_LOOKED_UP}"
    " ORDER BY timestamp DESC, seq DESC LIMIT 1"
)
_RICH_COUNT = (
    "SELECT (SELECT coalesce(sum(heads), 0) FROM journal_counts_wt WHERE"
    f" {_HERE}) - (SELECT count(*) FROM journal_entries INDEXED BY journal_wake_plain"
    f" WHERE {_HERE} AND head_wt = 1 AND rich = 0)"
)
_FIRST_SEEN = (
    "SELECT min(seq) FROM journal_entries INDEXED BY journal_by_session"
    " WHERE workspace_id = :ws AND session_id = :sid AND worktree_id = :wt"
)
# The unclean-end check (synapt's resume.detect_unclean_end) over the authored heads.
_OWN = (
    f"SELECT {_COLUMNS} FROM journal_entries INDEXED BY journal_by_session"
    f" WHERE workspace_id = :ws AND session_id = :sid AND worktree_id = :wt"
    f" AND head_wt = 1 AND {_AUTHORED}"
)
_SESSIONLESS_NEAR = (
    f"SELECT {_COLUMNS} FROM journal_entries INDEXED BY journal_wake_sessionless"
    f" WHERE {_HERE} AND session_id = '' AND {_AUTHORED} AND ts_us BETWEEN :lo AND :hi"
)
_SESSIONLESS_NEWEST = (
    f"SELECT {_COLUMNS} FROM journal_entries INDEXED BY journal_wake_sessionless"
    f" WHERE {_HERE} AND session_id = '' AND {_AUTHORED} AND ts_us = (SELECT max(ts_us)"
    " FROM journal_entries INDEXED BY journal_wake_sessionless"
    f" WHERE {_HERE} AND session_id = '' AND {_AUTHORED})"
)
_FOREIGN_NEWEST = (
    f"SELECT {_COLUMNS} FROM journal_entries INDEXED BY journal_heads_wt"
    f" WHERE {_HERE} AND head_wt = 1 AND {_AUTHORED} AND session_id NOT IN ('', :sid)"
    " AND ts_us = (SELECT ts_us FROM journal_entries INDEXED BY journal_heads_wt"
    f" WHERE {_HERE} AND head_wt = 1 AND {_AUTHORED} AND session_id NOT IN ('', :sid)"
    " ORDER BY ts_us DESC LIMIT 1)"
)
SHOWN = 3  # synapt's _WAKE_JOURNAL_ENTRY_LIMIT
# A group of rich heads tied at the third place is taken whole; a larger one is left to
# the full read (synapt's order among them is its dedup list's).
TIES_TAKEN = 64


class Wake(Frozen):
    """What synapt's session start needs of the current worktree's journal."""

    __slots__ = ("versions", "heads", "rich_heads", "complete")
    versions: list[JournalEntry]  # the versions its reads must see, in position order
    heads: list[JournalEntry]  # their heads, in the order synapt's dedup lists them
    rich_heads: int  # how many heads of the worktree are rich (what it counts)
    complete: bool  # False: too many rich heads tie; read the whole history instead

    def __init__(
        self,
        versions: list[JournalEntry],
        heads: list[JournalEntry],
        rich_heads: int,
        complete: bool,
    ) -> None:
        self._set(versions=versions, heads=heads, rich_heads=rich_heads, complete=complete)


def wake(ctx: StoreContext, branch: str, decode: Decode) -> Wake:
    """The versions synapt's session start looks at (see the module docstring); `branch`
    is the current branch (its newest version is taken on a branch that is not main or
    master, as synapt does); `decode` turns rows into JournalEntries."""
    keys = {"ws": ctx.workspace_pk, "wt": ctx.worktree_pk}

    def look(
        conn: Executes,
    ) -> tuple[list[Row], list[Row], SQLiteValue, dict[int, tuple[int, int]], bool]:
        rich: list[tuple[Any, ...]] = conn.execute(_RICH, {**keys, "n": SHOWN + 1}).fetchall()
        complete = True
        if len(rich) > SHOWN and rich[SHOWN - 1][_TS] == rich[SHOWN][_TS]:
            tied = conn.execute(
                _RICH_AT, {**keys, "ts": rich[SHOWN - 1][_TS], "n": TIES_TAKEN + 1}
            ).fetchall()
            complete = len(tied) <= TIES_TAKEN
            rich = [*rich[: SHOWN - 1], *tied]
        heads: list[tuple[Any, ...]] = [*rich, *conn.execute(_AUTHORED_TOP, keys).fetchall()]
        versions = list(heads)
        if branch and branch not in TRUNKS:
            versions += conn.execute(_BRANCH_TOP, {**keys, "br": branch}).fetchall()
        count = conn.execute(_RICH_COUNT, keys).fetchall()[0][0]
        return heads, versions, count, _appearance(conn, keys, heads), complete

    with ctx.db.read() as conn:
        heads, versions, count, order, complete = deferred.hinted(conn, look)
    by_seq = {as_int(r[_SEQ]): r for r in versions}
    rows = [by_seq[s] for s in sorted(by_seq)]
    entries = decode(rows)
    of_seq = dict(zip(sorted(by_seq), entries, strict=True))
    head_seqs = sorted({as_int(r[_SEQ]) for r in heads}, key=order.__getitem__)
    return Wake(entries, [of_seq[s] for s in head_seqs], as_int(count), complete)


def unclean_candidates(
    ctx: StoreContext, session_id: str, lo_us: int, hi_us: int, decode: Decode
) -> list[tuple[JournalEntry, int]]:
    """Authored heads on which synapt's unclean-end check gives the verdict the whole
    authored list gives, for a previous transcript of `session_id` whose last activity
    lies around [lo_us, hi_us]: that session's head, the session-less ones that could cover
    it, the newest session-less ones and the newest heads of other sessions (every tie),
    in the order synapt's authored list holds them before its sort; each with its instant
    (epoch microseconds)."""
    keys = {"ws": ctx.workspace_pk, "wt": ctx.worktree_pk}

    def look(conn: Executes) -> tuple[dict[int, Row], list[int], dict[int, int]]:
        rows: list[tuple[Any, ...]] = [
            *conn.execute(_OWN, {**keys, "sid": session_id}).fetchall(),
            *conn.execute(_SESSIONLESS_NEAR, {**keys, "lo": lo_us, "hi": hi_us}).fetchall(),
            *conn.execute(_SESSIONLESS_NEWEST, keys).fetchall(),
            *conn.execute(_FOREIGN_NEWEST, {**keys, "sid": session_id}).fetchall(),
        ]
        by_seq = {int(r[_SEQ]): r for r in rows}
        order = _appearance(conn, keys, list(by_seq.values()))
        ordered = sorted(by_seq, key=order.__getitem__)
        instants = {
            int(seq): int(us)
            for seq, us in conn.execute(
                "SELECT seq, ts_us FROM journal_entries WHERE seq IN"
                " (SELECT value FROM json_each(?))",
                (json.dumps(ordered),),
            )
        }
        return by_seq, ordered, instants

    with ctx.db.read() as conn:
        by_seq, ordered, instants = deferred.hinted(conn, look)
    decoded: list[JournalEntry] = decode([by_seq[s] for s in ordered])
    return [(e, instants[s]) for e, s in zip(decoded, ordered, strict=True)]


def _appearance(
    conn: Executes, keys: dict[str, int], heads: list[Row]
) -> dict[int, tuple[int, int]]:
    """seq -> its place in synapt's dedup list: sessions where they first appear in the
    worktree, then the entries without a session, by position."""
    out: dict[int, tuple[int, int]] = {}
    for r in heads:
        seq, sid = as_int(r[_SEQ]), str(r[_SID])
        if sid:
            first = conn.execute(_FIRST_SEEN, {**keys, "sid": sid}).fetchall()[0][0]
            out[seq] = (0, as_int(first))
        else:
            out[seq] = (1, seq)
    return out
