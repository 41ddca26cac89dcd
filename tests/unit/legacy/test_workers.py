"""The import's lines read by worker processes (legacy/workers.py): the store ends the same
whatever the worker count (every table an import writes, ids and seqs included), on the
legacy corpus and on generated histories; a worker that dies or raises stops the import
with one clean error, and the next run resumes to the uninterrupted result."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import open_store
from recall_sqlite.demo import synapt_line
from recall_sqlite.legacy import chunks, lines, workers
from recall_sqlite.legacy.workers import classify_block, workers_for
from recall_sqlite.store import context_of
from tests.behaviour.test_legacy_kill import _clone, _corpus
from tests.conftest import make_workspace
from tests.helpers import TESTS, user_env

CORPUS = TESTS / "legacy_corpus"
MARKER = "the line a worker fails on"


def contents(root: Path) -> dict[str, Any]:
    """Every row an import writes, without the clocks (stored_us, the run's times) and
    with source paths from the workspace root."""
    with open_store(root, root=root) as store:
        q = context_of(store).db.query
        cut = len(str(root))

        def rel(sql: str) -> list[tuple[Any, ...]]:
            return [(str(p)[cut:] if str(p).startswith(str(root)) else p, *r) for p, *r in q(sql)]

        columns = [
            str(c)
            for _, c, *_ in q("PRAGMA table_info(journal_entries)")
            if c not in ("stored_us",)
        ]
        return {
            "entries": q(f"SELECT {', '.join(columns)} FROM journal_entries ORDER BY seq"),
            "provenance": rel(
                "SELECT s.path, p.line, p.entry_seq, p.status FROM entry_provenance p"
                " JOIN import_sources s ON s.id = p.source_id ORDER BY 1, 2"
            ),
            "quarantine": rel(
                "SELECT s.path, q.line, q.offset, q.raw, q.raw_length, q.reason, q.detail"
                " FROM quarantine q JOIN import_sources s ON s.id = q.source_id ORDER BY 1, 2"
            ),
            "sources": rel(
                "SELECT path, id, version, superseded, bucket, layout, worktree_id, size, sha256,"
                " mtime_ns = 0, lines, tail_open, complete, imported, duplicates, quarantined,"
                " first_run_id, last_run_id FROM import_sources ORDER BY 1, 3"
            ),
            "runs": q(
                "SELECT id, status, lines_total, imported, duplicates, quarantined"
                " FROM import_runs ORDER BY id"
            ),
            "counts_wt": q("SELECT * FROM journal_counts_wt ORDER BY 1, 2, 3"),
            "counts_ws": q("SELECT * FROM journal_counts_ws ORDER BY 1, 2"),
        }


def _import(root: Path, jobs: int, *, share: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Import the workspace at `root` with `jobs`; after every commit, each source's
    record must name a prefix of its file by that prefix's sha256 (what a resume after a
    kill checks), although the workers have read blocks past it. Without `share` every
    chunk commits on its own (so the check runs after each); with it the last chunks of
    small sources are written together, as by default (chunks.SHARE_TAILS), and are
    checked once committed."""
    checked = 0
    with open_store(root, root=root) as store, pytest.MonkeyPatch.context() as mp:
        if not share:
            mp.setattr(chunks, "SHARE_TAILS", False)
        other = apsw.Connection(str(store.workspace.db_path), flags=apsw.SQLITE_OPEN_READONLY)

        def check(done: int = 0, total: int = 0) -> None:
            nonlocal checked
            for key, size, sha in other.execute("SELECT path, size, sha256 FROM import_sources"):
                data = (root / str(key)).read_bytes()[: int(size)]
                assert hashlib.sha256(data).hexdigest() == sha, (key, size)
                checked += 1

        try:
            report = store.legacy.import_paths([root], jobs=jobs, progress=check, **kwargs)
            if share:
                check()
        finally:
            other.close()
    assert report.jobs == jobs, "the workers were not used: the test would prove nothing"
    assert checked or not report.to_dict()["lines_total"]
    return report.to_dict()


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers for any load, and blocks of a few lines: many blocks in flight at once,
    lines that span blocks, workers that finish out of order; and the run's cache of
    resolved lines cleared often, so lines not sent to the workers (resolved when read)
    have left it when the writer takes them."""
    monkeypatch.setattr(workers, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(workers, "PIECE_LINES", 3)
    monkeypatch.setattr(lines, "_BLOCK", 512)
    monkeypatch.setattr(chunks, "RAW_CACHE_MAX", 40)


def _workspace(base: Path) -> Path:
    return make_workspace(base)


def _put(root: Path, name: str, data: bytes) -> None:
    path = root / ".synapt" / "recall" / "worktrees" / name / "journal.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


@pytest.mark.usefixtures("small_blocks")
def test_the_corpus_imports_the_same_whatever_the_worker_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_sqlite import limits

    expected = json.loads((CORPUS / "malformed.expected.json").read_text())
    # The field limit the corpus needs, set in this process only: the workers must get it
    # from the writer (two of its lines are over it).
    monkeypatch.setattr(limits, "_field_limit", [expected["max_field_bytes"]])
    base = _workspace(tmp_path / "base")
    _corpus(base, random.Random(11))
    _put(base, "corpus", (CORPUS / "malformed.jsonl").read_bytes())
    open_store(base).close()  # the workspace id every clone shares
    got = {}
    for jobs in (1, 2, 3):
        root = _clone(base, tmp_path / f"jobs{jobs}")
        report = _import(root, jobs, chunk_lines=37, max_line=expected["max_line_bytes"])
        assert report["ok"]
        got[jobs] = contents(root)
    assert got[1]["quarantine"] and got[1]["entries"]
    corpus = [r for r in got[1]["quarantine"] if "/corpus/" in str(r[0])]
    fates = {r[1]: r[5] for r in corpus}
    assert [fates.get(i + 1) for i in range(len(expected["lines"]))] == [
        None if f in ("imported", "duplicate") else f for f in expected["lines"]
    ]
    assert got[2] == got[1]
    assert got[3] == got[1]


# -- generated histories -------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_valid = st.builds(
    lambda ts, sid, focus, done, auto, enriched: synapt_line(
        timestamp=f"2026-02-{1 + ts // 24:02d}T{ts % 24:02d}:00:00+00:00",
        session_id=sid,
        focus=focus,
        done=done,
        auto=auto,
        enriched=enriched,
    ).encode(),
    st.integers(0, 24 * 20 - 1),
    st.sampled_from(["", "s1", "s2", "s3"]),
    _text,
    st.lists(_text, max_size=2),
    st.booleans(),
    st.booleans(),
)
_malformed = st.one_of(
    st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")),
    _valid.map(lambda b: b[: len(b) // 2]),
    st.just(b'{"timestamp": "yesterday"}'),
    st.just(b"[1, 2]"),
)
_long = _valid.map(lambda b: b.replace(b'"focus": "', b'"focus": "' + b"x" * 700, 1))
# ("dup", k): a copy of the k-th line written before (modulo), as the buckets of one
# workspace share them.
_op = st.one_of(
    _valid,
    _valid,
    _malformed,
    _long,
    st.tuples(st.just("dup"), st.integers(0, 1000)),
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    history=st.lists(st.tuples(st.integers(0, 2), _op), min_size=1, max_size=60),
    unterminated=st.booleans(),
    chunk=st.integers(1, 9),
    share=st.booleans(),
)
@pytest.mark.usefixtures("small_blocks")
def test_generated_histories_import_the_same_with_workers(
    history: list[tuple[int, bytes | tuple[str, int]]], unterminated: bool, chunk: int, share: bool
) -> None:
    written: list[bytes] = []
    buckets: dict[int, list[bytes]] = {}
    for bucket, op in history:
        data = written[op[1] % len(written)] if isinstance(op, tuple) and written else op
        if isinstance(data, tuple):
            data = b""
        written.append(data)
        buckets.setdefault(bucket, []).append(data)
    with tempfile.TemporaryDirectory() as tmp:
        base = _workspace(Path(tmp) / "base")
        for b, these in buckets.items():
            end = b"" if unterminated and b == max(buckets) else b"\n"
            _put(base, f"b{b}", b"\n".join(these) + end)
        open_store(base).close()
        got = []
        for jobs in (1, 2):
            root = _clone(base, Path(tmp) / f"jobs{jobs}")
            report = _import(root, jobs, share=share, chunk_lines=chunk, max_line=400)
            # (An unterminated empty last line is no line.)
            assert report["lines_total"] >= len(written) - 1
            got.append(contents(root))
        assert got[1] == got[0]


# -- a worker that fails ---------------------------------------------------------------


def dies_on_marker(joined: bytes, terminated: bool, canon: bool) -> Any:
    """A worker that dies (as by a kill or a crash) on the block holding MARKER."""
    if MARKER.encode() in joined:
        os._exit(7)
    return classify_block(joined, terminated, canon)


def raises_on_marker(joined: bytes, terminated: bool, canon: bool) -> Any:
    if MARKER.encode() in joined:
        raise RuntimeError("planted failure")
    return classify_block(joined, terminated, canon)


FAILING_CHILD = """
import sys
from recall_sqlite.cli import main
from recall_sqlite.legacy import chunks, lines, workers
from tests.unit.legacy import test_workers
workers.POOL_MIN_BYTES, lines._BLOCK = 0, 2048
workers.work = getattr(test_workers, sys.argv[2])
sys.exit(main(["--cwd", sys.argv[1], "import", "--jobs", "2"]))
"""


def _with_marker(base: Path) -> None:
    _corpus(base, random.Random(5))
    path = base / ".synapt" / "recall" / "worktrees" / "server" / "journal.jsonl"
    kept = path.read_text().splitlines()
    kept.insert(
        len(kept) * 2 // 3, synapt_line(timestamp="2026-01-09T00:00:00+00:00", focus=MARKER)
    )
    path.write_text("\n".join(kept) + "\n")


@pytest.mark.parametrize(
    ("how", "says"),
    [("dies_on_marker", "died"), ("raises_on_marker", "RuntimeError: planted failure")],
)
def test_a_failing_worker_stops_the_import_cleanly_and_a_rerun_resumes(
    tmp_path: Path, how: str, says: str
) -> None:
    base = _workspace(tmp_path / "base")
    _with_marker(base)
    open_store(base).close()
    reference = _clone(base, tmp_path / "reference")
    _import(reference, 1)
    want = contents(reference)

    victim = _clone(base, tmp_path / "victim")
    done = subprocess.run(
        [sys.executable, "-c", FAILING_CHILD, str(victim), how],
        capture_output=True,
        text=True,
        timeout=120,  # a hang fails the test
        env=user_env(),
        cwd=str(Path(TESTS).parent),
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("recall-sqlite: a worker process of the import"), done.stderr
    assert says in done.stderr
    with open_store(victim, root=victim) as store:
        db = context_of(store).db
        assert db.query("SELECT status FROM import_runs")[-1][0] == "failed"
        # The chunks before the failure stayed committed; the marker's file is not done.
        assert db.query("SELECT count(*) FROM journal_entries")[0][0] > 0
        server = db.query("SELECT complete FROM import_sources WHERE bucket = 'server'")
        assert server in ([], [(0,)])
    _import(victim, 1)
    got = contents(victim)
    # The failed run is one run more, and the sources' run ids say which run last read
    # them; everything else is as if the import had never failed.
    assert [r[1] for r in got.pop("runs")] == ["failed", "done"]
    assert [r[1] for r in want.pop("runs")] == ["done"]
    assert [r[:-2] for r in got.pop("sources")] == [r[:-2] for r in want.pop("sources")]
    assert got == want


# -- how many --------------------------------------------------------------------------


def test_a_small_load_starts_no_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    assert workers_for(4, workers.POOL_MIN_BYTES - 1) == 1
    assert workers_for(4, workers.POOL_MIN_BYTES) == 4
    assert workers_for(1, 1 << 40) == 1
    monkeypatch.setattr(workers, "reruns_main_safely", lambda: False)
    assert workers_for(None, 1 << 40) == 1, "a script run by its path would run again"
    assert workers_for(3, 1 << 40) == 3, "asked for: the caller guarded its script"
    monkeypatch.setattr(workers, "reruns_main_safely", lambda: True)
    assert workers_for(None, 1 << 40) == workers.default_jobs()
    assert 1 <= workers.default_jobs() <= workers.DEFAULT_JOBS_CAP


def test_jobs_is_checked(tmp_path: Path) -> None:
    from recall_sqlite.errors import InvalidInputError

    root = _workspace(tmp_path)
    with open_store(root) as store, pytest.raises(InvalidInputError, match="jobs"):
        store.legacy.import_paths([root], jobs=0)


# -- the command -------------------------------------------------------------------------


def test_import_jobs_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], small_blocks: None
) -> None:
    from recall_sqlite.cli import main

    base = _workspace(tmp_path / "base")
    _corpus(base, random.Random(2))
    open_store(base).close()
    got = []
    for jobs in ("1", "2"):
        root = _clone(base, tmp_path / f"jobs{jobs}")
        assert main(["--cwd", str(root), "import", "--jobs", jobs, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["jobs"] == int(jobs)
        got.append(contents(root))
    assert got[1] == got[0]
    with pytest.raises(SystemExit) as stopped:
        main(["--cwd", str(base), "import", "--jobs", "0"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--jobs" in err and "Traceback" not in err


def test_the_commands_script_does_nothing_when_a_worker_runs_it_again() -> None:
    """'spawn' runs the parent's main script in each worker as `__mp_main__`: the
    command's own script must then define its names and run nothing."""
    import runpy

    script = Path(TESTS).parent / "scripts" / "recall-sqlite"
    names = runpy.run_path(str(script), run_name="__mp_main__")
    assert "entry" in names


UNGUARDED = """
import sys
from recall_sqlite import open_store
from recall_sqlite.legacy import workers
workers.POOL_MIN_BYTES = 0
root = sys.argv[1]
with open_store(root, root=root) as store:
    store.legacy.import_paths([root], jobs=2)
"""


def test_a_script_without_its_main_guard_that_asks_for_workers_fails_without_hanging(
    tmp_path: Path,
) -> None:
    """Each spawned worker runs such a script again; its import is refused at once (it
    would wait for the writer's lock for ever), so the writer's import stops cleanly."""
    root = _workspace(tmp_path / "ws")
    _corpus(root, random.Random(4))
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED)
    done = subprocess.run(
        [sys.executable, str(script), str(root)],
        capture_output=True,
        text=True,
        timeout=120,  # a hang fails the test
        env={**user_env(), "PYTHONPATH": str(Path(TESTS).parent)},
    )
    assert done.returncode == 1, done.stderr
    said = [s for s in done.stderr.splitlines() if s.startswith("recall_sqlite.errors.")]
    # The script's run in a worker: its import refused, the worker gone ...
    assert any("ImportWorkerError: an import was started by a worker process" in s for s in said), (
        done.stderr[-3000:]
    )
    # ... and so the writer's import stopped.
    assert said[-1].startswith(
        "recall_sqlite.errors.ImportWorkerError: a worker process of the import died"
    ), said


@pytest.mark.usefixtures("small_blocks")
def test_forgotten_entries_stay_out_whatever_the_worker_count(tmp_path: Path) -> None:
    """Tombstones are the writer's: a line whose entry was forgotten (its id now, or the
    id a store before schema v7 gave it, which needs the entry's canonical form from the
    worker) is quarantined 'forgotten' with workers as without."""
    from recall_sqlite.journal.codec import pre_v7_entry_id
    from recall_sqlite.legacy.lines import Parsed, classify

    base = _workspace(tmp_path / "base")
    _corpus(base, random.Random(9))
    open_store(base).close()
    path = base / ".synapt" / "recall" / "worktrees" / "docs" / "journal.jsonl"
    sample = [classify(x, True) for x in path.read_bytes().splitlines()[:200]]
    parsed = [p for p in sample if isinstance(p, Parsed)]
    v7 = parsed[0]
    old = next(p for p in parsed if p.id != v7.id)
    got = []
    for jobs in (1, 2):
        root = _clone(base, tmp_path / f"jobs{jobs}")
        with open_store(root, root=root) as store:
            ctx = context_of(store)
            with ctx.db.write() as conn:
                conn.executemany(
                    "INSERT INTO journal_tombstones (workspace_id, id, formula, forgotten_at)"
                    " VALUES (?, ?, ?, 'x')",
                    [
                        (ctx.workspace_pk, v7.id, 2),
                        (ctx.workspace_pk, pre_v7_entry_id(store.workspace.id, old.canon), 1),
                    ],
                )
        _import(root, jobs)
        got.append(contents(root))
    forgotten = [q for q in got[0]["quarantine"] if q[5] == "forgotten"]
    assert len(forgotten) >= 2 and all(q[3] == b"" for q in forgotten)
    assert got[1] == got[0]


CTRL_C_CHILD = """
import os, signal, sys
from recall_sqlite.cli import main
from recall_sqlite.legacy import chunks, lines, workers
workers.POOL_MIN_BYTES, lines._BLOCK = 0, 2048
# As in a terminal: a test run started in the background of a shell without job control
# inherits SIGINT ignored, and Python then takes no Ctrl-C at all.
signal.signal(signal.SIGINT, signal.default_int_handler)
def ctrl_c():
    os.killpg(os.getpgid(0), signal.SIGINT)  # as a terminal's Ctrl-C: every process of it
if sys.argv[2] == "after a commit":
    commit = chunks.Chunker._commit
    def commit_then_ctrl_c(self, *args, **kwargs):
        done = commit(self, *args, **kwargs)
        ctrl_c()
        return done
    chunks.Chunker._commit = commit_then_ctrl_c
else:  # as the workers start: they are starting Python
    start = workers.ParsePool._start_all
    def start_then_ctrl_c(self, pool):
        start(self, pool)
        ctrl_c()
    workers.ParsePool._start_all = start_then_ctrl_c
sys.exit(main(["--cwd", sys.argv[1], "import", "--jobs", "2"]))
"""


@pytest.mark.parametrize("when", ["after a commit", "as the workers start"])
@pytest.mark.usefixtures("small_blocks")
def test_ctrl_c_stops_an_import_with_workers_in_one_line(tmp_path: Path, when: str) -> None:
    """Ctrl-C reaches the workers too: they leave it to the writer, which stops after its
    last commit and says so in one line; the next run resumes to the same store."""
    base = _workspace(tmp_path / "base")
    _corpus(base, random.Random(6))
    open_store(base).close()
    reference = _clone(base, tmp_path / "reference")
    _import(reference, 1)
    victim = _clone(base, tmp_path / "victim")
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C_CHILD, str(victim), when],
        capture_output=True,
        text=True,
        timeout=120,
        env=user_env(),
        cwd=str(Path(TESTS).parent),
        start_new_session=True,  # its own process group: the signal stays in it
    )
    assert (done.returncode, done.stderr) == (130, "recall-sqlite: interrupted\n")
    _import(victim, 2)
    want, got = contents(reference), contents(victim)
    assert [r[1] for r in got.pop("runs")] == ["interrupted", "done"]
    want.pop("runs")
    assert [r[:-2] for r in got.pop("sources")] == [r[:-2] for r in want.pop("sources")]
    assert got == want


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads a process's signal mask in /proc")
def test_a_worker_ignores_ctrl_c_from_its_birth() -> None:
    """A terminal's Ctrl-C reaches every worker, also one still starting Python (where a
    handler set later would come too late and it would print a traceback): SIGINT is
    ignored in each from the moment it exists, and the writer's own handler is back."""
    import signal

    before = signal.getsignal(signal.SIGINT)
    pool = workers.ParsePool(2)
    try:
        assert signal.getsignal(signal.SIGINT) is before
        procs = list(pool._pool._processes.values())  # type: ignore[union-attr]
        assert len(procs) == 2
        for p in procs:
            status = Path(f"/proc/{p.pid}/status").read_text()
            ignored = int(next(x for x in status.splitlines() if x.startswith("SigIgn:"))[7:], 16)
            assert ignored & (1 << (signal.SIGINT - 1)), f"worker {p.pid} would take Ctrl-C"
    finally:
        pool.close()


def _read_ahead_counts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(blocks taken, blocks dropped) of each pool, as it closes."""
    seen: list[tuple[int, int]] = []
    close = workers.ParsePool.close

    def closing(self: workers.ParsePool) -> None:
        seen.append((self.taken, self.dropped))
        close(self)

    monkeypatch.setattr(workers.ParsePool, "close", closing)
    monkeypatch.setattr(workers, "POOL_MIN_BYTES", 0)
    return seen


def test_sources_read_ahead_are_taken_and_the_store_ends_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a source is all sent to the workers, the first blocks of the next new sources
    go too (ParsePool.expect), and their imports take the answers: the store ends as the
    one-process import leaves it."""
    seen = _read_ahead_counts(monkeypatch)
    base = _workspace(tmp_path / "base")
    _corpus(base, random.Random(5))
    one, two = _clone(base, tmp_path / "one"), _clone(base, tmp_path / "two")
    _import(one, 1, share=True)
    _import(two, 2, share=True)
    assert contents(two) == contents(one)
    assert seen == [(2, 0)], "the second and third sources' one block each were read ahead"


def test_a_source_changed_after_it_was_read_ahead_is_imported_as_it_is_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line appended to a source after its first blocks went to the workers: its import
    finds other lines there, drops the answers sent ahead and reads the file as it is."""
    seen = _read_ahead_counts(monkeypatch)
    extra = synapt_line(timestamp="2026-02-01T10:00:00+00:00", session_id="new", focus="late")
    changed: list[str] = []
    read_ahead = workers.ParsePool._read_ahead

    def then_append(self: workers.ParsePool, *args: Any) -> None:
        read_ahead(self, *args)
        for early in self._early:
            if early.path not in changed:
                changed.append(early.path)
                with open(early.path, "a", encoding="utf-8") as fh:
                    fh.write(extra + "\n")

    monkeypatch.setattr(workers.ParsePool, "_read_ahead", then_append)
    base = _workspace(tmp_path / "base")
    _corpus(base, random.Random(5))
    one, two = _clone(base, tmp_path / "one"), _clone(base, tmp_path / "two")
    _import(two, 2, share=True)
    assert len(changed) == 2 and seen == [(0, 2)]
    for path in changed:  # the same lines, appended before a one-process import
        with open(one / Path(path).relative_to(two), "a", encoding="utf-8") as fh:
            fh.write(extra + "\n")
    _import(one, 1, share=True)
    assert contents(two) == contents(one)
    assert any("late" in r for r in contents(two)["entries"])  # (its focus)
