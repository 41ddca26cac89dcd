"""The store: one connection, the resolved identity, and the table families on it. This
module only composes; each family owns its tables, and opening.py finds and opens the file."""

from __future__ import annotations

import os

from . import identity
from ._record import Frozen
from .checks import require_bool, require_text
from .context import StoreContext, WorkspaceInfo, WorktreeInfo
from .errors import InvalidInputError
from .journal.journal import Journal
from .opening import DB_ENV, open_context, resolve_db_path
from .sync import place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .cursors import Cursors
    from .doctor import DoctorReport
    from .journal.forget import ForgetReport
    from .legacy import Legacy
    from .summaries import Summaries
    from .sync.sync import RestoreReport, Sync
    from .vectors.vectors import Vectors

__all__ = [
    "DB_ENV",
    "Store",
    "WorktreeForgotten",
    "context_of",
    "open_store",
    "resolve_db_path",
    "restore_store",
    "unstored_workspace",
]


class WorktreeForgotten(Frozen):
    """What `Store.forget_worktree` did: the worktree, whether its record went (else it
    is kept as gone), and the forget of its entries (None: it held none)."""

    __slots__ = ("key", "removed", "forget")
    key: str
    removed: bool
    forget: ForgetReport | None

    def __init__(self, key: str, removed: bool, forget: ForgetReport | None) -> None:
        self._set(key=key, removed=removed, forget=forget)

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
        # When the store syncs, the journal is composed with how many entry versions other
        # machines hold that this store has not pulled (once a pull or status counted) and
        # the hold a forget takes (replication still, this machine's replica history
        # purged). Asked of the filesystem only: a read's start never loads sync/.
        db_path = where["db_path"]
        self._others = (lambda: self.sync.ahead()) if place.has_peers(db_path) else None
        hold = (lambda: self.sync.hold(purge=True)) if place.syncs(db_path) else None
        # Every removal takes the same hold (forget, summary remove, a vector
        # delete): the removed text leaves this machine's replica history too.
        self._hold = hold
        self.journal = Journal(
            ctx,
            searcher=self._search_journal,
            files=self._forget_copies,
            others=self._others,
            hold=hold,
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
            "summaries",
            lambda ctx: Summaries(ctx, searcher=self._search_summaries, hold=self._hold),
        )
        return family

    @property
    def cursors(self) -> Cursors:
        from .cursors import Cursors

        family: Cursors = self._family("cursors", lambda ctx: Cursors(ctx, others=self._others))
        return family

    @property
    def vectors(self) -> Vectors:
        # numpy is loaded by vectors/ only, and only when a host asks for vectors.
        from .vectors.vectors import Vectors

        family: Vectors = self._family("vectors", lambda ctx: Vectors(ctx, hold=self._hold))
        return family

    @property
    def legacy(self) -> Legacy:
        from .legacy import Legacy

        # The root this store was opened at: after the project moved, a read-only open
        # cannot record the new root, and the legacy bookkeeping is relative to it.
        family: Legacy = self._family("legacy", lambda ctx: Legacy(ctx, self.workspace.root))
        return family

    @property
    def sync(self) -> Sync:
        from .sync.sync import Sync

        w = self.workspace
        family: Sync = self._family(
            "sync", lambda ctx: Sync(ctx, w.root, w.db_path, files=self._forget_copies)
        )
        return family

    def worktrees(self) -> list[WorktreeInfo]:
        """Every worktree the workspace records, with its entries and whether its root
        still exists on disk (a worktree whose directory is gone keeps its history)."""
        counts = self.journal.host.counts_by_worktree()
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
            for w in identity.worktrees(self._ctx.db, self._ctx.workspace_pk)
        ]

    def forget_worktree(self, name: str, *, scrub_sources: bool = False) -> WorktreeForgotten:
        """Forget a worktree (by key, or by a name only one worktree has): every entry
        version it holds, as journal.forget does (the store's copies in files go; copies
        in imported files are listed, and go too with `scrub_sources`), then its record
        (kept, marked gone, while an imported file is still filed under it). The worktree
        this store was opened in is refused: it would be recorded again at once."""
        rows = identity.worktrees(self._ctx.db, self._ctx.workspace_pk)
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
        with self._ctx.db.write() as conn:
            removed = identity.retire_worktree(conn, self._ctx.workspace_pk, key)
        return WorktreeForgotten(key, removed, report)

    def doctor(self, *, repair: bool = False, deep: bool = False) -> DoctorReport:
        """Check the store (see doctor/); with `repair`, mend what is found (in short
        writes) and check again; `deep` also re-hashes every row and compares the
        full-text indexes token by token."""
        from .doctor import doctor

        require_bool("repair", repair)
        require_bool("deep", deep)
        return doctor(self._ctx, self.workspace, self.legacy, repair=repair, deep=deep)

    def _search_journal(self, query: str, n: int, **options: Any) -> Any:
        from .search.journal import search_journal

        found = search_journal(self._ctx, query, n, vectors=lambda: self.vectors, **options)
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


def context_of(store: Store) -> StoreContext:
    """The connection and identity a store's families work on. For the package's own rooms
    (the CLI's numpy-free vector stats) and white-box tests: not the public face, which
    reaches a store only through its families."""
    return store._ctx  # noqa: SLF001 - this module's own class


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
    ctx, where = open_context(cwd, db_path=db_path, root=root, read_only=read_only, force=force)
    return Store(ctx, where)


def unstored_workspace(
    cwd: str | os.PathLike[str] | None = None, *, db_path: str | os.PathLike[str] | None = None
) -> WorkspaceInfo:
    """The workspace `cwd` resolves to and the database file it would have, where no store
    exists yet (`id` None: none is minted before the first write): what `where` answers
    then, and the worktree and branch a read's answer says it would have covered. Reads the
    filesystem only; creates nothing."""
    from pathlib import Path

    from .paths.resolve import resolve

    r = resolve(cwd)
    return WorkspaceInfo(
        id=None,
        root=r.root,
        resolved_by=r.resolved_by,
        weak=r.weak,
        worktree=r.worktree,
        worktree_name=r.worktree_name,
        worktree_root=r.worktree_root,
        branch=r.branch,
        db_path=Path(resolve_db_path(r.root_text, db_path)),
        warnings=tuple(r.warnings),
    )


def restore_store(
    cwd: str | os.PathLike[str] | None = None,
    *,
    url: str,
    key: str | None = None,
    force: bool = False,
    db_path: str | os.PathLike[str] | None = None,
    retire: str | None = None,
) -> RestoreReport:
    """Bring this workspace's store back from the freshest replica of its sync key at `url`
    (a new or rebuilt machine), then pull the other machines into it and check it. Not a
    call of `store.sync`: there is no store to open yet, or one that is to be replaced
    (only with `force`; it is moved aside, never deleted). `retire`: the machine this one
    replaces (its id or the start of it), checked before anything is restored (it must
    not be live) and retired after the pull (`store.sync.retire`); without it, the report
    names the machines that look dead."""
    from pathlib import Path

    from .paths.resolve import resolve
    from .sync.setup import restore
    from .sync.sync import RestoreReport

    root = resolve(cwd).root
    path = Path(resolve_db_path(root, db_path))
    if retire is not None:
        require_text("retire", retire, allow_empty=False)
    done = restore(root, path, url, key=key, force=force, retire=retire)
    with open_store(cwd, db_path=db_path) as store:
        pulled = store.sync.pull()
        retired = store.sync.retire(retire) if retire is not None else None
        report = store.doctor()
        dead = store.sync.looks_dead()
    return RestoreReport(
        db_path=str(path),
        restored=done,
        pulled=pulled,
        doctor_ok=report.ok,
        retired=retired,
        looks_dead=dead,
    )
