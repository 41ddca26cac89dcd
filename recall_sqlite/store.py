"""The store: one connection, the resolved identity, and the table families on it. This
module only composes; each family owns its tables."""

from __future__ import annotations

import os
from pathlib import Path

from . import identity
from . import workspace as ws
from ._record import Frozen
from .context import StoreContext
from .db import Database
from .errors import WorkspaceError
from .journal.family import Journal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .cursors import Cursors
    from .legacy import Legacy
    from .summaries import Summaries
    from .vectors.family import Vectors

DB_ENV = "RECALL_SQLITE_DB"


class WorkspaceInfo(Frozen):
    """The resolved identity of this store: what `recall-sqlite where` prints."""

    __slots__ = ("id", "root", "resolved_by", "weak", "worktree", "worktree_name",
                 "worktree_root", "branch", "db_path", "warnings")
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

    def __init__(self, *, id: str, root: Path, resolved_by: str,  # noqa: A002 - the field
                 weak: bool, worktree: str, worktree_name: str, worktree_root: Path,
                 branch: str, db_path: Path, warnings: tuple[str, ...]) -> None:
        self._set(id=id, root=root, resolved_by=resolved_by, weak=weak, worktree=worktree,
                  worktree_name=worktree_name, worktree_root=worktree_root, branch=branch,
                  db_path=db_path, warnings=warnings)

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
        from .vectors.family import Vectors
        family: Vectors = self._family("vectors", Vectors)
        return family

    @property
    def legacy(self) -> Legacy:
        from .legacy import Legacy
        # The root this store was opened at: after the project moved, a read-only open
        # cannot record the new root, and the legacy bookkeeping is relative to it.
        family: Legacy = self._family("legacy", lambda ctx: Legacy(ctx, self.workspace.root))
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
        reg = identity.register(db, identity.Sighting(
            uuid, str(resolved.root), resolved.worktree, resolved.worktree_name,
            str(resolved.worktree_root)))
    except BaseException:
        db.close()
        raise
    warnings = [
        f"workspace id {uuid} is also recorded at {other}, which still carries it: "
        "a copied workspace? its history is kept apart only by worktree"
        for other in reg.other_roots if _carries_id(Path(other), uuid)
    ]
    ctx = StoreContext(db, reg.workspace_pk, uuid, reg.worktree_pk, resolved.worktree,
                       resolved.branch)
    info = WorkspaceInfo(
        id=uuid, root=resolved.root, resolved_by=resolved.resolved_by, weak=resolved.weak,
        worktree=resolved.worktree, worktree_name=resolved.worktree_name,
        worktree_root=resolved.worktree_root, branch=resolved.branch, db_path=path,
        warnings=tuple(resolved.warnings) + tuple(warnings),
    )
    return Store(ctx, info)


def _carries_id(root: Path, uuid: str) -> bool:
    try:
        return root.is_dir() and ws.read_workspace_id(root) == uuid
    except (WorkspaceError, OSError):
        return False
