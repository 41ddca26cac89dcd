"""The `recall-sqlite` command. Thin: every command is one library call plus formatting.
User mistakes print one line on stderr and exit 2; never a traceback.

One module per command, named after it (`import_` for `import`); the parser is built with
only the module a command line names (a hook's `journal read` never imports summaries,
vectors or the legacy import), and with all of them only for help or a command it does not
know.

_common.py   the top-level parser, its global options, argparse's side of every command
_show.py     opening the store, printing, exit codes: all a command shares but the parser
where.py journal.py summary.py cursor.py vectors.py  the reads and writes of the store
survey.py import_.py verify.py export.py demo.py  synapt's journals: in, checked, out
worktree.py doctor.py sync.py  the workspace's worktrees, the store's checks, machines
mcp.py       `recall-sqlite mcp`: the store served to an MCP client (recall_sqlite/agents/)
browse.py    `recall-sqlite browse`: the store in Datasette, read-only (recall_sqlite/browse/)
hook.py      `hook session-start`: an agent's hook, its line read without argparse too
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import ArgumentParser
    from collections.abc import Sequence
    from typing import Any

# command -> the module of this package that registers it
COMMANDS: dict[str, str] = {
    "where": "where",
    "journal": "journal",
    "summary": "summary",
    "cursor": "cursor",
    "vectors": "vectors",
    "survey": "survey",
    "import": "import_",
    "verify": "verify",
    "demo": "demo",
    "worktree": "worktree",
    "export": "export",
    "doctor": "doctor",
    "sync": "sync",
    "mcp": "mcp",
    "browse": "browse",
    "hook": "hook",
}
# Global options that take a value (they come before the command), and those that do not.
_VALUED = ("--cwd", "--db")
_FLAGS = ("--read-only", "--force")


def command_of(argv: Sequence[str]) -> str | None:
    """The command a command line names, or None (help, no command, a stray option)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _VALUED:
            skip = True
        elif arg.startswith(tuple(f"{o}=" for o in _VALUED)) or arg in _FLAGS:
            continue
        elif arg.startswith("-"):
            return None
        else:
            return arg
    return None


def leading_options(argv: Sequence[str]) -> tuple[dict[str, str | bool], int, bool]:
    """The global options a command line starts with, read as argparse reads them (`--cwd
    DIR` or `--cwd=DIR`; keys cwd, db, read_only, force): (them, the index of the first
    other argument, whether a value standing apart starts with '-', which argparse would
    refuse and a host command's line may hold)."""
    options: dict[str, str | bool] = {}
    dashed = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in _VALUED and (eq or i + 1 < len(argv)):
            if not eq:
                value = argv[i + 1]
                dashed = dashed or value.startswith("-")
            options[name[2:]] = value
            i += 1 if eq else 2
        elif arg in _FLAGS:
            options[arg[2:].replace("-", "_")] = True
            i += 1
        else:
            break
    return options, i, dashed


def quick_read(argv: Sequence[str]) -> Any:
    """A `journal read` command line (what hooks and agents run at every session) read
    without argparse, which with its help texts' gettext lookups was a large part of the
    process (bench/RESULTS.md, row 'CLI start: argparse'): the Options argparse's Namespace
    would hold, when every option is spelled exactly and every value of the action's own
    stands apart and does not start with '-'.
    None for any other line (an abbreviation, `-n5`, `--branch=x`, help, an error), which
    argparse reads."""
    options, i, dashed = leading_options(argv)
    if dashed or list(argv[i : i + 2]) != ["journal", "read"]:
        return None
    # (argparse's dest for --force is force_new_store)
    force = options.pop("force", False)
    values: dict[str, Any] = {"cwd": None, "db": None, "read_only": False, "version": None}
    values.update(options, force_new_store=force)
    end = len(argv)
    from ._show import Options
    from .journal import READ_DEFAULTS, READ_OPTIONS, cmd_journal_read

    values.update(command="journal", journal_command="read", **READ_DEFAULTS)
    i += 2
    while i < end:
        spec = READ_OPTIONS.get(argv[i])
        if spec is None:
            return None
        dest, convert = spec
        if convert is None:
            values[dest] = True
            i += 1
            continue
        if i + 1 == end or argv[i + 1].startswith("-"):
            return None
        try:
            values[dest] = convert(argv[i + 1])
        except ValueError:
            return None
        i += 2
    return Options(**values, func=cmd_journal_read)


# The commands that run synapt on the store (recall_sqlite/synapt/cli.py).
HOSTS = ("synapt", "synapt-server")


def host_split(argv: Sequence[str]) -> tuple[dict[str, str | bool], str, list[str]] | None:
    """(the global options, the host command, its arguments) when the command line runs a
    host command; None otherwise. The arguments go to synapt untouched, so host commands
    are split off here rather than parsed by argparse (which would read synapt's options)."""
    options, i, _ = leading_options(argv)
    if i < len(argv) and argv[i] in HOSTS:
        return options, argv[i], list(argv[i + 1 :])
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    split = host_split(args)
    if split is not None:
        from ..synapt import cli as host

        options, name, rest = split
        return host.main_host(name, rest, options)
    command = command_of(args)
    if command == "hook":
        from .hook import quick_hook

        hook = quick_hook(args, leading_options(args))
        if hook is not None:
            return int(hook.func(hook))
        return _hook_line(args)
    if command == "journal":
        quick = quick_read(args)
        if quick is not None:
            from ._show import guarded

            return guarded(quick.func, quick)
    from ._common import run

    module = COMMANDS.get(command or "")
    return run(args, lambda: build_parser([module] if module else list(COMMANDS.values())))


def _hook_line(args: Sequence[str]) -> int:
    """A `hook` line quick_hook does not read (--help, or a mistake in an agent's settings):
    argparse's answer, but a mistake is never an exit code that could fail the agent's
    session: its one line is on stderr, the exit 0 (issue 34: a hook never blocks a
    session). --help and --version keep their 0."""
    from ._common import run

    try:
        run(args, lambda: build_parser([COMMANDS["hook"]]))
    except SystemExit:
        pass
    return 0


def build_parser(modules: Sequence[str]) -> ArgumentParser:
    """The parser with the commands of `modules` (names of this package's modules). The
    command modules are loaded here, never by cli/_common.py, which they all import."""
    from ._common import parser_of

    # __import__, not importlib (whose package imports warnings: a CLI start pays it).
    registers = [
        __import__(f"{__package__}.{name}", fromlist=("register",)).register for name in modules
    ]
    return parser_of(registers, hosts=len(modules) > 1)


def entry() -> None:
    """The `recall-sqlite` process (scripts/recall-sqlite, `python -m recall_sqlite.cli`): main(),
    then the exit; a hook's run (`hook session-start`, `synapt recall hook ...`) ends without
    module teardown."""
    args = sys.argv[1:]
    code = main(args)
    if command_of(args) == "hook":
        exit_now(code)
    split = host_split(args)
    if split is not None and split[1] == "synapt" and split[2][:2] == ["recall", "hook"]:
        exit_now(code)
    sys.exit(code)


def exit_now(code: int) -> None:
    """End a hook's process without tearing every module down, a part of a hook's time
    worth saving (bench/RESULTS.md, row 'hook exit'): what exit handlers do (close the
    stores, flush) is done, then the process ends. Only the command's own process calls
    this (entry), never a host that embeds the store; not while a thread the interpreter
    would wait for still runs (none can where threading was never imported)."""
    import atexit
    import os

    threading = sys.modules.get("threading")
    if threading is not None and any(
        t.is_alive() and not t.daemon for t in threading.enumerate()[1:]
    ):
        return
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # a flush that fails is reported by the normal exit
    os._exit(code)
