"""synapt's journal paths <-> the store's scopes, from the filesystem alone.

synapt names a journal by a path whose place depends on the directory synapt started in
(synapt_layout.py knows where). Here a path only selects a scope: the workspace it lies in
and the worktree its bucket names. The **mirror** of a worktree is the bucket stock synapt
reads from that worktree's root (its own environment, none of the adapter's overrides):
switching back to stock synapt there finds what the adapter wrote."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from .. import synapt_layout as layout
from ..paths.git import linked_worktrees
from ..paths.resolve import Workspace, resolve

_LABEL = "SYNAPT_RECALL_WORKTREE"


@dataclass(frozen=True)
class Target:
    """Where one synapt call is answered: the directory to open the store from (its
    workspace and worktree are those of that directory) and that worktree's mirror."""

    directory: Path
    # `directory` resolved, when it was (an MCP call resolves once, not twice: store_for)
    workspace: Workspace | None = None
    mirror: Path | None = None

    @cached_property
    def journal(self) -> Path:
        """The mirror, found when first asked: a read never needs it, and finding it is
        most of a read's own time (it walks synapt's layout rules)."""
        if self.mirror is not None:
            return self.mirror
        assert self.workspace is not None, "a Target knows its mirror or its workspace"
        return mirror_for(self.workspace)


def mirror_of(worktree_root: Path, label: str = "") -> Path:
    """The bucket stock synapt 0.30.0 reads and appends to when started at `worktree_root`
    (with SYNAPT_RECALL_WORKTREE=`label` when the worktree is known by a label)."""
    env = layout.neutral_env()
    if label:
        env[_LABEL] = label
    return layout.journal_for(worktree_root, env)


def mirror_for(w: Workspace) -> Path:
    """The mirror of the worktree `w` resolved to."""
    label = os.environ.get(_LABEL, "")
    return mirror_of(w.worktree_root, label if label == w.worktree else "")


def target_of_dir(directory: str | os.PathLike[str] | None) -> tuple[Target, Workspace]:
    w = resolve(directory)
    start = Path(directory).absolute() if directory is not None else Path.cwd()
    return Target(start, w), w


def target_of_path(path: str | os.PathLike[str]) -> Target | None:
    """The scope a synapt journal path names; None when the path is not laid out as a
    synapt journal (the caller then uses the file as synapt would)."""
    split = layout.split_bucket_path(Path(path))
    if split is None:
        return None
    owner, bucket, _ = split
    label = os.environ.get(_LABEL, "")
    w = resolve(owner)
    if label and bucket == label:
        return Target(owner, w)
    candidates = [w.worktree_root, w.root, w.root / bucket, *map(Path, linked_worktrees(w.root))]
    for c in candidates:
        if c.name == bucket and c.is_dir():
            cw = resolve(c)
            if cw.root == w.root:
                return Target(c, cw)
    # A bucket named after a plain subdirectory was a slice of the checkout it lies in
    # (the import assigns it the same way).
    return Target(w.worktree_root, mirror=mirror_for(w))
