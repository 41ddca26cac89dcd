"""The store: one connection, the resolved identity, and the table families on it. This
module only composes; each family owns its tables."""

from __future__ import annotations

import os

from . import identity
from .context import StoreContext, WorkspaceInfo, WorktreeInfo
from .db import Database
from .errors import InvalidInputError, NoStoreError, RecallError, StoreError, WorkspaceError
from .journal.journal import Journal
from .paths import datadir, idfile, storefile
from .paths.files import ensure_private_dir, is_dir, is_file, pure
from .paths.resolve import resolve

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from typing import Any

    from .cursors import Cursors
    from .doctor import DoctorReport
    from .journal.forget import ForgetReport
    from .legacy import Legacy
    from .summaries import Summaries
    from .vectors.vectors import Vectors

DB_ENV = "RECALL_SQLITE_DB"


class WorktreeForgotten:
    """What `Store.forget_worktree` did: the worktree, whether its record went (else it
    is kept as gone), and the forget of its entries (None: it held none)."""

    __slots__ = ("key", "removed", "forget")

    def __init__(self, key: str, removed: bool, forget: ForgetReport | None) -> None:
        self.key, self.removed, self.forget = key, removed, forget

    def to_dict(self) -> dict[str, Any]:
        return {
            "worktree": self.key,
            "record_removed": self.removed,
            "forget": self.forget.to_dict() if self.forget is not None else None,
        }


class Store:
    """The composition root: the table families on one connection, and search composed
    into the journal and summaries families (search/ depends on them, not the reverse)."""

    def __init__(self, ctx: StoreContext, where: dict[str, Any]) -> None:
        """`where`: WorkspaceInfo's fields, the paths as text."""
        self._ctx = ctx
        self._where = where
        self._info: WorkspaceInfo | None = None
        self._others = _others_of(where["db_path"])
        self.journal = Journal(
            ctx,
            searcher=self._search_journal,
            files=self._forget_copies,
            others=self._others,
            hold=_hold_of(where["db_path"]),
        )
        self._families: dict[str, Any] = {}

    @property
    def workspace(self) -> WorkspaceInfo:
        """The resolved identity, its paths as Paths (built when first asked for: a read
        never imports pathlib, see paths/files.py)."""
        if self._info is None:
            from pathlib import Path

            w = self._where
            paths = {k: Path(w[k]) for k in ("root", "worktree_root", "db_path")}
            self._info = WorkspaceInfo(**{**w, **paths})
        return self._info

    @property
    def db(self) -> Database:
        return self._ctx.db

    @property
    def context(self) -> StoreContext:
        return self._ctx

    @property
    def read_only(self) -> bool:
        """True when this store was opened read-only (asked for, or a file this process
        cannot write): every write raises ReadOnlyStoreError."""
        return self._ctx.db.read_only

    def _family(self, name: str, factory: Any) -> Any:
        family = self._families.get(name)
        if family is None:
            family = self._families[name] = factory(self._ctx)
        return family

    @property
    def summaries(self) -> Summaries:
        from .summaries import Summaries

        family: Summaries = self._family(
            "summaries", lambda ctx: Summaries(ctx, searcher=self._search_summaries)
        )
        return family

    @property
    def cursors(self) -> Cursors:
        from .cursors import Cursors

        family: Cursors = self._family("cursors", Cursors)
        return family

    @property
    def vectors(self) -> Vectors:
        # numpy is loaded by vectors/ only, and only when a host asks for vectors.
        from .vectors.vectors import Vectors

        family: Vectors = self._family("vectors", Vectors)
        return family

    @property
    def legacy(self) -> Legacy:
        from .legacy import Legacy

        # The root this store was opened at: after the project moved, a read-only open
        # cannot record the new root, and the legacy bookkeeping is relative to it.
        family: Legacy = self._family("legacy", lambda ctx: Legacy(ctx, self.workspace.root))
        return family

    def worktrees(self) -> list[WorktreeInfo]:
        """Every worktree the workspace records, with its entries and whether its root
        still exists on disk (a worktree whose directory is gone keeps its history)."""
        counts = self.journal.counts_by_worktree()
        return [
            WorktreeInfo(
                w.key,
                w.name,
                w.root,
                bool(w.root) and os.path.isdir(w.root or ""),
                counts.get(w.pk, (0, 0))[1],
                counts.get(w.pk, (0, 0))[0],
                w.pk == self._ctx.worktree_pk,
            )
            for w in identity.worktrees(self.db, self._ctx.workspace_pk)
        ]

    def forget_worktree(self, name: str, *, scrub_sources: bool = False) -> WorktreeForgotten:
        """Forget a worktree (by key, or by a name only one worktree has): every entry
        version it holds, as journal.forget does (the store's copies in files go; copies
        in imported files are listed, and go too with `scrub_sources`), then its record
        (kept, marked gone, while an imported file is still filed under it). The worktree
        this store was opened in is refused: it would be recorded again at once."""
        rows = identity.worktrees(self.db, self._ctx.workspace_pk)
        keyed = [w for w in rows if w.key == name] or [w for w in rows if w.name == name]
        if len(keyed) != 1:
            known = ", ".join(w.key for w in rows) or "none"
            why = "several worktrees are named so; give the key" if keyed else "no such worktree"
            raise InvalidInputError(f"worktree {name!r}: {why} (known: {known})")
        key = keyed[0].key
        if key == self._ctx.worktree_key:
            raise InvalidInputError(
                f"worktree {key!r} is the one this command runs in; run it from another"
                " worktree (or --cwd)"
            )
        ids = [e.id or "" for e in self.journal.versions(worktree=key)]
        report = self.journal.forget(ids, scrub_sources=scrub_sources) if ids else None
        with self.db.write() as conn:
            removed = identity.retire_worktree(conn, self._ctx.workspace_pk, key)
        return WorktreeForgotten(key, removed, report)

    def doctor(self, *, repair: bool = False, deep: bool = False) -> DoctorReport:
        """Check the store (see doctor/); with `repair`, mend what is found (in short
        writes) and check again; `deep` also re-hashes every row and compares the
        full-text indexes token by token."""
        from .doctor import doctor

        for name, flag in (("repair", repair), ("deep", deep)):
            if not isinstance(flag, bool):
                raise InvalidInputError(f"{name} must be true or false")
        return doctor(self._ctx, self.workspace, self.legacy, repair=repair, deep=deep)

    def _search_journal(self, journal: Journal, query: str, n: int, **options: Any) -> Any:
        from .search.journal import search_journal

        found = search_journal(journal, query, n, vectors=lambda: self.vectors, **options)
        if self._others is not None and (ahead := self._others()):
            from dataclasses import replace

            found = replace(found, elsewhere=found.elsewhere.with_machines(ahead))
        return found

    def _forget_copies(self, targets: Any, scrub_sources: bool) -> Any:
        """journal.forget's reach into files: the copies in synapt's buckets (legacy)."""
        return self.legacy.forget_copies(targets, scrub_sources=scrub_sources)

    def _search_summaries(self, summaries: Summaries, query: str, n: int, **options: Any) -> Any:
        from .search.summaries import search_summaries

        return search_summaries(summaries, query, n, vectors=lambda: self.vectors, **options)

    def close(self) -> None:
        self._ctx.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _others_of(db_path: str) -> Callable[[], int] | None:
    """How many entry versions other machines hold that this store has not pulled, when
    the store syncs (sync/peers.py keeps the count beside it); None otherwise."""
    book = os.path.join(db_path + "-sync", "peers.json")
    if not os.path.exists(book):
        return None
    from pathlib import Path

    from .sync.peers import PeerBook

    return PeerBook(Path(book)).ahead


def _hold_of(db_path: str) -> Callable[[], AbstractContextManager[Any]] | None:
    """Replication held still, this machine's replica history purged: for a forget, when
    the store syncs (`sync init` wrote its config); None otherwise."""
    if not os.path.exists(os.path.join(db_path + "-sync", "config.json")):
        return None

    def hold() -> AbstractContextManager[Any]:
        from pathlib import Path

        from .sync.pause import quiet

        return quiet(Path(db_path), purge=True)

    return hold


def resolve_db_path(root: str | os.PathLike[str], db_path: str | os.PathLike[str] | None) -> str:
    """The database file: `db_path`, else $RECALL_SQLITE_DB, else the workspace's own. A
    relative path is relative to the workspace root, never to where the process stands:
    every subdirectory of the workspace names the same store with it."""
    given = db_path if db_path is not None else os.environ.get(DB_ENV) or None
    if given is None:
        return datadir.default_db_path(root)
    path = pure(os.path.expanduser(os.fspath(given)))
    return path if path.startswith("/") else pure(os.path.join(os.fspath(root), path))


def open_store(
    cwd: str | os.PathLike[str] | None = None,
    *,
    db_path: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    read_only: bool = False,
    force: bool = False,
) -> Store:
    """Open the store of the workspace that contains `cwd` (default: the current
    directory). Any directory of the workspace gives the same store and workspace id; a
    relative `db_path` (or $RECALL_SQLITE_DB) is relative to the workspace root.

    `read_only=True` never creates or writes anything (no workspace id is minted, no
    directory or file made, no registration row written, so it never waits on the write
    lock) and works on read-only media; a workspace without a store raises NoStoreError.
    A worktree the store has not seen yet reads as empty. Without it, a workspace that
    has no store gets one; an existing store is opened without waiting on the write lock
    (a registration refresh another writer is in the way of is skipped), and one this
    process cannot write is opened read-only (a warning says so; writes raise
    ReadOnlyStoreError).

    A damaged store (an empty file or one that is not a store, a WAL without its
    database, a store missing where the workspace's id says it was made) raises
    CorruptStoreError or NotAStoreError, on a read as on a write; `force=True` starts a
    new store there, keeping the damaged files beside it."""
    for name, value in (("cwd", cwd), ("db_path", db_path), ("root", root)):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise WorkspaceError(f"{name} must be a path, got {type(value).__name__}")
    for name, flag in (("read_only", read_only), ("force", force)):
        if not isinstance(flag, bool):
            raise WorkspaceError(f"{name} must be true or false")
    if force and read_only:
        raise WorkspaceError("force starts a new store: it cannot be read-only")
    try:
        return _open_store(cwd, db_path, root, read_only, force)
    except (OSError, ValueError) as exc:
        if isinstance(exc, RecallError):
            raise
        # A path that is too long, not valid UTF-8 (SQLite keeps text as UTF-8) or
        # otherwise unusable: one typed error, never a traceback.
        raise WorkspaceError(f"cannot use this workspace or database path: {exc}") from None


def _open_store(
    cwd: str | os.PathLike[str] | None,
    db_path: str | os.PathLike[str] | None,
    root: str | os.PathLike[str] | None,
    read_only: bool,
    force: bool,
) -> Store:
    resolved = resolve(cwd, root=root)
    ws_root, wt_root = resolved.root_text, resolved.worktree_root_text
    for text in (ws_root, resolved.worktree, wt_root):
        text.encode("utf-8")  # UnicodeEncodeError (a ValueError) for undecodable bytes
    explicit = db_path is not None or bool(os.environ.get(DB_ENV))
    path = resolve_db_path(ws_root, db_path)
    path.encode("utf-8")
    warnings = list(resolved.warnings)
    if not explicit:
        datadir.check_data_dir(ws_root, trusted=resolved.resolved_by == "SYNAPT_RECALL_ROOT")
    else:
        _check_named_path(path, read_only)
    uuid = _workspace_id(ws_root, path, warnings, read_only, force, explicit)
    if not read_only and not explicit:
        ensure_private_dir(os.path.dirname(path))
        datadir.ensure_gitignore(ws_root)
    db = Database(path, read_only=read_only, force=force)
    if uuid is None:
        # Minted only once the store file exists: a process that finds the id finds its
        # store too, and a missing store beside an id always means a lost one.
        try:
            uuid = idfile.ensure_workspace_id(ws_root)
        except BaseException:
            db.close()
            raise
    if db.moved_aside is not None:
        warnings.append(f"the damaged store was moved to {db.moved_aside}; a new store begins")
    if db.read_only and not read_only:
        warnings.append(f"{db.read_only_reason}: reads work, writes fail")
    try:
        reg = identity.register(
            db,
            identity.Sighting(
                uuid,
                ws_root,
                resolved.worktree,
                resolved.worktree_name,
                wt_root,
            ),
        )
    except BaseException:
        db.close()
        raise
    warnings += [
        f"workspace id {uuid} is also recorded at {other}, which still carries it: a copied "
        "workspace; both copies read and write one merged history (move the copy's "
        ".synapt/recall/workspace.json aside to give it its own id)"
        for other in reg.other_roots
        if _carries_id(other, uuid)
    ]
    ctx = StoreContext(
        db, reg.workspace_pk, uuid, reg.worktree_pk, resolved.worktree, resolved.branch
    )
    where = {
        "id": uuid,
        "root": ws_root,
        "resolved_by": resolved.resolved_by,
        "weak": resolved.weak,
        "worktree": resolved.worktree,
        "worktree_name": resolved.worktree_name,
        "worktree_root": wt_root,
        "branch": resolved.branch,
        "db_path": path,
        "warnings": tuple(warnings),
    }
    return Store(ctx, where)


def _check_named_path(path: str, read_only: bool) -> None:
    """A database named by hand (--db, $RECALL_SQLITE_DB): a file, in a directory that
    exists, checked before anything is minted (a typo creates nothing anywhere)."""
    if is_dir(path):
        raise WorkspaceError(
            f"{path} is a directory: a store is a file (e.g. {os.path.join(path, datadir.DB_FILE)})"
        )
    directory = os.path.dirname(path) or "."
    if not read_only and not is_dir(directory):
        raise WorkspaceError(f"cannot create {path}: the directory {directory} does not exist")


def _workspace_id(
    root: str, path: str, warnings: list[str], read_only: bool, force: bool, explicit: bool
) -> str | None:
    """The workspace's id: its workspace.json's, else the one its store holds, else None:
    a write open mints one (after the store exists). A store lost or damaged where the id
    says one was is refused before anything is minted or created."""
    uuid = idfile.read_workspace_id(root)
    if uuid is not None:
        if not explicit and not force:
            _refuse_lost_store(path)
        return uuid
    uuid = _recover_id(path, root, warnings, restore=not read_only, any_id=not explicit)
    if uuid is not None:
        return uuid
    what = storefile.damage(path)
    if what is not None and not force:
        raise storefile.damaged_error(what)
    if read_only:
        raise NoStoreError(f"no store yet for {root} (nothing was created)")
    return None


def _refuse_lost_store(path: str) -> None:
    """The workspace has an id, so its store was made here: a missing file is a lost
    store (deleted, moved, not restored), not a workspace without one."""
    if not os.path.lexists(path) and storefile.damage(path) is None:
        raise storefile.damaged_error(
            f"{path} is missing although this workspace's id was minted with it (a store"
            " that was deleted or moved; if it lives elsewhere, name it with --db or"
            f" ${DB_ENV})"
        )


def _recover_id(
    path: str, root: str, warnings: list[str], *, restore: bool, any_id: bool
) -> str | None:
    """The id the database already records, when workspace.json is gone (deleted, or the
    store was copied or restored into a clone elsewhere): minting a new one would hide
    the whole history. The id recorded for this root; or, `any_id` (the workspace's own
    store file, which holds only this workspace's history), the one seen last anywhere.
    Restored into the workspace (a write open) with a warning."""
    if not is_file(path):
        return None
    try:
        probe = Database(path, read_only=True)
    except NoStoreError:
        return None
    except StoreError:
        if restore:
            return None  # a write open: Database refuses the file, or (forced) sets it aside
        raise
    try:
        rows = identity.uuids_at_root(probe, root)
        elsewhere = [] if rows or not any_id else identity.workspaces_last_seen(probe)
    finally:
        probe.close()
    if not rows and not elsewhere:
        return None
    uuid = rows[0] if rows else elsewhere[0][0]
    what = (
        "the id the database records for this root"
        if rows
        else f"the id of the history this store holds (last seen at {elsewhere[0][1]}:"
        " a copied or restored store)"
    )
    where = f"{root}/.synapt/recall/workspace.json"
    if restore:
        idfile.restore_workspace_id(root, uuid)
        warnings.append(f"{where} was missing; restored {what}, {uuid}")
    else:
        warnings.append(f"{where} is missing; using {what}, {uuid} (not restored: read-only)")
    if len(rows or elsewhere) > 1:
        warnings.append(
            f"the database records {len(rows or elsewhere)} workspace ids"
            + (" for this root" if rows else "")
            + "; used the most recently seen"
        )
    return uuid


def _carries_id(root: str, uuid: str) -> bool:
    try:
        return is_dir(root) and idfile.read_workspace_id(root) == uuid
    except (WorkspaceError, OSError):
        return False
