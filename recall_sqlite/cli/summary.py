"""`recall-sqlite summary add|latest|list|remove|search`: summaries with store-assigned times."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..scope import scoped
from ..summaries import ALL_BRANCHES, DEFAULT_KIND, CoverRange, Summary, SummaryScope
from . import _common as cli

if TYPE_CHECKING:
    from ..summaries import BranchFilter, Covers


def _scope(s: Summary) -> str:
    if s.branch is None:
        return "workspace-wide"
    return f"branch {s.branch!r}" if s.branch else "branch (none)"


def _entries(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def format_summary(s: Summary) -> str:
    state = "current" if s.current else f"superseded by #{s.superseded_by}"
    c = cli.clean  # stored text may carry terminal escapes: shown escaped
    lines = [f"## #{s.id}  {c(s.created_at)}  [{c(_scope(s))}, kind {c(repr(s.kind))}, {state}]"]
    if s.author:
        lines.append(f"by {c(s.author)}")
    if s.entry_ids:
        lines.append(f"covers {_entries(len(s.entry_ids))} (through position {s.covered_through})")
    elif s.covers_from is not None:
        lines.append(f"covers positions {s.covers_from}..{s.covers_to}")
    else:
        lines.append(f"covers the journal through position {s.covered_through}")
    if s.stale:
        lines.append(f"STALE: {_entries(s.newer_entries)} arrived since")
    lines.append(c(s.text))
    return "\n".join(lines)


def _filter(args: argparse.Namespace) -> BranchFilter:
    if args.all_branches:
        if args.branch is not None:
            raise cli.UsageError("give --branch or --all-branches, not both")
        return ALL_BRANCHES
    branch: str | None = args.branch
    return branch


def _filter_text(branch: BranchFilter, kind: str | None) -> str:
    if branch is ALL_BRANCHES:
        where = "every scope"
    elif branch is None:
        where = "workspace-wide summaries (--branch NAME or --all-branches for others)"
    else:
        where = f"branch {branch!r}" if branch else "branch (none)"
    return f"scope: {where}" + (f", kind {kind!r}" if kind is not None else "")


def _range_end(text: str) -> int | str:
    if len(text) == 32:
        return text
    try:
        return int(text)
    except ValueError:
        return text


def _covers(args: argparse.Namespace) -> Covers:
    if args.covers and args.range:
        raise cli.UsageError("give --covers or --range, not both")
    if args.range:
        first, sep, last = args.range.partition(":")
        if not sep:
            raise cli.UsageError(f"--range must be FIRST:LAST, got {args.range!r}")
        return CoverRange(_range_end(first), _range_end(last))
    covers: list[str] = args.covers
    return covers or None


def cmd_add(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    covers = _covers(args)
    with cli.open_from_args(args) as store:
        written = store.summaries.write(
            text, branch=args.branch, kind=args.kind, covers=covers, author=args.author
        )
    assert written.summary is not None  # a write always has its summary
    cli.emit(args, written.to_dict(), "Summary stored.\n" + format_summary(written.summary))
    return 0


def cmd_latest(args: argparse.Namespace) -> int:
    branch = _filter(args)
    store = cli.open_for_read(args)
    if store is None:
        return cli.no_store(args, summary=None, **scoped(SummaryScope.of(None, branch, args.kind)))
    with store:
        answer = store.summaries.read_latest(branch, args.kind)
    summary = answer.summary
    text = "No summary." if summary is None else format_summary(summary)
    cli.emit(args, answer.to_dict(), f"{text}\n({_filter_text(branch, args.kind)})")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    branch = _filter(args)
    if args.stale and args.branch is None:
        # Which summaries need rewriting is a question about every scope by default.
        branch = ALL_BRANCHES
    store = cli.open_for_read(args)
    if store is None:
        return cli.no_store(args, summaries=[])
    with store:
        if args.stale:
            found = store.summaries.stale(branch, args.kind)
        else:
            found = store.summaries.list(
                branch,
                args.kind,
                since=args.since,
                until=args.until,
                limit=args.limit,
                current_only=args.current,
            )
    data = [s.to_dict() for s in found]
    empty = "No stale summaries." if args.stale else "No summaries."
    body = "\n\n".join(format_summary(s) for s in found) or empty
    cli.emit(args, data, f"{body}\n({_filter_text(branch, args.kind)})")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    with cli.open_from_args(args) as store:
        gone = store.summaries.remove(args.id)
    cli.emit(
        args,
        gone.to_dict(),
        f"Removed summary #{gone.id} ({_scope(gone)}, kind "
        f"{gone.kind!r}) with its source links and vectors.",
    )
    return 0


def cmd_summary_search(args: argparse.Namespace) -> int:
    if args.all_branches and args.branch is not None:
        raise cli.UsageError("give --branch or --all-branches, not both")
    if args.workspace_wide and args.branch is not None:
        raise cli.UsageError("give --branch or --workspace-wide, not both")
    branch = None if args.workspace_wide else (ALL_BRANCHES if args.branch is None else args.branch)
    store = cli.open_for_read(args)
    if store is None:
        return cli.no_store(args, summaries=[], total=0)
    with store:
        result = store.summaries.search(
            " ".join(args.query),
            args.n,
            branch=branch,
            kind=args.kind,
            include_superseded=args.superseded,
        )
        data = result.to_dict()  # inside: snippets are read on first use
    open_, close = cli.search_marks()
    body = [
        format_summary(h.summary).split("\n", 1)[0]
        + f"  score {h.score:.3g}\n"
        + h.snippet.marked(open_, close, escape=cli.clean)
        for h in result.hits
    ]
    if not body:
        body.append(cli.nothing_found(result.query.terms, "summaries"))
    line = f"{len(result.hits)} of {result.total} in scope ({result.scope.describe()})"
    if result.elsewhere.other_branches:
        line += (
            f"; {result.elsewhere.other_branches} more in other scopes"
            " (drop --branch to see every scope)"
        )
    body.append(line)
    cli.emit(args, data, "\n\n".join(body))
    return 0


def add_summary_search(summary_subparsers: Any, json_parent: argparse.ArgumentParser) -> None:
    s = summary_subparsers.add_parser(
        "search", parents=[json_parent], help="full-text search of summaries, best first"
    )
    s.add_argument(
        "query",
        nargs="+",
        help="the words to look for (put -- before a query that starts with '-')",
    )
    s.add_argument("-n", type=cli.nonneg_int, default=10, help="at most N hits (default: 10)")
    s.add_argument("--branch", help="one branch's summaries ('' = none); default: every scope")
    s.add_argument(
        "--workspace-wide", action="store_true", help="only the workspace-wide summaries"
    )
    s.add_argument("--all-branches", action="store_true", help="every scope (the default)")
    s.add_argument("--kind", help="only summaries of this kind")
    s.add_argument("--superseded", action="store_true", help="include superseded summaries")
    s.set_defaults(func=cmd_summary_search)


def register(subparsers: Any, json_parent: argparse.ArgumentParser) -> None:
    summary = subparsers.add_parser("summary", help="summaries of the journal")
    sub = summary.add_subparsers(dest="summary_command", metavar="ACTION")
    sub.required = True
    branch_help = "a branch ('' = none); default: workspace-wide summaries"

    add = sub.add_parser(
        "add",
        parents=[json_parent],
        help="store a summary; it supersedes the current one of its scope",
    )
    add.add_argument("text", help="the summary ('-' reads it from stdin)")
    add.add_argument("--branch", help=branch_help)
    add.add_argument("--kind", default=DEFAULT_KIND, help=f"default: {DEFAULT_KIND}")
    add.add_argument(
        "--covers",
        action="append",
        default=[],
        metavar="ENTRY_ID",
        help="an entry it summarises (repeatable)",
    )
    add.add_argument(
        "--range",
        metavar="FIRST:LAST",
        help="the positions (or entry ids) it summarises, inclusive",
    )
    add.add_argument("--author", help="who or which model wrote it")
    add.set_defaults(func=cmd_add)

    for name, func, helptext in (
        ("latest", cmd_latest, "the newest summary of a scope"),
        ("list", cmd_list, "summaries, newest first"),
    ):
        p = sub.add_parser(name, parents=[json_parent], help=helptext)
        p.add_argument("--branch", help=branch_help)
        p.add_argument("--all-branches", action="store_true", help="every scope")
        p.add_argument("--kind", help="only summaries of this kind")
        p.set_defaults(func=func)
        if name == "list":
            p.add_argument("--since", help="created at or after (ISO-8601)")
            p.add_argument("--until", help="created before (ISO-8601)")
            p.add_argument(
                "--limit", type=cli.positive_int, default=20, help="at most N (default: 20)"
            )
            p.add_argument("--current", action="store_true", help="hide superseded ones")
            p.add_argument(
                "--stale",
                action="store_true",
                help="only current summaries with newer entries (every scope unless --branch)",
            )

    remove = sub.add_parser(
        "remove", parents=[json_parent], help="delete a summary, its source links and vectors"
    )
    remove.add_argument("id", type=cli.positive_int)
    remove.set_defaults(func=cmd_remove)
    add_summary_search(sub, json_parent)
