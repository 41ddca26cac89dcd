"""Which worktree a legacy bucket's rows belong to, and the checkouts a workspace has on
disk. Filesystem only; the store passes in the worktrees it already records."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import workspace as ws
from ..errors import InvalidInputError, WorkspaceError

# A bounded look for checkouts under the root (worktrees the database may not know yet).
_SCAN_DEPTH = 3
_SCAN_DIRS = 2000
_SCAN_SKIP = frozenset({"node_modules", "__pycache__", "venv", "target", "dist", "build"})


@dataclass(frozen=True)
class KnownWorktree:
    key: str
    name: str
    root: str | None
    pk: int | None              # None: a checkout found on disk, not in the database yet


def _identity_env() -> dict[str, str]:
    # The keys a checkout gets when someone works in it with no overrides set, which is
    # what open_store would record there.
    drop = ("SYNAPT_RECALL_ROOT", "GRIPSPACE_ROOT", "SYNAPT_RECALL_WORKTREE")
    return {k: v for k, v in os.environ.items() if k not in drop}


def checkouts_on_disk(root: Path) -> list[KnownWorktree]:
    """Checkouts below `root` (a bounded, shallow walk), keyed as the store keys them."""
    found: list[KnownWorktree] = []
    env = _identity_env()
    frontier, visited = [(root, 0)], 0
    while frontier and visited < _SCAN_DIRS:
        d, depth = frontier.pop(0)
        visited += 1
        try:
            children = sorted(c for c in d.iterdir()
                              if c.is_dir() and not c.is_symlink() and not c.name.startswith(".")
                              and c.name not in _SCAN_SKIP)
        except OSError:
            continue
        for c in children:
            if ((c / ".git").exists() or (c / ".grip").is_dir()
                    or (c / ".gitgrip" / "griptree.json").is_file()):
                try:
                    w = ws.resolve(c, root=root, env=env)
                except WorkspaceError:
                    continue
                if w.root == root and w.worktree != ".":
                    found.append(KnownWorktree(w.worktree, w.worktree_name,
                                               str(w.worktree_root), None))
            if depth + 1 < _SCAN_DEPTH:
                frontier.append((c, depth + 1))
    return found


@dataclass(frozen=True)
class Assignment:
    worktree: KnownWorktree
    how: str                    # 'mapped' | 'name' | 'main' | 'ambiguous' | 'recorded' | 'new'
    likely_slice: bool
    note: str = ""


def assign(bucket_name: str, known: Sequence[KnownWorktree], main: KnownWorktree,
           mapping: Mapping[str, str]) -> Assignment:
    """Which worktree a bucket's rows belong to: `--map` first, then a worktree of the same
    name, else the main worktree (a bucket named after no worktree is a cwd slice)."""
    by_name = [w for w in known if w.name == bucket_name]
    if bucket_name in mapping:
        target = mapping[bucket_name]
        if target in (".", main.key):
            return Assignment(main, "mapped", False)
        keyed = [w for w in known if w.key == target]
        named = [w for w in known if w.name == target]
        if keyed:
            return Assignment(keyed[0], "mapped", False)
        if len(named) == 1:
            return Assignment(named[0], "mapped", False)
        if len(named) > 1:
            raise InvalidInputError(
                f"--map {bucket_name}={target}: several worktrees are named {target!r} "
                f"({', '.join(w.key for w in named)}); give the key instead")
        return Assignment(KnownWorktree(target, target, None, None), "new", False,
                          f"new worktree {target!r} (no such worktree yet)")
    if len(by_name) == 1:
        how = "main" if by_name[0].key == main.key else "name"
        return Assignment(by_name[0], how, False)
    if len(by_name) > 1:
        keys = ", ".join(w.key for w in by_name)
        return Assignment(main, "ambiguous", False,
                          f"several worktrees are named {bucket_name!r} ({keys}): "
                          f"assigned to the main worktree; use --map {bucket_name}=KEY")
    if bucket_name == main.name:
        return Assignment(main, "main", False)
    return Assignment(main, "main", True,
                      f"no worktree is named {bucket_name!r}: likely a subdirectory slice "
                      "(synapt named buckets after the cwd); assigned to the main worktree")


def parse_mapping(items: Iterable[str]) -> dict[str, str]:
    """`BUCKET=WORKTREE` strings -> a dict; raises InvalidInputError naming a bad one."""
    out: dict[str, str] = {}
    for item in items:
        bucket, sep, target = item.partition("=")
        if not sep or not bucket or not target or target != target.strip() \
                or any(ord(ch) < 0x20 for ch in item):
            raise InvalidInputError(f"--map {item!r}: expected BUCKET=WORKTREE")
        out[bucket] = target
    return out
