"""`recall-sqlite export`: the journal back to a file, as a synapt 0.30.0 bucket (roll back,
hand over) or as NDJSON with every field (other tools). One library call plus formatting."""

from __future__ import annotations

import argparse
import sys

from ._common import emit, open_from_args

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "export",
        parents=[jp],
        help="write the journal as a synapt bucket or as NDJSON",
        description="synapt: every stored version of one worktree, each line as synapt "
        "0.30.0's append_entry writes it, so synapt reads the same answers as the "
        "store. ndjson: one entry a line with id, worktree, branch, timestamps and "
        "every field. Never replaces an existing file unless --force.",
    )
    p.add_argument(
        "--format", choices=("synapt", "ndjson"), default="synapt", help="default: synapt"
    )
    scope = p.add_mutually_exclusive_group()
    scope.add_argument(
        "--worktree",
        metavar="W",
        help="a worktree key (see `worktree list`); default: the current one",
    )
    scope.add_argument("--all-worktrees", action="store_true", help="the whole workspace")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="the file to write ('-' for standard output)",
    )
    where.add_argument(
        "--to-buckets",
        action="store_true",
        help="switching back to stock synapt: append every worktree's entries (or"
        " --worktree W's) to the bucket synapt reads from its root, keeping the lines"
        " already there",
    )
    p.add_argument("--force", action="store_true", help="replace FILE if it exists")
    p.set_defaults(func=cmd_export)


def cmd_to_buckets(args: argparse.Namespace) -> int:
    from ..errors import UsageError

    if args.format != "synapt" or args.all_worktrees or args.force:
        raise UsageError("--to-buckets writes synapt buckets of every worktree (or --worktree W)")
    with open_from_args(args) as store:
        report = store.legacy.export_to_buckets(worktree=args.worktree)
    data = report.to_dict()
    lines = []
    for b in data["buckets"]:
        lines.append(
            f"{b['path']}: {b['appended']} line(s) appended to {b['had']}"
            f" (worktree {', '.join(b['worktrees'])})"
            + (
                f"; {b['unknown']} line(s) there are not in the store (run import)"
                if b["unknown"]
                else ""
            )
        )
    lines += [f"skipped worktree {s['worktree']}: {s['why']}" for s in data["skipped"]]
    lines.append(
        f"Appended {data['appended']} line(s): stock synapt started in each worktree's root"
        " now reads what the store holds for it."
    )
    emit(args, data, "\n".join(lines))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    if args.to_buckets:
        return cmd_to_buckets(args)
    with open_from_args(args, read_only=True) as store:
        report = store.legacy.export(
            args.output,
            format=args.format,
            worktree=args.worktree,
            all_worktrees=args.all_worktrees,
            force=args.force,
        )
    data = report.to_dict()
    scope = "all worktrees" if data["all_worktrees"] else f"worktree {data['worktrees'][0]}"
    text = (
        f"Wrote {data['lines']} line(s) ({data['sessions']} session(s), {scope}) as"
        f" {data['format']} to "
        + ("standard output" if data["path"] == "-" else data["path"])
        + "."
    )
    if data["extra_dropped"]:
        text += (
            f" {data['extra_dropped']} entr(y/ies) carry fields synapt does not know;"
            " its format leaves them out (--format ndjson keeps them)."
        )
    if data["path"] == "-":
        # Standard output holds the export itself: the report goes to stderr.
        saved, sys.stdout = sys.stdout, sys.stderr
        try:
            emit(args, data, text)
        finally:
            sys.stdout = saved
    else:
        emit(args, data, text)
    return 0
