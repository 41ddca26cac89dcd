"""`recall-sqlite where`: the resolved workspace, worktree, branch and database."""

from __future__ import annotations

import argparse

from ._common import emit, open_for_read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cmd_where(args: argparse.Namespace) -> int:
    store = open_for_read(args)
    if store is None:
        return _no_store(args)
    with store:
        info = store.workspace.to_dict()
    lines = [
        f"workspace  {info['workspace_id']}",
        f"root       {info['workspace_root']}  (resolved by {info['resolved_by']})",
        f"worktree   {info['worktree']}  ({info['worktree_root']})",
        f"branch     {info['branch'] or '(none)'}",
        f"database   {info['db_path']}",
    ] + [f"warning    {w}" for w in info["warnings"]]
    emit(args, info, "\n".join(lines))
    return 0


def _no_store(args: argparse.Namespace) -> int:
    from ..paths.resolve import resolve
    from ..store import resolve_db_path

    r = resolve(args.cwd)
    db = resolve_db_path(r.root, args.db)
    info = {
        "workspace_id": None,
        "workspace_root": str(r.root),
        "resolved_by": r.resolved_by,
        "weak": r.weak,
        "worktree": r.worktree,
        "worktree_name": r.worktree_name,
        "worktree_root": str(r.worktree_root),
        "branch": r.branch,
        "db_path": str(db),
        "warnings": list(r.warnings),
    }
    lines = [
        "workspace  (no store yet: the first write mints the id)",
        f"root       {r.root}  (resolved by {r.resolved_by})",
        f"worktree   {r.worktree}  ({r.worktree_root})",
        f"branch     {r.branch or '(none)'}",
        f"database   {db}  (does not exist yet)",
    ] + [f"warning    {w}" for w in r.warnings]
    emit(args, info, "\n".join(lines))
    return 0


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    where = sub.add_parser("where", parents=[jp], help="show the resolved workspace and database")
    where.set_defaults(func=cmd_where)
