"""What makes `sync run` pull: a peer's replica moving. Its position (remote_base.Position)
is read often and cheaply, at the pace its kind of location allows (Remote.watch_s: a
directory every half second; S3, SFTP a request or a connection per peer, less often), and a
move starts a pull within seconds of the peer's write; the `--pull-every` timer stays, as
the fallback for a location that cannot be listed for a while.

A pull restores the whole peer, so pulls started by moves are spaced by a multiple of the
last one's length (Pace): a peer that writes without pause costs a bounded share of this
machine, never a restore after every one of its syncs."""

from __future__ import annotations

from ..errors import SyncError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .remote import Remote

# Pulls started by a peer's move: at least MIN_GAP_S apart, and at least DUTY times the
# last pull's length (a pull then takes at most 1 / (1 + DUTY) of the time).
MIN_GAP_S = 1.0
DUTY = 3.0


class Watch:
    """The peers' replica positions, as last read."""

    def __init__(self, remote: Remote, key_slug: str, me: str) -> None:
        self.remote, self.slug, self.me = remote, key_slug, me
        self.every_s = remote.watch_s
        self._seen: dict[str, int] | None = None
        self._next = 0.0

    def due(self, now: float) -> bool:
        return now >= self._next

    def moved(self, now: float) -> bool:
        """Read every peer's position (a first read only remembers them): True when a peer
        appeared or its replica moved since the last read. A location that cannot be read
        now counts as no move (the timer's pull says what fails)."""
        self._next = now + self.every_s
        try:
            seen: dict[str, int] = {}
            for m in self.remote.machines(self.slug):
                if m != self.me:
                    pos = self.remote.position(self.slug, m)
                    seen[m] = -1 if pos is None else pos.txid
        except SyncError:
            return False
        before, self._seen = self._seen, seen
        return before is not None and seen != before


class Pace:
    """When the next pull a move asks for may start (see the module's docstring)."""

    def __init__(self) -> None:
        self._not_before = 0.0

    def ready(self, now: float) -> bool:
        return now >= self._not_before

    def pulled(self, started: float, ended: float) -> None:
        self._not_before = ended + max(MIN_GAP_S, DUTY * (ended - started))
