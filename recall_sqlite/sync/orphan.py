"""Litestream never outlives its `sync run`: two Litestreams on one store write one replica
twice (a replica has one writer), and one left behind replicates with no claim kept and no
pull, while `sync status` would call the machine unreplicated.

On Linux the child asks the kernel for SIGTERM when the `sync run` that started it dies
(PR_SET_PDEATHSIG, set between fork and exec; Litestream stops on SIGTERM after a last
sync). Everywhere, as a second line, each Litestream `sync run` starts is recorded in
`<db>-sync/litestream.json` (its pid and command line), and a later `sync run` or `sync
status` finds one left behind, by its recorded pid whose command line is still the recorded
one (a pid reused by another process is never touched) or, on Linux, by a process whose
command line replicates this store's own config; it stops it (SIGTERM, then SIGKILL) and
says so. Only with the run lock held: then no live `sync run` owns what is found."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time

from ..errors import SyncError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .state import SyncState

PR_SET_PDEATHSIG = 1  # linux/prctl.h
STOP_S = 15.0


def death_signal(parent: int) -> Callable[[], None] | None:
    """The function Popen runs in the child before exec (Linux): SIGTERM when `parent`
    dies. None elsewhere, or when libc cannot be loaded (the pid record still holds)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    term = int(signal.SIGTERM)

    def preexec() -> None:
        # Loaded before the fork: between fork and exec only this call and getppid run.
        prctl(PR_SET_PDEATHSIG, term, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request was made
            os.kill(os.getpid(), term)

    return preexec


# -- the record ---------------------------------------------------------------------------


def record(path: Path, pid: int, argv: list[str]) -> None:
    from ..paths.files import write_private

    write_private(
        path, json.dumps({"pid": pid, "argv": argv, "by": os.getpid()}).encode(), exclusive=False
    )


def forget(path: Path, pid: int) -> None:
    """Remove the record of `pid` (a record of another pid is left alone)."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        if int(json.loads(path.read_bytes())["pid"]) == pid:
            path.unlink()


def _recorded(path: Path) -> tuple[int, list[str]] | None:
    try:
        data = json.loads(path.read_bytes())
        pid, argv = int(data["pid"]), [str(a) for a in data["argv"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid, argv


# -- finding and stopping -----------------------------------------------------------------


def command_line(pid: int) -> list[str] | None:
    """The command line of a live process (None: gone, a zombie, or unreadable)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return None if os.path.isdir("/proc/self") else _ps_command_line(pid)
    except OSError:
        return None
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0")[:-1]] or None


def _ps_command_line(pid: int) -> list[str] | None:
    """Where there is no /proc (macOS): `ps`, whose command column is the argv joined by
    spaces, split again (the comparison below joins both sides alike)."""
    import subprocess

    try:
        done = subprocess.run(
            ["ps", "-o", "command=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    line = done.stdout.strip()
    return line.split() if done.returncode == 0 and line else None


def _same(argv: list[str] | None, expected: list[str]) -> bool:
    return argv is not None and " ".join(argv) == " ".join(expected)


def _replicates(argv: list[str] | None, config: Path) -> bool:
    return (
        argv is not None
        and len(argv) >= 4
        and os.path.basename(argv[0]).startswith("litestream")
        and argv[-3:] == ["replicate", "-config", str(config)]
    )


def find(state: SyncState, *, but: int | None = None) -> list[tuple[int, list[str]]]:
    """The Litestreams replicating this store (pid, command line), `but` that pid (the
    caller's own child): the recorded one, and on Linux any other started on this store's
    config. Whose they are is the caller's to know (see the module's docstring)."""
    found: dict[int, list[str]] = {}
    rec = _recorded(state.litestream_pid)
    if rec is not None:
        pid, argv = rec
        if _same(command_line(pid), argv):
            found[pid] = argv
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in found:
                argv_here = command_line(int(name))
                if _replicates(argv_here, state.replicate_config):
                    assert argv_here is not None
                    found[int(name)] = argv_here
    return [(pid, argv) for pid, argv in sorted(found.items()) if pid != but]


def stop(pid: int, argv: list[str], timeout: float = STOP_S) -> None:
    """SIGTERM (Litestream syncs what is left), SIGKILL after `timeout`; returns once the
    process with that command line is gone. SyncError when it cannot be signalled."""
    try:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _same(command_line(pid), argv):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + timeout
            time.sleep(0.05)
    except ProcessLookupError:
        return
    except PermissionError:
        raise SyncError(
            f"a Litestream (pid {pid}) still replicates this store and cannot be stopped from"
            " here (another user's process): stop it, then start `sync run` again"
        ) from None


def stop_all(state: SyncState) -> list[int]:
    """Stop every Litestream replicating this store: call it holding the run lock, so that
    none of them is a live `sync run`'s. The pids stopped; SyncError for one that cannot be
    (the rest are stopped first)."""
    stopped, left = _stop_found(state)
    if left:
        raise left[0]
    return stopped


def _stop_found(state: SyncState) -> tuple[list[int], list[SyncError]]:
    stopped: list[int] = []
    left: list[SyncError] = []
    for pid, argv in find(state):
        try:
            stop(pid, argv)
            stopped.append(pid)
        except SyncError as exc:
            left.append(exc)
    if not left:
        with contextlib.suppress(OSError):
            state.litestream_pid.unlink()  # the lock is held: whatever it names is gone
    return stopped, left


def reap(state: SyncState) -> tuple[list[int], list[str]]:
    """`sync status` with no live `sync run`: any Litestream still replicating this store was
    left behind by one that died; stopped, the lock held meanwhile (so no `sync run` starts
    in between) and only once one is seen (a `sync run` starting meanwhile is refused while
    the lock is held). The pids stopped, and why each of the others could not be."""
    if not find(state):
        return [], []
    with state.run_locked() as held:
        if not held:
            return [], []
        stopped, left = _stop_found(state)
        return stopped, [str(exc) for exc in left]
