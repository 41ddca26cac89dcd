"""The `recall-sqlite` command. Thin: every command is one library call plus formatting.
User mistakes print one line on stderr and exit 2; never a traceback.

One module per command, named after it (`import_` for `import`); the parser is built with
only the module a command line names (a hook's `journal read` never imports summaries,
vectors or the legacy import), and with all of them only for help or a command it does not
know.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

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


# The commands that run synapt on the store (recall_sqlite/synapt/cli.py).
HOSTS = ("synapt", "synapt-server")


def host_split(argv: Sequence[str]) -> tuple[dict[str, str | bool], str, list[str]] | None:
    """(the global options, the host command, its arguments) when the command line runs a
    host command; None otherwise. The arguments go to synapt untouched, so host commands
    are split off here rather than parsed by argparse (which would read synapt's options)."""
    options: dict[str, str | bool] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in _VALUED and (eq or i + 1 < len(argv)):
            options[name[2:]] = value if eq else argv[i + 1]
            i += 1 if eq else 2
        elif arg in _FLAGS:
            options[arg[2:].replace("-", "_")] = True
            i += 1
        else:
            break
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
    from ._common import run

    command = command_of(args)
    module = COMMANDS.get(command or "")
    return run(args, [module] if module else list(COMMANDS.values()))


def entry() -> None:
    """The `recall-sqlite` process (console script, `python -m recall_sqlite.cli`): main(),
    then the exit; a hook run (`synapt recall hook ...`) ends without module teardown."""
    args = sys.argv[1:]
    code = main(args)
    split = host_split(args)
    if split is not None and split[1] == "synapt" and split[2][:2] == ["recall", "hook"]:
        from ..synapt.cli import exit_now

        exit_now(code)
    sys.exit(code)
