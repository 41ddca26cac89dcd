"""The workspace's worktrees as the store records them, and re-homing an imported source:
its rows move to another worktree (`import --map` on a file already imported)."""

from __future__ import annotations

import os
from typing import Any

from .. import identity
from ..context import StoreContext
from ..errors import InvalidInputError


def rehome(ctx: StoreContext, source_id: int, worktree_pk: int) -> tuple[int, int]:
    """Move the rows this source created to `worktree_pk`; (moved, left in place)."""
    raise InvalidInputError("re-homing an imported source is not supported yet")


def worktree_list(ctx: StoreContext) -> list[dict[str, Any]]:
    """Every worktree the workspace records: key, name, root, the entry versions and the
    sessions shown in it, and whether its root still exists on disk."""
    counts = {int(w): (int(n), int(h)) for w, n, h in ctx.db.query(
        "SELECT worktree_id, count(*), coalesce(sum(head_wt), 0) FROM journal_entries"
        " WHERE workspace_id = ? GROUP BY worktree_id", (ctx.workspace_pk,))}
    out: list[dict[str, Any]] = []
    for w in identity.worktrees(ctx.db, ctx.workspace_pk):
        versions, shown = counts.get(w.pk, (0, 0))
        out.append({"key": w.key, "name": w.name, "root": w.root,
                    "root_exists": bool(w.root) and os.path.isdir(w.root or ""),
                    "entries": shown, "versions": versions,
                    "current": w.pk == ctx.worktree_pk})
    return out
