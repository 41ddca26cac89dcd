"""`recall-sqlite journal search` and `recall-sqlite summary search`: full-text search with
the scope line of `journal read`. Hybrid search needs a query vector, which only a host
that embeds has, so it is library-only."""

from __future__ import annotations

import argparse
import sys

from . import _common as cli

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _marks() -> tuple[str, str]:
    """Bold on a terminal; `**` markers where the output is piped (still readable)."""
    if sys.stdout.isatty():
        return "\x1b[1m", "\x1b[0m"
    return "**", "**"


def cmd_journal_search(args: argparse.Namespace) -> int:
    with cli.open_from_args(args) as store:
        result = store.journal.search(
            " ".join(args.query),
            args.n,
            branch=args.branch,
            all_worktrees=args.all_worktrees,
            meaningful=args.meaningful,
        )
        data = result.to_dict()  # inside: snippets are read on first use
    open_, close = _marks()
    body: list[str] = []
    for hit, e in zip(result.hits, data["entries"], strict=True):
        head = f"## {e['timestamp']}  [{e['worktree']}"
        head += f" @ {e['branch']}]" if e["branch"] else "]"
        lines = [
            head,
            f"id {e['id']}"
            + (f"  session {e['session_id']}" if e["session_id"] else "")
            + f"  score {hit.score:.3g}",
        ]
        if e["focus"] and hit.field != "focus":
            lines.append(f"Focus: {e['focus']}")
        label = (hit.field or "text").replace("_", " ")
        lines.append(f"{label}: {hit.snippet.marked(open_, close)}")
        body.append("\n".join(lines))
    if not body:
        body.append(_nothing(result.query.terms, "journal entries"))
    body.append(
        cli.describe_elsewhere(
            data["scope"], data["total"], len(data["entries"]), data["elsewhere"]
        )
    )
    cli.emit(args, data, "\n\n".join(body))
    return 0


def _nothing(terms: Any, what: str) -> str:
    if not terms:
        return "Nothing to search for: the query has no words."
    return f"No {what} in scope match {' '.join(str(t) for t in terms)}."


def cmd_summary_search(args: argparse.Namespace) -> int:
    from ..summaries import ALL_BRANCHES
    from .summaries import format_summary

    if args.all_branches and args.branch is not None:
        raise cli.UsageError("give --branch or --all-branches, not both")
    if args.workspace_wide and args.branch is not None:
        raise cli.UsageError("give --branch or --workspace-wide, not both")
    branch = None if args.workspace_wide else (ALL_BRANCHES if args.branch is None else args.branch)
    with cli.open_from_args(args) as store:
        result = store.summaries.search(
            " ".join(args.query),
            args.n,
            branch=branch,
            kind=args.kind,
            include_superseded=args.superseded,
        )
        data = result.to_dict()  # inside: snippets are read on first use
    open_, close = _marks()
    body = [
        format_summary(h.summary).split("\n", 1)[0]
        + f"  score {h.score:.3g}\n"
        + h.snippet.marked(open_, close)
        for h in result.hits
    ]
    if not body:
        body.append(_nothing(result.query.terms, "summaries"))
    line = f"{len(result.hits)} of {result.total} in scope ({result.scope.describe()})"
    if result.elsewhere.other_branches:
        line += (
            f"; {result.elsewhere.other_branches} more in other scopes"
            " (drop --branch to see every scope)"
        )
    body.append(line)
    cli.emit(args, data, "\n\n".join(body))
    return 0


def add_journal_search(journal_subparsers: Any, json_parent: argparse.ArgumentParser) -> None:
    s = journal_subparsers.add_parser(
        "search",
        parents=[json_parent],
        help="full-text search, best first, one version per session",
        description='Every word must match; "a phrase" in double quotes and a prefix* keep '
        "their meaning, anything else typed is searched as words.",
    )
    s.add_argument(
        "query",
        nargs="+",
        help="the words to look for (put -- before a query that starts with '-')",
    )
    s.add_argument("-n", type=cli.nonneg_int, default=10)
    s.add_argument("--branch")
    s.add_argument("--all-worktrees", action="store_true")
    s.add_argument("--meaningful", action="store_true")
    s.set_defaults(func=cmd_journal_search)


def add_summary_search(summary_subparsers: Any, json_parent: argparse.ArgumentParser) -> None:
    s = summary_subparsers.add_parser(
        "search", parents=[json_parent], help="full-text search of summaries, best first"
    )
    s.add_argument(
        "query",
        nargs="+",
        help="the words to look for (put -- before a query that starts with '-')",
    )
    s.add_argument("-n", type=cli.nonneg_int, default=10)
    s.add_argument("--branch", help="one branch's summaries ('' = none); default: every scope")
    s.add_argument(
        "--workspace-wide", action="store_true", help="only the workspace-wide summaries"
    )
    s.add_argument("--all-branches", action="store_true", help="every scope (the default)")
    s.add_argument("--kind")
    s.add_argument("--superseded", action="store_true", help="include superseded summaries")
    s.set_defaults(func=cmd_summary_search)
