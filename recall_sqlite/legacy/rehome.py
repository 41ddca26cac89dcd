"""The workspace's worktrees as the store records them, and re-homing an imported source:
its rows move to another worktree (`import --map` on a file already imported).

Which rows move. An entry version is one row however many buckets carried its line
(content-addressed per workspace), and it lies in the worktree of the import that created
it. Re-homing source S to worktree T moves a version S supplied unless

- no import created it (no provenance line with status `imported`): a version first
  written by a live process stays in the worktree that process stood in; or
- another source that supplied it (any version of another file, provenance of any
  status) is filed under the worktree the version lies in now: "an entry supplied also
  by another source stays where that source put it".

Whatever stays (and is not in T already) is counted as `stayed`. So every version an
import created lies in the worktree of one of the sources that supplied it, whatever the
order of imports and re-homes (tests/unit/legacy/test_rehome.py holds this), a version all of whose
sources agree lies in their worktree, and a re-run moves nothing.

All versions of the file (a rewrite supersedes a version; its rows stay) move with it,
through `derived.move_versions` (the one move, a merge's too), so derived state follows
in the same transaction."""

from __future__ import annotations

from typing import Any, NamedTuple

from .. import derived, identity
from ..context import StoreContext
from ..errors import ImportConflict
from .assign import KnownWorktree


class Rehomed(NamedTuple):
    moved: int  # entry versions now in the target worktree
    stayed: int  # versions the source supplied left where another source (or a live
    # write) put them
    worktree_pk: int


def rehome(ctx: StoreContext, key: str, source_id: int, target: KnownWorktree) -> Rehomed:
    """Move the rows of the imported source `key` (whose current version is `source_id`)
    to `target`, recording the worktree if it is new; one write transaction. Raises
    ImportConflict when the source's record changed under us (another process)."""
    ws_pk = ctx.workspace_pk
    with ctx.db.write() as conn:
        now: list[tuple[Any, ...]] = conn.execute(
            "SELECT id FROM import_sources WHERE workspace_id = ? AND path = ? AND superseded = 0",
            (ws_pk, key),
        ).fetchall()
        if [int(r[0]) for r in now] != [source_id]:
            raise ImportConflict(f"{key} is being imported by another process")
        target_pk = (
            target.pk
            if target.pk is not None
            else identity.ensure_worktree(conn, ws_pk, target.key, target.name, target.root)
        )
        rows: list[tuple[Any, ...]] = conn.execute(
            """
            SELECT e.seq, e.worktree_id, e.session_id, e.head_wt,
                   EXISTS (SELECT 1 FROM entry_provenance p
                            WHERE p.entry_seq = e.seq AND p.status = 'imported'),
                   NOT EXISTS (SELECT 1 FROM entry_provenance p
                                 JOIN import_sources s ON s.id = p.source_id
                                WHERE p.entry_seq = e.seq AND s.path <> ?
                                  AND s.worktree_id = e.worktree_id)
              FROM journal_entries e
             WHERE e.seq IN (SELECT p.entry_seq FROM entry_provenance p
                              JOIN import_sources s ON s.id = p.source_id
                             WHERE s.workspace_id = ? AND s.path = ?)""",
            (key, ws_pk, key),
        ).fetchall()
        moving = [r for r in rows if int(r[1]) != target_pk and r[4] and r[5]]
        stayed = sum(1 for r in rows if int(r[1]) != target_pk) - len(moving)
        if moving:
            derived.move_versions(conn, ws_pk, target_pk, [int(r[0]) for r in moving])
        conn.execute(
            "UPDATE import_sources SET worktree_id = ? WHERE workspace_id = ? AND path = ?",
            (target_pk, ws_pk, key),
        )
    return Rehomed(len(moving), stayed, target_pk)
