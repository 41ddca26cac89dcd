"""Finding a workspace's synapt journals on disk: the walk of every data directory and every
checkout (worktree), and the journal files of a path given by hand. Filesystem only, no
subprocess; which directories are synapt data directories and which files are its
buckets is synapt_layout.py's rule.

synapt 0.30.0 resolves its data root to the current directory in a plain git repository
(unless that directory holds `.git`), so a workspace's history lies in `.synapt/recall`
directories at any depth below the root and below every linked worktree. The walk finds
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
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import synapt_layout as layout
from ..errors import WorkspaceError
from ..paths.git import linked_admin, linked_worktrees
from ..paths.resolve import resolve, worktree_key

# What a path given by hand may be reported as (legacy/admit.py refuses these).
NOT_FOUND = "does not exist"
NOT_A_FILE = "not a file or directory"
NO_JOURNAL = "no legacy journal here"


@dataclass(frozen=True)
class Bucket:
    """One journal file. `name` is synapt's bucket (the name it was written under):
    provenance, not identity. `root` is the data root its data directory belongs to, when
    the layout tells."""

    path: Path
    name: str
    layout: str  # 'worktrees' | 'flat' | 'file'
    root: Path | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "bucket": self.name,
            "layout": self.layout,
            "root": str(self.root) if self.root else None,
        }


@dataclass(frozen=True)
class Problem:
    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


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


@dataclass
class Discovery:
    buckets: list[Bucket] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # Directories given (for verify: sources recorded under them whose files are gone).
    dirs: list[Path] = field(default_factory=list)


def file_size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


# -- the walk ---------------------------------------------------------------------------------


def walk(root: Path, *, extra: tuple[Path, ...] = ()) -> Walk:
    """Every checkout and data directory of the workspace at `root`: the root's tree,
    each linked worktree's tree (found through git's metadata of every main checkout in
    the workspace) and `extra` trees (given paths outside both)."""
    env = layout.neutral_env()
    root = Path(os.path.abspath(root))
    result = Walk(root)
    result.checkouts.append(Checkout(".", root.name, root))
    seen_keys = {"."}
    pending = [root, *extra]
    walked: set[Path] = set()
    mains = [root] if (root / ".git").is_dir() else []
    while pending or mains:
        while mains:
            for wt in map(Path, linked_worktrees(mains.pop())):
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
        w = resolve(d, env=env)
    except WorkspaceError:
        return None
    if w.root != root.resolve() and w.root != root:
        return None
    key = worktree_key(d, root)
    admin = linked_admin(d)
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
                if not e.is_dir(follow_symlinks=False):
                    if e.is_symlink():
                        result.symlinks += 1
                    continue
            except OSError:
                continue
            if e.name == ".git":
                continue
            if e.name in layout.HOLDERS or e.name == layout.FLAT:
                # A data directory is not entered (nothing synapt writes nests there).
                data = _data_dir_below(Path(e.path))
                if data is not None and layout.holds_journals(data):
                    result.data_dirs.append(DataDir(data, d, d == root))
                continue
            children.append(Path(e.path))
        # Reversed onto the stack so the walk visits children in name order.
        stack.extend(sorted(children, reverse=True))


def _data_dir_below(d: Path) -> Path | None:
    """The data directory of a directory named as synapt names its holders
    (`.synapt/recall`, `.synapse/recall`, or `.synapse-recall` itself); None when there is
    none synapt would use (no `recall`, or one that is a symlink)."""
    if d.name in layout.HOLDERS:
        recall = d / layout.RECALL
        return recall if recall.is_dir() and not recall.is_symlink() else None
    return d if d.name == layout.FLAT else None


def data_dir_at(d: Path) -> DataDir | None:
    """The data directory `d` is, judged by its place (`X/.synapt/recall`, ...)."""
    owner = layout.owner_of_data_dir(d)
    return DataDir(d, owner, False) if owner is not None else None


# -- journals of a data directory, or of a path given by hand ---------------------------------


def buckets_in_data_dir(d: Path, problems: list[Problem]) -> list[Bucket]:
    """The journals of data directory `d` (the flat one first, then buckets by name)."""
    owner = layout.owner_of_data_dir(d)
    try:
        return [Bucket(f, name, kind, owner) for f, name, kind in layout.journals_in(d)]
    except OSError as exc:
        problems.append(Problem(str(d / layout.WORKTREES), f"cannot list: {exc.strerror or exc}"))
        flat = d / layout.JOURNAL
        return (
            [Bucket(flat, owner.name if owner else d.name, "flat", owner)] if flat.is_file() else []
        )


def _bucket_for_file(f: Path) -> Bucket:
    split = layout.split_bucket_path(f)
    if split is not None:
        owner, name, kind = split
        return Bucket(f, name, kind, owner)
    name = f.parent.name if f.name == layout.JOURNAL else f.stem
    return Bucket(f, name or f.name, "file", None)


def owning_root(path: str | os.PathLike[str]) -> Path | None:
    """The data root that owns the legacy data at `path` (a root, a data dir, a bucket dir
    or a journal file), or None when the path does not say."""
    p = Path(path).expanduser().absolute()
    for c in [p, *p.parents][:5]:
        owner = layout.owner_of_data_dir(c)
        if owner is not None:
            return owner
    if p.is_dir() and any((p / d).is_dir() for d in layout.DATA_DIRS):
        return p
    return None


def discover(paths: Iterable[str | os.PathLike[str]]) -> Discovery:
    """Every journal file at or under `paths`: a data root (its `.synapt/recall`,
    `.synapse/recall` and `.synapse-recall`), a data directory, a bucket directory, or
    journal files themselves. Order is stable (paths as given; within a data dir the flat
    journal, then buckets by name), and a file reached twice is listed once. Paths that
    hold no journal are reported, not raised."""
    out = Discovery()
    seen: set[tuple[int, int]] = set()

    def add(b: Bucket) -> None:
        try:
            st = b.path.stat()
        except OSError as exc:
            out.problems.append(Problem(str(b.path), f"unreadable: {exc.strerror or exc}"))
            return
        key = (st.st_dev, st.st_ino)
        if key not in seen:
            seen.add(key)
            out.buckets.append(Bucket(b.path.resolve(), b.name, b.layout, b.root))

    for raw in paths:
        p = Path(raw).expanduser().absolute()
        try:
            if not p.exists():
                out.problems.append(Problem(str(p), NOT_FOUND))
                continue
            if p.is_file():
                add(_bucket_for_file(p))
                continue
            if not p.is_dir():
                out.problems.append(Problem(str(p), NOT_A_FILE))
                continue
            out.dirs.append(p.resolve())
            before = len(out.buckets) + len(out.problems)
            if (p / layout.JOURNAL).is_file() and p.parent.name == layout.WORKTREES:
                add(_bucket_for_file(p / layout.JOURNAL))
            else:
                data_dirs = (
                    [p]
                    if layout.holds_journals(p)
                    else [p / d for d in layout.DATA_DIRS if (p / d).is_dir()]
                )
                for d in data_dirs:
                    for b in buckets_in_data_dir(d, out.problems):
                        add(b)
            if len(out.buckets) + len(out.problems) == before:
                out.problems.append(
                    Problem(
                        str(p),
                        f"{NO_JOURNAL} (looked for worktrees/*/journal.jsonl and "
                        "journal.jsonl in it and in its .synapt/recall, .synapse/recall and "
                        ".synapse-recall)",
                    )
                )
        except OSError as exc:
            out.problems.append(Problem(str(p), f"unreadable: {exc.strerror or exc}"))
    return out
