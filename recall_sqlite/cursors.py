"""Per-branch reading positions of the journal's consumers (a session-start hook, a
summariser, an embedder), so each one sees every entry of its branch once, in the order
the store received them.

Semantics (the contract hosts rely on):

* A cursor is one row per (workspace, branch, consumer). Its `position` is a journal
  *insertion* sequence number (`journal_entries.seq`), never a timestamp: entries of the
  branch with seq <= position are read, everything after is unread. An entry that arrives
  after the cursor moved -- a late enrichment of an old session, an import of old buckets --
  has a larger seq and is therefore unread, however old its timestamp.
* `unread` is deduplicated the way `journal.read(branch=B, all_worktrees=True)` is: only the
  version of a session that reads show (its head across the workspace) is delivered; the
  versions it beat are skipped, and skipping them is final (a version that is not the head
  when it arrives can never become it later). A cursor covers every worktree of the
  workspace: it is per branch, not per desk. Like that read, a session whose shown version
  is on another branch (a richer version was written there) is delivered on that branch.
* A richer version of a session whose older version the consumer already read *is*
  delivered: it is a new version with its own id that reads now show in place of the old
  one, and it carries `revision=True` so a host keeping per-session state replaces instead
  of adding. A poorer or equal version is never delivered, because reads would not show it.
  So each version id reaches a consumer at most once between resets, and the version reads
  show of every session on the branch reaches it at least once.
* `advance` only moves forward (the stored position becomes max(old, asked)), inside
  BEGIN IMMEDIATE, so concurrent advances of one cursor end at the furthest position and each
  caller is told where the cursor really is. `reset` is the only way back.
* A position may not lie beyond the end of the journal: that would silently mark entries
  that do not exist yet as read.
* `unread` + `advance` is at-least-once (a consumer that dies in between reads the same
  entries again); `take` does both in one write transaction: at-most-once, and concurrent
  takers of one cursor never get the same entry.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

from .checks import require_int, require_text
from .context import StoreContext
from .db import as_int, scalar
from .errors import InvalidInputError
from .journal.codec import select_list
from .journal.entry import JournalEntry
from .journal.journal import Journal
from .journal.positions import resolve_position
from .limits import INT64_MAX
from .scope import Elsewhere, Keys, Scope
from .timestamps import utc_now_iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from apsw import Connection

# The columns of the journal's row decoder, prefixed for use beside a correlated subquery.
_ENTRY_COLUMNS = select_list("e")


def _check_consumer(consumer: object) -> str:
    return require_text("consumer", consumer, allow_empty=False)


def _check_branch(branch: object) -> str:
    # Any text is a branch name, '' included (detached HEAD, no git): only what SQLite
    # cannot round-trip is refused.
    if branch is None:
        raise InvalidInputError("branch must be given (a cursor belongs to one branch)")
    return require_text("branch", branch)


# -- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cursor:
    workspace_id: str
    branch: str
    consumer: str
    position: int  # entries of the branch with seq <= position are read
    updated_at: str | None  # when position last changed; None = never stored (position 0)
    end: int  # the branch's last position now (0 = no entries)

    @property
    def caught_up(self) -> bool:
        return self.position >= self.end

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.workspace_id,
            "branch": self.branch,
            "consumer": self.consumer,
            "position": self.position,
            "updated_at": self.updated_at,
            "end": self.end,
            "caught_up": self.caught_up,
        }


@dataclass(frozen=True)
class CursorMove:
    """What an advance or reset did: `cursor` is where the cursor really is now (after any
    concurrent advance), `requested` what this caller asked for; `scope` the cursor's branch
    in every worktree, `elsewhere` what a read of it counts on other branches."""

    cursor: Cursor
    previous: int
    requested: int
    scope: Scope
    elsewhere: Elsewhere

    @property
    def position(self) -> int:
        return self.cursor.position

    @property
    def moved(self) -> bool:
        return self.cursor.position != self.previous

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.cursor.to_dict(),
            "previous": self.previous,
            "requested": self.requested,
            "moved": self.moved,
            "scope": self.scope.to_dict(),
            "elsewhere": self.elsewhere.to_dict(),
        }


@dataclass(frozen=True)
class UnreadEntry:
    position: int  # this version's insertion seq: advance(to=position) marks it read
    entry: JournalEntry
    revision: bool  # an older version of its session lies at or before the cursor

    def to_dict(self) -> dict[str, Any]:
        return {**self.entry.to_dict(), "position": self.position, "revision": self.revision}


@dataclass(frozen=True)
class UnreadResult:
    workspace_id: str
    branch: str
    consumer: str
    position: int  # the cursor position this read started after
    items: list[UnreadEntry]  # oldest first (insertion order)
    next_position: int  # advance(to=next_position) once `items` are handled
    more: bool  # `limit` cut the list short: read again after advancing
    scope: Scope  # the branch, in every worktree: what a cursor delivers
    elsewhere: Elsewhere  # what a read of that scope counts on other branches

    @property
    def entries(self) -> list[JournalEntry]:
        return [item.entry for item in self.items]

    def __len__(self) -> int:
        return len(self.items)

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.workspace_id,
            "branch": self.branch,
            "consumer": self.consumer,
            "position": self.position,
            "next_position": self.next_position,
            "more": self.more,
            "entries": [item.to_dict() for item in self.items],
            "scope": self.scope.to_dict(),
            "elsewhere": self.elsewhere.to_dict(),
        }


# -- the table family -------------------------------------------------------------------------

# The walk is journal_by_branch_seq from the cursor position: its cost is the unread rows
# (plus the versions skipped among them), never the branch's history. `revision` must probe
# journal_by_session (a session has few versions); the unary + keeps the planner off
# journal_by_branch_seq there, which would walk the branch's whole read history per row.
_UNREAD_SQL = (
    f"SELECT {_ENTRY_COLUMNS},"
    " e.session_id <> '' AND EXISTS (SELECT 1 FROM journal_entries o"
    "   WHERE o.workspace_id = e.workspace_id AND o.session_id = e.session_id"
    "     AND o.seq <= ?3 AND +o.branch = e.branch)"
    " FROM journal_entries e"
    " WHERE e.workspace_id = ?1 AND e.branch = ?2 AND e.seq > ?3 AND e.head_ws = 1"
    " ORDER BY e.seq LIMIT ?4"
)
_BRANCH_END_SQL = (
    "SELECT coalesce(max(seq), 0) FROM journal_entries WHERE workspace_id = ? AND branch = ?"
)
_POSITION_SQL = (
    "SELECT position, updated_at FROM cursors"
    " WHERE workspace_id = ? AND branch = ? AND consumer = ?"
)


class Cursors:
    def __init__(self, ctx: StoreContext, *, others: Callable[[], int] | None = None) -> None:
        """`others`: what other machines hold that this store has not pulled (as the
        store composes it into the journal), so a cursor's elsewhere counts it as a read's."""
        self._ctx = ctx
        self._journal = Journal(ctx, others=others)

    # -- reading ---------------------------------------------------------------------------

    def get(self, consumer: str, branch: str) -> Cursor:
        """Where `consumer` stands on `branch`; a consumer never seen stands at 0."""
        consumer, branch = _check_consumer(consumer), _check_branch(branch)
        with self._ctx.db.read() as conn:
            return self._cursor(conn, consumer, branch)

    def unread(self, consumer: str, branch: str, limit: int | None = None) -> UnreadResult:
        """The entries of `branch` after the consumer's position, oldest first, one version
        per session (the one reads show). Nothing is marked read: call
        `advance(consumer, branch, to=result.next_position)` once they are handled."""
        consumer, branch = _check_consumer(consumer), _check_branch(branch)
        if limit is not None:
            require_int("limit", limit, minimum=1)
        # One snapshot for position, rows and branch end, so next_position never passes an
        # entry committed between two of the statements.
        with self._ctx.db.read() as conn:
            return self._unread(conn, consumer, branch, limit)

    def take(self, consumer: str, branch: str, limit: int | None = None) -> UnreadResult:
        """unread + advance in one write transaction: concurrent takers of one cursor get
        disjoint entries (at-most-once: if the caller dies before handling them, they stay
        read). Use unread/advance for at-least-once."""
        consumer, branch = _check_consumer(consumer), _check_branch(branch)
        if limit is not None:
            require_int("limit", limit, minimum=1)
        with self._ctx.db.write() as conn:
            result = self._unread(conn, consumer, branch, limit)
            if result.next_position > result.position:
                self._store(conn, consumer, branch, result.next_position, forward_only=True)
        return result

    def count_unread(self, consumer: str, branch: str) -> int:
        """How many entries unread would return without a limit (costs a walk of them)."""
        consumer, branch = _check_consumer(consumer), _check_branch(branch)
        with self._ctx.db.read() as conn:
            position = self._position(conn, consumer, branch)[0]
            return as_int(
                scalar(
                    conn,
                    "SELECT count(*) FROM journal_entries WHERE workspace_id = ? AND branch = ?"
                    " AND seq > ? AND head_ws = 1",
                    (self._ctx.workspace_pk, branch, position),
                )
            )

    def list(self, branch: str | None = None) -> builtins.list[Cursor]:
        """Every stored cursor of the workspace (of one branch when given), by branch and
        consumer."""
        ctx = self._ctx
        sql = (
            "SELECT c.branch, c.consumer, c.position, c.updated_at,"
            " (SELECT coalesce(max(seq), 0) FROM journal_entries e"
            "   WHERE e.workspace_id = c.workspace_id AND e.branch = c.branch)"
            " FROM cursors c WHERE c.workspace_id = ?"
        )
        params: list[Any] = [ctx.workspace_pk]
        if branch is not None:
            sql += " AND c.branch = ?"
            params.append(_check_branch(branch))
        sql += " ORDER BY c.branch, c.consumer"
        return [
            Cursor(
                ctx.workspace_uuid,
                str(b),
                str(c),
                as_int(p),
                None if u is None else str(u),
                as_int(end),
            )
            for b, c, p, u, end in ctx.db.query(sql, params)
        ]

    # -- moving ----------------------------------------------------------------------------

    def advance(self, consumer: str, branch: str, *, to: int | str) -> CursorMove:
        """Move the cursor forward to `to` (a position, e.g. `unread(...).next_position`, or
        the id of an entry on this branch: it and everything before it become read). Never
        moves backwards: asking for less than the current position leaves it where it is,
        and the result says where that is."""
        return self._move(consumer, branch, to, what="advance to", forward_only=True)

    def reset(self, consumer: str, branch: str, *, to: int | str = 0) -> CursorMove:
        """Put the cursor at `to` (default 0: everything on the branch is unread again),
        backwards or forwards."""
        return self._move(consumer, branch, to, what="reset to", forward_only=False)

    # -- internals ---------------------------------------------------------------------------

    def _move(
        self, consumer: str, branch: str, to: int | str, *, what: str, forward_only: bool
    ) -> CursorMove:
        consumer, branch = _check_consumer(consumer), _check_branch(branch)
        with self._ctx.db.write() as conn:
            previous = self._position(conn, consumer, branch)[0]
            target = resolve_position(
                conn, self._ctx, to, what=what, branch=branch, current=previous
            )
            self._store(conn, consumer, branch, target, forward_only=forward_only)
            cursor = self._cursor(conn, consumer, branch)
            scope, elsewhere = self._scope(conn, branch)
        return CursorMove(cursor, previous, target, scope, elsewhere)

    def _scope(self, conn: Connection, branch: str) -> tuple[Scope, Elsewhere]:
        """A cursor's scope (its branch in every worktree: it is per branch, not per desk)
        and what a read of it counts elsewhere, on `conn`'s snapshot."""
        return self._journal.scope_of(conn, Keys(self._ctx.workspace_pk, None, branch, False))

    def _position(self, conn: Connection, consumer: str, branch: str) -> tuple[int, str | None]:
        rows = conn.execute(_POSITION_SQL, (self._ctx.workspace_pk, branch, consumer)).fetchall()
        return (as_int(rows[0][0]), str(rows[0][1])) if rows else (0, None)

    def _branch_end(self, conn: Connection, branch: str) -> int:
        return as_int(scalar(conn, _BRANCH_END_SQL, (self._ctx.workspace_pk, branch)))

    def _cursor(self, conn: Connection, consumer: str, branch: str) -> Cursor:
        position, updated_at = self._position(conn, consumer, branch)
        return Cursor(
            self._ctx.workspace_uuid,
            branch,
            consumer,
            position,
            updated_at,
            self._branch_end(conn, branch),
        )

    def _store(
        self, conn: Connection, consumer: str, branch: str, position: int, *, forward_only: bool
    ) -> None:
        # The max() is evaluated against the row as it is under the write lock, so two
        # processes advancing at once both land on the larger position.
        new = "max(position, excluded.position)" if forward_only else "excluded.position"
        conn.execute(
            "INSERT INTO cursors (workspace_id, branch, consumer, position, updated_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (workspace_id, branch, consumer) DO UPDATE"
            f" SET updated_at = CASE WHEN {new} <> position THEN excluded.updated_at"
            " ELSE updated_at END,"
            f" position = {new}",
            (self._ctx.workspace_pk, branch, consumer, position, utc_now_iso()),
        )

    def _unread(
        self, conn: Connection, consumer: str, branch: str, limit: int | None
    ) -> UnreadResult:
        position = self._position(conn, consumer, branch)[0]
        # One row past the limit tells whether more remain without counting them (a limit
        # at SQLite's largest integer has no row past it: no limit at all).
        fetch = -1 if limit is None or limit >= INT64_MAX else limit + 1
        rows: list[Any] = conn.execute(
            _UNREAD_SQL, (self._ctx.workspace_pk, branch, position, fetch)
        ).fetchall()
        more = limit is not None and len(rows) > limit
        if more:
            rows = rows[:limit]
            # Continue right after the last delivered version; the versions skipped before
            # the cut are behind it anyway.
            next_position = int(rows[-1][0])
        else:
            # Nothing unread remains up to the branch's end: the skipped tail versions (if
            # any) are passed too, so they are not walked again.
            next_position = max(position, self._branch_end(conn, branch))
        entries = JournalEntry.from_rows(rows, self._ctx.worktree_key_of)
        items = [UnreadEntry(int(r[0]), e, bool(r[-1])) for r, e in zip(rows, entries, strict=True)]
        scope, elsewhere = self._scope(conn, branch)
        return UnreadResult(
            self._ctx.workspace_uuid,
            branch,
            consumer,
            position,
            items,
            next_position,
            more,
            scope,
            elsewhere,
        )
