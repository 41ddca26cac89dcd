"""`recall-sqlite worktree list`: every worktree of the workspace, its root, its entries (the
sessions reads show there, and every stored version), the imported files filed under it
and whether its root still exists (a worktree whose directory is gone keeps its history;
`import --map BUCKET=WORKTREE` re-homes a file's rows, and this list shows where they went)."""

from __future__ import annotations

import argparse

from ._common import emit, no_store, open_for_read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cmd_list(args: argparse.Namespace) -> int:
    store = open_for_read(args)
    if store is None:
        return no_store(args, worktrees=[])
    with store:
        sources = store.legacy.sources_by_worktree()
        rows = [{**w.to_dict(), "sources": sources.get(w.key, 0)} for w in store.worktrees()]
    head = ("KEY", "NAME", "ENTRIES", "VERSIONS", "SOURCES", "ROOT")
    table = [head] + [
        (
            ("* " if r["current"] else "  ") + r["key"],
            r["name"],
            str(r["entries"]),
            str(r["versions"]),
            str(r["sources"]),
            (r["root"] or "(imported only)")
            + ("" if r["root_exists"] or not r["root"] else "  (gone)"),
        )
        for r in rows
    ]
    widths = [max(len(t[i]) for t in table) for i in range(len(head))]
    text = "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(t, widths, strict=True)).rstrip() for t in table
    )
    emit(args, {"worktrees": rows}, text)
    return 0


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    wt = sub.add_parser("worktree", help="the workspace's worktrees")
    wsub = wt.add_subparsers(dest="worktree_command", required=True)
    ls = wsub.add_parser(
        "list", parents=[jp], help="every worktree: key, root, entries, whether the root exists"
    )
    ls.set_defaults(func=cmd_list)
