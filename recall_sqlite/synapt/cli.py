"""`recall-sqlite synapt ARGS...` (synapt's CLI and hooks) and `recall-sqlite synapt-server`
(synapt's MCP server, stdio), both activated.

Before synapt runs: the version is checked, the store of the current directory's workspace
is opened and the workspace's synapt journals are imported if they are not yet, so a store
problem is one line on stderr and a non-zero exit, never a traceback or a JSONL answer."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

from ..errors import RecallError

_NO_STORE = frozenset({"-h", "--help", "help", "--version"})


def _pin_data_root() -> None:
    """Point synapt's data root at the workspace root when synapt would pick another
    (a subdirectory or a linked worktree of a plain git repository), so whatever synapt
    keeps beside the journal (index, wake, hook runs) is not nested either."""
    if os.environ.get("SYNAPT_RECALL_ROOT") or os.environ.get("GRIPSPACE_ROOT"):
        return
    from pathlib import Path

    from synapt.recall.core import project_data_dir

    from ..paths.datadir import data_dir
    from ..paths.resolve import resolve

    root = resolve(None).root
    if project_data_dir().absolute() != Path(data_dir(root)).absolute():
        os.environ["SYNAPT_RECALL_ROOT"] = str(root)


def _prepare() -> None:
    from .patch import activate
    from .stores import store_for

    activate()
    _pin_data_root()
    store_for(None)


def _apply(options: Mapping[str, str | bool]) -> None:
    """recall-sqlite's global options for a host command: `--cwd DIR` runs synapt in DIR,
    `--db PATH` is the store file, `--read-only` opens every store read-only (synapt's
    writes then fail with one line)."""
    from ..errors import UsageError
    from . import stores

    cwd, db = options.get("cwd"), options.get("db")
    if isinstance(db, str):
        os.environ["RECALL_SQLITE_DB"] = os.path.abspath(os.path.expanduser(db))
    if isinstance(cwd, str):
        try:
            os.chdir(os.path.expanduser(cwd))
        except OSError as exc:
            raise UsageError(f"--cwd {cwd}: {exc.strerror or exc}") from None
    if options.get("read_only"):
        stores.set_read_only(True)


def _run(
    prog: str,
    argv: list[str],
    entry: Callable[[], object],
    *,
    store: bool,
    options: Mapping[str, str | bool] | None = None,
) -> int:
    try:
        _apply(options or {})
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
        return exc.exit_code
    except BrokenPipeError:
        quiet_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    return 0


def quiet_stdout() -> None:
    """After the reader of standard output went away (`... | head`): point it at
    /dev/null, so the flush at exit finds no broken pipe to report as a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def main_synapt(argv: list[str], options: Mapping[str, str | bool] | None = None) -> int:
    """synapt's own CLI (`synapt ARGS...`), activated."""

    def entry() -> None:
        from synapt.cli import main

        main()

    store = bool(argv) and argv[0] not in _NO_STORE
    return _run("synapt", list(argv), entry, store=store, options=options)


def main_server(argv: list[str], options: Mapping[str, str | bool] | None = None) -> int:
    """synapt's MCP server (`synapt-recall-server`, stdio), activated."""

    def entry() -> None:
        from synapt.recall.server import main

        main()

    return _run("synapt-server", list(argv), entry, store=True, options=options)


def main_host(name: str, argv: list[str], options: Mapping[str, str | bool]) -> int:
    """`recall-sqlite [OPTIONS] synapt|synapt-server ARGS...`."""
    run = main_synapt if name == "synapt" else main_server
    return run(argv, options)
