"""`recall-sqlite cursor show|unread|advance|reset`: per-branch reading positions."""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from ..cursors import Cursor, CursorMove, UnreadResult
from ..scope import scoped, unstored_scope
from . import _common as cli


def _branch(args: argparse.Namespace, store: Any) -> str:
    # Default to the branch checked out where the command runs, as journal writes do.
    return str(args.branch) if args.branch is not None else str(store.workspace.branch)


def _branch_text(branch: str) -> str:
    return repr(branch) if branch else "(none)"


def _to(text: str) -> int | str:
    """A position (an integer) or an entry id (32 hex digits, even if all of them are
    decimal digits); the library validates both."""
    if len(text.strip()) == 32:
        return text.strip()
    try:
        return int(text)
    except ValueError:
        return text


def _cursor_line(c: Cursor, unread: int | None = None) -> str:
    where = (
        f"{cli.clean(c.consumer)} on branch {cli.clean(_branch_text(c.branch))}:"
        f" position {c.position} of {c.end}"
    )
    if unread is not None:
        where += f", {unread} unread"
    elif c.caught_up:
        where += ", caught up"
    if c.updated_at is None:
        where += " (never advanced)"
    else:
        where += f" (moved {c.updated_at})"
    return where


def cmd_show(args: argparse.Namespace) -> int:
    store = cli.open_for_read(args)
    if store is None:
        return cli.no_store(args, cursors=[])
    with store:
        if args.consumer is None:
            branch = None if args.all_branches else _branch(args, store)
            cursors = store.cursors.list(branch)
            data: Any = {"cursors": [c.to_dict() for c in cursors]}
            scope = "any branch" if branch is None else f"branch {_branch_text(branch)}"
            text = "\n".join(_cursor_line(c) for c in cursors) or f"No cursors on {scope}."
        else:
            branch = _branch(args, store)
            cursor = store.cursors.get(args.consumer, branch)
            unread = store.cursors.count_unread(args.consumer, branch)
            data = {**cursor.to_dict(), "unread": unread}
            text = _cursor_line(cursor, unread)
    cli.emit(args, data, text)
    return 0


def _advance_hint(r: UnreadResult) -> str:
    return (
        f"recall-sqlite cursor advance {shlex.quote(r.consumer)}"
        f" --branch {shlex.quote(r.branch)} --to {r.next_position}"
    )


def cmd_unread(args: argparse.Namespace) -> int:
    # --take writes (it moves the cursor); without it this only reads.
    store = cli.open_from_args(args) if args.take else cli.open_for_read(args)
    if store is None:
        from ..store import unstored_workspace

        here = unstored_workspace(args.cwd, db_path=args.db)
        branch = here.branch if args.branch is None else str(args.branch)
        # A cursor covers its branch in every worktree.
        scope = unstored_scope(here.worktree, branch, all_worktrees=True)
        return cli.no_store(args, entries=[], **scoped(scope))
    with store:
        branch = _branch(args, store)
        cursors = store.cursors
        result: UnreadResult = (cursors.take if args.take else cursors.unread)(
            args.consumer, branch, limit=args.limit
        )
    data = result.to_dict()
    blocks = []
    for item in data["entries"]:
        mark = "  (richer version of a session read before)" if item["revision"] else ""
        blocks.append(f"[position {item['position']}]{mark}\n{cli.format_entry(item)}")
    head = (
        f"{len(result)} unread for {cli.clean(result.consumer)}"
        f" on branch {cli.clean(_branch_text(branch))}"
        f" after position {result.position}" + (" (more remain)" if result.more else "")
    )
    if args.take:
        tail = f"Cursor advanced to {result.next_position}."
    elif result.next_position > result.position:
        tail = f"Next position {result.next_position}; mark read with: {_advance_hint(result)}"
    else:
        tail = "Nothing to mark read."
    cli.emit(args, data, "\n\n".join([head, *blocks, tail]))
    return 0


def _move_text(verb: str, move: CursorMove) -> str:
    c = move.cursor
    who = f"{cli.clean(c.consumer)} on branch {cli.clean(_branch_text(c.branch))}"
    if move.moved:
        text = f"{verb} {who}: {move.previous} -> {c.position}"
    else:
        text = f"{who} stays at {c.position}"
        if move.requested < c.position:
            text += f" (already past {move.requested}; advance never moves back, use reset)"
    return text + f" (branch end {c.end})"


def cmd_advance(args: argparse.Namespace) -> int:
    with cli.open_from_args(args) as store:
        move = store.cursors.advance(args.consumer, _branch(args, store), to=_to(args.to))
    cli.emit(args, move.to_dict(), _move_text("Advanced", move))
    return 0


def cmd_reset(args: argparse.Namespace) -> int:
    with cli.open_from_args(args) as store:
        move = store.cursors.reset(args.consumer, _branch(args, store), to=_to(args.to))
    cli.emit(args, move.to_dict(), _move_text("Reset", move))
    return 0


def register(subparsers: Any, json_parent: argparse.ArgumentParser) -> None:
    cursor = subparsers.add_parser("cursor", help="per-branch reading positions of consumers")
    sub = cursor.add_subparsers(dest="cursor_command", metavar="ACTION")
    sub.required = True
    branch_help = "the branch (default: the current worktree's branch; '' = none)"

    show = sub.add_parser(
        "show", parents=[json_parent], help="one consumer's position, or every cursor of a branch"
    )
    show.add_argument("consumer", nargs="?")
    show.add_argument("--branch", help=branch_help)
    show.add_argument(
        "--all-branches", action="store_true", help="without CONSUMER: cursors of every branch"
    )
    show.set_defaults(func=cmd_show)

    unread = sub.add_parser(
        "unread", parents=[json_parent], help="entries the consumer has not read, oldest first"
    )
    unread.add_argument("consumer")
    unread.add_argument("--branch", help=branch_help)
    unread.add_argument("--limit", type=cli.positive_int, help="at most N entries")
    unread.add_argument(
        "--take",
        action="store_true",
        help="also mark them read, atomically (at-most-once delivery)",
    )
    unread.set_defaults(func=cmd_unread)

    advance = sub.add_parser(
        "advance",
        parents=[json_parent],
        help="mark entries read up to a position (never moves back)",
    )
    advance.add_argument("consumer")
    advance.add_argument("--branch", help=branch_help)
    advance.add_argument(
        "--to",
        required=True,
        metavar="POSITION|ENTRY_ID",
        help="the journal position (or an entry's) read up to; never moves back",
    )
    advance.set_defaults(func=cmd_advance)

    reset = sub.add_parser(
        "reset",
        parents=[json_parent],
        help="move a cursor anywhere, backwards included (default: 0)",
    )
    reset.add_argument("consumer")
    reset.add_argument("--branch", help=branch_help)
    reset.add_argument(
        "--to",
        default="0",
        metavar="POSITION|ENTRY_ID",
        help="the position to set, backwards too (default: 0, unread from the start)",
    )
    reset.set_defaults(func=cmd_reset)
