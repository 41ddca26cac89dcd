"""`store.doctor()` / `recall-sqlite doctor`: everything that can be checked about a store,
as findings, and the repair of what is derived.

Checks: SQLite's integrity_check and foreign_key_check; the derived state against its one
definition (derived.py); the JSON of the list and extra columns; the bulk guard table empty; the
workspace's roots and worktrees (copied or moved);
the store file itself (tracked by git, older than the workspace id, a symlink). A repair
rebuilds what is derived and clears the guard table; it never deletes an entry.

Loaded only by doctor: no other path imports this module."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import derived, identity
from ._record import Frozen
from .errors import RecallError, WorkspaceError
from .paths import idfile
from .search.index import check_index, rebuild_index
from .timestamps import parse_timestamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .context import StoreContext, WorkspaceInfo
    from .legacy import Legacy

_JSON_OK = (
    "json_valid(done) AND json_valid(decisions) AND json_valid(next_steps)"
    " AND json_valid(files_modified) AND json_valid(git_log)"
    " AND (extra IS NULL OR (json_valid(extra) AND json_type(extra) = 'object'))"
)


class Finding(Frozen):
    """One thing doctor found. `repairable`: `doctor --repair` fixes it."""

    __slots__ = ("kind", "severity", "message", "repairable", "data")
    kind: str
    severity: str  # error (the store answers wrongly or may) | warning (look at it)
    message: str
    repairable: bool
    data: dict[str, Any]

    def __init__(
        self,
        kind: str,
        severity: str,
        message: str,
        repairable: bool = False,
        data: dict[str, Any] | None = None,
    ) -> None:
        self._set(
            kind=kind, severity=severity, message=message, repairable=repairable, data=data or {}
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "repairable": self.repairable,
            **({"data": self.data} if self.data else {}),
        }


class DoctorReport(Frozen):
    __slots__ = ("findings", "repaired", "database")
    findings: tuple[Finding, ...]  # after a repair: what is left
    repaired: tuple[str, ...]  # what the repair changed, one sentence each
    database: str

    def __init__(
        self, findings: tuple[Finding, ...], repaired: tuple[str, ...], database: str
    ) -> None:
        self._set(findings=findings, repaired=repaired, database=database)

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "database": self.database,
            "findings": [f.to_dict() for f in self.findings],
            "repaired": list(self.repaired),
        }


def doctor(
    ctx: StoreContext, info: WorkspaceInfo, legacy: Legacy, *, repair: bool = False
) -> DoctorReport:
    """Check the store of `ctx` (the workspace `info` describes; `legacy` finds its synapt
    stores); with `repair`, rebuild what is derived first."""
    repaired: list[str] = []
    if repair:
        repaired = _repair(ctx) + _acknowledge(ctx, info)
    return DoctorReport(tuple(_findings(ctx, info, legacy)), tuple(repaired), str(ctx.db.path))


def _findings(ctx: StoreContext, info: WorkspaceInfo, legacy: Legacy) -> list[Finding]:
    out: list[Finding] = []
    db = ctx.db
    with db.read() as conn:
        problems = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(20)")]
        if problems != ["ok"]:
            out.append(
                Finding(
                    "integrity",
                    "error",
                    "SQLite's integrity_check found damage: " + "; ".join(problems[:5]),
                    data={"problems": problems},
                )
            )
        fk = conn.execute("PRAGMA foreign_key_check").fetchall()
        if fk:
            tables = sorted({str(r[0]) for r in fk})
            out.append(
                Finding(
                    "foreign_keys",
                    "error",
                    f"{len(fk)} rows name a parent row that does not exist"
                    f" (tables: {', '.join(tables)})",
                    data={"rows": len(fk), "tables": tables},
                )
            )
        for d in derived.check(conn):
            out.append(Finding(d.kind, "error", d.detail, True, d.to_dict()))
        index = check_index(conn)
        if not index.ok:
            out.append(
                Finding(
                    "search_index",
                    "error",
                    "the full-text index disagrees with the rows it indexes"
                    " (searches miss or show wrong entries)",
                    True,
                    index.to_dict(),
                )
            )
        rows: list[tuple[Any, ...]] = conn.execute(
            f"SELECT seq FROM journal_entries WHERE NOT ({_JSON_OK}) LIMIT 20"
        ).fetchall()
        bad_json = [int(r[0]) for r in rows]
        if bad_json:
            out.append(
                Finding(
                    "json",
                    "error",
                    f"entries (seq {', '.join(map(str, bad_json))})"
                    " hold list or extra columns that are not valid JSON",
                    data={"seqs": bad_json},
                )
            )
        guard: list[tuple[Any, ...]] = conn.execute(
            "SELECT workspace_id FROM journal_bulk"
        ).fetchall()
        if guard:
            out.append(
                Finding(
                    "bulk_guard",
                    "error",
                    "journal_bulk is not empty: inserts of those workspaces skip the dedup trigger",
                    True,
                    {"workspaces": [int(r[0]) for r in guard]},
                )
            )
        rehome: list[tuple[Any, ...]] = conn.execute(
            "SELECT count(*) FROM journal_rehome"
        ).fetchall()
        if rehome[0][0]:
            out.append(
                Finding(
                    "rehome_guard",
                    "error",
                    "journal_rehome is not empty: entries' worktrees can be"
                    " changed outside a re-homing import",
                    True,
                    {"rows": int(rehome[0][0])},
                )
            )
        roots = identity.root_sightings(conn, ctx.workspace_pk)
        trees = identity.worktree_roots(conn, ctx.workspace_pk)
    out.extend(_identity_findings(info, roots, trees))
    out.extend(_file_findings(ctx, info, roots))
    out.extend(_legacy_findings(legacy))
    return out


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


def _acknowledge(ctx: StoreContext, info: WorkspaceInfo) -> list[str]:
    """What ordinary git use changed, recorded so doctor is healthy again: a linked
    worktree git moved gets its new root, one whose directory is gone is kept as gone (its
    history stays, read with --all-worktrees), and roots the workspace left (it moved to
    `info.root`, where this store was opened) are dropped."""
    from .paths.git import linked_admin, linked_worktrees

    here = str(info.root)
    moved_to = {}
    for wt in linked_worktrees(info.root):
        admin = linked_admin(wt)
        if admin is not None:
            moved_to[f"@{admin[1]}"] = str(wt)
    done: list[str] = []
    with ctx.db.write() as conn:
        for key, root in identity.worktree_roots(conn, ctx.workspace_pk):
            if key == "." or Path(root).exists():
                continue
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
        roots = [r for r, _ in identity.root_sightings(conn, ctx.workspace_pk)]
        if here in roots:
            for root in roots:
                if root != here and not Path(root).exists():
                    identity.forget_root(conn, ctx.workspace_pk, root)
                    done.append(f"the workspace moved from {root} to {here}")
    return done


def _repair(ctx: StoreContext) -> list[str]:
    done: list[str] = []
    with ctx.db.write() as conn:
        guard = conn.execute("DELETE FROM journal_bulk RETURNING workspace_id").fetchall()
        if guard:
            done.append(f"emptied journal_bulk ({len(guard)} rows)")
        rehome = conn.execute("DELETE FROM journal_rehome RETURNING 1").fetchall()
        if rehome:
            done.append(f"emptied journal_rehome ({len(rehome)} rows)")
        r = derived.rebuild(conn)
        if not check_index(conn).ok:
            rebuild_index(conn)
            done.append("rebuilt the full-text index of entries and summaries")
    if r.heads:
        done.append(f"set head_ws/head_wt of {r.heads} entry versions by the dedup rule")
    if r.counts:
        done.append(f"recounted journal_counts_ws/wt ({r.counts} scope rows were wrong)")
    if r.vectors:
        done.append(f"re-copied owner scope or recounted models for {r.vectors} vector rows")
    if r.orphan_vectors:
        done.append(f"deleted {r.orphan_vectors} vectors that belonged to no entry or summary")
    return done
