"""What every replica location is (remote.py names them): the base class of the backends,
how far a replica has got, and what the backends read alike (LTX names, owner files)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OWNER_FILE = "owner.json"
# A Litestream LTX file name: <min txid>-<max txid>.ltx, both 16 hex digits.
LTX_NAME = re.compile(r"^([0-9a-f]{16})-([0-9a-f]{16})\.ltx$")
TRUE_WORDS = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Position:
    """How far a replica has got: its newest transaction id and when that was written."""

    txid: int
    written_at: str | None

    def __repr__(self) -> str:
        return f"Position({self.txid:#x}, {self.written_at!r})"


class Remote:
    """One replica location (see parse)."""

    scheme = ""
    # How often `sync run` reads the peers' positions (watch.py): a listing per peer each
    # time, which a remote location bills or makes a connection for.
    watch_s = 10.0

    def __init__(self, url: str) -> None:
        self.url = url

    def describe(self) -> str:
        return self.url

    def replica(self, key_slug: str, machine: str) -> dict[str, Any]:
        """The `replica:` block of a Litestream config for this machine's replica."""
        raise NotImplementedError

    def machines(self, key_slug: str) -> list[str]:
        """The machines that have a replica (or an owner file) of this repository."""
        raise NotImplementedError

    def slugs(self) -> list[str]:
        """The sync keys' directories at this location (key.is_slug names): where clones of
        one repository keyed otherwise are looked for."""
        raise NotImplementedError

    def vfs_url(self, key_slug: str, machine: str) -> str:
        """The replica URL Litestream's VFS reads (sync peek)."""
        raise NotImplementedError

    def read_owner(self, key_slug: str, machine: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def write_owner(self, key_slug: str, machine: str, owner: dict[str, Any]) -> None:
        raise NotImplementedError

    def position(self, key_slug: str, machine: str) -> Position | None:
        """The replica's newest transaction, or None when it holds none yet."""
        raise NotImplementedError

    def purge(self, key_slug: str, machine: str) -> bool:
        """Delete this machine's replica history (its owner file stays); False when this
        kind of location cannot (the history then ages out with the retention)."""
        raise NotImplementedError

    def remove(self, key_slug: str, machine: str) -> bool:
        """Delete a retired machine's replica whole: its history and its owner file, so
        the location no longer lists it (sync retire). False when something is left."""
        raise NotImplementedError


def position_of(names: list[tuple[str, str | None]]) -> Position | None:
    best: Position | None = None
    for name, when in names:
        m = LTX_NAME.match(name)
        if m is None:
            continue
        txid = int(m.group(2), 16)
        if best is None or txid > best.txid:
            best = Position(txid, when)
    return best


def iso_of_mtime(mtime: float) -> str:
    from ..timestamps import iso_utc

    return iso_utc(int(mtime * 1_000_000))


def owner_of(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except ValueError:
        return {"unreadable": True}
    return value if isinstance(value, dict) else {"unreadable": True}
