"""The session journal (`store.journal`): append, read, latest, pending next steps and
the write path with carry-forward, with synapt 0.30.0's semantics and the scoping in SQL.

Which version of a session a read shows ("the head") and how many entries each scope holds
are maintained by triggers in schema.sql; this module only walks the head indexes."""

from __future__ import annotations

import apsw

from .. import scope
from .. import synapt_fields as synapt
from ..checks import parse_entry_id, require_bool, require_int, require_list, require_text
from ..context import StoreContext
from ..db import as_bytes, as_int, as_str, translate_any
from ..errors import FieldTypeError, InvalidEntryError
from ..timestamps import now_us, synapt_now
from . import codec, heads
from .carry import is_collapsed, merge_carried_forward, step_key
from .entry import JournalEntry
from .results import AppendResult, PendingResult, ReadResult, WriteResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    from apsw import Connection, SQLiteValue

    from ..db import Hold, Row
    from .forget import FilesHook, ForgetReport
    from .host import JournalHost
    from .results import EntrySearch

    # What the store composes in for `search` (search/ depends on this family, never the
    # reverse): called with the query and search's own arguments.
    Searcher = Callable[..., EntrySearch]

ENTRY_COLUMNS = codec.select_list()
# The scalar columns version_rows may be asked for (a whitelist: they go into SQL text).
_SCALAR_FIELDS = frozenset(("timestamp", *synapt.TEXT_FIELDS, *synapt.BOOL_FIELDS))
# From this many rows on, append_many writes through bulk.py (measured break-even:
# bench/RESULTS.md, row 'merge: row or bulk path'; `python bench/merge_paths.py --append`).
BULK_MIN_ROWS = 8
# How many heads synapt's pending_next_steps looks at.
PENDING_WINDOW = 20


class Journal:
    def __init__(
        self,
        ctx: StoreContext,
        *,
        searcher: Searcher | None = None,
        files: FilesHook | None = None,
        others: Callable[[], int] | None = None,
        hold: Hold | None = None,
    ) -> None:
        self._ctx = ctx
        self._searcher = searcher
        # What forget calls for the copies in files (the store composes legacy/copies.py in).
        self._files = files
        # Holds replication still while forget empties the WAL (composed in by the store
        # when the store syncs: sync/pause.py).
        self._hold = hold
        # What other machines hold that this store has not pulled (composed in by the store
        # when the store syncs: sync/peers.py); None costs a read nothing.
        self._others = others

    @property
    def host(self) -> JournalHost:
        """What a host that serves synapt's own journal calls needs beyond the reads above
        (journal/host.py): the synapt adapter's helpers, apart from the documented face."""
        from .host import JournalHost

        return JournalHost(self._ctx)

    # -- writing ----------------------------------------------------------------------

    def append(
        self,
        entry: JournalEntry | Mapping[str, object],
        *,
        worktree: str | None = None,
        allow_collapsed: bool = False,
    ) -> AppendResult:
        """Store one entry version in the current worktree (or `worktree`, a key of a
        worktree already known to the workspace). Identical content is stored once and
        returns the same id. Raises InvalidEntryError and writes nothing on bad input."""
        e = _prepare(entry, allow_collapsed=allow_collapsed)
        worktree_pk = self._worktree_pk(worktree)
        row = self._row(e, worktree_pk)
        with self._ctx.db.write() as conn:
            return _insert(conn, row)

    def append_many(
        self,
        entries: Iterable[JournalEntry | Mapping[str, object]],
        *,
        worktree: str | None = None,
    ) -> list[AppendResult]:
        """All or nothing: one invalid entry rejects the batch before anything is written."""
        worktree_pk = self._worktree_pk(worktree)
        rows = [self._row(_prepare(e, allow_collapsed=True), worktree_pk) for e in entries]
        ids = [as_bytes(r[0]) for r in rows]  # (codec.ROW_COLUMNS: the id first)
        with self._ctx.db.write() as conn:
            if rows:
                refuse_forgotten(conn, self._ctx.workspace_pk, ids)
            if len(rows) < BULK_MIN_ROWS:
                return [_insert(conn, r) for r in rows]
            # Same state as the loop above (burnt seqs of duplicates included), without
            # the per-row trigger: see bulk.py.
            from .bulk import bulk_insert

            stored = bulk_insert(conn, rows, burn_duplicates=True)
        results: list[AppendResult] = []
        claimed: set[bytes] = set()
        for rid in ids:
            got = stored[rid]
            created = got.created and rid not in claimed
            claimed.add(rid)
            results.append(AppendResult(rid.hex(), created, got.seq))
        return results

    def write(
        self,
        *,
        focus: str = "",
        done: Sequence[str] = (),
        decisions: Sequence[str] = (),
        next_steps: Sequence[str] = (),
        session_id: str = "",
        branch: str | None = None,
        timestamp: str | None = None,
        files_modified: Sequence[str] = (),
        git_log: Sequence[str] = (),
        griptree: str = "",
        agent_id: str = "",
    ) -> WriteResult:
        """synapt's `recall_journal write`: the previous meaningful entry's unresolved next
        steps are carried forward (minus those this write or this session's earlier writes
        marked done), and the entry is stored. Raises InvalidEntryError when there is
        nothing to journal."""
        entry = JournalEntry(
            timestamp=timestamp or synapt_now(),
            session_id=session_id,
            branch=self._ctx.branch if branch is None else branch,
            focus=focus,
            done=_list("done", done),
            decisions=_list("decisions", decisions),
            next_steps=_list("next_steps", next_steps),
            files_modified=_list("files_modified", files_modified),
            git_log=_list("git_log", git_log),
            griptree=griptree,
            agent_id=agent_id,
        )
        entry.validate(allow_collapsed=False)
        if not entry.has_content():
            raise InvalidEntryError(
                "nothing to journal: give a focus, done, decisions or next steps"
            )
        explicit = [s.strip() for s in entry.next_steps if s and s.strip()]
        with self._ctx.db.write() as conn:
            previous = heads.previous_meaningful(conn, self._ctx, session_id)
            earlier_done = (
                [
                    item
                    for items in heads.done_lists(conn, self._ctx, [session_id], False)
                    for item in items
                ]
                if session_id
                else []
            )
            entry.next_steps, report = merge_carried_forward(
                entry.next_steps,
                entry.done,
                previous.next_steps if previous else [],
                previous.timestamp if previous else "",
                earlier_done,
            )
            result = _insert(conn, self._row(entry, self._ctx.worktree_pk))
            # The worktree and branch written, and what a read of them counts outside,
            # in the write's own transaction.
            written, elsewhere = self.scope_of(
                conn, scope.Keys(self._ctx.workspace_pk, self._ctx.worktree_pk, entry.branch, False)
            )
        entry.id, entry.worktree = result.id, self._ctx.worktree_key
        return WriteResult(result.id, result.created, entry, report, explicit, written, elsewhere)

    def _worktree_pk(self, worktree: str | None) -> int:
        if worktree is None:
            return self._ctx.worktree_pk
        pk = self._ctx.worktree_pk_of(require_text("worktree", worktree))
        if pk is None:
            raise InvalidEntryError(f"unknown worktree {worktree!r} in this workspace")
        return pk

    def _row(self, e: JournalEntry, worktree_pk: int) -> Row:
        """A journal_entries row in codec.ROW_COLUMNS order."""
        ctx = self._ctx
        eid, content = e.encode()
        return (eid, ctx.workspace_pk, worktree_pk, now_us(), *content)

    def forget(
        self,
        entry_ids: str | Iterable[str] = (),
        *,
        session_id: str | None = None,
        scrub_sources: bool = False,
    ) -> ForgetReport:
        """Remove entry versions (by id) or every version of a session, for real: their
        vectors, summary links and provenance go, quarantined copies of their text are
        emptied, derived state stays right, the ids are tombstoned (an import never brings
        them back) and no byte of the text stays in the database file or its WAL (see
        journal/forget.py). The lines the store wrote into synapt's buckets (its mirror)
        are removed; copies in files it did not write (imported sources) are listed in the
        report, and removed too with `scrub_sources`. An id forgotten here before (by an
        earlier forget, or another machine's that a pull applied) is reported as
        `already`, and every line that is exactly that version is removed from synapt's
        buckets again. Raises UnknownEntryError for an id this workspace never held."""
        from .forget import forget

        return forget(
            self._ctx,
            entry_ids,
            session_id,
            files=self._files,
            scrub_sources=scrub_sources,
            hold=self._hold,
        )

    # -- reading ----------------------------------------------------------------------

    def read(
        self,
        n: int = 5,
        branch: str | None = None,
        all_worktrees: bool = False,
        meaningful: bool = False,
    ) -> ReadResult:
        """The newest `n` entries, one per session (its richest version), newest first,
        in the current worktree (or the whole workspace), optionally one branch; with how
        many match in scope and how many match outside it."""
        require_int("n", n, minimum=0, error=InvalidEntryError)
        k = scope.keys(self._ctx, branch, all_worktrees, meaningful, error=InvalidEntryError)
        # No explicit transaction: the counts are read after the rows and heads are never
        # deleted, so a concurrent append can only make `total` larger, never smaller than
        # what is shown; and a read stays two statements (this is the hot path).
        with self._ctx.db.lock:
            conn = self._ctx.db.conn
            try:
                rows = heads.walk(conn, k, n)
                total, elsewhere = self._counts(conn, k)
            except (apsw.Error, ValueError, TypeError) as exc:
                raise translate_any(exc, self._ctx.db.path) from None
        return ReadResult(self._entries(rows), k.public(self._ctx), total, elsewhere)

    def latest(
        self, meaningful: bool = False, *, branch: str | None = None, all_worktrees: bool = False
    ) -> ReadResult:
        """read(n=1): `.entry` is the newest (meaningful) entry or None."""
        return self.read(1, branch=branch, all_worktrees=all_worktrees, meaningful=meaningful)

    def pending_next_steps(self, *, all_worktrees: bool = False) -> PendingResult:
        """Unresolved next steps across the newest sessions (synapt's window of 20), newest
        wording first; a step is resolved when any version of a session in that window
        lists it as done."""
        k = scope.keys(self._ctx, None, all_worktrees, False)
        with self._ctx.db.read() as conn:
            newest = self._entries(heads.walk(conn, k, PENDING_WINDOW))
            sessions = {e.session_id for e in newest}
            done_keys: set[str] = set()
            for items in heads.done_lists(conn, self._ctx, sorted(sessions), all_worktrees):
                done_keys.update(step_key(i) for i in items if i and i.strip())
            _, elsewhere = self._counts(conn, k)
        seen: set[str] = set()
        pending: list[str] = []
        for e in newest:
            for step in e.next_steps:
                if not step or not step.strip() or is_collapsed(step):
                    continue
                if step.strip().startswith("[carry bound]"):
                    continue
                key = step_key(step)
                if key in done_keys or key in seen:
                    continue
                pending.append(step)
                seen.add(key)
        return PendingResult(pending, k.public(self._ctx), len(sessions), elsewhere)

    def versions(
        self,
        *,
        session_id: str | None = None,
        worktree: str | None = None,
        all_worktrees: bool = False,
    ) -> list[JournalEntry]:
        """Every stored version in scope, oldest insertion first: not only the one per
        session that reads show. For hosts that replay a journal file (synapt's raw
        reads); `worktree` names another worktree of the workspace by key."""
        ctx = self._ctx
        all_worktrees = require_bool("all_worktrees", all_worktrees)
        if session_id is not None:
            session_id = require_text("session_id", session_id)
        sql = f"SELECT {ENTRY_COLUMNS} FROM journal_entries WHERE workspace_id = ?"
        params: list[Any] = [ctx.workspace_pk]
        if not all_worktrees:
            pk = (
                ctx.worktree_pk
                if worktree is None
                else ctx.worktree_pk_of(require_text("worktree", worktree))
            )
            if pk is None:
                return []
            sql += " AND worktree_id = ?"
            params.append(pk)
        if session_id is not None:
            sql += " AND session_id = ?"
            params.append(session_id)
        return self._entries(self._ctx.db.query(sql + " ORDER BY seq", params))

    def search(
        self,
        query: str,
        n: int = 10,
        *,
        branch: str | None = None,
        all_worktrees: bool = False,
        meaningful: bool = False,
        vector: object = None,
        model: str | None = None,
        fusion: str = "rrf",
    ) -> EntrySearch:
        """Full-text search, best first, scoped as `read` (an EntrySearchResult: hits,
        scope, total, elsewhere); with `vector` and `model`, fused with the vector ranking
        of the same scope (see search/journal.py)."""
        if self._searcher is None:
            raise InvalidEntryError("this journal was built without search (use open_store)")
        return self._searcher(
            query,
            n,
            branch=branch,
            all_worktrees=all_worktrees,
            meaningful=meaningful,
            vector=vector,
            model=model,
            fusion=fusion,
        )

    def get(self, entry_id_hex: str) -> JournalEntry | None:
        """One stored version by id, within this workspace only; None when it has none of
        that id. Anything but an id (32 hex digits) raises InvalidEntryError."""
        raw = parse_entry_id(entry_id_hex, error=InvalidEntryError)
        rows = self._ctx.db.query(
            f"SELECT {ENTRY_COLUMNS} FROM journal_entries WHERE id = ? AND workspace_id = ?",
            (raw, self._ctx.workspace_pk),
        )
        return self._entries(rows[:1])[0] if rows else None

    def scope_of(self, conn: Connection, k: scope.Keys) -> tuple[scope.Scope, scope.Elsewhere]:
        """`k`'s scope as results report it and what a read of it counts outside it, on
        `conn`'s snapshot (one statement on the count tables): for the answers that say the
        scope they wrote to or delivered (a write, a cursor's) without reading it."""
        return k.public(self._ctx), self._counts(conn, k)[1]

    # -- internals ----------------------------------------------------------------------

    def _counts(self, conn: Connection, k: scope.Keys) -> tuple[int, scope.Elsewhere]:
        total, elsewhere = scope.totals(conn.execute(k.counts_sql(), k.params()))
        if self._others is not None:
            elsewhere = elsewhere.with_machines(self._others())
        return total, elsewhere

    def _entries(self, rows: Sequence[Sequence[SQLiteValue]]) -> list[JournalEntry]:
        return JournalEntry.from_rows(rows, self._ctx.worktree_key_of)


def _list(name: str, value: object) -> list[str]:
    """A list argument of write() as a list (any iterable; a string is refused)."""
    return require_list(name, value, iterable=True, what="a list of strings", error=FieldTypeError)


def _prepare(entry: JournalEntry | Mapping[str, object], *, allow_collapsed: bool) -> JournalEntry:
    if isinstance(entry, JournalEntry):
        e = entry.copy()
        e.validate(allow_collapsed=allow_collapsed)
        return e
    return JournalEntry.from_mapping(entry, allow_collapsed=allow_collapsed)


def _insert(conn: Connection, row: Row) -> AppendResult:
    # The schema's trigger refuses a forgotten id (one statement fewer per append than
    # asking first); its refusal is said plainly here. fetchall: RETURNING statements
    # must run to completion before the commit.
    rid = as_bytes(row[0])  # (codec.ROW_COLUMNS: the id first)
    try:
        inserted = conn.execute(codec.INSERT_SQL, row).fetchall()
    except apsw.ConstraintError as exc:
        if _FORGOTTEN_TRIGGER in str(exc):
            raise InvalidEntryError(_forgotten_message(rid.hex())) from None
        raise
    if inserted:
        return AppendResult(rid.hex(), True, as_int(inserted[0][0]))
    existing = conn.execute(
        "SELECT seq FROM journal_entries WHERE workspace_id = ? AND id = ?", (row[1], row[0])
    ).fetchall()
    return AppendResult(rid.hex(), False, as_int(existing[0][0]))


def refuse_forgotten(conn: Connection, workspace_pk: int, ids: Sequence[bytes]) -> None:
    """InvalidEntryError when one of `ids` was forgotten in the workspace: a tombstone wins
    over every version of its id (the schema refuses the insert too; this says it plainly)."""
    rows = conn.execute(
        "SELECT lower(hex(t.id)) FROM json_each(?) j CROSS JOIN journal_tombstones t"
        " ON t.workspace_id = ? AND t.id = unhex(j.value) AND t.formula = 2",
        ("[" + ",".join([f'"{bytes(i).hex()}"' for i in ids]) + "]", workspace_pk),
    ).fetchall()
    if rows:
        raise InvalidEntryError(_forgotten_message(as_str(rows[0][0])))


# The RAISE message of schema.sql's journal_entries_not_forgotten trigger.
_FORGOTTEN_TRIGGER = "journal entry was forgotten"


def _forgotten_message(entry_id: str) -> str:
    return (
        f"entry {entry_id} was forgotten (journal forget): a forgotten version is never"
        " stored again; change its content to write it anew"
    )
