"""What journal calls return. Every read result says its scope and how many matching
entries lie outside it, so a partial answer is never silent. (Records, not dataclasses:
see _record.py.)"""

from __future__ import annotations

from .._record import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .carry import CarryReport
    from .entry import JournalEntry


class Scope(Frozen):
    __slots__ = ("workspace_id", "worktree", "branch", "meaningful")
    workspace_id: str
    worktree: str | None  # None = every worktree of the workspace
    branch: str | None  # None = every branch
    meaningful: bool

    def __init__(
        self, workspace_id: str, worktree: str | None, branch: str | None, meaningful: bool = False
    ) -> None:
        self._set(
            workspace_id=workspace_id, worktree=worktree, branch=branch, meaningful=meaningful
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.workspace_id,
            "worktree": self.worktree,
            "branch": self.branch,
            "meaningful": self.meaningful,
        }

    def describe(self) -> str:
        where = "all worktrees" if self.worktree is None else f"worktree {self.worktree}"
        branch = "all branches" if self.branch is None else f"branch {self.branch or '(none)'}"
        kind = ", meaningful only" if self.meaningful else ""
        return f"{where}, {branch}{kind}"


class Elsewhere(Frozen):
    """Matching entries outside the scope: never a silent partial answer."""

    __slots__ = ("other_worktrees", "other_branches")
    other_worktrees: int
    other_branches: int

    def __init__(self, other_worktrees: int = 0, other_branches: int = 0) -> None:
        self._set(other_worktrees=other_worktrees, other_branches=other_branches)

    def to_dict(self) -> dict[str, int]:
        return {"other_worktrees": self.other_worktrees, "other_branches": self.other_branches}

    @property
    def total(self) -> int:
        return self.other_worktrees + self.other_branches


class ReadResult(Frozen):
    __slots__ = ("entries", "scope", "total", "elsewhere")
    entries: list[JournalEntry]
    scope: Scope
    total: int  # deduplicated entries matching in scope (>= len(entries))
    elsewhere: Elsewhere

    def __init__(
        self, entries: list[JournalEntry], scope: Scope, total: int, elsewhere: Elsewhere
    ) -> None:
        self._set(entries=entries, scope=scope, total=total, elsewhere=elsewhere)

    @property
    def entry(self) -> JournalEntry | None:
        return self.entries[0] if self.entries else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "entries": [e.to_dict() for e in self.entries],
            "scope": self.scope.to_dict(),
            "total": self.total,
            "elsewhere": self.elsewhere.to_dict(),
        }


class PendingResult(Frozen):
    __slots__ = ("pending", "scope", "sessions_considered", "elsewhere")
    pending: list[str]
    scope: Scope
    sessions_considered: int
    elsewhere: Elsewhere

    def __init__(
        self, pending: list[str], scope: Scope, sessions_considered: int, elsewhere: Elsewhere
    ) -> None:
        self._set(
            pending=pending,
            scope=scope,
            sessions_considered=sessions_considered,
            elsewhere=elsewhere,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "pending": list(self.pending),
            "scope": self.scope.to_dict(),
            "sessions_considered": self.sessions_considered,
            "elsewhere": self.elsewhere.to_dict(),
        }


class AppendResult(Frozen):
    __slots__ = ("id", "created", "seq")
    id: str
    created: bool  # False: identical content was already stored
    seq: int

    def __init__(self, id: str, created: bool, seq: int) -> None:  # noqa: A002 - the field
        self._set(id=id, created=created, seq=seq)


class WriteResult(Frozen):
    __slots__ = ("id", "created", "entry", "carry", "explicit_next_steps")
    id: str
    created: bool
    entry: JournalEntry
    carry: CarryReport
    explicit_next_steps: list[str]

    def __init__(
        self,
        id: str,
        created: bool,
        entry: JournalEntry,  # noqa: A002
        carry: CarryReport,
        explicit_next_steps: list[str],
    ) -> None:
        self._set(
            id=id,
            created=created,
            entry=entry,
            carry=carry,
            explicit_next_steps=explicit_next_steps,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created": self.created,
            "entry": self.entry.to_dict(),
            "carry": self.carry.to_dict(),
            "explicit_next_steps": self.explicit_next_steps,
        }
