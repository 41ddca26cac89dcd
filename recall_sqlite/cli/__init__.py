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


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # Host commands pass their arguments to synapt untouched, so they dispatch before argparse.
    if args and args[0] in ("synapt", "synapt-server"):
        from ..synapt import cli as host

        run_host = host.main_synapt if args[0] == "synapt" else host.main_server
        return run_host(args[1:])
    from ._common import run

    command = command_of(args)
    module = COMMANDS.get(command or "")
    return run(args, [module] if module else list(COMMANDS.values()))
