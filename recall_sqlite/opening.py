"""Opening a store: from a directory to its workspace, its id (found, recovered from the
store, or minted once the file exists) and the store file (created, migrated, refused when
damaged or lost), as the context the families work on. store.py composes the families on
what this returns; nothing here knows them."""

from __future__ import annotations

import os

from . import identity
from .checks import require_bool, require_path
from .context import StoreContext
from .db import Database
from .errors import NoStoreError, RecallError, StoreError, WorkspaceError
from .paths import datadir, idfile, storefile
from .paths.files import ensure_private_dir, is_dir, is_file, pure
from .paths.resolve import resolve

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DB_ENV = "RECALL_SQLITE_DB"


def resolve_db_path(root: str | os.PathLike[str], db_path: str | os.PathLike[str] | None) -> str:
    """The database file: `db_path`, else $RECALL_SQLITE_DB, else the workspace's own. A
    relative path is relative to the workspace root, never to where the process stands:
    every subdirectory of the workspace names the same store with it."""
    given = db_path if db_path is not None else os.environ.get(DB_ENV) or None
    if given is None:
        return datadir.default_db_path(root)
    path = pure(os.path.expanduser(os.fspath(given)))
    return path if path.startswith("/") else pure(os.path.join(os.fspath(root), path))


def open_context(
    cwd: str | os.PathLike[str] | None,
    *,
    db_path: str | os.PathLike[str] | None,
    root: str | os.PathLike[str] | None,
    read_only: bool,
    force: bool,
) -> tuple[StoreContext, dict[str, Any]]:
    """The context of the workspace that contains `cwd`, and where it is (WorkspaceInfo's
    fields, the paths as text): `open_store`'s work, described there."""
    for name, value in (("cwd", cwd), ("db_path", db_path), ("root", root)):
        if value is not None:
            require_path(name, value, error=WorkspaceError)
    require_bool("read_only", read_only, error=WorkspaceError)
    require_bool("force", force, error=WorkspaceError)
    if force and read_only:
        raise WorkspaceError("force starts a new store: it cannot be read-only")
    try:
        return _open(cwd, db_path, root, read_only, force)
    except (OSError, ValueError) as exc:
        if isinstance(exc, RecallError):
            raise
        # A path that is too long, not valid UTF-8 (SQLite keeps text as UTF-8) or
        # otherwise unusable: one typed error, never a traceback.
        raise WorkspaceError(f"cannot use this workspace or database path: {exc}") from None


def _open(
    cwd: str | os.PathLike[str] | None,
    db_path: str | os.PathLike[str] | None,
    root: str | os.PathLike[str] | None,
    read_only: bool,
    force: bool,
) -> tuple[StoreContext, dict[str, Any]]:
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
        # A database named by hand (--db, $RECALL_SQLITE_DB) is checked before anything
        # is minted: a typo creates nothing anywhere.
        storefile.check_store_path(path, creating=not read_only)
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
    return ctx, where


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
    where = idfile.workspace_file(root)
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
