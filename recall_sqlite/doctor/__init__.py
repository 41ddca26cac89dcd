"""`store.doctor()` / `recall-sqlite doctor`: everything that can be checked about a store,
as findings, and `--repair` of what is found.

The checks (rows.py: pages, keys, derived state, content, text, indexes, JSON, guards;
workspace.py: roots, worktrees, the file, synapt stores) read in snapshots and never take
the write lock; what they need of the journal's rows comes from one pass over them
(journal_pass.py), beside integrity_check; `--deep` adds the re-hash of every row and the
full-text index compared token by token. A repair (repairs.py) mends each finding in short
writes of its own and the checks run again; it rebuilds what is derived, restores what an
id proves, and never deletes an entry. Damage no rebuild can trust (a table's pages) is
reported with the way out.

report.py     Finding, DoctorReport: what doctor says
rows.py       the checks of the rows, in snapshots, none under the write lock
journal_pass.py  the journal's rows read once for every check of them, in one statement
pages.py      integrity_check read as what it found: an index, the full-text index, pages
text.py       text that is not UTF-8, in every TEXT column
content.py    rows against their own content (ids, derived-at-write columns); restore
schema.py     the store's schema against schema.sql; triggers, views, indexes remade
workspace.py  roots, worktrees, the store file, other ids' history, synapt stores
repairs.py    each finding mended in short writes of its own

Loaded only by doctor: no other path imports this package."""

from __future__ import annotations

from . import repairs, rows, workspace
from .report import DoctorReport, Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..context import StoreContext, WorkspaceInfo
    from ..legacy import Legacy

__all__ = ["DoctorReport", "Finding", "doctor"]

# A repair can uncover what it depends on (restored content changes heads): rounds of
# repair and check, until nothing repairable is left or a round changes nothing.
REPAIR_ROUNDS = 3


def doctor(
    ctx: StoreContext,
    info: WorkspaceInfo,
    legacy: Legacy,
    *,
    repair: bool = False,
    deep: bool = False,
) -> DoctorReport:
    """Check the store of `ctx` (the workspace `info` describes; `legacy` finds its synapt
    stores); with `repair`, mend what was found and check again."""
    found = rows.run(ctx, deep=deep)
    repaired: list[str] = []
    if repair:
        for _ in range(REPAIR_ROUNDS):
            if not any(f.repairable for f in found):
                break
            done = repairs.run(ctx.db, found)
            repaired += done
            found = rows.run(ctx, deep=deep)
            if not done:
                break
        repaired += workspace.acknowledge(ctx, info)
    found += rows.guarded("workspace", workspace.findings, ctx, info, legacy)
    return DoctorReport(tuple(found), tuple(repaired), str(ctx.db.path), ctx.workspace_uuid)
