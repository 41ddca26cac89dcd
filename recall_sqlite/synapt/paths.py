"""synapt's journal paths <-> the store's scopes, from the filesystem alone.

synapt names a journal by a path, `<data root>/.synapt/recall/worktrees/<bucket>/journal.jsonl`,
where the data root depends on the directory synapt was started from. Here a path only
selects a scope: the workspace it lies in and the worktree its bucket names. The canonical
bucket of a worktree lies in the workspace's own data directory (never a nested one) and is
named as synapt names it when run at the worktree's root."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..workspace import Workspace, linked_worktrees, resolve

JOURNAL = "journal.jsonl"
# Data directory names synapt has used, as (parent, name) pairs.
_DATA_DIRS = ((".synapt", "recall"), (".synapse", "recall"))


@dataclass(frozen=True)
class Target:
    """Where one synapt call is answered: the directory to open the store from (its
    workspace and worktree are those of that directory) and the canonical bucket file."""

    directory: Path
    journal: Path


def bucket_name(w: Workspace) -> str:
    """synapt's bucket for this worktree: the checkout's basename, or the explicit label."""
    return w.worktree_name or w.worktree_root.name


def canonical_journal(w: Workspace) -> Path:
    return w.root / ".synapt" / "recall" / "worktrees" / bucket_name(w) / JOURNAL


def worktree_bucket(root: Path, key: str) -> str:
    """The bucket name of a worktree key of the workspace at `root`."""
    return root.name if key == "." else PurePosixPath(key).name


def target_of_dir(directory: str | os.PathLike[str] | None) -> tuple[Target, Workspace]:
    w = resolve(directory)
    start = Path(directory).absolute() if directory is not None else Path.cwd()
    return Target(start, canonical_journal(w)), w


def split_bucket_path(path: Path) -> tuple[Path, str] | None:
    """(the directory that holds the data dir, bucket name) for a path laid out as synapt
    lays out journals; None for any other file (a file the caller named on purpose)."""
    p = path.absolute()
    parts = p.parts
    if p.name != JOURNAL or len(parts) < 4:
        return None
    if p.parent.parent.name == "worktrees":
        data = p.parent.parent.parent
        bucket = p.parent.name
    else:
        data, bucket = p.parent, ""
    if (data.parent.name, data.name) in _DATA_DIRS:
        owner = data.parent.parent
    elif data.name == ".synapse-recall":
        owner = data.parent
    else:
        return None
    return owner, bucket or owner.name


def target_of_path(path: str | os.PathLike[str]) -> Target | None:
    """The scope a synapt journal path names; None when the path is not laid out as a
    synapt journal (the caller then uses the file as synapt would)."""
    split = split_bucket_path(Path(path))
    if split is None:
        return None
    owner, bucket = split
    label = os.environ.get("SYNAPT_RECALL_WORKTREE", "")
    w = resolve(owner)
    if label and bucket == label:
        return Target(owner, canonical_journal(w))
    candidates = [w.worktree_root, w.root, w.root / bucket, *linked_worktrees(w.root)]
    for c in candidates:
        if c.name == bucket and c.is_dir():
            cw = resolve(c)
            if cw.root == w.root:
                return Target(c, canonical_journal(cw))
    # A bucket named after a plain subdirectory was a slice of the checkout it lies in
    # (the import assigns it the same way).
    return Target(w.worktree_root, canonical_journal(w))
