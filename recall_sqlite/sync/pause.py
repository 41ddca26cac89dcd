"""Holding replication still for a moment: what a forget (and a pull that applied another
machine's forgets) needs, because while Litestream replicates a store it keeps a read open
on it, and the checkpoint that empties the WAL of the forgotten text cannot truncate.

A live `sync run` holds an exclusive lock on `<db>-sync/run.lock`. A process that needs the
store still writes `pause.request` (a token, and whether this machine's replica history is
to be purged too) and waits for `pause.ack` to carry its token: `sync run` has then stopped
Litestream (which syncs what is left first). It checkpoints, removes the request, and `sync
run` starts Litestream again. Without a live `sync run` there is nothing to hold.

Loaded only by a forget or a pull: nothing on the read path imports it."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from pathlib import Path

from .state import SyncState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

WAIT_S = 20.0


def run_is_live(state: SyncState) -> bool:
    """True when a `sync run` holds this store's run lock."""
    import fcntl

    try:
        fd = os.open(state.run_lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


@contextlib.contextmanager
def quiet(db_path: Path, *, purge: bool = False, wait_s: float = WAIT_S) -> Iterator[bool]:
    """Replication held still while the block runs; yields False when a live `sync run`
    did not answer within `wait_s` (the caller reports what it could not do)."""
    state = SyncState(db_path)
    if not run_is_live(state):
        yield True
        return
    token = secrets.token_hex(8)
    request = json.dumps({"token": token, "purge": purge}).encode()
    tmp = state.pause_request.with_name(state.pause_request.name + f".{token}")
    tmp.write_bytes(request)
    os.replace(tmp, state.pause_request)
    try:
        deadline = time.monotonic() + wait_s
        answered = False
        while time.monotonic() < deadline:
            try:
                if state.pause_ack.read_text(encoding="utf-8").strip() == token:
                    answered = True
                    break
            except OSError:
                pass
            if not run_is_live(state):
                break
            time.sleep(0.02)
        yield answered or not run_is_live(state)
    finally:
        with contextlib.suppress(OSError):
            if json.loads(state.pause_request.read_bytes()).get("token") == token:
                state.pause_request.unlink()


def pending(state: SyncState) -> dict[str, object] | None:
    """The pause request waiting for `sync run`, if any."""
    try:
        data = json.loads(state.pause_request.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "token" in data else None


def acknowledge(state: SyncState, token: str) -> None:
    tmp = state.pause_ack.with_name(state.pause_ack.name + ".tmp")
    tmp.write_text(token, encoding="utf-8")
    os.replace(tmp, state.pause_ack)
