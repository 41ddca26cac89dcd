"""`sync run` stops on SIGTERM whenever it lands: its stop flag is set from the signal
handler, so setting it must never wait on anything the interrupted main thread holds
(a threading.Event did: its set() waited on the lock its wait() held, for ever)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# Signals every 2 ms while the main thread waits on the flag in 0.1 ms steps, as the loop
# of `sync run` does: a handler lands inside wait() thousands of times.
STORM = textwrap.dedent(
    """
    import signal, time
    from recall_sqlite.sync.run import StopFlag

    flag = StopFlag()
    signal.signal(signal.SIGALRM, lambda signum, frame: flag.set())
    signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
    end, waits = time.monotonic() + 2.0, 0
    while time.monotonic() < end:
        flag.wait(0.0001)
        flag._set = False
        waits += 1
    signal.setitimer(signal.ITIMER_REAL, 0)
    print(waits)
    """
)


def test_the_stop_flag_survives_signals_landing_inside_wait() -> None:
    res = subprocess.run([sys.executable, "-c", STORM], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr[-2000:]
    assert int(res.stdout) > 1000


def test_the_stop_flag_is_set_and_seen() -> None:
    from recall_sqlite.sync.run import StopFlag

    flag = StopFlag()
    assert not flag.is_set() and not flag.wait(0.001)
    flag.set()
    assert flag.is_set() and flag.wait(10.0)  # set: returns at once
