"""What every command family shares: the top-level parser and its global options, opening
the store, printing (text or --json), the readable form of an entry and of a scope, and the
one place errors become exit codes."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time

from ..errors import RecallError, UsageError
from ..limits import INT64_MAX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

__all__ = [
    "NO_STORE",
    "UsageError",
    "clean",
    "emit",
    "format_entry",
    "describe_elsewhere",
    "open_for_read",
    "open_from_args",
    "no_store",
    "nonneg_int",
    "positive_int",
    "run",
]


def open_from_args(args: argparse.Namespace, *, read_only: bool = False) -> Any:
    """The store for a command that writes (read_only=False, unless --read-only was given,
    which makes the write fail with ReadOnlyStoreError instead of creating anything)."""
    from ..store import open_store

    return open_store(
        args.cwd,
        db_path=args.db,
        read_only=read_only or getattr(args, "read_only", False),
        force=getattr(args, "force_new_store", False) and not read_only,
    )


def open_for_read(args: argparse.Namespace) -> Any:
    """The store for a command that only reads: never creates or writes anything and never
    waits on the write lock. None when there is no store yet (the command says so: see
    `no_store`); a damaged store is an error, never "no store yet". A store that still
    needs its schema upgraded is opened for writing once, unless --read-only."""
    from ..errors import NoStoreError, StoreError
    from ..store import open_store

    try:
        return open_store(args.cwd, db_path=args.db, read_only=True)
    except NoStoreError:
        return None
    except StoreError as exc:
        if getattr(args, "read_only", False) or "needs migrating" not in str(exc):
            raise
    return open_store(args.cwd, db_path=args.db)


NO_STORE = "No store yet (nothing was created): the first write makes one."


def no_store(args: argparse.Namespace, **empty: Any) -> int:
    """What a read command prints where there is no store: `empty` is its JSON's empty
    answer (e.g. entries=[]), beside "store": null."""
    emit(args, {**empty, "store": None}, NO_STORE)
    return 0


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    elif text:
        sys.stdout.write(text.rstrip("\n") + "\n")


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter with the terminal width taken from os directly: the stock one
    imports shutil (and with it zlib, bz2, lzma) for that on every parser built, which is
    a tenth of a hook's start-up."""

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


# C0 and C1 controls (and DEL) are shown escaped: stored text may carry terminal escape
# sequences (pasted output, a hostile import), which a terminal would execute.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROLS.update({0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"})


def clean(text: object) -> str:
    """Text safe to print to a terminal: control characters escaped."""
    return str(text).translate(_CONTROLS)


def format_entry(e: dict[str, Any]) -> str:
    c = clean
    head = f"## {c(e['timestamp'])}  [{c(e['worktree'])}"
    head += f" @ {c(e['branch'])}]" if e["branch"] else "]"
    lines = [head, f"id {e['id']}" + (f"  session {c(e['session_id'])}" if e["session_id"] else "")]
    if e["focus"]:
        lines.append(f"Focus: {c(e['focus'])}")
    for label, key in (("Next", "next_steps"), ("Decisions", "decisions"), ("Done", "done")):
        if e[key]:
            lines.append(f"{label}:")
            lines.extend(f"  - {c(item)}" for item in e[key])
    if e["files_modified"]:
        lines.append(f"Files: {len(e['files_modified'])}")
    return "\n".join(lines)


def describe_elsewhere(
    scope: dict[str, Any], total: int, shown: int, elsewhere: dict[str, int]
) -> str:
    """The line every read ends with: what was shown of how many, and what lies outside."""
    parts = [f"{shown} of {total} in scope ({_scope_text(scope)})"]
    if elsewhere["other_worktrees"]:
        parts.append(f"{elsewhere['other_worktrees']} more in other worktrees (--all-worktrees)")
    if elsewhere["other_branches"]:
        parts.append(f"{elsewhere['other_branches']} more on other branches")
    if elsewhere.get("other_machines"):
        parts.append(
            f"{elsewhere['other_machines']} more on other machines not yet pulled (sync pull)"
        )
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
        if value > INT64_MAX:
            raise argparse.ArgumentTypeError(f"must be <= {INT64_MAX}")
        return value

    return parse


nonneg_int = _int_at_least(0)
positive_int = _int_at_least(1)


def build_parser(modules: Sequence[str]) -> argparse.ArgumentParser:
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
    for name in modules:
        # __import__, not importlib (whose package imports warnings: a CLI start pays it).
        __import__(f"{__package__}.{name}", fromlist=("register",)).register(sub, jp)
    if len(modules) > 1:
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


def search_marks() -> tuple[str, str]:
    """Bold on a terminal; `**` markers where the output is piped (still readable)."""
    if sys.stdout.isatty():
        return "\x1b[1m", "\x1b[0m"
    return "**", "**"


def nothing_found(terms: Any, what: str) -> str:
    if not terms:
        return "Nothing to search for: the query has no words."
    return f"No {what} in scope match {' '.join(str(t) for t in terms)}."


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


REPORT = "please report it, with the command line, to the recall-sqlite issue tracker"


def run(argv: Sequence[str], modules: Sequence[str]) -> int:
    # Stored text may hold characters the terminal's encoding cannot show (a lone
    # surrogate from a legacy file): print them escaped instead of failing half way.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    try:
        args = build_parser(modules).parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = args.func
        return handler(args)
    except RecallError as exc:
        sys.stderr.write(f"recall-sqlite: {clean(exc)}\n")
        return exc.exit_code
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, and leave the exit-time flush
        # nothing to complain about.
        from ..synapt.cli import quiet_stdout

        quiet_stdout()
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("recall-sqlite: interrupted\n")
        return 130
    except ModuleNotFoundError as exc:
        if exc.name == "numpy":
            from ..dist import install_hint

            sys.stderr.write(
                f"recall-sqlite: this command needs numpy: {install_hint('vectors')}\n"
            )
            return 1
        return _last_resort(exc)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - the one place nothing may escape as a traceback
        return _last_resort(exc)


def _last_resort(exc: BaseException) -> int:
    sys.stderr.write(
        f"recall-sqlite: internal error: {type(exc).__name__}: {clean(exc)[:500]}; {REPORT}\n"
    )
    return 1
