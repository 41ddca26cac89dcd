"""Hybrid search: the text ranking and the vector ranking of the same scope fused into one.
Reciprocal-rank fusion by default (no calibration between bm25 and cosine is needed);
CombSUM of min-max normalised scores as the alternative. Candidates carry a tie order
(newest first) so equal fused scores rank as reads do."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..checks import require_choice
from ..errors import InvalidInputError

if TYPE_CHECKING:
    from ..vectors.owners import OwnerKind
    from ..vectors.vectors import Vectors

# Candidates each ranking contributes to a fusion: deep enough that an item ranked low by
# one side and high by the other still meets itself.
FUSION_DEPTH = 50
RRF_K = 60

Fusion = Literal["rrf", "combsum"]


@dataclass
class Candidate:
    key: int
    text_rank: int | None = None
    text_score: float | None = None  # -bm25, higher is better
    vector_rank: int | None = None
    vector_score: float | None = None  # cosine
    fused: float = 0.0
    order: tuple[Any, ...] = field(default=())


def fuse_rrf(cands: Sequence[Candidate]) -> None:
    """Reciprocal-rank fusion (Cormack et al. 2009): sum of 1 / (60 + rank). Needs no
    calibration between bm25 and cosine, which have nothing in common but their order."""
    for c in cands:
        c.fused = sum(1.0 / (RRF_K + r) for r in (c.text_rank, c.vector_rank) if r is not None)


def fuse_combsum(cands: Sequence[Candidate], text_weight: float = 0.5) -> None:
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


FUSIONS: dict[str, Callable[[Sequence[Candidate]], None]] = {
    "rrf": fuse_rrf,
    "combsum": fuse_combsum,
}


def check_hybrid(vector: object, model: object, fusion: object) -> None:
    if vector is None:
        if model is not None:
            raise InvalidInputError("model is given without a vector: give both or neither")
        return
    if model is None:
        raise InvalidInputError("a vector needs its model name (model=...)")
    require_choice("fusion", fusion, FUSIONS)


def rank(cands: dict[int, Candidate], n: int, fusion: str | None) -> list[Candidate]:
    """The best `n` candidates: by text rank alone, or fused."""
    items = list(cands.values())
    if fusion is None:
        items.sort(key=lambda c: c.text_rank or 0)
    else:
        FUSIONS[fusion](items)
        items.sort(key=lambda c: (-c.fused, *c.order))
    return items[:n]


def vector_ranking(
    vectors: Callable[[], Vectors],
    vector: object,
    model: str,
    n: int,
    *,
    kinds: OwnerKind,
    branch: str | None = None,
    all_worktrees: bool = False,
    include_hidden: bool = False,
) -> list[tuple[str | int, float]]:
    """(owner id, score) of the vector ranking a fusion meets the text ranking with: deep
    enough (FUSION_DEPTH) for either side's low ranks to find the other's; the owners of
    `kinds`, in the scope the other arguments give (as Vectors.search takes them)."""
    found = vectors().search(
        vector,
        max(n, FUSION_DEPTH),
        model=model,
        branch=branch,
        kinds=kinds,
        all_worktrees=all_worktrees,
        include_hidden=include_hidden,
    )
    return [(h.owner.id, h.score) for h in found.hits]
