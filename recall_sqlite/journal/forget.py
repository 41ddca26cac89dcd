"""Forgetting entry versions for real: `store.journal.forget(...)`.

An entry is removed by a plain DELETE of its journal_entries rows, so every trigger on that
table follows (schema.sql's journal_entries_after_delete keeps heads, sid_order and counts
right, moves the lines it was imported from to quarantine as 'forgotten' with no bytes and
tombstones the id; the vector triggers drop its vectors; a search index's triggers drop its
rows). Around that DELETE this module does what a trigger cannot: it blanks quarantined
lines that carry the forgotten text, merges the full-text index's segments (`scrub`: FTS5
keeps a deleted document's tokens in the segments that held it until they are merged), and
checkpoints the WAL (TRUNCATE) so no earlier frame keeps the text. Every connection runs
with `secure_delete` (db.py), so the cells and pages all of this frees are zeroed, and so
were those of every earlier write.

Loaded only when something is forgotten: the read path never imports it."""

from __future__ import annotations

import contextlib

import apsw

from .._record import Frozen
from ..checks import parse_entry_id, require_text
from ..errors import InvalidInputError, UnknownEntryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ..context import StoreContext
    from ..db import Database

# Quarantined lines are matched on text this long or longer: shorter focus texts ("wip")
# would match unrelated lines.
MIN_MATCH_CHARS = 12
# Index pages one merge step writes: one step is one short write transaction, so writers
# wait at most for a step, never for the whole index (FTS5's 'optimize' is one transaction).
MERGE_STEP_PAGES = 1000
# A bound on the steps, should writers keep adding segments faster than the merge absorbs.
MERGE_STEPS_BOUND = 100_000


class ForgetReport(Frozen):
    __slots__ = (
        "entries",
        "sessions",
        "vectors",
        "provenance",
        "summary_links",
        "quarantine_blanked",
        "summaries",
        "wal_emptied",
    )
    entries: tuple[str, ...]  # ids of the removed versions
    sessions: tuple[str, ...]
    vectors: int
    provenance: int  # import lines now accounted as 'forgotten'
    summary_links: int
    quarantine_blanked: int  # quarantined lines that carried the text, emptied
    summaries: tuple[int, ...]  # summaries that named a removed version: their text
    # may repeat it (remove them with `summary remove`)
    wal_emptied: bool  # False: a reader kept old WAL frames alive

    def __init__(
        self,
        entries: tuple[str, ...],
        sessions: tuple[str, ...],
        vectors: int,
        provenance: int,
        summary_links: int,
        quarantine_blanked: int,
        summaries: tuple[int, ...],
        wal_emptied: bool,
    ) -> None:
        self._set(
            entries=entries,
            sessions=sessions,
            vectors=vectors,
            provenance=provenance,
            summary_links=summary_links,
            quarantine_blanked=quarantine_blanked,
            summaries=summaries,
            wal_emptied=wal_emptied,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "entries": list(self.entries),
            "sessions": list(self.sessions),
            "vectors": self.vectors,
            "provenance": self.provenance,
            "summary_links": self.summary_links,
            "quarantine_blanked": self.quarantine_blanked,
            "summaries": list(self.summaries),
            "wal_emptied": self.wal_emptied,
        }


def forget(
    ctx: StoreContext, entry_ids: Iterable[str] = (), session_id: str | None = None
) -> ForgetReport:
    ids = [parse_entry_id(i) for i in _ids(entry_ids)]
    if session_id is not None:
        require_text("session_id", session_id, allow_empty=False)
    if not ids and session_id is None:
        raise InvalidInputError("forget needs entry ids or a session id")
    db, ws = ctx.db, ctx.workspace_pk
    with db.lock:
        with db.write() as conn:
            targets = _targets(conn, ws, ids, session_id)
            seqs = [t[0] for t in targets]
            report = _remove(conn, ws, targets, seqs)
        emptied = scrub(db, "journal_fts")
    return ForgetReport(*report, wal_emptied=emptied)


def scrub(db: Database, index: str) -> bool:
    """After rows left the full-text `index` (journal_fts or summaries_fts): merge its
    segments until one is left, which drops every token of a deleted document (the pages
    the old segments held are zeroed by secure_delete), then empty the WAL. True when the
    WAL was emptied (False: a reader kept old frames alive; a later scrub finishes)."""
    conn = db.conn
    for _ in range(MERGE_STEPS_BOUND):
        before = conn.total_changes()
        with db.write() as w:
            w.execute(
                f"INSERT INTO {index} ({index}, rank) VALUES ('merge', ?)", (-MERGE_STEP_PAGES,)
            )
        # FTS5's documented test: a step that changed fewer than 2 rows had nothing to merge.
        if conn.total_changes() - before < 2:
            break
    return checkpoint(conn)


def checkpoint(conn: Any) -> bool:
    """Copy the WAL into the database and truncate it; False if a reader kept frames."""
    with contextlib.suppress(apsw.Error):
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0]
        return int(busy) == 0
    return False


def _ids(entry_ids: Iterable[str]) -> list[str]:
    if isinstance(entry_ids, (str, bytes)):
        # One id given bare: a string is not a list of one-character ids.
        if isinstance(entry_ids, str):
            return [entry_ids]
        try:
            return [entry_ids.decode("ascii")]
        except UnicodeDecodeError:
            raise InvalidInputError(
                "an entry id is 32 hex digits, got bytes that are not"
            ) from None
    try:
        return list(entry_ids)
    except TypeError:
        raise InvalidInputError(
            f"entry ids must be a list of ids, got {type(entry_ids).__name__}"
        ) from None


def _targets(
    conn: Any, ws: int, ids: list[bytes], session_id: str | None
) -> list[tuple[int, bytes, str, str]]:
    found: dict[int, tuple[int, bytes, str, str]] = {}
    for raw in ids:
        rows = conn.execute(
            "SELECT seq, id, session_id, focus FROM journal_entries"
            " WHERE id = ? AND workspace_id = ?",
            (raw, ws),
        ).fetchall()
        if not rows:
            raise UnknownEntryError(f"no entry {raw.hex()} in this workspace")
        found[int(rows[0][0])] = (int(rows[0][0]), bytes(rows[0][1]), rows[0][2], rows[0][3])
    if session_id is not None:
        rows = conn.execute(
            "SELECT seq, id, session_id, focus FROM journal_entries"
            " WHERE workspace_id = ? AND session_id = ?",
            (ws, session_id),
        ).fetchall()
        if not rows:
            raise UnknownEntryError(f"no session {session_id!r} in this workspace")
        for r in rows:
            found[int(r[0])] = (int(r[0]), bytes(r[1]), r[2], r[3])
    return [found[k] for k in sorted(found)]


def _remove(
    conn: Any, ws: int, targets: list[tuple[int, bytes, str, str]], seqs: list[int]
) -> tuple[tuple[str, ...], tuple[str, ...], int, int, int, int, tuple[int, ...]]:
    import json

    seq_json = json.dumps(seqs)
    in_seqs = "IN (SELECT value FROM json_each(?))"

    def count(sql: str) -> int:
        return int(conn.execute(sql, (seq_json,)).fetchall()[0][0])

    vectors = count(f"SELECT count(*) FROM vectors WHERE entry_seq {in_seqs}")
    provenance = count(f"SELECT count(*) FROM entry_provenance WHERE entry_seq {in_seqs}")
    links = count(f"SELECT count(*) FROM summary_sources WHERE entry_seq {in_seqs}")
    summaries = tuple(
        int(r[0])
        for r in conn.execute(
            f"SELECT DISTINCT summary_id FROM summary_sources WHERE entry_seq {in_seqs} ORDER BY 1",
            (seq_json,),
        )
    )
    # Quarantined lines of this workspace that carry the text (a truncated copy of the
    # line, say): emptied, still accounted for, reason 'forgotten'.
    needles = sorted(
        {t for _, _, sid, focus in targets for t in (sid, focus) if len(t) >= MIN_MATCH_CHARS}
    )
    blanked = 0
    for needle in needles:
        blanked += len(
            conn.execute(
                "UPDATE quarantine SET raw = x'', reason = 'forgotten',"
                " detail = 'this line carried forgotten text; no byte of it is kept'"
                " WHERE source_id IN (SELECT id FROM import_sources WHERE workspace_id = ?)"
                " AND reason <> 'forgotten' AND instr(raw, CAST(? AS BLOB)) > 0 RETURNING id",
                (ws, needle),
            ).fetchall()
        )
    # A plain DELETE: the triggers of schema.sql (and of any other room) follow it.
    conn.execute(f"DELETE FROM journal_entries WHERE seq {in_seqs}", (seq_json,))
    entries = tuple(t[1].hex() for t in targets)
    sessions = tuple(sorted({t[2] for t in targets if t[2]}))
    return entries, sessions, vectors, provenance, links, blanked, summaries
