"""What an activated start costs besides synapt: a start with nothing new to import does
not load the importer, the mirror's own lines are not imported again, and whatever stock
synapt wrote since (a line in a known bucket, a new bucket) is imported before answering."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recall_sqlite import open_store
from recall_sqlite.store import context_of
from tests import helpers
from tests.helpers import CLI

# The activated CLI in a child that also says whether the importer was loaded.
PROBE = (
    "import sys\n"
    "from recall_sqlite.synapt.cli import main_synapt\n"
    "rc = main_synapt(sys.argv[1:])\n"
    "print('LEGACY-LOADED' if 'recall_sqlite.legacy' in sys.modules else 'LEGACY-NOT')\n"
    "sys.exit(rc)\n"
)


def stock_write(cwd: Path, focus: str) -> None:
    """Stock synapt's write, as this test's user (the HOME conftest gave it)."""
    helpers.stock_write(cwd, Path(os.environ["HOME"]), focus)


def activated(cwd: Path, *args: str) -> tuple[str, bool]:
    res = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )
    assert res.returncode == 0, res.stderr
    out, _, flag = res.stdout.rstrip().rpartition("\n")
    return out, flag == "LEGACY-LOADED"


def listed(cwd: Path) -> tuple[str, bool]:
    return activated(cwd, "recall", "journal", "--list")


@pytest.mark.slow
def test_a_start_with_nothing_new_skips_the_importer_and_misses_nothing(repo: Path) -> None:
    stock_write(repo, "one")
    out, loaded = listed(repo)  # first use: imports stock's bucket
    assert "one" in out and loaded
    out, loaded = listed(repo)  # nothing changed: no importer
    assert "one" in out and not loaded
    # An activated write appends to the mirror: recorded, not imported again, and the
    # store accounts for the line as its own (the record covers the whole file).
    res = activated(repo, "recall", "journal", "--write", "--focus", "two")
    out, loaded = listed(repo)
    assert "two" in out and not loaded, res
    with open_store(repo) as store:
        sources = context_of(store).db.query("SELECT size FROM import_sources WHERE superseded = 0")
    bucket = repo / ".synapt/recall/worktrees/repo/journal.jsonl"
    assert sources and sources[0][0] == bucket.stat().st_size
    # Stock synapt appends to the same bucket: imported before the next answer.
    stock_write(repo, "three")
    out, loaded = listed(repo)
    assert "three" in out and loaded
    out, loaded = listed(repo)
    assert "three" in out and not loaded


@pytest.mark.slow
def test_a_new_bucket_is_imported_before_answering(repo: Path) -> None:
    stock_write(repo, "one")
    listed(repo)
    other = repo / ".synapt/recall/worktrees/other/journal.jsonl"
    other.parent.mkdir(parents=True)
    other.write_text(
        json.dumps(
            {
                "timestamp": "2026-01-01T09:00:00+00:00",
                "session_id": "elsewhere",
                "focus": "in another bucket",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    _, loaded = listed(repo)
    assert loaded
    with open_store(repo) as store:
        focuses = [e.focus for e in store.journal.read(10, all_worktrees=True).entries]
    assert "in another bucket" in focuses
    _, loaded = listed(repo)
    assert not loaded


@pytest.mark.slow
def test_a_rewritten_bucket_of_the_same_size_is_checked_again(repo: Path) -> None:
    stock_write(repo, "aaaa")
    listed(repo)
    bucket = repo / ".synapt/recall/worktrees/repo/journal.jsonl"
    text = bucket.read_text(encoding="utf-8").replace("aaaa", "bbbb")
    st = bucket.stat()
    bucket.write_text(text, encoding="utf-8")
    os.utime(bucket, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    out, loaded = listed(repo)
    assert loaded and "bbbb" in out


@pytest.mark.slow
def test_a_damaged_or_replaced_store_is_noticed_at_start(repo: Path) -> None:
    stock_write(repo, "one")
    out, _ = listed(repo)  # first use imports stock's bucket
    db = repo / ".synapt/recall/recall-sqlite.db"
    db.write_bytes(b"")  # truncated: the buckets and the marker are unchanged
    res = subprocess.run(
        [sys.executable, "-c", PROBE, "recall", "journal", "--list"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )
    assert res.returncode != 0 and "empty (0 bytes)" in res.stderr, res.stderr
    # A new store started over it has not seen the buckets: the next start imports them.
    res = subprocess.run(
        [
            *CLI,
            "--force",
            "journal",
            "write",
            "--focus",
            "two",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    out, loaded = listed(repo)
    assert "one" in out and "two" in out and loaded
