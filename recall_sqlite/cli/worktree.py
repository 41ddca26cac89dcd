"""`recall-sqlite worktree list`: every worktree of the workspace, its root, its entries (the
sessions reads show there, and every stored version), the imported files filed under it
and whether its root still exists (a worktree whose directory is gone keeps its history;
`import --map BUCKET=WORKTREE` re-homes a file's rows, and this list shows where they went)."""

from __future__ import annotations

import argparse

from ._common import clean, emit, no_store, open_for_read, open_from_args

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


def cmd_forget(args: argparse.Namespace) -> int:
    with open_from_args(args) as store:
        done = store.forget_worktree(args.name, scrub_sources=args.scrub_sources)
    data = done.to_dict()
    lines = [
        f"Forgot worktree {clean(done.key)}: "
        + (
            f"{len(done.forget.entries)} entry version(s) removed"
            if done.forget is not None
            else "it held no entries"
        )
        + ("; its record is gone." if done.removed else "; kept as gone (imported files name it).")
    ]
    if done.forget is not None:
        from .journal import copies_lines

        lines += copies_lines(done.forget)
    emit(args, data, "\n".join(lines))
    return 1 if done.forget is not None and done.forget.file_errors else 0


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    wt = sub.add_parser("worktree", help="the workspace's worktrees")
    wsub = wt.add_subparsers(dest="worktree_command", required=True)
    ls = wsub.add_parser(
        "list", parents=[jp], help="every worktree: key, root, entries, whether the root exists"
    )
    ls.set_defaults(func=cmd_list)
    fg = wsub.add_parser(
        "forget",
        parents=[jp],
        help="forget a worktree and every entry it holds (as journal forget does)",
    )
    fg.add_argument("name", metavar="NAME", help="the worktree's key (see `worktree list`) or name")
    fg.add_argument(
        "--scrub-sources",
        action="store_true",
        help="also remove its entries' copies in synapt buckets the store did not write",
    )
    fg.set_defaults(func=cmd_forget)
