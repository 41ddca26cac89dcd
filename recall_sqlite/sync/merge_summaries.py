"""Summaries in a merge (sync/merge.py): by content id (`uid`); a removed summary's uid
wins; within a scope the supersede chain is the creation order (created_us, uid),
recomputed for the scopes that changed; covered positions translated to this store's seqs
through the entry versions they name (positions are local)."""

from __future__ import annotations

import json

from ..context import StoreContext
from ..db import Database, as_bytes, as_int
from .peer_rows import PEER_SUMMARIES, PeerSummary, Refused, Tally

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from apsw import Connection, SQLiteValue

    from ..db import Row

    # What a pull brings of a peer's summaries, checked: removals new here, removals held
    # here that another machine asked for first, summaries new here.
    _Checked = tuple[
        list[tuple[bytes, str, str]], list[tuple[bytes, str, str | None]], list[PeerSummary]
    ]


def merge_summaries(
    ctx: StoreContext, peer: Database, peer_ws: int, counts: dict[str, int], tally: Tally
) -> None:
    ws = ctx.workspace_pk
    removed = peer.query(
        "SELECT uid, CAST(removed_at AS BLOB), asked_by FROM summary_tombstones"
        " WHERE workspace_id = ?",
        (peer_ws,),
    )
    rows = peer.query(PEER_SUMMARIES, (peer_ws,))
    if not removed and not rows:
        return
    held = {
        as_bytes(u)
        for (u,) in ctx.db.query(
            "SELECT uid FROM summaries WHERE workspace_id = ? AND uid IS NOT NULL", (ws,)
        )
    }
    buried: dict[bytes, tuple[SQLiteValue, SQLiteValue]] = {
        as_bytes(u): (at, by)
        for u, at, by in ctx.db.query(
            "SELECT uid, removed_at, asked_by FROM summary_tombstones WHERE workspace_id = ?",
            (ws,),
        )
    }

    def known(uid: SQLiteValue) -> bool:
        return isinstance(uid, bytes) and (uid in held or uid in buried)

    # Read first: a pull that brings nothing writes nothing (peers.py). What is new is
    # checked against what its id proves before anything is written.
    graves, earlier, theirs = _checked(removed, rows, known, buried, tally)
    if not graves and not earlier and not theirs:
        return
    _write(ctx, peer, peer_ws, (graves, earlier, theirs), counts, tally)


def _checked(
    removed: list[Row],
    rows: list[Row],
    known: Callable[[SQLiteValue], bool],
    buried: dict[bytes, tuple[SQLiteValue, SQLiteValue]],
    tally: Tally,
) -> _Checked:
    """The peer's removals and summaries new here, each checked (peer_rows.py), the
    refused counted in `tally`; and the removals held here that the peer says another
    machine asked for first (Tally.earlier)."""
    graves, earlier = tally.tombstones(removed, buried)
    theirs: list[PeerSummary] = []
    for row in rows:
        if known(row[0]):
            continue
        try:
            theirs.append(PeerSummary(tuple(row)))
        except Refused:
            tally.refuse("summaries")
    return graves, earlier, theirs


def _write(
    ctx: StoreContext,
    peer: Database,
    peer_ws: int,
    checked: _Checked,
    counts: dict[str, int],
    tally: Tally,
) -> None:
    ws = ctx.workspace_pk
    graves, earlier, theirs = checked
    with ctx.db.write() as conn:
        conn.executemany(
            "UPDATE summary_tombstones SET removed_at = ?, asked_by = ?"
            " WHERE workspace_id = ? AND uid = ?",
            [(at, who, ws, uid) for uid, at, who in earlier],
        )
        local = {
            bytes(u): (int(i), b, str(k))
            for u, i, b, k in conn.execute(
                "SELECT uid, id, branch, kind FROM summaries"
                " WHERE workspace_id = ? AND uid IS NOT NULL",
                (ws,),
            )
        }
        gone = {
            bytes(u)
            for (u,) in conn.execute(
                "SELECT uid FROM summary_tombstones WHERE workspace_id = ?", (ws,)
            )
        }
        touched: set[tuple[str | None, str]] = set()
        for uid, at, asker in graves:
            if uid in gone:
                continue
            gone.add(uid)
            if uid in local:
                sid, branch, kind = local.pop(uid)
                conn.execute("DELETE FROM summaries WHERE id = ?", (sid,))
                touched.add((branch, kind))
                counts["summaries_removed"] += 1
            # Recorded as the peer recorded it (the delete's trigger wrote this machine's
            # own), naming the machine that asked.
            conn.execute(
                "INSERT INTO summary_tombstones (workspace_id, uid, removed_at, asked_by)"
                " VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE"
                " SET removed_at = excluded.removed_at, asked_by = excluded.asked_by",
                (ws, uid, at, asker),
            )
            tally.applied(asker, "summaries", 1)
        for summary in theirs:
            if summary.uid in local or summary.uid in gone:
                continue
            _add_summary(conn, ctx, peer, peer_ws, summary)
            local[summary.uid] = (0, summary.branch, summary.kind)
            touched.add((summary.branch, summary.kind))
            counts["summaries"] += 1
            if not summary.proven:
                tally.unproven += 1
        for branch, kind in sorted(touched, key=lambda t: (t[0] is None, t[0] or "", t[1])):
            _relink(conn, ws, branch, kind)


def _add_summary(
    conn: Connection, ctx: StoreContext, peer: Database, peer_ws: int, summary: PeerSummary
) -> None:
    ws = ctx.workspace_pk
    sources = summary.sources
    seq_of = {
        str(h): int(s)
        for h, s in conn.execute(
            "SELECT lower(hex(e.id)), e.seq FROM json_each(?) j CROSS JOIN journal_entries e"
            " ON e.workspace_id = ? AND e.id = unhex(j.value)",
            (json.dumps(sources), ws),
        )
    }
    seqs = sorted(seq_of[h] for h in sources if h in seq_of)
    covers_from, covers_to = summary.covers_from, summary.covers_to
    minted_from, minted_to = None, None
    if covers_from is not None and covers_to is not None:
        # A range of the peer's positions: here, the span of the versions it covered there;
        # the range its uid was made with is kept beside it (what proves it, anywhere).
        minted_from, minted_to = summary.minted
        span = _local_span(conn, peer, peer_ws, ws, covers_from, covers_to)
        covers_from, covers_to = span if span else (None, None)
        covered = span[1] if span else 0
    elif seqs:
        covered = seqs[-1]
    else:
        covered = _local_through(conn, peer, peer_ws, ws, summary.covered_seq)
    us = summary.created_us
    # Two machines' summaries created at one microsecond (a clash): the later arrival moves
    # by a microsecond; its uid, and so its identity, stays.
    while conn.execute(
        "SELECT 1 FROM summaries WHERE workspace_id = ? AND created_us = ?", (ws, us)
    ).fetchall():
        us += 1
    new_id = as_int(
        conn.execute(
            "INSERT INTO summaries (workspace_id, branch, kind, text, created_at, created_us,"
            " author, covers_from, covers_to, source_count, covered_seq, uid, minted_from,"
            " minted_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                ws,
                summary.branch,
                summary.kind,
                summary.text,
                summary.created_at,
                us,
                summary.author,
                covers_from,
                covers_to,
                # What its uid was made with, as there: when a source was forgotten (there or
                # here) the links are fewer, and nothing takes it for damage (doctor).
                max(summary.source_count, len(seqs)),
                covered,
                summary.uid,
                minted_from,
                minted_to,
            ),
        ).fetchall()[0][0]
    )
    if seqs:
        conn.executemany(
            "INSERT INTO summary_sources (summary_id, entry_seq) VALUES (?, ?)",
            [(new_id, s) for s in seqs],
        )


def _local_span(
    conn: Connection, peer: Database, peer_ws: int, ws: int, first: int, last: int
) -> tuple[int, int] | None:
    ids = [
        as_bytes(i).hex()
        for (i,) in peer.query(
            "SELECT id FROM journal_entries WHERE workspace_id = ? AND seq BETWEEN ? AND ?",
            (peer_ws, first, last),
        )
    ]
    rows = conn.execute(
        "SELECT min(e.seq), max(e.seq) FROM json_each(?) j CROSS JOIN journal_entries e"
        " ON e.workspace_id = ? AND e.id = unhex(j.value)",
        (json.dumps(ids), ws),
    ).fetchall()
    if not rows or rows[0][0] is None:
        return None
    return as_int(rows[0][0]), as_int(rows[0][1])


def _local_through(conn: Connection, peer: Database, peer_ws: int, ws: int, peer_seq: int) -> int:
    """This store's position of the newest version the peer had at `peer_seq` (what a
    summary of "the journal as it stood" covered there), or 0."""
    ids = [
        as_bytes(i).hex()
        for (i,) in peer.query(
            "SELECT id FROM journal_entries WHERE workspace_id = ? AND seq <= ?"
            " ORDER BY seq DESC LIMIT 64",
            (peer_ws, peer_seq),
        )
    ]
    rows = conn.execute(
        "SELECT max(e.seq) FROM json_each(?) j CROSS JOIN journal_entries e"
        " ON e.workspace_id = ? AND e.id = unhex(j.value)",
        (json.dumps(ids), ws),
    ).fetchall()
    return int(rows[0][0]) if rows and rows[0][0] is not None else 0


def _relink(conn: Connection, ws: int, branch: str | None, kind: str) -> None:
    """A scope's supersede chain as its creation order: each summary superseded by the
    next one created, the newest current (what `add` leaves on one machine)."""
    chain = [
        int(i)
        for (i,) in conn.execute(
            "SELECT id FROM summaries WHERE workspace_id = ? AND branch IS ? AND kind = ?"
            " ORDER BY created_us, uid",
            (ws, branch, kind),
        )
    ]
    links: list[tuple[int | None, int]] = [
        (nxt, cur) for cur, nxt in zip(chain, chain[1:], strict=False)
    ]
    if chain:
        links.append((None, chain[-1]))
    conn.executemany(
        "UPDATE summaries SET superseded_by = ? WHERE id = ? AND superseded_by IS NOT ?",
        [(nxt, cur, nxt) for nxt, cur in links],
    )
