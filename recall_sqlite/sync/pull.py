"""Pulling: each peer's replica restored by Litestream into a temporary file and merged into
this store (merge.py), what was merged recorded in the peer book (peers.py) so the next pull
of the same peer skips it when its replica has not moved and reads only what it added since.

When a merge removed forgotten text, the text must leave this machine's files too, as a
forget's does (db.py `merge_fts`): the full-text indexes merged, the WAL
checkpointed and truncated, with replication held still meanwhile (`quiet`, see pause.py)
and this machine's own replica history purged, since it held the text as well."""

from __future__ import annotations

import contextlib
from pathlib import Path

from .._record import Frozen
from ..checks import require_machine_id
from ..db import Database
from ..errors import PeerError, RecallError, SchemaTooNewError, StoreError
from ..journal.forget import FileOutcome, ForgetTarget, scrub_files
from . import litestream, peers
from .key import elsewhere_dicts
from .merge import MergeReport, merge
from .owner import generation
from .state import SyncConfig, SyncState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager
    from typing import Any

    from ..context import StoreContext
    from ..journal.forget import FilesHook
    from .peers import PeerBook

    # quiet(purge) holds replication still (and purges this machine's replica history).
    Quiet = Callable[[bool], AbstractContextManager[Any]]


def open_peer(path: Path, machine: str) -> Database:
    """The peer's file as a store: opened for writing, since it is this process's own copy
    and an older recall-sqlite's schema is migrated on it first (a newer one is refused)."""
    try:
        return Database(path)
    except SchemaTooNewError as exc:
        raise PeerError(
            f"machine {machine} runs a newer recall-sqlite ({exc}); upgrade this one to pull it"
        ) from None
    except StoreError as exc:
        raise PeerError(f"machine {machine}'s replica is not a usable store: {exc}") from None


def merge_file(
    ctx: StoreContext,
    path: Path,
    book: PeerBook,
    *,
    machine: str,
    host: str = "",
    position: int = 0,
    replica_at: str | None = None,
    generation: int = 0,
    full: bool = False,
    quiet: Quiet | None = None,
    me: str | None = None,
    files: FilesHook | None = None,
) -> MergeReport:
    """Merge the store at `path` (machine `machine`'s, at replica transaction `position`)
    into this one (machine `me`'s, when known); `full` re-reads every entry version instead
    of the ones the peer added after the last merge (a repair: the result is the same).
    `files`: the store's hook into synapt's files (journal/forget.py FilesHook), which
    takes what the peer forgot out of this machine's files as a local forget does."""
    # The peer's own removals are recorded as its: its id must be one.
    require_machine_id("the peer's machine id", machine, error=PeerError)
    key = peers.sync_key(ctx)
    if key is None:
        raise PeerError("this store has no sync key yet: run `recall-sqlite sync init`")
    known = book.get(machine)
    since = 0 if full or known is None else known.entry_seq
    peer = open_peer(path, machine)
    removed: list[ForgetTarget] = []
    try:
        # secure_delete is on for every connection (db.py): what a merge removes is zeroed.
        report = merge(ctx, peer, key, since_seq=since, machine=machine, me=me, removed=removed)
    finally:
        peer.close()
    if removed:
        # The one path a local forget takes to files (its mirror lines, synapt's
        # session-start cache): the README promises a peer does the same to its own.
        # Their rows are gone and the tombstones recorded: a file that could not be
        # scrubbed now is not retried by the next pull, so it is counted as left, and
        # doctor names its lines (legacy/leftovers.py), never failing the pull.
        try:
            with ctx.db.lock:
                outcome = scrub_files(ctx, tuple(removed), files)
        except RecallError as exc:
            outcome = FileOutcome((), (f"synapt's files: {exc}",), False)
        left = sum(1 for c in outcome.copies if not c.removed) + len(outcome.errors)
        report = MergeReport(
            **{
                **{n: getattr(report, n) for n in MergeReport.__slots__},
                "copies_removed": sum(1 for c in outcome.copies if c.removed),
                "copies_left": left,
            }
        )
    if report.forgotten or report.summaries_removed or report.vectors_deleted:
        scrub(ctx.db, quiet)
    book.merged(machine, host, position, replica_at, report.peer_seq, generation)
    return report


def scrub(db: Database, quiet: Quiet | None = None) -> bool:
    """Leave no byte of removed rows in the file: the full-text indexes merged (forget's
    own: db.merge_fts), the WAL checkpointed and truncated with replication held still and this
    machine's replica history purged. False when something kept the WAL alive."""
    from ..db import merge_fts

    hold = (lambda: quiet(True)) if quiet is not None else None
    merge_fts(db, "summaries_fts")  # its checkpoint may be kept busy: the next one counts
    return merge_fts(db, "journal_fts", hold=hold)


class PeerPull(Frozen):
    """One peer in a pull: what happened and, when merged, what arrived."""

    __slots__ = ("machine", "host", "position", "written_at", "status", "report", "error")
    machine: str
    host: str
    position: int | None
    written_at: str | None
    status: str  # merged | unchanged | empty | failed
    report: MergeReport | None
    error: str

    def __init__(self, **values: Any) -> None:
        self._set(**{"report": None, "error": "", "position": None, "written_at": None, **values})

    def to_dict(self) -> dict[str, Any]:
        out = {n: getattr(self, n) for n in self.__slots__}
        out["report"] = self.report.to_dict() if self.report is not None else None
        return out


def pull_all(
    ctx: StoreContext,
    state: SyncState,
    config: SyncConfig,
    *,
    quiet: Quiet | None = None,
    full: bool = False,
    only: str | None = None,
    files: FilesHook | None = None,
) -> list[PeerPull]:
    """Pull every other machine of the repository (or `only` that one)."""
    remote = config.remote()
    me = state.machine()
    listed = remote.machines(config.slug)
    machines = [m for m in listed if m != me]
    if listed:
        # A machine retired elsewhere (sync retire) is gone from the location: forgotten
        # here too, so nothing keeps counting what it held.
        state.book.drop(set(state.book.load()) - set(listed))
    if only is not None:
        machines = [m for m in machines if m == only or m.startswith(only)]
    if not machines:
        return []
    state.ensure()
    from ..paths.files import ensure_private_dir

    ensure_private_dir(state.pulls)
    cfg = litestream.write_config(
        state.peers_config, litestream.peers_config(state.pulls, remote, config.slug, machines)
    )
    out: list[PeerPull] = []
    for m in machines:
        out.append(_pull_one(ctx, state, config, cfg, m, quiet=quiet, full=full, files=files))
    return out


def _pull_one(
    ctx: StoreContext,
    state: SyncState,
    config: SyncConfig,
    cfg: Path,
    machine: str,
    *,
    quiet: Quiet | None,
    full: bool,
    files: FilesHook | None = None,
) -> PeerPull:
    remote = config.remote()
    copy = state.pulls / f"{machine}.db"
    host = ""
    pos = None
    try:
        owner = remote.read_owner(config.slug, machine) or {}
        host, gen = str(owner.get("host", "")), generation(owner)
        pos = remote.position(config.slug, machine)
        if pos is None:
            return PeerPull(machine=machine, host=host, status="empty")
        known = state.book.get(machine)
        if (
            not full
            and known is not None
            and known.pulled_at
            and (known.generation, known.position) == (gen, pos.txid)
        ):
            return PeerPull(
                machine=machine,
                host=host,
                position=pos.txid,
                written_at=pos.written_at,
                status="unchanged",
            )
        remove_copy(copy)
        if not litestream.restore(cfg, litestream.placeholder(state.pulls, machine), copy):
            return PeerPull(machine=machine, host=host, status="empty")
        report = merge_file(
            ctx,
            copy,
            state.book,
            machine=machine,
            host=host,
            position=pos.txid,
            replica_at=pos.written_at,
            generation=gen,
            full=full,
            quiet=quiet,
            me=state.machine(),
            files=files,
        )
        return PeerPull(
            machine=machine,
            host=host,
            position=pos.txid,
            written_at=pos.written_at,
            status="merged",
            report=report,
        )
    except RecallError as exc:
        return PeerPull(
            machine=machine,
            host=host,
            position=pos.txid if pos else None,
            written_at=pos.written_at if pos else None,
            status="failed",
            error=str(exc),
        )
    finally:
        remove_copy(copy)


@contextlib.contextmanager
def restored_copy(state: SyncState, config: SyncConfig, machine: str) -> Iterator[Database | None]:
    """One peer's replica restored by Litestream into a file of its own under `pulls/` and
    opened as a store for the block (None: its replica holds no backup yet); the file and
    its config are removed after, whatever happens."""
    from ..paths.files import ensure_private_dir

    ensure_private_dir(state.pulls)
    cfg = litestream.write_config(
        state.pulls / f"{machine}.yml",
        litestream.peers_config(state.pulls, config.remote(), config.slug, [machine]),
    )
    copy = state.pulls / f"{machine}.read.db"
    remove_copy(copy)
    try:
        if not litestream.restore(cfg, litestream.placeholder(state.pulls, machine), copy):
            yield None
            return
        peer = open_peer(copy, machine)
        try:
            yield peer
        finally:
            peer.close()
    finally:
        remove_copy(copy)
        remove_copy(cfg)


def remove_copy(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            Path(f"{path}{suffix}").unlink()


class PullReport(Frozen):
    """What `store.sync.pull` did: each peer, and with none, the machines of this
    repository that replicate under another of its keys (they never meet this one)."""

    __slots__ = ("peers", "elsewhere", "key", "url")
    peers: tuple[PeerPull, ...]
    elsewhere: tuple[tuple[str, str, tuple[str, ...]], ...]
    key: str
    url: str

    def __init__(self, **values: Any) -> None:
        self._set(**values)

    @property
    def failed(self) -> tuple[PeerPull, ...]:
        return tuple(p for p in self.peers if p.status == "failed")

    @property
    def entries(self) -> int:
        """Entry versions merged from every peer."""
        return sum(p.report.entries for p in self.peers if p.report is not None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"peers": [p.to_dict() for p in self.peers]}
        if self.elsewhere:
            out["elsewhere"] = elsewhere_dicts(self.elsewhere)
        return out
