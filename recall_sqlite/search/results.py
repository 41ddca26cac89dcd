"""What searches return: hits best first, with the scope searched, how many matched in it and
how many elsewhere (as reads count them: scope.py). Frozen dataclasses: not on the start-up
path (see _record.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..scope import Elsewhere, Scope

# A summary search's scope is every summary answer's (summaries.py), re-exported here.
from ..summaries import SummaryScope as SummaryScope
from .query import ParsedQuery
from .snippets import Matched, Snippet

if TYPE_CHECKING:
    from ..journal.entry import JournalEntry
    from ..summaries import Summary


@dataclass(frozen=True)
class EntryHit:
    """One hit. Which fields matched and the snippet are worked out on first use (one
    small FTS5 statement each: most of a search's cost when done for every hit, as
    bench/RESULTS.md, row 'search: hit details' measured),
    so a host that only wants the entries does not pay for them; the store must still be
    open then."""

    entry: JournalEntry
    score: float  # higher is better: -bm25 for text, the fused score for hybrid
    text_rank: int | None = None  # 1-based place in the text ranking (hybrid)
    vector_rank: int | None = None  # 1-based place in the vector ranking (hybrid)
    describe: Callable[[], Matched] = field(
        default=lambda: (None, (), Snippet("")), repr=False, compare=False
    )

    @cached_property
    def _matched(self) -> Matched:
        return self.describe()

    @property
    def field(self) -> str | None:
        """The best matched field (FIELD_PREFERENCE order); None: found by its vector."""
        return self._matched[0]

    @property
    def fields(self) -> tuple[str, ...]:
        """Every field the query matched in."""
        return self._matched[1]

    @property
    def snippet(self) -> Snippet:
        return self._matched[2]

    def to_dict(self) -> dict[str, Any]:
        d = self.entry.to_dict()
        d.update(
            score=self.score,
            field=self.field,
            fields=list(self.fields),
            snippet=self.snippet.marked(),
            highlights=[list(h) for h in self.snippet.highlights],
            snippet_text=self.snippet.text,
            text_rank=self.text_rank,
            vector_rank=self.vector_rank,
        )
        return d


@dataclass(frozen=True)
class EntrySearchResult:
    hits: list[EntryHit]
    scope: Scope
    total: int  # deduplicated entries in scope that match the text query
    elsewhere: Elsewhere  # ... and outside it, counted as Journal.read counts
    query: ParsedQuery
    mode: str = "text"  # "text" or "hybrid"
    fusion: str | None = None

    @property
    def entries(self) -> list[JournalEntry]:
        return [h.entry for h in self.hits]

    def to_dict(self) -> dict[str, Any]:
        return _result_dict(self, "entries")


@dataclass(frozen=True)
class SummaryHit:
    """One hit; its snippet is worked out on first use, as EntryHit's."""

    summary: Summary
    score: float
    text_rank: int | None = None
    vector_rank: int | None = None
    describe: Callable[[], Snippet] = field(default=lambda: Snippet(""), repr=False, compare=False)

    @cached_property
    def snippet(self) -> Snippet:
        return self.describe()

    def to_dict(self) -> dict[str, Any]:
        d = self.summary.to_dict()
        d.update(
            score=self.score,
            snippet=self.snippet.marked(),
            highlights=[list(h) for h in self.snippet.highlights],
            snippet_text=self.snippet.text,
            text_rank=self.text_rank,
            vector_rank=self.vector_rank,
        )
        return d


@dataclass(frozen=True)
class SummarySearchResult:
    hits: list[SummaryHit]
    scope: SummaryScope
    total: int
    elsewhere: Elsewhere  # other_branches: current matches in other scopes
    query: ParsedQuery
    mode: str = "text"
    fusion: str | None = None

    @property
    def summaries(self) -> list[Summary]:
        return [h.summary for h in self.hits]

    def to_dict(self) -> dict[str, Any]:
        return _result_dict(self, "summaries")


def _result_dict(r: EntrySearchResult | SummarySearchResult, hits: str) -> dict[str, Any]:
    """A search result as JSON: its hits under `hits`, then what every search reports."""
    return {
        hits: [h.to_dict() for h in r.hits],
        "scope": r.scope.to_dict(),
        "total": r.total,
        "elsewhere": r.elsewhere.to_dict(),
        "query": r.query.to_dict(),
        "mode": r.mode,
        "fusion": r.fusion,
    }
