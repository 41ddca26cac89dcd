"""`sync init` and `sync restore`: a machine joining its repository's replicas, and a new or
rebuilt machine brought back from them.

`init` resolves the sync key (key.py), checks that Litestream runs and the location answers,
records the key in the store (`workspaces.sync_key`, so a peer's file says which of its
workspaces is this repository) and writes `<db>-sync/config.json`.

`restore` takes the freshest replica of the key (the one written last), restored by
Litestream into a temporary file, checked, and put in place of this workspace's store (an
existing store only with `force`, moved aside, never deleted); the workspace gets the id the
replica holds (so its history is this workspace's, at any path), the new file a new
machine id, and the other machines are then pulled into it."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .. import identity
from .._record import Frozen
from ..db import Database, as_int
from ..errors import PeerError, ReplicaOwnedError, SyncError, SyncSetupError
from ..paths import idfile
from ..paths.files import ensure_private_dir
from ..timestamps import utc_now_iso
from . import key as keys
from . import litestream
from .key import elsewhere_dicts
from .merge import peer_workspace
from .remote import parse
from .state import DEFAULT_PULL_EVERY_S, DEFAULT_RETENTION, SyncConfig, SyncState

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .remote import Remote


class Joined(Frozen):
    """What `sync init` set up."""

    __slots__ = ("url", "key", "key_source", "machine", "peers", "litestream", "elsewhere")
    url: str
    key: str
    key_source: str
    machine: str
    peers: tuple[str, ...]
    litestream: str
    # With no peers under `key`: (key, its source here, machines) for each other key of
    # this clone that machines replicate under at the same location.
    elsewhere: tuple[tuple[str, str, tuple[str, ...]], ...]

    def __init__(self, **values: Any) -> None:
        self._set(**values)

    def to_dict(self) -> dict[str, Any]:
        out = {n: getattr(self, n) for n in self.__slots__}
        out["elsewhere"] = elsewhere_dicts(self.elsewhere)
        return out


def resolve_key(root: Path, key: str | None, *, commit_key: bool) -> tuple[str, str]:
    if key is None:
        if commit_key:
            raise SyncSetupError("--commit-key needs --key")
        return keys.derive(root)
    where = keys.record_explicit(root, key, committed=commit_key)
    found, source = keys.derive(root)
    if found != keys.check_key(key):
        raise SyncSetupError(
            f"the key was kept in {where}, but {source} ({found!r}) comes first: "
            "remove that one, or give the same key"
        )
    return found, source


def check_location(remote: Remote, key_slug: str) -> list[str]:
    """The location answers (a path exists or can be made, a bucket can be listed); the
    machines already there."""
    from .remote import FileRemote

    if isinstance(remote, FileRemote):
        try:
            ensure_private_dir(remote.base)
        except OSError as exc:
            raise SyncSetupError(f"cannot use {remote.base}: {exc}") from None
    return remote.machines(key_slug)


def init(
    ctx: Any,
    root: Path,
    db_path: Path,
    url: str,
    *,
    key: str | None = None,
    commit_key: bool = False,
    pull_every_s: float = DEFAULT_PULL_EVERY_S,
    retention: str = DEFAULT_RETENTION,
) -> Joined:
    from . import peers

    remote = parse(url)
    version = litestream.version()
    if not version.lstrip("v").startswith("0.5"):
        raise SyncSetupError(f"recall-sqlite syncs with Litestream 0.5.x; found {version!r}")
    if pull_every_s < 1:
        raise SyncSetupError("--pull-every must be at least 1 second")
    found, source = resolve_key(root, key, commit_key=commit_key)
    config = SyncConfig(url, found, source, pull_every_s, retention)
    others = check_location(remote, config.slug)
    peers.set_sync_key(ctx, found)
    state = SyncState(db_path)
    state.save_config(config)
    machine = state.machine()
    mates = tuple(m for m in others if m != machine)
    return Joined(
        url=remote.describe(),
        key=found,
        key_source=source,
        machine=machine,
        peers=mates,
        litestream=version,
        elsewhere=() if mates else elsewhere(remote, root, found, machine),
    )


def elsewhere(
    remote: Remote, root: Path, key: str, machine: str
) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Machines of this repository under another key (a clone with no origin keys by its
    root commit, a shallow clone by its origin, a path clone by the path): two keys never
    meet, so init, pull, status and restore say so, with the key. Found by this clone's
    other keys, and by the facts each machine's `sync run` writes beside its replica
    (key.facts, same_repository). Only a hint: a location that cannot be listed now gives
    none, and fails nothing."""
    found: dict[str, tuple[str, list[str]]] = {}
    try:
        for other, how in keys.alternatives(root, key):
            there = [m for m in remote.machines(keys.slug(other)) if m != machine]
            if there:
                found[other] = (f"this clone's key by {how}", there)
        mine, own = keys.facts(root), keys.slug(key)
        for name in remote.slugs():
            if name == own:
                continue
            for m in remote.machines(name):
                owner = remote.read_owner(name, m) or {}
                theirs = _owner_key(owner, name)
                same = keys.same_repository(mine, owner.get("repository"))
                if m == machine or theirs is None or same is None:
                    continue
                found.setdefault(theirs, (same, []))[1].append(m)
    except SyncError:
        return ()
    return tuple((k, how, tuple(sorted(set(ms)))) for k, (how, ms) in sorted(found.items()))


def _owner_key(owner: dict[str, Any], name: str) -> str | None:
    """The sync key an owner file names, when it is one and the directory is its slug (a
    file that says otherwise is not believed)."""
    value = owner.get("key")
    if not isinstance(value, str):
        return None
    try:
        checked = keys.check_key(value)
    except SyncSetupError:
        return None
    return checked if keys.slug(checked) == name else None


# -- restore ------------------------------------------------------------------------------


def _retirable(remote: Remote, slug: str, wanted: str) -> str:
    """The machine `sync restore --retire` names, refused before the restore when there is
    no such machine or its claim is live (sync/retire.py retires it after the pull)."""
    from .owner import condition
    from .retire import find_machine

    machine = find_machine(remote.machines(slug), wanted, "")
    if condition(remote.read_owner(slug, machine)) == "live":
        raise ReplicaOwnedError(
            f"machine {machine} is live (its `sync run` keeps its heartbeat): it is not the"
            " machine this one replaces; nothing was restored"
        )
    return machine


def looks_dead(remote: Remote, slug: str, me: str) -> tuple[tuple[str, str, bool], ...]:
    """The other machines whose claim says their `sync run` stopped without a clean exit
    (owner.py condition "silent"): (id, host, whether it ran on this host), for `sync
    restore` to name with `sync retire`."""
    import socket

    from .owner import condition

    here = socket.gethostname()
    out = []
    for machine in remote.machines(slug):
        if machine == me:
            continue
        owner = remote.read_owner(slug, machine)
        if condition(owner) == "silent":
            host = str((owner or {}).get("host", ""))
            out.append((machine, host, host == here))
    return tuple(out)


class Restored(Frozen):
    __slots__ = (
        "machine",
        "host",
        "written_at",
        "workspace_id",
        "entries",
        "moved_aside",
        "new_machine",
    )
    machine: str  # the machine whose replica was restored
    host: str
    written_at: str | None
    workspace_id: str
    entries: int
    moved_aside: str | None  # where the store that was here went
    new_machine: str  # this machine's id now

    def __init__(self, **values: Any) -> None:
        self._set(**values)

    def to_dict(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self.__slots__}


def restore(
    root: Path,
    db_path: Path,
    url: str,
    *,
    key: str | None = None,
    force: bool = False,
    retention: str = DEFAULT_RETENTION,
    pull_every_s: float = DEFAULT_PULL_EVERY_S,
    retire: str | None = None,
) -> Restored:
    """Bring this workspace's store back from the freshest replica of its key. `retire`
    (the machine this one replaces) is checked first, before anything is touched: it
    must exist and its claim must not be live (the caller retires it after the pull)."""
    remote = parse(url)
    found, source = (keys.check_key(key), "--key") if key else keys.derive(root)
    config = SyncConfig(url, found, source, pull_every_s, retention)
    if db_path.exists() and db_path.stat().st_size and not force:
        raise SyncSetupError(
            f"{db_path} exists: restoring replaces it (the current file is moved aside, "
            "not deleted): add --force"
        )
    if retire is not None:
        _retirable(remote, config.slug, retire)
    positions = []
    for m in remote.machines(config.slug):
        pos = remote.position(config.slug, m)
        if pos is not None:
            positions.append((pos.written_at or "", pos.txid, m))
    if not positions:
        hints = elsewhere(remote, root, found, "")
        if hints:
            import shlex

            other, how, machines = hints[0]
            raise SyncError(
                f"no replica of {found!r} at {remote.describe()}, but machine(s)"
                f" {', '.join(machines)} replicate this repository under the key {other!r}"
                f" ({how}): run `recall-sqlite sync restore --url {shlex.quote(url)}"
                f" --key {shlex.quote(other)}`"
            )
        raise SyncError(
            f"no replica of {found!r} at {remote.describe()} yet: nothing to restore "
            "(is `sync run` running on another machine?)"
        )
    _, txid, machine = max(positions)
    host = str((remote.read_owner(config.slug, machine) or {}).get("host", ""))
    written_at = next(w for w, t, m in positions if m == machine) or None
    ensure_private_dir(db_path.parent)
    state = SyncState(db_path)
    state.ensure()
    ensure_private_dir(state.pulls)
    cfg = litestream.write_config(
        state.peers_config, litestream.peers_config(state.pulls, remote, config.slug, [machine])
    )
    tmp = db_path.with_name(f".{db_path.name}.restoring")
    _remove(tmp)
    if not litestream.restore(cfg, litestream.placeholder(state.pulls, machine), tmp):
        raise SyncError(f"machine {machine}'s replica holds no backup yet")
    workspace_id, entries = _adopt(tmp, found, machine)
    current_id = idfile.read_workspace_id(root)
    if current_id not in (None, workspace_id):
        if not force:
            _remove(tmp)
            raise SyncSetupError(
                f"{root} already has the workspace id {current_id}; the replica's is "
                f"{workspace_id}: add --force to take the replica's (the file is moved aside)"
            )
        id_file = Path(idfile.workspace_file(root))
        os.replace(id_file, id_file.with_name(f"{id_file.name}.before-restore"))
    aside = None
    if db_path.exists():
        aside = db_path.with_name(f"{db_path.name}.before-restore-{utc_now_iso()[:19]}")
        os.replace(db_path, aside)
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.replace(f"{db_path}{suffix}", f"{aside}{suffix}")
    os.replace(tmp, db_path)
    idfile.restore_workspace_id(root, workspace_id)
    state.save_config(config)
    new_machine = state.machine()
    return Restored(
        machine=machine,
        host=host,
        written_at=written_at,
        workspace_id=workspace_id,
        entries=entries,
        moved_aside=str(aside) if aside else None,
        new_machine=new_machine,
    )


def _adopt(path: Path, key: str, machine: str) -> tuple[str, int]:
    """Check the restored file (a store holding this key's workspace, undamaged) and drop
    the other machine's paths from it; (workspace id, entry versions)."""
    try:
        db = Database(path)
    except Exception as exc:  # noqa: BLE001 - any failure: this file is not usable
        _remove(path)
        raise PeerError(f"machine {machine}'s replica is not a usable store: {exc}") from None
    try:
        ws, uuid = peer_workspace(db, key)
        problems = db.query("PRAGMA quick_check")
        if problems != [("ok",)]:
            raise PeerError(f"machine {machine}'s replica is damaged: {problems[:3]}")
        identity.drop_paths(db)
        _name_its_removals(db, machine)
        (entries,) = db.query("SELECT count(*) FROM journal_entries WHERE workspace_id = ?", (ws,))[
            0
        ]
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except BaseException:
        db.close()
        _remove(path)
        raise
    db.close()
    return uuid, as_int(entries)


def _name_its_removals(db: Database, machine: str) -> None:
    """The removals the restored machine asked for itself (asked_by NULL: "this store's
    own") named as its: this file is another machine from now on (schema v12)."""
    with db.write() as conn:
        for table in ("journal_tombstones", "summary_tombstones", "vector_tombstones"):
            conn.execute(f"UPDATE {table} SET asked_by = ? WHERE asked_by IS NULL", (machine,))


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            Path(f"{path}{suffix}").unlink()
