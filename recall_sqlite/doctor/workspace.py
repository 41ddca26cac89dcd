"""The store's surroundings, for doctor: the workspace's roots and worktrees (copied or
moved), the store file (a symlink, tracked by git, older than the workspace id, holding the
history of another workspace id), and the synapt stores of the workspace not yet
imported."""

from __future__ import annotations

import os
from pathlib import Path

from .. import identity
from ..errors import RecallError, WorkspaceError
from ..paths import datadir, idfile
from ..timestamps import parse_timestamp
from .report import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..context import StoreContext, WorkspaceInfo
    from ..legacy import Legacy


def findings(ctx: StoreContext, info: WorkspaceInfo, legacy: Legacy) -> list[Finding]:
    with ctx.db.read() as conn:
        roots = identity.root_sightings(conn, ctx.workspace_pk)
        trees = identity.worktree_roots(conn, ctx.workspace_pk)
        others = identity.other_histories(conn, ctx.workspace_pk)
    out = _identity_findings(info, roots, trees)
    out.extend(_file_findings(ctx, info, roots))
    if str(info.db_path) == datadir.default_db_path(info.root):
        out.extend(_other_histories(others))
    out.extend(_legacy_findings(legacy))
    out.extend(_forgotten_findings(legacy))
    return out


def _forgotten_findings(legacy: Legacy) -> list[Finding]:
    """Lines of synapt's journals that still hold a forgotten entry version no forget has
    looked at (a file it could not rewrite, a row deleted without it): verify takes them
    for accounted (an import never brings them back), but the text is in the file."""
    try:
        left, errors = legacy.forgotten_copies()
    except RecallError as exc:
        return [Finding("forgotten_copies", "warning", f"could not look for them: {exc}")]
    out = [
        Finding("forgotten_copies", "warning", f"could not read {e} for forgotten text")
        for e in errors
    ]
    if left:
        shown = "; ".join(f"{c.path}:{c.line} ({c.entry})" for c in left[:5])
        ids = sorted({c.entry for c in left})
        out.append(
            Finding(
                "forgotten_copies",
                "warning",
                f"{len(left)} line(s) of synapt's journals still hold forgotten entry"
                f" versions: {shown}; `recall-sqlite journal forget {' '.join(ids[:3])}`"
                " removes them",
                data={"copies": [c.to_dict() for c in left]},
            )
        )
    return out


def _other_histories(others: list[tuple[str, int]]) -> list[Finding]:
    """The workspace's own store holds entries of other workspace ids: history a lost
    workspace.json once hid behind a new id (a shared --db holds several on purpose)."""
    return [
        Finding(
            "other_workspace",
            "warning",
            f"this store also holds {n} entries of workspace id {uuid}, which no read here"
            " shows: history written before workspace.json was lost or replaced; to read it,"
            f" put {uuid} back into .synapt/recall/workspace.json",
            data={"workspace_id": uuid, "entries": n},
        )
        for uuid, n in others
    ]


def _legacy_findings(legacy: Legacy) -> list[Finding]:
    """synapt stores of the workspace (the ones `recall-sqlite import` finds) that are not
    wholly imported: reads here would miss their history."""
    try:
        plan = legacy.plan()
        states = legacy.states(plan)
    except RecallError as exc:
        return [Finding("legacy", "warning", f"could not look for synapt stores: {exc}")]
    behind = [
        (p.key, states.get(p.key, "not imported"))
        for p in plan.everything
        if states.get(p.key) != "imported"
    ]
    if not behind:
        return []
    shown = "; ".join(f"{k} ({why})" for k, why in behind[:5])
    return [
        Finding(
            "legacy",
            "warning",
            f"{len(behind)} synapt store(s) of this workspace are not wholly imported:"
            f" {shown}; run `recall-sqlite import`",
            data={"stores": [{"key": k, "state": why} for k, why in behind]},
        )
    ]


def _identity_findings(
    info: WorkspaceInfo, roots: list[tuple[str, str]], trees: list[tuple[str, str]]
) -> list[Finding]:
    out: list[Finding] = []
    here = str(info.root)
    uuid = info.id
    for root, _ in roots:
        if root == here:
            continue
        path = Path(root)
        try:
            carries = path.is_dir() and idfile.read_workspace_id(path) == uuid
        except (WorkspaceError, OSError):  # an unreadable root is simply not a copy
            carries = False
        if carries:
            out.append(
                Finding(
                    "copied_workspace",
                    "warning",
                    f"{root} carries this workspace's id too (a copy): both write"
                    " into one history; give the copy its own id by moving its"
                    " .synapt/recall/workspace.json aside",
                    data={"root": root},
                )
            )
        elif not path.exists():
            out.append(
                Finding(
                    "moved_workspace",
                    "warning",
                    f"this workspace was also seen at {root}, which no longer exists (moved?);"
                    " `doctor --repair` records that it moved",
                    repairable=True,
                    data={"root": root},
                )
            )
    for key, root in trees:
        if key != "." and not Path(root).exists():
            out.append(
                Finding(
                    "moved_worktree",
                    "warning",
                    f"worktree {key!r} was last seen at {root}, which no longer"
                    " exists (moved or removed?); `doctor --repair` records where git"
                    " moved it, or that it is gone (its history stays: --all-worktrees)",
                    repairable=True,
                    data={"worktree": key, "root": root},
                )
            )
    return out


def _file_findings(
    ctx: StoreContext, info: WorkspaceInfo, roots: list[tuple[str, str]]
) -> list[Finding]:
    out: list[Finding] = []
    path = ctx.db.path
    root = info.root
    if path.is_symlink():
        out.append(
            Finding("store_symlink", "warning", f"{path} is a symlink to {os.path.realpath(path)}")
        )
    if _tracked_by_git(root, path):
        out.append(
            Finding(
                "store_in_git",
                "warning",
                f"{path} is tracked by git: a clone carries this history (and any"
                " secret in it) to everyone; `git rm --cached` it",
            )
        )
    created = idfile.created_us(root)
    first = min((parse_timestamp(r[1]) for r in roots), default=None)
    if created is not None and first is not None and first < created - 60_000_000:
        out.append(
            Finding(
                "store_older_than_id",
                "warning",
                "the store knew this workspace before its workspace.json was"
                " written: the id was restored, or the store came from elsewhere"
                " (a clone, a copy)",
            )
        )
    return out


def _tracked_by_git(root: Path, path: Path) -> bool:
    if not (root / ".git").exists():
        return False
    import subprocess

    try:
        res = subprocess.run(
            ["git", "-C", str(root), "ls-files", "--error-unmatch", "--", str(path)],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return res.returncode == 0


def acknowledge(ctx: StoreContext, info: WorkspaceInfo) -> list[str]:
    """What ordinary git use changed, recorded so doctor is healthy again (doctor
    --repair): a linked worktree git moved gets its new root, one whose directory is gone
    is kept as gone (its history stays, read with --all-worktrees), and roots the workspace
    left (it moved to `info.root`, where this store was opened) are dropped."""
    from ..paths.git import linked_admin, linked_worktrees

    here = str(info.root)
    moved_to = {}
    for wt in linked_worktrees(info.root):
        admin = linked_admin(wt)
        if admin is not None:
            moved_to[f"@{admin[1]}"] = str(wt)
    done: list[str] = []
    with ctx.db.read() as conn:
        trees = identity.worktree_roots(conn, ctx.workspace_pk)
        roots = [r for r, _ in identity.root_sightings(conn, ctx.workspace_pk)]
    gone = [(k, r) for k, r in trees if k != "." and not Path(r).exists()]
    left = [r for r in roots if r != here and not Path(r).exists()] if here in roots else []
    if not gone and not left:
        return done  # a healthy workspace is not written to
    with ctx.db.write() as conn:
        for key, root in gone:
            new = moved_to.get(key)
            if new is not None and Path(new).is_dir():
                identity.move_worktree(conn, ctx.workspace_pk, key, new)
                done.append(f"worktree {key!r} moved from {root} to {new} (git says so)")
            else:
                identity.mark_gone(conn, ctx.workspace_pk, key)
                done.append(
                    f"worktree {key!r} ({root}) is gone: kept as history"
                    " (journal read --all-worktrees shows it)"
                )
        for root in left:
            identity.forget_root(conn, ctx.workspace_pk, root)
            done.append(f"the workspace moved from {root} to {here}")
    return done
