"""`store.journal.host`: what a host that serves synapt's own journal calls needs beyond the
documented reads (journal.py): the newest entry without counts, the previous meaningful
entry a write carries from, a session's done items and the session ids, every version as
rows for a lazily decoded journal file, what synapt's session start reads. The synapt
adapter (recall_sqlite/synapt/) is its user; a host that only reads and writes needs none
of it."""

from __future__ import annotations

import apsw

from .. import scope
from .. import synapt_fields as synapt
from ..checks import require_int
from ..db import as_int, as_str, translate_any
from ..errors import InvalidEntryError
from ..jsontext import loads
from . import codec, heads
from .entry import JournalEntry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from apsw import SQLiteValue

    from ..context import StoreContext
    from ..db import Row
    from .wake import Wake

ENTRY_COLUMNS = codec.select_list()
# The scalar columns version_rows may be asked for (a whitelist: they go into SQL text).
_SCALAR_FIELDS = frozenset(("timestamp", *synapt.TEXT_FIELDS, *synapt.BOOL_FIELDS))


class JournalHost:
    """The journal's calls for hosts that re-serve synapt's journal (`store.journal.host`)."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def newest(self, meaningful: bool = False) -> JournalEntry | None:
        """The newest entry of the current worktree (`latest().entry`) without the counts
        a read carries: one index step, for hosts that only want the entry."""
        k = scope.keys(self._ctx, None, False, meaningful, error=InvalidEntryError)
        with self._ctx.db.lock:
            try:
                rows = heads.walk(self._ctx.db.conn, k, 1)
            except (apsw.Error, UnicodeDecodeError) as exc:
                raise translate_any(exc, self._ctx.db.path) from None
        return self.entries(rows[:1])[0] if rows else None

    def previous_meaningful(self, current_session_id: str = "") -> JournalEntry | None:
        """The newest meaningful entry of another session (what a write carries from)."""
        with self._ctx.db.read() as conn:
            return heads.previous_meaningful(conn, self._ctx, current_session_id)

    def version_rows(self, fields: Sequence[str]) -> list[Row]:
        """(position, shown, richness, *fields) of every stored version in the current
        worktree, oldest insertion first: `shown` 1 for the version reads show of its
        session, `richness` how many of focus/done/decisions/next_steps it has. `fields`
        are scalar fields (not the lists, see version_lists). For hosts that rebuild a
        journal file's view cheaply (synapt's adapter)."""
        bad = [f for f in fields if f not in _SCALAR_FIELDS]
        if bad:
            raise InvalidEntryError(f"not scalar entry fields: {bad}")
        ctx = self._ctx
        return ctx.db.query(
            f"SELECT seq, head_wt, rich{''.join(', ' + f for f in fields)} FROM journal_entries"
            " WHERE workspace_id = ? AND worktree_id = ? ORDER BY seq",
            (ctx.workspace_pk, ctx.worktree_pk),
        )

    def version_lists(self, positions: Sequence[int] | None = None) -> dict[int, list[SQLiteValue]]:
        """position -> [done, decisions, next_steps, files_modified, git_log, extra] of the
        given versions of the current worktree (None: all of them)."""
        ctx = self._ctx
        lists = codec.SELECT_INDEX["lists"]
        sql = f"SELECT {ENTRY_COLUMNS} FROM journal_entries WHERE workspace_id = ?"
        params: list[Any] = [ctx.workspace_pk]
        if positions is None:
            sql += " AND worktree_id = ?"
            params.append(ctx.worktree_pk)
        else:
            sql += " AND seq IN (SELECT value FROM json_each(?))"
            listed = ",".join([str(require_int("position", p)) for p in positions])
            params.append(f"[{listed}]")
        rows = ctx.db.query(sql, params)
        if not rows:
            return {}
        try:
            decoded = loads(f"[{','.join(as_str(r[lists]) for r in rows)}]")
        except (ValueError, RecursionError):
            raise InvalidEntryError(
                "a stored entry's list or extra column is not valid JSON"
                " (run `recall-sqlite doctor`)"
            ) from None
        return {as_int(r[0]): d for r, d in zip(rows, decoded, strict=True)}

    def counts_by_worktree(self) -> dict[int, tuple[int, int]]:
        """worktrees.id -> (versions stored, sessions shown) of every worktree of the
        workspace that holds entries."""
        return {
            as_int(w): (as_int(n), as_int(h))
            for w, n, h in self._ctx.db.query(
                "SELECT worktree_id, count(*), coalesce(sum(head_wt), 0) FROM journal_entries"
                " WHERE workspace_id = ? GROUP BY worktree_id",
                (self._ctx.workspace_pk,),
            )
        }

    def session_ids(self, *, all_worktrees: bool = False) -> set[str]:
        """The session ids stored in scope (entries without one are not a session)."""
        ctx = self._ctx
        sql = "SELECT DISTINCT session_id FROM journal_entries WHERE workspace_id = ?"
        params: list[Any] = [ctx.workspace_pk]
        if not all_worktrees:
            sql += " AND worktree_id = ?"
            params.append(ctx.worktree_pk)
        return {str(sid) for (sid,) in ctx.db.query(sql + " AND session_id <> ''", params)}

    def done_items(self, session_id: str, *, all_worktrees: bool = False) -> list[str]:
        """The done items of every stored version of a session, oldest version first."""
        with self._ctx.db.read() as conn:
            found = heads.done_lists(conn, self._ctx, [session_id], all_worktrees)
            return [item for items in found for item in items]

    def wake(self, branch: str) -> Wake:
        """What synapt's session start reads of this worktree's journal, in a few index
        steps (journal/wake.py; the activated hook)."""
        from .wake import wake

        return wake(self._ctx, branch, self.entries)

    def unclean_candidates(
        self, session_id: str, lo_us: int, hi_us: int
    ) -> list[tuple[JournalEntry, int]]:
        """The authored heads synapt's unclean-end check needs, each with its instant in
        epoch microseconds (journal/wake.py)."""
        from .wake import unclean_candidates

        return unclean_candidates(self._ctx, session_id, lo_us, hi_us, self.entries)

    def entries(self, rows: Sequence[Sequence[SQLiteValue]]) -> list[JournalEntry]:
        """JournalEntry values of rows that start with codec.select_list()."""
        return JournalEntry.from_rows(rows, self._ctx.worktree_key_of)
