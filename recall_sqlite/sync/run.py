"""`sync run`: the foreground process a service manager (systemd, launchd) or a terminal
keeps running. It claims this machine's replica (owner.py), keeps `litestream replicate`
alive on the store, pulls the other machines when one's replica moves (watch.py) and every
`pull_every_s` whatever happens, answers pause requests (pause.py) and stops cleanly on
SIGTERM or SIGINT: Litestream syncs what is left, the claim is released, the exit code is 0.

One `sync run` per store: it holds `<db>-sync/run.lock` for as long as it lives, and its
Litestream dies with it (orphan.py); one that a `sync run` killed with SIGKILL left behind is
stopped before this one starts its own."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time

from ..errors import ReplicaOwnedError, SyncError
from . import litestream, orphan, pause
from .owner import HEARTBEAT_S, Claim
from .pull import PeerPull, pull_all
from .state import SyncConfig, SyncState
from .watch import Pace, Watch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from apsw import Connection

    from ..context import StoreContext
    from ..journal.forget import FilesHook

TICK_S = 0.05
# The WAL while Litestream replicates: Litestream keeps a read open on the store, so only its
# own checkpoints restart the WAL (every 100-300 ms in a burst, litestream.py's settings),
# and the file keeps the largest size it reached in between (nothing truncates it). A
# writer at full speed (~100 MB/s of WAL in a burst of appends) outruns Litestream, so
# sync run truncates it itself, with Litestream held still and the writer waiting on the
# checkpoint: at once past WAL_HARD, or once the WAL has been idle past WAL_IDLE_S at more
# than WAL_SOFT bytes (bench/bench_sync.py measures both).
WAL_SOFT = 4 * 2**20
WAL_HARD = 16 * 2**20
WAL_IDLE_S = 1.0
TRUNCATE_RETRY_S = 0.002
TRUNCATE_LIMIT_S = 10.0
# A pause never lasts longer than this, whatever the requester does.
PAUSE_LIMIT_S = 60.0
# How long a stop waits for Litestream's first sync after a purge (Supervisor._settle).
SETTLE_S = 15.0
RESTARTS_PER_MINUTE = 5


def truncate_wal(conn: Connection, limit_s: float = TRUNCATE_LIMIT_S) -> bool:
    """A TRUNCATE checkpoint tried every TRUNCATE_RETRY_S without waiting on the busy
    handler, until one gets through (True) or `limit_s` passes. A checkpoint waiting on the
    handler holds SQLite's checkpoint lock meanwhile, so a writer in a burst, which takes
    its lock back between most of the handler's sleeps, could not restart the WAL either,
    and the WAL grew for as long as that took (bench/RESULTS.md, row 'WAL's largest size
    during a 5,000-append burst with sync run'). Each try that misses still copies what it
    can (as PASSIVE), and between tries the writer's own checkpoints restart it."""
    from ..db import BUSY_TIMEOUT_MS, checkpoint

    deadline = time.monotonic() + limit_s
    conn.set_busy_timeout(0)
    try:
        while not checkpoint(conn):
            if time.monotonic() > deadline:
                return False
            time.sleep(TRUNCATE_RETRY_S)
        return True
    finally:
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)


class StopFlag:
    """When to stop, set from a signal handler. Plain attributes and no lock: a
    threading.Event takes its lock in set(), which the main thread also holds for a few
    bytecodes of every wait(); a SIGTERM whose handler ran there waited on that lock
    forever, and `sync run` never stopped. (The handler writes nothing either: a write to
    stderr while the main thread is inside one raises.)"""

    __slots__ = ("_set", "reason")

    def __init__(self) -> None:
        self._set = False
        self.reason = ""

    def set(self, reason: str = "") -> None:
        self.reason = reason
        self._set = True

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float) -> bool:
        """Sleep up to `timeout` unless set (a signal's handler runs during the sleep)."""
        if not self._set:
            time.sleep(timeout)
        return self._set


class Supervisor:
    def __init__(
        self,
        ctx: StoreContext,
        state: SyncState,
        config: SyncConfig,
        *,
        on_pull: Callable[[list[PeerPull]], None] | None = None,
        log: Callable[[str], None] | None = None,
        facts: dict[str, str] | None = None,
        files: FilesHook | None = None,
    ) -> None:
        self.ctx, self.state, self.config = ctx, state, config
        self.facts = facts or {}  # the repository's (key.facts), written into the claim
        self.files = files  # the store's reach into synapt's files (a pulled forget's)
        self.stop = StopFlag()
        self.on_pull = on_pull or (lambda _: None)
        self.log = log or (lambda _: None)
        self.replicator: litestream.Replicator | None = None
        self.claim: Claim | None = None
        self._restarts: list[float] = []
        self._wal = (0, 0.0)  # (size, when it was first seen at that size)
        self._purged = False  # since start, this machine's replica history was purged

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> int:
        state, config = self.state, self.config
        state.ensure()
        with self._run_lock():
            for pid in orphan.stop_all(state):
                self.log(
                    f"stopped Litestream (pid {pid}), left replicating this store by a `sync run`"
                    " that died: one Litestream per store"
                )
            machine = state.machine()
            remote = config.remote()
            claim = self.claim = Claim(
                remote,
                config.slug,
                machine,
                state.store_token(),
                key=config.key,
                facts=self.facts,
            )
            claim.take()
            config_path = litestream.write_config(
                state.replicate_config,
                litestream.replicate_config(
                    state.db_path,
                    state.meta,
                    remote.replica(config.slug, machine),
                    config.retention,
                ),
            )
            self.replicator = litestream.Replicator(config_path, state.log, state.litestream_pid)
            self.replicator.start()
            self._write_info(machine)
            self.log(
                f"replicating {state.db_path} to {remote.describe()} as machine {machine}; "
                f"pulling when a peer's replica moves (read every {remote.watch_s:g} s)"
                f" and every {config.pull_every_s:g} s"
            )
            try:
                return self._loop(claim, Watch(remote, config.slug, machine))
            finally:
                try:
                    self._settle()  # (a second Ctrl-C cuts it short: Litestream still stops)
                finally:
                    self.replicator.stop()
                with contextlib.suppress(SyncError):
                    claim.release()
                with contextlib.suppress(OSError):
                    state.run_info.unlink()

    def _loop(self, claim: Claim, watch: Watch) -> int:
        next_pull = time.monotonic()
        next_beat = time.monotonic() + HEARTBEAT_S
        pace, moved = Pace(), False
        while not self.stop.is_set():
            now = time.monotonic()
            request = pause.pending(self.state)
            if request is not None:
                self._serve_pause(request)
            if not self.replicator or not self.replicator.alive():
                self._restart()
            self._bound_wal(now)
            if now >= next_beat:
                claim.heartbeat()  # ReplicaOwnedError: another run took the replica
                next_beat = now + HEARTBEAT_S
            # The positions are read before a pull: a move after this read is seen by the next.
            if watch.due(now):
                moved = watch.moved(now) or moved
            if now >= next_pull or (moved and pace.ready(now)):
                pulled = pull_all(
                    self.ctx, self.state, self.config, quiet=self.hold, files=self.files
                )
                self.on_pull(pulled)
                ended = time.monotonic()
                pace.pulled(now, ended)
                next_pull, moved = ended + self.config.pull_every_s, False
            self.stop.wait(TICK_S)
        if self.stop.reason:
            self.log(f"{self.stop.reason} received: stopping after a last sync")
        return 0

    def _settle(self) -> None:
        """After a purge the replica holds nothing until the restarted Litestream's first
        sync of the store: a stop right then (a SIGTERM during the pull that applied a
        peer's forget) waits for that sync, so the machine is never left with an empty
        replica that a restore elsewhere would find empty. Bounded; a Litestream that is
        not running, or a location that cannot be listed, is not waited for."""
        if not self._purged or self.replicator is None:
            return
        deadline = time.monotonic() + SETTLE_S
        try:
            remote, slug, machine = self.config.remote(), self.config.slug, self.state.machine()
            while self.replicator.alive() and time.monotonic() < deadline:
                if remote.position(slug, machine) is not None:
                    return
                time.sleep(TICK_S)
        except (SyncError, OSError):
            return
        self.log(
            "stopping before Litestream's first sync since the purge: this machine's"
            " replica is empty until the next `sync run`"
        )

    def _restart(self) -> None:
        assert self.replicator is not None
        error = self.replicator.last_error()
        now = time.monotonic()
        self._restarts = [t for t in self._restarts if now - t < 60] + [now]
        if len(self._restarts) > RESTARTS_PER_MINUTE:
            raise SyncError(f"Litestream keeps exiting: {error} (see {self.state.log})")
        self.log(f"Litestream exited ({error}); starting it again")
        self.replicator.stop()
        self.replicator.start()

    def _bound_wal(self, now: float) -> None:
        try:
            size = os.stat(f"{self.state.db_path}-wal").st_size
        except OSError:
            return
        if size != self._wal[0]:
            self._wal = (size, now)
        idle = now - self._wal[1] >= WAL_IDLE_S
        if size > WAL_HARD or (size > WAL_SOFT and idle):
            db = self.ctx.db
            with self.hold(), db.lock:
                truncate_wal(db.conn)
            self._wal = (0, now)

    # -- holding still -------------------------------------------------------------------

    @contextlib.contextmanager
    def hold(self, purge: bool = False) -> Iterator[pause.Hold]:
        """Litestream stopped (after its last sync) while the block runs; with `purge`,
        this machine's replica history is deleted meanwhile and Litestream starts a new
        one from the store as it is then (the forgotten text leaves the replica too)."""
        assert self.replicator is not None
        self.replicator.stop()
        held = pause.Hold()
        try:
            if purge:
                held.notes.append(pause.purged_note(self.state, self._purge()))
            yield held
        finally:
            self.replicator.start()

    def _purge(self) -> bool:
        remote, config = self.config.remote(), self.config
        machine = self.state.machine()
        if not remote.purge(config.slug, machine):
            return False
        shutil.rmtree(self.state.meta, ignore_errors=True)
        self._purged = True
        if self.claim is not None:
            self.claim.purged()
        self.log(f"purged this machine's replica history ({remote.describe()})")
        return True

    def _serve_pause(self, request: dict[str, object]) -> None:
        token = str(request["token"])
        purge = bool(request.get("purge"))
        assert self.replicator is not None
        self.replicator.stop()
        try:
            purged = self._purge() if purge else False
            pause.acknowledge(self.state, token, purged=purged)
            deadline = time.monotonic() + PAUSE_LIMIT_S
            while time.monotonic() < deadline and not self.stop.is_set():
                current = pause.pending(self.state)
                if current is None or current.get("token") != token:
                    break
                time.sleep(TICK_S)
        finally:
            self.replicator.start()

    # -- bookkeeping ---------------------------------------------------------------------

    @contextlib.contextmanager
    def _run_lock(self) -> Iterator[None]:
        with self.state.run_locked() as held:
            if not held:
                raise ReplicaOwnedError(
                    f"`sync run` is already running for {self.state.db_path}"
                    f"{self._other_pid()}: one per store"
                )
            yield

    def _other_pid(self) -> str:
        try:
            info = json.loads(self.state.run_info.read_text(encoding="utf-8"))
            return f" (pid {info['pid']})"
        except (OSError, ValueError, KeyError, TypeError):
            return ""

    def _write_info(self, machine: str) -> None:
        from ..paths.files import write_private
        from ..timestamps import utc_now_iso

        write_private(
            self.state.run_info,
            json.dumps(
                {"pid": os.getpid(), "machine": machine, "started_at": utc_now_iso()}
            ).encode(),
            exclusive=False,
        )
