"""Full-text search of the journal and of summaries (FTS5), scoped like reads, optionally
fused with the vector ranking of the same scope.

* The indexes (`journal_fts`, `summaries_fts`) and the triggers that keep them right are in
  schema.sql; this module turns what a person typed into an FTS5 expression, runs the
  scoped statement and builds results.
* Scope is exactly `Journal.read`'s: the current worktree's heads (`head_wt`) by default,
  the workspace's (`head_ws`) with `all_worktrees`, optionally one branch and meaningful
  entries only; `total` counts the matches in scope and `elsewhere` the matches a read
  would report outside it, from the same statement (one pass over the matches).
* Any text is a query (`parse_query`): it is cut into words, each quoted for FTS5, so no
  input is FTS syntax. Double-quoted phrases and a trailing `*` (prefix) keep their
  meaning; AND/OR/NOT/NEAR, `-`, `:`, `^`, parentheses and quotes that do not pair are
  words or separators. Every word must match (implicit AND).
* Hybrid (`vector=`, `model=`): the text ranking and `Vectors.search`'s ranking of the same
  scope are fused (reciprocal-rank fusion by default; see FUSIONS). numpy is imported only
  then, through vectors.py.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, Literal

from .checks import require_text
from .errors import InvalidInputError
from .journal.entry import JournalEntry
from .journal.family import ENTRY_COLUMNS
from .journal.results import Elsewhere, Scope

if TYPE_CHECKING:
    from .context import StoreContext
    from .journal import Journal
    from .summaries import BranchFilter, Summaries, Summary

# The entry index's columns, in its order (schema.sql journal_fts).
FIELDS: tuple[str, ...] = ("focus", "done", "decisions", "next_steps", "files_modified")
# Which matched field a hit names first: the order of the bm25 weights in schema.sql.
FIELD_PREFERENCE: tuple[str, ...] = ("focus", "decisions", "done", "next_steps", "files_modified")
# Past this many words a query is cut (an AND of more words matches nearly nothing and
# each costs a doclist read); the result says so.
MAX_TERMS = 32
SNIPPET_TOKENS = 12
# Candidates each ranking contributes to a fusion: deep enough that an item ranked low by
# one side and high by the other still meets itself.
FUSION_DEPTH = 50
RRF_K = 60

Fusion = Literal["rrf", "combsum"]


# -- the query ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    text: str  # the words as typed (a phrase may hold several)
    phrase: bool = False  # typed in double quotes: the words must be adjacent, in order
    prefix: bool = False  # a trailing `*`: the last word is a prefix

    def fts(self) -> str:
        return '"' + self.text.replace('"', '""') + '"' + ("*" if self.prefix else "")

    def __str__(self) -> str:
        body = f'"{self.text}"' if self.phrase else self.text
        return body + ("*" if self.prefix else "")


@dataclass(frozen=True)
class ParsedQuery:
    """What a typed query was read as: `terms`, every one of which must match, and the
    FTS5 expression built from them ('' when nothing searchable was typed)."""

    text: str  # as typed, controls and lone surrogates made spaces
    terms: tuple[Term, ...]
    truncated: bool = False  # more than MAX_TERMS words were typed; the rest were dropped

    @property
    def match(self) -> str:
        return " ".join(t.fts() for t in self.terms)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "terms": [str(t) for t in self.terms],
            "match": self.match,
            "truncated": self.truncated,
        }


def _searchable(text: str) -> bool:
    """Could the FTS5 tokenizer find a word in `text`? Letters and digits, or anything
    outside ASCII (the tokenizer decides those; an empty phrase is harmless in an AND)."""
    return any(c.isalnum() or ord(c) > 127 for c in text)


def _clean(text: str) -> str:
    # Controls (NUL ends an FTS5 string early: "unterminated string") and lone surrogates
    # (not encodable as UTF-8) become spaces; they are separators to the tokenizer anyway.
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cs") else c for c in text)


def parse_query(text: object) -> ParsedQuery:
    """Read any text as words to search for. Never raises for the text's content; only a
    non-string is an error."""
    if not isinstance(text, str):
        raise InvalidInputError(f"a search query must be a string, got {type(text).__name__}")
    s = _clean(text)
    terms: list[Term] = []
    seen: set[tuple[str, bool, bool]] = set()
    truncated = False

    def add(body: str, phrase: bool, prefix: bool) -> None:
        nonlocal truncated
        body = body.strip()
        if not _searchable(body):
            return
        key = (body.casefold(), phrase, prefix)
        if key in seen:
            return
        if len(terms) >= MAX_TERMS:
            truncated = True
            return
        seen.add(key)
        terms.append(Term(body, phrase, prefix))

    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == '"':
            close = s.find('"', i + 1)
            if close > i:
                prefix = close + 1 < n and s[close + 1] == "*"
                add(s[i + 1 : close], " " in s[i + 1 : close].strip(), prefix)
                i = close + (2 if prefix else 1)
                continue
            i += 1  # a quote that does not pair is punctuation
            continue
        if c.isspace() or c in "()":
            i += 1
            continue
        j = i
        while j < n and not (s[j].isspace() or s[j] in '()"'):
            j += 1
        chunk = s[i:j]
        stripped = chunk.rstrip("*")
        add(stripped, False, len(stripped) < len(chunk))
        i = j
    # The cleaned text: a lone surrogate kept here would make JSON output invalid UTF-8.
    return ParsedQuery(s, tuple(terms), truncated)


# -- snippets -------------------------------------------------------------------------------

# Marker pairs for FTS5's snippet(): the first pair absent from a hit's own text is used,
# so a marker is never confused with text.
_MARKERS = (("\x02", "\x03"), ("\ue000", "\ue001"), ("\U000ffffd", "\U0010fffd"))


@dataclass(frozen=True)
class Snippet:
    """A short piece of the matching field with the matched words' spans (character
    offsets into `text`)."""

    text: str
    highlights: tuple[tuple[int, int], ...] = ()

    def marked(self, open_: str = "**", close: str = "**") -> str:
        out, last = [], 0
        for a, b in self.highlights:
            out += [self.text[last:a], open_, self.text[a:b], close]
            last = b
        out.append(self.text[last:])
        return "".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "highlights": [list(h) for h in self.highlights]}


def _unmark(raw: str, open_: str, close: str) -> Snippet:
    text: list[str] = []
    spans: list[tuple[int, int]] = []
    pos, start = 0, -1
    for c in raw:
        if c == open_:
            start = pos
        elif c == close:
            if start >= 0:
                spans.append((start, pos))
            start = -1
        elif c == "\n":  # list items are lines in the index: shown on one line
            text.append(" / ")
            pos += 3
        else:
            text.append(c)
            pos += 1
    return Snippet("".join(text), tuple(spans))


def _markers_for(texts: Sequence[str]) -> tuple[str, str]:
    for pair in _MARKERS:
        if not any(pair[0] in t or pair[1] in t for t in texts):
            return pair
    return _MARKERS[-1]  # all three pairs in one entry: highlights may be off, text is not


def _plain_snippet(text: str, limit: int = 100) -> Snippet:
    """For a hit the text index did not match (found by its vector only)."""
    flat = " / ".join(line for line in text.splitlines() if line.strip())
    return Snippet(flat if len(flat) <= limit else flat[:limit].rstrip() + "…")


# -- results --------------------------------------------------------------------------------


Matched = tuple["str | None", "tuple[str, ...]", "Snippet"]


@dataclass(frozen=True)
class EntryHit:
    """One hit. Which fields matched and the snippet are worked out on first use (one
    small FTS5 statement each, ~40 µs: most of a search's cost when done for every hit),
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
        return {
            "entries": [h.to_dict() for h in self.hits],
            "scope": self.scope.to_dict(),
            "total": self.total,
            "elsewhere": self.elsewhere.to_dict(),
            "query": self.query.to_dict(),
            "mode": self.mode,
            "fusion": self.fusion,
        }


@dataclass(frozen=True)
class SummaryScope:
    workspace_id: str
    branch: str | None  # with all_branches False: None = workspace-wide summaries
    all_branches: bool
    kind: str | None
    include_superseded: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.workspace_id,
            "branch": self.branch,
            "all_branches": self.all_branches,
            "kind": self.kind,
            "include_superseded": self.include_superseded,
        }

    def describe(self) -> str:
        if self.all_branches:
            where = "every scope"
        elif self.branch is None:
            where = "workspace-wide summaries"
        else:
            where = f"branch {self.branch or '(none)'}"
        kind = f", kind {self.kind!r}" if self.kind is not None else ""
        old = ", superseded too" if self.include_superseded else ", current only"
        return where + kind + old


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
        return {
            "summaries": [h.to_dict() for h in self.hits],
            "scope": self.scope.to_dict(),
            "total": self.total,
            "elsewhere": self.elsewhere.to_dict(),
            "query": self.query.to_dict(),
            "mode": self.mode,
            "fusion": self.fusion,
        }


# -- fusion ---------------------------------------------------------------------------------


@dataclass
class _Candidate:
    key: int
    text_rank: int | None = None
    text_score: float | None = None  # -bm25, higher is better
    vector_rank: int | None = None
    vector_score: float | None = None  # cosine
    fused: float = 0.0
    order: tuple[Any, ...] = field(default=())


def fuse_rrf(cands: Sequence[_Candidate]) -> None:
    """Reciprocal-rank fusion (Cormack et al. 2009): sum of 1 / (60 + rank). Needs no
    calibration between bm25 and cosine, which have nothing in common but their order."""
    for c in cands:
        c.fused = sum(1.0 / (RRF_K + r) for r in (c.text_rank, c.vector_rank) if r is not None)


def fuse_combsum(cands: Sequence[_Candidate], text_weight: float = 0.5) -> None:
    """Min-max normalised scores, summed with weights (CombSUM); a missing score is 0."""

    def norm(values: list[float | None]) -> list[float]:
        present = [v for v in values if v is not None]
        if not present:
            return [0.0] * len(values)
        lo, hi = min(present), max(present)
        span = hi - lo
        return [0.0 if v is None else (1.0 if span == 0 else (v - lo) / span) for v in values]

    t = norm([c.text_score for c in cands])
    v = norm([c.vector_score for c in cands])
    for c, a, b in zip(cands, t, v, strict=True):
        c.fused = text_weight * a + (1 - text_weight) * b


FUSIONS: dict[str, Callable[[Sequence[_Candidate]], None]] = {
    "rrf": fuse_rrf,
    "combsum": fuse_combsum,
}


def _check_hybrid(vector: object, model: object, fusion: object) -> None:
    if vector is None:
        if model is not None:
            raise InvalidInputError("model is given without a vector: give both or neither")
        return
    if model is None:
        raise InvalidInputError("a vector needs its model name (model=...)")
    if fusion not in FUSIONS:
        raise InvalidInputError(f"fusion must be one of {sorted(FUSIONS)}, got {fusion!r}")


def _check_n(n: object) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise InvalidInputError(f"n must be a non-negative integer, got {n!r}")
    return n


# -- the journal ----------------------------------------------------------------------------


@cache
def _journal_sql(all_worktrees: bool, by_branch: bool, meaningful: bool) -> str:
    """Every match in the workspace's shown versions, in one pass: the `limit` best in scope
    (bm25 with the schema's weights, ties newest first as reads order) and, on each row,
    the counts of matches in scope and elsewhere as Journal._counts counts them.
    Parameters: match, workspace, [worktree], [branch], limit."""
    where = ["journal_fts MATCH ?1", "e.workspace_id = ?2"]
    if all_worktrees:
        where.append("e.head_ws = 1")
        in_scope = "e.branch = ?4" if by_branch else "1"
        other_wt = "0"
        other_br = "e.branch <> ?4" if by_branch else "0"
        limit = "?5" if by_branch else "?3"
    else:
        where.append("e.head_wt = 1")
        if by_branch:
            # A read does not count entries of other worktrees on other branches either.
            where.append("(e.worktree_id = ?3 OR e.branch = ?4)")
            in_scope = "e.worktree_id = ?3 AND e.branch = ?4"
            other_wt = "e.worktree_id <> ?3"
            other_br = "e.worktree_id = ?3 AND e.branch <> ?4"
            limit = "?5"
        else:
            in_scope = "e.worktree_id = ?3"
            other_wt = "e.worktree_id <> ?3"
            other_br = "0"
            limit = "?4"
    if meaningful:
        where.append("e.meaningful = 1")
    # CROSS JOIN: the index drives and each match is one primary-key probe; the planner
    # must never walk a head index and probe the index per entry instead.
    return f"""
SELECT seq, score, in_scope, sum(in_scope) OVER (), sum(other_wt) OVER (),
       sum(other_br) OVER (), ts_us, sid_order
  FROM (SELECT e.seq AS seq, f.rank AS score, e.ts_us AS ts_us, e.sid_order AS sid_order,
               ({in_scope}) AS in_scope, ({other_wt}) AS other_wt, ({other_br}) AS other_br
          FROM journal_fts f CROSS JOIN journal_entries e ON e.seq = f.rowid
         WHERE {" AND ".join(where)})
 ORDER BY in_scope DESC, score, ts_us DESC, sid_order
 LIMIT {limit}"""


_SNIPPET_SQL = (
    "SELECT "
    + ", ".join(
        f"snippet(journal_fts, {i}, ?3, ?4, '…', {SNIPPET_TOKENS})" for i in range(len(FIELDS))
    )
    + " FROM journal_fts WHERE journal_fts MATCH ?1 AND rowid = ?2"
)


def _later(ctx: StoreContext, fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    """`fn(conn, *args)` in a read of its own, when a hit is first asked for it."""

    def run() -> Any:
        with ctx.db.read() as conn:
            return fn(conn, *args)

    return run


def _entry_texts(e: JournalEntry) -> list[str]:
    return [
        e.focus,
        "\n".join(e.done),
        "\n".join(e.decisions),
        "\n".join(e.next_steps),
        "\n".join(e.files_modified),
    ]


def _entry_snippet(
    conn: Any, match: str, seq: int, e: JournalEntry
) -> tuple[str | None, tuple[str, ...], Snippet]:
    texts = _entry_texts(e)
    if match:
        open_, close = _markers_for(texts)
        rows = conn.execute(_SNIPPET_SQL, (match, seq, open_, close)).fetchall()
        if rows:
            snippets = {
                name: raw for name, raw in zip(FIELDS, rows[0], strict=True) if raw and open_ in raw
            }
            fields = tuple(f for f in FIELD_PREFERENCE if f in snippets)
            if fields:
                return fields[0], fields, _unmark(snippets[fields[0]], open_, close)
    first = next((t for t in texts if t.strip()), "")
    return None, (), _plain_snippet(first)


def search_journal(
    ctx: StoreContext,
    journal: Journal,
    query: object,
    n: int = 10,
    *,
    branch: str | None = None,
    all_worktrees: bool = False,
    meaningful: bool = False,
    vector: object = None,
    model: str | None = None,
    fusion: Fusion = "rrf",
) -> EntrySearchResult:
    n = _check_n(n)
    if branch is not None:
        require_text("branch", branch)
    _check_hybrid(vector, model, fusion)
    parsed = parse_query(query)
    scope = Scope(
        ctx.workspace_uuid, None if all_worktrees else ctx.worktree_key, branch, bool(meaningful)
    )
    hybrid = vector is not None
    # The vector side first: Vectors.search takes its own read transaction.
    vec_hits: list[tuple[str, float]] = []
    if hybrid:
        from .vectors.family import Vectors  # numpy: only for hosts that embed

        assert model is not None
        found = Vectors(ctx).search(
            vector,
            max(n, FUSION_DEPTH),
            model=model,
            branch=branch,
            kinds="entry",
            all_worktrees=all_worktrees,
        )
        vec_hits = [(str(h.owner.id), h.score) for h in found.hits]
    depth = max(n, FUSION_DEPTH) if hybrid else n
    params: list[Any] = [parsed.match, ctx.workspace_pk]
    if not all_worktrees:
        params.append(ctx.worktree_pk)
    if branch is not None:
        if all_worktrees:
            params.append(None)  # ?3 is unused in this shape; keep the numbering
        params.append(branch)
    params.append(max(depth, 1))  # LIMIT 0 would also lose the counts every row carries
    total, other_wt, other_br = 0, 0, 0
    with ctx.db.read() as conn:
        text_rows: list[tuple[Any, ...]] = []
        if parsed.terms:
            rows: list[tuple[Any, ...]] = conn.execute(
                _journal_sql(all_worktrees, branch is not None, bool(meaningful)), params
            ).fetchall()
            if rows:
                total, other_wt, other_br = int(rows[0][3]), int(rows[0][4]), int(rows[0][5])
            text_rows = [r for r in rows if r[2]][:depth]
        cands: dict[int, _Candidate] = {}
        for rank, r in enumerate(text_rows, 1):
            cands[int(r[0])] = _Candidate(
                int(r[0]), rank, -float(r[1]), order=(-int(r[6]), int(r[7] or 0))
            )
        if vec_hits:
            _add_vector_entries(conn, vec_hits, cands, bool(meaningful))
        chosen = _rank(cands, n, fusion if hybrid else None)
        entries = _entries_by_seq(conn, journal, [c.key for c in chosen])
        hits = []
        for c in chosen:
            e = entries[c.key]
            score = c.fused if hybrid else float(c.text_score or 0.0)
            hits.append(
                EntryHit(
                    e,
                    score,
                    c.text_rank,
                    c.vector_rank,
                    _later(ctx, _entry_snippet, parsed.match, c.key, e),
                )
            )
    return EntrySearchResult(
        hits,
        scope,
        total,
        Elsewhere(other_wt, other_br),
        parsed,
        "hybrid" if hybrid else "text",
        fusion if hybrid else None,
    )


def _add_vector_entries(
    conn: Any, vec_hits: list[tuple[str, float]], cands: dict[int, _Candidate], meaningful: bool
) -> None:
    """The vector ranking's entries as candidates (Vectors.search already kept only the
    heads of the scope; `meaningful` is applied here, as it has no vector filter)."""
    placeholders = ",".join("?" * len(vec_hits))
    extra = " AND meaningful = 1" if meaningful else ""
    found = {
        bytes(rid).hex(): (int(seq), int(ts), int(so or 0))
        for rid, seq, ts, so in conn.execute(
            f"SELECT id, seq, ts_us, sid_order FROM journal_entries"
            f" WHERE id IN ({placeholders}){extra}",
            [bytes.fromhex(h) for h, _ in vec_hits],
        )
    }
    rank = 0
    for hex_id, score in vec_hits:
        got = found.get(hex_id)
        if got is None:
            continue
        rank += 1
        seq, ts, so = got
        c = cands.get(seq)
        if c is None:
            c = cands[seq] = _Candidate(seq, order=(-ts, so))
        c.vector_rank, c.vector_score = rank, score


def _rank(cands: dict[int, _Candidate], n: int, fusion: str | None) -> list[_Candidate]:
    items = list(cands.values())
    if fusion is None:
        items.sort(key=lambda c: c.text_rank or 0)
    else:
        FUSIONS[fusion](items)
        items.sort(key=lambda c: (-c.fused, *c.order))
    return items[:n]


def _entries_by_seq(conn: Any, journal: Journal, seqs: list[int]) -> dict[int, JournalEntry]:
    if not seqs:
        return {}
    rows = conn.execute(
        f"SELECT {ENTRY_COLUMNS} FROM journal_entries WHERE seq IN ({','.join('?' * len(seqs))})",
        seqs,
    ).fetchall()
    return {int(r[0]): e for r, e in zip(rows, journal.entries_from_rows(rows), strict=True)}


# -- summaries ------------------------------------------------------------------------------


@cache
def _summary_sql(scope_kind: str, by_kind: bool, include_superseded: bool) -> str:
    """Parameters: match, workspace, branch (unused unless scope_kind == 'branch'), kind
    (unused unless by_kind), limit. Ties: newest first."""
    where = ["summaries_fts MATCH ?1", "s.workspace_id = ?2"]
    if not include_superseded:
        where.append("s.superseded_by IS NULL")
    if by_kind:
        where.append("s.kind = ?4")
    in_scope = {"all": "1", "workspace": "s.branch IS NULL", "branch": "s.branch IS ?3"}
    return f"""
SELECT id, score, in_scope, sum(in_scope) OVER (), sum(1 - in_scope) OVER (), created_us
  FROM (SELECT s.id AS id, f.rank AS score, s.created_us AS created_us,
               ({in_scope[scope_kind]}) AS in_scope
          FROM summaries_fts f CROSS JOIN summaries s ON s.id = f.rowid
         WHERE {" AND ".join(where)})
 ORDER BY in_scope DESC, score, created_us DESC
 LIMIT ?5"""


_SUMMARY_SNIPPET_SQL = (
    f"SELECT snippet(summaries_fts, 0, ?3, ?4, '…', {SNIPPET_TOKENS * 2})"
    " FROM summaries_fts WHERE summaries_fts MATCH ?1 AND rowid = ?2"
)


def search_summaries(
    ctx: StoreContext,
    summaries: Summaries,
    query: object,
    n: int = 10,
    *,
    branch: BranchFilter,
    kind: str | None = None,
    include_superseded: bool = False,
    vector: object = None,
    model: str | None = None,
    fusion: Fusion = "rrf",
) -> SummarySearchResult:
    from .summaries import ALL_BRANCHES

    n = _check_n(n)
    all_branches = branch is ALL_BRANCHES
    branch_name: str | None = None if branch is ALL_BRANCHES else branch
    if branch_name is not None:
        require_text("branch", branch_name, error=InvalidInputError)
    if kind is not None:
        require_text("kind", kind, allow_empty=False)
    _check_hybrid(vector, model, fusion)
    parsed = parse_query(query)
    scope_kind = "all" if all_branches else ("workspace" if branch_name is None else "branch")
    scope = SummaryScope(
        ctx.workspace_uuid, branch_name, all_branches, kind, bool(include_superseded)
    )
    hybrid = vector is not None
    vec_hits: list[tuple[int, float]] = []
    if hybrid:
        from .vectors.family import Vectors

        assert model is not None
        found = Vectors(ctx).search(
            vector,
            max(n, FUSION_DEPTH),
            model=model,
            branch=branch_name,
            kinds="summary",
            include_hidden=bool(include_superseded),
        )
        vec_hits = [(int(h.owner.id), h.score) for h in found.hits]
    depth = max(n, FUSION_DEPTH) if hybrid else n
    total = other = 0
    with ctx.db.read() as conn:
        text_rows: list[tuple[Any, ...]] = []
        if parsed.terms:
            rows: list[tuple[Any, ...]] = conn.execute(
                _summary_sql(scope_kind, kind is not None, bool(include_superseded)),
                (parsed.match, ctx.workspace_pk, branch_name, kind, max(depth, 1)),
            ).fetchall()
            if rows:
                total, other = int(rows[0][3]), int(rows[0][4])
            text_rows = [r for r in rows if r[2]][:depth]
        cands: dict[int, _Candidate] = {}
        for rank, r in enumerate(text_rows, 1):
            cands[int(r[0])] = _Candidate(int(r[0]), rank, -float(r[1]), order=(-int(r[5]),))
        if vec_hits:
            _add_vector_summaries(
                conn, ctx, vec_hits, cands, scope_kind, branch_name, kind, bool(include_superseded)
            )
        chosen = _rank(cands, n, fusion if hybrid else None)
        hits: list[SummaryHit] = []
        for c in chosen:
            s = summaries.get(c.key)
            score = c.fused if hybrid else float(c.text_score or 0.0)
            hits.append(
                SummaryHit(
                    s,
                    score,
                    c.text_rank,
                    c.vector_rank,
                    _later(ctx, _summary_snippet, parsed.match, c.key, s.text),
                )
            )
    return SummarySearchResult(
        hits,
        scope,
        total,
        Elsewhere(0, other),
        parsed,
        "hybrid" if hybrid else "text",
        fusion if hybrid else None,
    )


def _add_vector_summaries(
    conn: Any,
    ctx: StoreContext,
    vec_hits: list[tuple[int, float]],
    cands: dict[int, _Candidate],
    scope_kind: str,
    branch: str | None,
    kind: str | None,
    include_superseded: bool,
) -> None:
    where = ["workspace_id = ?", f"id IN ({','.join('?' * len(vec_hits))})"]
    params: list[Any] = [ctx.workspace_pk, *[i for i, _ in vec_hits]]
    if scope_kind == "workspace":
        where.append("branch IS NULL")
    elif scope_kind == "branch":
        where.append("branch IS ?")
        params.append(branch)
    if kind is not None:
        where.append("kind = ?")
        params.append(kind)
    if not include_superseded:
        where.append("superseded_by IS NULL")
    found = {
        int(i): int(us)
        for i, us in conn.execute(
            f"SELECT id, created_us FROM summaries WHERE {' AND '.join(where)}", params
        )
    }
    rank = 0
    for sid, score in vec_hits:
        if sid not in found:
            continue
        rank += 1
        c = cands.get(sid)
        if c is None:
            c = cands[sid] = _Candidate(sid, order=(-found[sid],))
        c.vector_rank, c.vector_score = rank, score


def _summary_snippet(conn: Any, match: str, sid: int, text: str) -> Snippet:
    if match:
        open_, close = _markers_for([text])
        rows = conn.execute(_SUMMARY_SNIPPET_SQL, (match, sid, open_, close)).fetchall()
        if rows and rows[0][0] and open_ in rows[0][0]:
            return _unmark(rows[0][0], open_, close)
    return _plain_snippet(text)


# -- maintenance (for doctor) ---------------------------------------------------------------


@dataclass(frozen=True)
class IndexCheck:
    """Rows an index lacks and rows it holds that no longer exist."""

    missing_entries: int
    stale_entries: int
    missing_summaries: int
    stale_summaries: int

    @property
    def ok(self) -> bool:
        return not (
            self.missing_entries
            or self.stale_entries
            or self.missing_summaries
            or self.stale_summaries
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "missing_entries": self.missing_entries,
            "stale_entries": self.stale_entries,
            "missing_summaries": self.missing_summaries,
            "stale_summaries": self.stale_summaries,
            "ok": self.ok,
        }


def check_index(conn: Any) -> IndexCheck:
    """Compare the indexes' documents (their `_docsize` rows, one per indexed row) with
    the rows they index. Detects rows indexed twice-over or never; not a token-level
    comparison (FTS5's 'integrity-check' covers the index's own structure)."""

    def count(sql: str) -> int:
        return int(conn.execute(sql).fetchall()[0][0])

    return IndexCheck(
        count(
            "SELECT count(*) FROM journal_entries e WHERE NOT EXISTS"
            " (SELECT 1 FROM journal_fts_docsize d WHERE d.id = e.seq)"
        ),
        count(
            "SELECT count(*) FROM journal_fts_docsize d WHERE NOT EXISTS"
            " (SELECT 1 FROM journal_entries e WHERE e.seq = d.id)"
        ),
        count(
            "SELECT count(*) FROM summaries s WHERE NOT EXISTS"
            " (SELECT 1 FROM summaries_fts_docsize d WHERE d.id = s.id)"
        ),
        count(
            "SELECT count(*) FROM summaries_fts_docsize d WHERE NOT EXISTS"
            " (SELECT 1 FROM summaries s WHERE s.id = d.id)"
        ),
    )


def rebuild_index(conn: Any) -> None:
    """Rebuild both indexes from the rows (doctor --repair). Run inside a write
    transaction. The entry index cannot use FTS5's 'rebuild' (schema.sql says why)."""
    conn.execute("INSERT INTO journal_fts (journal_fts) VALUES ('delete-all')")
    conn.execute(
        "INSERT INTO journal_fts (rowid, focus, done, decisions, next_steps,"
        " files_modified) SELECT seq, focus, done, decisions, next_steps,"
        " files_modified FROM journal_fts_content ORDER BY seq"
    )
    conn.execute("INSERT INTO summaries_fts (summaries_fts) VALUES ('rebuild')")
