"""What this machine knows of the others, and the workspace's sync key.

The record of peers (`<db>-sync/peers.json`) lives outside the database on purpose: every
write to the store is a transaction Litestream replicates, and a pull that recorded its
bookkeeping in the store would change this machine's replica, which the other machines would
then pull, recording theirs: two idle machines would pull each other for ever. So a pull
that brings nothing writes nothing to the store. The file is local state (like cursors and
seqs): a copied or restored store starts without it.

The sync key is in the store (`workspaces.sync_key`): a peer's file says with it which of
its workspaces is this repository."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from .. import identity
from .._record import Frozen
from ..context import StoreContext
from ..timestamps import utc_now_iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class Peer(Frozen):
    """Another machine of this repository, as this machine last saw it."""

    __slots__ = (
        "machine",
        "host",
        "position",
        "pulled_at",
        "seen_position",
        "seen_at",
        "replica_at",
        "ahead",
        "entry_seq",
        "generation",
    )
    machine: str
    host: str
    position: int  # its replica's transaction id merged last (0: never)
    pulled_at: str | None
    seen_position: int  # the newest transaction id seen in its replica
    seen_at: str | None
    replica_at: str | None  # when its replica was last written, as then seen
    ahead: int  # entry versions it held that this store lacked, when last seen
    entry_seq: int  # its journal seq merged through (the next merge reads after it)
    generation: int  # of its replica history, when merged (owner.py)

    def __init__(self, **values: Any) -> None:
        defaults: dict[str, Any] = {
            "host": "",
            "position": 0,
            "pulled_at": None,
            "seen_position": 0,
            "seen_at": None,
            "replica_at": None,
            "ahead": 0,
            "entry_seq": 0,
            "generation": 0,
        }
        self._set(**{**defaults, **{k: v for k, v in values.items() if k in self.__slots__}})

    @property
    def behind(self) -> bool:
        """Its replica had changes this store has not merged (as last seen)."""
        return self.seen_position != self.position

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class PeerBook:
    """`peers.json`: read whole, updated under an exclusive lock, replaced atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, Peer]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        out: dict[str, Peer] = {}
        for machine, fields in data.get("peers", {}).items():
            if isinstance(fields, dict):
                with contextlib.suppress(TypeError):
                    out[str(machine)] = Peer(**{**fields, "machine": str(machine)})
        return out

    def get(self, machine: str) -> Peer | None:
        return self.load().get(machine)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Peer]]:
        import fcntl

        lock = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            book = self.load()
            yield book
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            payload = {"peers": {m: p.to_dict() for m, p in sorted(book.items())}}
            fd_tmp = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd_tmp, "w", encoding="utf-8") as fh:
                json.dump(payload, fh, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        finally:
            os.close(fd)

    def seen(
        self, machine: str, host: str, position: int, replica_at: str | None, ahead: int
    ) -> None:
        """A look at a peer's replica (its newest transaction, what it holds beyond this
        store), without merging."""
        with self._locked() as book:
            old = book.get(machine, Peer(machine=machine)).to_dict()
            old.update(
                host=host or old["host"],
                seen_position=position,
                seen_at=utc_now_iso(),
                replica_at=replica_at,
                ahead=ahead,
            )
            book[machine] = Peer(**old)

    def merged(
        self,
        machine: str,
        host: str,
        position: int,
        replica_at: str | None,
        entry_seq: int,
        generation: int = 0,
    ) -> None:
        """A merge of a peer's replica at `position` (its journal merged through
        `entry_seq`): nothing of it is left unpulled."""
        now = utc_now_iso()
        with self._locked() as book:
            old = book.get(machine, Peer(machine=machine)).to_dict()
            old.update(
                host=host or old["host"],
                position=position,
                pulled_at=now,
                seen_position=position,
                seen_at=now,
                replica_at=replica_at,
                ahead=0,
                entry_seq=max(int(old["entry_seq"]), entry_seq),
                generation=generation,
            )
            book[machine] = Peer(**old)

    def drop(self, machines: set[str]) -> bool:
        """Forget `machines` (retired, or gone from the replica location); True when the
        book held any of them. Written only then: a pull that changes nothing writes
        nothing."""
        if not machines & self.load().keys():
            return False
        with self._locked() as book:
            for machine in machines:
                book.pop(machine, None)
        return True

    def ahead(self) -> int:
        """Entry versions other machines held that this store lacked, when last seen."""
        return sum(p.ahead for p in self.load().values() if p.behind)


def sync_key(ctx: StoreContext) -> str | None:
    return identity.sync_key(ctx.db, ctx.workspace_pk)


def set_sync_key(ctx: StoreContext, key: str) -> None:
    identity.set_sync_key(ctx.db, ctx.workspace_pk, key)
