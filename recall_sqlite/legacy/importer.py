"""The import: every line of every legacy journal ends as exactly one of imported,
duplicate or quarantined, recorded per line.

Crash safety: a source file is imported in chunks; each chunk's rows, provenance, quarantine
and the source's progress (bytes, lines, fingerprint of the prefix read) commit in one
transaction, so a killed import resumes exactly after its last commit and ends with the same
rows, in the same order, as an uninterrupted one. Source files are only ever opened for reading.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import identity
from ..context import StoreContext
from ..db import as_int
from ..errors import ImportConflict, RecallError
from ..journal import deferred
from ..limits import MAX_LINE_BYTES
from ..timestamps import utc_now_iso
from .assign import KnownWorktree
from .chunks import Chunker, RunState
from .find import Problem, file_size
from .lock import run_lock
from .plan import Plan, PlannedStore
from .rehome import rehome
from .sources import (
    EMPTY_SHA,
    SOURCE_COLS,
    Source,
    current,
    current_in,
    hash_prefix,
    recorded_keys,
)
from .workers import ParsePool, refuse_in_a_starting_worker, workers_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import _Hash
    from typing import BinaryIO

    from apsw import Connection

Progress = Callable[[int, int], None]
# Lines per committed chunk: big enough that commits cost little, small enough that a kill
# loses seconds of work, a chunk's pending rows stay a few MiB and a chunk holds the write
# lock for about a second. Each commit writes every index page its rows touched, and the
# id and session indexes take their keys at random, so a chunk rewrites most of their pages
# (bench/RESULTS.md, row 'import: chunk size').
CHUNK_LINES = 20_000


@dataclass
class SourceResult:
    path: str
    bucket: str
    worktree: str
    # new | resumed | appended | unchanged | changed | rehomed | skipped | failed
    action: str
    lines: int = 0  # read this run
    imported: int = 0
    duplicates: int = 0
    quarantined: int = 0
    total_lines: int = 0  # accounted for in this file altogether
    assigned_by: str = ""
    note: str = ""
    key: str = ""
    moved: int = 0  # rows re-homed to `worktree` this run
    stayed: int = 0  # rows left where another source put them

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ImportReport:
    run_id: int
    sources: list[SourceResult]
    problems: list[Problem]
    workspace_id: str
    database: str
    # Stores of the workspace that were found but are not imported (after this run).
    not_imported: list[dict[str, str]] = field(default_factory=list)
    waited: bool = False  # another import of this workspace ran first
    jobs: int = 1  # worker processes that read the lines (1: this process read them)

    def _sum(self, name: str) -> int:
        return sum(int(getattr(s, name)) for s in self.sources)

    @property
    def ok(self) -> bool:
        return (
            not self.problems
            and not self.not_imported
            and all(s.action not in ("failed", "skipped") for s in self.sources)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "run_id": self.run_id,
            "workspace_id": self.workspace_id,
            "database": self.database,
            "lines_total": self._sum("lines"),
            "imported": self._sum("imported"),
            "duplicates": self._sum("duplicates"),
            "quarantined": self._sum("quarantined"),
            "unchanged_files": sum(1 for s in self.sources if s.action == "unchanged"),
            "accounted_lines": self._sum("total_lines"),
            "moved": self._sum("moved"),
            "stayed": self._sum("stayed"),
            "sources": [s.to_dict() for s in self.sources],
            "not_imported": list(self.not_imported),
            "waited": self.waited,
            "jobs": self.jobs,
            "problems": [p.to_dict() for p in self.problems],
        }


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the import runs (as it was, after):
    its passes over every live object, made as the lines' tuples come and go, are time the
    writer spends on nothing (bench/RESULTS.md, row 'import: collector paused'). The
    import makes no reference cycles that would pile up meanwhile; its peak memory is
    the same."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Importer:
    """Imports legacy journals into one workspace of the store."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def run(
        self,
        plan: Plan,
        *,
        progress: Progress | None = None,
        chunk_lines: int = CHUNK_LINES,
        max_line: int = MAX_LINE_BYTES,
        given: list[str] | None = None,
        defer_indexes: bool = False,
        jobs: int | None = None,
    ) -> ImportReport:
        """Import every store the plan selects into this workspace. Idempotent; safe to
        kill at any point and re-run; never writes to the source files. A second import
        of the same workspace waits for the first (a lock beside the database) and then
        finds the lines it imported already accounted for. `defer_indexes`: build the
        journal's head indexes after the rows (journal/deferred.py), for a load no one
        reads meanwhile: without them a read of the newest entries walks the journal.
        `jobs`: worker processes that read, parse and identify the lines while this
        process writes (legacy/workers.py; None: default_jobs(), or 1 where a worker
        would run the caller's main script again); a load of fewer than POOL_MIN_BYTES
        new bytes starts none. The store ends the same whatever the count."""
        refuse_in_a_starting_worker()
        problems = list(plan.problems)
        with run_lock(self._ctx.db.path) as waited, _collector_paused():
            run_id = self._start_run(given if given is not None else [str(plan.root)])
            sizes = {ps.key: file_size(ps.path) for ps in plan.stores}
            state = RunState(
                run_id=run_id, total=sum(sizes.values()), progress=progress, db=self._ctx.db
            )
            results: list[SourceResult] = []
            status = "failed"
            new, fresh = self._new_load(plan, sizes)
            workers = workers_for(jobs, new)
            pool: ParsePool | None = None
            try:
                if workers > 1:
                    pool = ParsePool(workers)
                    pool.expect(fresh, max_line)
                if defer_indexes:
                    with self._ctx.db.write() as conn:
                        deferred.drop(conn)
                try:
                    for ps in plan.stores:
                        results.append(self._import_source(ps, state, chunk_lines, max_line, pool))
                finally:
                    # The last chunks held back (chunks.SHARE_TAILS), on a stop too: each
                    # is whole, as its own commit would have been.
                    state.flush()
                for r in results:
                    if r.action == "appended" and not r.lines:
                        r.action = "unchanged"  # only touched (mtime), same bytes
                status = "done"
            except KeyboardInterrupt:
                status = "interrupted"
                raise
            finally:
                if pool is not None:
                    pool.close()
                # Also the indexes a killed run left unbuilt.
                problems += self._build_indexes()
                self._finish_run(run_id, status)
        for r in results:
            if r.action in ("failed", "skipped"):
                problems.append(Problem(r.path, r.note))
        recorded = recorded_keys(self._ctx)
        missing = [
            {
                "path": str(s.path),
                "bucket": s.bucket.name,
                "key": s.key,
                "worktree": s.assignment.key,
                "why": s.assignment.why,
            }
            for s in plan.everything
            if s.key not in recorded
        ]
        return ImportReport(
            run_id,
            results,
            problems,
            self._ctx.workspace_uuid,
            str(self._ctx.db.path),
            missing,
            waited,
            workers,
        )

    def _new_load(self, plan: Plan, sizes: dict[str, int]) -> tuple[int, list[str]]:
        """The bytes this load reads that no earlier import accounted for, and the paths of
        the sources never imported that it reads from their start, in its order."""
        db, ws = self._ctx.db, self._ctx.workspace_pk
        new, fresh = 0, []
        for ps in plan.stores:
            cur = current_in(db, ws, ps.key)
            # (A rewritten file is read again whole: counted low here, which errs on the
            # side of keeping the indexes and reading in this process.)
            new += sizes[ps.key] - (cur.size if cur is not None else 0)
            if cur is None and ps.assignment.worktree is not None:
                fresh.append(str(ps.bucket.path))
        return new, fresh

    def _build_indexes(self) -> list[Problem]:
        try:
            with self._ctx.db.read() as conn:
                if not deferred.missing(conn):
                    return []
            with self._ctx.db.write() as conn:
                deferred.build(conn)
        except RecallError as exc:
            return [
                Problem(
                    str(self._ctx.db.path),
                    f"the journal's head indexes were not built after the rows ({exc}):"
                    " every answer is right but reads are slow until `recall-sqlite doctor"
                    " --repair` or the next import builds them",
                )
            ]
        return []

    def _start_run(self, paths: list[str]) -> int:
        host = socket.gethostname()
        with self._ctx.db.write() as conn:
            for rid, rhost, pid in conn.execute(
                "SELECT id, host, pid FROM import_runs WHERE workspace_id = ?"
                " AND status = 'running'",
                (self._ctx.workspace_pk,),
            ).fetchall():
                if rhost == host and not pid_alive(as_int(pid)):
                    conn.execute(
                        "UPDATE import_runs SET status = 'interrupted' WHERE id = ?", (rid,)
                    )
            rows = conn.execute(
                "INSERT INTO import_runs (workspace_id, started_at, host, pid, paths)"
                " VALUES (?, ?, ?, ?, ?) RETURNING id",
                (
                    self._ctx.workspace_pk,
                    utc_now_iso(),
                    host,
                    os.getpid(),
                    # (A path that is not UTF-8 is recorded escaped: SQLite text is UTF-8.)
                    json.dumps(
                        [p.encode("utf-8", "backslashreplace").decode() for p in paths],
                        ensure_ascii=False,
                    ),
                ),
            ).fetchall()
        return as_int(rows[0][0])

    def _finish_run(self, run_id: int, status: str) -> None:
        with contextlib.suppress(RecallError), self._ctx.db.write() as conn:
            conn.execute(
                "UPDATE import_runs SET status = ?, finished_at = ? WHERE id = ?",
                (status, utc_now_iso(), run_id),
            )

    def _import_source(
        self,
        ps: PlannedStore,
        state: RunState,
        chunk_lines: int,
        max_line: int,
        pool: ParsePool | None,
    ) -> SourceResult:
        b, a, key = ps.bucket, ps.assignment, ps.key
        path = str(b.path)
        result = SourceResult(path, b.name, a.key, "new", assigned_by=a.how, note=a.why, key=key)
        cur0 = current_in(self._ctx.db, self._ctx.workspace_pk, key)
        if a.worktree is None and cur0 is None:
            result.action = "skipped"
            return result
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed in the finally below
        except OSError as exc:
            result.action, result.note = "failed", f"unreadable: {exc.strerror or exc}"
            return result
        try:
            st = os.fstat(fh.fileno())
            cur = cur0
            hasher: _Hash = hashlib.sha256()
            start, tail_fix = 0, False
            if cur is not None:
                result.worktree = self._ctx.worktree_key_of(cur.worktree_id)
                cur = self._rehome_if_mapped(result, ps, cur)
                result.total_lines = cur.lines
                if cur.complete and st.st_size == cur.size and st.st_mtime_ns == cur.mtime_ns:
                    if result.action != "rehomed":
                        result.action = "unchanged"
                    state.advance(st.st_size)
                    return result
                start, tail_fix, hasher = _resume_point(fh, cur, st.st_size, result)
            worktree_key = result.worktree
            with self._ctx.db.write() as conn:
                cur2 = current(conn, self._ctx.workspace_pk, key)
                if cur2 != cur:
                    raise ImportConflict(f"{path} is being imported by another process")
                if cur is None or result.action == "changed":
                    wt = a.worktree
                    if wt is None:
                        # Ambiguous, and the file was rewritten: the old rows stay where
                        # they are; the new version waits for --map.
                        result.action = "skipped"
                        return result
                    wt_pk = self._worktree_pk(conn, wt)
                    version = 1
                    if cur is not None:
                        conn.execute(
                            "UPDATE import_sources SET superseded = 1 WHERE id = ?", (cur.id,)
                        )
                        version = cur.version + 1
                    worktree_key = wt.key
                    rows = conn.execute(
                        "INSERT INTO import_sources (workspace_id, path, version, bucket, layout,"
                        " worktree_id, sha256, first_run_id, last_run_id)"
                        f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {SOURCE_COLS}",
                        (
                            self._ctx.workspace_pk,
                            key,
                            version,
                            b.name,
                            b.layout,
                            wt_pk,
                            EMPTY_SHA,
                            state.run_id,
                            state.run_id,
                        ),
                    ).fetchall()
                    r = rows[0]
                    cur = Source(
                        as_int(r[0]), as_int(r[1]), as_int(r[2]), 0, EMPTY_SHA, 0, 0, False, False
                    )
            result.worktree = worktree_key
            state.advance(start)
            Chunker(self._ctx, cur, state, result, path, chunk_lines, max_line, pool).run(
                fh, start, hasher, tail_fix
            )
            return result
        except OSError as exc:
            result.action, result.note = "failed", f"read failed: {exc.strerror or exc}"
            return result
        except ImportConflict as exc:
            result.action, result.note = "failed", str(exc)
            return result
        finally:
            fh.close()

    def _rehome_if_mapped(self, result: SourceResult, ps: PlannedStore, cur: Source) -> Source:
        """--map on a file already imported: its rows move (rehome.py says which), then
        the import goes on as usual for anything appended."""
        a, key = ps.assignment, ps.key
        if (
            a.how not in ("mapped", "new")
            or a.worktree is None
            or a.worktree.key == result.worktree
        ):
            return cur
        moved = rehome(self._ctx, key, cur.id, a.worktree)
        now = current_in(self._ctx.db, self._ctx.workspace_pk, key)
        if now is None or now.worktree_id != moved.worktree_pk:
            raise ImportConflict(f"{ps.path} is being imported by another process")
        result.note = (
            f"re-homed from worktree {result.worktree!r} ({a.why}):"
            f" {moved.moved} entry version(s) moved, {moved.stayed}"
            " left where another source (or a live write) put them"
        )
        result.worktree = a.worktree.key
        result.moved, result.stayed = moved.moved, moved.stayed
        result.action = "rehomed"
        return now

    def _worktree_pk(self, conn: Connection, w: KnownWorktree) -> int:
        if w.pk is not None:
            return w.pk
        return identity.ensure_worktree(conn, self._ctx.workspace_pk, w.key, w.name, w.root)


def _resume_point(
    fh: BinaryIO, cur: Source, size: int, result: SourceResult
) -> tuple[int, bool, _Hash]:
    """Where to go on reading a file imported before: after its recorded prefix when that
    prefix is byte for byte what was imported (appended, or resumed after a kill), else
    from the start as a new version (rewritten). (offset, the cut-off last line got its
    newline, the hasher of what is read so far.)"""
    same = size >= cur.size
    hasher: _Hash = hashlib.sha256()
    tail_fix = False
    if same:
        hasher = hash_prefix(fh, cur.size)
        same = hasher.hexdigest() == cur.sha256
    if same and cur.tail_open and size > cur.size:
        # The unterminated last line stays what it was only if a newline followed it;
        # anything else rewrote it.
        same = fh.read(1) == b"\n"
        if same:
            hasher.update(b"\n")
            tail_fix = True
    if same:
        result.action = "resumed" if not cur.complete else "appended"
        return cur.size + (1 if tail_fix else 0), tail_fix, hasher
    result.action = "changed"
    fh.seek(0)
    result.total_lines = 0
    return 0, False, hashlib.sha256()


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
