"""Legacy JSONL buckets: discover them, survey them (writing nothing), import them with every
line accounted for, and verify an import against the files as they are now.

synapt 0.30.0 kept one journal per cwd basename under `<root>/.synapt/recall/worktrees/<name>/`
(older releases: a flat `journal.jsonl`, `.synapse/recall/`, `.synapse-recall/`), so one
workspace's history is spread over buckets that overlap. Import is therefore a dedupe: an
entry's content address collapses the copies, distinct versions of a session are all kept
(reads pick the richest), and each line's fate (imported, duplicate, quarantined) is recorded.

Crash safety: a source file is imported in chunks; each chunk's rows, provenance, quarantine
and the source's progress (bytes, lines, fingerprint of the prefix read) commit in one
transaction, so a killed import resumes exactly after its last commit and ends with the same
rows, in the same order, as an uninterrupted one. Source files are only ever opened for reading.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import workspace as ws
from .context import StoreContext
from .db import now_us, utc_now_iso
from .errors import InvalidInputError, RecallError, StoreError, WorkspaceError
from .journal_bulk import bulk_insert
from .legacy_read import (
    MAX_LINE_BYTES,
    ROW_LAYOUT,
    TOO_LONG,
    Bad,
    LineReader,
    Parsed,
    classify,
    inspect,
    too_long,
)
from .timestamps import iso_utc

__all__ = [
    "Bucket", "Discovery", "ImportReport", "KnownWorktree", "Legacy", "SurveyReport",
    "VerifyReport", "discover", "owning_root", "parse_mapping", "survey",
]

# Data directories synapt has used, newest first, relative to a workspace root.
DATA_DIRS = (".synapt/recall", ".synapse/recall", ".synapse-recall")
JOURNAL = "journal.jsonl"
# Lines per committed chunk: big enough that commits cost little, small enough that a kill
# loses seconds of work and a chunk's pending rows stay a few MiB.
CHUNK_LINES = 5000
# Quarantined raw bytes kept in the database per line (the source keeps the rest).
RAW_KEEP = 256 * 1024 * 1024
# The in-run cache of raw lines already resolved (16-byte digest -> entry seq): it spares
# re-parsing the copies of a line that buckets share. Bounded so memory stays flat.
_RAW_CACHE_MAX = 1_000_000
_SURVEY_CACHE_MAX = 100_000
_FAR_FUTURE = 1 << 62
_M64 = (1 << 64) - 1
_DIFFERS = 1 << 64
# A bounded look for checkouts under the root (worktrees the database may not know yet).
_SCAN_DEPTH = 3
_SCAN_DIRS = 2000
_SCAN_SKIP = frozenset({"node_modules", "__pycache__", "venv", "target", "dist", "build"})

Progress = Callable[[int, int], None]


class ImportConflict(StoreError):
    """Another process imported the same source file at the same time."""


# -- discovery ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Bucket:
    """One legacy journal file. `name` is synapt's bucket (the cwd basename it was written
    under): provenance, not identity. `root` is the workspace that owns its data dir, when
    the layout tells."""

    path: Path
    name: str
    layout: str                 # 'worktrees' | 'flat' | 'file'
    root: Path | None

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "bucket": self.name, "layout": self.layout,
                "root": str(self.root) if self.root else None}


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
            data_dirs = [p] if _is_data_dir(p) else [p / d for d in DATA_DIRS
                                                     if (p / d).is_dir()]
            if (p / JOURNAL).is_file() and p.parent.name == "worktrees":
                add(_bucket_for_file(p / JOURNAL))
            else:
                for d in data_dirs:
                    for b in _buckets_in_data_dir(d, out.problems):
                        add(b)
            if len(out.buckets) + len(out.problems) == before:
                out.problems.append(Problem(str(p), (
                    "no legacy journal here (looked for worktrees/*/journal.jsonl and "
                    "journal.jsonl in it and in its .synapt/recall, .synapse/recall and "
                    ".synapse-recall)")))
        except OSError as exc:
            out.problems.append(Problem(str(p), f"unreadable: {exc.strerror or exc}"))
    return out


# -- worktrees ---------------------------------------------------------------------------


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


# -- survey ------------------------------------------------------------------------------


@dataclass
class BucketSurvey:
    bucket: Bucket
    size: int = 0
    lines: int = 0
    valid: int = 0
    malformed: Counter[str] = field(default_factory=Counter)
    sessions: int = 0
    first_us: int | None = None
    last_us: int | None = None
    branches: Counter[str] = field(default_factory=Counter)
    auto: int = 0
    enriched: int = 0
    duplicates: int = 0         # lines whose content an earlier line (any bucket) already had
    no_session: int = 0
    worktree: str | None = None
    assigned_by: str = ""
    likely_slice: bool = False
    note: str = ""
    import_state: str = ""
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.bucket.to_dict(), "size": self.size, "lines": self.lines,
            "valid": self.valid, "malformed": dict(sorted(self.malformed.items())),
            "quarantined": sum(self.malformed.values()), "duplicates": self.duplicates,
            "sessions": self.sessions, "entries_without_session": self.no_session,
            "first": iso_utc(self.first_us) if self.first_us is not None else None,
            "last": iso_utc(self.last_us) if self.last_us is not None else None,
            "branches": dict(self.branches.most_common()), "auto": self.auto,
            "enriched": self.enriched, "worktree": self.worktree,
            "assigned_by": self.assigned_by, "likely_slice": self.likely_slice,
            "note": self.note, "import_state": self.import_state, "error": self.error,
        }


@dataclass
class SurveyReport:
    buckets: list[BucketSurvey]
    problems: list[Problem]
    lines_total: int
    valid: int
    quarantined: int
    duplicates: int
    rows_to_create: int
    sessions: int
    sessions_in_several_buckets: int
    sessions_with_differing_versions: int
    root: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root, "lines_total": self.lines_total, "valid": self.valid,
            # `imported`: lines an import into an empty store would turn into new rows.
            "imported": self.rows_to_create, "duplicates": self.duplicates,
            "quarantined": self.quarantined, "rows_to_create": self.rows_to_create,
            "sessions": self.sessions,
            "sessions_in_several_buckets": self.sessions_in_several_buckets,
            "sessions_with_differing_versions": self.sessions_with_differing_versions,
            "likely_slices": [b.bucket.name for b in self.buckets if b.likely_slice],
            "buckets": [b.to_dict() for b in self.buckets],
            "problems": [p.to_dict() for p in self.problems],
        }


def survey(paths: Iterable[str | os.PathLike[str]], *, known: Sequence[KnownWorktree] = (),
           main: KnownWorktree | None = None, mapping: Mapping[str, str] | None = None,
           states: Mapping[str, str] | None = None, progress: Progress | None = None,
           max_line: int = MAX_LINE_BYTES) -> SurveyReport:
    """Characterise legacy buckets without writing anything anywhere. `known`/`main` are the
    workspace's worktrees (default: checkouts found on disk under the owning root), used to
    say where each bucket would go and which look like subdirectory slices; `states` maps a
    path to its import state when a store was consulted."""
    found = discover(paths)
    roots = {b.root for b in found.buckets if b.root is not None}
    root = next(iter(roots)) if len(roots) == 1 else None
    if main is None:
        base = root
        main = KnownWorktree(".", base.name if base else "", str(base) if base else None, None)
        if not known and base is not None:
            known = [main, *checkouts_on_disk(base)]
    total = sum(_size(b.path) for b in found.buckets)
    done = 0
    contents: set[int] = set()
    # Lines already inspected, by a 64-bit hash of their stripped bytes: copies of a line in
    # several buckets are the survey's commonest case, and inspecting one is the cost of a
    # parse. Bounded (cleared when full) so memory stays flat on any input.
    inspected: dict[int, Any] = {}
    # hash of a session id -> one int: the bitmask of buckets it appears in (bits 65 and
    # up), whether two different versions were seen (bit 64) and its first content key
    # (bits 0-63). Ints, not tuples of strings: this table has an entry per session, and
    # its size is what costs at a million lines. (Hashed ids: a collision, odds ~1e-8 per
    # million sessions, would merge two sessions in these counts only.)
    sessions: dict[int, int] = {}
    results: list[BucketSurvey] = []
    for index, b in enumerate(found.buckets):
        s = BucketSurvey(b)
        a = assign(b.name, known, main, mapping or {})
        s.worktree, s.assigned_by, s.likely_slice, s.note = (
            a.worktree.key, a.how, a.likely_slice, a.note)
        if states is not None:
            s.import_state = states.get(str(b.path), "not imported")
        results.append(s)
        bucket_bit = 1 << (index + 65)
        try:
            fh = open(b.path, "rb")  # noqa: SIM115 - closed below, errors reported per file
        except OSError as exc:
            s.error = f"unreadable: {exc.strerror or exc}"
            found.problems.append(Problem(str(b.path), s.error))
            continue
        with fh:
            reader = LineReader(fh, max_line=max_line)
            # Locals: this loop runs once per line of every bucket.
            branches = s.branches
            lines = valid = dups = no_sid = n_auto = n_enriched = 0
            first, last = _FAR_FUTURE, -_FAR_FUTURE
            malformed = s.malformed
            try:
                for batch, big, terminated in reader.batches():
                    lines += len(batch)
                    if big:
                        # too long to inspect; their lengths are in `big`
                        malformed[TOO_LONG] += len(big)
                    for data in batch:
                        if data is None:
                            continue
                        stripped = data.strip()
                        h = hash(stripped)
                        seen: Any = inspected.get(h)
                        if seen is None:
                            seen = inspect(data, terminated, stripped)
                            if type(seen) is Bad:
                                malformed[seen.reason] += 1
                                continue
                            if len(inspected) >= _SURVEY_CACHE_MAX:
                                inspected.clear()
                            inspected[h] = seen
                        key, sid, branch, ts_us, auto, enriched = seen
                        valid += 1
                        before = len(contents)
                        contents.add(key)
                        if len(contents) == before:
                            dups += 1
                        if sid:
                            sk = hash(sid)
                            prev = sessions.get(sk)
                            if prev is None:
                                sessions[sk] = bucket_bit | (key & _M64)
                            elif not prev & bucket_bit or prev & _M64 != key & _M64:
                                sessions[sk] = prev | bucket_bit | (
                                    0 if prev & _M64 == key & _M64 else _DIFFERS)
                        else:
                            no_sid += 1
                        if ts_us < first:
                            first = ts_us
                        if ts_us > last:
                            last = ts_us
                        branches[branch] = branches.get(branch, 0) + 1
                        n_auto += auto
                        n_enriched += enriched
                    if progress is not None:
                        progress(done + reader.end, total)
            except OSError as exc:
                s.error = f"read failed after line {lines}: {exc.strerror or exc}"
                found.problems.append(Problem(str(b.path), s.error))
            s.lines, s.valid, s.duplicates, s.no_session = lines, valid, dups, no_sid
            s.auto, s.enriched = n_auto, n_enriched
            if valid:
                s.first_us, s.last_us = first, last
            s.size = reader.end
        done += s.size
        if progress is not None:
            progress(done, total)
    # Per-bucket session counts from the masks: no per-bucket sets of ids in memory.
    per_bucket = [0] * len(results)
    for value in sessions.values():
        mask = value >> 65
        while mask:
            low = mask & -mask
            per_bucket[low.bit_length() - 1] += 1
            mask ^= low
    for s, n in zip(results, per_bucket, strict=True):
        s.sessions = n
    several = sum(1 for v in sessions.values() if (v >> 65) & ((v >> 65) - 1))
    differing = sum(1 for v in sessions.values() if v & _DIFFERS)
    lines = sum(s.lines for s in results)
    valid = sum(s.valid for s in results)
    return SurveyReport(
        buckets=results, problems=found.problems, lines_total=lines, valid=valid,
        quarantined=lines - valid, duplicates=sum(s.duplicates for s in results),
        rows_to_create=len(contents), sessions=len(sessions),
        sessions_in_several_buckets=several, sessions_with_differing_versions=differing,
        root=str(root) if root else None,
    )


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


# -- import ------------------------------------------------------------------------------


@dataclass
class SourceResult:
    path: str
    bucket: str
    worktree: str
    action: str                 # new | resumed | appended | unchanged | changed | failed
    lines: int = 0              # read this run
    imported: int = 0
    duplicates: int = 0
    quarantined: int = 0
    total_lines: int = 0        # accounted for in this file altogether
    assigned_by: str = ""
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ImportReport:
    run_id: int
    sources: list[SourceResult]
    problems: list[Problem]
    workspace_id: str
    database: str

    def _sum(self, name: str) -> int:
        return sum(int(getattr(s, name)) for s in self.sources)

    @property
    def ok(self) -> bool:
        return not self.problems and all(s.action != "failed" for s in self.sources)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "run_id": self.run_id, "workspace_id": self.workspace_id,
            "database": self.database, "lines_total": self._sum("lines"),
            "imported": self._sum("imported"),
            "duplicates": self._sum("duplicates"), "quarantined": self._sum("quarantined"),
            "unchanged_files": sum(1 for s in self.sources if s.action == "unchanged"),
            "accounted_lines": self._sum("total_lines"),
            "sources": [s.to_dict() for s in self.sources],
            "problems": [p.to_dict() for p in self.problems],
        }


@dataclass
class _Source:
    """The current version row of a source file."""

    id: int
    version: int
    worktree_id: int
    size: int
    sha256: str
    mtime_ns: int
    lines: int
    tail_open: bool
    complete: bool


_SOURCE_COLS = "id, version, worktree_id, size, sha256, mtime_ns, lines, tail_open, complete"
_EMPTY_SHA = hashlib.sha256().hexdigest()


def _hash_prefix(fh: Any, size: int) -> Any:
    h = hashlib.sha256()
    left = size
    while left:
        block = fh.read(min(left, 1 << 20))
        if not block:
            break
        h.update(block)
        left -= len(block)
    return h


class Legacy:
    """Legacy buckets of the store's workspace (`store.legacy`)."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    # -- worktrees of this workspace --------------------------------------------------------

    def _root(self) -> Path | None:
        rows = self._ctx.db.query(
            "SELECT root FROM workspace_roots WHERE workspace_id = ? ORDER BY last_seen DESC",
            (self._ctx.workspace_pk,))
        for (r,) in rows:
            if Path(r).is_dir():
                return Path(r)
        return Path(rows[0][0]) if rows else None

    def worktrees(self) -> tuple[list[KnownWorktree], KnownWorktree]:
        """(the workspace's worktrees: recorded ones, then checkouts found on disk; main)."""
        rows = self._ctx.db.query(
            "SELECT id, key, name, root FROM worktrees WHERE workspace_id = ? ORDER BY key",
            (self._ctx.workspace_pk,))
        known = [KnownWorktree(str(k), str(n), r, int(pk)) for pk, k, n, r in rows]
        root = self._root()
        main = next((w for w in known if w.key == "."), None)
        if main is None:
            name = root.name if root else "."
            main = KnownWorktree(".", name, str(root) if root else None, None)
            known.insert(0, main)
        if root is not None:
            keys = {w.key for w in known}
            known += [w for w in checkouts_on_disk(root) if w.key not in keys]
        return known, main

    def _worktree_pk(self, conn: Any, w: KnownWorktree) -> int:
        if w.pk is not None:
            return w.pk
        now = utc_now_iso()
        conn.execute(
            "INSERT INTO worktrees (workspace_id, key, name, root, first_seen, last_seen)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, key) DO NOTHING",
            (self._ctx.workspace_pk, w.key, w.name, w.root, now, now))
        return int(conn.execute(
            "SELECT id FROM worktrees WHERE workspace_id = ? AND key = ?",
            (self._ctx.workspace_pk, w.key)).fetchall()[0][0])

    def _current(self, conn: Any, path: str) -> _Source | None:
        rows = conn.execute(
            f"SELECT {_SOURCE_COLS} FROM import_sources WHERE workspace_id = ? AND path = ?"
            " AND superseded = 0", (self._ctx.workspace_pk, path)).fetchall()
        if not rows:
            return None
        r = rows[0]
        return _Source(int(r[0]), int(r[1]), int(r[2]), int(r[3]), str(r[4]), int(r[5]),
                       int(r[6]), bool(r[7]), bool(r[8]))

    def states(self) -> dict[str, str]:
        """path -> a short import state from size and mtime (no reading)."""
        out: dict[str, str] = {}
        for path, size, mtime, complete in self._ctx.db.query(
                "SELECT path, size, mtime_ns, complete FROM import_sources"
                " WHERE workspace_id = ? AND superseded = 0", (self._ctx.workspace_pk,)):
            try:
                st = os.stat(path)
            except OSError:
                out[path] = "imported; file gone"
                continue
            if complete and st.st_size == size and st.st_mtime_ns == mtime:
                out[path] = "imported"
            elif st.st_size > size:
                out[path] = "partly imported (file has more)"
            else:
                out[path] = "imported; file changed since"
        return out

    # -- survey ----------------------------------------------------------------------------

    def survey(self, paths: Iterable[str | os.PathLike[str]], *,
               mapping: Mapping[str, str] | None = None,
               progress: Progress | None = None) -> SurveyReport:
        """`survey()` with this workspace's worktrees and import states (reads only)."""
        known, main = self.worktrees()
        return survey(paths, known=known, main=main, mapping=mapping, states=self.states(),
                      progress=progress)

    # -- import ----------------------------------------------------------------------------

    def import_paths(self, paths: Iterable[str | os.PathLike[str]], *,
                     mapping: Mapping[str, str] | None = None,
                     progress: Progress | None = None, chunk_lines: int = CHUNK_LINES,
                     max_line: int = MAX_LINE_BYTES) -> ImportReport:
        """Import every legacy journal at `paths` into this workspace. Idempotent; safe to
        kill at any point and re-run; never writes to the source files."""
        given = [os.fspath(p) for p in paths]
        mapping = dict(mapping or {})
        found = discover(given)
        known, main = self.worktrees()
        assignments = {b.path: assign(b.name, known, main, mapping) for b in found.buckets}
        run_id = self._start_run(given)
        total = sum(_size(b.path) for b in found.buckets)
        state = _RunState(run_id=run_id, total=total, progress=progress)
        results: list[SourceResult] = []
        status = "failed"
        try:
            for b in found.buckets:
                results.append(self._import_source(b, assignments[b.path], state,
                                                   chunk_lines, max_line))
            status = "done"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            self._finish_run(run_id, status)
        for r in results:
            if r.action == "failed":
                found.problems.append(Problem(r.path, r.note))
        return ImportReport(run_id, results, found.problems, self._ctx.workspace_uuid,
                            str(self._ctx.db.path))

    def _start_run(self, paths: list[str]) -> int:
        host = socket.gethostname()
        with self._ctx.db.write() as conn:
            for rid, rhost, pid in conn.execute(
                    "SELECT id, host, pid FROM import_runs WHERE workspace_id = ?"
                    " AND status = 'running'", (self._ctx.workspace_pk,)).fetchall():
                if rhost == host and not _alive(_int(pid)):
                    conn.execute("UPDATE import_runs SET status = 'interrupted' WHERE id = ?",
                                 (rid,))
            rows = conn.execute(
                "INSERT INTO import_runs (workspace_id, started_at, host, pid, paths)"
                " VALUES (?, ?, ?, ?, ?) RETURNING id",
                (self._ctx.workspace_pk, utc_now_iso(), host, os.getpid(),
                 json.dumps(paths, ensure_ascii=False))).fetchall()
        return _int(rows[0][0])

    def _finish_run(self, run_id: int, status: str) -> None:
        with contextlib.suppress(RecallError), self._ctx.db.write() as conn:
            conn.execute("UPDATE import_runs SET status = ?, finished_at = ? WHERE id = ?",
                         (status, utc_now_iso(), run_id))

    def _import_source(self, b: Bucket, a: Assignment, state: _RunState, chunk_lines: int,
                       max_line: int) -> SourceResult:
        path = str(b.path)
        result = SourceResult(path, b.name, a.worktree.key, "new", assigned_by=a.how,
                              note=a.note)
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed in the finally below
        except OSError as exc:
            result.action, result.note = "failed", f"unreadable: {exc.strerror or exc}"
            return result
        try:
            st = os.fstat(fh.fileno())
            cur = self._current_ro(path)
            hasher: Any = hashlib.sha256()
            start, tail_fix = 0, False
            if cur is not None:
                result.worktree = self._ctx.worktree_key_of(cur.worktree_id)
                if result.worktree != a.worktree.key:
                    result.note = (f"already imported into worktree {result.worktree!r};"
                                   " rows are not moved")
                    result.assigned_by = "recorded"
                result.total_lines = cur.lines
                if cur.complete and st.st_size == cur.size and st.st_mtime_ns == cur.mtime_ns:
                    result.action = "unchanged"
                    state.advance(st.st_size)
                    return result
                same = st.st_size >= cur.size
                if same:
                    hasher = _hash_prefix(fh, cur.size)
                    same = hasher.hexdigest() == cur.sha256
                if same and cur.tail_open and st.st_size > cur.size:
                    # The unterminated last line stays what it was only if a newline
                    # followed it; anything else rewrote it.
                    same = fh.read(1) == b"\n"
                    if same:
                        hasher.update(b"\n")
                        tail_fix = True
                if same:
                    start = cur.size + (1 if tail_fix else 0)
                    result.action = "resumed" if not cur.complete else "appended"
                else:
                    result.action = "changed"
                    fh.seek(0)
                    hasher = hashlib.sha256()
                    result.total_lines = 0
            worktree_key = result.worktree
            with self._ctx.db.write() as conn:
                cur2 = self._current(conn, path)
                if cur2 != cur:
                    raise ImportConflict(f"{path} is being imported by another process")
                if cur is None or result.action == "changed":
                    wt = a.worktree
                    wt_pk = self._worktree_pk(conn, wt)
                    version = 1
                    if cur is not None:
                        conn.execute("UPDATE import_sources SET superseded = 1 WHERE id = ?",
                                     (cur.id,))
                        version = cur.version + 1
                    worktree_key = wt.key
                    rows = conn.execute(
                        "INSERT INTO import_sources (workspace_id, path, version, bucket, layout,"
                        " worktree_id, sha256, first_run_id, last_run_id)"
                        f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {_SOURCE_COLS}",
                        (self._ctx.workspace_pk, path, version, b.name, b.layout, wt_pk,
                         _EMPTY_SHA, state.run_id, state.run_id)).fetchall()
                    r = rows[0]
                    cur = _Source(_int(r[0]), _int(r[1]), _int(r[2]), 0, _EMPTY_SHA, 0, 0,
                                  False, False)
            result.worktree = worktree_key
            state.advance(start)
            _Chunker(self._ctx, cur, state, result, path, chunk_lines, max_line).run(
                fh, start, hasher, tail_fix)
            if result.action == "appended" and not result.lines:
                result.action = "unchanged"  # only touched (mtime), same bytes
            return result
        except OSError as exc:
            result.action, result.note = "failed", f"read failed: {exc.strerror or exc}"
            return result
        except ImportConflict as exc:
            result.action, result.note = "failed", str(exc)
            return result
        finally:
            fh.close()

    def _current_ro(self, path: str) -> _Source | None:
        with self._ctx.db.read() as conn:
            return self._current(conn, path)

    # -- verify ----------------------------------------------------------------------------

    def verify(self, paths: Iterable[str | os.PathLike[str]], *, deep: bool = False,
               progress: Progress | None = None) -> VerifyReport:
        """Check every line of every legacy journal at `paths` against the import records:
        the file's imported prefix is byte-for-byte what was imported, it has no lines
        beyond it, and each of its lines has exactly one fate. `deep` also re-reads every
        line and checks it maps to the very row (or quarantine bytes) recorded for it."""
        found = discover(paths)
        report = VerifyReport(problems=list(found.problems))
        total = sum(_size(b.path) for b in found.buckets)
        done = 0
        checked: set[str] = set()
        for b in found.buckets:
            checked.add(str(b.path))
            report.sources.append(self._verify_source(b, deep))
            done += _size(b.path)
            if progress is not None:
                progress(done, total)
        # Sources recorded under the given directories whose files are gone.
        for path, bucket, lines in self._ctx.db.query(
                "SELECT path, bucket, lines FROM import_sources WHERE workspace_id = ?"
                " AND superseded = 0", (self._ctx.workspace_pk,)):
            if path in checked or not any(_under(path, d) for d in found.dirs):
                continue
            if not os.path.exists(path):
                report.sources.append(SourceCheck(
                    path, bucket, "missing", lines=int(lines),
                    detail="imported earlier; the file no longer exists (moved or deleted)"))
        return report

    def _verify_source(self, b: Bucket, deep: bool) -> SourceCheck:
        path = str(b.path)
        check = SourceCheck(path, b.name, "ok")
        cur = self._current_ro(path)
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            check.status, check.detail = "unreadable", f"{exc.strerror or exc}"
            return check
        with fh:
            if cur is None:
                reader = LineReader(fh)
                check.file_lines = sum(1 for _ in reader)
                check.status, check.unaccounted = "not-imported", check.file_lines
                check.detail = "never imported"
                return check
            wt = self._ctx.worktree_key_of(cur.worktree_id)
            check.worktree = wt
            check.lines = cur.lines
            prefix = _hash_prefix(fh, cur.size)
            if prefix.hexdigest() != cur.sha256:
                check.status = "changed"
                check.detail = "the file's imported part changed since import (rewritten?)"
            rest_lines, rest_bytes = _count_rest(fh, cur.tail_open)
            check.file_lines = cur.lines + rest_lines
            if rest_bytes and check.status == "ok":
                check.status = "grown"
                check.unaccounted = rest_lines
                check.detail = f"{rest_lines} line(s) added since import: run import again"
            self._check_records(cur, check)
            if deep and check.status == "ok":
                fh.seek(0)
                self._deep_check(fh, cur, check)
        return check

    def _check_records(self, cur: _Source, check: SourceCheck) -> None:
        with self._ctx.db.read() as conn:
            p = conn.execute(
                "SELECT count(*), coalesce(min(line), 1), coalesce(max(line), 0),"
                " coalesce(sum(status = 'imported'), 0) FROM entry_provenance"
                " WHERE source_id = ?", (cur.id,)).fetchall()[0]
            q = conn.execute(
                "SELECT count(*), coalesce(min(line), 1), coalesce(max(line), 0)"
                " FROM quarantine WHERE source_id = ?", (cur.id,)).fetchall()[0]
            both = conn.execute(
                "SELECT count(*) FROM entry_provenance p JOIN quarantine q"
                " ON q.source_id = p.source_id AND q.line = p.line WHERE p.source_id = ?",
                (cur.id,)).fetchall()[0][0]
            orphans = conn.execute(
                "SELECT count(*) FROM entry_provenance p LEFT JOIN journal_entries e"
                " ON e.seq = p.entry_seq WHERE p.source_id = ? AND e.seq IS NULL",
                (cur.id,)).fetchall()[0][0]
            counters = conn.execute(
                "SELECT imported, duplicates, quarantined FROM import_sources WHERE id = ?",
                (cur.id,)).fetchall()[0]
        n_prov, n_imp, n_q = _int(p[0]), _int(p[3]), _int(q[0])
        check.imported, check.duplicates, check.quarantined = n_imp, n_prov - n_imp, n_q
        lo, hi = min(_int(p[1]), _int(q[1])), max(_int(p[2]), _int(q[2]))
        covered = n_prov + n_q == cur.lines and not both and lo >= 1 and hi <= cur.lines
        if not covered:
            missing = cur.lines - (n_prov + n_q - _int(both))
            check.unaccounted += max(missing, 0)
            check.status = "inconsistent"
            check.detail = (f"{cur.lines} lines recorded but {n_prov} imported/duplicate and"
                            f" {n_q} quarantined records ({both} overlapping)")
        elif orphans:
            check.status = "inconsistent"
            check.detail = f"{orphans} line(s) point at journal rows that no longer exist"
        elif tuple(_int(c) for c in counters) != (n_imp, n_prov - n_imp, n_q):
            check.status = "inconsistent"
            check.detail = "the source's counters disagree with its line records"

    def _deep_check(self, fh: Any, cur: _Source, check: SourceCheck) -> None:
        uuid = self._ctx.workspace_uuid
        batch: list[tuple[int, Parsed | Bad, bytes | None]] = []

        def flush() -> None:
            if not batch:
                return
            lo, hi = batch[0][0], batch[-1][0]
            with self._ctx.db.read() as conn:
                ids: dict[Any, Any] = dict(_all(
                    conn, "SELECT p.line, e.id FROM entry_provenance p JOIN journal_entries e"
                    " ON e.seq = p.entry_seq WHERE p.source_id = ? AND p.line BETWEEN ? AND ?",
                    (cur.id, lo, hi)))
                quarantined = {_int(r[0]): (bytes(r[1]), str(r[2])) for r in _all(
                    conn, "SELECT line, raw, reason FROM quarantine WHERE source_id = ?"
                    " AND line BETWEEN ? AND ?", (cur.id, lo, hi))}
            for n, fate, data in batch:
                got = quarantined.get(n)
                if got is not None and got[1] == TOO_LONG:
                    # The length limit is the importer's choice: check the bytes only.
                    ok = data is None or data.startswith(got[0])
                elif isinstance(fate, Bad):
                    ok = got is not None and got[1] == fate.reason and (
                        data is None or got[0] == data)
                else:
                    ok = ids.get(n) == fate.id
                if not ok:
                    check.mismatched += 1
            batch.clear()

        for line_no, (_offset, data, length, terminated) in enumerate(LineReader(fh), 1):
            fate: Parsed | Bad = too_long(length, MAX_LINE_BYTES) if data is None \
                else classify(data, terminated, uuid)
            batch.append((line_no, fate, data))
            if len(batch) >= CHUNK_LINES:
                flush()
        flush()
        if check.mismatched:
            check.status = "inconsistent"
            check.detail = f"{check.mismatched} line(s) do not match what was recorded for them"


def _int(v: Any) -> int:
    return int(v)


def _all(conn: Any, sql: str, params: Any = ()) -> list[Any]:
    return list(conn.execute(sql, params).fetchall())


def _under(path: str, d: Path) -> bool:
    return path.startswith(str(d).rstrip(os.sep) + os.sep)


def _count_rest(fh: Any, tail_open: bool) -> tuple[int, int]:
    """(lines, bytes) after the current position: what was added since the import."""
    lines = nbytes = 0
    last = b"\n"
    first = True
    while True:
        block = fh.read(1 << 20)
        if not block:
            break
        if first and tail_open and block[:1] == b"\n":
            # A newline completing the unterminated last line adds no line.
            block = block[1:]
            nbytes += 1
        first = False
        nbytes += len(block)
        lines += block.count(b"\n")
        if block:
            last = block[-1:]
    if last != b"\n":
        lines += 1
    return lines, nbytes


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class _RunState:
    run_id: int
    total: int
    progress: Progress | None
    done: int = 0
    # raw line digest -> journal seq, for lines already resolved in this run
    raw: dict[bytes, int] = field(default_factory=dict)

    def advance(self, nbytes: int) -> None:
        self.done += nbytes
        if self.progress is not None:
            self.progress(self.done, self.total)


class _Chunker:
    """Reads one source from a position and commits it chunk by chunk."""

    def __init__(self, ctx: StoreContext, src: _Source, state: _RunState,
                 result: SourceResult, path: str, chunk_lines: int, max_line: int) -> None:
        self.ctx, self.src, self.state, self.result = ctx, src, state, result
        self.path, self.chunk_lines, self.max_line = path, max(1, chunk_lines), max_line

    def run(self, fh: Any, start: int, hasher: Any, tail_fix: bool) -> None:
        ctx, state, src = self.ctx, self.state, self.src
        uuid, ws_pk, wt_pk = ctx.workspace_uuid, ctx.workspace_pk, src.worktree_id
        cache = state.raw
        reader = LineReader(fh, offset=start, hasher=hasher, max_line=self.max_line)
        line_no = src.lines
        expected = (src.size, src.lines)
        # entry id -> its row, first occurrence in the chunk first
        rows: dict[bytes, tuple[Any, ...]] = {}
        # (line, raw digest or None, entry id or None, seq or None)
        fates: list[tuple[int, bytes | None, bytes | None, int | None]] = []
        quarantine: list[tuple[int, int, int, Bad, bytes | None]] = []
        end, tail_open = start, src.tail_open and not tail_fix
        reported = start
        blake = hashlib.blake2b
        stored = now_us()
        chunk, max_line = self.chunk_lines, self.max_line
        for batch, big, terminated in reader.batches():
            tail_open = not terminated
            newline = 1 if terminated else 0
            for i, data in enumerate(batch):
                line_no += 1
                offset = end
                if data is None:
                    length = big[i]
                    quarantine.append((line_no, offset, length, too_long(length, max_line),
                                       None))
                else:
                    length = len(data)
                    digest = blake(data.strip(), digest_size=16).digest()
                    seq = cache.get(digest)
                    if seq is not None:
                        fates.append((line_no, None, None, seq))
                    else:
                        fate = classify(data, terminated, uuid)
                        if isinstance(fate, Bad):
                            quarantine.append((line_no, offset, length, fate, data))
                        else:
                            if fate.id not in rows:
                                rows[fate.id] = (fate.id, ws_pk, wt_pk, stored, *fate.row)
                            fates.append((line_no, digest, fate.id, None))
                end = offset + length + newline
                if len(fates) + len(quarantine) >= chunk:
                    expected = self._commit(rows, fates, quarantine, line_no, end, tail_open,
                                            reader.prefix_sha256(end), expected, False)
                    rows, fates, quarantine = {}, [], []
                    state.advance(end - reported)
                    reported = end
                    stored = now_us()
        # The last commit also records the file's mtime, so an unchanged re-run can skip
        # it without reading: only when nothing was appended while we read.
        st = os.fstat(fh.fileno())
        complete_mtime = st.st_mtime_ns if st.st_size == end else 0
        self._commit(rows, fates, quarantine, line_no, end, tail_open,
                     reader.prefix_sha256(end), expected, True, complete_mtime)
        state.advance(end - reported)
        self.result.total_lines = line_no

    def _commit(self, rows: dict[bytes, tuple[Any, ...]],
                fates: list[tuple[int, bytes | None, bytes | None, int | None]],
                quarantine: list[tuple[int, int, int, Bad, bytes | None]], line_no: int,
                end: int, tail_open: bool, sha: str, expected: tuple[int, int],
                final: bool, mtime_ns: int = 0) -> tuple[int, int]:
        src, result = self.src, self.result
        imported = duplicates = 0
        # Applied only after the commit: a rolled-back chunk must not leave seqs behind.
        resolved: list[tuple[bytes, int]] = []
        with self.ctx.db.write() as conn:
            now = conn.execute("SELECT size, lines, superseded FROM import_sources WHERE id = ?",
                               (src.id,)).fetchall()
            if not now or (_int(now[0][0]), _int(now[0][1])) != expected or now[0][2]:
                raise ImportConflict(f"{self.path} is being imported by another process")
            # Rows already stored are looked up, not re-inserted: a conflicting INSERT
            # still burns an AUTOINCREMENT seq, and seqs must not depend on where an
            # earlier, killed run stopped. The new rows go in as one batch that leaves the
            # state row-by-row inserts would (journal_bulk.py).
            old: dict[bytes, int] = {}
            new: dict[bytes, int] = {}
            if rows:
                for i, got in bulk_insert(conn, list(rows.values()), columns=ROW_LAYOUT,
                                          burn_duplicates=False).items():
                    (new if got.created else old)[i] = got.seq
            prov: list[tuple[int, int, int, str]] = []
            claimed: set[bytes] = set()
            for line, digest, eid, seq in fates:
                if seq is None and eid is not None:
                    if eid in new and eid not in claimed:
                        claimed.add(eid)
                        seq, status = new[eid], "imported"
                        imported += 1
                    else:
                        seq, status = new.get(eid) or old[eid], "duplicate"
                        duplicates += 1
                    if digest is not None:
                        resolved.append((digest, seq))
                else:
                    status = "duplicate"
                    duplicates += 1
                assert seq is not None
                prov.append((src.id, line, seq, status))
            if prov:
                conn.executemany(
                    "INSERT INTO entry_provenance (source_id, line, entry_seq, status)"
                    " VALUES (?, ?, ?, ?)", prov)
            for line, offset, length, bad, data in quarantine:
                self._quarantine(conn, line, offset, length, bad, data)
            nq = len(quarantine)
            conn.execute(
                "UPDATE import_sources SET size = ?, sha256 = ?, lines = ?,"
                " tail_open = ?, imported = imported + ?, duplicates = duplicates + ?,"
                " quarantined = quarantined + ?, complete = ?, mtime_ns = ?, last_run_id = ?"
                " WHERE id = ?",
                (end, sha, line_no, int(tail_open), imported, duplicates, nq, int(final),
                 mtime_ns if final else 0, self.state.run_id, src.id))
            conn.execute(
                "UPDATE import_runs SET lines_total = lines_total + ?, imported = imported + ?,"
                " duplicates = duplicates + ?, quarantined = quarantined + ? WHERE id = ?",
                (imported + duplicates + nq, imported, duplicates, nq, self.state.run_id))
        cache = self.state.raw
        if len(cache) + len(resolved) > _RAW_CACHE_MAX:
            cache.clear()
        cache.update(resolved)
        result.lines += imported + duplicates + nq
        result.imported += imported
        result.duplicates += duplicates
        result.quarantined += nq
        return end, line_no

    def _quarantine(self, conn: Any, line: int, offset: int, length: int, bad: Bad,
                    data: bytes | None) -> None:
        if data is not None:
            conn.execute(
                "INSERT INTO quarantine (source_id, line, offset, raw, raw_length, reason,"
                " detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (self.src.id, line, offset, data, length, bad.reason, bad.detail))
            return
        # Too long to hold: stream it from the file into an incremental blob.
        keep = min(length, RAW_KEEP)
        detail = bad.detail if keep == length else (
            f"{bad.detail}; the first {keep} bytes are kept here, the rest is at byte"
            f" {offset + keep} of the source")
        rowid = conn.execute(
            "INSERT INTO quarantine (source_id, line, offset, raw, raw_length, reason, detail)"
            " VALUES (?, ?, ?, zeroblob(?), ?, ?, ?) RETURNING id",
            (self.src.id, line, offset, keep, length, TOO_LONG, detail)).fetchall()[0][0]
        blob = conn.blob_open("main", "quarantine", "raw", rowid, True)
        try:
            with open(self.path, "rb") as fh:
                fh.seek(offset)
                left = keep
                while left:
                    piece = fh.read(min(left, 1 << 20))
                    if not piece:
                        break
                    blob.write(piece)
                    left -= len(piece)
        finally:
            blob.close()


# -- verify report -----------------------------------------------------------------------


@dataclass
class SourceCheck:
    path: str
    bucket: str
    # ok | grown | changed | not-imported | missing | unreadable | inconsistent
    status: str
    worktree: str = ""
    lines: int = 0              # lines accounted for at import
    file_lines: int = 0         # lines in the file now
    imported: int = 0
    duplicates: int = 0
    quarantined: int = 0
    unaccounted: int = 0
    mismatched: int = 0
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class VerifyReport:
    sources: list[SourceCheck] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.sources) and not self.problems and all(
            s.status == "ok" for s in self.sources)

    def to_dict(self) -> dict[str, Any]:
        s = self.sources
        return {
            "ok": self.ok, "lines_total": sum(c.file_lines for c in s),
            "imported": sum(c.imported for c in s), "duplicates": sum(c.duplicates for c in s),
            "quarantined": sum(c.quarantined for c in s),
            "unaccounted": sum(c.unaccounted for c in s),
            "changed": sum(1 for c in s if c.status in ("changed", "missing")),
            "sources": [c.to_dict() for c in s],
            "problems": [p.to_dict() for p in self.problems],
        }
