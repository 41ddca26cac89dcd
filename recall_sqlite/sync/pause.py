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


class Hold:
    """What holding still achieved: true when replication was held (or nothing needed
    holding); `notes` say what happened to this machine's replica history and which other
    machines may still hold what was removed."""

    def __init__(self) -> None:
        self.ok = True
        self.notes: list[str] = []

    def __bool__(self) -> bool:
        return self.ok


@contextlib.contextmanager
def quiet(db_path: Path, *, purge: bool = False, wait_s: float = WAIT_S) -> Iterator[Hold]:
    """Replication held still while the block runs. With `purge` (a forget), this
    machine's replica history is deleted too (by `sync run` when one is live, here
    otherwise) and the other machines that may hold the text are named."""
    state = SyncState(db_path)
    hold = Hold()
    if not run_is_live(state):
        if purge and state.configured():
            _purge_here(state, hold)
        yield hold
        if purge and state.configured():
            _peers_note(state, hold)
        return
    token = secrets.token_hex(8)
    request = json.dumps({"token": token, "purge": purge}).encode()
    tmp = state.pause_request.with_name(state.pause_request.name + f".{token}")
    tmp.write_bytes(request)
    os.replace(tmp, state.pause_request)
    try:
        answer = _wait(state, token, wait_s)
        if answer is None and run_is_live(state):
            hold.ok = False
            hold.notes.append(
                f"`sync run` did not hold Litestream within {wait_s:g} s: the WAL may still"
                " hold the text until the next forget or checkpoint"
            )
        elif purge and answer is not None:
            hold.notes.append(purged_note(state, bool(answer.get("purged"))))
        yield hold
    finally:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(state.pause_request.read_bytes()).get("token") == token:
                state.pause_request.unlink()
    if purge:
        _peers_note(state, hold)


def _wait(state: SyncState, token: str, wait_s: float) -> dict[str, object] | None:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            answer = json.loads(state.pause_ack.read_bytes())
            if isinstance(answer, dict) and answer.get("token") == token:
                return answer
        except (OSError, ValueError):
            pass
        if not run_is_live(state):
            return None
        time.sleep(0.02)
    return None


def _purge_here(state: SyncState, hold: Hold) -> None:
    """No live `sync run`: delete this machine's replica history from here, so the next
    run starts a new one (a new generation, which peers tell from the old)."""
    import shutil

    from ..errors import RecallError
    from .owner import generation

    try:
        config = state.config()
        remote = config.remote()
        machine = state.machine()
        purged = remote.purge(config.slug, machine)
        if purged:
            shutil.rmtree(state.meta, ignore_errors=True)
            owner = remote.read_owner(config.slug, machine)
            if owner is not None:
                remote.write_owner(
                    config.slug, machine, {**owner, "generation": generation(owner) + 1}
                )
        hold.notes.append(purged_note(state, purged))
    except RecallError as exc:
        hold.notes.append(f"could not purge this machine's replica history: {exc}")


def purged_note(state: SyncState, purged: bool) -> str:
    if purged:
        return (
            "this machine's replica history was purged; Litestream replicates the store"
            " anew from now"
        )
    try:
        retention = state.config().retention
    except Exception:  # noqa: BLE001 - a note, never a failure of the forget
        retention = "the retention"
    # The forget's scan of the data directory leaves the sync state to this note, so the
    # local copy Litestream keeps of recent pages (not removed while the history stays)
    # is named here.
    return (
        "this machine's replica history cannot be purged at this location: it ages out"
        f" within twice its retention ({retention}); Litestream's local copy of recent pages"
        f" ({state.meta}) keeps the text until Litestream drops them"
    )


def _peers_note(state: SyncState, hold: Hold) -> None:
    """The other machines of the repository: they hold what was removed until they pull
    this forget (a live `sync run` there pulls on its own, when this replica moves)."""
    from ..errors import RecallError

    try:
        config = state.config()
        me = state.machine()
        others = [m for m in config.remote().machines(config.slug) if m != me]
    except RecallError as exc:
        hold.notes.append(f"could not list the other machines: {exc}")
        return
    if others:
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        hold.notes.append(
            f"{len(others)} other machine(s) may hold it until they pull this forget"
            f" ({shown}); a live `sync run` there pulls it once this machine's replica moves"
            f" (seconds; at the latest within its own `--pull-every`)"
        )
        hold.notes.extend(_not_live(state, others))


def _not_live(state: SyncState, others: list[str]) -> list[str]:
    """A sentence for each other machine whose `sync run` is not live, by what its claim
    says (owner.py condition): a stopped one pulls when it runs again; a silent one (its
    heartbeat stopped without a clean exit) may never, and its replica keeps the text at
    the location until it is retired."""
    from ..errors import RecallError
    from .owner import condition, heartbeat_age

    notes = []
    try:
        config = state.config()
        remote = config.remote()
        for machine in others[:20]:
            owner = remote.read_owner(config.slug, machine)
            said = condition(owner)
            host = f" ({owner['host']})" if owner and owner.get("host") else ""
            if said == "stopped":
                notes.append(
                    f"machine {machine}{host} is stopped: it holds it until its next `sync"
                    " run` or `sync pull`"
                )
            elif said == "silent":
                age = heartbeat_age(owner or {})
                since = f" {age / 60:.0f} min ago" if age is not None else ""
                notes.append(
                    f"machine {machine}{host} looks dead (its `sync run` stopped without a"
                    f" clean exit{since}): its replica keeps it until it runs again; if it is"
                    f" gone for good, `recall-sqlite sync retire {machine}` pulls what it"
                    " holds and deletes its replica"
                )
    except RecallError as exc:
        notes.append(f"could not read the other machines' claims: {exc}")
    return notes


def pending(state: SyncState) -> dict[str, object] | None:
    """The pause request waiting for `sync run`, if any."""
    try:
        data = json.loads(state.pause_request.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "token" in data else None


def acknowledge(state: SyncState, token: str, *, purged: bool = False) -> None:
    tmp = state.pause_ack.with_name(state.pause_ack.name + ".tmp")
    tmp.write_text(json.dumps({"token": token, "purged": purged}), encoding="utf-8")
    os.replace(tmp, state.pause_ack)
