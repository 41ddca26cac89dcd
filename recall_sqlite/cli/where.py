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
    from ..store import unstored_workspace

    w = unstored_workspace(args.cwd, db_path=args.db)
    lines = [
        "workspace  (no store yet: the first write mints the id)",
        f"root       {w.root}  (resolved by {w.resolved_by})",
        f"worktree   {w.worktree}  ({w.worktree_root})",
        f"branch     {w.branch or '(none)'}",
        f"database   {w.db_path}  (does not exist yet)",
    ] + [f"warning    {x}" for x in w.warnings]
    emit(args, w.to_dict(), "\n".join(lines))
    return 0


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    where = sub.add_parser("where", parents=[jp], help="show the resolved workspace and database")
    where.set_defaults(func=cmd_where)
