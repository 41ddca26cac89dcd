"""`sync run`'s life with the real Litestream 0.5.17 on a file replica (issue 32): its
Litestream dies with it (kill -9 of `sync run` leaves nothing replicating and the next run
starts at once), a Litestream left behind anyway is stopped by `sync status` and by the next
`sync run` (never two on one store, never a process that merely reuses the recorded pid),
a peer's write arrives long before the pull timer, and the WAL stays bounded in a burst.

Every process a test starts is ended by the `lives` fixture, a Litestream orphaned by a
failure included (found by its config under the test's directory)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from recall_sqlite import open_store
from recall_sqlite.sync.orphan import command_line
from tests.behaviour.test_sync_litestream import BIN, Machine, synced, until
from tests.helpers import CLI, user_env

pytestmark = pytest.mark.slow


class Lives:
    """The test's environment, its machines, and the other processes it started."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.env = user_env(base / "home")
        self.machines: list[Machine] = []
        self.procs: list[subprocess.Popen[bytes]] = []

    def machine(self, name: str) -> Machine:
        return synced(self.base, name, self.env, self.machines)

    def spawn(self, argv: list[str]) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            argv,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc


def litestreams(under: Path) -> list[int]:
    """The Litestream processes replicating a config under `under`."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            argv = command_line(int(name)) or []
            if argv[-3:-1] == ["replicate", "-config"] and argv[-1].startswith(str(under)):
                found.append(int(name))
    return found


@pytest.fixture
def lives(tmp_path: Path) -> Iterator[Lives]:
    here = Lives(tmp_path)
    yield here
    for m in here.machines:
        if m.run_proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(m.run_proc.pid, signal.SIGKILL)
            m.run_proc.wait(30)
    for p in here.procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait(30)
    for pid in litestreams(tmp_path):  # orphaned by a failure: out of every group above
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def sync_dir(m: Machine) -> Path:
    return m.db().parent / f"{m.db().name}-sync"


def gone(pid: int, argv: list[str]) -> bool:
    got = command_line(pid)
    return got is None or got != argv


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux's /proc")


@needs_proc
def test_kill9_of_sync_run_takes_its_litestream_and_the_next_run_starts_at_once(
    lives: Lives,
) -> None:
    a = lives.machine("a")
    a.write("before the kill", "s1")
    a.start("600")
    record = json.loads((sync_dir(a) / "litestream.json").read_text())
    pid, argv = int(record["pid"]), record["argv"]
    assert command_line(pid) == argv and argv[1:3] == ["replicate", "-config"]
    assert litestreams(lives.base) == [pid]
    assert a.run_proc is not None
    os.kill(a.run_proc.pid, signal.SIGKILL)  # sync run alone: not its process group
    a.run_proc.wait(30)
    a.run_proc = None
    # The kernel's parent-death signal: Litestream stops (after a last sync) by itself.
    until(lambda: gone(pid, argv), 20, "Litestream to die with its sync run")
    status = a.json("sync", "status", "--no-count")
    assert not status["running"] and status["orphans_stopped"] == [], status
    assert "NOT RUNNING" in a.cli("sync", "status", "--no-count").stdout
    # The dead run's claim names a pid gone from this host: the next run takes it at once,
    # well inside the claim's 30 s lease, with one Litestream.
    started = time.monotonic()
    a.start("600")
    assert time.monotonic() - started < 25
    # (status says live once the run holds its lock, a moment before it starts Litestream)
    (own,) = until(lambda: litestreams(lives.base), 20, "the new run's Litestream")
    time.sleep(1)
    assert litestreams(lives.base) == [own]
    a.write("after the restart", "s2")
    code, err = a.stop()
    assert code == 0, err
    assert litestreams(lives.base) == []


@needs_proc
def test_a_litestream_left_behind_is_stopped_by_status_and_by_run_never_doubled(
    lives: Lives,
) -> None:
    a = lives.machine("a")
    a.write("replicated", "s1")
    a.start("600")
    assert a.stop()[0] == 0
    config = sync_dir(a) / "litestream.yml"
    exe = str(BIN / "litestream")
    # As a sync run killed where the kernel has no parent-death signal (or an older
    # recall-sqlite) leaves it: Litestream replicating the store, no sync run.
    left = lives.spawn([exe, "replicate", "-config", str(config)])
    until(lambda: litestreams(lives.base) == [left.pid], 10, "the orphan to start")
    status = a.json("sync", "status", "--no-count")
    assert not status["running"] and status["orphans_stopped"] == [left.pid], status
    assert left.wait(30) == 0  # SIGTERM: Litestream's own clean stop
    assert litestreams(lives.base) == []
    assert "stopped Litestream pid" not in a.cli("sync", "status", "--no-count").stdout
    # Left behind again; a recorded pid that now names another process is never touched.
    sleeper = lives.spawn([sys.executable, "-c", "import time; time.sleep(120)"])
    left = lives.spawn([exe, "replicate", "-config", str(config)])
    until(lambda: litestreams(lives.base) == [left.pid], 10, "the orphan to start")
    (sync_dir(a) / "litestream.json").write_text(
        json.dumps({"pid": sleeper.pid, "argv": [exe, "replicate", "-config", str(config)]})
    )
    said = a.cli("sync", "status", "--no-count").stdout
    assert f"stopped Litestream pid {left.pid}" in said, said
    assert sleeper.poll() is None
    # And a sync run started over one stops it first: one Litestream on the store. (Started
    # without Machine.start, whose `sync status` polls would stop the orphan first.)
    left = lives.spawn([exe, "replicate", "-config", str(config)])
    until(lambda: litestreams(lives.base) == [left.pid], 10, "the orphan to start")
    a.run_proc = subprocess.Popen(
        [*CLI, "sync", "run", "--pull-every", "600"],
        cwd=a.root,
        env=a.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert left.wait(30) == 0
    (own,) = until(lambda: litestreams(lives.base), 20, "the run's own Litestream")
    assert own != left.pid
    time.sleep(2)
    assert litestreams(lives.base) == [own]
    code, err = a.stop()
    assert code == 0, err
    assert f"stopped Litestream (pid {left.pid})" in err
    assert sleeper.poll() is None
    assert "error" not in (sync_dir(a) / "litestream.log").read_text().lower()


def test_a_peers_write_arrives_long_before_the_pull_timer(lives: Lives) -> None:
    a, b = lives.machine("a"), lives.machine("b")
    a.start("600")
    b.start("600")  # both pulled once at their start; the timer's next pull is 10 min off
    for n in range(2):
        started = time.monotonic()
        a.write(f"written on a, {n}", f"s{n}")
        until(lambda: f"written on a, {n}" in b.foci(), 20, "b to see a's write")  # noqa: B023
        assert time.monotonic() - started < 20
    for m in (a, b):
        code, err = m.stop()
        assert code == 0, err


def test_the_wal_stays_bounded_in_a_burst_of_appends(lives: Lives) -> None:
    a = lives.machine("a")
    a.write("first", "s0")
    a.start("600")
    wal = Path(f"{a.db()}-wal")
    peak = 0
    with open_store(a.root) as store:
        for i in range(5000):
            store.journal.append(
                {"timestamp": "2026-02-01T00:00:00+00:00", "session_id": f"b{i}", "focus": f"n{i}"}
            )
            peak = max(peak, wal.stat().st_size)
    code, err = a.stop()
    assert code == 0, err
    # sync run truncates past 16 MiB (it was 64 MiB, and bursts peaked at 66-253 MB): this
    # bound leaves room for what a loaded machine writes before the truncation comes round.
    assert peak < 60 * 2**20, f"the WAL reached {peak / 2**20:.1f} MiB"
