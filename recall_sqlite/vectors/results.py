"""What the vector family returns. Frozen dataclasses, no numpy: a host can inspect results
(and this module can be imported) without loading numpy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
    workspace_id: str
    model: str
    worktree: str | None  # None = every worktree (entries); summaries have none
    branch: str | None  # None = every branch; summaries without one only then
    kinds: tuple[OwnerKind, ...]
    include_hidden: bool  # False = only the versions journal reads show

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.workspace_id,
            "model": self.model,
            "worktree": self.worktree,
            "branch": self.branch,
            "kinds": list(self.kinds),
            "include_hidden": self.include_hidden,
        }

    def describe(self) -> str:
        where = "all worktrees" if self.worktree is None else f"worktree {self.worktree}"
        branch = "all branches" if self.branch is None else f"branch {self.branch or '(none)'}"
        hidden = ", hidden versions too" if self.include_hidden else ""
        return f"model {self.model}, {'+'.join(self.kinds)}, {where}, {branch}{hidden}"


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
    hits: list[Hit]
    scope: SearchScope
    searched: int  # vectors in scope
    outside: int  # vectors of this model in the workspace the scope left out

    def to_dict(self) -> dict[str, Any]:
        return {
            "hits": [h.to_dict() for h in self.hits],
            "scope": self.scope.to_dict(),
            "searched": self.searched,
            "outside": self.outside,
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
