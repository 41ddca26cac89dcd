"""What keeps `sync run`'s Litestream from outliving it, without Litestream: the parent-death
signal a child asks for (orphan.death_signal), the record and the command line an orphan is
known by (a pid reused by another process never matches), a claim whose pid is gone from
this host (owner.py), and the watch on the peers' replica positions and its pace (watch.py).
tests/behaviour/test_sync_runlife.py drives the same with the real binary."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recall_sqlite import SyncError
from recall_sqlite.sync import orphan, watch
from recall_sqlite.sync.owner import _dead_here
from recall_sqlite.sync.remote_file import FileRemote
from recall_sqlite.sync.state import SyncState

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")

# A parent that starts a long sleep with orphan.death_signal, prints its pid, and waits.
PARENT = """
import os, subprocess, sys, time
from recall_sqlite.sync.orphan import death_signal
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                         preexec_fn=death_signal(os.getpid()))
print(child.pid, flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().split(b") ", 1)[1][:1] != b"Z"
    except FileNotFoundError:
        return False


@linux
def test_a_child_that_asked_for_the_death_signal_dies_with_its_parent() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert _alive(child)
        parent.kill()  # the parent alone: the child is in its group, but not signalled
        parent.wait(10)
        deadline = time.monotonic() + 10
        while _alive(child):
            assert time.monotonic() < deadline, "the child outlived its parent"
            time.sleep(0.05)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(parent.pid, signal.SIGKILL)
        parent.wait(10)


def _state(tmp_path: Path) -> SyncState:
    db = tmp_path / "store.db"
    db.write_bytes(b"")
    state = SyncState(db)
    state.ensure()
    return state


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux's /proc")
def test_an_orphan_is_known_by_its_recorded_command_line_never_by_its_pid_alone(
    tmp_path: Path,
) -> None:
    state = _state(tmp_path)
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    argv = [*sleep, "replicate", "-config", str(state.replicate_config)]
    left, other = subprocess.Popen(argv), subprocess.Popen(sleep)
    try:
        deadline = time.monotonic() + 10
        while orphan.command_line(left.pid) != argv:  # until its exec is done
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert orphan.find(state) == []  # no record, and not a `litestream` by name
        orphan.record(state.litestream_pid, left.pid, argv)
        assert orphan.find(state) == [(left.pid, argv)]
        assert orphan.find(state, but=left.pid) == []
        # A record naming a process that only reuses the pid: never found, never stopped.
        orphan.record(state.litestream_pid, other.pid, argv)
        assert orphan.find(state) == []
        assert orphan.stop_all(state) == [] and other.poll() is None
        orphan.record(state.litestream_pid, left.pid, argv)
        assert orphan.stop_all(state) == [left.pid]
        assert left.wait(10) == -signal.SIGTERM
        assert other.poll() is None
        assert not state.litestream_pid.exists()
    finally:
        for p in (left, other):
            p.kill()
            p.wait(10)


def test_a_record_is_forgotten_only_for_its_own_pid(tmp_path: Path) -> None:
    state = _state(tmp_path)
    orphan.record(state.litestream_pid, 12345, ["litestream"])
    orphan.forget(state.litestream_pid, 999)
    assert state.litestream_pid.exists()
    orphan.forget(state.litestream_pid, 12345)
    assert not state.litestream_pid.exists()


def test_a_claim_is_dead_only_when_its_pid_is_gone_from_this_host() -> None:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait(10)
    here = socket.gethostname()
    assert _dead_here({"host": here, "pid": done.pid})
    assert not _dead_here({"host": here, "pid": os.getpid()})
    assert not _dead_here({"host": here + "-elsewhere", "pid": done.pid})
    assert not _dead_here({"host": here})
    assert not _dead_here({"host": here, "pid": "x"})


def _ltx(remote: FileRemote, machine: str, txid: int) -> None:
    level = remote.base / "key" / machine / "ltx" / "0"
    level.mkdir(parents=True, exist_ok=True)
    (level / f"{txid:016x}-{txid:016x}.ltx").write_bytes(b"")


def test_the_watch_sees_a_peer_move_or_appear_and_never_itself(tmp_path: Path) -> None:
    remote = FileRemote(tmp_path / "replicas")
    me, peer, late = "a" * 16, "b" * 16, "c" * 16
    _ltx(remote, peer, 1)
    seen = watch.Watch(remote, "key", me)
    assert seen.every_s == remote.watch_s == 0.5
    assert not seen.moved(0.0)  # the first read remembers
    assert not seen.due(0.1) and seen.due(0.5)
    assert not seen.moved(1.0)
    _ltx(remote, me, 7)  # this machine's own replica is not watched
    assert not seen.moved(2.0)
    _ltx(remote, peer, 2)
    assert seen.moved(3.0)
    assert not seen.moved(4.0)
    (remote.base / "key" / late).mkdir()  # a new machine, no replica yet
    assert seen.moved(5.0)
    _ltx(remote, late, 1)
    assert seen.moved(6.0)


def test_pulls_a_move_starts_are_paced_by_the_last_ones_length() -> None:
    pace = watch.Pace()
    assert pace.ready(0.0)
    pace.pulled(10.0, 10.1)  # a short pull: the minimum gap
    assert not pace.ready(10.1 + watch.MIN_GAP_S - 0.01)
    assert pace.ready(10.1 + watch.MIN_GAP_S)
    pace.pulled(20.0, 22.0)  # a 2 s pull: DUTY times that
    assert not pace.ready(22.0 + watch.DUTY * 2.0 - 0.01)
    assert pace.ready(22.0 + watch.DUTY * 2.0)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux's /proc")
def test_one_that_cannot_be_stopped_is_named_by_status_and_refused_by_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _state(tmp_path)
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    argv = [*sleep, "replicate", "-config", str(state.replicate_config)]
    left = subprocess.Popen(argv)
    try:
        deadline = time.monotonic() + 10
        while orphan.command_line(left.pid) != argv:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        orphan.record(state.litestream_pid, left.pid, argv)

        def refused(pid: int, sig: int) -> None:
            raise PermissionError(1, "Operation not permitted")

        monkeypatch.setattr(orphan.os, "kill", refused)  # another user's process
        stopped, why = orphan.reap(state)
        assert stopped == [] and len(why) == 1 and f"pid {left.pid}" in why[0]
        assert state.litestream_pid.exists()  # it still names the one replicating
        with pytest.raises(SyncError, match="cannot be stopped from here"):
            orphan.stop_all(state)
        assert left.poll() is None
    finally:
        monkeypatch.undo()
        left.kill()
        left.wait(10)
