"""The store walk: every legacy data directory of a workspace, wherever synapt left one, and
every checkout (worktree) of the workspace on disk. Filesystem only, no subprocess.

synapt 0.30.0 resolves its data root to the current directory in a plain git repository
(unless that directory holds `.git`), so a workspace's history lies in `.synapt/recall`
directories at any depth below the root and below every linked worktree. This walk finds
them all. What it does not enter, and why:

- symbolic links (a link can lead out of the workspace or into a loop; a store reached
  only through one is not the workspace's own);
- `.git/` (git's internals; linked worktrees are read from `.git/worktrees/*/gitdir`);
- the inside of a data directory once found (nothing synapt writes nests there);
- a nested checkout that resolves to another workspace (a vendored repository, a
  submodule): its stores are that workspace's, and it is reported as skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import workspace as ws
from ..errors import WorkspaceError

# The data directories synapt has used, by the name of the directory that holds `recall`
# (or is the data directory itself, for the oldest layout).
_HOLDERS = (".synapt", ".synapse")
_FLAT = ".synapse-recall"
JOURNAL = "journal.jsonl"


@dataclass(frozen=True)
class Checkout:
    """A worktree of the workspace as found on disk, keyed as the store keys it."""

    key: str
    name: str  # the directory's basename (synapt's bucket name for it)
    root: Path
    admin: str = ""  # git's administrative name of a linked worktree

    def names(self) -> tuple[str, ...]:
        """The bucket names synapt may have filed this worktree under: its basename, and
        for a linked worktree the admin name (its basename when added, kept by a move)."""
        return (self.name, self.admin) if self.admin and self.admin != self.name else (self.name,)


@dataclass(frozen=True)
class DataDir:
    path: Path  # the data directory (.synapt/recall, .synapse/recall, ...)
    owner: Path  # the directory synapt took as its data root
    shared: bool  # at the workspace root: synapt's data root for every desk


@dataclass
class Walk:
    root: Path
    checkouts: list[Checkout] = field(default_factory=list)
    data_dirs: list[DataDir] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    dirs: int = 0  # directories listed
    symlinks: int = 0  # symbolic links not followed

    def tree_of(self, path: Path) -> Checkout | None:
        """The checkout whose tree holds `path`: the deepest root above it."""
        best: Checkout | None = None
        for c in self.checkouts:
            if (path == c.root or path.is_relative_to(c.root)) and (
                best is None or len(c.root.parts) > len(best.root.parts)
            ):
                best = c
        return best


def identity_env() -> dict[str, str]:
    """The environment a checkout is resolved in: none of the overrides, which name where
    one process stands, not what a checkout is."""
    drop = ("SYNAPT_RECALL_ROOT", "GRIPSPACE_ROOT", "SYNAPT_RECALL_WORKTREE")
    return {k: v for k, v in os.environ.items() if k not in drop}


def data_dir_at(d: Path) -> DataDir | None:
    """The data directory `d` is, judged by its place (`X/.synapt/recall`, ...)."""
    if d.name == "recall" and d.parent.name in _HOLDERS:
        return DataDir(d, d.parent.parent, False)
    if d.name == _FLAT:
        return DataDir(d, d.parent, False)
    return None


def _holds_journals(d: Path) -> bool:
    return (d / "worktrees").is_dir() or (d / JOURNAL).is_file()


def walk(root: Path, *, extra: tuple[Path, ...] = ()) -> Walk:
    """Every checkout and data directory of the workspace at `root`: the root's tree,
    each linked worktree's tree (found through git's metadata of every main checkout in
    the workspace) and `extra` trees (given paths outside both)."""
    env = identity_env()
    root = Path(os.path.abspath(root))
    result = Walk(root)
    result.checkouts.append(Checkout(".", root.name, root))
    seen_keys = {"."}
    pending = [root, *extra]
    walked: set[Path] = set()
    mains = [root] if (root / ".git").is_dir() else []
    while pending or mains:
        while mains:
            for wt in ws.linked_worktrees(mains.pop()):
                _add_checkout(result, wt, root, env, seen_keys)
                # A linked griptree's desk is the griptree directory around its repos.
                top = wt.parent if (wt.parent / ".gitgrip" / "griptree.json").is_file() else wt
                if not _inside_any(top, walked | {root}):
                    pending.append(top)
        if not pending:
            break
        tree = pending.pop(0)
        if tree in walked or _inside_any(tree, walked):
            continue
        walked.add(tree)
        _walk_tree(result, tree, root, env, seen_keys, mains)
    return result


def _inside_any(path: Path, trees: set[Path]) -> bool:
    return any(path == t or path.is_relative_to(t) for t in trees)


def _add_checkout(
    result: Walk, d: Path, root: Path, env: dict[str, str], seen: set[str]
) -> Checkout | None:
    """Record `d` as a checkout of this workspace; None when it resolves elsewhere."""
    try:
        w = ws.resolve(d, env=env)
    except WorkspaceError:
        return None
    if w.root != root.resolve() and w.root != root:
        return None
    key = ws.worktree_key(d, root)
    admin = ws.linked_admin(d)
    c = Checkout(key, d.name, d, admin[1] if admin else "")
    if key not in seen:
        seen.add(key)
        result.checkouts.append(c)
    return c


def _walk_tree(
    result: Walk, top: Path, root: Path, env: dict[str, str], seen: set[str], mains: list[Path]
) -> None:
    stack = [top]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError as exc:
            result.skipped.append((str(d), f"cannot list: {exc.strerror or exc}"))
            continue
        result.dirs += 1
        names = {e.name for e in entries}
        if d != top and d != root and (".git" in names or ".grip" in names):
            if _add_checkout(result, d, root, env, seen) is None:
                result.skipped.append((str(d), "a checkout of another workspace"))
                continue
            if (d / ".git").is_dir():
                mains.append(d)
        children: list[Path] = []
        for e in entries:
            try:
                is_dir = e.is_dir(follow_symlinks=False)
                if not is_dir:
                    if e.is_symlink():
                        result.symlinks += 1
                    continue
            except OSError:
                continue
            name = e.name
            if name == ".git":
                continue
            if name in _HOLDERS:
                recall = Path(e.path) / "recall"
                if recall.is_dir() and not recall.is_symlink() and _holds_journals(recall):
                    result.data_dirs.append(DataDir(recall, d, d == root))
                continue
            if name == _FLAT:
                if _holds_journals(Path(e.path)):
                    result.data_dirs.append(DataDir(Path(e.path), d, d == root))
                continue
            children.append(Path(e.path))
        # Reversed onto the stack so the walk visits children in name order.
        stack.extend(sorted(children, reverse=True))
