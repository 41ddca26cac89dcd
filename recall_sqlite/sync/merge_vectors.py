"""Vectors in a merge (sync/merge.py), per (owner's content id, model): the later of a put
(`created_at`) and an explicit delete (vector_tombstones) wins; at one instant the delete;
then the larger embedding bytes. So every machine keeps the same embedding, or none."""

from __future__ import annotations

import json

from ..checks import require_model
from ..context import StoreContext
from ..db import Database, as_bytes, as_int, as_str
from . import peer_rows
from .peer_rows import Refused, Tally

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from apsw import Bindings, Connection, SQLiteValue

    from ..db import Row

    # A statement's rows, on the store's or the write's connection.
    Query = Callable[[str, Bindings], list[Row]]

# A workspace's vectors with their owners' convergent ids (an entry's id, a summary's uid).
_OWNED = """
  FROM vectors v
  LEFT JOIN journal_entries e ON e.seq = v.entry_seq
  LEFT JOIN summaries s ON s.id = v.summary_id
 WHERE v.workspace_id = ? AND coalesce(e.id, s.uid) IS NOT NULL
"""
_PEER_VECTORS = (
    "SELECT v.owner_kind, coalesce(e.id, s.uid), CAST(v.model AS BLOB), v.dim,"
    " CAST(v.created_at AS BLOB), v.embedding" + _OWNED
)
_LOCAL_VECTORS = (
    "SELECT v.owner_kind, coalesce(e.id, s.uid), v.model, v.created_at, v.embedding, v.id" + _OWNED
)

# A candidate's rank: later wins; at one instant a delete (1) beats a put (0); then bytes.
_Rank = tuple[str, int, bytes]
# What holds a (owner, model) pair: "here" (a vector), "grave-here" (a tombstone), or the
# peer's "put" or "grave"; with the put's dimension and the put's or grave's instant.
_What = tuple[str, int, str]


def merge_vectors(
    ctx: StoreContext, peer: Database, peer_ws: int, counts: dict[str, int], tally: Tally
) -> None:
    ws = ctx.workspace_pk
    rows = peer.query(_PEER_VECTORS, (peer_ws,))
    grave_rows = peer.query(
        "SELECT owner_kind, owner, CAST(model AS BLOB), CAST(deleted_at AS BLOB), asked_by"
        " FROM vector_tombstones WHERE workspace_id = ?",
        (peer_ws,),
    )
    if not rows and not grave_rows:
        return
    # Each of the peer's rows checked as a local put or delete would be (peer_rows.py);
    # a refused one takes no part in the plan.
    theirs: list[Row] = []
    for kind, owner, model, dim, at, blob in rows:
        try:
            name = peer_rows.vector(model, dim, at, blob)
            theirs.append(
                (_kind(kind), peer_rows.blob16(owner), name, dim, peer_rows.text(at), blob)
            )
        except Refused:
            tally.refuse("vectors")
    their_graves: list[Row] = []
    askers: dict[tuple[str, bytes, str], str] = {}
    for kind, owner, model, at, by in grave_rows:
        try:
            key = (
                _kind(kind),
                peer_rows.blob16(owner),
                peer_rows.checked(require_model, peer_rows.text(model)),
            )
            when = peer_rows.instant(at)
        except Refused:
            tally.refuse("vectors")
            continue
        asker = tally.asker(by)
        if asker is None:
            tally.refuse("tombstones")
            continue
        askers[key] = asker
        their_graves.append((*key, when))
    if not theirs and not their_graves:
        return
    # Read first, write only when something wins here: a pull that brings nothing writes
    # nothing (peers.py says why).
    if not _plan(ctx.db.query, ws, theirs, their_graves):
        return
    with ctx.db.write() as conn:

        def query(sql: str, params: Bindings) -> list[Row]:
            return list(conn.execute(sql, params))

        for key, won in _plan(query, ws, theirs, their_graves):
            _apply_vector(conn, ws, key, won, counts, askers, tally)


def _kind(value: SQLiteValue) -> str:
    if value not in ("entry", "summary"):
        raise Refused("owner kind is neither entry nor summary")
    return str(value)


def _plan(
    query: Query, ws: int, theirs: list[Row], their_graves: list[Row]
) -> list[tuple[tuple[str, bytes, str], tuple[_Rank, _What]]]:
    """The (owner, model) pairs where a peer's put or delete wins over what is here, and
    whose owner is here."""
    best: dict[tuple[str, bytes, str], tuple[_Rank, _What]] = {}
    for kind, owner, model, at, blob, _ in query(_LOCAL_VECTORS, (ws,)):
        best[(str(kind), as_bytes(owner), str(model))] = (
            (str(at), 0, as_bytes(blob)),
            ("here", 0, ""),
        )
    for kind, owner, model, at in query(
        "SELECT owner_kind, owner, model, deleted_at FROM vector_tombstones WHERE workspace_id = ?",
        (ws,),
    ):
        here = (str(kind), as_bytes(owner), str(model))
        _offer(best, here, (str(at), 1, b""), ("grave-here", 0, ""))
    changed: dict[tuple[str, bytes, str], None] = {}
    for kind, owner, model, dim, at, blob in theirs:
        key = (str(kind), as_bytes(owner), str(model))
        if _offer(best, key, (str(at), 0, as_bytes(blob)), ("put", as_int(dim), str(at))):
            changed[key] = None
    for kind, owner, model, at in their_graves:
        key = (str(kind), as_bytes(owner), str(model))
        if _offer(best, key, (str(at), 1, b""), ("grave", 0, str(at))):
            changed[key] = None
    present = _present(query, ws, list(changed))
    return [(key, best[key]) for key in changed if (key[0], key[1]) in present]


def _present(query: Query, ws: int, keys: list[tuple[str, bytes, str]]) -> set[tuple[str, bytes]]:
    entries = json.dumps(sorted({k[1].hex() for k in keys if k[0] == "entry"}))
    summaries = json.dumps(sorted({k[1].hex() for k in keys if k[0] == "summary"}))
    found = {
        ("entry", as_bytes(i))
        for (i,) in query(
            "SELECT e.id FROM json_each(?) j CROSS JOIN journal_entries e"
            " ON e.workspace_id = ? AND e.id = unhex(j.value)",
            (entries, ws),
        )
    }
    found |= {
        ("summary", as_bytes(u))
        for (u,) in query(
            "SELECT s.uid FROM json_each(?) j CROSS JOIN summaries s"
            " ON s.workspace_id = ? AND s.uid = unhex(j.value)",
            (summaries, ws),
        )
    }
    return found


def _offer(
    best: dict[tuple[str, bytes, str], tuple[_Rank, _What]],
    key: tuple[str, bytes, str],
    rank: _Rank,
    what: _What,
) -> bool:
    held = best.get(key)
    if held is not None and held[0] >= rank:
        return False
    best[key] = (rank, what)
    return True


def _apply_vector(
    conn: Connection,
    ws: int,
    key: tuple[str, bytes, str],
    won: tuple[_Rank, _What],
    counts: dict[str, int],
    askers: dict[tuple[str, bytes, str], str],
    tally: Tally,
) -> None:
    kind, owner, model = key
    (at, _, blob), (what, dim, when) = won
    column, ref, branch, worktree = _vector_owner(conn, ws, kind, owner)
    if column is None:
        return  # the owner is not here (forgotten, removed, or not pulled)
    if what == "grave":
        gone = conn.execute(
            f"DELETE FROM vectors WHERE workspace_id = ? AND {column} = ? AND model = ?"
            " RETURNING id",
            (ws, ref, model),
        ).fetchall()
        asker = askers[key]
        conn.execute(
            "INSERT INTO vector_tombstones (workspace_id, owner_kind, owner, model, deleted_at,"
            " asked_by) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE"
            " SET deleted_at = excluded.deleted_at, asked_by = excluded.asked_by",
            (ws, kind, owner, model, when, asker),
        )
        counts["vectors_deleted"] += len(gone)
        tally.applied(asker, "vectors", len(gone))
        return
    fixed = conn.execute(
        "SELECT dim FROM vector_models WHERE workspace_id = ? AND model = ?", (ws, model)
    ).fetchall()
    if fixed and as_int(fixed[0][0]) != dim:
        counts["vector_conflicts"] += 1
        return
    if not fixed:
        conn.execute(
            "INSERT INTO vector_models (workspace_id, model, dim) VALUES (?, ?, ?)",
            (ws, model, dim),
        )
    conn.execute(
        "DELETE FROM vector_tombstones WHERE workspace_id = ? AND model = ? AND owner_kind = ?"
        " AND owner = ?",
        (ws, model, kind, owner),
    )
    updated = conn.execute(
        f"UPDATE vectors SET embedding = ?, created_at = ? WHERE workspace_id = ? AND {column} = ?"
        " AND model = ? RETURNING id",
        (blob, at, ws, ref, model),
    ).fetchall()
    if not updated:
        conn.execute(
            "INSERT INTO vectors (workspace_id, model, dim, entry_seq, summary_id, owner_kind,"
            " branch, worktree_id, embedding, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                ws,
                model,
                dim,
                ref if kind == "entry" else None,
                ref if kind == "summary" else None,
                kind,
                branch,
                worktree,
                blob,
                at,
            ),
        )
    counts["vectors"] += 1


def _vector_owner(
    conn: Connection, ws: int, kind: str, owner: bytes
) -> tuple[str | None, int | None, str | None, int | None]:
    if kind == "entry":
        rows = conn.execute(
            "SELECT seq, branch, worktree_id FROM journal_entries"
            " WHERE workspace_id = ? AND id = ?",
            (ws, owner),
        ).fetchall()
        if rows:
            return "entry_seq", as_int(rows[0][0]), str(rows[0][1]), as_int(rows[0][2])
        return None, None, None, None
    rows = conn.execute(
        "SELECT id, branch FROM summaries WHERE workspace_id = ? AND uid = ?", (ws, owner)
    ).fetchall()
    if rows:
        return "summary_id", as_int(rows[0][0]), as_str(rows[0][1]), None
    return None, None, None, None
