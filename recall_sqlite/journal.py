"""The session journal: append, read, latest, pending next steps and the write path with
carry-forward, with synapt 0.30.0's semantics and the scoping done in SQL.

Which version of a session a read shows ("the head") and how many entries each scope holds
are maintained by triggers in schema.sql; this module only walks the head indexes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache
from typing import TYPE_CHECKING, Any

import apsw

from .carry import CarryReport, is_collapsed, merge_carried_forward, step_key
from .context import StoreContext
from .db import now_us, translate
from .errors import InvalidEntryError, JournalFieldCollapse
from .timestamps import parse_timestamp
from .validate import require_text

if TYPE_CHECKING:
    from .search import EntrySearchResult, Fusion

TEXT_FIELDS = ("session_id", "branch", "focus", "griptree", "agent_id")
LIST_FIELDS = ("done", "decisions", "next_steps", "files_modified", "git_log")
BOOL_FIELDS = ("auto", "enriched", "repair")
# synapt 0.30.0's JournalEntry fields, in its order.
SYNAPT_FIELDS = (
    "timestamp", "session_id", "branch", "focus", "done", "decisions", "next_steps",
    "files_modified", "git_log", "auto", "enriched", "griptree", "agent_id", "repair",
)
_RICH = ("focus", "done", "decisions", "next_steps")


@dataclass
class JournalEntry:
    """One journal entry version: synapt's fields, plus the store's `id` and `worktree`,
    plus `extra` (fields synapt does not know, kept verbatim from legacy files)."""

    timestamp: str
    session_id: str = ""
    branch: str = ""
    focus: str = ""
    done: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    files_modified: list[str] = field(default_factory=list)
    git_log: list[str] = field(default_factory=list)
    auto: bool = False
    enriched: bool = False
    griptree: str = ""
    agent_id: str = ""
    repair: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    worktree: str | None = None

    def has_content(self) -> bool:
        return bool(self.has_rich_content() or self.files_modified)

    def has_rich_content(self) -> bool:
        return bool(self.focus or self.done or self.decisions or self.next_steps)

    def is_meaningful(self) -> bool:
        """synapt's read_latest(meaningful=True) rule: any done/decisions/next_steps, or a
        focus written by hand (an auto-extracted focus alone carries no signal)."""
        listed = self.done or self.decisions or self.next_steps
        return bool(listed or (self.focus and not self.auto))

    def synapt_dict(self) -> dict[str, Any]:
        """synapt's own field names and values only (what synapt's append_entry writes)."""
        return {name: _copy(getattr(self, name)) for name in SYNAPT_FIELDS}

    def to_dict(self) -> dict[str, Any]:
        d = self.synapt_dict()
        d["id"] = self.id
        d["worktree"] = self.worktree
        if self.extra:
            d["extra"] = dict(self.extra)
        return d

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> JournalEntry:
        """Validate a mapping with synapt's field names. Keys synapt does not know go to
        `extra`. Documented normalisation: null for a text/list/bool field means empty.
        Anything else of the wrong type raises InvalidEntryError."""
        if not isinstance(data, Mapping):
            raise InvalidEntryError(f"an entry must be a JSON object, got {type(data).__name__}")
        if "timestamp" not in data or data["timestamp"] is None:
            raise InvalidEntryError("entry has no timestamp")
        values: dict[str, Any] = {"timestamp": data["timestamp"]}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key == "timestamp":
                continue
            if key in SYNAPT_FIELDS:
                values[key] = value
            else:
                extra[str(key)] = value
        entry = cls(**values, extra=extra)
        entry.validate()
        return entry

    def validate(self, *, allow_collapsed: bool = True) -> None:
        """Check types and text in place; None becomes the field's empty value."""
        _check_text("timestamp", self.timestamp)
        parse_timestamp(self.timestamp)
        for name in TEXT_FIELDS:
            value = getattr(self, name)
            if value is None:
                setattr(self, name, "")
            else:
                _check_text(name, value)
        for name in LIST_FIELDS:
            value = getattr(self, name)
            if value is None:
                setattr(self, name, [])
                continue
            if not isinstance(value, (list, tuple)):
                raise InvalidEntryError(
                    f"{name} must be a list of strings, got {type(value).__name__}")
            for item in value:
                _check_text(f"{name} item", item)
            setattr(self, name, list(value))
        for name in BOOL_FIELDS:
            value = getattr(self, name)
            if value is None:
                setattr(self, name, False)
            elif not isinstance(value, bool):
                raise InvalidEntryError(f"{name} must be true or false, got {value!r}")
        if not isinstance(self.extra, dict):
            raise InvalidEntryError("extra must be a JSON object")
        try:
            _canonical_json(self.extra)
        except (TypeError, ValueError) as exc:
            raise InvalidEntryError(f"extra fields are not storable as JSON: {exc}") from None
        _check_nested_text("extra", self.extra)
        if not allow_collapsed:
            for name in _RICH:
                value = getattr(self, name)
                for item in [value] if isinstance(value, str) else value:
                    if is_collapsed(item):
                        raise JournalFieldCollapse(
                            f"journal field {name!r} carries tool-call markup: an unclosed "
                            "parameter swallowed the fields after it; resend the fields separately"
                        )


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _check_text(name: str, value: object) -> None:
    require_text(name, value, error=InvalidEntryError)


def _check_nested_text(name: str, value: object) -> None:
    if isinstance(value, str):
        _check_text(name, value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_text(f"{name} key", k)
            _check_nested_text(f"{name}.{k}", v)
    elif isinstance(value, list):
        for v in value:
            _check_nested_text(name, v)


# Built once: json.dumps with non-default options constructs a new encoder on every call.
_canonical_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                                   allow_nan=False).encode
_list_json = json.JSONEncoder(ensure_ascii=False).encode


def entry_id(workspace_uuid: str, entry: JournalEntry) -> bytes:
    """Content address: the same entry in the same workspace always gets the same id, so
    identical appends (and identical lines in several legacy buckets) collapse, and two
    stores of one workspace merge as a set union."""
    canon = entry.synapt_dict()
    if entry.extra:
        canon["extra"] = entry.extra
    import hashlib  # deferred: only writers pay for it

    digest = hashlib.sha256(f"{workspace_uuid}\n{_canonical_json(canon)}".encode())
    return digest.digest()[:16]


@dataclass(frozen=True)
class Scope:
    workspace_id: str
    worktree: str | None        # None = every worktree of the workspace
    branch: str | None          # None = every branch
    meaningful: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"workspace_id": self.workspace_id, "worktree": self.worktree,
                "branch": self.branch, "meaningful": self.meaningful}

    def describe(self) -> str:
        where = "all worktrees" if self.worktree is None else f"worktree {self.worktree}"
        branch = "all branches" if self.branch is None else f"branch {self.branch or '(none)'}"
        kind = ", meaningful only" if self.meaningful else ""
        return f"{where}, {branch}{kind}"


@dataclass(frozen=True)
class Elsewhere:
    """Matching entries outside the scope: never a silent partial answer."""

    other_worktrees: int = 0
    other_branches: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"other_worktrees": self.other_worktrees, "other_branches": self.other_branches}

    @property
    def total(self) -> int:
        return self.other_worktrees + self.other_branches


@dataclass(frozen=True)
class ReadResult:
    entries: list[JournalEntry]
    scope: Scope
    total: int                  # deduplicated entries matching in scope (>= len(entries))
    elsewhere: Elsewhere

    @property
    def entry(self) -> JournalEntry | None:
        return self.entries[0] if self.entries else None

    def to_dict(self) -> dict[str, Any]:
        return {"entries": [e.to_dict() for e in self.entries], "scope": self.scope.to_dict(),
                "total": self.total, "elsewhere": self.elsewhere.to_dict()}


@dataclass(frozen=True)
class PendingResult:
    pending: list[str]
    scope: Scope
    sessions_considered: int
    elsewhere: Elsewhere

    def to_dict(self) -> dict[str, Any]:
        return {"pending": list(self.pending), "scope": self.scope.to_dict(),
                "sessions_considered": self.sessions_considered,
                "elsewhere": self.elsewhere.to_dict()}


@dataclass(frozen=True)
class AppendResult:
    id: str
    created: bool               # False: identical content was already stored
    seq: int


@dataclass(frozen=True)
class WriteResult:
    id: str
    created: bool
    entry: JournalEntry
    carry: CarryReport
    explicit_next_steps: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "created": self.created, "entry": self.entry.to_dict(),
                "carry": self.carry.to_dict(), "explicit_next_steps": self.explicit_next_steps}


def entry_columns(alias: str = "") -> str:
    """The select list every entry row starts with, in the order entries_from_rows expects.
    The five JSON lists and `extra` arrive as one JSON array built by SQLite (plain text
    concatenation, no JSON parsing): one Python string per row instead of six, and one
    json.loads per read instead of one per field."""
    a = f"{alias}." if alias else ""
    return (
        f"{a}seq, {a}id, {a}worktree_id, {a}session_id, {a}branch, {a}timestamp, {a}focus,"
        f" {a}auto, {a}enriched, {a}repair, {a}griptree, {a}agent_id,"
        f" '[' || {a}done || ',' || {a}decisions || ',' || {a}next_steps || ','"
        f" || {a}files_modified || ',' || {a}git_log || ',' || coalesce({a}extra, 'null') || ']'"
    )


ENTRY_COLUMNS = entry_columns()
# From this many rows on, append_many writes through journal_bulk.py (measured break-even).
BULK_MIN_ROWS = 32
# How many heads synapt's pending_next_steps looks at.
PENDING_WINDOW = 20


class Journal:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    # -- writing ----------------------------------------------------------------------

    def append(
        self,
        entry: JournalEntry | Mapping[str, Any],
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
        self, entries: Iterable[JournalEntry | Mapping[str, Any]], *, worktree: str | None = None
    ) -> list[AppendResult]:
        """All or nothing: one invalid entry rejects the batch before anything is written."""
        worktree_pk = self._worktree_pk(worktree)
        rows = [self._row(_prepare(e, allow_collapsed=True), worktree_pk) for e in entries]
        with self._ctx.db.write() as conn:
            if len(rows) < BULK_MIN_ROWS:
                return [_insert(conn, r) for r in rows]
            # Same state as the loop above (burnt seqs of duplicates included), without
            # the per-row trigger: see journal_bulk.py.
            from .journal_bulk import bulk_insert

            stored = bulk_insert(conn, rows, burn_duplicates=True)
        results: list[AppendResult] = []
        claimed: set[bytes] = set()
        for r in rows:
            got = stored[r[0]]
            created = got.created and r[0] not in claimed
            claimed.add(r[0])
            results.append(AppendResult(r[0].hex(), created, got.seq))
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
            timestamp=timestamp or datetime.now(timezone.utc).isoformat(),
            session_id=session_id,
            branch=self._ctx.branch if branch is None else branch,
            focus=focus,
            done=list(done),
            decisions=list(decisions),
            next_steps=list(next_steps),
            files_modified=list(files_modified),
            git_log=list(git_log),
            griptree=griptree,
            agent_id=agent_id,
        )
        entry.validate(allow_collapsed=False)
        if not entry.has_content():
            raise InvalidEntryError(
                "nothing to journal: give a focus, done, decisions or next steps")
        explicit = [s.strip() for s in entry.next_steps if s and s.strip()]
        with self._ctx.db.write() as conn:
            previous = self._previous_meaningful(conn, session_id)
            earlier_done = ([item for items in self._raw_done(conn, session_id, False)
                             for item in items] if session_id else [])
            entry.next_steps, report = merge_carried_forward(
                entry.next_steps, entry.done,
                previous.next_steps if previous else [],
                previous.timestamp if previous else "",
                earlier_done,
            )
            result = _insert(conn, self._row(entry, self._ctx.worktree_pk))
        entry.id, entry.worktree = result.id, self._ctx.worktree_key
        return WriteResult(result.id, result.created, entry, report, explicit)

    def _worktree_pk(self, worktree: str | None) -> int:
        if worktree is None:
            return self._ctx.worktree_pk
        pk = self._ctx.worktree_pk_of(worktree)
        if pk is None:
            raise InvalidEntryError(f"unknown worktree {worktree!r} in this workspace")
        return pk

    def _row(self, e: JournalEntry, worktree_pk: int) -> tuple[Any, ...]:
        ctx = self._ctx
        return (
            entry_id(ctx.workspace_uuid, e), ctx.workspace_pk, worktree_pk, e.session_id,
            e.branch, e.timestamp, parse_timestamp(e.timestamp), e.focus,
            _dump(e.done), _dump(e.decisions), _dump(e.next_steps), _dump(e.files_modified),
            _dump(e.git_log), int(e.auto), int(e.enriched), int(e.repair), e.griptree,
            e.agent_id, _canonical_json(e.extra) if e.extra else None, now_us(),
            sum(1 for name in _RICH if getattr(e, name)), int(e.is_meaningful()),
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
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InvalidEntryError(f"n must be a non-negative integer, got {n!r}")
        if branch is not None and not isinstance(branch, str):
            raise InvalidEntryError("branch must be a string")
        # No explicit transaction: the counts are read after the rows and heads are never
        # deleted, so a concurrent append can only make `total` larger, never smaller than
        # what is shown; and a read stays two statements (this is the hot path).
        with self._ctx.db.lock:
            conn = self._ctx.db.conn
            try:
                rows = self._walk(conn, n, branch, all_worktrees, meaningful)
                total, elsewhere = self._counts(conn, branch, all_worktrees, meaningful)
            except apsw.Error as exc:
                raise translate(exc, self._ctx.db.path) from None
        scope = self._scope(branch, all_worktrees, meaningful)
        return ReadResult(self.entries_from_rows(rows), scope, total, elsewhere)

    def latest(self, meaningful: bool = False, *, branch: str | None = None,
               all_worktrees: bool = False) -> ReadResult:
        """read(n=1): `.entry` is the newest (meaningful) entry or None."""
        return self.read(1, branch=branch, all_worktrees=all_worktrees, meaningful=meaningful)

    def previous_meaningful(self, current_session_id: str = "") -> JournalEntry | None:
        """The newest meaningful entry of another session (what a write carries from)."""
        with self._ctx.db.read() as conn:
            return self._previous_meaningful(conn, current_session_id)

    def pending_next_steps(self, *, all_worktrees: bool = False) -> PendingResult:
        """Unresolved next steps across the newest sessions (synapt's window of 20), newest
        wording first; a step is resolved when any version of a session in that window
        lists it as done."""
        with self._ctx.db.read() as conn:
            heads = self.entries_from_rows(
                self._walk(conn, PENDING_WINDOW, None, all_worktrees, False))
            sessions = {e.session_id for e in heads}
            done_keys: set[str] = set()
            for sid in sessions:
                for items in self._raw_done(conn, sid, all_worktrees):
                    done_keys.update(step_key(i) for i in items if i and i.strip())
            _, elsewhere = self._counts(conn, None, all_worktrees, False)
        seen: set[str] = set()
        pending: list[str] = []
        for e in heads:
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
        scope = self._scope(None, all_worktrees, False)
        return PendingResult(pending, scope, len(sessions), elsewhere)

    def search(self, query: str, n: int = 10, *, branch: str | None = None,
               all_worktrees: bool = False, meaningful: bool = False,
               vector: object = None, model: str | None = None,
               fusion: Fusion = "rrf") -> EntrySearchResult:
        """Full-text search, best first, scoped as `read` (see recall_sqlite/search.py);
        with `vector` and `model`, fused with the vector ranking of the same scope."""
        from .search import search_journal

        return search_journal(self._ctx, self, query, n, branch=branch,
                              all_worktrees=all_worktrees, meaningful=meaningful,
                              vector=vector, model=model, fusion=fusion)

    def get(self, entry_id_hex: str) -> JournalEntry | None:
        """One stored version by id, within this workspace only."""
        try:
            raw = bytes.fromhex(entry_id_hex)
        except (ValueError, TypeError):
            raise InvalidEntryError(f"not an entry id: {entry_id_hex!r}") from None
        rows = self._ctx.db.query(
            f"SELECT {ENTRY_COLUMNS} FROM journal_entries WHERE id = ? AND workspace_id = ?",
            (raw, self._ctx.workspace_pk),
        )
        return self.entry_from_row(rows[0]) if rows else None

    # -- internals ----------------------------------------------------------------------

    def _scope(self, branch: str | None, all_worktrees: bool, meaningful: bool) -> Scope:
        ctx = self._ctx
        return Scope(ctx.workspace_uuid, None if all_worktrees else ctx.worktree_key,
                     branch, meaningful)

    def _walk(self, conn: Any, n: int, branch: str | None, all_worktrees: bool,
              meaningful: bool) -> list[tuple[Any, ...]]:
        ctx = self._ctx
        params: list[Any] = [ctx.workspace_pk]
        if not all_worktrees:
            params.append(ctx.worktree_pk)
        if branch is not None:
            params.append(branch)
        params.append(n)
        rows: list[tuple[Any, ...]] = conn.execute(
            _walk_sql(all_worktrees, branch is not None, meaningful), params).fetchall()
        return rows

    def _counts(self, conn: Any, branch: str | None, all_worktrees: bool,
                meaningful: bool) -> tuple[int, Elsewhere]:
        ctx = self._ctx
        col = "meaningful" if meaningful else "heads"
        total = other_wt = other_br = 0
        if all_worktrees:
            for b, c in conn.execute(
                f"SELECT branch, {col} FROM journal_counts_ws WHERE workspace_id = ?",
                (ctx.workspace_pk,),
            ):
                if branch is None or b == branch:
                    total += c
                else:
                    other_br += c
        else:
            for wt, b, c in conn.execute(
                f"SELECT worktree_id, branch, {col} FROM journal_counts_wt WHERE workspace_id = ?",
                (ctx.workspace_pk,),
            ):
                on_branch = branch is None or b == branch
                if wt == ctx.worktree_pk:
                    if on_branch:
                        total += c
                    else:
                        other_br += c
                elif on_branch:
                    other_wt += c
        return total, Elsewhere(other_wt, other_br)

    def _previous_meaningful(self, conn: Any, current_session_id: str) -> JournalEntry | None:
        ctx = self._ctx
        params: list[Any] = [ctx.workspace_pk, ctx.worktree_pk]
        skip = ""
        # An empty current id excludes nothing (synapt skips only a named session).
        if current_session_id:
            skip = " AND session_id <> ?"
            params.append(current_session_id)
        sql = (f"SELECT {ENTRY_COLUMNS} FROM journal_entries"
               " WHERE workspace_id = ? AND worktree_id = ?"
               f" AND head_wt = 1 AND meaningful = 1{skip} ORDER BY ts_us DESC, sid_order LIMIT 1")
        rows = conn.execute(sql, params).fetchall()
        return self.entry_from_row(rows[0]) if rows else None

    def _raw_done(self, conn: Any, session_id: str, all_worktrees: bool) -> list[list[str]]:
        """The done list of every stored version of a session, oldest first."""
        sql = "SELECT done FROM journal_entries WHERE workspace_id = ? AND session_id = ?"
        params: list[Any] = [self._ctx.workspace_pk, session_id]
        if not all_worktrees:
            sql += " AND worktree_id = ?"
            params.append(self._ctx.worktree_pk)
        return [json.loads(done) for (done,) in conn.execute(sql + " ORDER BY seq", params)]

    def entry_from_row(self, r: Sequence[Any]) -> JournalEntry:
        """A JournalEntry from a row that starts with ENTRY_COLUMNS."""
        return self.entries_from_rows([r])[0]

    def entries_from_rows(self, rows: Sequence[Sequence[Any]]) -> list[JournalEntry]:
        """JournalEntry objects from rows that start with ENTRY_COLUMNS. The JSON of every
        list and extra field of every row is decoded in one call: per-field json.loads
        calls were most of the cost of a read."""
        if not rows:
            return []
        decoded: list[list[Any]] = json.loads(f"[{','.join([r[12] for r in rows])}]")
        key_of = self._ctx.worktree_key_of
        return [
            JournalEntry(r[5], r[3], r[4], r[6], d[0], d[1], d[2], d[3], d[4], bool(r[7]),
                         bool(r[8]), r[10], r[11], bool(r[9]), d[5] or {}, r[1].hex(),
                         key_of(r[2]))
            for r, d in zip(rows, decoded, strict=True)
        ]


@cache
def _walk_sql(all_worktrees: bool, by_branch: bool, meaningful: bool) -> str:
    """The "newest n" statement of one scope shape: a walk of one partial head index."""
    where = ["workspace_id = ?"]
    where += ["head_ws = 1"] if all_worktrees else ["worktree_id = ?", "head_wt = 1"]
    if by_branch:
        where.append("branch = ?")
    if meaningful:
        where.append("meaningful = 1")
    return (f"SELECT {ENTRY_COLUMNS} FROM journal_entries WHERE {' AND '.join(where)}"
            " ORDER BY ts_us DESC, sid_order LIMIT ?")


def _prepare(entry: JournalEntry | Mapping[str, Any], *, allow_collapsed: bool) -> JournalEntry:
    if isinstance(entry, JournalEntry):
        e = JournalEntry(**{name: _copy(getattr(entry, name)) for name in SYNAPT_FIELDS},
                         extra=dict(entry.extra) if isinstance(entry.extra, dict) else entry.extra)
        e.validate(allow_collapsed=allow_collapsed)
        return e
    e = JournalEntry.from_mapping(entry)
    if not allow_collapsed:
        e.validate(allow_collapsed=False)
    return e


def _dump(items: list[str]) -> str:
    return _list_json(items) if items else "[]"


_INSERT = (
    "INSERT INTO journal_entries (id, workspace_id, worktree_id, session_id, branch, timestamp,"
    " ts_us, focus, done, decisions, next_steps, files_modified, git_log, auto, enriched, repair,"
    " griptree, agent_id, extra, stored_us, rich, meaningful)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
    " ON CONFLICT (id) DO NOTHING RETURNING seq"
)


def _insert(conn: Any, row: tuple[Any, ...]) -> AppendResult:
    # fetchall: RETURNING statements must run to completion before the commit.
    inserted = conn.execute(_INSERT, row).fetchall()
    if inserted:
        return AppendResult(row[0].hex(), True, int(inserted[0][0]))
    existing = conn.execute("SELECT seq FROM journal_entries WHERE id = ?", (row[0],)).fetchall()
    return AppendResult(row[0].hex(), False, int(existing[0][0]))
