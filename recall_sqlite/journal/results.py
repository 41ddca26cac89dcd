"""What journal calls return. Every result says its scope and how many matching entries
lie outside it (scope.py), so a partial answer is never silent: a read the scope it read,
a write the worktree and branch it wrote to, with what a read there counts elsewhere.
(Records, not dataclasses: see _record.py.)"""

from __future__ import annotations

from .._record import Frozen
from ..scope import Elsewhere, Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, Protocol

    from .carry import CarryReport
    from .entry import JournalEntry

    # What `Journal.search` returns, as the family knows it: search/ sits above the
    # families and is composed in (ARCHITECTURE.md, "Search is composed"), so the family
    # names the contract and search/results.py's classes meet it (search/journal.py has
    # mypy check that they do).

    class FoundSnippet(Protocol):
        """A hit's snippet: the text and its matched spans (search/snippets.py)."""

        @property
        def text(self) -> str: ...
        @property
        def highlights(self) -> tuple[tuple[int, int], ...]: ...
        def marked(
            self,
            open_: str = ...,
            close: str = ...,
            escape: Callable[[str], str] | None = ...,
        ) -> str: ...
        def to_dict(self) -> dict[str, Any]: ...

    class FoundQuery(Protocol):
        """A typed query as the search read it (search/query.py)."""

        @property
        def text(self) -> str: ...
        @property
        def terms(self) -> Sequence[object]: ...
        @property
        def truncated(self) -> bool: ...
        def to_dict(self) -> dict[str, Any]: ...

    class Found(Protocol):
        """What every search hit has (search/results.py): its score, its places in the text
        and vector rankings, its snippet."""

        @property
        def score(self) -> float: ...
        @property
        def text_rank(self) -> int | None: ...
        @property
        def vector_rank(self) -> int | None: ...
        @property
        def snippet(self) -> FoundSnippet: ...
        def to_dict(self) -> dict[str, Any]: ...

    class EntryFound(Found, Protocol):
        """One entry hit (search/results.py EntryHit)."""

        @property
        def entry(self) -> JournalEntry: ...
        @property
        def field(self) -> str | None: ...
        @property
        def fields(self) -> tuple[str, ...]: ...

    class Searched(Protocol):
        """What every search answer has (search/results.py): how many matched in its scope
        and elsewhere, the query as read, how it ranked."""

        @property
        def total(self) -> int: ...
        @property
        def elsewhere(self) -> Elsewhere: ...
        @property
        def query(self) -> FoundQuery: ...
        @property
        def mode(self) -> str: ...
        @property
        def fusion(self) -> str | None: ...
        def to_dict(self) -> dict[str, Any]: ...

    class EntrySearch(Searched, Protocol):
        """A journal search's answer (search/results.py EntrySearchResult): its hits best
        first and the scope searched."""

        @property
        def hits(self) -> Sequence[EntryFound]: ...
        @property
        def scope(self) -> Scope: ...
        @property
        def entries(self) -> list[JournalEntry]: ...


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
    __slots__ = ("id", "created", "entry", "carry", "explicit_next_steps", "scope", "elsewhere")
    id: str
    created: bool
    entry: JournalEntry
    carry: CarryReport
    explicit_next_steps: list[str]
    scope: Scope  # the worktree and branch written (every entry, meaningful or not)
    elsewhere: Elsewhere  # what a read of that scope counted outside it, after the write

    def __init__(
        self,
        id: str,
        created: bool,
        entry: JournalEntry,  # noqa: A002
        carry: CarryReport,
        explicit_next_steps: list[str],
        scope: Scope,
        elsewhere: Elsewhere,
    ) -> None:
        self._set(
            id=id,
            created=created,
            entry=entry,
            carry=carry,
            explicit_next_steps=explicit_next_steps,
            scope=scope,
            elsewhere=elsewhere,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created": self.created,
            "entry": self.entry.to_dict(),
            "carry": self.carry.to_dict(),
            "explicit_next_steps": self.explicit_next_steps,
            "scope": self.scope.to_dict(),
            "elsewhere": self.elsewhere.to_dict(),
        }
