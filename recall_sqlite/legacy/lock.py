"""One import of a workspace at a time: an advisory lock on a file beside the database.

Two imports of the same sources used to race chunk by chunk and both give up (exit 1)
although every line ended imported exactly once. With the lock the second waits for the
first, then finds its files accounted for and reports success. The kernel drops the lock
when its holder dies (kill -9 included), so a killed import never blocks the next.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def run_lock(db_path: Path) -> Iterator[bool]:
    """Hold the workspace's import lock; yields whether another import held it first."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the per-chunk checks remain
        yield False
        return
    try:
        fd = os.open(f"{db_path}.import-lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:  # a read-only directory: nothing to race with there
        yield False
        return
    try:
        waited = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waited = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield waited
    finally:
        os.close(fd)
