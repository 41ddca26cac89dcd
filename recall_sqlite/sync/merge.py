"""Merging another machine's store into this one: the union of what both hold, minus what
either forgot, decided by content so every machine reaches the same state whatever the
order of its pulls (idempotent, commutative; tests/unit/sync/test_sync_merge.py holds it).

What travels, and the rule that makes it converge:

* **tombstones** first (journal_tombstones of formula 2): a forgotten id is removed here as
  `journal forget` removes it, and never stored again;
* **entry versions** by id (a hash of their content, schema v7): a version this store lacks
  is stored with a new local seq, in the peer's order, so cursors see it as unread; each
  arriving row is decoded, validated and re-hashed, and one whose id does not match its
  content is refused (counted, never stored). A version held in two worktrees lies in the
  one with the smaller key on every machine;
* **summaries** by uid; a removed summary's uid (summary_tombstones) wins; within a scope
  the supersede chain is the creation order (created_us, uid), recomputed for the scopes
  that changed. Their covered positions are translated to this store's seqs through the
  entries they name (positions are local);
* **vectors** per (owner's content id, model): the later of a put (`created_at`) and an
  explicit delete (vector_tombstones) wins, a delete at the same instant, then the larger
  embedding bytes.

Local only, never merged: seqs, cursors, heads and counts (derived: the writers below keep
them, as every write path does), import bookkeeping, and Litestream's own
`_litestream_*` tables. No filesystem here: the caller opens the peer's file."""

from __future__ import annotations

import json
from typing import Any

from .. import derived, identity
from .._record import Frozen
from ..context import StoreContext
from ..db import Database, as_bytes, as_int
from ..errors import PeerError, RecallError
from ..journal import codec
from ..journal.bulk import bulk_insert
from ..journal.entry import JournalEntry
from ..journal.forget import ForgetTarget, remove_in
from ..timestamps import now_us
from .merge_summaries import merge_summaries
from .merge_vectors import merge_vectors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection

    from ..db import Row

# Entry versions read from the peer and written here per transaction: a pull of a large
# union never holds the write lock for long (local writers keep working), and a killed
# pull keeps what it merged (the next one carries on: the union is idempotent).
CHUNK = 2000


class MergeReport(Frozen):
    """What one merge changed here."""

    __slots__ = (
        "entries",
        "moved",
        "rejected",
        "forgotten",
        "tombstones",
        "summaries",
        "summaries_removed",
        "vectors",
        "vectors_deleted",
        "vector_conflicts",
        "copies_removed",
        "copies_left",
        "peer_seq",
    )
    entries: int  # entry versions stored here
    moved: int  # versions moved to the worktree with the smaller key
    rejected: int  # peer rows refused: their id does not match their content, or invalid
    forgotten: int  # versions removed here by the peer's tombstones
    tombstones: int  # tombstones recorded here
    summaries: int
    summaries_removed: int
    vectors: int  # embeddings stored or replaced here
    vectors_deleted: int
    vector_conflicts: int  # peer vectors of a model whose dimension differs here
    # What the forgotten versions left in this machine's files (pull.py, as a local
    # forget's: journal/forget.py scrub_files): lines and caches removed, and copies left
    # (a user's lines, other files) or files that could not be read or rewritten.
    copies_removed: int
    copies_left: int
    peer_seq: int  # the peer's highest journal seq now merged (the next merge starts after)

    def __init__(self, **values: int) -> None:
        self._set(**values)

    @property
    def changed(self) -> bool:
        return any(
            getattr(self, n)
            for n in self.__slots__
            if n not in ("peer_seq", "rejected", "vector_conflicts", "copies_left")
        )

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def peer_workspace(peer: Database, sync_key: str) -> tuple[int, str]:
    """(workspace pk, its uuid) of the peer's workspace that syncs as `sync_key`."""
    found = identity.synced_workspaces(peer, sync_key)
    if not found:
        raise PeerError(f"{peer.path} holds no workspace synced as {sync_key!r}")
    return found[0]


def merge(
    ctx: StoreContext,
    peer: Database,
    sync_key: str,
    *,
    since_seq: int = 0,
    removed: list[ForgetTarget] | None = None,
) -> MergeReport:
    """Merge the workspace of `peer` that syncs as `sync_key` into `ctx`'s workspace.

    Entry versions are read after `since_seq` (the peer's journal seq a previous merge of
    the same peer reached; 0 = all): a peer only ever adds rows at higher seqs, and what it
    removes travels as tombstones, which are compared whole. The caller runs this with
    `secure_delete` on and checkpoints afterwards (forgotten text must leave the file);
    the versions the peer's tombstones removed here are added to `removed`, for the
    caller to take their copies out of files (this module knows no filesystem)."""
    peer_ws, _ = peer_workspace(peer, sync_key)
    counts: dict[str, int] = dict.fromkeys(MergeReport.__slots__[:-1], 0)
    gone = _tombstones(ctx, peer, peer_ws, counts)
    if removed is not None:
        removed.extend(gone)
    peer_seq = _entries(ctx, peer, peer_ws, since_seq, counts)
    merge_summaries(ctx, peer, peer_ws, counts)
    merge_vectors(ctx, peer, peer_ws, counts)
    return MergeReport(**counts, peer_seq=peer_seq)


# -- tombstones ---------------------------------------------------------------------------


def _tombstones(
    ctx: StoreContext, peer: Database, peer_ws: int, counts: dict[str, int]
) -> tuple[ForgetTarget, ...]:
    theirs = peer.query(
        "SELECT id, forgotten_at FROM journal_tombstones WHERE workspace_id = ? AND formula = 2",
        (peer_ws,),
    )
    if not theirs:
        return ()
    ws = ctx.workspace_pk
    # Read first, write only when something is new: a pull that brings nothing writes
    # nothing (peers.py says why).
    ours = _tombstoned(ctx.db, ws)
    if all(as_bytes(i) in ours for i, _ in theirs):
        return ()
    with ctx.db.write() as conn:
        ours = _tombstoned(conn, ws)
        new = [(as_bytes(i), str(at)) for i, at in theirs if as_bytes(i) not in ours]
        # Removed the way `journal forget` removes (its trigger writes the tombstone) ...
        gone = remove_in(conn, ws, [i for i, _ in new])
        counts["forgotten"] += len(gone)
        # ... and the ids never stored here recorded as the peer recorded them.
        conn.executemany(
            "INSERT INTO journal_tombstones (workspace_id, id, formula, forgotten_at)"
            " VALUES (?, ?, 2, ?) ON CONFLICT (workspace_id, id) DO UPDATE SET formula = 2",
            [(ws, i, at) for i, at in new],
        )
        counts["tombstones"] += len(new)
    return gone


def _tombstoned(conn: Database | Connection, ws: int) -> set[bytes]:
    sql = "SELECT id FROM journal_tombstones WHERE workspace_id = ? AND formula = 2"
    rows = conn.query(sql, (ws,)) if isinstance(conn, Database) else conn.execute(sql, (ws,))
    return {as_bytes(i) for (i,) in rows}


# -- entry versions -----------------------------------------------------------------------

_PEER_ROWS = (
    f"SELECT {codec.select_list()} FROM journal_entries"
    " WHERE workspace_id = ? AND seq > ? ORDER BY seq LIMIT ?"
)
_SEQ, _ID, _WT = (codec.SELECT_INDEX[n] for n in ("seq", "id", "worktree_id"))


def _entries(
    ctx: StoreContext, peer: Database, peer_ws: int, since_seq: int, counts: dict[str, int]
) -> int:
    last = since_seq
    theirs = identity.worktree_names(peer, peer_ws)
    ours = {key: pk for pk, (key, _) in identity.worktree_names(ctx.db, ctx.workspace_pk).items()}
    while True:
        rows = peer.query(_PEER_ROWS, (peer_ws, last, CHUNK))
        if not rows:
            return last
        last = as_int(rows[-1][_SEQ])
        _merge_chunk(ctx, rows, theirs, ours, counts)


def _merge_chunk(
    ctx: StoreContext,
    rows: list[Row],
    theirs: dict[int, tuple[str, str]],
    ours: dict[str, int],
    counts: dict[str, int],
) -> None:
    """One chunk of the peer's rows: the versions new here stored, the ones held in a
    worktree with a larger key moved (see the module docstring)."""
    ws = ctx.workspace_pk
    key_of = {pk: key for key, pk in ours.items()}
    ids = json.dumps([as_bytes(r[_ID]).hex() for r in rows])
    here = {
        as_bytes(i): (as_int(seq), key_of.get(as_int(wt), ""))
        for i, seq, wt in ctx.db.query(
            "SELECT e.id, e.seq, e.worktree_id FROM json_each(?) j CROSS JOIN journal_entries e"
            " ON e.workspace_id = ? AND e.id = unhex(j.value)",
            (ids, ws),
        )
    }

    def their_key(r: Row) -> str:
        return theirs.get(as_int(r[_WT]), (f"#{r[_WT]}", ""))[0]

    fresh = [r for r in rows if as_bytes(r[_ID]) not in here]
    moving = [
        r for r in rows if as_bytes(r[_ID]) in here and their_key(r) < here[as_bytes(r[_ID])][1]
    ]
    if not fresh and not moving:
        return  # all known, all where they belong: nothing to write
    entries = JournalEntry.from_rows(fresh, lambda pk: theirs.get(pk, (f"#{pk}", ""))[0])
    with ctx.db.write() as conn:
        forgotten = {
            bytes(i)
            for (i,) in conn.execute(
                "SELECT t.id FROM json_each(?) j CROSS JOIN journal_tombstones t"
                " ON t.workspace_id = ? AND t.id = unhex(j.value) AND t.formula = 2",
                (ids, ws),
            )
        }

        def worktree_pk(r: Row) -> int:
            key = their_key(r)
            pk = ours.get(key)
            if pk is None:
                # Known here only from the peer's rows: no root (as an imported worktree).
                name = theirs.get(as_int(r[_WT]), (key, key))[1]
                pk = ours[key] = identity.ensure_worktree(conn, ws, key, name, None)
            return pk

        new: list[tuple[Any, ...]] = []
        stamp = now_us()
        for r, e in zip(fresh, entries, strict=True):
            rid = as_bytes(r[_ID])
            if rid in forgotten:
                continue
            content = _verified(e, rid)
            if content is None:
                counts["rejected"] += 1
                continue
            new.append((rid, ws, worktree_pk(r), stamp, *content))
        if new:
            # Rows another process stored since the read above are skipped by the batch.
            counts["entries"] += sum(1 for s in bulk_insert(conn, new).values() if s.created)
        moves: dict[int, list[int]] = {}
        for r in moving:
            moves.setdefault(worktree_pk(r), []).append(here[as_bytes(r[_ID])][0])
        for pk, seqs in moves.items():
            counts["moved"] += derived.move_versions(conn, ws, pk, seqs)


def _verified(e: JournalEntry, rid: bytes) -> Row | None:
    """The content columns of a peer's version, rebuilt here from its fields, or None when
    they are invalid or its id is not the hash of its content (a damaged or foreign row
    would otherwise break convergence on every machine that pulls it)."""
    try:
        e.validate(allow_collapsed=True)
        eid, content = e.encode()
    except (RecallError, ValueError, TypeError):
        return None
    return content if eid == rid else None


def count_ahead(ctx: StoreContext, peer: Database, sync_key: str) -> int:
    """Entry versions the peer holds that this store lacks and has not forgotten: what a
    pull would bring (without merging anything)."""
    peer_ws, _ = peer_workspace(peer, sync_key)
    return count_missing(peer, peer_ws, ctx.db, ctx.workspace_pk)


def count_missing(source: Database, source_ws: int, target: Database, target_ws: int) -> int:
    """Entry versions of `source`'s workspace that `target`'s neither holds nor has
    forgotten: what a pull into `target` would bring. Either store may be this one (a
    peer's replica counts what this store lacks; sync verify counts the reverse too)."""
    missing = 0
    last = 0
    while True:
        rows = source.query(
            "SELECT seq, id FROM journal_entries WHERE workspace_id = ? AND seq > ?"
            " ORDER BY seq LIMIT ?",
            (source_ws, last, CHUNK * 5),
        )
        if not rows:
            return missing
        last = as_int(rows[-1][0])
        ids = json.dumps([as_bytes(r[1]).hex() for r in rows])
        (known,) = target.query(
            "SELECT count(*) FROM json_each(?) j WHERE EXISTS (SELECT 1 FROM journal_entries e"
            " WHERE e.workspace_id = ? AND e.id = unhex(j.value)) OR EXISTS (SELECT 1 FROM"
            " journal_tombstones t WHERE t.workspace_id = ? AND t.id = unhex(j.value)"
            " AND t.formula = 2)",
            (ids, target_ws, target_ws),
        )[0]
        missing += len(rows) - as_int(known)
