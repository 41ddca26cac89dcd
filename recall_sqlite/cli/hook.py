"""`recall-sqlite hook session-start [--format text|claude-code] [-n N]`: what a coding agent's
session should know at its start (the newest meaningful entries of this worktree and branch,
the pending next steps, the latest summary, what lies elsewhere), for an agent's hook.

A hook must never fail or hold up a session: the store is opened read-only (never created,
never waiting on the write lock), any failure prints nothing on stdout and one line on
stderr and exits 0. The command line is read here without argparse (cli/__init__.py hands
it over), as a `journal read` line is: argparse is for help and for a line this does not read.
"""

from __future__ import annotations

import sys

from ._show import Options, clean, describe_elsewhere, format_entry, int_at_least

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any

    from ..store import Store

FORMATS = ("text", "claude-code")
DEFAULTS: dict[str, Any] = {"n": 3, "format": "text"}
# What a hook's stdin may hold that is read (and ignored): Claude Code's JSON object is small.
STDIN_LIMIT = 1 << 20


def quick_hook(argv: Sequence[str], leading: tuple[dict[str, str | bool], int, bool]) -> Any:
    """A `hook session-start` line read without argparse: the Options argparse would make,
    or None for any other line (argparse reads it, and says what is wrong). `leading`: its
    global options as cli/__init__.py's leading_options reads them."""
    options, i, dashed = leading
    if dashed or list(argv[i : i + 2]) != ["hook", "session-start"]:
        return None
    force = options.pop("force", False)
    values: dict[str, Any] = {"cwd": None, "db": None, "read_only": False, "version": None}
    values.update(options, force_new_store=force, command="hook", hook_command="session-start")
    values.update(DEFAULTS)
    rest = list(argv[i + 2 :])
    while rest:
        name, eq, value = rest.pop(0).partition("=")
        if name not in ("--format", "-n"):
            return None
        if not eq:
            if not rest or rest[0].startswith("-"):
                return None
            value = rest.pop(0)
        if name == "--format":
            if value not in FORMATS:
                return None
            values["format"] = value
        else:
            try:
                values["n"] = int_at_least(value, 1)
            except ValueError:
                return None
    return Options(**values, func=cmd_hook_session_start)


def cmd_hook_session_start(args: Any) -> int:
    """The hook: its text (or Claude Code's JSON of it) on stdout; on any failure nothing
    there and one line on stderr. Always 0: a failing hook would fail the session."""
    try:
        _drain_stdin()
        text = session_start_text(args)
        if text and args.format == "claude-code":
            from ..jsontext import pretty

            text = pretty(
                {
                    "hookSpecificOutput": {
                        "hookEventName": "SessionStart",
                        "additionalContext": text,
                    }
                }
            )
        if text:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
    except Exception as exc:  # noqa: BLE001 - a hook must not fail its session
        sys.stderr.write(f"recall-sqlite hook: {type(exc).__name__}: {clean(exc)[:300]}\n")
    return 0


def _drain_stdin() -> None:
    """Read and drop what the agent passes on stdin (Claude Code: a JSON object), so it never
    sees a broken pipe; never from a terminal, never more than STDIN_LIMIT bytes, and only
    what is already there: a writer that keeps stdin open without writing is not waited on.
    (Non-blocking reads rather than select: a hook's start does not load it.)"""
    stdin = sys.stdin
    if stdin is None or stdin.closed:
        return
    try:
        fd = stdin.fileno()
    except (OSError, ValueError):
        return
    import os

    if os.isatty(fd):
        return
    try:
        blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)
    except OSError:
        return
    try:
        taken = 0
        while taken < STDIN_LIMIT:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            taken += len(chunk)
    except OSError:  # BlockingIOError: nothing more yet
        return
    finally:
        # The open file may be shared with the agent: leave it as it was.
        os.set_blocking(fd, blocking)


def session_start_text(args: Any) -> str:
    """What the session should know, as text; "" when there is no store yet."""
    from ..errors import NoStoreError
    from ..store import context_of, open_store

    try:
        store = open_store(args.cwd, db_path=args.db, read_only=True)
    except NoStoreError:
        return ""
    with store:
        # The branch checked out where the hook runs, as the store resolved it (None when
        # detached or not git: then every branch is read).
        return _compose(store, context_of(store).branch or None, args.n)


def _compose(store: Store, branch: str | None, n: int) -> str:
    read = store.journal.read(n, meaningful=True, branch=branch).to_dict()
    pending = store.journal.pending_next_steps().pending
    summary = store.summaries.latest(branch) if branch else None
    summary = summary or store.summaries.latest()
    where = f"{clean(read['scope']['worktree'])}" + (f" @ {clean(branch)}" if branch else "")
    parts = [f"# Session memory (recall-sqlite): {where}"]
    if summary is not None:
        scope = f"branch {clean(summary.branch)}" if summary.branch else "workspace-wide"
        parts.append(f"## Latest summary ({scope}, {summary.created_at})\n{clean(summary.text)}")
    if pending:
        parts.append("## Pending next steps\n" + "\n".join(f"  - {clean(p)}" for p in pending))
    entries = [format_entry(e) for e in read["entries"]]
    parts.append(
        "## Newest meaningful entries\n"
        + ("\n\n".join(entries) if entries else "No meaningful entries in scope yet.")
    )
    parts.append(describe_elsewhere(read["scope"], read["total"], len(entries), read["elsewhere"]))
    return "\n\n".join(parts)


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    from ._common import positive_int

    hook = sub.add_parser("hook", help="what an agent's hook prints (session start)")
    hooks = hook.add_subparsers(dest="hook_command", metavar="HOOK", required=True)
    start = hooks.add_parser(
        "session-start",
        parents=[jp],
        help="the newest meaningful entries, pending next steps, latest summary and what is "
        "elsewhere; never fails the session (read-only, exit 0)",
    )
    start.add_argument(
        "--format",
        choices=FORMATS,
        default=DEFAULTS["format"],
        help="text (default), or claude-code: the JSON Claude Code's SessionStart hook reads",
    )
    start.add_argument(
        "-n",
        type=positive_int,
        default=DEFAULTS["n"],
        help=f"how many of the newest meaningful entries (default {DEFAULTS['n']})",
    )
    start.set_defaults(func=cmd_hook_session_start)
