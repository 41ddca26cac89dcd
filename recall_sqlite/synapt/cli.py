"""`recall-sqlite synapt ARGS...` (synapt's CLI and hooks) and `recall-sqlite synapt-server`
(synapt's MCP server, stdio), both activated.

Before synapt runs: the version is checked, the store of the current directory's workspace
is opened and the workspace's synapt journals are imported if they are not yet, so a store
problem is one line on stderr and a non-zero exit, never a traceback or a JSONL answer."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from ..errors import RecallError

_NO_STORE = frozenset({"-h", "--help", "help", "--version"})


def _pin_data_root() -> None:
    """Point synapt's data root at the workspace root when synapt would pick another
    (a subdirectory or a linked worktree of a plain git repository), so whatever synapt
    keeps beside the journal (index, wake, hook runs) is not nested either."""
    if os.environ.get("SYNAPT_RECALL_ROOT") or os.environ.get("GRIPSPACE_ROOT"):
        return
    from synapt.recall.core import project_data_dir

    from ..paths.datadir import data_dir
    from ..paths.resolve import resolve

    root = resolve(None).root
    if project_data_dir().absolute() != data_dir(root).absolute():
        os.environ["SYNAPT_RECALL_ROOT"] = str(root)


def _prepare() -> None:
    from .patch import activate
    from .stores import store_for

    activate()
    _pin_data_root()
    store_for(None)


def _run(prog: str, argv: list[str], entry: Callable[[], object], *, store: bool) -> int:
    try:
        if store:
            _prepare()
        else:
            from .patch import activate

            activate()
        sys.argv = [prog, *argv]
        entry()
    except SystemExit as exc:
        code = exc.code
        if code is None or isinstance(code, int):
            return code or 0
        sys.stderr.write(f"{code}\n")
        return 1
    except RecallError as exc:
        sys.stderr.write(f"recall-sqlite {prog}: {exc}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


def main_synapt(argv: list[str]) -> int:
    """synapt's own CLI (`synapt ARGS...`), activated."""

    def entry() -> None:
        from synapt.cli import main

        main()

    store = bool(argv) and argv[0] not in _NO_STORE
    return _run("synapt", list(argv), entry, store=store)


def main_server(argv: list[str]) -> int:
    """synapt's MCP server (`synapt-recall-server`, stdio), activated."""

    def entry() -> None:
        from synapt.recall.server import main

        main()

    return _run("synapt-server", list(argv), entry, store=True)
