"""Finding legacy JSONL journals on disk: the data directories synapt has used and the
bucket files in them. Filesystem only; nothing here knows the store."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Data directories synapt has used, newest first, relative to a workspace root.
DATA_DIRS = (".synapt/recall", ".synapse/recall", ".synapse-recall")
JOURNAL = "journal.jsonl"


@dataclass(frozen=True)
class Bucket:
    """One legacy journal file. `name` is synapt's bucket (the cwd basename it was written
    under): provenance, not identity. `root` is the workspace that owns its data dir, when
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


@dataclass
class Discovery:
    buckets: list[Bucket] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # Directories given (for verify: sources recorded under them whose files are gone).
    dirs: list[Path] = field(default_factory=list)


def _owner_of_data_dir(d: Path) -> Path | None:
    """The workspace root a data directory belongs to, if it sits where synapt puts one."""
    if d.name == "recall" and d.parent.name in (".synapt", ".synapse"):
        return d.parent.parent
    if d.name == ".synapse-recall":
        return d.parent
    return None


def _is_data_dir(d: Path) -> bool:
    return (d / "worktrees").is_dir() or (d / JOURNAL).is_file()


def owning_root(path: str | os.PathLike[str]) -> Path | None:
    """The workspace root that owns the legacy data at `path` (a root, a data dir, a
    bucket dir or a journal file), or None when the path does not say."""
    p = Path(path).expanduser().absolute()
    candidates = [p, *p.parents]
    for c in candidates[:5]:
        owner = _owner_of_data_dir(c)
        if owner is not None:
            return owner
    if p.is_dir() and any((p / d).is_dir() for d in DATA_DIRS):
        return p
    return None


def _bucket_for_file(f: Path) -> Bucket:
    parent = f.parent
    if parent.parent.name == "worktrees":
        return Bucket(f, parent.name, "worktrees", _owner_of_data_dir(parent.parent.parent))
    owner = _owner_of_data_dir(parent)
    if owner is not None and f.name == JOURNAL:
        return Bucket(f, owner.name, "flat", owner)
    name = parent.name if f.name == JOURNAL else f.stem
    return Bucket(f, name or f.name, "file", None)


def _buckets_in_data_dir(d: Path, problems: list[Problem]) -> list[Bucket]:
    found: list[Bucket] = []
    flat = d / JOURNAL
    if flat.is_file():
        owner = _owner_of_data_dir(d)
        found.append(Bucket(flat, owner.name if owner else d.name, "flat", owner))
    wt = d / "worktrees"
    if wt.is_dir():
        try:
            names = sorted(c.name for c in wt.iterdir())
        except OSError as exc:
            problems.append(Problem(str(wt), f"cannot list: {exc.strerror or exc}"))
            names = []
        for name in names:
            j = wt / name / JOURNAL
            if j.is_file():
                found.append(Bucket(j, name, "worktrees", _owner_of_data_dir(d)))
    return found


def discover(paths: Iterable[str | os.PathLike[str]]) -> Discovery:
    """Every legacy journal file at or under `paths`: a workspace root (its `.synapt/recall`,
    `.synapse/recall` and `.synapse-recall`), a data directory (`worktrees/*/journal.jsonl`
    and the flat `journal.jsonl`), a bucket directory, or journal files themselves. Order is
    stable (paths as given; within a data dir the flat journal, then buckets by name), and a
    file reached twice is listed once. Paths that hold no journal are reported, not raised."""
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
                out.problems.append(Problem(str(p), "does not exist"))
                continue
            if p.is_file():
                add(_bucket_for_file(p))
                continue
            if not p.is_dir():
                out.problems.append(Problem(str(p), "not a file or directory"))
                continue
            out.dirs.append(p.resolve())
            before = len(out.buckets) + len(out.problems)
            data_dirs = [p] if _is_data_dir(p) else [p / d for d in DATA_DIRS if (p / d).is_dir()]
            if (p / JOURNAL).is_file() and p.parent.name == "worktrees":
                add(_bucket_for_file(p / JOURNAL))
            else:
                for d in data_dirs:
                    for b in _buckets_in_data_dir(d, out.problems):
                        add(b)
            if len(out.buckets) + len(out.problems) == before:
                out.problems.append(
                    Problem(
                        str(p),
                        (
                            "no legacy journal here (looked for worktrees/*/journal.jsonl and "
                            "journal.jsonl in it and in its .synapt/recall, .synapse/recall and "
                            ".synapse-recall)"
                        ),
                    )
                )
        except OSError as exc:
            out.problems.append(Problem(str(p), f"unreadable: {exc.strerror or exc}"))
    return out


def file_size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0
