"""What every command family shares: the top-level parser and its global options, opening
the store, printing (text or --json), the readable form of an entry and of a scope, and the
one place errors become exit codes."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

from ..errors import RecallError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

__all__ = ["UsageError", "emit", "format_entry", "describe_elsewhere", "open_from_args",
           "nonneg_int", "positive_int", "run"]


def open_from_args(args: argparse.Namespace, *, read_only: bool = False) -> Any:
    from ..store import open_store
    return open_store(args.cwd, db_path=args.db, read_only=read_only)


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    elif text:
        sys.stdout.write(text.rstrip("\n") + "\n")


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter with the terminal width taken from os directly: the stock one
    imports shutil (and with it zlib, bz2, lzma) for that on every parser built, which is
    a tenth of a hook's start-up."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            width = _columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def _columns() -> int:
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class Parser(argparse.ArgumentParser):
    """Every parser of the command (subparsers inherit the class) uses _Formatter."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def json_parent() -> argparse.ArgumentParser:
    parent = Parser(add_help=False)
    parent.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parent


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
    """The line every read ends with: what was shown of how many, and what lies outside."""
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


def build_parser(families: Sequence[str]) -> argparse.ArgumentParser:
    parser = Parser(
        prog="recall-sqlite",
        description="Session memory of coding agents in one SQLite database per workspace.",
    )
    parser.add_argument("--cwd", metavar="DIR", help="act as if run in DIR")
    parser.add_argument("--db", metavar="PATH", help="database file (default: "
                        "<workspace>/.synapt/recall/recall-sqlite.db or $RECALL_SQLITE_DB)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    jp = json_parent()
    for name in families:
        importlib.import_module(f"{__package__}.{name}").register(sub, jp)
    return parser


def run(argv: Sequence[str], families: Sequence[str]) -> int:
    args = build_parser(families).parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.func
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
