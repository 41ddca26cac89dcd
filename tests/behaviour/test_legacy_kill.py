"""kill -9 of the import at random points, then a re-run: the store must end exactly as an
uninterrupted import leaves it (same rows in the same order, same provenance, quarantine
and source records)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from recall_sqlite import open_store
from recall_sqlite.demo import synapt_line
from recall_sqlite.doctor.schema import differences
from recall_sqlite.store import context_of
from tests.conftest import make_workspace

CHILD = """
import sys
import pytest

from recall_sqlite import open_store
from recall_sqlite.doctor.schema import differences
from recall_sqlite.legacy import lines, workers
root = sys.argv[1]
defer = {"yes": True, "no": False}[sys.argv[3]]
jobs = int(sys.argv[4])
# With workers: for this small corpus too, in blocks of a few lines, many in flight.
workers.POOL_MIN_BYTES, lines._BLOCK = 0, 2048
with open_store(root, root=root) as store:
    print("start", flush=True)
    store.legacy.import_paths(
        [root], chunk_lines=int(sys.argv[2]), defer_indexes=defer, jobs=jobs
    )
print("done", flush=True)
"""


def _corpus(root: Path, rng: random.Random) -> None:
    pool = [
        synapt_line(
            timestamp=f"2026-01-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00+00:00",
            session_id=f"s{i % 700}",
            focus=f"focus {i}",
            auto=bool(i % 3),
            done=[f"done {i}"] if i % 2 else [],
            files_modified=[f"f{i}.py"],
        )
        for i in range(1500)
    ]
    for name in ("proj", "server", "docs"):
        lines = [rng.choice(pool) for _ in range(900)]
        lines.insert(rng.randrange(len(lines)), "{not json")
        path = root / ".synapt" / "recall" / "worktrees" / name / "journal.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("\n".join(lines) + "\n")


def _clone(src: Path, dst: Path) -> Path:
    """Same files, no database (and no workspace id: an id without its store is a lost store)."""
    shutil.copytree(src, dst)
    for p in (dst / ".synapt" / "recall").glob("recall-sqlite.db*"):
        p.unlink()
    (dst / ".synapt" / "recall" / "workspace.json").unlink(missing_ok=True)
    return dst


def _snapshot(root: Path) -> dict[str, Any]:
    with open_store(root, root=root) as store:
        q = context_of(store).db.query
        prefix = len(str(root))

        def relative(sql: str) -> list[tuple[Any, ...]]:
            """The rows of `sql`, whose first column is a path, with that path from the root."""
            return [(str(p)[prefix:], *rest) for p, *rest in q(sql)]

        return {
            "entries": q(
                "SELECT seq, hex(id), worktree_id, session_id, timestamp, head_wt,"
                " head_ws, sid_order FROM journal_entries ORDER BY seq"
            ),
            "provenance": relative(
                "SELECT s.path, p.line, p.entry_seq, p.status FROM entry_provenance p"
                " JOIN import_sources s ON s.id = p.source_id ORDER BY 1, 2"
            ),
            "quarantine": relative(
                "SELECT s.path, q.line, q.raw, q.reason FROM quarantine q"
                " JOIN import_sources s ON s.id = q.source_id ORDER BY 1, 2"
            ),
            "sources": relative(
                "SELECT path, version, size, sha256, lines, imported, duplicates, quarantined,"
                " complete FROM import_sources ORDER BY 1"
            ),
            "counts": q("SELECT * FROM journal_counts_wt ORDER BY 1, 2, 3"),
        }


def _run(root: Path, kill_after: float | None, defer: str = "no", jobs: int = 1) -> float:
    """Import in a child process; SIGKILL it `kill_after` seconds after it has opened the
    store. Returns how long the import ran, or 0.0 when it was killed before finishing.
    The child and its worker processes carry the root in their environment (_left)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNAPT_", "RECALL_"))}
    env[MARK] = str(root)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), "25", defer, str(jobs)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "start"
    started = time.monotonic()
    if kill_after is None:
        assert child.wait(timeout=120) == 0
        return time.monotonic() - started
    time.sleep(kill_after)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    return 0.0 if child.returncode == -signal.SIGKILL else time.monotonic() - started


MARK = "RECALL_TEST_KILLED_IMPORT"


def _left(root: Path) -> list[int]:
    """The processes still running with `root` as their MARK (Linux's /proc)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            environ = Path("/proc", pid, "environ").read_bytes()
        except OSError:
            continue
        if f"{MARK}={root}".encode() in environ.split(b"\0"):
            found.append(int(pid))
    return found


@pytest.mark.parametrize(("defer", "jobs"), [("no", 1), ("yes", 1), ("no", 2), ("yes", 3)])
def test_kill_minus_nine_then_rerun_gives_the_uninterrupted_result(
    tmp_path: Path, defer: str, jobs: int
) -> None:
    """Row by row and as a bulk load that builds the head indexes after its rows: a kill
    leaves them unbuilt, and the run after it builds them. In one process, and with
    workers reading the lines (they leave with the process they read for)."""
    rng = random.Random(0x5EED)
    base = make_workspace(tmp_path / "base")
    _corpus(base, rng)
    open_store(base).close()  # mint the workspace id every clone shares
    reference = _clone(base, tmp_path / "reference")
    duration = _run(reference, None)
    want = _snapshot(reference)
    assert len(want["entries"]) > 1000 and len(want["quarantine"]) == 3

    interrupted = 0
    for attempt in range(2):
        victim = _clone(base, tmp_path / f"victim{attempt}")
        # Several kills in a row on the same store, each at a random point of the run.
        for _ in range(2 if attempt == 0 else 1):
            if not _run(victim, rng.uniform(0.05, 0.9) * duration, defer, jobs):
                interrupted += 1
            if jobs > 1 and os.path.isdir("/proc"):
                deadline = time.monotonic() + 20
                while _left(victim) and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert not _left(victim), "worker processes outlived the killed import"
        _run(victim, None, defer, jobs)
        assert _snapshot(victim) == want
        with open_store(victim, root=victim) as store:
            assert store.legacy.verify([victim], deep=True).ok
            with context_of(store).db.read() as conn:
                assert not differences(conn)
            runs = context_of(store).db.query("SELECT status FROM import_runs ORDER BY id")
        # killed runs are found dead and marked by the run after them
        assert [s for (s,) in runs][-1] == "done"
    assert interrupted >= 1, "no kill landed mid-import: the test proved nothing"
