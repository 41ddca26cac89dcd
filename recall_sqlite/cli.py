"""The `recall-sqlite` command. Thin: every command is one library call plus formatting.
User mistakes print one line to stderr and exit non-zero; never a traceback."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .errors import RecallError

# Each module defines register(subparsers, json_parent) and adds its own commands, so the
# table families keep their CLI beside nothing else's; imported lazily by name.
EXTENSIONS: tuple[str, ...] = (
    "recall_sqlite.cli_summaries",
    "recall_sqlite.cli_cursors",
    "recall_sqlite.cli_vectors",
    "recall_sqlite.cli_legacy",
)

Handler = Callable[[argparse.Namespace], int]


class UsageError(RecallError):
    """A command line that parses but makes no sense."""


def open_from_args(args: argparse.Namespace, *, read_only: bool = False) -> Any:
    from .store import open_store
    return open_store(args.cwd, db_path=args.db, read_only=read_only)


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    elif text:
        sys.stdout.write(text.rstrip("\n") + "\n")


def json_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parent


# -- where ---------------------------------------------------------------------------


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


# -- journal -------------------------------------------------------------------------


def format_entry(e: dict[str, Any]) -> str:
    head = f"## {e['timestamp']}  [{e['worktree']}"
    head += f" @ {e['branch']}]" if e["branch"] else "]"
    lines = [head, f"id {e['id']}" + (f"  session {e['session_id']}" if e["session_id"] else "")]
    if e["focus"]:
        lines.append(f"Focus: {e['focus']}")
    for label, key in (("Next", "next_steps"), ("Decisions", "decisions"), ("Done", "done")):
        if e[key]:
            lines.append(f"{label}:")
            lines.extend(f"  - {item}" for item in e[key])
    if e["files_modified"]:
        lines.append(f"Files: {len(e['files_modified'])}")
    return "\n".join(lines)


def describe_elsewhere(scope: dict[str, Any], total: int, shown: int,
                       elsewhere: dict[str, int]) -> str:
    parts = [f"{shown} of {total} in scope ({_scope_text(scope)})"]
    if elsewhere["other_worktrees"]:
        parts.append(f"{elsewhere['other_worktrees']} more in other worktrees (--all-worktrees)")
    if elsewhere["other_branches"]:
        parts.append(f"{elsewhere['other_branches']} more on other branches")
    return "; ".join(parts)


def _scope_text(scope: dict[str, Any]) -> str:
    where = "all worktrees" if scope["worktree"] is None else f"worktree {scope['worktree']}"
    if scope["branch"] is not None:
        where += f", branch {scope['branch'] or '(none)'}"
    if scope.get("meaningful"):
        where += ", meaningful only"
    return where


def cmd_journal_write(args: argparse.Namespace) -> int:
    with open_from_args(args) as store:
        result = store.journal.write(
            focus=args.focus or "", done=args.done, decisions=args.decision,
            next_steps=args.next, session_id=args.session_id or "", branch=args.branch,
            timestamp=args.timestamp, files_modified=args.file,
        )
    data = result.to_dict()
    carry = result.carry
    text = [("Journal entry written." if result.created else "Identical entry already stored.")
            + f" id {result.id}", format_entry(data["entry"])]
    text.append(f"Carry-forward: {carry.carried} carried, {carry.retired_by_done} retired by done,"
                f" {carry.retired_earlier} retired earlier, {carry.withheld} withheld.")
    emit(args, data, "\n".join(text))
    return 0


def cmd_journal_read(args: argparse.Namespace) -> int:
    with open_from_args(args) as store:
        result = store.journal.read(args.n, branch=args.branch,
                                    all_worktrees=args.all_worktrees, meaningful=args.meaningful)
    data = result.to_dict()
    body = [format_entry(e) for e in data["entries"]] or ["No journal entries in scope."]
    body.append(describe_elsewhere(data["scope"], data["total"], len(data["entries"]),
                                   data["elsewhere"]))
    emit(args, data, "\n\n".join(body))
    return 0


def cmd_journal_pending(args: argparse.Namespace) -> int:
    with open_from_args(args) as store:
        result = store.journal.pending_next_steps(all_worktrees=args.all_worktrees)
    data = result.to_dict()
    lines = ["Pending next steps:"] + [f"  - {p}" for p in result.pending] if result.pending \
        else ["No pending next steps."]
    if result.elsewhere.other_worktrees:
        lines.append(f"({result.elsewhere.other_worktrees} entries in other worktrees not "
                     "considered; --all-worktrees)")
    emit(args, data, "\n".join(lines))
    return 0


def _int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= minimum, with a one-line error otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}")
        return value
    return parse


nonneg_int = _int_at_least(0)
positive_int = _int_at_least(1)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recall-sqlite",
        description="Session memory of coding agents in one SQLite database per workspace.",
    )
    parser.add_argument("--cwd", metavar="DIR", help="act as if run in DIR")
    parser.add_argument("--db", metavar="PATH", help="database file (default: "
                        "<workspace>/.synapt/recall/recall-sqlite.db or $RECALL_SQLITE_DB)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    jp = json_parent()

    where = sub.add_parser("where", parents=[jp], help="show the resolved workspace and database")
    where.set_defaults(func=cmd_where)

    journal = sub.add_parser("journal", help="the session journal")
    jsub = journal.add_subparsers(dest="journal_command", metavar="ACTION")
    jsub.required = True
    w = jsub.add_parser("write", parents=[jp], help="write an entry (carries next steps forward)")
    w.add_argument("--focus")
    w.add_argument("--done", action="append", default=[], metavar="ITEM")
    w.add_argument("--decision", action="append", default=[], metavar="ITEM")
    w.add_argument("--next", action="append", default=[], metavar="ITEM")
    w.add_argument("--file", action="append", default=[], metavar="PATH",
                   help="a file this session modified")
    w.add_argument("--session-id")
    w.add_argument("--branch", help="default: the worktree's current branch")
    w.add_argument("--timestamp", help="ISO-8601 (default: now, UTC)")
    w.set_defaults(func=cmd_journal_write)
    r = jsub.add_parser("read", parents=[jp], help="newest entries, one per session")
    r.add_argument("-n", type=nonneg_int, default=5)
    r.add_argument("--branch")
    r.add_argument("--all-worktrees", action="store_true")
    r.add_argument("--meaningful", action="store_true")
    r.set_defaults(func=cmd_journal_read)
    p = jsub.add_parser("pending", parents=[jp], help="unresolved next steps")
    p.add_argument("--all-worktrees", action="store_true")
    p.set_defaults(func=cmd_journal_pending)
    importlib.import_module("recall_sqlite.cli_search").add_journal_search(jsub, jp)

    for name in EXTENSIONS:
        importlib.import_module(name).register(sub, jp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.func
    try:
        return handler(args)
    except RecallError as exc:
        sys.stderr.write(f"recall-sqlite: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("recall-sqlite: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
