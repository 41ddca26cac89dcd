"""v3: identities that survive moves.

- A linked git worktree was keyed by its absolute path, so `git worktree move` orphaned its
  history; it is now keyed by git's administrative name (`@<name>`, or `<main>@<name>` for
  a linked worktree of a checkout below the root; see workspace.worktree_key), which a move
  keeps. Rows whose root no longer holds a readable linked worktree keep their key.
- Import bookkeeping (`import_sources.path`) was an absolute path, so moving the project
  directory made every imported file look never imported; it is now relative to the
  workspace root (`<worktree key>:<path>` inside a linked worktree outside the root).

No schema change: the columns keep their types, only their values are re-keyed. The step
reads the `.git` file of each recorded worktree root (no subprocess) and is otherwise SQL.
Self-contained: the git reading below is a frozen copy of what v3's code did, so a later
change of the live path code cannot change what this step does.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from apsw import Connection


def _gitdir_of(dotgit: Path) -> Path | None:
    try:
        text = dotgit.read_bytes()[: 64 * 1024].decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.splitlines()
    line = lines[0].strip() if lines else ""
    if not line.startswith("gitdir:") or not line[len("gitdir:") :].strip():
        return None
    target = Path(line[len("gitdir:") :].strip())
    if not target.is_absolute():
        target = dotgit.parent / target
    try:
        return target.resolve()
    except (OSError, RuntimeError):
        return None


def _linked_admin(checkout: Path) -> tuple[Path, str] | None:
    """(main checkout, git's administrative name) of a linked worktree, else None."""
    dotgit = checkout / ".git"
    if not dotgit.is_file():
        return None
    gitdir = _gitdir_of(dotgit)
    if gitdir is None:
        return None
    try:
        value = (gitdir / "commondir").read_text(encoding="utf-8").splitlines()[0].strip()
    except (OSError, UnicodeDecodeError, IndexError):
        return None
    if not value:
        return None
    common = Path(value) if os.path.isabs(value) else gitdir / value
    with contextlib.suppress(OSError, RuntimeError):
        common = common.resolve()
    if common.name != ".git" or gitdir.parent.name != "worktrees":
        return None
    return common.parent, gitdir.name


def _worktree_key(wt_root: Path, ws_root: Path) -> str:
    """v3's key of a checkout: '.', `@<name>` / `<main>@<name>` for a linked worktree, else
    the path relative to the root (absolute outside it)."""
    if wt_root == ws_root:
        return "."
    admin = _linked_admin(wt_root)
    if admin is not None:
        main, name = admin
        if main == ws_root:
            return f"@{name}"
        if main.is_relative_to(ws_root):
            return f"{main.relative_to(ws_root).as_posix()}@{name}"
    if wt_root.is_relative_to(ws_root):
        return wt_root.relative_to(ws_root).as_posix()
    return wt_root.as_posix()


def migrate(conn: Connection) -> None:
    for (workspace_pk,) in conn.execute("SELECT id FROM workspaces"):
        roots = [
            Path(str(r))
            for (r,) in conn.execute(
                "SELECT root FROM workspace_roots WHERE workspace_id = ? ORDER BY last_seen DESC",
                (workspace_pk,),
            ).fetchall()
        ]
        linked = _rekey_worktrees(conn, workspace_pk, roots)
        _relative_sources(conn, workspace_pk, roots, linked)


def _rekey_worktrees(
    conn: Connection, workspace_pk: int, roots: list[Path]
) -> list[tuple[str, Path]]:
    """Re-key linked worktrees; returns (key, root) of every linked worktree outside the
    workspace roots, for the source paths that lie in one."""
    keys = {
        str(k)
        for (k,) in conn.execute(
            "SELECT key FROM worktrees WHERE workspace_id = ?", (workspace_pk,)
        ).fetchall()
    }
    outside: list[tuple[str, Path]] = []
    for pk, key, root in conn.execute(
        "SELECT id, key, root FROM worktrees WHERE workspace_id = ? AND root IS NOT NULL"
        " AND key <> '.'",
        (workspace_pk,),
    ).fetchall():
        wt_root = Path(str(root))
        admin = _linked_admin(wt_root) if wt_root.is_dir() else None
        main = next(
            (
                r
                for r in roots
                if admin is not None and (admin[0] == r or admin[0].is_relative_to(r))
            ),
            None,
        )
        new = str(key)
        if admin is not None and main is not None:
            new = _worktree_key(wt_root, main)
            if new != key and new not in keys:
                conn.execute("UPDATE worktrees SET key = ? WHERE id = ?", (new, pk))
                keys.discard(str(key))
                keys.add(new)
            else:
                new = str(key)
        if not any(wt_root == r or wt_root.is_relative_to(r) for r in roots):
            outside.append((new, wt_root))
    return outside


def _relative_sources(
    conn: Connection, workspace_pk: int, roots: list[Path], linked: list[tuple[str, Path]]
) -> None:
    for pk, path in conn.execute(
        "SELECT id, path FROM import_sources WHERE workspace_id = ?", (workspace_pk,)
    ).fetchall():
        if not os.path.isabs(str(path)):
            continue
        p = Path(str(path))
        new: str | None = None
        for r in roots:
            if p.is_relative_to(r):
                new = p.relative_to(r).as_posix()
                break
        if new is None:
            for key, wt_root in sorted(linked, key=lambda x: -len(x[1].parts)):
                if p.is_relative_to(wt_root):
                    new = f"{key}:{p.relative_to(wt_root).as_posix()}"
                    break
        if new is not None:
            # (workspace, path, version) is unique: a relative twin already recorded (an
            # import after a move, before this step) keeps the absolute row as it was.
            clash = conn.execute(
                "SELECT 1 FROM import_sources WHERE workspace_id = ? AND path = ?"
                " AND version = (SELECT version FROM import_sources WHERE id = ?)",
                (workspace_pk, new, pk),
            ).fetchall()
            if not clash:
                conn.execute("UPDATE import_sources SET path = ? WHERE id = ?", (new, pk))
