"""Every removal reaches every copy, with the real Litestream replicating to a file replica
(issue 32): a summary's removal and a vector's delete purge this machine's replica history
as a forget does, and a peer that pulls them purges its own; a forget on one machine takes
the text out of another machine's synapt files (its mirror lines, its session-start cache);
a dead machine's replica is retired (`sync retire`) after what it holds is merged."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import numpy as np

from recall_sqlite import open_store
from recall_sqlite.sync import litestream
from tests.behaviour.test_sync_litestream import (  # the machines and their fixtures
    Machine,
    env,
    stop_all,
    two_machines,
    until,
)
from tests.helpers import run_cli

__all__ = ["env", "stop_all"]  # fixtures, used by name

SECRET = "summary-SECRET-d41c9e77"


def _holding(root: Path, data: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and data in p.read_bytes()]


def _summaries(m: Machine) -> list[str]:
    return [s["text"] for s in m.json("summary", "list", "--all-branches")]


def _histories(tmp_path: Path, machines: list[Machine]) -> list[Path]:
    """Every Litestream history: each machine's replica, and each machine's local copy of
    recent pages (`<db>-sync/meta`, laid out as a file replica)."""
    found = {p.parent for p in (tmp_path / "replicas").rglob("ltx")}
    for m in machines:
        found |= {p.parent for p in m.db().parent.rglob("ltx") if p.is_dir()}
    return sorted(found)


def _restorable(tmp_path: Path, machines: list[Machine], data: bytes) -> list[str]:
    """The (history, txid) pairs whose restore holds `data`: LTX files are compressed
    (LZ4), so a byte scan can miss a page, and `litestream restore -txid` is how a user
    brings one back. Every transaction of every history is restored."""
    out = []
    for history in _histories(tmp_path, machines):
        txids = {int(part, 16) for f in history.glob("ltx/*/*.ltx") for part in f.stem.split("-")}
        for txid in range(1, max(txids, default=0) + 1):
            copy = tmp_path / "restored.db"
            for leftover in tmp_path.glob("restored.db*"):
                leftover.unlink()
            done = subprocess.run(
                [litestream.binary(), "restore", "-o", str(copy), "-txid", f"{txid:016x}",
                 f"file://{history}"],
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            if done.returncode == 0 and copy.exists() and data in copy.read_bytes():
                out.append(f"{history} at txid {txid}")
    return out


def _no_byte_anywhere(tmp_path: Path, machines: list[Machine], data: bytes) -> None:
    """Not in any machine's data directory (store, WAL, `<db>-sync/` with Litestream's
    local pages) nor in any replica, nor in what any of their transactions restores."""
    for m in machines:
        assert _holding(m.db().parent, data) == []
    assert _holding(tmp_path / "replicas", data) == []
    assert _restorable(tmp_path, machines, data) == []


def test_summary_remove_purges_every_replica_history(
    tmp_path: Path, env: dict[str, str], stop_all: list[Machine]
) -> None:
    a, b = two_machines(tmp_path, env, stop_all)
    a.write("kept on both", "s1")
    a.start()
    b.start()
    sid = a.json("summary", "add", f"the summary quotes {SECRET}")["id"]
    until(lambda: f"the summary quotes {SECRET}" in _summaries(b), 30, "b pulls the summary")
    time.sleep(2)  # Litestream has written it to a's replica and its local pages
    assert _restorable(tmp_path, [a, b], SECRET.encode())
    a.cli("summary", "remove", str(sid))
    until(lambda: _summaries(b) == [], 30, "b applies the removal")
    time.sleep(2)  # both keep replicating and pulling: it must not come back
    for m in (a, b):
        assert _summaries(m) == []
        code, err = m.stop()
        assert code == 0, err
    _no_byte_anywhere(tmp_path, [a, b], SECRET.encode())
    # What either replica gives back is the store without it.
    a.cli("sync", "pull")
    assert _summaries(a) == [] and a.foci() == ["kept on both"]


def test_vector_delete_purges_every_replica_history(
    tmp_path: Path, env: dict[str, str], stop_all: list[Machine]
) -> None:
    a, b = two_machines(tmp_path, env, stop_all)
    eid = a.write("an entry with a vector", "s1")
    a.start()
    b.start()
    rng = np.random.default_rng(7)
    with open_store(a.root) as s:
        s.vectors.put(("entry", eid), rng.standard_normal(64), model="m")
        stored = s.vectors.get(("entry", eid), model="m")
    assert stored is not None
    embedding = stored.astype("<f4").tobytes()[:64]  # the first 16 floats, as stored

    def b_has() -> bool:
        with open_store(b.root) as s:
            return s.vectors.get(("entry", eid), model="m") is not None

    until(b_has, 30, "b pulls the vector")
    time.sleep(2)
    assert _restorable(tmp_path, [a, b], embedding)
    with open_store(a.root) as s:
        assert s.vectors.delete(("entry", eid), model="m") == 1
    until(lambda: not b_has(), 30, "b applies the delete")
    time.sleep(2)
    for m in (a, b):
        code, err = m.stop()
        assert code == 0, err
    _no_byte_anywhere(tmp_path, [a, b], embedding)


def _synapt(m: Machine, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Activated synapt (`recall-sqlite synapt ...`) on machine m, as its agent runs it."""
    res = run_cli("synapt", *args, cwd=m.root, env=m.env, input=input)
    assert res.returncode == 0, (args, res.stdout, res.stderr)
    return res


