"""The identity tables (`workspaces`, `workspace_roots`, `worktrees`): their one owner.

Every row of them is written here, under one policy: a workspace and a root are upserted
with `last_seen` refreshed; a worktree is upserted by (workspace, key), its root updated
when this sighting knows it (a live checkout) and kept when it does not (a worktree known
only from an imported file), and `last_seen` refreshed only by a live sighting. No
filesystem here: callers say what they saw."""

from __future__ import annotations

from ._record import Frozen
from .db import Database, as_int, scalar
from .errors import BusyError, InvalidInputError
from .timestamps import is_after, now_us, utc_now_iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from apsw import Bindings, Connection

    from .db import Row

# How stale a root's last_seen may get before an open refreshes it: keeps opens read-only
# in the common case, so a burst of hook processes does not queue on the write lock.
SEEN_REFRESH_US = 3_600 * 1_000_000


class Sighting(Frozen):
    """Where a process stands: the workspace id, the root it was found at, its worktree."""

    __slots__ = ("uuid", "root", "worktree_key", "worktree_name", "worktree_root")
    uuid: str
    root: str
    worktree_key: str
    worktree_name: str
    worktree_root: str

    def __init__(
        self, uuid: str, root: str, worktree_key: str, worktree_name: str, worktree_root: str
    ) -> None:
        self._set(
            uuid=uuid,
            root=root,
            worktree_key=worktree_key,
            worktree_name=worktree_name,
            worktree_root=worktree_root,
        )


class Registered(Frozen):
    __slots__ = ("workspace_pk", "worktree_pk", "other_roots")
    workspace_pk: int
    worktree_pk: int
    other_roots: tuple[str, ...]  # other roots this workspace id was recorded at

    def __init__(self, workspace_pk: int, worktree_pk: int, other_roots: tuple[str, ...]) -> None:
        self._set(workspace_pk=workspace_pk, worktree_pk=worktree_pk, other_roots=other_roots)


class WorktreeRow(Frozen):
    __slots__ = ("pk", "key", "name", "root")
    pk: int
    key: str
    name: str
    root: str | None

    def __init__(self, pk: int, key: str, name: str, root: str | None) -> None:
        self._set(pk=pk, key=key, name=name, root=root)


def register(db: Database, s: Sighting) -> Registered:
    """Record the workspace, this root and this worktree (a write only when one is new or
    its last sighting is older than SEEN_REFRESH_US). A read-only store must know them.
    Only a new one waits for the write lock: a refresh another writer is in the way of is
    skipped (the next open does it), so an open for reading never queues behind an import."""
    stale_before = now_us() - SEEN_REFRESH_US
    with db.read() as conn:
        rows: list[tuple[Any, ...]] = conn.execute(
            "SELECT w.id, t.id, r.last_seen, t.last_seen, t.gone_at FROM workspaces w"
            " LEFT JOIN workspace_roots r ON r.workspace_id = w.id AND r.root = ?"
            " LEFT JOIN worktrees t ON t.workspace_id = w.id AND t.key = ?"
            " WHERE w.uuid = ?",
            (s.root, s.worktree_key, s.uuid),
        ).fetchall()
        others = tuple(
            str(r)
            for (r,) in conn.execute(
                "SELECT r.root FROM workspace_roots r JOIN workspaces w ON w.id = r.workspace_id"
                " WHERE w.uuid = ? AND r.root <> ?",
                (s.uuid, s.root),
            )
        )
    known = bool(rows) and rows[0][1] is not None
    if (
        known
        and rows[0][4] is None  # a worktree acknowledged gone is back: record it live
        and _seen_since(rows[0][2], stale_before)
        and _seen_since(rows[0][3], stale_before)
    ):
        return Registered(int(rows[0][0]), int(rows[0][1]), others)
    if db.read_only:
        # A read never writes: an unknown workspace or worktree has no entries yet, and the
        # key 0 (never handed out by INTEGER PRIMARY KEY) matches none.
        ws_pk = int(rows[0][0]) if rows else 0
        wt_pk = int(rows[0][1]) if known else 0
        return Registered(ws_pk, wt_pk, others)
    if known:
        try:
            _record(db, s, wait=False)
        except BusyError:
            pass
        return Registered(int(rows[0][0]), int(rows[0][1]), others)
    workspace_pk, worktree_pk = _record(db, s, wait=True)
    return Registered(workspace_pk, worktree_pk, others)


def _seen_since(last_seen: object, since_us: int) -> bool:
    """Whether a recorded last_seen is after `since_us`; one that does not parse (a
    damaged row) counts as long ago: the refresh writes it again."""
    if not isinstance(last_seen, str):
        return False
    try:
        return is_after(last_seen, since_us)
    except InvalidInputError:
        return False


def _record(db: Database, s: Sighting, *, wait: bool) -> tuple[int, int]:
    now = utc_now_iso()
    with db.write(wait=wait) as conn:
        conn.execute(
            "INSERT INTO workspaces (uuid, first_seen, last_seen) VALUES (?, ?, ?)"
            " ON CONFLICT (uuid) DO UPDATE SET last_seen = excluded.last_seen",
            (s.uuid, now, now),
        )
        workspace_pk = as_int(scalar(conn, "SELECT id FROM workspaces WHERE uuid = ?", (s.uuid,)))
        conn.execute(
            "INSERT INTO workspace_roots (workspace_id, root, first_seen, last_seen)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, root)"
            " DO UPDATE SET last_seen = excluded.last_seen",
            (workspace_pk, s.root, now, now),
        )
        worktree_pk = ensure_worktree(
            conn, workspace_pk, s.worktree_key, s.worktree_name, s.worktree_root, now=now
        )
    return workspace_pk, worktree_pk


def ensure_worktree(
    conn: Connection,
    workspace_pk: int,
    key: str,
    name: str,
    root: str | None,
    *,
    now: str | None = None,
) -> int:
    """The worktree's id, recording it if it is new (inside the caller's write). `root`
    None: known only from an imported file, which neither clears a recorded root nor
    counts as a sighting. A live sighting of a worktree acknowledged gone makes it live."""
    now = now or utc_now_iso()
    conn.execute(
        "INSERT INTO worktrees (workspace_id, key, name, root, first_seen, last_seen)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, key) DO UPDATE"
        " SET root = coalesce(excluded.root, root),"
        " last_seen = CASE WHEN excluded.root IS NULL THEN last_seen ELSE excluded.last_seen END,"
        " gone_at = CASE WHEN excluded.root IS NULL THEN gone_at END",
        (workspace_pk, key, name, root, now, now),
    )
    return as_int(
        scalar(
            conn, "SELECT id FROM worktrees WHERE workspace_id = ? AND key = ?", (workspace_pk, key)
        )
    )


def worktrees(db: Database, workspace_pk: int) -> list[WorktreeRow]:
    return [
        WorktreeRow(as_int(pk), str(k), str(n), None if r is None else str(r))
        for pk, k, n, r in db.query(
            "SELECT id, key, name, root FROM worktrees WHERE workspace_id = ? ORDER BY key",
            (workspace_pk,),
        )
    ]


def worktree_pk(db: Database, workspace_pk: int, key: str) -> int | None:
    rows = db.query(
        "SELECT id FROM worktrees WHERE workspace_id = ? AND key = ?", (workspace_pk, key)
    )
    return as_int(rows[0][0]) if rows else None


def roots(db: Database, workspace_pk: int) -> list[str]:
    """Every root the workspace was seen at, most recently seen first."""
    return [
        str(r)
        for (r,) in db.query(
            "SELECT root FROM workspace_roots WHERE workspace_id = ? ORDER BY last_seen DESC",
            (workspace_pk,),
        )
    ]


def uuids_at_root(db: Database, root: str) -> list[str]:
    """The workspace ids the database records at `root`, most recently seen first."""
    return [
        str(u)
        for (u,) in db.query(
            "SELECT w.uuid FROM workspace_roots r JOIN workspaces w ON w.id = r.workspace_id"
            " WHERE r.root = ? ORDER BY r.last_seen DESC",
            (root,),
        )
    ]


def root_sightings(conn: Connection, workspace_pk: int) -> list[tuple[str, str]]:
    """(root, first seen) of every root the workspace was seen at (inside a read)."""
    return [
        (str(r), str(f))
        for r, f in conn.execute(
            "SELECT root, first_seen FROM workspace_roots WHERE workspace_id = ?",
            (workspace_pk,),
        )
    ]


def worktree_roots(conn: Connection, workspace_pk: int) -> list[tuple[str, str]]:
    """(key, root) of every worktree with a recorded root not acknowledged gone (inside a
    read)."""
    return [
        (str(k), str(r))
        for k, r in conn.execute(
            "SELECT key, root FROM worktrees WHERE workspace_id = ? AND root IS NOT NULL"
            " AND gone_at IS NULL",
            (workspace_pk,),
        )
    ]


def gone_worktrees(db: Database, workspace_pk: int) -> dict[str, str]:
    """key -> when it was acknowledged gone, for the worktrees whose root went away."""
    return {
        str(k): str(g)
        for k, g in db.query(
            "SELECT key, gone_at FROM worktrees WHERE workspace_id = ? AND gone_at IS NOT NULL",
            (workspace_pk,),
        )
    }


# -- the sync key (sync/) ------------------------------------------------------------------


def _query(db: Database | Connection, sql: str, params: Bindings) -> list[Row]:
    """Rows from a Database or a bare apsw connection (a peer read through a VFS)."""
    if isinstance(db, Database):
        return db.query(sql, params)
    return db.execute(sql, params).fetchall()


def sync_key(db: Database, workspace_pk: int) -> str | None:
    rows = db.query("SELECT sync_key FROM workspaces WHERE id = ?", (workspace_pk,))
    return str(rows[0][0]) if rows and rows[0][0] is not None else None


def set_sync_key(db: Database, workspace_pk: int, key: str) -> None:
    """Record the repository the workspace syncs as (a write only when it changes)."""
    if sync_key(db, workspace_pk) == key:
        return
    with db.write() as conn:
        conn.execute("UPDATE workspaces SET sync_key = ? WHERE id = ?", (key, workspace_pk))


def synced_workspaces(db: Database | Connection, key: str) -> list[tuple[int, str]]:
    """(pk, uuid) of the workspaces of a file that sync as `key`, most recently seen first."""
    return [
        (as_int(pk), str(uuid))
        for pk, uuid in _query(
            db,
            "SELECT id, uuid FROM workspaces WHERE sync_key = ? ORDER BY last_seen DESC",
            (key,),
        )
    ]


def workspaces_last_seen(db: Database) -> list[tuple[str, str]]:
    """(workspace id, the root it was seen at last) of every workspace the database
    records, most recently seen first."""
    return [
        (str(u), str(r))
        for u, r in db.query(
            "SELECT w.uuid, (SELECT r.root FROM workspace_roots r WHERE r.workspace_id = w.id"
            " ORDER BY r.last_seen DESC LIMIT 1) FROM workspaces w ORDER BY w.last_seen DESC"
        )
    ]


def worktree_names(db: Database | Connection, workspace_pk: int) -> dict[int, tuple[str, str]]:
    """worktrees.id -> (key, name) of a workspace's worktrees."""
    return {
        as_int(pk): (str(k), str(n))
        for pk, k, n in _query(
            db, "SELECT id, key, name FROM worktrees WHERE workspace_id = ?", (workspace_pk,)
        )
    }


def move_worktree(conn: Connection, workspace_pk: int, key: str, root: str) -> None:
    """Record a worktree's new root (git knows it moved there), inside the caller's write."""
    conn.execute(
        "UPDATE worktrees SET root = ?, gone_at = NULL WHERE workspace_id = ? AND key = ?",
        (root, workspace_pk, key),
    )


def mark_gone(conn: Connection, workspace_pk: int, key: str) -> None:
    """Acknowledge that a worktree's root is gone (inside the caller's write): its rows,
    root included, stay as history."""
    conn.execute(
        "UPDATE worktrees SET gone_at = ? WHERE workspace_id = ? AND key = ? AND gone_at IS NULL",
        (utc_now_iso(), workspace_pk, key),
    )


def forget_root(conn: Connection, workspace_pk: int, root: str) -> None:
    """Drop a root the workspace was seen at and has left (moved), inside a write."""
    conn.execute(
        "DELETE FROM workspace_roots WHERE workspace_id = ? AND root = ?", (workspace_pk, root)
    )


def retire_worktree(conn: Connection, workspace_pk: int, key: str) -> bool:
    """After its entries were forgotten: remove a worktree's row (and its empty counts)
    when nothing refers to it any more, else mark it gone. True if the row went."""
    pk = conn.execute(
        "SELECT id FROM worktrees WHERE workspace_id = ? AND key = ?", (workspace_pk, key)
    ).fetchall()
    if not pk:
        return False
    wt = as_int(pk[0][0])
    used = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM journal_entries WHERE worktree_id = ?1)"
        " OR EXISTS (SELECT 1 FROM import_sources WHERE worktree_id = ?1)",
        (wt,),
    ).fetchall()[0][0]
    if used:
        mark_gone(conn, workspace_pk, key)
        return False
    conn.execute("DELETE FROM journal_counts_wt WHERE worktree_id = ?", (wt,))
    conn.execute("DELETE FROM worktrees WHERE id = ?", (wt,))
    return True


def drop_paths(db: Database) -> None:
    """Forget every path the file recorded (roots of workspaces and worktrees): the paths
    of the machine a restored file came from, meaningless here. The next open records
    where this machine stands; worktrees known only from history keep their entries."""
    with db.write() as conn:
        conn.execute("DELETE FROM workspace_roots")
        conn.execute("UPDATE worktrees SET root = NULL WHERE root IS NOT NULL")


def other_histories(conn: Connection, workspace_pk: int) -> list[tuple[str, int]]:
    """(workspace id, entries) of the other workspaces the file holds entries of (inside a
    read)."""
    return [
        (str(u), int(n))
        for u, n in conn.execute(
            "SELECT w.uuid, (SELECT count(*) FROM journal_entries e WHERE e.workspace_id = w.id)"
            " FROM workspaces w WHERE w.id <> ? ORDER BY w.uuid",
            (workspace_pk,),
        )
        if n
    ]


def unknown_keys_sql(workspace: str = "workspace_id", worktree: str = "worktree_id") -> str:
    """SQL for a row of a table with these columns: how many of its two keys name no
    workspace or worktree row (as foreign_key_check counts a row's broken keys; a NULL
    names none). Doctor's one pass over the journal (doctor/journal_pass.py)."""
    return (
        f"coalesce({workspace} NOT IN (SELECT id FROM workspaces), 0)"
        f" + coalesce({worktree} NOT IN (SELECT id FROM worktrees), 0)"
    )
