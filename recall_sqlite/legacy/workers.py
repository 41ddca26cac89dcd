"""The import's per-line work in worker processes: each line's parse, validation into a row
or a quarantine reason, canonical form and content id (lines.classify). Everything that
needs the store or the run's state stays with the one writer (chunks.py): the digest of
each line's raw bytes and the run's cache of lines resolved already (a line found there is
never sent), dedup against the store, tombstones, the rows, provenance, quarantine, the
source's progress and its fingerprint, every commit.

A worker gets a piece of a block's lines as raw bytes joined by newlines and gives back
plain tuples (pickled in C, no class of ours). The writer takes the answers in line order
whatever order the workers finish in, keeping blocks in flight through its commits (and,
once a file is all sent, the first blocks of the next new files: they are taken where the
file still holds the same lines), so the store ends exactly as the one-process import
leaves it (tests/unit/legacy/test_workers.py holds that for 1, 2 and 3 workers).

Workers are started by 'spawn' (never 'fork': the writer holds an apsw connection and
threads), load lines.py and what it needs (no apsw), and leave when the writer does. A
worker that dies or raises stops the import with ImportWorkerError: nothing is written
after the last committed chunk, and the next run resumes there.
"""

from __future__ import annotations

import gc
import hashlib
import os
import sys
from collections import deque

from .. import limits
from ..errors import ImportWorkerError
from .lines import Bad, LineReader, classify

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from concurrent.futures import Future, ProcessPoolExecutor

    from ..db import Row

    # A worker's answer for one line: (entry id, its journal row, its canonical JSON or
    # "" when not asked for), or (quarantine reason, detail).
    Outcome = tuple[bytes, Row, str] | tuple[str, str]
    # A block's lines as the workers left them: each line's raw digest (None for a line
    # too long to read, which the writer quarantines from the file) and the workers'
    # answer (None for a line not sent: too long, or resolved earlier in the run).
    Worked = tuple[list[bytes | None], list[Outcome | None]]
    # What the writer walks: a block's lines, {index: length} of the too-long ones,
    # whether they end with a newline, the file's sha256 up to an offset in the block,
    # and the workers' answers (None: the writer classifies the lines itself).
    Block = tuple[list[bytes | None], dict[int, int], bool, Callable[[int], str], Worked | None]
    # A block in flight: the above with the digests, the indexes sent, their futures.
    _Ahead = tuple[
        list[bytes | None],
        dict[int, int],
        bool,
        Callable[[int], str],
        list[bytes | None],
        list[int],
        list[Future[list[Outcome]]],
    ]
    # A block's lines sent: each line's raw digest, the indexes sent, their futures.
    _Sent = tuple[list[bytes | None], list[int], list[Future[list[Outcome]]]]
    # A block sent ahead of its reader: its lines, too-long ones, whether terminated, and
    # what _Sent says.
    _Early = tuple[
        list[bytes | None],
        dict[int, int],
        bool,
        list[bytes | None],
        list[int],
        list[Future[list[Outcome]]],
    ]

# The most workers an import starts: the writer, alone in committing, is the limit
# past a few (bench/RESULTS.md, the legacy import rows).
DEFAULT_JOBS_CAP = 4
# Starting the workers costs ~0.15-0.2 s (spawn: a Python start and the parse modules each);
# a MiB of synapt's lines (~1,700) costs the writer ~30 ms to classify itself, against ~2 ms
# to take the workers' answers. Below ~7 MiB a pool costs more than it spares; under this
# many new bytes an import reads its lines itself (bench/RESULTS.md, row 'import: workers').
POOL_MIN_BYTES = 16 * 1024 * 1024
# Blocks (a MiB of lines each, read by LineReader) in flight: about a chunk's worth
# (importer.CHUNK_LINES of synapt's lines are ~12 MiB), so the workers go on while the
# writer commits one, and memory stays within ~25 MiB (the lines and their answers).
AHEAD_BLOCKS = 12
# Lines a worker takes at a time: a block is cut into pieces, so every worker gets one of
# it. Not smaller: each piece is a task the pool's thread in this process hands on and
# answers, and that thread shares the writer's interpreter lock (bench/RESULTS.md, row
# 'import: pieces of 1,024 lines').
PIECE_LINES = 1024


def default_jobs() -> int:
    """The CPUs this process may run on, at most DEFAULT_JOBS_CAP."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (not on every platform)
        cpus = os.cpu_count() or 1
    return max(1, min(DEFAULT_JOBS_CAP, cpus))


def reruns_main_safely() -> bool:
    """Whether a spawned worker can start without running this program's main script
    again: 'spawn' imports the parent's __main__ by its path unless it is a package's
    __main__ or has no file (python -c, a REPL, an embedding). A script run by its path
    without an `if __name__ == "__main__"` guard would import again in every worker; the
    library's default uses workers only where that cannot happen (the command's script
    is guarded and asks for them itself)."""
    main = sys.modules.get("__main__")
    if getattr(main, "__file__", None) is None:
        return True
    name = str(getattr(getattr(main, "__spec__", None), "name", "") or "")
    return name.endswith(".__main__")


def refuse_in_a_starting_worker() -> None:
    """An import asked for by a main script that a starting worker runs again (a script
    without its `if __name__ == "__main__"` guard that asked for workers): refused at
    once, so the worker dies and the writer's import stops with ImportWorkerError,
    instead of waiting for the writer's lock for ever. (multiprocessing marks a process
    that is still starting the same way for its own check.)"""
    from multiprocessing import current_process

    if getattr(current_process(), "_inheriting", False):
        raise ImportWorkerError(
            "an import was started by a worker process of an import while it started: the"
            " main script that asked for workers runs again in each one; guard its code"
            ' with `if __name__ == "__main__":` or import with jobs=1'
        )


def workers_for(jobs: int | None, new_bytes: int) -> int:
    """How many workers read a load of `new_bytes` not imported before (1: none, the
    writer reads its lines itself); `jobs` as the caller asked (None: the default)."""
    if jobs is None:
        jobs = default_jobs() if reruns_main_safely() else 1
    return jobs if jobs > 1 and new_bytes >= POOL_MIN_BYTES else 1


# -- in a worker ------------------------------------------------------------------------


def classify_block(joined: bytes, terminated: bool, canon: bool) -> list[Outcome]:
    """Lines (`joined` by newlines) -> their outcomes, in line order. `canon`: give each
    entry's canonical JSON too (only pre-v7 tombstones need it)."""
    out: list[Outcome] = []
    for data in joined.split(b"\n"):
        fate = classify(data, terminated)
        if isinstance(fate, Bad):
            out.append((fate.reason, fate.detail))
        else:
            out.append((fate.id, fate.row, fate.canon if canon else ""))
    return out


# The function the workers run, looked up at each submit (tests put a failing one here).
work: Callable[[bytes, bool, bool], list[Outcome]] = classify_block


def _start_worker(field_limit: int, int_digits: int, recursion: int) -> None:
    """A worker's start: the writer's settings that decide a line's fate (its field limit,
    json's integer digits, the recursion depth a nested line may reach); Ctrl-C is the
    writer's to handle; and the worker leaves as soon as the writer is gone."""
    import signal
    import threading
    from multiprocessing import parent_process
    from multiprocessing.connection import wait

    # (The collector's passes cost a worker's parse as they cost the writer, and a
    # worker's lines make no cycles: legacy/importer.py, _collector_paused.)
    gc.disable()
    limits._field_limit[:] = [field_limit]
    sys.set_int_max_str_digits(int_digits)
    sys.setrecursionlimit(recursion)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = parent_process()
    if parent is not None:
        sentinel = parent.sentinel

        def leave_with_the_writer() -> None:
            wait([sentinel])
            os._exit(0)

        threading.Thread(target=leave_with_the_writer, daemon=True).start()


def _started() -> None:
    """The task that starts a worker (ParsePool._start_all)."""


# -- in the writer ----------------------------------------------------------------------


class ParsePool:
    """Worker processes that classify an import's lines, block by block, in order."""

    def __init__(self, jobs: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.jobs = jobs
        # The sources still to be read from their start, in the import's order (expect()),
        # and the first blocks of some of them, sent ahead of their readers. How many
        # blocks were taken from those and how many dropped: for the tests.
        self._upcoming: deque[str] = deque()
        self._expected: set[str] = set()
        self._max_line = 0
        self._early: deque[_SentAhead] = deque()
        self.taken = self.dropped = 0
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(
                limits.max_field_bytes(),
                sys.get_int_max_str_digits(),
                sys.getrecursionlimit(),
            ),
        )
        try:
            self._start_all(self._pool)
        except BaseException:
            self.close()
            raise

    def _start_all(self, pool: ProcessPoolExecutor) -> None:
        """Every worker started now, with Ctrl-C ignored from its birth: a terminal's
        Ctrl-C reaches every process of it, and a worker still starting up would print
        a traceback before its initializer could ignore it. (A Python started with SIGINT
        ignored keeps it ignored; the writer ignores it only while it starts them, from
        its main thread, where signals are handled.) The pool starts a process for each
        task submitted while none is idle."""
        import signal
        import threading

        main = threading.current_thread() is threading.main_thread()
        before = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            for _ in range(self.jobs):
                pool.submit(_started)
        except Exception as exc:
            raise _failed(exc) from exc
        finally:
            if main:
                signal.signal(signal.SIGINT, before)

    def expect(self, paths: list[str], max_line: int) -> None:
        """The sources this import will read from their start, in its order: blocks() sends
        the first blocks of the next ones to the workers once a source is all sent, so the
        workers parse them while the writer takes the current one's answers and commits."""
        self._upcoming = deque(paths)
        self._expected = set(paths)
        self._max_line = max_line

    def blocks(
        self, reader: LineReader, canon: bool, resolved: Mapping[bytes, object], path: str
    ) -> Iterator[Block]:
        """The reader's blocks (of the file at `path`) with the workers' answers, in the
        file's order, some blocks ahead of the caller. A line whose raw digest is in
        `resolved` (the run's lines resolved already: chunks.RunState.raw) is not sent;
        should it have left `resolved` by the time the caller takes it, the caller
        classifies it itself. Blocks sent ahead of the reader (expect()) are taken where
        the file still holds the same lines."""
        pool = self._pool
        if pool is None:
            raise ImportWorkerError("the import's workers were stopped")
        early = self._take(path, reader.start, canon)
        ahead: deque[_Ahead] = deque()
        depth = max(AHEAD_BLOCKS, 2 * self.jobs)
        try:
            for lines, big, terminated in reader.batches():
                sent: _Sent | None = None
                if early:
                    if early[0][:3] == (lines, big, terminated):
                        sent = early.popleft()[3:]
                        self.taken += 1
                    else:
                        self._drop(early)
                if sent is None:
                    sent = self._send(pool, lines, terminated, canon, resolved)
                ahead.append((lines, big, terminated, reader.prefix_of_block(), *sent))
                if len(ahead) >= depth:
                    yield _done(ahead.popleft())
            self._drop(early)  # (the file holds fewer lines than were read ahead of it)
            self._read_ahead(pool, canon, resolved, depth - len(ahead))
            while ahead:
                yield _done(ahead.popleft())
        finally:
            self._drop(early)

    def _send(
        self,
        pool: ProcessPoolExecutor,
        lines: list[bytes | None],
        terminated: bool,
        canon: bool,
        resolved: Mapping[bytes, object],
    ) -> _Sent:
        """A block's lines to the workers, piece by piece: each line's raw digest, the
        indexes sent, their futures."""
        blake = hashlib.blake2b
        digests = [None if x is None else blake(x.strip(), digest_size=16).digest() for x in lines]
        send = [i for i, d in enumerate(digests) if d is not None and d not in resolved]
        futures = []
        for first in range(0, len(send), PIECE_LINES):
            piece = send[first : first + PIECE_LINES]
            joined = b"\n".join([lines[i] for i in piece])  # type: ignore[misc]  # (not None)
            try:
                futures.append(pool.submit(work, joined, terminated, canon))
            except Exception as exc:  # a broken pool refuses new work
                raise _failed(exc) from exc
        return digests, send, futures

    def _read_ahead(
        self, pool: ProcessPoolExecutor, canon: bool, resolved: Mapping[bytes, object], room: int
    ) -> None:
        """The first blocks of the next sources expected, sent now, while fewer than `room`
        blocks are in flight ahead of their readers. A file that cannot be read is left to
        its own import."""
        room -= sum(len(e.blocks) for e in self._early)
        while room > 0 and self._upcoming:
            path = self._upcoming.popleft()
            blocks: deque[_Early] = deque()
            try:
                with open(path, "rb") as fh:
                    reader = LineReader(fh, hashed=False, max_line=self._max_line)
                    for lines, big, terminated in reader.batches():
                        sent = self._send(pool, lines, terminated, canon, resolved)
                        blocks.append((lines, big, terminated, *sent))
                        room -= 1
                        if room <= 0:
                            break
            except OSError:
                self._drop(blocks)
                continue
            self._early.append(_SentAhead(path, canon, blocks))

    def _take(self, path: str, start: int, canon: bool) -> deque[_Early]:
        """The blocks sent ahead for `path`, if it is read from its start as they were; those
        of the sources expected before it, not read after all, are dropped."""
        if path not in self._expected:
            return deque()
        if path in self._upcoming:  # (not read ahead yet: neither it nor those before it)
            while self._upcoming.popleft() != path:
                pass
        while self._early:
            early = self._early.popleft()
            if early.path == path:
                if start == 0 and early.canon == canon:
                    return early.blocks
                self._drop(early.blocks)
                break
            self._drop(early.blocks)
        return deque()

    def _drop(self, blocks: deque[_Early]) -> None:
        """Blocks sent ahead and not taken: their pieces not started are cancelled, the
        others' answers left unread."""
        self.dropped += len(blocks)
        for block in blocks:
            for future in block[5]:
                future.cancel()
        blocks.clear()

    def close(self) -> None:
        """Stop the workers (waiting for the blocks they hold: milliseconds)."""
        while self._early:
            self._drop(self._early.popleft().blocks)
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


class _SentAhead:
    """The first blocks of a source sent to the workers before its import reads it."""

    __slots__ = ("path", "canon", "blocks")

    def __init__(self, path: str, canon: bool, blocks: deque[_Early]) -> None:
        self.path, self.canon, self.blocks = path, canon, blocks


def _done(item: _Ahead) -> Block:
    """A block in flight, once every piece of it is answered, with each line's answer at
    its index."""
    lines, big, terminated, prefix, digests, send, futures = item
    answers: list[Outcome] = []
    try:
        for future in futures:
            answers += future.result()
    except Exception as exc:
        raise _failed(exc) from exc
    if len(answers) != len(send):
        raise ImportWorkerError(
            f"a worker process of the import answered {len(answers)} lines for {len(send)}"
        )
    outcomes: list[Outcome | None] = [None] * len(lines)
    for i, answer in zip(send, answers, strict=True):
        outcomes[i] = answer
    return lines, big, terminated, prefix, (digests, outcomes)


def _failed(exc: BaseException) -> ImportWorkerError:
    from concurrent.futures.process import BrokenProcessPool

    what = (
        "a worker process of the import died"
        if isinstance(exc, BrokenProcessPool)
        else f"a worker process of the import failed ({type(exc).__name__}: {exc})"
    )
    return ImportWorkerError(
        f"{what}; the import stopped after its last committed chunk, and running it again"
        " resumes from there (--jobs 1 reads the lines in this process)"
    )
