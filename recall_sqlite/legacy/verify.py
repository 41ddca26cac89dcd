"""Verify an import against the files as they are now: every line of every imported file
has exactly one recorded fate, the imported prefix is byte-for-byte what was imported, and
(`deep`) every line still maps to the very row or quarantine bytes recorded for it."""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import identity
from ..context import StoreContext
from ..db import as_bytes, as_int
from ..limits import MAX_LINE_BYTES
from .find import Problem, file_size
from .importer import CHUNK_LINES, pid_alive
from .lines import (
    FORGOTTEN,
    INVALID_JSON,
    TOO_LONG,
    TRUNCATED,
    Bad,
    LineReader,
    Parsed,
    classify,
    too_long,
)
from .plan import Plan, PlannedStore
from .sources import Source, Tombstones, current_in, hash_prefix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

    from apsw import Bindings, Connection

    from ..db import Row

Progress = Callable[[int, int], None]


@dataclass
class SourceCheck:
    path: str
    bucket: str
    # ok | grown | interrupted | changed | not-imported | missing | unreadable | inconsistent
    # | gone (the file went with its worktree, acknowledged gone: every line is in the store)
    status: str
    worktree: str = ""
    lines: int = 0  # lines accounted for at import
    file_lines: int = 0  # lines in the file now
    imported: int = 0
    duplicates: int = 0
    # Of the duplicates, lines whose entry an earlier import of this same file stored (a
    # file imported again after it changed: its old lines are duplicates of themselves).
    imported_before: int = 0
    quarantined: int = 0
    unaccounted: int = 0
    mismatched: int = 0
    detail: str = ""
    key: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class VerifyReport:
    sources: list[SourceCheck] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            bool(self.sources)
            and not self.problems
            and all(s.status in ("ok", "gone") for s in self.sources)
        )

    def to_dict(self) -> dict[str, Any]:
        s = self.sources
        return {
            "ok": self.ok,
            "lines_total": sum(c.file_lines for c in s),
            "imported": sum(c.imported for c in s),
            "duplicates": sum(c.duplicates for c in s),
            "imported_before": sum(c.imported_before for c in s),
            "quarantined": sum(c.quarantined for c in s),
            "unaccounted": sum(c.unaccounted for c in s),
            "not_imported": sum(1 for c in s if c.status == "not-imported"),
            "interrupted": sum(1 for c in s if c.status == "interrupted"),
            "changed": sum(1 for c in s if c.status in ("changed", "missing")),
            "sources": [c.to_dict() for c in s],
            "problems": [p.to_dict() for p in self.problems],
        }


# A source's duplicate lines whose entry an earlier version of the same file imported.
_IMPORTED_BEFORE = """
SELECT count(*) FROM entry_provenance p JOIN import_sources s ON s.id = p.source_id
 WHERE p.source_id = ? AND p.status = 'duplicate'
   AND EXISTS (SELECT 1 FROM entry_provenance o JOIN import_sources t ON t.id = o.source_id
                WHERE o.entry_seq = p.entry_seq AND o.status = 'imported' AND t.id <> s.id
                  AND t.workspace_id = s.workspace_id AND t.path = s.path)"""


class Verifier:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def run(
        self, plan: Plan, *, deep: bool = False, progress: Progress | None = None
    ) -> VerifyReport:
        """Check every line of every store the plan selects against the import records:
        the file's imported prefix is byte-for-byte what was imported, it has no lines
        beyond it, and each of its lines has exactly one fate. `deep` also re-reads every
        line and checks it maps to the very row (or quarantine bytes) recorded for it.
        For the whole workspace, a store found but never imported fails, and so does an
        imported file that is gone."""
        report = VerifyReport(problems=list(plan.problems))
        total = sum(file_size(s.path) for s in plan.stores)
        done = 0
        checked: set[str] = set()
        for ps in plan.stores:
            checked.add(ps.key)
            report.sources.append(self._verify_source(ps, deep))
            done += file_size(ps.path)
            if progress is not None:
                progress(done, total)
        chosen = [s.path for s in plan.stores]
        gone = identity.gone_worktrees(self._ctx.db, self._ctx.workspace_pk)
        for key, bucket, lines, wt in self._ctx.db.query(
            "SELECT path, bucket, lines, worktree_id FROM import_sources WHERE workspace_id = ?"
            " AND superseded = 0",
            (self._ctx.workspace_pk,),
        ):
            path = plan.path_of(str(key))
            if key in checked or not (
                plan.whole or any(path.parent.is_relative_to(c.parent) for c in chosen)
            ):
                continue
            if not path.exists():
                went = self._ctx.worktree_key_of(as_int(wt)) in gone
                report.sources.append(
                    SourceCheck(
                        str(path),
                        str(bucket),
                        "gone" if went else "missing",
                        lines=as_int(lines),
                        key=str(key),
                        detail="imported earlier; the file went with its worktree, which is"
                        " gone (its history stays in the store)"
                        if went
                        else "imported earlier; the file no longer exists (moved or deleted)",
                    )
                )
        return report

    def _verify_source(self, ps: PlannedStore, deep: bool) -> SourceCheck:
        path = str(ps.path)
        check = SourceCheck(path, ps.bucket.name, "ok", key=ps.key)
        cur = current_in(self._ctx.db, self._ctx.workspace_pk, ps.key)
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
                check.worktree = ps.assignment.key
                check.detail = "found but never imported: run import" + (
                    f" ({ps.assignment.why})" if ps.assignment.worktree is None else ""
                )
                return check
            wt = self._ctx.worktree_key_of(cur.worktree_id)
            check.worktree = wt
            check.lines = cur.lines
            prefix = hash_prefix(fh, cur.size)
            if prefix.hexdigest() != cur.sha256:
                check.status = "changed"
                check.detail = "the file's imported part changed since import (rewritten?)"
            rest_lines, rest_bytes = _count_rest(fh, cur.tail_open)
            check.file_lines = cur.lines + rest_lines
            if rest_bytes and check.status == "ok":
                check.unaccounted = rest_lines
                if not cur.complete:
                    check.status = "interrupted"
                    check.detail = (
                        f"the import of this file {self._run_state(cur)} after"
                        f" line {cur.lines}; {rest_lines} line(s) not imported"
                        " yet: run import again"
                    )
                else:
                    check.status = "grown"
                    check.detail = f"{rest_lines} line(s) added since import: run import again"
            elif not cur.complete and check.status == "ok":
                check.status = "interrupted"
                check.detail = (
                    f"the import of this file {self._run_state(cur)} before it"
                    " recorded the file complete: run import again"
                )
            self._check_records(cur, check)
            if deep and check.status == "ok":
                fh.seek(0)
                self._deep_check(fh, cur, check)
        return check

    def _run_state(self, cur: Source) -> str:
        rows = self._ctx.db.query(
            "SELECT r.status, r.host, r.pid FROM import_sources s JOIN import_runs r"
            " ON r.id = s.last_run_id WHERE s.id = ?",
            (cur.id,),
        )
        if (
            rows
            and rows[0][0] == "running"
            and rows[0][1] == socket.gethostname()
            and pid_alive(as_int(rows[0][2]))
        ):
            return "is still running (another process)"
        return "was interrupted"

    def _check_records(self, cur: Source, check: SourceCheck) -> None:
        with self._ctx.db.read() as conn:
            p = conn.execute(
                "SELECT count(*), coalesce(min(line), 1), coalesce(max(line), 0),"
                " coalesce(sum(status = 'imported'), 0) FROM entry_provenance"
                " WHERE source_id = ?",
                (cur.id,),
            ).fetchall()[0]
            q = conn.execute(
                "SELECT count(*), coalesce(min(line), 1), coalesce(max(line), 0)"
                " FROM quarantine WHERE source_id = ?",
                (cur.id,),
            ).fetchall()[0]
            both = conn.execute(
                "SELECT count(*) FROM entry_provenance p JOIN quarantine q"
                " ON q.source_id = p.source_id AND q.line = p.line WHERE p.source_id = ?",
                (cur.id,),
            ).fetchall()[0][0]
            orphans = conn.execute(
                "SELECT count(*) FROM entry_provenance p LEFT JOIN journal_entries e"
                " ON e.seq = p.entry_seq WHERE p.source_id = ? AND e.seq IS NULL",
                (cur.id,),
            ).fetchall()[0][0]
            counters = conn.execute(
                "SELECT imported, duplicates, quarantined FROM import_sources WHERE id = ?",
                (cur.id,),
            ).fetchall()[0]
            before = conn.execute(_IMPORTED_BEFORE, (cur.id,)).fetchall()[0][0]
        n_prov, n_imp, n_q = as_int(p[0]), as_int(p[3]), as_int(q[0])
        check.imported, check.duplicates, check.quarantined = n_imp, n_prov - n_imp, n_q
        check.imported_before = as_int(before)
        lo, hi = min(as_int(p[1]), as_int(q[1])), max(as_int(p[2]), as_int(q[2]))
        covered = n_prov + n_q == cur.lines and not both and lo >= 1 and hi <= cur.lines
        if not covered:
            missing = cur.lines - (n_prov + n_q - as_int(both))
            check.unaccounted += max(missing, 0)
            check.status = "inconsistent"
            check.detail = (
                f"{cur.lines} lines recorded but {n_prov} imported/duplicate and"
                f" {n_q} quarantined records ({both} overlapping)"
            )
        elif orphans:
            check.status = "inconsistent"
            check.detail = f"{orphans} line(s) point at journal rows that no longer exist"
        elif tuple(as_int(c) for c in counters) != (n_imp, n_prov - n_imp, n_q):
            check.status = "inconsistent"
            check.detail = "the source's counters disagree with its line records"

    def _deep_check(self, fh: BinaryIO, cur: Source, check: SourceCheck) -> None:
        batch: list[tuple[int, Parsed | Bad, bytes | None]] = []
        tombstones = Tombstones(self._ctx.db, self._ctx.workspace_pk, self._ctx.workspace_uuid)

        def flush() -> None:
            if not batch:
                return
            lo, hi = batch[0][0], batch[-1][0]
            with self._ctx.db.read() as conn:
                ids = {
                    line: eid
                    for line, eid in _all(
                        conn,
                        "SELECT p.line, e.id FROM entry_provenance p JOIN journal_entries e"
                        " ON e.seq = p.entry_seq WHERE p.source_id = ? AND p.line BETWEEN ? AND ?",
                        (cur.id, lo, hi),
                    )
                }
                quarantined = {
                    as_int(r[0]): (as_bytes(r[1]), str(r[2]))
                    for r in _all(
                        conn,
                        "SELECT line, raw, reason FROM quarantine WHERE source_id = ?"
                        " AND line BETWEEN ? AND ?",
                        (cur.id, lo, hi),
                    )
                }
            for n, fate, data in batch:
                got = quarantined.get(n)
                if got is not None and got[1] == TOO_LONG:
                    # The length limit is the importer's choice: check the bytes only.
                    ok = data is None or data.startswith(got[0])
                elif got is not None and got[1] == FORGOTTEN:
                    # No byte of the line is kept (journal forget). An entry line holds if
                    # its entry is the forgotten one; a line quarantined for another reason
                    # whose bytes forget emptied has only the file's prefix hash, checked
                    # before this, to answer for it.
                    ok = isinstance(fate, Bad) or tombstones.forgot(fate.id, fate.canon)
                elif isinstance(fate, Bad):
                    # A cut-off last line that later got its newline reads as invalid
                    # JSON now; its bytes are what decide whether the record still holds.
                    same = got is not None and (
                        got[1] == fate.reason
                        or (got[1] == TRUNCATED and fate.reason == INVALID_JSON)
                    )
                    ok = same and got is not None and (data is None or got[0] == data)
                else:
                    ok = ids.get(n) == fate.id
                if not ok:
                    check.mismatched += 1
            batch.clear()

        for line_no, (_offset, data, length, terminated) in enumerate(LineReader(fh), 1):
            fate: Parsed | Bad = (
                too_long(length, MAX_LINE_BYTES) if data is None else classify(data, terminated)
            )
            batch.append((line_no, fate, data))
            if len(batch) >= CHUNK_LINES:
                flush()
        flush()
        if check.mismatched:
            check.status = "inconsistent"
            check.detail = f"{check.mismatched} line(s) do not match what was recorded for them"


def _all(conn: Connection, sql: str, params: Bindings = ()) -> list[Row]:
    return list(conn.execute(sql, params).fetchall())


def _count_rest(fh: BinaryIO, tail_open: bool) -> tuple[int, int]:
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
