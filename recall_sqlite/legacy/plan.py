"""The plan survey, import and verify share: which legacy stores the workspace has (the
walk), which of them the given paths select, the key each one's bookkeeping is recorded
under, and where each one's rows go (assign.py). Filesystem only; the store hands in the
worktrees and sources it records.

A store's key is its path relative to the workspace root, or `<worktree key>:<path>` for
a store inside a linked worktree outside the root (relative to that worktree), or the
absolute path of a file that lies outside both: moving the project directory, or a
`git worktree move`, leaves every key as it was.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import synapt_layout as layout
from ..checks import path_text, require_label, require_list, require_type
from ..errors import InvalidInputError, WorkspaceError
from ..paths.resolve import resolve
from .assign import Assignment, KnownWorktree, assign
from .find import (
    NOT_FOUND,
    Bucket,
    Checkout,
    Problem,
    Walk,
    buckets_in_data_dir,
    data_dir_at,
    discover,
    walk,
)


@dataclass(frozen=True)
class PlannedStore:
    bucket: Bucket
    key: str  # the bookkeeping key (see the module docstring)
    shared: bool  # in the workspace's shared data directory
    tree: str | None  # key of the worktree whose tree holds it
    assignment: Assignment

    @property
    def path(self) -> Path:
        return self.bucket.path


@dataclass
class Plan:
    root: Path
    walk: Walk
    worktrees: list[KnownWorktree]
    main: KnownWorktree
    stores: list[PlannedStore] = field(default_factory=list)  # selected by the paths
    everything: list[PlannedStore] = field(default_factory=list)  # the whole workspace
    problems: list[Problem] = field(default_factory=list)
    whole: bool = True  # the paths name the whole workspace

    def path_of(self, key: str) -> Path:
        """The file a bookkeeping key names now."""
        return path_of(key, self.root, self.walk.checkouts)


def source_key(path: Path, root: Path, checkouts: Sequence[Checkout]) -> str:
    if path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    for c in sorted(checkouts, key=lambda c: -len(c.root.parts)):
        if c.key != "." and path.is_relative_to(c.root):
            return f"{c.key}:{path.relative_to(c.root).as_posix()}"
    return path.as_posix()


def path_of(key: str, root: Path, checkouts: Sequence[Checkout]) -> Path:
    if os.path.isabs(key):
        return Path(key)
    wt, sep, rest = key.partition(":")
    if sep and "@" in wt:
        for c in checkouts:
            if c.key == wt:
                return c.root / rest
    return root / key


def _merge_worktrees(
    recorded: Sequence[KnownWorktree], found: Walk
) -> tuple[list[KnownWorktree], KnownWorktree]:
    by_key: dict[str, KnownWorktree] = {w.key: w for w in recorded}
    for c in found.checkouts:
        w = by_key.get(c.key)
        by_key[c.key] = KnownWorktree(c.key, c.name, str(c.root), w.pk if w else None, c.admin)
    known = sorted(by_key.values(), key=lambda w: (w.key != ".", w.key))
    return known, by_key["."]


def as_paths(paths: object) -> list[str]:
    """The paths a caller of survey/import/verify gave, as strings. One str or PathLike is
    one path (not its characters); otherwise an iterable of them. Anything else (a bool,
    an int, bytes, a mapping, a path with a NUL, an empty string) raises InvalidInputError
    before anything is read or written."""
    items = require_list(
        "paths",
        paths,
        single=(str, os.PathLike),
        iterable=True,
        what="a path or an iterable of paths (str or os.PathLike; a mapping goes in mapping=)",
    )
    return [path_text("paths", item) for item in items]


def as_mapping(mapping: object) -> dict[str, str]:
    """`--map` as a library caller gives it: BUCKET (or store key) -> WORKTREE, both
    non-empty text; anything else raises InvalidInputError."""
    if mapping is None:
        return {}
    # (an abstract class as type[T]: mypy's type-abstract, wrong for an isinstance check)
    mapping = require_type(
        "mapping",
        mapping,
        Mapping,  # type: ignore[type-abstract]
        what="a mapping of bucket to worktree",
    )
    out: dict[str, str] = {}
    for k, v in mapping.items():
        try:
            out[require_label("bucket", k, stripped=False)] = require_label("worktree", v)
        except InvalidInputError:
            raise InvalidInputError(
                f"mapping {k!r}: {v!r}: expected BUCKET=WORKTREE text"
            ) from None
    return out


def resolve_root(cwd: str | os.PathLike[str] | None) -> Path:
    """The workspace the current directory (or --cwd) resolves to: the import's target."""
    return resolve(cwd, env=layout.neutral_env()).root


def make_plan(
    root: Path,
    paths: Sequence[str | os.PathLike[str]] = (),
    *,
    recorded: Sequence[KnownWorktree] = (),
    sources: Mapping[str, str] | None = None,
    mapping: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Plan:
    """Walk the workspace at `root`, select the stores `paths` name (none, or the root
    itself: every store of the workspace) and assign each. `sources` maps the key of a
    store already imported to the worktree key its rows are in. Raises InvalidInputError
    for a path that belongs to another workspace."""
    mapping = dict(mapping or {})
    sources = dict(sources or {})
    base = Path(os.path.abspath(cwd)) if cwd is not None else Path.cwd()
    given = [Path(os.path.abspath(base / os.fspath(p))) for p in paths]
    found = walk(root)
    known, main = _merge_worktrees(recorded, found)
    plan = Plan(root, found, known, main)
    for p in given:
        _refuse_foreign(p, root)
    by_key = {w.key: w for w in known}
    roots = {c.root for c in found.checkouts}

    def planned(b: Bucket, shared: bool) -> PlannedStore:
        key = source_key(b.path, root, found.checkouts)
        tree = found.tree_of(b.path)
        tree_w = by_key.get(tree.key) if tree is not None else None
        rec = by_key.get(sources[key]) if key in sources else None
        if key in sources and rec is None:
            rec = KnownWorktree(sources[key], sources[key], None, None)
        a = assign(
            b.name, known, main, mapping, tree=tree_w, shared=shared, source=key, recorded=rec
        )
        return PlannedStore(b, key, shared, tree.key if tree else None, a)

    seen: set[Path] = set()
    for d in found.data_dirs:
        for b in buckets_in_data_dir(d.path, plan.problems):
            b = Bucket(b.path, b.name, b.layout, d.owner)
            if b.path not in seen and _recordable(b.path, plan.problems):
                seen.add(b.path)
                plan.everything.append(planned(b, d.shared))
    plan.whole = not given or any(p == root for p in given)
    if plan.whole:
        plan.stores = list(plan.everything)
    chosen = {s.path for s in plan.stores}
    for p in given:
        if p != root:
            _select(plan, p, roots, chosen, planned)
    _refuse_unknown_buckets(plan, mapping)
    return plan


def _refuse_unknown_buckets(plan: Plan, mapping: Mapping[str, str]) -> None:
    """`--map B=W` names a bucket (or a store key) some store of the plan has: a typo
    would otherwise be accepted and do nothing."""
    stores = [*plan.everything, *plan.stores]
    names = {s.bucket.name for s in stores} | {s.key for s in stores}
    unknown = [f"{k}={v}" for k, v in mapping.items() if k not in names]
    if unknown:
        have = ", ".join(sorted({s.bucket.name for s in stores})) or "none"
        raise InvalidInputError(
            f"--map {unknown[0]}: no store of this workspace has that bucket (buckets: {have})"
        )


def _select(
    plan: Plan,
    p: Path,
    roots: set[Path],
    chosen: set[Path],
    planned: Callable[[Bucket, bool], PlannedStore],
) -> None:
    """Add to `plan.stores` what the given path `p` names: the stores below it (a
    directory of the workspace), else the data directory, bucket directory or journal
    file it is."""
    if not os.path.exists(p):  # False also for a path too long or with a NUL
        plan.problems.append(Problem(str(p), NOT_FOUND))
        return
    inside = any(p == r or p.is_relative_to(r) for r in roots)
    under = (
        [s for s in plan.everything if s.path.is_relative_to(p)] if inside and p.is_dir() else []
    )
    if under:
        for s in under:
            if s.path not in chosen:
                chosen.add(s.path)
                plan.stores.append(s)
        return
    named = discover([p])
    plan.problems.extend(named.problems)
    for b in named.buckets:
        if b.path in chosen or not _recordable(b.path, plan.problems):
            continue
        chosen.add(b.path)
        known_store = next((s for s in plan.everything if s.path == b.path), None)
        if known_store is not None:
            plan.stores.append(known_store)
        else:
            owner = data_dir_at(b.path.parent.parent.parent) if b.layout == "worktrees" else None
            shared = owner is not None and owner.owner == plan.root
            plan.stores.append(planned(b, shared))


def _recordable(path: Path, problems: list[Problem]) -> bool:
    """The store records a source by its path, as text: a path that is not UTF-8 (a
    directory named in another encoding) cannot be recorded, and is one problem rather
    than the end of the whole import or verify."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        problems.append(
            Problem(
                str(path),
                "its path is not valid UTF-8, so the store cannot record it: rename the"
                " directory (e.g. `mv` it to an ASCII name) and import again",
            )
        )
        return False
    return True


def _refuse_foreign(p: Path, root: Path) -> None:
    if not os.path.exists(p):  # False also for a path too long or with a NUL
        return
    try:
        w = resolve(p if p.is_dir() else p.parent, env=layout.neutral_env())
    except WorkspaceError:
        return
    if w.weak or w.root == root:
        return
    raise InvalidInputError(
        f"{p} belongs to the workspace {w.root}, not to {root} (the workspace of the "
        f"current directory): run the command there, or pass --cwd {w.root}"
    )
