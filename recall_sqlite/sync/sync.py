"""`store.sync`: the store on more than one machine. Composition only: each call is one of
the room's modules (setup, run, pull, status, peek, verify) on this store's `<db>-sync/`
state and configuration, so the CLI only parses and formats and a host gets the same calls.

Imports nothing heavy until a call needs it. Whether a store syncs is place.py's to say,
asked at every open: a read's start loads neither this module nor the rest of the room."""

from __future__ import annotations

from .._record import Frozen
from . import place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from pathlib import Path
    from typing import Any

    from ..context import StoreContext
    from ..journal.forget import FilesHook
    from .compare import SyncVerify
    from .pause import Hold
    from .peek import Peeked
    from .pull import PeerPull, PullReport
    from .retire import Retired
    from .run import StopFlag
    from .setup import Joined, Restored
    from .state import SyncConfig, SyncState
    from .status import SyncStatus


class Sync:
    """This store's replication and its peers (`store.sync`)."""

    def __init__(
        self, ctx: StoreContext, root: Path, db_path: Path, *, files: FilesHook | None = None
    ) -> None:
        self._ctx, self._root, self._db_path = ctx, root, db_path
        # The store's reach into synapt's files (legacy/copies.py, composed in as the
        # journal's): a pull that applies another machine's forget scrubs them too.
        self._files = files

    # -- set up ------------------------------------------------------------------------

    def configured(self) -> bool:
        """True once `init` (or a restore) set this store up."""
        return place.syncs(self._db_path)

    def config(self) -> SyncConfig:
        """What `init` chose; SyncSetupError when sync is not set up here."""
        return self._state().config()

    def init(
        self,
        url: str,
        *,
        key: str | None = None,
        commit_key: bool = False,
        pull_every_s: float | None = None,
        retention: str | None = None,
    ) -> Joined:
        """Join this repository's replicas at `url` (a path, s3://..., sftp://...): the sync
        key resolved (`key` given, else the repository's own), recorded in the store, and
        the configuration written; the machines already there are the peers."""
        from .setup import init
        from .state import DEFAULT_PULL_EVERY_S, DEFAULT_RETENTION

        return init(
            self._ctx,
            self._root,
            self._db_path,
            url,
            key=key,
            commit_key=commit_key,
            pull_every_s=DEFAULT_PULL_EVERY_S if pull_every_s is None else pull_every_s,
            retention=DEFAULT_RETENTION if retention is None else retention,
        )

    # -- the other machines ------------------------------------------------------------

    def pull(self, *, full: bool = False, machine: str | None = None) -> PullReport:
        """Merge every other machine's replica now (or `machine`, an id or its start);
        `full` re-reads every entry version (a repair: the result is the same)."""
        from .pull import PullReport, pull_all

        state, config = self._state(), self.config()
        pulled = pull_all(
            self._ctx, state, config, quiet=self.hold, full=full, only=machine, files=self._files
        )
        hints = () if pulled else self._elsewhere(state, config)
        return PullReport(peers=tuple(pulled), elsewhere=hints, key=config.key, url=config.url)

    def retire(self, machine: str, *, force: bool = False) -> Retired:
        """Take a machine that is gone for good out of the repository's replicas (an id or
        its start): refused while its claim is live (unless `force`), its replica pulled
        first (nothing it alone held is lost; unpullable: refused unless `force`), then
        deleted from the location and forgotten in peers.json (sync/retire.py)."""
        from ..checks import require_bool, require_text
        from .retire import retire

        require_text("machine", machine, allow_empty=False)
        require_bool("force", force)
        state, config = self._state(), self.config()
        return retire(
            self._ctx, state, config, machine, force=force, quiet=self.hold, files=self._files
        )

    def status(self, *, count: bool = True) -> SyncStatus:
        """This machine's replication and every peer; `count` restores each peer that moved
        to count what this store has not pulled (never merged)."""
        from .status import status

        return status(self._ctx, self._state(), self.config(), count=count, root=self._root)

    def peek(self, machine: str, n: int = 5) -> Peeked:
        """A peer's `n` newest entries read from its replica (an id or its start), nothing
        downloaded or merged (Litestream's VFS)."""
        from .peek import peek_machine

        return peek_machine(self.config(), machine, n)

    def verify(self) -> SyncVerify:
        """Each peer's replica against this store: the entry versions either holds that
        the other lacks and has not forgotten (both zero: the two have met)."""
        from .compare import verify

        return verify(self._ctx, self._state(), self.config())

    def run(
        self,
        *,
        stop: StopFlag | None = None,
        pull_every_s: float | None = None,
        on_pull: Callable[[list[PeerPull]], None] | None = None,
        log: Callable[[str], None] | None = None,
    ) -> int:
        """Replicate this store with Litestream and pull another machine when its replica
        moves (and every `pull_every_s` whatever happens) until `stop` is set (a signal
        handler sets it); 0 on a clean stop. Litestream is a child of the calling thread,
        and on Linux dies with it."""
        from .run import Supervisor

        config = self.config()
        if pull_every_s is not None:
            config.pull_every_s = pull_every_s
        from .key import facts

        supervisor = Supervisor(
            self._ctx,
            self._state(),
            config,
            on_pull=on_pull,
            log=log,
            facts=facts(self._root),
            files=self._files,
        )
        if stop is not None:
            supervisor.stop = stop
        return supervisor.run()

    # -- what the journal is composed with ---------------------------------------------

    def hold(self, purge: bool = False) -> AbstractContextManager[Hold]:
        """Replication held still for a block (a forget's checkpoint); with `purge`, this
        machine's replica history goes too."""
        from .pause import quiet

        return quiet(self._db_path, purge=purge)

    def ahead(self) -> int:
        """Entry versions other machines held that this store lacked, when last seen."""
        return self._state().book.ahead()

    def looks_dead(self) -> tuple[tuple[str, str, bool], ...]:
        """The other machines whose `sync run` stopped without a clean exit (id, host,
        whether it ran on this host): what `sync restore` names for `sync retire`."""
        from .setup import looks_dead

        config = self.config()
        return looks_dead(config.remote(), config.slug, self._state().machine())

    def _state(self) -> SyncState:
        from .state import SyncState

        return SyncState(self._db_path)

    def _elsewhere(
        self, state: SyncState, config: SyncConfig
    ) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        from .setup import elsewhere

        return elsewhere(config.remote(), self._root, config.key, state.machine())


def require_set_up(db_path: str | Path) -> None:
    """SyncSetupError unless `sync init` (or a restore) set up the store at `db_path`,
    asked before anything opens it: pull, run, status and verify never create a store
    where there is none (a new machine that checks `sync status` first can still restore)."""
    from pathlib import Path

    from .state import SyncState

    SyncState(Path(db_path)).config()


class RestoreReport(Frozen):
    """What `restore_store` did: the replica restored, the other machines pulled into it,
    whether doctor then found the store sound, the machine it retired (the one this
    machine replaces, when named) and the other machines that look dead (id, host, whether
    it ran on this host: `sync retire` takes one out)."""

    __slots__ = ("db_path", "restored", "pulled", "doctor_ok", "retired", "looks_dead")
    db_path: str
    restored: Restored
    pulled: PullReport
    doctor_ok: bool
    retired: Retired | None
    looks_dead: tuple[tuple[str, str, bool], ...]

    def __init__(
        self,
        *,
        db_path: str,
        restored: Restored,
        pulled: PullReport,
        doctor_ok: bool,
        retired: Retired | None = None,
        looks_dead: tuple[tuple[str, str, bool], ...] = (),
    ) -> None:
        self._set(
            db_path=db_path,
            restored=restored,
            pulled=pulled,
            doctor_ok=doctor_ok,
            retired=retired,
            looks_dead=looks_dead,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "db_path": self.db_path,
            **self.restored.to_dict(),
            "pulled": [p.to_dict() for p in self.pulled.peers],
            "doctor_ok": self.doctor_ok,
            "retired": self.retired.to_dict() if self.retired is not None else None,
            "looks_dead": [
                {"machine": m, "host": h, "this_host": same} for m, h, same in self.looks_dead
            ],
        }
