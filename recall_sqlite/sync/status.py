"""`sync status`: this machine's replication (is `sync run` live, how far its replica has
got, what a crash now would lose; a Litestream that a `sync run` killed with SIGKILL left
replicating is stopped, and named) and every peer (its replica's position, when it was
written, whether its owner is live, what was pulled of it, and how many entry versions it
holds that this store has not pulled yet: restored and counted, never merged here)."""

from __future__ import annotations

import json
import time

from .._record import Frozen
from ..db import as_int
from ..errors import RecallError
from . import orphan, pause, peers
from .key import elsewhere_dicts
from .merge import count_ahead
from .owner import LEASE_S, condition, generation
from .pull import restored_copy
from .setup import elsewhere
from .state import SyncConfig, SyncState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..context import StoreContext

# What a crash of a live `sync run` loses at most, with the generated config: about one
# monitor interval plus one sync interval (bench/RESULTS.md, row 'loss window').
LOSS_WINDOW = "about 0.5 s"


class PeerStatus(Frozen):
    __slots__ = (
        "machine",
        "host",
        "live",
        "condition",
        "position",
        "written_at",
        "pulled_position",
        "pulled_at",
        "ahead",
        "behind",
        "error",
    )
    machine: str
    host: str
    live: bool  # its `sync run` holds a live claim on its replica
    # owner.py condition: live | stopped | silent (stopped without a clean exit: killed,
    # cut off, or dead for good, which `sync retire` takes out) | unknown
    condition: str
    position: int | None  # its replica's newest transaction (None: no replica yet)
    written_at: str | None
    pulled_position: int | None  # what this store merged last (None: never)
    pulled_at: str | None
    ahead: int | None  # entry versions it holds that this store lacks (None: not counted)
    behind: bool  # its replica moved since this store last merged it
    error: str

    def __init__(self, **values: Any) -> None:
        self._set(**values)

    def to_dict(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self.__slots__}


class SyncStatus(Frozen):
    __slots__ = (
        "url",
        "key",
        "machine",
        "running",
        "run_pid",
        "orphans_stopped",
        "orphans_left",
        "position",
        "written_at",
        "loss_window",
        "peers",
        "forgotten_by",
        "elsewhere",
    )
    url: str
    key: str
    machine: str
    running: bool
    run_pid: int | None
    # Litestreams found replicating this store with no live `sync run`, stopped just now.
    orphans_stopped: tuple[int, ...]
    orphans_left: tuple[str, ...]  # those still replicating: why each could not be stopped
    position: int | None  # this machine's replica
    written_at: str | None
    loss_window: str
    peers: tuple[PeerStatus, ...]
    # (machine, entries, summaries, vectors): every removal this store holds, by the
    # machine that asked for it (this one's own included)
    forgotten_by: tuple[tuple[str, int, int, int], ...]
    # With no peers: machines of this repository under another key (setup.elsewhere)
    elsewhere: tuple[tuple[str, str, tuple[str, ...]], ...]

    def __init__(self, **values: Any) -> None:
        self._set(**values)

    def to_dict(self) -> dict[str, Any]:
        out = {n: getattr(self, n) for n in self.__slots__}
        out["peers"] = [p.to_dict() for p in self.peers]
        out["forgotten_by"] = [
            {"machine": m, "entries": e, "summaries": s, "vectors": v}
            for m, e, s, v in self.forgotten_by
        ]
        out["elsewhere"] = elsewhere_dicts(self.elsewhere)
        out["orphans_stopped"] = list(self.orphans_stopped)
        out["orphans_left"] = list(self.orphans_left)
        return out


def forgotten_by(ctx: StoreContext, me: str) -> tuple[tuple[str, int, int, int], ...]:
    """The tombstones of this workspace counted by the machine that asked (NULL: this
    machine, `me`), each kind apart."""
    rows = ctx.db.query(
        "SELECT coalesce(asked_by, ?), 0 FROM journal_tombstones"
        " WHERE workspace_id = ? AND formula = 2"
        " UNION ALL SELECT coalesce(asked_by, ?), 1 FROM summary_tombstones WHERE workspace_id = ?"
        " UNION ALL SELECT coalesce(asked_by, ?), 2 FROM vector_tombstones WHERE workspace_id = ?",
        (me, ctx.workspace_pk) * 3,
    )
    counts: dict[str, list[int]] = {}
    for machine, kind in rows:
        counts.setdefault(str(machine), [0, 0, 0])[as_int(kind)] += 1
    return tuple((m, c[0], c[1], c[2]) for m, c in sorted(counts.items()))


def status(
    ctx: StoreContext,
    state: SyncState,
    config: SyncConfig,
    *,
    count: bool = True,
    root: Path | None = None,
) -> SyncStatus:
    """This machine and every peer; with no peer and the clone's `root`, the machines of
    this repository under another key."""
    remote = config.remote()
    me = state.machine()
    running = pause.run_is_live(state)
    # Before the replica's position is read: the stopped Litestream's last sync counts.
    stopped, left = ([], []) if running else orphan.reap(state)
    pid = None
    if running:
        try:
            pid = int(json.loads(state.run_info.read_text(encoding="utf-8"))["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            pid = None
    own = remote.position(config.slug, me)
    if running:
        loss = f"{LOSS_WINDOW} (sync run is live)"
    elif left:
        loss = (
            f"{LOSS_WINDOW} while the Litestream left behind replicates (no `sync run`: nothing"
            " pulls, the claim is not kept)"
        )
    elif own is not None:
        loss = (
            f"everything since {own.written_at or 'the last replicated commit'}: "
            "sync run is not running, commits stay on this machine only"
        )
    else:
        # What the peers' replicas hold survives either way (a restore brings it back).
        loss = (
            "every commit made here that no other machine has pulled: this machine has never"
            " replicated (start `recall-sqlite sync run`)"
        )
    known = state.book.load()
    out: list[PeerStatus] = []
    for m in remote.machines(config.slug):
        if m == me:
            continue
        out.append(_peer(ctx, state, config, m, known.get(m), count=count))
    return SyncStatus(
        url=remote.describe(),
        key=config.key,
        machine=me,
        running=running,
        run_pid=pid,
        orphans_stopped=tuple(stopped),
        orphans_left=tuple(left),
        position=own.txid if own else None,
        written_at=own.written_at if own else None,
        loss_window=loss,
        peers=tuple(out),
        forgotten_by=forgotten_by(ctx, me),
        elsewhere=elsewhere(remote, root, config.key, me) if root and not out else (),
    )


def _peer(
    ctx: StoreContext,
    state: SyncState,
    config: SyncConfig,
    machine: str,
    known: peers.Peer | None,
    *,
    count: bool,
) -> PeerStatus:
    remote = config.remote()
    error = ""
    behind = False
    owner: dict[str, Any] = {}
    pos = None
    ahead: int | None = None
    try:
        owner = remote.read_owner(config.slug, machine) or {}
        pos = remote.position(config.slug, machine)
        pulled = (known.generation, known.position) if known and known.pulled_at else None
        behind = pos is not None and (generation(owner), pos.txid) != pulled
        if pos is not None and not behind:
            ahead = 0
        elif pos is not None and count:
            ahead = _count(ctx, state, config, machine)
            if ahead is not None:
                host = str(owner.get("host", ""))
                state.book.seen(machine, host, pos.txid, pos.written_at, ahead)
    except RecallError as exc:
        error = str(exc)
    live = (
        not owner.get("stopped")
        and isinstance(owner.get("heartbeat"), (int, float))
        and time.time() - float(owner["heartbeat"]) < LEASE_S
    )
    return PeerStatus(
        machine=machine,
        host=str(owner.get("host", "")),
        live=bool(live),
        condition=condition(owner or None),
        position=pos.txid if pos else None,
        written_at=pos.written_at if pos else None,
        pulled_position=known.position if known and known.pulled_at else None,
        pulled_at=known.pulled_at if known else None,
        ahead=ahead,
        behind=behind,
        error=error,
    )


def _count(ctx: StoreContext, state: SyncState, config: SyncConfig, machine: str) -> int | None:
    with restored_copy(state, config, machine) as peer:
        return None if peer is None else count_ahead(ctx, peer, config.key)
