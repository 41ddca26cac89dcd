"""Text summaries of the journal (of a session, a branch, a day...), with a store-assigned
creation time, supersede history and staleness.

Semantics:

* Scope = (workspace, branch, kind); branch None = workspace-wide. The same None means
  workspace-wide in every method; pass `ALL_BRANCHES` to list across every scope.
* `created_at`/`created_us` are assigned inside the BEGIN IMMEDIATE transaction as
  max(now, last + 1 us) over the workspace, so they strictly increase within a workspace
  even for two adds in one microsecond, from two processes, or across a clock step back.
* A new summary of a scope supersedes the current one of that scope: the old row stays,
  pointing at its successor (`superseded_by`), so the history is a visible chain and exactly
  one summary per scope is current. Removing a summary re-links that chain.
* Staleness follows insertion order, like cursors: a summary accounts for the journal up to
  `covered_through` (the last covered entry's seq, the end of a covered range, or -- when
  nothing is named -- the whole journal as it stood when it was added). `newer_entries`
  counts the entries a cursor standing there would find unread on the summary's branch
  (every branch for a workspace-wide one): versions reads show, arrived later.
"""

from __future__ import annotations

import builtins

from ._record import Frozen
from .checks import (
    parse_entry_id,
    require_int,
    require_list,
    require_optional_text,
    require_summary_text,
    require_text,
    require_type,
)
from .context import StoreContext
from .db import as_bytes, as_int, merge_fts, scalar
from .errors import InvalidInputError, NotFoundError, RecallError, UnknownEntryError
from .jsontext import loads
from .scope import Elsewhere
from .timestamps import datetime_us, iso_utc, now_us, parse_timestamp

# A session-start hook reads the latest summary: nothing here imports enum, json (and with
# it re), hashlib, datetime, dataclasses or typing at start-up (bench/RESULTS.md, row 'hook
# session-start'); the write path imports what it needs when it runs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import enum
    from collections.abc import Callable, Iterable, Sequence
    from datetime import datetime
    from typing import Any, Final, Literal, Protocol

    from apsw import Connection, SQLiteValue

    from .db import Hold, Row
    from .journal.results import Found, Searched

    # What `Summaries.search` returns, as the family knows it (search/ is composed in,
    # never imported: see journal/results.py's EntrySearch); search/summaries.py has mypy
    # check that search/results.py's classes meet it.

    class SummaryFound(Found, Protocol):
        """One summary hit (search/results.py SummaryHit)."""

        @property
        def summary(self) -> Summary: ...

    class SummarySearch(Searched, Protocol):
        """A summary search's answer (search/results.py SummarySearchResult)."""

        @property
        def hits(self) -> Sequence[SummaryFound]: ...
        @property
        def scope(self) -> SummaryScope: ...
        @property
        def summaries(self) -> list[Summary]: ...

    # What the store composes in for `search` (search/ depends on this family).
    Searcher = Callable[..., SummarySearch]

DEFAULT_KIND = "summary"
DEFAULT_LIMIT = 20


if TYPE_CHECKING:
    # For mypy, an enum's one member: `branch is ALL_BRANCHES` narrows a BranchFilter.
    class _AllBranches(enum.Enum):
        ALL_BRANCHES = "all branches"

    ALL_BRANCHES: Final = _AllBranches.ALL_BRANCHES
    BranchFilter = str | None | Literal[_AllBranches.ALL_BRANCHES]
else:
    # At run time the same one object, without importing enum: only its identity is used.
    class _AllBranches:
        __slots__ = ()

        def __repr__(self) -> str:
            return "ALL_BRANCHES"

        def __reduce__(self) -> str:
            return "ALL_BRANCHES"  # a copy or a pickle is the sentinel itself

    # A sentinel, not a string: every string (even "*") is a possible branch name.
    ALL_BRANCHES = _AllBranches()


class SummaryScope(Frozen):
    """Which summaries an answer covers: the workspace's (None: no store yet, so no id),
    of every scope (`all_branches`), or of `branch` (None: the workspace-wide ones), of
    `kind` (None: any), superseded ones too or not. A search's, a latest read's, a write's
    (the scope it was written to)."""

    __slots__ = ("workspace_id", "branch", "all_branches", "kind", "include_superseded")
    workspace_id: str | None
    branch: str | None  # with all_branches False: None = workspace-wide summaries
    all_branches: bool
    kind: str | None
    include_superseded: bool

    def __init__(
        self,
        workspace_id: str | None,
        branch: str | None,
        all_branches: bool,
        kind: str | None,
        include_superseded: bool = False,
    ) -> None:
        self._set(
            workspace_id=workspace_id,
            branch=branch,
            all_branches=all_branches,
            kind=kind,
            include_superseded=include_superseded,
        )

    @classmethod
    def of(cls, workspace_id: str | None, branch: BranchFilter, kind: str | None) -> SummaryScope:
        """The scope of a call's branch filter (ALL_BRANCHES: every scope)."""
        every = branch is ALL_BRANCHES
        return cls(workspace_id, None if branch is ALL_BRANCHES else branch, every, kind)

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.workspace_id,
            "branch": self.branch,
            "all_branches": self.all_branches,
            "kind": self.kind,
            "include_superseded": self.include_superseded,
        }

    def describe(self) -> str:
        if self.all_branches:
            where = "every scope"
        elif self.branch is None:
            where = "workspace-wide summaries"
        else:
            where = f"branch {self.branch or '(none)'}"
        kind = f", kind {self.kind!r}" if self.kind is not None else ""
        old = ", superseded too" if self.include_superseded else ", current only"
        return where + kind + old


class CoverRange(Frozen):
    """An inclusive range of journal positions (insertion seqs, as cursors use them); each
    end may also be given as an entry id, meaning that entry's position."""

    __slots__ = ("first", "last")
    first: int | str
    last: int | str

    def __init__(self, first: int | str, last: int | str) -> None:
        self._set(first=first, last=last)


if TYPE_CHECKING:
    Covers = CoverRange | str | Iterable[str] | None


class Summary(Frozen):
    __slots__ = (
        "id",
        "workspace_id",
        "branch",
        "kind",
        "text",
        "created_at",
        "created_us",
        "author",
        "entry_ids",
        "covers_from",
        "covers_to",
        "covered_through",
        "superseded_by",
        "newer_entries",
    )
    id: int
    workspace_id: str
    branch: str | None  # None = workspace-wide
    kind: str
    text: str
    created_at: str  # ISO-8601 UTC with microseconds
    created_us: int
    author: str | None
    entry_ids: tuple[str, ...]  # the entries covers named, in insertion order
    covers_from: int | None  # the covered position range, when covers was a range
    covers_to: int | None
    covered_through: int  # the position staleness is measured from
    superseded_by: int | None  # the summary that replaced this one in its scope
    newer_entries: int  # entries (as reads show them) that arrived after covered_through

    def __init__(
        self,
        *,
        id: int,  # noqa: A002 - the field
        workspace_id: str,
        branch: str | None,
        kind: str,
        text: str,
        created_at: str,
        created_us: int,
        author: str | None,
        entry_ids: tuple[str, ...],
        covers_from: int | None,
        covers_to: int | None,
        covered_through: int,
        superseded_by: int | None,
        newer_entries: int,
    ) -> None:
        self._set(
            id=id,
            workspace_id=workspace_id,
            branch=branch,
            kind=kind,
            text=text,
            created_at=created_at,
            created_us=created_us,
            author=author,
            entry_ids=entry_ids,
            covers_from=covers_from,
            covers_to=covers_to,
            covered_through=covered_through,
            superseded_by=superseded_by,
            newer_entries=newer_entries,
        )

    @property
    def current(self) -> bool:
        return self.superseded_by is None

    @property
    def stale(self) -> bool:
        return self.newer_entries > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workspace_id": self.workspace_id,
            "branch": self.branch,
            "kind": self.kind,
            "text": self.text,
            "created_at": self.created_at,
            "created_us": self.created_us,
            "author": self.author,
            "entry_ids": list(self.entry_ids),
            "covers_range": None
            if self.covers_from is None
            else [self.covers_from, self.covers_to],
            "covered_through": self.covered_through,
            "current": self.current,
            "superseded_by": self.superseded_by,
            "stale": self.stale,
            "newer_entries": self.newer_entries,
        }


class SummaryAnswer(Frozen):
    """A summary (None: there is none in the scope asked for) with the scope of the call
    that answered it and the current summaries of other scopes (`other_branches`), which
    the answer did not include: `Summaries.read_latest` and `Summaries.write`. (Other
    machines' are not counted: what sync knows of them is entry versions, as for a search
    of summaries.)"""

    __slots__ = ("summary", "scope", "elsewhere")
    summary: Summary | None
    scope: SummaryScope
    elsewhere: Elsewhere

    def __init__(self, summary: Summary | None, scope: SummaryScope, elsewhere: Elsewhere) -> None:
        self._set(summary=summary, scope=scope, elsewhere=elsewhere)

    def to_dict(self) -> dict[str, Any]:
        """The summary's own fields beside scope and elsewhere (the answer `summary latest
        --json` and `summary add --json` gave before they said their scope, with it added);
        where there is none, `wrapped_dict()`."""
        if self.summary is None:
            return self.wrapped_dict()
        return {**self.summary.to_dict(), **self._scoped_dict()}

    def wrapped_dict(self) -> dict[str, Any]:
        """The summary under "summary" (null where there is none), beside scope and
        elsewhere: the MCP tool summary_latest's answer (answers.py TOOL_ANSWERS)."""
        found = None if self.summary is None else self.summary.to_dict()
        return {"summary": found, **self._scoped_dict()}

    def _scoped_dict(self) -> dict[str, Any]:
        return {"scope": self.scope.to_dict(), "elsewhere": self.elsewhere.to_dict()}


# One statement per read: the row, its source ids and its staleness come from one snapshot.
# Source ids come through an ordered subquery: SQLite does not flatten a subquery with
# ORDER BY into an aggregate, so the order holds, and the primary key supplies it without a
# sort. Staleness walks journal_by_branch_seq from covered_seq, or, for a workspace-wide
# summary, the seq (rowid) range after it -- the unary + keeps the planner off the head
# indexes, which would scan the workspace's whole history -- so it costs the newer entries
# only. Reads of one kind of scope use only the count that applies to it.
_BRANCH_NEWER = """(SELECT count(*) FROM journal_entries e
         WHERE e.workspace_id = s.workspace_id AND e.branch = s.branch
           AND e.seq > s.covered_seq AND e.head_ws = 1)"""
_WORKSPACE_NEWER = """(SELECT count(*) FROM journal_entries e
         WHERE e.seq > s.covered_seq AND +e.workspace_id = s.workspace_id
           AND +e.head_ws = 1)"""
_ANY_NEWER = f"""CASE WHEN s.branch IS NULL THEN {_WORKSPACE_NEWER} ELSE {_BRANCH_NEWER} END"""


def _select(newer: str) -> str:
    return f"""
SELECT s.id, s.branch, s.kind, s.text, s.created_at, s.created_us, s.author,
       s.covers_from, s.covers_to, s.covered_seq, s.superseded_by,
       (SELECT json_group_array(h) FROM (
            SELECT lower(hex(e.id)) AS h
              FROM summary_sources ss JOIN journal_entries e ON e.seq = ss.entry_seq
             WHERE s.source_count > 0 AND ss.summary_id = s.id ORDER BY ss.entry_seq)),
       {newer}
  FROM summaries s
"""


_SELECT = _select(_ANY_NEWER)
_SELECT_WORKSPACE_WIDE = _select(_WORKSPACE_NEWER)
_SELECT_ONE_BRANCH = _select(_BRANCH_NEWER)


def _branch_clause(branch: BranchFilter, where: list[str], params: list[SQLiteValue]) -> str:
    """Add the branch filter; return the SELECT whose staleness count fits the rows."""
    if branch is ALL_BRANCHES:
        return _SELECT
    if branch is None:
        where.append("s.branch IS NULL")
        return _SELECT_WORKSPACE_WIDE
    where.append("s.branch = ?")
    params.append(require_text("branch", branch))
    return _SELECT_ONE_BRANCH


def _instant(name: str, value: object) -> int:
    """since/until as epoch microseconds: an ISO-8601 string (naive = UTC) or a datetime."""
    if not isinstance(value, str):
        from datetime import datetime

        if isinstance(value, datetime):
            return datetime_us(value)
    text = require_type(name, value, str, what="an ISO-8601 string or a datetime", show_value=True)
    try:
        return parse_timestamp(text)
    except RecallError as exc:
        raise InvalidInputError(f"{name}: {exc}") from None


def _entry_ids(covers: object) -> list[bytes]:
    items = require_list(
        "covers", covers, single=str, iterable=True, what="entry ids, a CoverRange or None"
    )
    seen: dict[bytes, None] = {}
    for item in items:
        seen[parse_entry_id(item)] = None
    if not seen:
        raise InvalidInputError("covers names no entries (give ids, a CoverRange, or None)")
    return list(seen)


def summary_uid(
    branch: str | None,
    kind: str,
    text: str,
    created_at: str,
    author: str | None,
    covers_from: int | None,
    covers_to: int | None,
    sources: builtins.list[str],
) -> bytes:
    """A summary's content id, the same on every machine that holds it: sha256 of its
    scope, kind, text, creation time, author, covered range and source entry ids (hex, in
    position order), first 16 bytes. (migrations/v007 holds a frozen copy.)"""
    import hashlib
    import json

    covers = None if covers_from is None else [covers_from, covers_to]
    fields = {
        "author": author,
        "branch": branch,
        "covers": covers,
        "created_at": created_at,
        "kind": kind,
        "sources": sources,
        "text": text,
    }
    canonical = json.dumps(
        fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(canonical.encode()).digest()[:16]


class Summaries:
    def __init__(
        self, ctx: StoreContext, *, searcher: Searcher | None = None, hold: Hold | None = None
    ) -> None:
        self._ctx = ctx
        self._searcher = searcher
        # Holds replication still and purges this machine's replica history while a
        # removal empties the WAL (composed in by the store when it syncs, as forget's):
        # Litestream's history and its local pages hold the removed text otherwise.
        self._hold = hold

    @property
    def context(self) -> StoreContext:
        return self._ctx

    # -- writing -----------------------------------------------------------------------------

    def add(
        self,
        text: str,
        *,
        branch: str | None = None,
        kind: str = DEFAULT_KIND,
        covers: Covers = None,
        author: str | None = None,
    ) -> Summary:
        """Store a summary of `branch` (None: the whole workspace) and make it the current one
        of its (branch, kind) scope. `covers` names what it summarises: entry ids, a
        CoverRange of positions, or None (the journal as it stands now). Bad input raises
        InvalidInputError (UnknownEntryError for ids not in this workspace); nothing is
        written then."""
        written = self.write(text, branch=branch, kind=kind, covers=covers, author=author)
        assert written.summary is not None  # a write always has its summary
        return written.summary

    def write(
        self,
        text: str,
        *,
        branch: str | None = None,
        kind: str = DEFAULT_KIND,
        covers: Covers = None,
        author: str | None = None,
    ) -> SummaryAnswer:
        """`add`, answered with the (branch, kind) scope written to and how many current
        summaries other scopes of that kind hold (counted in the same transaction): the
        answer of `summary add` and of the MCP tool summary_add."""
        require_summary_text("text", text)
        branch = require_optional_text("branch", branch)
        require_summary_text("kind", kind)
        author = require_optional_text("author", author, allow_empty=False)
        raw_ids = None if covers is None or isinstance(covers, CoverRange) else _entry_ids(covers)
        # Positions are for writes only: a session start's read of the latest summary
        # does not load them.
        from .journal.positions import journal_end, resolve_position

        ctx = self._ctx
        with ctx.db.write() as conn:
            covers_from = covers_to = None
            seqs: list[int] = []
            if raw_ids is not None:
                seqs = self._resolve_ids(conn, raw_ids)
                covered = max(seqs)
                # The sources as every machine names them, in position order.
                by_seq = {seq: rid for rid, seq in self._seq_of(conn, raw_ids).items()}
            elif isinstance(covers, CoverRange):
                covers_from = resolve_position(conn, ctx, covers.first, what="covers first")
                covers_to = resolve_position(conn, ctx, covers.last, what="covers last")
                if covers_from > covers_to:
                    raise InvalidInputError(
                        f"covers range is backwards: first {covers_from} > last {covers_to}"
                    )
                covered = covers_to
            else:
                covered = journal_end(conn)
            # Under the write lock no other process can add between this read and the
            # insert, so max(now, last + 1) is strictly increasing across processes too.
            (last,) = conn.execute(
                "SELECT max(created_us) FROM summaries WHERE workspace_id = ?",
                (ctx.workspace_pk,),
            ).fetchall()[0]
            created_us = now_us() if last is None else max(now_us(), int(last) + 1)
            created_at = iso_utc(created_us)
            sources = [by_seq[s].hex() for s in seqs] if seqs else []
            uid = summary_uid(
                branch, kind, text, created_at, author, covers_from, covers_to, sources
            )
            new_id = as_int(
                scalar(
                    conn,
                    "INSERT INTO summaries (workspace_id, branch, kind, text, created_at,"
                    " created_us, author, covers_from, covers_to, source_count, covered_seq,"
                    " uid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (
                        ctx.workspace_pk,
                        branch,
                        kind,
                        text,
                        created_at,
                        created_us,
                        author,
                        covers_from,
                        covers_to,
                        len(seqs),
                        covered,
                        uid,
                    ),
                )
            )
            if seqs:
                conn.executemany(
                    "INSERT INTO summary_sources (summary_id, entry_seq) VALUES (?, ?)",
                    [(new_id, seq) for seq in seqs],
                )
            conn.execute(
                "UPDATE summaries SET superseded_by = ? WHERE workspace_id = ? AND branch IS ?"
                " AND kind = ? AND superseded_by IS NULL AND id <> ?",
                (new_id, ctx.workspace_pk, branch, kind, new_id),
            )
            scope = SummaryScope(ctx.workspace_uuid, branch, False, kind)
            return SummaryAnswer(self._one(conn, new_id), scope, self._elsewhere(conn, scope))

    def remove(self, summary_id: int) -> Summary:
        """Delete a summary with its source links and its vectors (never the entries), and
        every byte of its text (as forget does). The summary it had superseded takes its
        place in the chain (and becomes current again if the removed one was). Returns the
        summary as it was."""
        require_int("summary id", summary_id, minimum=1)
        with self._ctx.db.write() as conn:
            gone = self._one(conn, summary_id)
            # Re-link before deleting: ON DELETE SET NULL alone would make an older
            # summary current beside a newer one when a middle link is removed.
            conn.execute(
                "UPDATE summaries SET superseded_by = ? WHERE superseded_by = ?",
                (gone.superseded_by, summary_id),
            )
            conn.execute("DELETE FROM summaries WHERE id = ?", (summary_id,))
        # Its text may quote a forgotten entry (forget lists such summaries): no byte of
        # it stays in the index, free pages or WAL either, nor in this machine's replica
        # history (`hold`).
        merge_fts(self._ctx.db, "summaries_fts", hold=self._hold)
        return gone

    # -- reading -----------------------------------------------------------------------------

    def get(self, summary_id: int) -> Summary:
        require_int("summary id", summary_id, minimum=1)
        found = self._many(
            f"{_SELECT} WHERE s.id = ? AND s.workspace_id = ?", [summary_id, self._ctx.workspace_pk]
        )
        if not found:
            raise NotFoundError(f"no summary {summary_id} in this workspace")
        return found[0]

    def latest(self, branch: BranchFilter = None, kind: str | None = None) -> Summary | None:
        """The newest summary of `branch` (None: the workspace-wide ones; ALL_BRANCHES: any
        scope), of `kind` or of any kind. Being the newest, it is the current one. (One
        statement: a session start's read; `read_latest` also says the scope.)"""
        found = self.list(branch, kind, limit=1)
        return found[0] if found else None

    def read_latest(self, branch: BranchFilter = None, kind: str | None = None) -> SummaryAnswer:
        """`latest`, answered with the scope it read and how many current summaries of
        `kind` other scopes hold, from one snapshot: the answer of `summary latest` and of
        the MCP tool summary_latest."""
        sql, params = self._list_query(branch, kind, limit=1)
        scope = SummaryScope.of(self._ctx.workspace_uuid, branch, kind)
        with self._ctx.db.read() as conn:
            rows = conn.execute(sql, params).fetchall()
            elsewhere = self._elsewhere(conn, scope)
        return SummaryAnswer(self._summary(rows[0]) if rows else None, scope, elsewhere)

    def list(
        self,
        branch: BranchFilter = None,
        kind: str | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        limit: int | None = DEFAULT_LIMIT,
        *,
        current_only: bool = False,
    ) -> builtins.list[Summary]:
        """Summaries newest first by created_at, superseded ones included (marked) unless
        `current_only`; `since` <= created_at < `until`."""
        return self._many(
            *self._list_query(branch, kind, since, until, limit, current_only=current_only)
        )

    def _list_query(
        self,
        branch: BranchFilter,
        kind: str | None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        limit: int | None = DEFAULT_LIMIT,
        *,
        current_only: bool = False,
    ) -> tuple[str, builtins.list[SQLiteValue]]:
        """`list`'s statement and its parameters, its arguments checked."""
        where = ["s.workspace_id = ?"]
        params: list[SQLiteValue] = [self._ctx.workspace_pk]
        select = _branch_clause(branch, where, params)
        if kind is not None:
            where.append("s.kind = ?")
            params.append(require_text("kind", kind, allow_empty=False))
        if since is not None:
            where.append("s.created_us >= ?")
            params.append(_instant("since", since))
        if until is not None:
            where.append("s.created_us < ?")
            params.append(_instant("until", until))
        if current_only:
            where.append("s.superseded_by IS NULL")
        sql = f"{select} WHERE {' AND '.join(where)} ORDER BY s.created_us DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(require_int("limit", limit, minimum=1))
        return sql, params

    def stale(
        self, branch: BranchFilter = ALL_BRANCHES, kind: str | None = None
    ) -> builtins.list[Summary]:
        """The current summaries that entries have arrived after, newest first: the ones
        worth rewriting. Across every scope unless narrowed."""
        where = ["s.workspace_id = ?", "s.superseded_by IS NULL"]
        params: list[Any] = [self._ctx.workspace_pk]
        select = _branch_clause(branch, where, params)
        if kind is not None:
            where.append("s.kind = ?")
            params.append(require_text("kind", kind, allow_empty=False))
        sql = f"{select} WHERE {' AND '.join(where)} ORDER BY s.created_us DESC"
        return [s for s in self._many(sql, params) if s.stale]

    def search(
        self,
        query: str,
        n: int = 10,
        *,
        branch: BranchFilter = ALL_BRANCHES,
        kind: str | None = None,
        include_superseded: bool = False,
        vector: object = None,
        model: str | None = None,
        fusion: str = "rrf",
    ) -> SummarySearch:
        """Full-text search of summaries, best first (a SummarySearchResult): every scope
        by default, or one `branch` (None: the workspace-wide ones) with the matches
        elsewhere counted; current summaries only unless `include_superseded` (see
        search/summaries.py)."""
        if self._searcher is None:
            raise InvalidInputError("these summaries were built without search (use open_store)")
        return self._searcher(
            self,
            query,
            n,
            branch=branch,
            kind=kind,
            include_superseded=include_superseded,
            vector=vector,
            model=model,
            fusion=fusion,
        )

    # -- internals -----------------------------------------------------------------------------

    def _elsewhere(self, conn: Connection, scope: SummaryScope) -> Elsewhere:
        """The current summaries of `scope`'s kind (any kind when None) in other scopes: a
        workspace-wide scope's others are every branch's, a branch's the workspace-wide
        ones and other branches'; every scope has none. One statement."""
        if scope.all_branches:
            return Elsewhere()
        sql = (
            "SELECT count(*) FROM summaries WHERE workspace_id = ? AND superseded_by IS NULL"
            " AND branch IS NOT ?"
        )
        params: list[SQLiteValue] = [self._ctx.workspace_pk, scope.branch]
        if scope.kind is not None:
            sql += " AND kind = ?"
            params.append(scope.kind)
        return Elsewhere(other_branches=as_int(scalar(conn, sql, params)))

    def _seq_of(self, conn: Connection, raw_ids: builtins.list[bytes]) -> dict[bytes, int]:
        return {
            as_bytes(i): as_int(s)
            for i, s in conn.execute(
                "SELECT e.id, e.seq FROM json_each(?) j CROSS JOIN journal_entries e"
                " ON e.workspace_id = ? AND e.id = unhex(j.value)",
                (_hex_list(raw_ids), self._ctx.workspace_pk),
            ).fetchall()
        }

    def _resolve_ids(self, conn: Connection, raw_ids: builtins.list[bytes]) -> builtins.list[int]:
        found = self._seq_of(conn, raw_ids)
        missing = [r.hex() for r in raw_ids if r not in found]
        if missing:
            shown = ", ".join(missing[:3]) + (
                f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            )
            raise UnknownEntryError(f"covers names entries not in this workspace: {shown}")
        return sorted(int(found[r]) for r in raw_ids)

    def _one(self, conn: Connection, summary_id: int) -> Summary:
        rows = conn.execute(
            f"{_SELECT} WHERE s.id = ? AND s.workspace_id = ?", (summary_id, self._ctx.workspace_pk)
        ).fetchall()
        if not rows:
            raise NotFoundError(f"no summary {summary_id} in this workspace")
        return self._summary(rows[0])

    def _many(self, sql: str, params: builtins.list[SQLiteValue]) -> builtins.list[Summary]:
        return [self._summary(r) for r in self._ctx.db.query(sql, params)]

    def _summary(self, row: Row) -> Summary:
        # _COLUMNS' kinds (schema.sql): read as such; another kind fails as damage.
        r: tuple[Any, ...] = row
        return Summary(
            id=int(r[0]),
            workspace_id=self._ctx.workspace_uuid,
            branch=r[1],
            kind=r[2],
            text=r[3],
            created_at=r[4],
            created_us=int(r[5]),
            author=r[6],
            entry_ids=tuple(loads(r[11])) if r[11] != "[]" else (),
            covers_from=r[7],
            covers_to=r[8],
            covered_through=int(r[9]),
            superseded_by=r[10],
            newer_entries=int(r[12]),
        )


def _hex_list(raw_ids: builtins.list[bytes]) -> str:
    # A JSON array of hex strings: hex needs no escaping, so no JSON encoder is loaded.
    return "[" + ",".join(f'"{r.hex()}"' for r in raw_ids) + "]"
