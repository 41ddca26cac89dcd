"""Which worktree a legacy store's rows belong to: one rule for survey and import. No
filesystem here: the walk (walk.py) says where a store lies and which checkouts exist, the
store says which worktrees it records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import InvalidInputError


@dataclass(frozen=True)
class KnownWorktree:
    key: str
    name: str
    root: str | None
    pk: int | None  # None: a checkout found on disk, not in the database yet
    admin: str = ""  # git's administrative name of a linked worktree

    def names(self) -> tuple[str, ...]:
        return (self.name, self.admin) if self.admin and self.admin != self.name else (self.name,)


@dataclass(frozen=True)
class Assignment:
    """Where a store's rows go and why. `worktree` None: ambiguous, settled only by
    `--map` (`candidates` are the worktrees that fit)."""

    worktree: KnownWorktree | None
    # mapped | recorded | place | name | main | slice | ambiguous | new
    how: str
    why: str
    candidates: tuple[KnownWorktree, ...] = ()

    @property
    def likely_slice(self) -> bool:
        return self.how == "slice"

    @property
    def key(self) -> str:
        return self.worktree.key if self.worktree is not None else "?"


def _by_target(
    target: str, known: Sequence[KnownWorktree], main: KnownWorktree, flag: str
) -> KnownWorktree:
    if target in (".", main.key):
        return main
    keyed = [w for w in known if w.key == target]
    if keyed:
        return keyed[0]
    named = [w for w in known if target in w.names()]
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        raise InvalidInputError(
            f"--map {flag}: several worktrees are named {target!r} "
            f"({', '.join(w.key for w in named)}); give the key instead"
        )
    return KnownWorktree(target, target, None, None)


def assign(
    bucket_name: str,
    known: Sequence[KnownWorktree],
    main: KnownWorktree,
    mapping: Mapping[str, str],
    *,
    tree: KnownWorktree | None = None,
    shared: bool = True,
    source: str = "",
    recorded: KnownWorktree | None = None,
) -> Assignment:
    """The one assignment rule, used by survey and import alike:

    1. `--map` (by bucket name, or by the store's path) decides;
    2. a file already imported stays where its rows are (only `--map` moves it);
    3. a store inside worktree W's tree, other than the workspace's shared data
       directory, belongs to W whatever its bucket is named (synapt named it after the
       checkout it walked up to, and wrote it where it stood);
    4. a bucket in the shared data directory goes to the worktree whose directory name
       (or git admin name) it carries; a name that fits several is ambiguous;
    5. a name that fits none is a slice of the main worktree (synapt before 0.30 named
       buckets after the current directory)."""
    for flag_key in (source, bucket_name):
        if flag_key and flag_key in mapping:
            target = mapping[flag_key]
            w = _by_target(target, known, main, f"{flag_key}={target}")
            if w.pk is None and w.root is None and w not in known:
                return Assignment(
                    w,
                    "new",
                    f"--map {flag_key}={target}: a new worktree {target!r} (no such worktree yet)",
                )
            return Assignment(w, "mapped", f"--map {flag_key}={target}")
    if recorded is not None:
        return Assignment(recorded, "recorded", f"imported earlier into worktree {recorded.key!r}")
    if tree is not None and not shared:
        return Assignment(
            tree,
            "place",
            f"the store lies inside worktree {tree.key!r}"
            + (f" ({tree.root})" if tree.root else ""),
        )
    fits = [w for w in known if bucket_name in w.names()]
    if len(fits) == 1:
        w = fits[0]
        how = "main" if w.key == main.key else "name"
        return Assignment(
            w,
            how,
            f"bucket {bucket_name!r} is the name of worktree "
            f"{w.key!r}" + (f" ({w.root})" if w.root else ""),
        )
    if len(fits) > 1:
        names = " and ".join(f"{w.key!r} ({w.root or 'no root'})" for w in fits)
        flags = " or ".join(f"--map {bucket_name}={w.key}" for w in fits)
        return Assignment(
            None,
            "ambiguous",
            f"ambiguous: worktrees {names} are all named {bucket_name!r}"
            f" (synapt filed them in one bucket); settle it with {flags}",
            tuple(fits),
        )
    if bucket_name == main.name:
        return Assignment(main, "main", f"bucket {bucket_name!r} is the workspace's name")
    return Assignment(
        main,
        "slice",
        f"no worktree is named {bucket_name!r}: a subdirectory slice (synapt "
        "before 0.30 named buckets after the current directory); assigned to"
        " the main worktree",
    )


def parse_mapping(items: Iterable[str]) -> dict[str, str]:
    """`BUCKET=WORKTREE` strings -> a dict; raises InvalidInputError naming a bad one."""
    out: dict[str, str] = {}
    for item in items:
        bucket, sep, target = item.partition("=")
        if (
            not sep
            or not bucket
            or not target
            or target != target.strip()
            or any(ord(ch) < 0x20 for ch in item)
        ):
            raise InvalidInputError(f"--map {item!r}: expected BUCKET=WORKTREE")
        out[bucket] = target
    return out
