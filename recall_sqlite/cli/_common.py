"""What every command family shares: the top-level parser and its global options, and
argparse's side of it; the rest (opening the store, printing, exit codes) is in
cli/_show.py, re-exported here for the command modules."""

from __future__ import annotations

import argparse
import os
import sys
import time

from ..errors import UsageError
from ._show import (
    NO_STORE,
    clean,
    counted,
    describe_elsewhere,
    emit,
    format_entry,
    guarded,
    int_at_least,
    no_store,
    nothing_found,
    open_for_read,
    open_from_args,
    search_marks,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    # A command module's `register(subparsers, json_parent)`.
    Register = Callable[[Any, argparse.ArgumentParser], None]

__all__ = [
    "NO_STORE",
    "UsageError",
    "clean",
    "counted",
    "emit",
    "format_entry",
    "describe_elsewhere",
    "open_for_read",
    "open_from_args",
    "no_store",
    "nothing_found",
    "nonneg_int",
    "positive_int",
    "run",
    "search_marks",
]


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter with the terminal width taken from os directly: the stock one
    imports shutil (and with it zlib, bz2, lzma) for that on every parser built, a part of
    a hook's start-up worth saving (bench/RESULTS.md, row 'CLI start: shutil')."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
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

    def error(self, message: str) -> Any:  # argparse's signature says NoReturn
        # One line, like every other error (argparse would print the whole usage first).
        sys.stderr.write(f"{self.prog}: {clean(message)} (see {self.prog} --help)\n")
        raise SystemExit(2)


def json_parent() -> argparse.ArgumentParser:
    parent = Parser(add_help=False)
    parent.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parent


def _int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= minimum, with a one-line error otherwise."""

    def parse(text: str) -> int:
        try:
            return int_at_least(text, minimum)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


nonneg_int = _int_at_least(0)
positive_int = _int_at_least(1)


def parser_of(registers: Sequence[Register], *, hosts: bool) -> argparse.ArgumentParser:
    """The command's parser with the subcommands `registers` add (cli/__init__.py loads the
    command modules and hands over their `register`: this module never imports one, as
    they all import it); `hosts`: list the host commands too (help of every command)."""
    parser = Parser(
        prog="recall-sqlite",
        description="Session memory of coding agents in one SQLite database per workspace.",
    )
    parser.add_argument("--cwd", metavar="DIR", help="act as if run in DIR")
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="database file (default: "
        "<workspace>/.synapt/recall/recall-sqlite.db or $RECALL_SQLITE_DB)",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="never create or write anything (reads only; writes fail)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        dest="force_new_store",
        help="start a new store where the store is damaged or lost (the damaged files are "
        "kept beside it); without it, damage is an error and nothing is written",
    )
    parser.add_argument(
        "--version", action=_Version, help="print the version and the distribution's name"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    jp = json_parent()
    for register in registers:
        register(sub, jp)
    if hosts:
        _list_hosts(sub)
    return parser


def _list_hosts(sub: Any) -> None:
    """The host commands in --help. cli/__init__.py runs them before any parsing (their
    arguments are synapt's), so these entries are only ever shown."""
    for name, text in (
        ("synapt", "run synapt's CLI and hooks on the store: recall-sqlite synapt ARGS..."),
        ("synapt-server", "run synapt's MCP server (stdio) on the store"),
    ):
        sub.add_parser(name, help=text, add_help=False)


class _Version(argparse.Action):
    """--version, computed only when asked (importlib.metadata is not free)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        from .. import __version__, dist

        sys.stdout.write(f"recall-sqlite {__version__} (distribution {dist.NAME})\n")
        raise SystemExit(0)


# -- what the migration commands share (survey, import, verify) -------------------------


class ProgressBar:
    """A one-line progress bar on stderr, drawn only on a terminal and never with --json."""

    def __init__(self, args: argparse.Namespace, label: str) -> None:
        self.on = not getattr(args, "json", False) and sys.stderr.isatty()
        self.label = label
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.on or (now - self._last < 0.1 and done < total):
            return
        self._last = now
        frac = done / total if total else 1.0
        width = 30
        filled = int(frac * width)
        sys.stderr.write(
            f"\r{self.label} [{'#' * filled}{'-' * (width - filled)}]"
            f" {frac:4.0%} {done / 2**20:8.1f}/{total / 2**20:.1f} MiB"
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\r" + " " * 79 + "\r")
            sys.stderr.flush()


def mapping_of(args: argparse.Namespace) -> dict[str, str]:
    """--map BUCKET=WORKTREE options as a mapping."""
    from ..legacy.assign import parse_mapping

    return parse_mapping(args.map)


def problem_lines(data: dict[str, Any]) -> list[str]:
    return [f"  ! {p['path']}: {p['reason']}" for p in data.get("problems", [])]


def _unrecognized(args: argparse.Namespace, extra: list[str]) -> None:
    """argparse's own "unrecognized arguments" comes from the top parser and points at the
    top help; this names the action the line reached, whose help lists its options."""
    command = getattr(args, "command", None)
    action = getattr(args, f"{command}_command", None) if command else None
    prog = " ".join(p for p in ("recall-sqlite", command, action) if p)
    sys.stderr.write(
        f"{prog}: unrecognized arguments: {clean(' '.join(extra))} (see {prog} --help)\n"
    )
    raise SystemExit(2)


def run(argv: Sequence[str], build: Callable[[], argparse.ArgumentParser]) -> int:
    """The command line parsed by argparse with the parser `build` makes, and run."""

    def parsed_and_run(_: object) -> int:
        args, extra = build().parse_known_args(argv)
        if extra:
            _unrecognized(args, extra)
        handler: Callable[[argparse.Namespace], int] = args.func
        return handler(args)

    return guarded(parsed_and_run, None)
