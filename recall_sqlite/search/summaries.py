"""Searching summaries (`store.summaries.search`): every scope by default, or one branch or
the workspace-wide ones, with the matches elsewhere counted; current summaries only unless
superseded ones are asked for. Ties newest first."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from ..checks import require_int, require_text
from ..errors import InvalidInputError
from ..scope import Elsewhere
from ..summaries import ALL_BRANCHES
from .fusion import FUSION_DEPTH, Candidate, Fusion, check_hybrid, rank, vector_ranking
from .query import parse_query
from .results import SummaryHit, SummaryScope, SummarySearchResult
from .snippets import deferred, summary_snippet

if TYPE_CHECKING:
    from collections.abc import Callable

    from apsw import Connection

    from ..context import StoreContext
    from ..summaries import BranchFilter, Summaries, SummarySearch
    from ..vectors.vectors import Vectors

    def _meets_the_contract(found: SummarySearchResult) -> SummarySearch:
        """For mypy: what this module returns is what Summaries.search promises."""
        return found


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


def search_summaries(
    summaries: Summaries,
    query: object,
    n: int = 10,
    *,
    branch: BranchFilter = ALL_BRANCHES,
    kind: str | None = None,
    include_superseded: bool = False,
    vector: object = None,
    model: str | None = None,
    fusion: Fusion = "rrf",
    vectors: Callable[[], Vectors] | None = None,
) -> SummarySearchResult:
    """Summaries matching `query`, best first: every scope (ALL_BRANCHES), one branch, or
    the workspace-wide ones (None), with the current matches elsewhere counted; current
    summaries only unless `include_superseded`. `vectors` as for search_journal."""
    ctx = summaries.context
    n = require_int("n", n, minimum=0)
    all_branches = branch is ALL_BRANCHES
    branch_name: str | None = None if branch is ALL_BRANCHES else branch
    if branch_name is not None:
        require_text("branch", branch_name, error=InvalidInputError)
    if kind is not None:
        require_text("kind", kind, allow_empty=False)
    check_hybrid(vector, model, fusion)
    parsed = parse_query(query)
    scope_kind = "all" if all_branches else ("workspace" if branch_name is None else "branch")
    scope = SummaryScope(
        ctx.workspace_uuid, branch_name, all_branches, kind, bool(include_superseded)
    )
    hybrid = vector is not None
    vec_hits: list[tuple[int, float]] = []
    if hybrid:
        assert model is not None and vectors is not None
        vec_hits = [
            (int(i), score)
            for i, score in vector_ranking(
                vectors,
                vector,
                model,
                n,
                kinds="summary",
                branch=branch_name,
                include_hidden=bool(include_superseded),
            )
        ]
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
        cands: dict[int, Candidate] = {}
        for place, r in enumerate(text_rows, 1):
            cands[int(r[0])] = Candidate(int(r[0]), place, -float(r[1]), order=(-int(r[5]),))
        if vec_hits:
            _add_vector_summaries(
                conn, ctx, vec_hits, cands, scope_kind, branch_name, kind, bool(include_superseded)
            )
        chosen = rank(cands, n, fusion if hybrid else None)
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
                    deferred(ctx, summary_snippet, parsed.match, c.key, s.text),
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
    conn: Connection,
    ctx: StoreContext,
    vec_hits: list[tuple[int, float]],
    cands: dict[int, Candidate],
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
    place = 0
    for sid, score in vec_hits:
        if sid not in found:
            continue
        place += 1
        c = cands.get(sid)
        if c is None:
            c = cands[sid] = Candidate(sid, order=(-found[sid],))
        c.vector_rank, c.vector_score = place, score
