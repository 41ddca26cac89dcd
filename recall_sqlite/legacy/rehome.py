"""Re-homing an imported source: its rows move to another worktree (`import --map` on a
file already imported), derived state following."""

from __future__ import annotations

from ..context import StoreContext
from ..errors import InvalidInputError


def rehome(ctx: StoreContext, source_id: int, worktree_pk: int) -> tuple[int, int]:
    """Move the rows this source created to `worktree_pk`; (moved, left in place)."""
    raise InvalidInputError("re-homing an imported source is not supported yet")
