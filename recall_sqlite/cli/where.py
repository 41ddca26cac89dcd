"""`recall-sqlite where`: the resolved workspace, worktree, branch and database."""

from __future__ import annotations

import argparse

from ._common import emit, open_from_args

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cmd_where(args: argparse.Namespace) -> int:
    with open_from_args(args) as store:
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


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    where = sub.add_parser("where", parents=[jp], help="show the resolved workspace and database")
    where.set_defaults(func=cmd_where)
