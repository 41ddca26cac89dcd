"""What the vector family returns. Frozen dataclasses, no numpy: a host can inspect results
(and this module can be imported) without loading numpy."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from ..scope import Elsewhere, Scope
from .owners import Owner, OwnerKind


@dataclass(frozen=True)
class PutResult:
    model: str
    dim: int | None  # None only for an empty batch of a model not stored yet
    added: int  # (owner, model) pairs that had no vector before
    replaced: int  # pairs whose vector was overwritten (or re-stored unchanged)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "dim": self.dim,
            "added": self.added,
            "replaced": self.replaced,
        }


@dataclass(frozen=True)
class SearchScope:
    """A vector search's scope: the journal's (`read_scope`, what a read with the same
    worktree and branch reports: scope.py) and what only vectors have, the model, the owner
    kinds and whether hidden versions count."""

    workspace_id: str
    model: str
    worktree: str | None  # None = every worktree (entries); summaries have none
    branch: str | None  # None = every branch; summaries without one only then
    kinds: tuple[OwnerKind, ...]
    include_hidden: bool  # False = only the versions journal reads show

    @property
    def read_scope(self) -> Scope:
        return Scope(self.workspace_id, self.worktree, self.branch)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.read_scope.to_dict(),
            "model": self.model,
            "kinds": list(self.kinds),
            "include_hidden": self.include_hidden,
        }

    def describe(self) -> str:
        hidden = ", hidden versions too" if self.include_hidden else ""
        return f"model {self.model}, {'+'.join(self.kinds)}, {self.read_scope.describe()}{hidden}"


@dataclass(frozen=True)
class Hit:
    owner: Owner
    score: float  # cosine similarity in [-1, 1], exact (float64)
    branch: str | None
    worktree: str | None  # entries only

    def to_dict(self) -> dict[str, Any]:
        return {
            "owner": self.owner.to_dict(),
            "score": self.score,
            "branch": self.branch,
            "worktree": self.worktree,
        }


@dataclass(frozen=True)
class SearchResult:
    """Hits best first, the scope searched, how many vectors it holds and how many matching
    vectors lie elsewhere, counted as journal reads count entries (scope.py): the shown
    versions in other worktrees on the scope's branch, and in this worktree on other
    branches (a summary of another branch, or a workspace-wide one when a branch is asked
    for, counts as another branch's)."""

    hits: list[Hit]
    scope: SearchScope
    searched: int  # vectors in scope
    elsewhere: Elsewhere

    @property
    def outside(self) -> int:
        """Deprecated: `elsewhere.total`."""
        warnings.warn(
            "SearchResult.outside is deprecated; use elsewhere (elsewhere.total)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.elsewhere.total

    def to_dict(self) -> dict[str, Any]:
        return {
            "hits": [h.to_dict() for h in self.hits],
            "scope": self.scope.to_dict(),
            "searched": self.searched,
            "elsewhere": self.elsewhere.to_dict(),
        }


@dataclass(frozen=True)
class CacheInfo:
    limit_bytes: int
    bytes: int
    matrices: int
    rows: int
    builds: int  # full matrix reads from SQLite
    refreshes: int  # catch-ups from the change log
    hits: int  # searches that found their matrix current

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)
