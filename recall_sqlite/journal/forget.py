"""Forgetting entry versions for real: `store.journal.forget(...)`.

An entry is removed by a plain DELETE of its journal_entries rows, so every trigger on that
table follows (schema.sql's journal_entries_after_delete keeps heads, sid_order and counts
right, moves the lines it was imported from to quarantine as 'forgotten' with no bytes and
tombstones the id; the vector triggers drop its vectors; a search index's triggers drop its
rows). Around that DELETE this module does what a trigger cannot: it blanks quarantined
lines that carry the forgotten text, runs with `secure_delete` so freed cells and pages are
zeroed, and checkpoints the WAL (TRUNCATE) so no earlier frame keeps the text.

Loaded only when something is forgotten: the read path never imports it."""

from __future__ import annotations

import contextlib

import apsw

from .._record import Frozen
from ..checks import parse_entry_id, require_text
from ..errors import InvalidInputError, UnknownEntryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from contextlib import AbstractContextManager
    from typing import Any

    from ..context import StoreContext

# Quarantined lines are matched on text this long or longer: shorter focus texts ("wip")
# would match unrelated lines.
MIN_MATCH_CHARS = 12


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
    ctx: StoreContext,
    entry_ids: Iterable[str] = (),
    session_id: str | None = None,
    *,
    hold: Callable[[], AbstractContextManager[bool]] | None = None,
) -> ForgetReport:
    """See Journal.forget. `hold` keeps replication still (and purges this machine's
    replica history) around the checkpoint: while Litestream reads the store, the WAL
    holding the text cannot be truncated."""
    ids = [parse_entry_id(i) for i in _ids(entry_ids)]
    if session_id is not None:
        require_text("session_id", session_id, allow_empty=False)
    if not ids and session_id is None:
        raise InvalidInputError("forget needs entry ids or a session id")
    db, ws = ctx.db, ctx.workspace_pk
    with db.lock:
        db.conn.execute("PRAGMA secure_delete=ON")
        try:
            with db.write() as conn:
                targets = _targets(conn, ws, ids, session_id)
                seqs = [t[0] for t in targets]
                report = _remove(conn, ws, targets, seqs)
        finally:
            db.conn.execute("PRAGMA secure_delete=OFF")
        with hold() if hold is not None else contextlib.nullcontext(True) as held:
            emptied = checkpoint(db.conn) and bool(held)
    return ForgetReport(*report, wal_emptied=emptied)


def remove_in(conn: Any, ws: int, ids: Iterable[bytes]) -> int:
    """Forget the stored versions among `ids` inside the caller's write transaction (a
    pull applying another machine's tombstones: the same removal as `forget`, every copy
    of the text included; ids not stored here are skipped). The caller turns
    `secure_delete` on and checkpoints afterwards. Returns the versions removed."""
    import json

    rows = conn.execute(
        "SELECT e.seq, e.id, e.session_id, e.focus FROM json_each(?) j"
        " CROSS JOIN journal_entries e ON e.workspace_id = ? AND e.id = unhex(j.value)"
        " ORDER BY e.seq",
        (json.dumps(sorted({bytes(i).hex() for i in ids})), ws),
    ).fetchall()
    targets = [(int(r[0]), bytes(r[1]), str(r[2]), str(r[3])) for r in rows]
    if targets:
        _remove(conn, ws, targets, [t[0] for t in targets])
    return len(targets)


def checkpoint(conn: Any) -> bool:
    """Copy the WAL into the database and truncate it; False if a reader kept frames."""
    with contextlib.suppress(apsw.Error):
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0]
        return int(busy) == 0
    return False


def _ids(entry_ids: Iterable[str]) -> list[str]:
    if isinstance(entry_ids, (str, bytes)):
        # One id given bare: a string is not a list of one-character ids.
        return [entry_ids] if isinstance(entry_ids, str) else [entry_ids.decode()]
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
