"""One source read from a position and committed chunk by chunk (the import's inner loop):
each chunk's rows, provenance, quarantine and the source's progress commit in one
transaction, so a killed import resumes exactly after its last commit (importer.py says
which sources, from where). A source's last chunk may wait to share its transaction with
the next sources' (SHARE_TAILS)."""

from __future__ import annotations

import hashlib
import itertools
import os
from dataclasses import dataclass, field

from ..db import as_int
from ..errors import ImportConflict
from ..journal.bulk import Batch
from ..timestamps import now_us
from .lines import FORGOTTEN, TOO_LONG, Bad, LineReader, classify, too_long
from .sources import Tombstones, blocks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from hashlib import _Hash
    from typing import Any, BinaryIO, Protocol

    from apsw import Connection

    from ..context import StoreContext
    from ..db import Database, Row
    from .lines import Parsed
    from .sources import Source
    from .workers import Block, Outcome, ParsePool

    Progress = Callable[[int, int], None]
    # A chunk's lines that are entries: each entry id first seen in it with its row (the
    # line it was read from last) and that line's raw digest, in line order; the lines
    # that repeat an id seen before in the chunk (line, raw digest, id); the lines found
    # in the run's cache of lines resolved already (line, seq).
    Found = tuple[
        dict[bytes, Row],
        list[bytes],
        list[tuple[int, bytes, bytes]],
        list[tuple[int, int]],
    ]
    # A chunk's entries and quarantine, its last line, end offset, whether the line there
    # is unterminated, the sha256 of the file up to it, what the record said before.
    Chunk = tuple[
        Found,
        list[tuple[int, int, int, Bad, bytes | None]],
        int,
        int,
        bool,
        str,
        tuple[int, int],
    ]

    class Tally(Protocol):
        """What a source's import counts as its chunks commit (importer.SourceResult)."""

        lines: int
        imported: int
        duplicates: int
        quarantined: int
        total_lines: int
        action: str
        note: str


# Quarantined raw bytes kept in the database per line (the source keeps the rest).
RAW_KEEP = 256 * 1024 * 1024
# A source's last chunk is held back and written with the next ones, in one transaction,
# until a chunk's worth of lines is held: a commit costs more than the rows of a small
# source (bench/RESULTS.md, row 'import: small sources share a transaction'). Only the
# writing waits, never the lock: it is taken only to write what is held.
SHARE_TAILS = True
# The in-run cache of raw lines already resolved (16-byte digest -> entry seq): it spares
# re-parsing the copies of a line that buckets share. Bounded so memory stays flat.
RAW_CACHE_MAX = 1_000_000


@dataclass
class RunState:
    run_id: int
    total: int
    progress: Progress | None
    done: int = 0
    # raw line digest -> journal seq, for lines already resolved in this run
    raw: dict[bytes, int] = field(default_factory=dict)
    # The store, and the last chunks of sources held back to be written together
    # (SHARE_TAILS) with their lines.
    db: Database | None = None
    held: list[Callable[[], None]] = field(default_factory=list)
    pending: int = 0
    # While held chunks are written: the batch their rows join, written as one before the
    # transaction they share commits.
    batch: Batch | None = None

    def hold(self, write: Callable[[], None], lines: int, chunk_lines: int) -> None:
        """A source's last chunk, written with the next ones once a chunk's worth of
        lines is held (or by flush())."""
        self.held.append(write)
        self.pending += lines
        if self.pending >= chunk_lines:
            self.flush()

    def flush(self, then: Callable[[], None] | None = None) -> None:
        """Write every chunk held, in order, and `then` (the next source's first full
        chunk), in one transaction: each a savepoint in it, so one that fails undoes only
        itself (its exception, raised once the others are committed, is `then`'s own).
        Their rows are one batch, written after the last of them: should that fail, the
        whole transaction is rolled back (no chunk is recorded without its rows)."""
        held, self.held, self.pending = self.held, [], 0
        if then is not None:
            held.append(then)
        db = self.db
        if len(held) < 2 or db is None:
            for write in held:
                write()
            return
        with db.shared() as shared:
            batch = self.batch = Batch()
            try:
                for write in held:
                    write()
            finally:
                self.batch = None
                # (Not open: nothing was written, or SQLite rolled it all back, which the
                # failed write reports.)
                if shared.open:
                    try:
                        with db.write() as conn:
                            batch.finish(conn)
                    except BaseException:
                        shared.abandon()
                        raise

    def advance(self, nbytes: int) -> None:
        self.done += nbytes
        if self.progress is not None:
            self.progress(self.done, self.total)


class Chunker:
    """Reads one source from a position and commits it chunk by chunk."""

    def __init__(
        self,
        ctx: StoreContext,
        src: Source,
        state: RunState,
        result: Tally,
        path: str,
        chunk_lines: int,
        max_line: int,
        pool: ParsePool | None = None,
    ) -> None:
        self.ctx, self.src, self.state, self.result = ctx, src, state, result
        self.path, self.chunk_lines, self.max_line = path, max(1, chunk_lines), max_line
        self.pool = pool

    def run(self, fh: BinaryIO, start: int, hasher: _Hash, tail_fix: bool) -> None:
        ctx, state, src = self.ctx, self.state, self.src
        ws_pk, wt_pk = ctx.workspace_pk, src.worktree_id
        cache = state.raw
        tombstones = Tombstones(ctx.db, ws_pk, ctx.workspace_uuid)
        reader = LineReader(fh, offset=start, hasher=hasher, max_line=self.max_line)
        read: Iterator[Block] = (
            ((lines, big, terminated, reader.prefix_of_block(), None))
            for lines, big, terminated in reader.batches()
        )
        if self.pool is not None:
            read = self.pool.blocks(reader, tombstones.needs_canon, cache, self.path)
        prefix = reader.prefix_of_block()
        line_no = src.lines
        expected = (src.size, src.lines)
        rows: dict[bytes, tuple[Any, ...]] = {}
        firsts: list[bytes] = []
        again: list[tuple[int, bytes, bytes]] = []
        cached: list[tuple[int, int]] = []
        quarantine: list[tuple[int, int, int, Bad, bytes | None]] = []
        forgot = tombstones.forgot if tombstones.any else None
        end, tail_open = start, src.tail_open and not tail_fix
        reported = start
        blake = hashlib.blake2b
        stored = now_us()
        chunk, max_line = self.chunk_lines, self.max_line
        # The line that fills the first chunk (with the lines held before it) and each next.
        full_at = line_no + chunk - state.pending
        fate: Parsed | Bad
        answer: Outcome | None
        for batch, big, terminated, prefix, worked in read:
            tail_open = not terminated
            newline = 1 if terminated else 0
            digests, outcomes = worked if worked is not None else ([], [])
            for i, data in enumerate(batch):
                line_no += 1
                offset = end
                if data is None:
                    length = big[i]
                    quarantine.append((line_no, offset, length, too_long(length, max_line), None))
                else:
                    length = len(data)
                    if worked is None:
                        digest = blake(data.strip(), digest_size=16).digest()
                    else:
                        digest = digests[i]  # type: ignore[assignment]  # (data is not None)
                    seq = cache.get(digest)
                    if seq is not None:
                        cached.append((line_no, seq))
                    else:
                        # The line's (id, row, canonical JSON), or why it is quarantined: a
                        # worker's plain answer (workers.classify_block) as it came.
                        answer = outcomes[i] if worked is not None else None
                        if answer is None:
                            # (With workers: a line not sent, as resolved earlier in the
                            # run, whose digest has left the cache since.)
                            fate = classify(data, terminated)
                            answer = (
                                (fate.reason, fate.detail)
                                if isinstance(fate, Bad)
                                else (fate.id, fate.row, fate.canon)
                            )
                        if len(answer) == 2:
                            quarantine.append((line_no, offset, length, Bad(*answer), data))
                        else:
                            eid, row, canon = answer
                            if forgot is not None and forgot(eid, canon):
                                # Forgotten (journal forget): accounted for, never
                                # re-imported, and no byte of the line kept.
                                bad = Bad(FORGOTTEN, "a forgotten entry; not kept")
                                quarantine.append((line_no, offset, length, bad, b""))
                            elif eid not in rows:
                                rows[eid] = (eid, ws_pk, wt_pk, stored, *row, line_no)
                                firsts.append(digest)
                            else:
                                again.append((line_no, digest, eid))
                end = offset + length + newline
                # A chunk's worth of lines with the held ones (the sources' before this
                # one, written first in the same transaction: RunState.flush).
                if line_no >= full_at:
                    full: Chunk = (
                        (rows, firsts, again, cached),
                        quarantine,
                        line_no,
                        end,
                        tail_open,
                        prefix(end),
                        expected,
                    )
                    expected = self._full(full)
                    full_at = line_no + chunk
                    rows, firsts, again, cached, quarantine = {}, [], [], [], []
                    state.advance(end - reported)
                    reported = end
                    stored = now_us()
        # The last commit also records the file's mtime, so an unchanged re-run can skip
        # it without reading: only when nothing was appended while we read.
        st = os.fstat(fh.fileno())
        complete_mtime = st.st_mtime_ns if st.st_size == end else 0
        last: Chunk = (
            (rows, firsts, again, cached),
            quarantine,
            line_no,
            end,
            tail_open,
            prefix(end),
            expected,
        )
        lines = line_no - expected[1]
        if SHARE_TAILS and lines < chunk:
            state.hold(lambda: self._last(last, complete_mtime), lines, chunk)
        else:
            state.flush()
            self._commit(*last, True, complete_mtime)
        state.advance(end - reported)
        self.result.total_lines = line_no

    def _commit(
        self,
        found: Found,
        quarantine: list[tuple[int, int, int, Bad, bytes | None]],
        line_no: int,
        end: int,
        tail_open: bool,
        sha: str,
        expected: tuple[int, int],
        final: bool,
        mtime_ns: int = 0,
    ) -> tuple[int, int]:
        src, result = self.src, self.result
        rows, firsts, again, cached = found
        shared = self.state.batch
        batch = shared if shared is not None else Batch()
        # Applied only after the commit: a rolled-back chunk must not leave seqs behind.
        resolved: Iterable[tuple[bytes, int]] = ()
        with self.ctx.db.write() as conn:
            now = conn.execute(
                "SELECT size, lines, superseded FROM import_sources WHERE id = ?", (src.id,)
            ).fetchall()
            if not now or (as_int(now[0][0]), as_int(now[0][1])) != expected or now[0][2]:
                raise ImportConflict(f"{self.path} is being imported by another process")
            # First what can fail for this source alone (its file, read again for a line
            # too long to hold): its rows join the batch only after it.
            for line, offset, length, bad, data in quarantine:
                self._quarantine(conn, line, offset, length, bad, data)
            # Rows already stored are looked up, not re-inserted: a conflicting INSERT
            # still burns an AUTOINCREMENT seq, and seqs must not depend on where an
            # earlier, killed run stopped. The new rows go in as one batch (with the other
            # chunks of a shared transaction) that leaves the state row-by-row inserts
            # would (journal/bulk.py), each with its line's provenance ('imported').
            # (In a shared transaction its part is written later, if this savepoint's
            # record of its lines is still there then.)
            kept_if = self._recorded(line_no) if shared is not None else None
            got = batch.add(conn, list(rows.values()), src.id, kept_if)
            # Every other line of the chunk that is an entry is a duplicate: of a row
            # stored before, of a line before it in the chunk, of a line resolved before
            # in the run.
            old = [(eid, s.seq) for eid, s in got.items() if not s.created]
            prov = [(src.id, rows[eid][-1], seq, "duplicate") for eid, seq in old]
            prov += [(src.id, line, got[eid].seq, "duplicate") for line, _, eid in again]
            prov += [(src.id, line, seq, "duplicate") for line, seq in cached]
            batch.duplicates(prov)
            imported, duplicates = len(rows) - len(old), len(prov)
            if rows:
                # (The rows created have consecutive seqs in line order, so where none was
                # stored before, their seqs need no lookup.)
                first = got[next(iter(rows))].seq
                seqs = range(first, first + len(rows)) if not old else [got[e].seq for e in rows]
                resolved = itertools.chain(
                    zip(firsts, seqs, strict=True),
                    ((digest, got[eid].seq) for _, digest, eid in again),
                )
            nq = len(quarantine)
            conn.execute(
                "UPDATE import_sources SET size = ?, sha256 = ?, lines = ?,"
                " tail_open = ?, imported = imported + ?, duplicates = duplicates + ?,"
                " quarantined = quarantined + ?, complete = ?, mtime_ns = ?, last_run_id = ?"
                " WHERE id = ?",
                (
                    end,
                    sha,
                    line_no,
                    int(tail_open),
                    imported,
                    duplicates,
                    nq,
                    int(final),
                    mtime_ns if final else 0,
                    self.state.run_id,
                    src.id,
                ),
            )
            conn.execute(
                "UPDATE import_runs SET lines_total = lines_total + ?, imported = imported + ?,"
                " duplicates = duplicates + ?, quarantined = quarantined + ? WHERE id = ?",
                (imported + duplicates + nq, imported, duplicates, nq, self.state.run_id),
            )
            if shared is None:
                batch.keep()
                batch.finish(conn)
        if shared is not None:
            # (Its rows are written with the transaction's other chunks: RunState.flush.)
            shared.keep()
        # (Inside a shared transaction a failure of the database can still undo this
        # chunk, but only by failing the run: the cache and the counts end with the run.)
        cache = self.state.raw
        if len(cache) + len(rows) + len(again) > RAW_CACHE_MAX:
            cache.clear()
        cache.update(resolved)
        result.lines += imported + duplicates + nq
        result.imported += imported
        result.duplicates += duplicates
        result.quarantined += nq
        return end, line_no

    def _recorded(self, line_no: int) -> Callable[[Connection], bool]:
        """Whether the source's record says its lines up to `line_no` are in: whether the
        savepoint of the chunk that ends there was released (a batch's part is written
        only if it was: journal/bulk.py, Batch)."""
        source = self.src.id

        def recorded(conn: Connection) -> bool:
            return bool(
                conn.execute(
                    "SELECT 1 FROM import_sources WHERE id = ? AND lines >= ?", (source, line_no)
                ).fetchall()
            )

        return recorded

    def _full(self, chunk: Chunk) -> tuple[int, int]:
        """A chunk that is not the source's last, written with the chunks held (if any) in
        one transaction; what the record says after it."""
        after: list[tuple[int, int]] = []
        self.state.flush(lambda: after.append(self._commit(*chunk, False)))
        return after[0]

    def _last(self, last: Chunk, mtime_ns: int) -> None:
        """The source's last chunk, written after it was read (RunState.hold): what its
        failure means is said in its own result, as the import says it of a source read
        and written at once (importer.py, _import_source)."""
        try:
            self._commit(*last, True, mtime_ns)
        except ImportConflict as exc:
            self.result.action, self.result.note = "failed", str(exc)
        except OSError as exc:
            self.result.action = "failed"
            self.result.note = f"read failed: {exc.strerror or exc}"

    def _quarantine(
        self, conn: Connection, line: int, offset: int, length: int, bad: Bad, data: bytes | None
    ) -> None:
        if data is not None:
            conn.execute(
                "INSERT INTO quarantine (source_id, line, offset, raw, raw_length, reason,"
                " detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (self.src.id, line, offset, data, length, bad.reason, bad.detail),
            )
            return
        # Too long to hold: stream it from the file into an incremental blob.
        keep = min(length, RAW_KEEP)
        detail = (
            bad.detail
            if keep == length
            else (
                f"{bad.detail}; the first {keep} bytes are kept here, the rest is at byte"
                f" {offset + keep} of the source"
            )
        )
        rowid = as_int(
            conn.execute(
                "INSERT INTO quarantine (source_id, line, offset, raw, raw_length, reason, detail)"
                " VALUES (?, ?, ?, zeroblob(?), ?, ?, ?) RETURNING id",
                (self.src.id, line, offset, keep, length, TOO_LONG, detail),
            ).fetchall()[0][0]
        )
        blob = conn.blob_open("main", "quarantine", "raw", rowid, True)
        try:
            with open(self.path, "rb") as fh:
                fh.seek(offset)
                for piece in blocks(fh, keep):
                    blob.write(piece)
        finally:
            blob.close()
