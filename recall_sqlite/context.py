"""What every table family needs from the store: the connection and the resolved identity,
as database keys. Table families get this object and never touch the filesystem."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from . import identity
from .db import Database


@dataclass
class StoreContext:
    db: Database
    workspace_pk: int          # workspaces.id
    workspace_uuid: str        # the workspace id people see
    worktree_pk: int           # worktrees.id of the current worktree
    worktree_key: str
    branch: str                # the current branch ("" when detached / not git)
    _worktree_keys: dict[int, str] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

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
