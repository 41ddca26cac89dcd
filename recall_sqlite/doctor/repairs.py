"""doctor --repair: each finding mended in short write transactions of its own, so writers
keep working beside it (a healthy store is never locked at all). The checks ran outside
the lock; a repair re-reads what it changes inside its write. It rebuilds what is derived
and restores what an id proves; it never deletes an entry."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence

from .. import derived
from ..db import as_int
from ..errors import RecallError
from ..search.index import rebuild_index
from . import content, pages, schema
from .report import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    from ..db import Database

    T = TypeVar("T")

# Rows (sessions, count scopes) one write transaction mends.
BATCH = 200
# Content before what is derived from it; heads before the counts made from them.
ORDER = (
    "schema",
    "bulk_guard",
    "rehome_guard",
    "index",
    "undecodable_text",
    "entry_content",
    "summary_content",
    "entry_derived",
    "heads",
    "counts_ws",
    "counts_wt",
    "foreign_keys",
    "vector_copies",
    "orphan_vectors",
    "vector_counts",
    "summary_chain",
    "search_index",
)


def run(db: Database, findings: Sequence[Finding]) -> list[str]:
    """Repair the repairable `findings`; one sentence for each thing changed."""
    done: list[str] = []
    todo = [f for f in findings if f.repairable]
    for kind in ORDER:
        for f in todo:
            if f.kind == kind:
                try:
                    done += _REPAIRS[kind](db, f)
                except RecallError as exc:
                    # Damage can stop a repair too: said, and the check after says what is left.
                    done.append(f"could not repair {kind}: {exc}")
    return done


def _chunks(items: Sequence[T], n: int = BATCH) -> Iterator[Sequence[T]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def _guard(table: str) -> Callable[[Database, Finding], list[str]]:
    def repair(db: Database, f: Finding) -> list[str]:
        with db.write() as conn:
            gone = conn.execute(f"DELETE FROM {table} RETURNING 1").fetchall()
        return [f"emptied {table} ({len(gone)} rows)"] if gone else []

    return repair


def _index(db: Database, f: Finding) -> list[str]:
    return [pages.reindex(db, str(f.fix))]


def _text(db: Database, f: Finding) -> list[str]:
    table, keys = f.fix
    ids = [int(k[0]) for k in keys]
    if table == "journal_entries":
        return content.repair_entries(db, ids)
    if table == "summaries":
        return content.repair_summaries(db, ids)
    return []


def _entries(db: Database, f: Finding) -> list[str]:
    return content.repair_entries(db, list(f.fix))


def _summaries(db: Database, f: Finding) -> list[str]:
    return content.repair_summaries(db, list(f.fix))


def _heads(db: Database, f: Finding) -> list[str]:
    seqs = json.dumps(list(f.fix))
    rows = db.query(
        "SELECT workspace_id, session_id, seq FROM journal_entries"
        " WHERE seq IN (SELECT value FROM json_each(?))",
        (seqs,),
    )
    sessions: dict[int, set[str]] = {}
    loose: dict[int, int] = {}
    for ws, sid, seq in rows:
        if sid:
            sessions.setdefault(as_int(ws), set()).add(str(sid))
        else:
            loose[as_int(ws)] = min(loose.get(as_int(ws), as_int(seq)), as_int(seq))
    changed = 0
    for ws in sorted(set(sessions) | set(loose)):
        batches = list(_chunks(sorted(sessions.get(ws, ())))) or [[]]
        for i, batch in enumerate(batches):
            since = loose[ws] - 1 if ws in loose and i == 0 else None
            with db.write() as conn:
                changed += derived.rebuild(conn, ws, sessions=batch, since_seq=since).heads
    return [f"set head_ws/head_wt of {changed} entry versions by the dedup rule"] if changed else []


def _counts(db: Database, f: Finding) -> list[str]:
    per_worktree = f.kind == "counts_wt"
    keys: list[tuple[int, ...]] = sorted(
        {(r[0], r[1], r[2]) if per_worktree else (r[0], r[1]) for r in f.fix}
    )
    for batch in _chunks(keys):
        with db.write() as conn:
            for key in batch:
                if per_worktree:
                    derived.recount(conn, int(key[0]), str(key[2]), int(key[1]))
                else:
                    derived.recount(conn, int(key[0]), str(key[1]))
    table = "journal_counts_wt" if per_worktree else "journal_counts_ws"
    return [f"recounted {table} ({len(keys)} scope rows were wrong)"]


def _links(db: Database, f: Finding) -> list[str]:
    with db.write() as conn:
        gone = conn.execute(
            "DELETE FROM summary_sources WHERE entry_seq NOT IN (SELECT seq FROM journal_entries)"
            " OR summary_id NOT IN (SELECT id FROM summaries) RETURNING 1"
        ).fetchall()
        changed, orphans = derived.rebuild_vectors(conn)
    out = (
        [f"deleted {len(gone)} summary links to entries or summaries that do not exist"]
        if gone
        else []
    )
    if orphans:
        out.append(f"deleted {orphans} vectors that belonged to no entry or summary")
    return out


def _vectors(db: Database, f: Finding) -> list[str]:
    with db.write() as conn:
        changed, orphans = derived.rebuild_vectors(conn)
    out = []
    if changed:
        out.append(f"re-copied owner scope or recounted models for {changed} vector rows")
    if orphans:
        out.append(f"deleted {orphans} vectors that belonged to no entry or summary")
    return out


def _chains(db: Database, f: Finding) -> list[str]:
    with db.write() as conn:
        changed = derived.rebuild_summary_chains(conn)
    return [f"relinked {changed} summaries to the next summary of their scope"] if changed else []


def _search(db: Database, f: Finding) -> list[str]:
    # One write: the index is rebuilt whole (a partial one would answer wrongly meanwhile).
    with db.write() as conn:
        rebuild_index(conn)
    return ["rebuilt the full-text index of entries and summaries"]


def _schema(db: Database, f: Finding) -> list[str]:
    return schema.repair(db, list(f.fix))


_REPAIRS: dict[str, Callable[[Database, Finding], list[str]]] = {
    "schema": _schema,
    "bulk_guard": _guard("journal_bulk"),
    "rehome_guard": _guard("journal_rehome"),
    "index": _index,
    "undecodable_text": _text,
    "entry_content": _entries,
    "summary_content": _summaries,
    "entry_derived": _entries,
    "heads": _heads,
    "counts_ws": _counts,
    "counts_wt": _counts,
    "foreign_keys": _links,
    "vector_copies": _vectors,
    "orphan_vectors": _vectors,
    "vector_counts": _vectors,
    "summary_chain": _chains,
    "search_index": _search,
}
