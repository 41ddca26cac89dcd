"""Every stored version of a worktree's entries, in insertion order: what synapt's raw reads
(`_read_all_entries`, `session_done_items`, `_read_all_session_ids`) see in its file.

The journal family's public face reads heads only, so this module queries the canonical
`journal_entries` table of schema.sql through `store.db.query`, scoped by the public
identity (workspace uuid, worktree key). It is the one place the adapter touches SQL;
see /work/notes/issue11-note.md (a `store.journal.versions()` would replace it)."""

from __future__ import annotations

import json
from typing import Any

from .. import JournalEntry, Store

_FROM = (
    " FROM journal_entries e JOIN workspaces w ON w.id = e.workspace_id"
    " JOIN worktrees t ON t.id = e.worktree_id WHERE w.uuid = ? AND t.key = ?"
)
_COLUMNS = (
    "e.timestamp, e.session_id, e.branch, e.focus, e.auto, e.enriched, e.repair, e.griptree,"
    " e.agent_id, '[' || e.done || ',' || e.decisions || ',' || e.next_steps || ','"
    " || e.files_modified || ',' || e.git_log || ']'"
)


def _scope(store: Store, worktree: str | None) -> tuple[str, str]:
    return store.workspace.id, store.workspace.worktree if worktree is None else worktree


def all_versions(store: Store, *, worktree: str | None = None,
                 session_id: str | None = None) -> list[JournalEntry]:
    """Every version stored for the worktree (default: the store's), oldest insert first."""
    sql = f"SELECT {_COLUMNS}{_FROM}"
    params: list[Any] = list(_scope(store, worktree))
    if session_id is not None:
        sql += " AND e.session_id = ?"
        params.append(session_id)
    rows = store.db.query(sql + " ORDER BY e.seq", params)
    if not rows:
        return []
    # One json.loads for every list of every row (per-field calls dominate otherwise).
    lists: list[list[list[str]]] = json.loads(f"[{','.join(r[9] for r in rows)}]")
    return [
        JournalEntry(r[0], r[1], r[2], r[3], d[0], d[1], d[2], d[3], d[4], bool(r[4]),
                     bool(r[5]), r[7], r[8], bool(r[6]))
        for r, d in zip(rows, lists, strict=True)
    ]


def session_done(store: Store, session_id: str) -> list[str]:
    """The done items of every version of one session in this worktree, oldest first."""
    rows = store.db.query(f"SELECT e.done{_FROM} AND e.session_id = ? ORDER BY e.seq",
                          (*_scope(store, None), session_id))
    return [item for (done,) in rows for item in json.loads(done)]


def session_ids(store: Store) -> set[str]:
    rows = store.db.query(f"SELECT DISTINCT e.session_id{_FROM} AND e.session_id <> ''",
                          _scope(store, None))
    return {str(sid) for (sid,) in rows}
