"""The store: one connection, the resolved identity, and the table families on it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import workspace as ws
from .context import StoreContext
from .db import Database, now_us, scalar, utc_now_iso
from .errors import StoreError, WorkspaceError
from .journal import Journal
from .timestamps import parse_timestamp

if TYPE_CHECKING:
    from .cursors import Cursors
    from .legacy import Legacy
    from .summaries import Summaries
    from .vectors import Vectors

DB_ENV = "RECALL_SQLITE_DB"
# How stale a root's last_seen may get before an open refreshes it: keeps opens read-only
# in the common case, so a burst of hook processes does not queue on the write lock.
_SEEN_REFRESH_US = 3_600 * 1_000_000


@dataclass(frozen=True)
class WorkspaceInfo:
    """The resolved identity of this store: what `recall-sqlite where` prints."""

    id: str
    root: Path
    resolved_by: str
    weak: bool
    worktree: str
    worktree_name: str
    worktree_root: Path
    branch: str
    db_path: Path
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.id, "workspace_root": str(self.root),
            "resolved_by": self.resolved_by, "weak": self.weak, "worktree": self.worktree,
            "worktree_name": self.worktree_name, "worktree_root": str(self.worktree_root),
            "branch": self.branch, "db_path": str(self.db_path), "warnings": list(self.warnings),
        }


class Store:
    def __init__(self, ctx: StoreContext, info: WorkspaceInfo) -> None:
        self._ctx = ctx
        self.workspace = info
        self.journal = Journal(ctx)
        self._families: dict[str, Any] = {}

    @property
    def db(self) -> Database:
        return self._ctx.db

    @property
    def context(self) -> StoreContext:
        return self._ctx

    def _family(self, name: str, factory: Any) -> Any:
        family = self._families.get(name)
        if family is None:
            family = self._families[name] = factory(self._ctx)
        return family

    @property
    def summaries(self) -> Summaries:
        from .summaries import Summaries
        family: Summaries = self._family("summaries", Summaries)
        return family

    @property
    def cursors(self) -> Cursors:
        from .cursors import Cursors
        family: Cursors = self._family("cursors", Cursors)
        return family

    @property
    def vectors(self) -> Vectors:
        # numpy is imported by vectors.py only, and only when a host asks for vectors.
        from .vectors import Vectors
        family: Vectors = self._family("vectors", Vectors)
        return family

    @property
    def legacy(self) -> Legacy:
        from .legacy import Legacy
        family: Legacy = self._family("legacy", Legacy)
        return family

    def close(self) -> None:
        self._ctx.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def resolve_db_path(root: Path, db_path: str | os.PathLike[str] | None) -> Path:
    if db_path is not None:
        return Path(db_path).expanduser().absolute()
    env = os.environ.get(DB_ENV)
    if env:
        return Path(env).expanduser().absolute()
    return ws.default_db_path(root)


def open_store(
    cwd: str | os.PathLike[str] | None = None,
    *,
    db_path: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    read_only: bool = False,
) -> Store:
    """Open the store of the workspace that contains `cwd` (default: the current
    directory). Any directory of the workspace gives the same store and workspace id."""
    resolved = ws.resolve(cwd, root=root)
    path = resolve_db_path(resolved.root, db_path)
    if read_only:
        uuid = ws.read_workspace_id(resolved.root)
        if uuid is None:
            raise WorkspaceError(f"{resolved.root} has no workspace id yet (opened read-only)")
    else:
        uuid = ws.ensure_workspace_id(resolved.root)
        if db_path is None and not os.environ.get(DB_ENV):
            ws.ensure_private_dir(path.parent)
    db = Database(path, read_only=read_only)
    try:
        workspace_pk, worktree_pk, warnings = _register(db, resolved, uuid)
    except BaseException:
        db.close()
        raise
    ctx = StoreContext(db, workspace_pk, uuid, worktree_pk, resolved.worktree, resolved.branch)
    info = WorkspaceInfo(
        id=uuid, root=resolved.root, resolved_by=resolved.resolved_by, weak=resolved.weak,
        worktree=resolved.worktree, worktree_name=resolved.worktree_name,
        worktree_root=resolved.worktree_root, branch=resolved.branch, db_path=path,
        warnings=tuple(resolved.warnings) + tuple(warnings),
    )
    return Store(ctx, info)


def _register(db: Database, w: ws.Workspace, uuid: str) -> tuple[int, int, list[str]]:
    """Record the workspace, this root and this worktree; report a copied workspace (one id
    seen at another root that still carries the same id) instead of merging silently."""
    root, stale_before = str(w.root), now_us() - _SEEN_REFRESH_US
    with db.read() as conn:
        rows: list[tuple[Any, ...]] = conn.execute(
            "SELECT w.id, t.id, r.last_seen, t.last_seen FROM workspaces w"
            " LEFT JOIN workspace_roots r ON r.workspace_id = w.id AND r.root = ?"
            " LEFT JOIN worktrees t ON t.workspace_id = w.id AND t.key = ?"
            " WHERE w.uuid = ?", (root, w.worktree, uuid)).fetchall()
        others = [r for (r,) in conn.execute(
            "SELECT r.root FROM workspace_roots r JOIN workspaces w ON w.id = r.workspace_id"
            " WHERE w.uuid = ? AND r.root <> ?", (uuid, root))]
    warnings = [
        f"workspace id {uuid} is also recorded at {other}, which still carries it: "
        "a copied workspace? its history is kept apart only by worktree"
        for other in others if _carries_id(Path(other), uuid)
    ]
    fresh = rows and rows[0][1] is not None and rows[0][2] is not None
    if (fresh and parse_timestamp(rows[0][2]) > stale_before
            and parse_timestamp(rows[0][3]) > stale_before):
        return int(rows[0][0]), int(rows[0][1]), warnings
    if db.read_only:
        if rows and rows[0][1] is not None:
            return int(rows[0][0]), int(rows[0][1]), warnings
        raise StoreError(f"{db.path} does not know this workspace/worktree yet (opened read-only)")
    now = utc_now_iso()
    with db.write() as conn:
        conn.execute(
            "INSERT INTO workspaces (uuid, first_seen, last_seen) VALUES (?, ?, ?)"
            " ON CONFLICT (uuid) DO UPDATE SET last_seen = excluded.last_seen", (uuid, now, now))
        workspace_pk = int(scalar(conn, "SELECT id FROM workspaces WHERE uuid = ?", (uuid,)))
        conn.execute(
            "INSERT INTO workspace_roots (workspace_id, root, first_seen, last_seen)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, root)"
            " DO UPDATE SET last_seen = excluded.last_seen", (workspace_pk, root, now, now))
        conn.execute(
            "INSERT INTO worktrees (workspace_id, key, name, root, first_seen, last_seen)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, key)"
            " DO UPDATE SET last_seen = excluded.last_seen, root = excluded.root",
            (workspace_pk, w.worktree, w.worktree_name, str(w.worktree_root), now, now))
        worktree_pk = int(scalar(
            conn, "SELECT id FROM worktrees WHERE workspace_id = ? AND key = ?",
            (workspace_pk, w.worktree)))
    return workspace_pk, worktree_pk, warnings


def _carries_id(root: Path, uuid: str) -> bool:
    try:
        return root.is_dir() and ws.read_workspace_id(root) == uuid
    except (WorkspaceError, OSError):
        return False
