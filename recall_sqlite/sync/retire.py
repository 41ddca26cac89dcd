"""`sync retire MACHINE`: a machine gone for good (its disk died, it was rebuilt with `sync
restore` under a new id) taken out of the repository's replicas.

Its replica is the only writer-less copy the others cannot purge: every machine purges its
own history when it applies a forget, and a dead one never will, so whatever it held
(forgotten text included) stays at the location for good, and every `sync status` lists it.
Retiring it, in this order, loses nothing and leaves nothing:

1. refused while its claim is live (owner.py: its `sync run` keeps the heartbeat), unless
   forced: a live machine would write its replica anew, and lose nothing by being asked
   to stop first;
2. its replica pulled into this store (pull.py: the union, its tombstones applied, the
   text others forgot scrubbed here), so every version it alone held is kept; a replica
   that cannot be pulled is not deleted, unless forced;
3. its replica deleted whole from the location (history and owner file), and it is
   forgotten in this machine's peers.json (each other machine forgets it at its next
   pull, when the location no longer lists it).

Loaded only by `sync retire` and `sync restore --retire`."""

from __future__ import annotations

from typing import Any

from .._record import Frozen
from ..errors import ReplicaOwnedError, SyncError, UsageError
from .owner import condition, heartbeat_age
from .pull import PeerPull, pull_all
from .state import SyncConfig, SyncState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..context import StoreContext
    from ..journal.forget import FilesHook
    from .pull import Quiet


class Retired(Frozen):
    """What `store.sync.retire` did: the machine, what its claim said of it, the pull of
    its replica (None: it held no backup), whether its replica is gone from the location,
    and what to know (one sentence each)."""

    __slots__ = ("machine", "host", "condition", "pulled", "deleted", "forced", "notes")
    machine: str
    host: str
    condition: str  # owner.py condition: live | stopped | silent | unknown
    pulled: PeerPull | None
    deleted: bool
    forced: bool
    notes: tuple[str, ...]

    def __init__(self, **values: Any) -> None:
        self._set(**values)

    def to_dict(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "host": self.host,
            "condition": self.condition,
            "pulled": self.pulled.to_dict() if self.pulled is not None else None,
            "deleted": self.deleted,
            "forced": self.forced,
            "notes": list(self.notes),
        }


def find_machine(machines: list[str], wanted: str, me: str) -> str:
    """The one machine of `machines` that is `wanted` or starts with it; UsageError for
    none, several, or this machine itself."""
    found = [m for m in machines if m == wanted] or [m for m in machines if m.startswith(wanted)]
    if len(found) != 1:
        what = "no machine" if not found else f"{len(found)} machines"
        raise UsageError(f"{what} of this repository starts with {wanted!r}")
    if found[0] == me:
        raise UsageError(
            f"machine {me} is this one: retire a machine from another one (this one's replica"
            " is written anew by its next `sync run`)"
        )
    return found[0]


def retire(
    ctx: StoreContext,
    state: SyncState,
    config: SyncConfig,
    wanted: str,
    *,
    force: bool = False,
    quiet: Quiet | None = None,
    files: FilesHook | None = None,
) -> Retired:
    """Retire the machine `wanted` (its id or the start of it): see the module docstring."""
    remote, slug = config.remote(), config.slug
    machine = find_machine(remote.machines(slug), wanted, state.machine())
    owner = remote.read_owner(slug, machine)
    host = str((owner or {}).get("host", ""))
    said = condition(owner)
    notes: list[str] = []
    if said == "live":
        age = heartbeat_age(owner or {})
        beat = f"{age:.0f} s ago" if age is not None else "recently"
        if not force:
            raise ReplicaOwnedError(
                f"machine {machine} ({host or 'host unknown'}) is live: its `sync run` wrote"
                f" its heartbeat {beat}; stop it there (it is not dead), or --force if that"
                " host is gone and another copy of it keeps the claim"
            )
        notes.append(
            f"its claim was live (heartbeat {beat}): a `sync run` still going there writes"
            " its replica anew, and it is listed again"
        )
    pulls = pull_all(ctx, state, config, quiet=quiet, only=machine, files=files)
    pulled = next((p for p in pulls if p.machine == machine), None)
    if pulled is not None and pulled.status == "failed":
        if not force:
            raise SyncError(
                f"machine {machine}'s replica could not be pulled ({pulled.error}): not"
                " deleting what may be the only copy of some of its entries; --force"
                " deletes it anyway"
            )
        notes.append(f"its replica could not be pulled ({pulled.error}): deleted unmerged")
    deleted = remote.remove(slug, machine)
    state.book.drop({machine})
    if not deleted:
        notes.append(
            f"its replica could not be deleted whole at {remote.describe()}: remove"
            f" {slug}/{machine} there by hand"
        )
    return Retired(
        machine=machine,
        host=host,
        condition=said,
        pulled=pulled,
        deleted=deleted,
        forced=force,
        notes=tuple(notes),
    )
