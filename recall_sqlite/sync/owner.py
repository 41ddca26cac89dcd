"""Who writes a replica: `owner.json` beside it. Litestream has no notion of an owner, and
two databases replicating to one path corrupt it silently (the restore succeeds, the data
is wrong), so `sync run` claims the path before it starts Litestream and keeps the claim
alive; a claim held by another live run, or by another file, is refused.

A claim names the file (a token minted with this machine's id), the run (a token per
`sync run`), the host and pid, the sync key and the repository's facts (key.facts), and a
heartbeat; it is live while the heartbeat is younger than LEASE_S, or until its pid is gone
from its host: a run killed with SIGKILL cannot mark its claim stopped, and the next run on
that host takes it over at once rather than waiting out the lease (its Litestream is stopped
first: orphan.py). After writing its claim a run reads it back once more a moment later, so
two runs that claim at once do not both start."""

from __future__ import annotations

import os
import socket
import time

from ..errors import ReplicaOwnedError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .remote import Remote

HEARTBEAT_S = 10.0
LEASE_S = 3 * HEARTBEAT_S
SETTLE_S = 1.0


class Claim:
    def __init__(
        self,
        remote: Remote,
        key_slug: str,
        machine: str,
        store: str,
        *,
        key: str = "",
        facts: dict[str, str] | None = None,
    ) -> None:
        self.remote, self.slug, self.machine, self.store = remote, key_slug, machine, store
        # The sync key and the repository's facts (key.facts): a clone of the same
        # repository keyed otherwise finds this machine by them and is told the key.
        self.key, self.facts = key, dict(facts or {})
        self.run = os.urandom(8).hex()
        # Bumped when this machine purges its replica history (after a forget): Litestream
        # then starts its transaction ids over, so a peer tells the new history from the
        # old by (generation, transaction id).
        self.generation = 0

    def _record(self, *, stopped: bool = False) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "store": self.store,
            "run": self.run,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "heartbeat": time.time(),
            "stopped": stopped,
            "generation": self.generation,
            "format": 1,
            "key": self.key,
            "repository": self.facts,
        }

    def take(self, *, settle_s: float = SETTLE_S) -> None:
        held = self.remote.read_owner(self.slug, self.machine)
        where = f"{self.remote.describe()} ({self.slug}/{self.machine})"
        if held is not None:
            self.generation = generation(held)
        if held is None:
            if self.remote.position(self.slug, self.machine) is not None:
                raise ReplicaOwnedError(
                    f"{where} holds a replica that no store owns: not starting over it"
                )
        elif held.get("unreadable") or held.get("store") != self.store:
            raise ReplicaOwnedError(
                f"{where} belongs to another copy of this store (host "
                f"{held.get('host', '?')}): never two writers on one replica"
            )
        elif _live(held) and held.get("run") != self.run and not _dead_here(held):
            raise ReplicaOwnedError(
                f"{where} is being written by a live `sync run` (host {held.get('host')}, "
                f"pid {held.get('pid')}): never two writers on one replica"
            )
        self.remote.write_owner(self.slug, self.machine, self._record())
        time.sleep(settle_s)
        self.check()

    def check(self) -> None:
        """ReplicaOwnedError when another run has taken the replica since."""
        held = self.remote.read_owner(self.slug, self.machine) or {}
        if held.get("run") != self.run:
            raise ReplicaOwnedError(
                f"another run (host {held.get('host', '?')}, pid {held.get('pid', '?')}) "
                "took this machine's replica: stopped replicating"
            )

    def heartbeat(self) -> None:
        self.check()
        self.remote.write_owner(self.slug, self.machine, self._record())

    def purged(self) -> None:
        """This machine's replica history was deleted: a new generation begins."""
        self.generation += 1
        self.remote.write_owner(self.slug, self.machine, self._record())

    def release(self) -> None:
        held = self.remote.read_owner(self.slug, self.machine) or {}
        if held.get("run") == self.run:
            self.remote.write_owner(self.slug, self.machine, self._record(stopped=True))


def condition(held: dict[str, Any] | None) -> str:
    """What a machine's claim says of it: "live" (its `sync run` keeps the heartbeat),
    "stopped" (its run exited cleanly: it pulls when it runs again), "silent" (the
    heartbeat stopped without a clean exit: killed, cut off, or gone for good; `sync
    retire` takes such a machine out), or "unknown" (no claim to read)."""
    if not held or held.get("unreadable"):
        return "unknown"
    if _live(held):
        return "live"
    return "stopped" if held.get("stopped") else "silent"


def heartbeat_age(held: dict[str, Any]) -> float | None:
    """Seconds since the claim's last heartbeat (None: it has none)."""
    try:
        return max(0.0, time.time() - float(held["heartbeat"]))
    except (KeyError, TypeError, ValueError):
        return None


def _live(held: dict[str, Any]) -> bool:
    if held.get("stopped"):
        return False
    try:
        return time.time() - float(held.get("heartbeat", 0)) < LEASE_S
    except (TypeError, ValueError):
        return False


def _dead_here(held: dict[str, Any]) -> bool:
    """The claim names a process of this host that no longer exists."""
    if held.get("host") != socket.gethostname():
        return False
    try:
        pid = int(held.get("pid", 0))
        if pid <= 0:
            return False
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, TypeError, ValueError):
        return False  # alive (another user's), or a claim that names no pid
    return False


def generation(held: dict[str, Any]) -> int:
    try:
        return int(held.get("generation", 0))
    except (TypeError, ValueError):
        return 0
