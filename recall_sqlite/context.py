"""What the families know of the store they work on: `StoreContext`, the connection and
the resolved identity as database keys (families get this object and never touch the
filesystem), and `WorkspaceInfo`, that identity as hosts and `recall-sqlite where` see it."""

from __future__ import annotations

from _thread import allocate_lock

from . import identity
from ._record import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .db import Database


class StoreContext:
    __slots__ = (
        "db",
        "workspace_pk",
        "workspace_uuid",
        "worktree_pk",
        "worktree_key",
        "branch",
        "_worktree_keys",
        "_lock",
    )

    def __init__(
        self,
        db: Database,
        workspace_pk: int,
        workspace_uuid: str,
        worktree_pk: int,
        worktree_key: str,
        branch: str,
    ) -> None:
        self.db = db
        self.workspace_pk = workspace_pk  # workspaces.id
        self.workspace_uuid = workspace_uuid  # the workspace id people see
        self.worktree_pk = worktree_pk  # worktrees.id of the current worktree
        self.worktree_key = worktree_key
        self.branch = branch  # current branch ("" detached / not git)
        self._worktree_keys: dict[int, str] = {}
        self._lock = allocate_lock()

    def __repr__(self) -> str:
        return (
            f"StoreContext(workspace={self.workspace_uuid!r}, "
            f"worktree={self.worktree_key!r}, branch={self.branch!r})"
        )

    def worktree_key_of(self, worktree_pk: int) -> str:
        """worktrees.key for a row's worktree_id, cached (worktrees are few and never renamed)."""
        # A dict lookup is atomic in CPython; the lock only guards the refill below.
        key = self._worktree_keys.get(worktree_pk)
        if key is not None:
            return key
        rows = identity.worktrees(self.db, self.workspace_pk)
        with self._lock:
            self._worktree_keys.update({w.pk: w.key for w in rows})
            return self._worktree_keys.get(worktree_pk, f"#{worktree_pk}")

    def worktree_pk_of(self, key: str) -> int | None:
        return identity.worktree_pk(self.db, self.workspace_pk, key)


def whole_workspace(workspace_id: str | None) -> dict[str, dict[str, object]]:
    """The `scope` and `elsewhere` of an answer about the whole workspace (where, doctor,
    forget): every worktree and every branch, so nothing lies outside it; no id where no
    store exists yet. Spelled here in scope.py's shapes (Scope.to_dict, Elsewhere.to_dict)
    because context sits below scope.py; tests/unit/answers holds the two spellings equal."""
    return {
        "scope": {
            "workspace_id": workspace_id,
            "worktree": None,
            "branch": None,
            "meaningful": False,
        },
        "elsewhere": {"other_worktrees": 0, "other_branches": 0, "other_machines": 0},
    }


class WorkspaceInfo(Frozen):
    """The resolved identity of this store: what `recall-sqlite where` prints. `id` None:
    no store exists yet (store.py unstored_workspace), so no id was minted."""

    __slots__ = (
        "id",
        "root",
        "resolved_by",
        "weak",
        "worktree",
        "worktree_name",
        "worktree_root",
        "branch",
        "db_path",
        "warnings",
    )
    id: str | None
    root: Path
    resolved_by: str
    weak: bool
    worktree: str
    worktree_name: str
    worktree_root: Path
    branch: str
    db_path: Path
    warnings: tuple[str, ...]

    def __init__(
        self,
        *,
        id: str | None,
        root: Path,
        resolved_by: str,  # noqa: A002 - the field
        weak: bool,
        worktree: str,
        worktree_name: str,
        worktree_root: Path,
        branch: str,
        db_path: Path,
        warnings: tuple[str, ...],
    ) -> None:
        self._set(
            id=id,
            root=root,
            resolved_by=resolved_by,
            weak=weak,
            worktree=worktree,
            worktree_name=worktree_name,
            worktree_root=worktree_root,
            branch=branch,
            db_path=db_path,
            warnings=warnings,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.id,
            "workspace_root": str(self.root),
            "resolved_by": self.resolved_by,
            "weak": self.weak,
            "worktree": self.worktree,
            "worktree_name": self.worktree_name,
            "worktree_root": str(self.worktree_root),
            "branch": self.branch,
            "db_path": str(self.db_path),
            "warnings": list(self.warnings),
            **whole_workspace(self.id),
        }


class WorktreeInfo(Frozen):
    """A worktree the workspace records: its key, name and root (None: known only from an
    imported file), whether that root is a directory now, how many sessions reads show in
    it and how many versions it stores, and whether it is the current one."""

    __slots__ = ("key", "name", "root", "root_exists", "entries", "versions", "current")
    key: str
    name: str
    root: str | None
    root_exists: bool
    entries: int
    versions: int
    current: bool

    def __init__(
        self,
        key: str,
        name: str,
        root: str | None,
        root_exists: bool,
        entries: int,
        versions: int,
        current: bool,
    ) -> None:
        self._set(
            key=key,
            name=name,
            root=root,
            root_exists=root_exists,
            entries=entries,
            versions=versions,
            current=current,
        )

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}
