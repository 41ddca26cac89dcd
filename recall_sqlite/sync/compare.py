"""`sync verify`: have this store and each peer met? (legacy/verify.py checks an import.)
Each peer's replica is restored (never merged) and the two compared by entry id, both ways:
what the peer holds that this store lacks and has not forgotten (a pull here brings it),
and what this store holds that the peer lacks and has not forgotten (a pull there brings
it). Both zero: the two read alike."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import RecallError
from .merge import count_ahead, count_missing, peer_workspace
from .pull import restored_copy
from .state import SyncConfig, SyncState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..context import StoreContext
    from ..db import Database


@dataclass(frozen=True)
class PeerCheck:
    """One peer against this store (None counts: its replica could not be read)."""

    machine: str
    missing_here: int | None  # entry versions it holds that this store lacks
    missing_there: int | None  # entry versions this store holds that it lacks
    error: str = ""

    @property
    def met(self) -> bool:
        return self.missing_here == 0 and self.missing_there == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "missing_here": self.missing_here,
            "missing_there": self.missing_there,
            "met": self.met,
            "error": self.error,
        }


@dataclass(frozen=True)
class SyncVerify:
    """Every peer against this store (`store.sync.verify`)."""

    machine: str
    peers: tuple[PeerCheck, ...]

    @property
    def ok(self) -> bool:
        """Every peer met this store (true with no peer: there is nothing to meet)."""
        return all(p.met for p in self.peers)

    def to_dict(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "ok": self.ok,
            "peers": [p.to_dict() for p in self.peers],
        }


def verify(ctx: StoreContext, state: SyncState, config: SyncConfig) -> SyncVerify:
    me = state.machine()
    checks = []
    for m in config.remote().machines(config.slug):
        if m != me:
            checks.append(_check(ctx, state, config, m))
    return SyncVerify(machine=me, peers=tuple(checks))


def _check(ctx: StoreContext, state: SyncState, config: SyncConfig, machine: str) -> PeerCheck:
    try:
        with restored_copy(state, config, machine) as peer:
            if peer is None:
                return PeerCheck(machine, None, None, "its replica holds no backup yet")
            return PeerCheck(
                machine, count_ahead(ctx, peer, config.key), _missing_there(ctx, peer, config)
            )
    except RecallError as exc:
        return PeerCheck(machine, None, None, str(exc))


def _missing_there(ctx: StoreContext, peer: Database, config: SyncConfig) -> int:
    """This store's entry versions that the peer neither holds nor has forgotten."""
    peer_ws, _ = peer_workspace(peer, config.key)
    return count_missing(ctx.db, ctx.workspace_pk, peer, peer_ws)
