"""Forgetting entry versions for real: `store.journal.forget(...)`.

An entry is removed by a plain DELETE of its journal_entries rows, so every trigger on that
table follows (schema.sql's journal_entries_after_delete keeps heads, sid_order and counts
right, moves the lines it was imported from to quarantine as 'forgotten' with no bytes and
tombstones the id; the vector triggers drop its vectors; a search index's triggers drop its
rows). Around that DELETE this module does what a trigger cannot: it blanks quarantined
lines that carry the forgotten text, merges the full-text index's segments (db.merge_fts: FTS5
keeps a deleted document's tokens in the segments that held it until they are merged), and
checkpoints the WAL (TRUNCATE) so no earlier frame keeps the text. Every connection runs
with `secure_delete` (db.py), so the cells and pages all of this frees are zeroed, and so
were those of every earlier write.

Copies in files are not this family's (it knows no filesystem): the store composes in a
`files` hook (legacy/copies.py) that is handed the forgotten versions after their rows are
gone and removes the lines the store wrote (its mirror lines) from synapt's buckets, lists
the copies in files it did not write (and removes them too with `scrub_sources`), and
says which; the report carries its answer.

Loaded only when something is forgotten: the read path never imports it."""

from __future__ import annotations

from .._record import Frozen
from ..checks import require_bool, require_ids, require_text
from ..context import whole_workspace
from ..db import as_bytes, as_int, as_str, merge_fts
from ..errors import InvalidInputError, UnknownEntryError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from apsw import Connection

    from ..db import Hold

    # The hook the store composes in: (the forgotten versions, scrub_sources) -> outcome.
    FilesHook = Callable[[tuple["ForgetTarget", ...], bool], "FileOutcome"]

    from ..context import StoreContext

# Quarantined lines are matched on text this long or longer: shorter focus texts ("wip")
# would match unrelated lines.
MIN_MATCH_CHARS = 12


class ForgetTarget(Frozen):
    """A forgotten entry version, as the files hook needs it. `own`: the store wrote its
    first copy (a write through the store, not a line of a user's file it imported), so
    every copy in a synapt bucket is one the store wrote (its mirror)."""

    __slots__ = ("id", "timestamp", "session_id", "focus", "own", "texts")
    id: bytes
    timestamp: str
    session_id: str
    focus: str
    own: bool
    texts: tuple[str, ...]  # its list items (done, decisions, next steps)

    def __init__(
        self,
        id: bytes,  # noqa: A002 - the entry's id
        timestamp: str,
        session_id: str,
        focus: str,
        own: bool,
        texts: tuple[str, ...] = (),
    ) -> None:
        self._set(
            id=id, timestamp=timestamp, session_id=session_id, focus=focus, own=own, texts=texts
        )

    def needles(self) -> tuple[str, ...]:
        """The texts a damaged copy of it, or another file quoting it, is recognised by
        (each long enough to mean it)."""
        return tuple(
            t for t in (self.session_id, self.focus, *self.texts) if len(t) >= MIN_MATCH_CHARS
        )


class FileCopy(Frozen):
    """A line of a file that held a forgotten version (or its text), and what became of
    it: removed, or left where it is (a file the store did not write).

    `kind`: "bucket", a line of a synapt journal (`--scrub-sources` removes the ones the
    store did not write); "cache", a file synapt writes anew (removed whole: line 0);
    "other", any other file of synapt's quoting the text (listed, never edited)."""

    __slots__ = ("path", "line", "entry", "removed", "kind")
    path: str
    line: int  # 1-based, in the file as it is after the forget; 0: the whole file
    entry: str  # the forgotten version's id
    removed: bool
    kind: str

    def __init__(
        self, path: str, line: int, entry: str, removed: bool, kind: str = "bucket"
    ) -> None:
        self._set(path=path, line=line, entry=entry, removed=removed, kind=kind)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "entry": self.entry,
            "removed": self.removed,
            "kind": self.kind,
        }


class FileOutcome(Frozen):
    """What the files hook did: the copies it found, the files it could not handle, and
    whether it wrote to the store again (a rewritten file is re-imported)."""

    __slots__ = ("copies", "errors", "reimported")
    copies: tuple[FileCopy, ...]
    errors: tuple[str, ...]
    reimported: bool

    def __init__(
        self, copies: tuple[FileCopy, ...], errors: tuple[str, ...], reimported: bool
    ) -> None:
        self._set(copies=copies, errors=errors, reimported=reimported)


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
        "copies",
        "file_errors",
        "replicas",
        "already",
        "workspace_id",
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
    copies: tuple[FileCopy, ...]  # lines of files that held them (removed or left)
    file_errors: tuple[str, ...]  # files that could not be read or rewritten
    replicas: tuple[str, ...]  # what replication reached and what it cannot reach yet
    # (sync/: this machine's replica history, the other machines): one sentence each
    already: tuple[str, ...]  # ids given that were forgotten here before (a pull applied
    # another machine's forget, or an earlier forget): no row to remove, their copies in
    # files looked for again
    workspace_id: str  # forget acts on the whole workspace: its scope

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
        copies: tuple[FileCopy, ...] = (),
        file_errors: tuple[str, ...] = (),
        replicas: tuple[str, ...] = (),
        already: tuple[str, ...] = (),
        *,
        workspace_id: str,
    ) -> None:
        self._set(
            already=already,
            copies=copies,
            file_errors=file_errors,
            replicas=replicas,
            workspace_id=workspace_id,
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
            "copies_removed": [c.to_dict() for c in self.copies if c.removed],
            "copies_left": [c.to_dict() for c in self.copies if not c.removed],
            "file_errors": list(self.file_errors),
            "replicas": list(self.replicas),
            "already_forgotten": list(self.already),
            **whole_workspace(self.workspace_id),
        }

    @property
    def copies_left(self) -> tuple[FileCopy, ...]:
        """Lines of known files that still hold a forgotten version's text."""
        return tuple(c for c in self.copies if not c.removed)


def forget(
    ctx: StoreContext,
    entry_ids: Iterable[str] = (),
    session_id: str | None = None,
    *,
    files: FilesHook | None = None,
    scrub_sources: bool = False,
    hold: Hold | None = None,
) -> ForgetReport:
    """See Journal.forget. `hold` keeps replication still (and purges this machine's
    replica history) around the checkpoint: while Litestream reads the store, the WAL
    holding the text cannot be truncated."""
    ids = require_ids("entry ids", entry_ids)
    if session_id is not None:
        require_text("session_id", session_id, allow_empty=False)
    if not ids and session_id is None:
        raise InvalidInputError("forget needs entry ids or a session id")
    require_bool("scrub_sources", scrub_sources)
    db, ws = ctx.db, ctx.workspace_pk
    with db.lock:
        with db.write() as conn:
            earlier = _forgotten_before(conn, ws, ids)
            targets = _targets(conn, ws, [i for i in ids if i not in earlier], session_id)
            seqs = [t[0] for t in targets]
            # An id forgotten before (here, or by another machine whose forget a pull
            # applied) has no row left: its copies in files are looked for again by its
            # id, the one thing known of it. Every line that is exactly that version is
            # removed: nothing tells the store's copies from a user's any more, and the
            # version is forgotten (an import skips such a line anyway).
            forgotten = _forget_targets(conn, targets) + tuple(
                ForgetTarget(i, "", "", "", True) for i in sorted(earlier)
            )
            report = _remove(conn, ws, targets, seqs)
        outcome = scrub_files(ctx, forgotten, files, scrub_sources=scrub_sources)
        notes: list[str] = []
        emptied = merge_fts(db, "journal_fts", hold=hold, notes=notes)
    return ForgetReport(
        *report,
        wal_emptied=emptied,
        copies=outcome.copies,
        file_errors=outcome.errors,
        replicas=tuple(notes),
        already=tuple(i.hex() for i in sorted(earlier)),
        workspace_id=ctx.workspace_uuid,
    )


def scrub_files(
    ctx: StoreContext,
    forgotten: tuple[ForgetTarget, ...],
    files: FilesHook | None,
    *,
    scrub_sources: bool = False,
) -> FileOutcome:
    """The forgotten versions' copies in files, after their rows went: the one path a
    local forget and a pull that applied another machine's forget both take (the store's
    `files` hook: its mirror lines and synapt's session-start cache removed, the user's
    lines listed), then the quarantine blanked again if a rewritten file was re-imported.
    The caller holds the store's lock."""
    if files is None or not forgotten:
        return FileOutcome((), (), False)
    outcome = files(forgotten, scrub_sources)
    if outcome.reimported:
        # A rewritten file was imported again: a damaged line it still holds (a
        # user's, left in place) must not bring the text back into quarantine.
        needles = sorted(
            {t for f in forgotten for t in (f.session_id, f.focus) if len(t) >= MIN_MATCH_CHARS}
        )
        with ctx.db.write() as conn:
            _blank(conn, ctx.workspace_pk, needles)
    return outcome


def _forgotten_before(conn: Connection, ws: int, ids: list[bytes]) -> set[bytes]:
    """The given ids that are tombstoned and have no row any more."""
    out = set()
    for raw in ids:
        rows = conn.execute(
            "SELECT 1 FROM journal_tombstones t WHERE t.workspace_id = ?1 AND t.id = ?2"
            " AND NOT EXISTS (SELECT 1 FROM journal_entries e WHERE e.workspace_id = ?1"
            " AND e.id = ?2)",
            (ws, raw),
        ).fetchall()
        if rows:
            out.add(raw)
    return out


def _forget_targets(
    conn: Connection, targets: list[tuple[int, bytes, str, str]]
) -> tuple[ForgetTarget, ...]:
    """The versions as the files hook sees them, read before their rows go."""
    import json

    out = []
    for seq, eid, sid, focus in targets:
        ts, imported, done, decisions, steps = conn.execute(
            "SELECT timestamp, EXISTS (SELECT 1 FROM entry_provenance"
            " WHERE entry_seq = ?1 AND status = 'imported'), done, decisions, next_steps"
            " FROM journal_entries WHERE seq = ?1",
            (seq,),
        ).fetchall()[0]
        texts: list[str] = []
        for column in (done, decisions, steps):
            try:
                items = json.loads(as_str(column))
            except (TypeError, ValueError):
                continue
            texts += [x for x in items if isinstance(x, str)] if isinstance(items, list) else []
        out.append(ForgetTarget(eid, str(ts), sid, focus, not imported, tuple(texts)))
    return tuple(out)


def remove_in(conn: Connection, ws: int, ids: Iterable[bytes]) -> tuple[ForgetTarget, ...]:
    """Forget the stored versions among `ids` inside the caller's write transaction (a
    pull applying another machine's tombstones: the same removal as `forget`; ids not
    stored here are skipped). The caller checkpoints afterwards and hands the versions
    returned (read before their rows went) to `scrub_files`, for their copies in files."""
    import json

    rows = conn.execute(
        "SELECT e.seq, e.id, e.session_id, e.focus FROM json_each(?) j"
        " CROSS JOIN journal_entries e ON e.workspace_id = ? AND e.id = unhex(j.value)"
        " ORDER BY e.seq",
        (json.dumps(sorted({bytes(i).hex() for i in ids})), ws),
    ).fetchall()
    targets = [(as_int(r[0]), as_bytes(r[1]), str(r[2]), str(r[3])) for r in rows]
    if not targets:
        return ()
    forgotten = _forget_targets(conn, targets)
    _remove(conn, ws, targets, [t[0] for t in targets])
    return forgotten


def _targets(
    conn: Connection, ws: int, ids: list[bytes], session_id: str | None
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
        found[as_int(rows[0][0])] = (
            as_int(rows[0][0]),
            as_bytes(rows[0][1]),
            as_str(rows[0][2]),
            as_str(rows[0][3]),
        )
    if session_id is not None:
        rows = conn.execute(
            "SELECT seq, id, session_id, focus FROM journal_entries"
            " WHERE workspace_id = ? AND session_id = ?",
            (ws, session_id),
        ).fetchall()
        if not rows:
            raise UnknownEntryError(f"no session {session_id!r} in this workspace")
        for r in rows:
            found[as_int(r[0])] = (as_int(r[0]), as_bytes(r[1]), as_str(r[2]), as_str(r[3]))
    return [found[k] for k in sorted(found)]


def _needles(targets: list[tuple[int, bytes, str, str]]) -> list[str]:
    return sorted(
        {t for _, _, sid, focus in targets for t in (sid, focus) if len(t) >= MIN_MATCH_CHARS}
    )


def _blank(conn: Connection, ws: int, needles: list[str]) -> int:
    """Empty the quarantined lines of the workspace that carry one of `needles`."""
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
    return blanked


def _remove(
    conn: Connection, ws: int, targets: list[tuple[int, bytes, str, str]], seqs: list[int]
) -> tuple[tuple[str, ...], tuple[str, ...], int, int, int, int, tuple[int, ...]]:
    import json

    seq_json = json.dumps(seqs)
    in_seqs = "IN (SELECT value FROM json_each(?))"

    def count(sql: str) -> int:
        return as_int(conn.execute(sql, (seq_json,)).fetchall()[0][0])

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
    blanked = _blank(conn, ws, _needles(targets))
    # A plain DELETE: the triggers of schema.sql (and of any other room) follow it.
    conn.execute(f"DELETE FROM journal_entries WHERE seq {in_seqs}", (seq_json,))
    entries = tuple(t[1].hex() for t in targets)
    sessions = tuple(sorted({t[2] for t in targets if t[2]}))
    return entries, sessions, vectors, provenance, links, blanked, summaries
