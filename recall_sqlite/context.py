"""What every table family needs from the store: the connection and the resolved identity,
as database keys. Table families get this object and never touch the filesystem."""

from __future__ import annotations

from _thread import allocate_lock

from . import identity

TYPE_CHECKING = False
if TYPE_CHECKING:
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
