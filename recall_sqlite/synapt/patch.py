"""Rebinding synapt's journal functions in an unmodified synapt 0.30.x.

synapt has no backend abstraction, and some modules copied the functions into their own
namespace at import time (`from synapt.recall.journal import read_entries`), so rebinding
the journal module alone would leave those copies on JSONL. Every synapt module already
loaded is searched for attributes that *are* the original functions; a module imported
later (consolidate, enrich, resume, server, orient) copies the already rebound one."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import HostError

SUPPORTED = ("0.30.",)

_state: dict[str, Any] = {"active": False, "rebound": []}


def synapt_version() -> str:
    try:
        from synapt.recall import __version__
    except ImportError as exc:
        from ..dist import install_hint

        raise HostError(
            f"synapt is not installed: {install_hint('compat')} (it brings synapt==0.30.0)"
        ) from exc
    return str(__version__)


def check_version() -> str:
    version = synapt_version()
    if not version.startswith(SUPPORTED):
        raise HostError(
            f"synapt {version} is not supported by recall-sqlite's adapter (it knows synapt "
            f"{', '.join(v + 'x' for v in SUPPORTED)}); its journal functions may have moved, "
            "so nothing was patched. Run plain `synapt` or install synapt==0.30.0."
        )
    return version


def _spawn_catchup(project: Path) -> bool:
    """synapt's detached session-start worker, started activated (stock synapt starts
    `python -m synapt.recall.cli catchup`, which would write JSONL only)."""
    from synapt.recall.core import project_transcript_dirs

    if not project_transcript_dirs(project):
        return False
    subprocess.Popen(
        [sys.executable, "-m", "recall_sqlite.synapt", "recall", "catchup", "--no-build"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return True


def activate() -> list[str]:
    """Rebind synapt's journal functions to the store. Idempotent. Returns the rebound
    `module.name` places (for tests and `--explain`)."""
    if _state["active"]:
        rebound: list[str] = _state["rebound"]
        return rebound
    check_version()
    journal = importlib.import_module("synapt.recall.journal")
    from . import api

    originals = {name: getattr(journal, name) for name in api.FUNCTIONS}
    api.ORIGINAL.update(originals)
    # Only modules already loaded can hold the originals: importing synapt's heavy modules
    # here (server, consolidate, enrich) would cost every hook their import time.
    importlib.import_module("synapt.recall.cli")
    by_id = {id(fn): name for name, fn in originals.items()}
    places: list[str] = []
    undo: list[tuple[ModuleType, str, Any]] = []
    for mod_name, mod in sorted(sys.modules.items()):
        if not (mod_name == "synapt" or mod_name.startswith("synapt.")):
            continue
        if not isinstance(mod, ModuleType):
            continue
        for attr, value in list(vars(mod).items()):
            fn_name = by_id.get(id(value))
            if fn_name is not None and value is originals[fn_name]:
                setattr(mod, attr, api.FUNCTIONS[fn_name])
                places.append(f"{mod_name}.{attr}")
                undo.append((mod, attr, value))
    cli = sys.modules["synapt.recall.cli"]
    if hasattr(cli, "_spawn_session_start_catchup"):
        undo.append((cli, "_spawn_session_start_catchup", cli._spawn_session_start_catchup))
        setattr(cli, "_spawn_session_start_catchup", _spawn_catchup)  # noqa: B010
        places.append("synapt.recall.cli._spawn_session_start_catchup")
    from . import startup

    startup.install()  # the session start in constant time (startup.py)
    if cli.generate_startup_context is startup.generate_startup_context:
        places.append("synapt.recall.cli.generate_startup_context")
    _state.update(active=True, rebound=places, undo=undo)
    return places


def deactivate() -> None:
    """Put synapt's own functions back (tests run stock and activated synapt in one
    process) and forget the open stores."""
    from . import startup
    from .stores import reset

    startup.uninstall()
    for mod, attr, value in reversed(_state.get("undo", [])):
        setattr(mod, attr, value)
    _state.update(active=False, rebound=[], undo=[])
    reset()


def is_active() -> bool:
    return bool(_state["active"])
