"""Searching journal entries (`store.journal.search`): one scoped statement over the matches.

Scope is exactly `Journal.read`'s (scope.py): the shown versions of the scope's basis, in
one pass over the matches, give the `n` best in scope (bm25 with the schema's column
weights, ties newest first as reads order) and, on every row, how many matches lie in scope
and in each category elsewhere, counted as reads count them. With `vector` and `model`, the
vector ranking of the same scope is fused in (fusion.py); numpy is loaded only then."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from .. import scope
from ..checks import require_int
from ..db import as_float, as_int
from ..journal.deferred import hinted
from ..journal.entry import JournalEntry
from ..journal.journal import ENTRY_COLUMNS
from ..journal.order import READ_ORDER
from .fusion import FUSION_DEPTH, Candidate, Fusion, check_hybrid, rank, vector_ranking
from .query import parse_query
from .results import EntryHit, EntrySearchResult
from .snippets import deferred, entry_snippet

if TYPE_CHECKING:
    from collections.abc import Callable

    from apsw import Connection

    from ..context import StoreContext
    from ..db import Row
    from ..journal.results import EntrySearch
    from ..vectors.vectors import Vectors

    def _meets_the_contract(found: EntrySearchResult) -> EntrySearch:
        """For mypy: what this module returns is what Journal.search promises."""
        return found


@cache
def _sql(k_shape: tuple[bool, bool, bool], category: str, basis: str) -> str:
    """Every match among the basis's shown versions with its category, the counts of each
    category over all of them and, first, the best in scope. `k_shape` only keys the cache.

    The matches are materialised once; one aggregate counts them and a top-n sort picks the
    best (window sums over the same rows buffered them a second time). CROSS JOIN: the
    full-text index drives and each match is one probe of journal_heads_by_seq, which covers
    every column used here (a primary-key probe reads the entry's whole row); both as
    bench/RESULTS.md, row 'search: statement' measured. The planner must never walk a head
    index and probe the full-text index per entry instead."""
    return f"""
WITH m AS MATERIALIZED (
       SELECT e.seq AS seq, f.rank AS score, e.ts_us AS ts_us, e.sid_order AS sid_order,
              {category} AS cat
         FROM journal_fts f CROSS JOIN journal_entries e INDEXED BY journal_heads_by_seq
           ON e.seq = f.rowid
        WHERE journal_fts MATCH :match AND {basis}),
     counts AS (SELECT sum(cat = 0) AS here, sum(cat = 1) AS worktrees, sum(cat = 2) AS branches
                  FROM m)
SELECT m.seq, m.score, m.cat, counts.here, counts.worktrees, counts.branches, m.ts_us,
       m.sid_order
  FROM m, counts
 WHERE m.cat IS NOT NULL
 ORDER BY cat = 0 DESC, score, {READ_ORDER}
 LIMIT :limit"""


def search_journal(
    ctx: StoreContext,
    query: object,
    n: int = 10,
    *,
    branch: str | None = None,
    all_worktrees: bool = False,
    meaningful: bool = False,
    vector: object = None,
    model: str | None = None,
    fusion: Fusion = "rrf",
    vectors: Callable[[], Vectors] | None = None,
) -> EntrySearchResult:
    """Entries matching `query`, best first, in the scope `journal.read` would cover.
    `vectors` gives the store's vector family for a hybrid search (its matrix cache)."""
    n = require_int("n", n, minimum=0)
    k = scope.keys(ctx, branch, all_worktrees, meaningful)
    check_hybrid(vector, model, fusion)
    parsed = parse_query(query)
    hybrid = vector is not None
    # The vector side first: Vectors.search takes its own read transaction.
    vec_hits: list[tuple[str, float]] = []
    if hybrid:
        assert model is not None and vectors is not None
        vec_hits = [
            (str(i), score)
            for i, score in vector_ranking(
                vectors, vector, model, n, kinds="entry", branch=branch, all_worktrees=all_worktrees
            )
        ]
    depth = max(n, FUSION_DEPTH) if hybrid else n
    params = k.params()
    # LIMIT 0 would also lose the counts every row carries.
    params.update(match=parsed.match, limit=max(depth, 1))
    total, elsewhere = 0, scope.Elsewhere()
    with ctx.db.read() as conn:
        text_rows: list[tuple[Any, ...]] = []
        if parsed.terms:
            shape = (k.worktree_pk is None, k.branch is not None, k.meaningful)
            sql = _sql(shape, k.category_sql("e.worktree_id", "e.branch"), k.basis_sql("e"))
            # (A bulk load builds the index it names after its rows: journal/deferred.py.)
            rows: list[tuple[Any, ...]] = hinted(conn, lambda c: c.execute(sql, params).fetchall())
            if rows:
                first = rows[0]
                total, elsewhere = scope.totals(((0, first[3]), (1, first[4]), (2, first[5])))
            text_rows = [r for r in rows if r[2] == scope.IN_SCOPE][:depth]
        if hybrid:
            hits = _fused(conn, ctx, parsed.match, text_rows, vec_hits, n, fusion, k)
        else:
            hits = _ranked(conn, ctx, parsed.match, text_rows[:n])
    return EntrySearchResult(
        hits,
        k.public(ctx),
        total,
        elsewhere,
        parsed,
        "hybrid" if hybrid else "text",
        fusion if hybrid else None,
    )


def _ranked(conn: Connection, ctx: StoreContext, match: str, rows: list[Row]) -> list[EntryHit]:
    """Text hits in the statement's order (already the ranking: no fusion to weigh)."""
    seqs = [as_int(r[0]) for r in rows]
    entries = _entries_by_seq(conn, ctx, seqs)
    hits = []
    for place, (seq, r) in enumerate(zip(seqs, rows, strict=True), 1):
        e = entries[seq]
        snippet = deferred(ctx, entry_snippet, match, seq, e)
        hits.append(EntryHit(e, -as_float(r[1]) or 0.0, place, None, snippet))
    return hits


def _fused(
    conn: Connection,
    ctx: StoreContext,
    match: str,
    text_rows: list[Row],
    vec_hits: list[tuple[str, float]],
    n: int,
    fusion: Fusion,
    k: scope.Keys,
) -> list[EntryHit]:
    """The text and vector rankings of one scope, fused."""
    cands: dict[int, Candidate] = {}
    for place, r in enumerate(text_rows, 1):
        cands[as_int(r[0])] = Candidate(
            as_int(r[0]), place, -as_float(r[1]), order=(-as_int(r[6]), as_int(r[7] or 0))
        )
    if vec_hits:
        _add_vector_entries(conn, k.workspace_pk, vec_hits, cands, k.meaningful)
    chosen = rank(cands, n, fusion)
    entries = _entries_by_seq(conn, ctx, [c.key for c in chosen])
    return [
        EntryHit(
            entries[c.key],
            c.fused,
            c.text_rank,
            c.vector_rank,
            deferred(ctx, entry_snippet, match, c.key, entries[c.key]),
        )
        for c in chosen
    ]


def _add_vector_entries(
    conn: Connection,
    workspace_pk: int,
    vec_hits: list[tuple[str, float]],
    cands: dict[int, Candidate],
    meaningful: bool,
) -> None:
    """The vector ranking's entries as candidates (Vectors.search already kept only the
    shown versions of the scope; `meaningful` is applied here, as it has no vector filter)."""
    placeholders = ",".join("?" * len(vec_hits))
    extra = " AND meaningful = 1" if meaningful else ""
    found = {
        bytes(rid).hex(): (int(seq), int(ts), int(so or 0))
        for rid, seq, ts, so in conn.execute(
            f"SELECT id, seq, ts_us, sid_order FROM journal_entries"
            f" WHERE workspace_id = ? AND id IN ({placeholders}){extra}",
            [workspace_pk, *[bytes.fromhex(h) for h, _ in vec_hits]],
        )
    }
    place = 0
    for hex_id, score in vec_hits:
        got = found.get(hex_id)
        if got is None:
            continue
        place += 1
        seq, ts, so = got
        c = cands.get(seq)
        if c is None:
            c = cands[seq] = Candidate(seq, order=(-ts, so))
        c.vector_rank, c.vector_score = place, score


def _entries_by_seq(
    conn: Connection, ctx: StoreContext, seqs: list[int]
) -> dict[int, JournalEntry]:
    if not seqs:
        return {}
    rows = conn.execute(
        f"SELECT {ENTRY_COLUMNS} FROM journal_entries WHERE seq IN ({','.join('?' * len(seqs))})",
        seqs,
    ).fetchall()
    return {
        as_int(r[0]): e
        for r, e in zip(rows, JournalEntry.from_rows(rows, ctx.worktree_key_of), strict=True)
    }
