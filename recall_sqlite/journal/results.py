"""What journal calls return. Every read result says its scope and how many matching
entries lie outside it, so a partial answer is never silent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .carry import CarryReport
from .entry import JournalEntry


@dataclass(frozen=True)
class Scope:
    workspace_id: str
    worktree: str | None        # None = every worktree of the workspace
    branch: str | None          # None = every branch
    meaningful: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"workspace_id": self.workspace_id, "worktree": self.worktree,
                "branch": self.branch, "meaningful": self.meaningful}

    def describe(self) -> str:
        where = "all worktrees" if self.worktree is None else f"worktree {self.worktree}"
        branch = "all branches" if self.branch is None else f"branch {self.branch or '(none)'}"
        kind = ", meaningful only" if self.meaningful else ""
        return f"{where}, {branch}{kind}"


@dataclass(frozen=True)
class Elsewhere:
    """Matching entries outside the scope: never a silent partial answer."""

    other_worktrees: int = 0
    other_branches: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"other_worktrees": self.other_worktrees, "other_branches": self.other_branches}

    @property
    def total(self) -> int:
        return self.other_worktrees + self.other_branches


@dataclass(frozen=True)
class ReadResult:
    entries: list[JournalEntry]
    scope: Scope
    total: int                  # deduplicated entries matching in scope (>= len(entries))
    elsewhere: Elsewhere

    @property
    def entry(self) -> JournalEntry | None:
        return self.entries[0] if self.entries else None

    def to_dict(self) -> dict[str, Any]:
        return {"entries": [e.to_dict() for e in self.entries], "scope": self.scope.to_dict(),
                "total": self.total, "elsewhere": self.elsewhere.to_dict()}


@dataclass(frozen=True)
class PendingResult:
    pending: list[str]
    scope: Scope
    sessions_considered: int
    elsewhere: Elsewhere

    def to_dict(self) -> dict[str, Any]:
        return {"pending": list(self.pending), "scope": self.scope.to_dict(),
                "sessions_considered": self.sessions_considered,
                "elsewhere": self.elsewhere.to_dict()}


@dataclass(frozen=True)
class AppendResult:
    id: str
    created: bool               # False: identical content was already stored
    seq: int


@dataclass(frozen=True)
class WriteResult:
    id: str
    created: bool
    entry: JournalEntry
    carry: CarryReport
    explicit_next_steps: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "created": self.created, "entry": self.entry.to_dict(),
                "carry": self.carry.to_dict(), "explicit_next_steps": self.explicit_next_steps}
