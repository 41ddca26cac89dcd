"""What the vector table holds, per model: SQL only, so `recall-sqlite vectors stats` and
a host's health check need no numpy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..context import StoreContext
from ..db import as_int

# The owner of each row of `vectors v`: its entry `e` or its summary `s`, in the same
# workspace (both NULL for an orphan). One definition for these counts and for what a
# search chooses (matrix.py), so a count never judges an owner differently from a search.
OWNER_JOINS = (
    " LEFT JOIN journal_entries e ON e.seq = v.entry_seq AND e.workspace_id = v.workspace_id"
    " LEFT JOIN summaries s ON s.id = v.summary_id AND s.workspace_id = v.workspace_id"
)


@dataclass(frozen=True)
class ModelStats:
    model: str
    dim: int
    vectors: int
    entries: int
    summaries: int
    hidden: int  # owners reads no longer show (older versions, superseded summaries)
    orphans: int  # owner missing or in another workspace: never searched
    wrong_dim: int  # rows whose dimension differs from the model's (only by bypassing triggers)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "dim": self.dim,
            "vectors": self.vectors,
            "entries": self.entries,
            "summaries": self.summaries,
            "hidden": self.hidden,
            "orphans": self.orphans,
            "wrong_dim": self.wrong_dim,
        }


@dataclass(frozen=True)
class VectorStats:
    workspace_id: str
    models: list[ModelStats]

    @property
    def total(self) -> int:
        return sum(m.vectors for m in self.models)

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.workspace_id,
            "total": self.total,
            "models": [m.to_dict() for m in self.models],
        }


def vector_stats(ctx: StoreContext) -> VectorStats:
    """Per model: dimension, vector counts by kind, hidden (older versions, superseded
    summaries), orphans and rows whose dimension disagrees with the model's."""
    ws = ctx.workspace_pk
    rows = ctx.db.query(
        "SELECT m.model, m.dim,"
        " count(v.id),"
        " coalesce(sum(v.owner_kind = 'entry'), 0),"
        " coalesce(sum(v.owner_kind = 'summary'), 0),"
        " coalesce(sum(CASE WHEN v.owner_kind = 'entry'"
        "   THEN e.seq IS NOT NULL AND e.head_ws = 0"
        "   ELSE s.id IS NOT NULL AND s.superseded_by IS NOT NULL END), 0),"
        " coalesce(sum(CASE WHEN v.owner_kind = 'entry' THEN e.seq IS NULL"
        "   ELSE s.id IS NULL END), 0),"
        " coalesce(sum(v.dim <> m.dim), 0)"
        " FROM vector_models m"
        " LEFT JOIN vectors v ON v.workspace_id = m.workspace_id AND v.model = m.model"
        f"{OWNER_JOINS}"
        " WHERE m.workspace_id = ? GROUP BY m.model, m.dim ORDER BY m.model",
        (ws,),
    )
    return VectorStats(
        ctx.workspace_uuid, [ModelStats(str(r[0]), *(as_int(x) for x in r[1:])) for r in rows]
    )
