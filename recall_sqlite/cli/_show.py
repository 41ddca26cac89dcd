"""What a command prints and how it opens the store, and the one place errors become exit
codes: everything a command shares except the parser (cli/_common.py), so a command line
read without argparse (`journal read`, see cli/__init__.py) imports neither argparse nor
json nor anything else a read does not need."""

from __future__ import annotations

import sys

from ..checks import parse_int
from ..errors import InvalidInputError, RecallError
from ..jsontext import pretty

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..store import Store

    # A parsed command line: argparse's Namespace, or cli/__init__.py's Options.
    Args = Any


class Options:
    """A command line read without argparse: the attributes argparse's Namespace would have."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


def open_from_args(args: Args, *, read_only: bool = False) -> Store:
    """The store for a command that writes (read_only=False, unless --read-only was given,
    which makes the write fail with ReadOnlyStoreError instead of creating anything)."""
    from ..store import open_store

    return open_store(
        args.cwd,
        db_path=args.db,
        read_only=read_only or getattr(args, "read_only", False),
        force=getattr(args, "force_new_store", False) and not read_only,
    )


def open_for_read(args: Args) -> Store | None:
    """The store for a command that only reads: never creates or writes anything and never
    waits on the write lock. None when there is no store yet (the command says so: see
    `no_store`); a damaged store is an error, never "no store yet". A store that still
    needs its schema upgraded is opened for writing once, unless --read-only."""
    from ..errors import NeedsMigrationError, NoStoreError
    from ..store import open_store

    try:
        return open_store(args.cwd, db_path=args.db, read_only=True)
    except NoStoreError:
        return None
    except NeedsMigrationError:
        if getattr(args, "read_only", False):
            raise
    return open_store(args.cwd, db_path=args.db)


NO_STORE = "No store yet (nothing was created): the first write makes one."


def no_store(args: Args, **empty: Any) -> int:
    """What a read command prints where there is no store: `empty` is its JSON's empty
    answer (e.g. entries=[]), beside "store": null."""
    emit(args, {**empty, "store": None}, NO_STORE)
    return 0


def emit(args: Args, data: Any, text: str) -> None:
    if getattr(args, "json", False):
        sys.stdout.write(pretty(data) + "\n")
    elif text:
        sys.stdout.write(text.rstrip("\n") + "\n")


# C0 and C1 controls (and DEL) are shown escaped: stored text may carry terminal escape
# sequences (pasted output, a hostile import), which a terminal would execute.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROLS.update({0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"})


def counted(n: int, noun: str) -> str:
    """A count and its noun: "1 line", "2 lines"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


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
    """A result's scope (its to_dict) as the scope describes itself (scope.py)."""
    from ..scope import Scope

    return Scope(
        scope["workspace_id"], scope["worktree"], scope["branch"], bool(scope.get("meaningful"))
    ).describe()


def int_at_least(text: str, minimum: int) -> int:
    """The integer `text` spells, >= minimum and within SQLite's (checks.parse_int's rule
    and message); ValueError otherwise, as argparse and the quick `journal read` expect
    of a type function."""
    try:
        return parse_int("the value", text, minimum=minimum)
    except InvalidInputError as exc:
        raise ValueError(str(exc)) from None


def search_marks() -> tuple[str, str]:
    """Bold on a terminal; `**` markers where the output is piped (still readable)."""
    if sys.stdout.isatty():
        return "\x1b[1m", "\x1b[0m"
    return "**", "**"


def nothing_found(terms: Any, what: str) -> str:
    if not terms:
        return "Nothing to search for: the query has no words."
    return f"No {what} in scope match {' '.join(str(t) for t in terms)}."


REPORT = "please report it, with the command line, to the recall-sqlite issue tracker"


def guarded(handler: Callable[[Args], int], args: Args) -> int:
    """handler(args) as the process's exit code: the one place errors become exit codes."""
    # Stored text may hold characters the terminal's encoding cannot show (a lone
    # surrogate from a legacy file): print them escaped instead of failing half way.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    try:
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
