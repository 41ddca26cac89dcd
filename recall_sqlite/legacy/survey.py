"""The survey: characterise legacy buckets without writing anything anywhere (per bucket:
lines, valid entries, malformed lines by reason, sessions, dates, branches; across
buckets: duplicates, shared sessions, differing versions, the rows an import would make)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .. import synapt_layout as layout
from ..errors import WorkspaceError
from ..limits import MAX_LINE_BYTES
from ..paths.resolve import resolve
from ..timestamps import iso_utc
from .find import Bucket, Problem, file_size
from .lines import (
    TOO_LONG,
    Bad,
    LineReader,
    Seen,
    classify,
    inspect,
    token_text,
    too_long,
    written_reader,
)
from .plan import Plan, as_paths, make_plan

Progress = Callable[[int, int], None]
_ODD_CACHE_MAX = 100_000
_M64 = (1 << 64) - 1
# A content packed in one int (_Scan._pack): where its fields start.
_TS_OFFSET = 1 << 62  # epoch us of any year 1-9999, plus this, fits 63 bits unsigned
_TS_MASK = (1 << 63) - 1
_SID = 63
_CLASS = 127


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
    duplicates: int = 0  # lines whose content an earlier line (any bucket) already had
    no_session: int = 0
    worktree: str | None = None
    assigned_by: str = ""
    likely_slice: bool = False
    note: str = ""
    key: str = ""
    candidates: list[str] = field(default_factory=list)
    import_state: str = ""
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.bucket.to_dict(),
            "size": self.size,
            "lines": self.lines,
            "valid": self.valid,
            "malformed": dict(sorted(self.malformed.items())),
            "quarantined": sum(self.malformed.values()),
            "duplicates": self.duplicates,
            "sessions": self.sessions,
            "entries_without_session": self.no_session,
            "first": iso_utc(self.first_us) if self.first_us is not None else None,
            "last": iso_utc(self.last_us) if self.last_us is not None else None,
            # most lines first; a tie by name, so the order does not depend on the reading
            "branches": dict(sorted(self.branches.items(), key=lambda kv: (-kv[1], kv[0]))),
            "auto": self.auto,
            "enriched": self.enriched,
            "worktree": self.worktree,
            "assigned_by": self.assigned_by,
            "likely_slice": self.likely_slice,
            "key": self.key,
            "candidates": self.candidates,
            "note": self.note,
            "import_state": self.import_state,
            "error": self.error,
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
    walk: dict[str, Any] = field(default_factory=dict)
    entries_without_session: int = 0
    # With a store (its import records given): the lines past what it imported, and what
    # an import would make of them. None without a store.
    pending: Pending | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "lines_total": self.lines_total,
            "valid": self.valid,
            # `imported`: lines an import into an empty store would turn into new rows.
            "imported": self.rows_to_create,
            "duplicates": self.duplicates,
            "quarantined": self.quarantined,
            "rows_to_create": self.rows_to_create,
            "sessions": self.sessions,
            "sessions_in_several_buckets": self.sessions_in_several_buckets,
            "sessions_with_differing_versions": self.sessions_with_differing_versions,
            "entries_without_session": self.entries_without_session,
            "not_imported": self.pending.to_dict() if self.pending is not None else None,
            "likely_slices": [b.bucket.name for b in self.buckets if b.likely_slice],
            "ambiguous": [b.bucket.name for b in self.buckets if b.assigned_by == "ambiguous"],
            "walk": self.walk,
            "buckets": [b.to_dict() for b in self.buckets],
            "problems": [p.to_dict() for p in self.problems],
        }


@dataclass
class Pending:
    """The lines of the surveyed files that the store has not imported (past the prefix its
    import records account for), and what an import would make of them."""

    lines: int = 0
    rows_to_create: int = 0
    duplicates: int = 0
    quarantined: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


# What the survey asks the store: which of these entry ids it holds or forgot.
Known = Callable[[set[bytes]], set[bytes]]


def survey(
    paths: Iterable[str | os.PathLike[str]] = (),
    *,
    plan: Plan | None = None,
    mapping: Mapping[str, str] | None = None,
    states: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    max_line: int = MAX_LINE_BYTES,
    root: str | os.PathLike[str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    accounted: Mapping[str, int] | None = None,
    known: Known | None = None,
) -> SurveyReport:
    """Characterise legacy stores without writing anything anywhere. `plan` (plan.py) says
    which stores and where each would go; without one, the stores `paths` name in the
    workspace at `root` (default: the one the paths lie in, else the current directory's).
    `states` maps a store's key to its import state when a store was consulted; with
    `accounted` (key -> bytes its import records account for) and `known` (which entry
    ids the store holds or forgot), the report also says what an import would do now."""
    given = as_paths(paths)
    if plan is None:
        plan = make_plan(
            Path(root) if root is not None else _root_for(given), given, mapping=mapping, cwd=cwd
        )
    found = _Found([s.bucket for s in plan.stores], list(plan.problems))
    by_path = {s.path: s for s in plan.stores}
    root_path = plan.root
    total = sum(file_size(b.path) for b in found.buckets)
    done = 0
    scan = _Scan(max_line)
    pending = _PendingScan() if accounted is not None and known is not None else None
    results: list[BucketSurvey] = []
    for index, b in enumerate(found.buckets):
        s = BucketSurvey(b)
        ps = by_path[b.path]
        a = ps.assignment
        s.worktree, s.assigned_by, s.likely_slice, s.note = (a.key, a.how, a.likely_slice, a.why)
        s.key, s.candidates = ps.key, [w.key for w in a.candidates]
        if states is not None:
            s.import_state = states.get(ps.key, "not imported")
        results.append(s)
        try:
            fh = open(b.path, "rb")  # noqa: SIM115 - closed below, errors reported per file
        except OSError as exc:
            s.error = f"unreadable: {exc.strerror or exc}"
            found.problems.append(Problem(str(b.path), s.error))
            continue
        report = None if progress is None else _offset_progress(progress, done, total)
        with fh:
            scan.bucket(s, fh, 2 << index, report)
            if pending is not None:
                assert accounted is not None
                pending.rest(fh, accounted.get(ps.key, 0), max_line)
        if s.error:
            found.problems.append(Problem(str(b.path), s.error))
        done += s.size
        if progress is not None:
            progress(done, total)
    sessions, contents = scan.sessions, scan.contents
    per_bucket, several, differing = _session_counts(sessions, len(results))
    for s, n in zip(results, per_bucket, strict=True):
        s.sessions = n
    lines = sum(s.lines for s in results)
    valid = sum(s.valid for s in results)
    return SurveyReport(
        pending=pending.result(known) if pending is not None and known is not None else None,
        entries_without_session=sum(s.no_session for s in results),
        buckets=results,
        problems=found.problems,
        lines_total=lines,
        valid=valid,
        quarantined=lines - valid,
        duplicates=sum(s.duplicates for s in results),
        rows_to_create=len(contents),
        sessions=len(sessions),
        sessions_in_several_buckets=several,
        sessions_with_differing_versions=differing,
        root=str(root_path),
        walk={
            "directories": plan.walk.dirs,
            "symlinks_not_followed": plan.walk.symlinks,
            "skipped": [{"path": p, "reason": r} for p, r in plan.walk.skipped],
            "worktrees": [{"key": w.key, "name": w.name, "root": w.root} for w in plan.worktrees],
        },
    )


class _Scan:
    """What the survey keeps across buckets while it reads them line by line."""

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        # content key -> what the survey counts of that content, packed in one int (_pack).
        # Copies of a line in several buckets are the survey's commonest case, and a valid
        # line's content key is the hash of its bytes when they are the bytes synapt writes
        # (lines.written_reader): so one lookup of those bytes both finds a copy and answers it
        # without inspecting it again, whatever the journal's size, for an int per content.
        self.contents: dict[int, int] = {}
        # The other valid lines (bytes synapt would not write: their key is not their
        # bytes' hash), by a hash of their bytes. Bounded (cleared when full) so memory
        # stays flat on any input.
        self.odd: dict[int, Any] = {}
        self.branch_ids: dict[str, int] = {}
        self.branch_names: list[str] = []
        # hash of a session id's UTF-8 -> a small int, written on a change: bit i + 1, the
        # session is in the i-th bucket read; bit 0, it has two different versions. A
        # content holds its session id, so a session's versions are the contents new to
        # the survey that carry its id: the second of those is a differing version, and no
        # first version need be kept to compare with (bench/RESULTS.md, row 'survey: no
        # first version').
        # (Hashed ids: a collision, odds ~1e-8 per million sessions, would merge two
        # sessions in these counts only.)
        self.sessions: dict[int, int] = {}
        # synapt's lines, read without a parse (lines.written_reader), and their branches
        # by token as written: a token is decoded once.
        self.written = written_reader()
        self.tokens: dict[bytes, int] = {}

    def _branch(self, branch: str) -> int:
        """The branch's number in branch_names."""
        bid = self.branch_ids.get(branch)
        if bid is None:
            bid = self.branch_ids[branch] = len(self.branch_names)
            self.branch_names.append(branch)
        return bid

    def _pack(self, seen: Seen) -> int:
        """The packed content of a line the parser read (lines.inspect)."""
        _, sid, branch, ts_us, auto, enriched = seen
        sid_utf8 = sid.encode("utf-8", "surrogatepass") if sid else b""
        return _pack(self._branch(branch), sid_utf8, ts_us, auto, enriched)

    def bucket(
        self, s: BucketSurvey, fh: BinaryIO, bucket_bit: int, progress: Callable[[int], None] | None
    ) -> None:
        reader = LineReader(fh, max_line=self.max_line, hashed=False)
        # lines by class (_pack), the duplicates and the earliest and latest instant
        tally = _Tally([0] * (8 * len(self.branch_names)))
        try:
            for batch, big, terminated in reader.batches():
                s.lines += len(batch)
                if big:
                    # too long to inspect; their lengths are in `big`
                    s.malformed[TOO_LONG] += len(big)
                self._batch(batch, terminated, s.malformed, tally, bucket_bit)
                if progress is not None:
                    progress(reader.end)
        except OSError as exc:
            s.error = f"read failed after line {s.lines}: {exc.strerror or exc}"
        for cls, count in enumerate(tally.per_class):
            if count:
                s.branches[self.branch_names[cls >> 3]] += count
                s.valid += count
                s.no_session += 0 if cls & 1 else count
                s.auto += count if cls & 2 else 0
                s.enriched += count if cls & 4 else 0
        s.duplicates = tally.dups
        if s.valid:
            s.first_us, s.last_us = tally.first - _TS_OFFSET, tally.last - _TS_OFFSET
        s.size = reader.end

    def _batch(
        self,
        batch: list[bytes | None],
        terminated: bool,
        malformed: Counter[str],
        tally: _Tally,
        bucket_bit: int,
    ) -> None:
        # Locals: this loop runs once per line of every bucket.
        contents, sessions = self.contents, self.sessions
        written, tokens = self.written, self.tokens
        per_class, dups, first, last = tally.per_class, tally.dups, tally.first, tally.last
        for data in batch:
            if data is None:
                continue
            stripped = data.strip()
            key = hash(stripped)
            packed = contents.get(key)
            fresh = packed is None
            if packed is not None:
                dups += 1  # the very bytes of a content already counted
            else:
                w = written(stripped)
                if w is not None:
                    us, sid, token, auto, enriched = w
                    bid = tokens.get(token)
                    if bid is None:
                        bid = tokens[token] = self._branch(token_text(token))
                    packed = contents[key] = _pack(bid, sid, us, auto, enriched)
                else:
                    other = self._other(data, terminated, stripped, key, malformed)
                    if other is None:
                        continue
                    key, packed, fresh = other
                    dups += not fresh
            cls = packed >> _CLASS
            try:
                per_class[cls] += 1
            except IndexError:  # a branch new since the bucket began
                per_class.extend([0] * (8 * len(self.branch_names) - len(per_class)))
                per_class[cls] += 1
            if cls & 1:
                sk = (packed >> _SID) & _M64
                mask = sessions.get(sk)
                if mask is None:
                    sessions[sk] = bucket_bit
                elif fresh:
                    sessions[sk] = mask | bucket_bit | 1  # a second version (see __init__)
                elif not mask & bucket_bit:
                    sessions[sk] = mask | bucket_bit
            ts = packed & _TS_MASK
            first = ts if ts < first else first
            last = ts if ts > last else last
        tally.dups, tally.first, tally.last = dups, first, last

    def _other(
        self, data: bytes, terminated: bool, stripped: bytes, key: int, malformed: Counter[str]
    ) -> tuple[int, int, bool] | None:
        """A line not as synapt writes it: (its content key, the content packed, whether the
        content is new), or None when it cannot be imported (counted in `malformed`)."""
        odd, contents = self.odd, self.contents
        seen: Any = odd.get(key) if odd else None
        if seen is None:
            seen = inspect(data, terminated, stripped, key, written=False)
            if type(seen) is Bad:
                malformed[seen.reason] += 1
                return None
        if seen[0] != key:
            if len(odd) >= _ODD_CACHE_MAX:
                odd.clear()
            odd[key] = seen
            key = seen[0]
        packed = contents.get(key)  # (its content may be known)
        if packed is not None:
            return key, packed, False
        packed = contents[key] = self._pack(seen)
        return key, packed, True


def _pack(bid: int, sid: bytes, ts_us: int, auto: bool, enriched: bool) -> int:
    """One content as an int: bits 0-62 its epoch us + 2**62, 63-126 the hash of its session
    id's UTF-8, and from 127 up its class: has a session id (127), auto (128), enriched
    (129), branch number `bid` (130 up). A bucket's _Tally counts lines by class."""
    cls = (bid << 3) | (enriched << 2) | (auto << 1) | (1 if sid else 0)
    sk = hash(sid) & _M64 if sid else 0
    return (cls << _CLASS) | (sk << _SID) | (ts_us + _TS_OFFSET)


class _Tally:
    """One bucket's counts while it is read (_Scan.bucket)."""

    def __init__(self, per_class: list[int]) -> None:
        self.per_class = per_class
        self.dups = 0
        self.first, self.last = _TS_MASK + 1, -1  # past any packed instant, before any


class _PendingScan:
    """The lines past each file's imported prefix: their entry ids (to ask the store which
    it holds) and how many cannot be imported. A file wholly imported costs nothing."""

    def __init__(self) -> None:
        self.ids: set[bytes] = set()
        self.lines = self.valid = self.bad = 0

    def rest(self, fh: BinaryIO, offset: int, max_line: int) -> None:
        try:
            size = os.fstat(fh.fileno()).st_size
            if offset >= size:
                return
            fh.seek(offset)
            first = True
            for _, data, length, terminated in LineReader(fh, offset=offset, max_line=max_line):
                if first and offset and data == b"":
                    # The newline that completed a last line imported without one.
                    first = False
                    continue
                first = False
                self.lines += 1
                fate = too_long(length, max_line) if data is None else classify(data, terminated)
                if isinstance(fate, Bad):
                    self.bad += 1
                else:
                    self.valid += 1
                    self.ids.add(fate.id)
        except OSError:
            return  # the survey's own pass has reported the file

    def result(self, known: Known) -> Pending:
        new = len(self.ids - known(self.ids)) if self.ids else 0
        return Pending(self.lines, new, self.valid - new, self.bad)


def _offset_progress(progress: Progress, done: int, total: int) -> Callable[[int], None]:
    """Progress inside one bucket, as bytes of the whole survey."""
    return lambda n: progress(done + n, total)


def _session_counts(sessions: dict[int, int], n: int) -> tuple[list[int], int, int]:
    """From the sessions' flags (_Scan.__init__): the sessions of each of the n buckets, the
    sessions in several buckets and those with differing versions, with no per-bucket sets
    of ids in memory. By distinct flags, counted in C: few, where sessions are many."""
    per_bucket = [0] * n
    several = differing = 0
    for flags, count in Counter(sessions.values()).items():
        differing += count if flags & 1 else 0
        mask = flags >> 1
        several += count if mask & (mask - 1) else 0
        while mask:
            low = mask & -mask
            per_bucket[low.bit_length() - 1] += count
            mask ^= low
    return per_bucket, several, differing


class _Found:
    def __init__(self, buckets: list[Bucket], problems: list[Problem]) -> None:
        self.buckets, self.problems = buckets, problems


def _root_for(paths: list[str]) -> Path:
    """The workspace the paths lie in when they agree on one (the library's convenience;
    the CLI always passes the current directory's), else the current directory's."""
    roots: set[Path] = set()
    for p in paths:
        q = Path(os.path.abspath(p))
        try:
            w = resolve(q if q.is_dir() else q.parent, env=layout.neutral_env())
        except WorkspaceError:
            continue
        if not w.weak:
            roots.add(w.root)
    if len(roots) == 1:
        return roots.pop()
    return resolve(None, env=layout.neutral_env()).root
