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
from collections.abc import Sequence
from typing import Any, NamedTuple, cast

from .. import derived, identity
from .._record import Frozen
from ..context import StoreContext
from ..db import Database, as_bytes, as_int
from ..errors import CorruptStoreError, PeerError, RecallError
from ..journal import codec
from ..journal.entry import JournalEntry, decode_lists
from ..journal.forget import ForgetTarget, remove_in
from ..limits import max_field_bytes
from ..timestamps import fast_us, now_us
from .merge_rows import store_versions
from .merge_summaries import merge_summaries
from .merge_vectors import merge_vectors
from .peer_rows import KINDS, Tally

TYPE_CHECKING = False
if TYPE_CHECKING:
    from queue import Queue
    from threading import Event
    from typing import TypeAlias

    from apsw import Connection, SQLiteValue

    from ..db import Row

# Entry versions read from the peer (and proven) per round, and at most WRITE_ROWS new ones
# written here per transaction: a pull of a large union never holds the write lock for
# long (local writers keep working; bench/RESULTS.md, row 'merge: rows per write'), and a
# killed pull keeps what it merged (the next one carries on: the union is idempotent).
CHUNK = 10_000
WRITE_ROWS = 5_000


class MergeReport(Frozen):
    """What one merge changed here, what it refused of the peer's rows (per kind: each row
    checked against what its id proves, peer_rows.py), and which machine asked for each
    removal it applied."""

    __slots__ = (
        "entries",
        "moved",
        "rejected",
        "rejected_summaries",
        "rejected_vectors",
        "rejected_tombstones",
        "summaries_unproven",
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
        "forgotten_by",
    )
    entries: int  # entry versions stored here
    moved: int  # versions moved to the worktree with the smaller key
    rejected: int  # peer entry versions refused: their id does not match their content, or invalid
    rejected_summaries: int  # peer summaries refused: uid not their content's, or invalid
    rejected_vectors: int  # peer vectors (and vector deletes) refused: invalid
    rejected_tombstones: int  # peer tombstones refused: invalid, or naming this machine falsely
    summaries_unproven: int  # kept, but a source forgotten on the peer took what proves them
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
    # (machine, entries, summaries, vectors) removed here at that machine's asking
    forgotten_by: tuple[tuple[str, int, int, int], ...]

    def __init__(self, **values: int | tuple[tuple[str, int, int, int], ...]) -> None:
        self._set(**{"forgotten_by": (), **values})

    @property
    def changed(self) -> bool:
        return any(getattr(self, n) for n in _CHANGES)

    @property
    def refused(self) -> int:
        """Peer rows refused, every kind."""
        return sum(getattr(self, n) for n in _REFUSED)

    def to_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in self.__slots__}
        out["forgotten_by"] = [
            {"machine": m, "entries": e, "summaries": s, "vectors": v}
            for m, e, s, v in self.forgotten_by
        ]
        return out


_REFUSED = ("rejected", "rejected_summaries", "rejected_vectors", "rejected_tombstones")
_CHANGES = tuple(
    n
    for n in MergeReport.__slots__
    if n
    not in (
        "peer_seq",
        "forgotten_by",
        "vector_conflicts",
        "summaries_unproven",
        "copies_left",
        *_REFUSED,
    )
)
# The kinds of peer_rows.Tally, as this report names their refusals.
_REFUSED_AS = dict(zip(KINDS, _REFUSED, strict=True))


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
    machine: str,
    me: str | None = None,
    removed: list[ForgetTarget] | None = None,
) -> MergeReport:
    """Merge the workspace of `peer` (machine `machine`'s) that syncs as `sync_key` into
    `ctx`'s workspace (this machine is `me`, when known: a peer's tombstone that names it
    as the machine that asked is a lie, refused).

    Entry versions are read after `since_seq` (the peer's journal seq a previous merge of
    the same peer reached; 0 = all): a peer only ever adds rows at higher seqs, and what it
    removes travels as tombstones, which are compared whole. The caller runs this with
    `secure_delete` on and checkpoints afterwards (forgotten text must leave the file);
    the versions the peer's tombstones removed here are added to `removed`, for the
    caller to take their copies out of files (this module knows no filesystem)."""
    peer_ws, _ = peer_workspace(peer, sync_key)
    counts: dict[str, int] = {
        n: 0 for n in MergeReport.__slots__ if n not in ("peer_seq", "forgotten_by")
    }
    tally = Tally(machine, me)
    gone = _tombstones(ctx, peer, peer_ws, counts, tally)
    if removed is not None:
        removed.extend(gone)
    peer_seq = _entries(ctx, peer, peer_ws, since_seq, counts)
    merge_summaries(ctx, peer, peer_ws, counts, tally)
    merge_vectors(ctx, peer, peer_ws, counts, tally)
    for kind, name in _REFUSED_AS.items():
        counts[name] += tally.refused[kind]
    counts["summaries_unproven"] = tally.unproven
    return MergeReport(**counts, peer_seq=peer_seq, forgotten_by=tally.forgotten_by())


# -- tombstones ---------------------------------------------------------------------------


def _tombstones(
    ctx: StoreContext, peer: Database, peer_ws: int, counts: dict[str, int], tally: Tally
) -> tuple[ForgetTarget, ...]:
    rows = peer.query(
        "SELECT id, CAST(forgotten_at AS BLOB), asked_by FROM journal_tombstones"
        " WHERE workspace_id = ? AND formula = 2",
        (peer_ws,),
    )
    if not rows:
        return ()
    ws = ctx.workspace_pk
    # Read first, write only when something is new: a pull that brings nothing writes
    # nothing (peers.py says why).
    ours = _tombstoned(ctx.db, ws)
    theirs, earlier = tally.tombstones(rows, ours)
    if not theirs and not earlier:
        return ()
    removed: list[ForgetTarget] = []
    with ctx.db.write() as conn:
        ours = _tombstoned(conn, ws)
        new = [t for t in theirs if t[0] not in ours]
        by: dict[str, list[tuple[bytes, str, str]]] = {}
        for t in new:
            by.setdefault(t[2], []).append(t)
        for asker, mine in sorted(by.items()):
            # Removed the way `journal forget` removes (its trigger writes the tombstone) ...
            gone = remove_in(conn, ws, [i for i, _, _ in mine])
            counts["forgotten"] += len(gone)
            removed.extend(gone)
            tally.applied(asker, "entries", len(mine))
        # ... and each recorded as the peer recorded it, naming the machine that asked.
        conn.executemany(
            "INSERT INTO journal_tombstones (workspace_id, id, formula, forgotten_at, asked_by)"
            " VALUES (?, ?, 2, ?, ?) ON CONFLICT (workspace_id, id) DO UPDATE"
            " SET formula = 2, forgotten_at = excluded.forgotten_at, asked_by = excluded.asked_by",
            [(ws, i, at, who) for i, at, who in new],
        )
        counts["tombstones"] += len(new)
        conn.executemany(
            "UPDATE journal_tombstones SET forgotten_at = ?, asked_by = ?"
            " WHERE workspace_id = ? AND id = ?",
            [(at, who, ws, i) for i, at, who in earlier],
        )
    return tuple(removed)


def _tombstoned(
    conn: Database | Connection, ws: int
) -> dict[bytes, tuple[SQLiteValue, SQLiteValue]]:
    """This workspace's synced tombstones: id -> (forgotten_at, asked_by)."""
    sql = (
        "SELECT id, forgotten_at, asked_by FROM journal_tombstones"
        " WHERE workspace_id = ? AND formula = 2"
    )
    rows = conn.query(sql, (ws,)) if isinstance(conn, Database) else conn.execute(sql, (ws,))
    return {as_bytes(i): (at, by) for i, at, by in rows}


# -- entry versions -----------------------------------------------------------------------

# A chunk's versions are first listed by (seq, id, worktree): only those this store lacks
# are then read whole (a pull between machines that imported the same history finds most
# of the peer's versions here already: bench/RESULTS.md, row 'merge: ids first').
_PEER_KEYS = (
    "SELECT seq, id, worktree_id FROM journal_entries"
    " WHERE workspace_id = ? AND seq > ? ORDER BY seq LIMIT ?"
)
_PEER_RANGE = (
    f"SELECT {codec.select_list()} FROM journal_entries"
    " WHERE workspace_id = ? AND seq > ? AND seq <= ? ORDER BY seq"
)
_PEER_SOME = (
    f"SELECT {codec.select_list()} FROM journal_entries"
    " WHERE workspace_id = ?1 AND seq IN (SELECT value FROM json_each(?2)) ORDER BY seq"
)
_PEER_ROW = f"SELECT {codec.select_list()} FROM journal_entries WHERE workspace_id = ? AND seq = ?"
_ID, _WT = (codec.SELECT_INDEX[n] for n in ("id", "worktree_id"))


def _entries(
    ctx: StoreContext, peer: Database, peer_ws: int, since_seq: int, counts: dict[str, int]
) -> int:
    """The peer's versions after `since_seq`, round by round: each round read and proven
    in a thread of its own while the round before it is written here (SQLite releases the
    interpreter lock while it writes; bench/RESULTS.md, row 'merge: proven beside the
    writes'); the peer's highest seq merged."""
    import queue
    import threading

    theirs = identity.worktree_names(peer, peer_ws)
    ours = {key: pk for pk, (key, _) in identity.worktree_names(ctx.db, ctx.workspace_pk).items()}
    ready: Queue[_Handed] = queue.Queue(maxsize=1)
    stop = threading.Event()
    reader = ctx.db.reader()

    def read_and_prove() -> None:
        last = since_seq
        try:
            while not stop.is_set():
                keys = peer.query(_PEER_KEYS, (peer_ws, last, CHUNK))
                if not keys:
                    _hand(ready, stop, (last, None))
                    return
                top = as_int(keys[-1][0])
                got = _prepare(reader, ctx.workspace_pk, peer, peer_ws, (last, top), keys, theirs)
                _hand(ready, stop, (top, got))
                last = top
        except BaseException as exc:  # handed to the merging thread, which raises it
            _hand(ready, stop, exc)

    worker = threading.Thread(target=read_and_prove, name="recall-merge-read", daemon=True)
    worker.start()
    try:
        while True:
            item = ready.get()
            if isinstance(item, BaseException):
                raise item
            top, got = item
            if got is None:
                return top
            _write_round(ctx, got, theirs, ours, counts)
    finally:
        # Whatever stopped the merge (a failed write, Ctrl-C), the reading thread ends
        # here: it stops at its next hand-over, and is not left holding the peer.
        stop.set()
        while worker.is_alive():
            try:
                ready.get(timeout=0.05)
            except queue.Empty:
                pass
        worker.join()
        reader.close()


def _hand(ready: Queue[_Handed], stop: Event, item: _Handed) -> None:
    """Put `item` for the merging thread, unless it has stopped taking them."""
    import queue

    while not stop.is_set():
        try:
            ready.put(item, timeout=0.05)
            return
        except queue.Full:
            continue


class _Round(NamedTuple):
    """One round of the peer's versions, read and proven (_prepare), to write here."""

    proven: list[tuple[Row, bytes, Row]]  # (the peer's row, its id, its content columns)
    refused: list[bytes]  # ids whose rows are invalid or not their content's
    moving: list[tuple[bytes, int]]  # (id, the peer's worktree pk) of versions to move
    here: dict[bytes, tuple[int, str]]  # id -> (seq, worktree key) of versions held here
    unreadable: int  # rows refused because SQLite could not hand their text back


# What the reading thread hands the merging one: (the peer's seq reached, the round, or
# None when there is no more), or the exception that stopped it.
_Handed: TypeAlias = "tuple[int, _Round | None] | BaseException"


def _peer_rows(
    peer: Database,
    peer_ws: int,
    span: tuple[int, int],
    seqs: list[int],
    whole: bool,
    counts: dict[str, int],
) -> list[Row]:
    """The peer's versions at `seqs` (`whole`: every one of `span`), read whole. A value that
    is not text SQLite can hand back (not UTF-8) fails the whole statement: then they are
    read one by one, so that row alone is refused (counted) and the pull goes on."""
    try:
        if whole:
            return peer.query(_PEER_RANGE, (peer_ws, *span))
        return peer.query(_PEER_SOME, (peer_ws, json.dumps(seqs)))
    except CorruptStoreError:
        pass
    rows: list[Row] = []
    for seq in seqs:
        try:
            rows += peer.query(_PEER_ROW, (peer_ws, seq))
        except CorruptStoreError:
            counts["rejected"] += 1
    return rows


def _prepare(
    reader: Database,
    ws: int,
    peer: Database,
    peer_ws: int,
    span: tuple[int, int],
    keys: list[Row],
    theirs: dict[int, tuple[str, str]],
) -> _Round:
    """One round of the peer's versions, listed by `keys` (seq, id, worktree): the ones
    new here read whole and proven, the ones held in a worktree with a larger key to move
    (see the module docstring). Reads only: `reader` is this store's."""
    ids = json.dumps([as_bytes(k[1]).hex() for k in keys])
    stored = reader.query(
        "SELECT e.id, e.seq, e.worktree_id FROM json_each(?) j CROSS JOIN journal_entries e"
        " ON e.workspace_id = ? AND e.id = unhex(j.value)",
        (ids, ws),
    )
    # Read after the rows (each row's worktree is there by then) and afresh each round:
    # the merging thread may have added worktrees since the last.
    key_of = {pk: key for pk, (key, _) in identity.worktree_names(reader, ws).items()}
    here = {as_bytes(i): (as_int(seq), key_of.get(as_int(wt), "")) for i, seq, wt in stored}
    fresh_seqs: list[int] = []
    moving: list[tuple[bytes, int]] = []  # (id, the peer's worktree pk)
    for seq, i, wt in keys:
        rid = as_bytes(i)
        held = here.get(rid)
        if held is None:
            fresh_seqs.append(as_int(seq))
        elif _their_key(theirs, as_int(wt)) < held[1]:
            moving.append((rid, as_int(wt)))
    # Decoded, validated and re-hashed outside the write lock: the proof of a row depends
    # on nothing stored here, so local writers wait only for the writing.
    tally = {"rejected": 0}
    whole = len(fresh_seqs) == len(keys)
    fresh = _peer_rows(peer, peer_ws, span, fresh_seqs, whole, tally) if fresh_seqs else []
    proven: list[tuple[Row, bytes, Row]] = []
    refused: list[bytes] = []
    limit = max_field_bytes()
    for r, lists in zip(fresh, decode_lists(fresh), strict=True):
        rid = as_bytes(r[_ID])
        content = _proven(r, rid, lists, limit, theirs)
        if content is None:
            refused.append(rid)
        else:
            proven.append((r, rid, content))
    return _Round(proven, refused, moving, here, tally["rejected"])


def _write_round(
    ctx: StoreContext,
    got: _Round,
    theirs: dict[int, tuple[str, str]],
    ours: dict[str, int],
    counts: dict[str, int],
) -> None:
    """A round's versions written here, at most WRITE_ROWS a transaction."""
    counts["rejected"] += got.unreadable
    proven = got.proven
    if not proven and not got.refused and not got.moving:
        return  # all known, all where they belong: nothing to write
    for at in range(0, max(len(proven), 1), WRITE_ROWS):
        last = at + WRITE_ROWS >= len(proven)
        _write_versions(
            ctx,
            proven[at : at + WRITE_ROWS],
            got.refused if last else [],
            got.moving if last else [],
            got.here,
            theirs,
            ours,
            counts,
        )


def _their_key(theirs: dict[int, tuple[str, str]], wt: int) -> str:
    """The key of the peer's worktree `wt` (a row naming no worktree of the peer's: one
    of its own, never any real key)."""
    return theirs.get(wt, (f"#{wt}", ""))[0]


def _write_versions(
    ctx: StoreContext,
    proven: list[tuple[Row, bytes, Row]],
    refused: list[bytes],
    moving: list[tuple[bytes, int]],
    here: dict[bytes, tuple[int, str]],
    theirs: dict[int, tuple[str, str]],
    ours: dict[str, int],
    counts: dict[str, int],
) -> None:
    """One write transaction of a chunk: its proven versions not forgotten here, the
    refused ones counted, the versions to move moved. (A version stored by another process
    since the read is found by store_versions, in this same transaction.)"""
    ws = ctx.workspace_pk

    with ctx.db.write() as conn:
        # Forgotten here: a tombstone wins, and a forgotten row is no refusal.
        forgotten = _hex_set(conn, _FORGOTTEN, [rid for _, rid, _ in proven] + refused, ws)
        counts["rejected"] += sum(1 for rid in refused if rid not in forgotten)

        def worktree_pk(wt: int) -> int:
            key = _their_key(theirs, wt)
            pk = ours.get(key)
            if pk is None:
                # Known here only from the peer's rows: no root (as an imported worktree).
                name = theirs.get(wt, (key, key))[1]
                pk = ours[key] = identity.ensure_worktree(conn, ws, key, name, None)
            return pk

        stamp = now_us()
        pks: dict[int, int] = {}
        new = []
        for r, rid, content in proven:
            if rid not in forgotten:
                wt = as_int(r[_WT])
                pk = pks.get(wt)
                if pk is None:
                    pk = pks[wt] = worktree_pk(wt)
                new.append((rid, ws, pk, stamp, *content))
        # Every index stays current: deferring the head indexes, as a large import does,
        # would hold the lock for the whole pull for little (bench/RESULTS.md, row
        # 'merge: indexes kept current').
        counts["entries"] += store_versions(conn, new)
        moves: dict[int, list[int]] = {}
        for rid, wt in moving:
            moves.setdefault(worktree_pk(wt), []).append(here[rid][0])
        for pk, seqs in moves.items():
            counts["moved"] += derived.move_versions(conn, ws, pk, seqs)


_FORGOTTEN = (
    "SELECT j.value FROM json_each(?1) j CROSS JOIN journal_tombstones t"
    " ON t.workspace_id = ?2 AND t.id = unhex(j.value) AND t.formula = 2"
)


def _hex_set(conn: Connection, sql: str, ids: list[bytes], ws: int) -> set[bytes]:
    """The ids among `ids` that `sql` finds here (one statement for the whole chunk)."""
    if not ids:
        return set()
    found = conn.execute(sql, (json.dumps([i.hex() for i in ids]), ws))
    return {bytes.fromhex(str(h)) for (h,) in found}


_TS, _SID, _BR, _FO, _GT, _AG, _AU, _EN, _RP = (
    codec.SELECT_INDEX[n]
    for n in (
        "timestamp",
        "session_id",
        "branch",
        "focus",
        "griptree",
        "agent_id",
        "auto",
        "enriched",
        "repair",
    )
)


def _proven(
    r: Row, rid: bytes, lists: list[object], limit: int, theirs: dict[int, tuple[str, str]]
) -> Row | None:
    """The content columns of a peer's version, or None when they are invalid or its id is
    not the hash of its content. A plainly valid row is hashed as it is; anything unusual
    goes through the journal's own validator, so the accepted set is the journal's."""
    plain = _plain_content(r, lists, limit)
    if plain is None:
        (e,) = JournalEntry.from_rows([r], lambda pk: theirs.get(pk, (f"#{pk}", ""))[0])
        return _verified(e, rid)
    digest, content = plain
    return content if digest == rid else None


def _plain_content(r: Row, lists: list[object], limit: int) -> tuple[bytes, Row] | None:
    """(id, content columns) of a peer's row whose every value is plainly valid (text
    without NUL or lone surrogate, all of it within one field's limit, a timestamp of
    synapt's shape, no extra fields), computed without building an entry; None for any
    other row, which _verified judges. What this accepts, the validator accepts alike
    (tests/unit/sync/test_sync_proof.py holds the two verdicts equal)."""
    v: Sequence[Any] = r  # (each value checked to be a str below)
    done, decisions, next_steps, files, git_log = cast("list[list[str]]", lists[:5])
    extra = lists[5]
    ts, sid, br, fo, gt, ag = v[_TS], v[_SID], v[_BR], v[_FO], v[_GT], v[_AG]
    if extra:
        return None
    try:
        # join refuses any value that is not a str, in C
        joined = "".join(
            (ts, sid, br, fo, gt, ag, *done, *decisions, *next_steps, *files, *git_log)
        )
        size = len(joined.encode("utf-8"))  # a lone surrogate anywhere fails
    except (TypeError, UnicodeEncodeError):
        return None
    if size > limit or "\x00" in joined:  # (each field is at most the whole)
        return None
    us = fast_us(ts)
    if us is None:
        return None
    digest, row, _ = codec.encode(
        ts,
        us,
        sid,
        br,
        fo,
        done,
        decisions,
        next_steps,
        files,
        git_log,
        bool(v[_AU]),
        bool(v[_EN]),
        gt,
        ag,
        bool(v[_RP]),
        None,
    )
    return digest, row


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
