"""Every removal reaches every copy, with the real Litestream replicating to a file replica
(issue 32): a summary's removal and a vector's delete purge this machine's replica history
as a forget does, and a peer that pulls them purges its own; a forget on one machine takes
the text out of another machine's synapt files (its mirror lines, its session-start cache);
a dead machine's replica is retired (`sync retire`) after what it holds is merged."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import numpy as np

from recall_sqlite import open_store
from recall_sqlite import synapt_layout as layout
from recall_sqlite.sync import litestream
from tests.behaviour.test_sync_litestream import (  # the machines and their fixtures
    Machine,
    clone,
    env,
    stop_all,
    synced,
    two_machines,
    until,
)
from tests.helpers import run_cli, stock_synapt, stock_write

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


def test_summary_remove_without_sync_run_purges_the_replica_itself(
    tmp_path: Path, env: dict[str, str], stop_all: list[Machine]
) -> None:
    (a,) = [synced(tmp_path, "a", env, stop_all)]
    sid = a.json("summary", "add", f"the summary quotes {SECRET}")["id"]
    a.start()
    assert a.stop()[0] == 0
    assert _restorable(tmp_path, [a], SECRET.encode())
    a.cli("summary", "remove", str(sid))  # no `sync run`: the removal purges it itself
    _no_byte_anywhere(tmp_path, [a], SECRET.encode())
    a.start()  # a new history, from the store as it is
    assert a.stop()[0] == 0
    _no_byte_anywhere(tmp_path, [a], SECRET.encode())


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


PASTED = "sk-live-PASTEDtoken-9q8w7e6r5t"


def _in_files(m: Machine, data: bytes) -> list[str]:
    """The machine's files (its checkout and data directory, git's own aside) holding
    `data`, as paths relative to the checkout. The walk runs beside a live Litestream,
    which makes and removes its own files and directories meanwhile: one gone before it
    is read held nothing any more (os.walk skips a directory that vanished; rglob
    raised)."""
    found = []
    for top, dirs, files in os.walk(m.root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            if name == ".git":
                continue
            path = Path(top, name)
            try:
                held = data in path.read_bytes()
            except FileNotFoundError:
                continue
            if held:
                found.append(str(path.relative_to(m.root)))
    return sorted(found)


def test_a_forget_on_one_machine_leaves_no_copy_in_anothers_synapt_files(
    tmp_path: Path, env: dict[str, str], stop_all: list[Machine]
) -> None:
    a, b = two_machines(tmp_path, env, stop_all)
    home = Path(env["HOME"])
    stock_write(a.root, home, "written by stock synapt")
    # An agent on a writes through activated synapt (the adapter mirrors the line into the
    # bucket stock synapt reads) and its next session start writes synapt's wake text.
    _synapt(a, "recall", "journal", "--write", "--focus", f"pasted {PASTED} here")
    _synapt(a, "recall", "hook", "session-start", input="{}")
    mirror = layout.journal_for(a.root, layout.neutral_env(env))
    wake = next(layout.data_dir(a.root).rglob("wake/latest.md"))
    assert PASTED in mirror.read_text() and PASTED in wake.read_text()
    a.start()
    b.start()
    until(lambda: f"pasted {PASTED} here" in b.foci(), 30, "b pulls the entry")
    eid = b.json("journal", "search", PASTED)["entries"][0]["id"]
    forgot = b.cli("journal", "forget", eid).stdout
    assert "1 other machine(s) may hold it until they pull this forget" in forgot
    until(lambda: f"pasted {PASTED} here" not in a.foci(), 30, "a applies the forget")
    until(lambda: _in_files(a, PASTED.encode()) == [], 30, "a's files scrubbed")
    for m in (a, b):
        code, err = m.stop()
        assert code == 0, err
    # Not in a's synapt files (the mirror line and the wake text went), nor anywhere
    # else of either machine or any replica history.
    assert "written by stock synapt" in mirror.read_text()
    assert not wake.exists()
    _no_byte_anywhere(tmp_path, [a, b], PASTED.encode())
    listed = stock_synapt(a.root, home, "recall", "journal", "--list")
    assert "written by stock synapt" in listed.stdout and PASTED not in listed.stdout
    assert a.cli("verify", check=None).returncode == 0  # (b imported no synapt file)
    for m in (a, b):
        assert m.cli("doctor", check=None).returncode == 0, m.root
    # A forget of it on a now: forgotten already, said so, exit 0 (not "no entry").
    again = a.cli("journal", "forget", eid).stdout
    assert "already forgotten on this machine" in again and eid in again


DEAD = "token-DEADMACHINE-5m2x8k"


def _age_claim(tmp_path: Path, machine: str, seconds: float) -> None:
    """The machine's claim as it reads `seconds` after its last heartbeat (the test does
    not wait out the lease)."""
    (owner,) = (tmp_path / "replicas").glob(f"*/{machine}/owner.json")
    held = json.loads(owner.read_text())
    owner.write_text(json.dumps({**held, "heartbeat": held["heartbeat"] - seconds}))


def test_a_dead_machine_is_retired_after_its_replica_is_pulled(
    tmp_path: Path, env: dict[str, str], stop_all: list[Machine]
) -> None:
    a, b = two_machines(tmp_path, env, stop_all)
    eid = a.write(f"leaked {DEAD}", "s1")
    a.start()
    b.start()
    until(lambda: f"leaked {DEAD}" in b.foci(), 30, "b pulls the secret")
    old_b = b.json("sync", "status", "--no-count")["machine"]
    assert a.stop()[0] == 0
    # b writes what only it holds, replicates it, and dies (kill -9: no clean exit).
    b.write("only the old b knew this", "s2")
    (ltx,) = (tmp_path / "replicas").glob(f"*/{old_b}/ltx")
    until(lambda: _restorable(tmp_path, [], b"only the old b knew this"), 30, "b replicates")
    b.kill9()
    # Right after the kill its claim still looks live: retiring it is refused.
    refused = a.cli("sync", "retire", old_b[:8], check=1)
    assert "is live" in refused.stderr and refused.stderr.count("\n") == 1
    assert ltx.exists()
    _age_claim(tmp_path, old_b, 600)
    status = a.cli("sync", "status", "--no-count").stdout
    assert "[LOOKS DEAD]" in status and f"`recall-sqlite sync retire {old_b}`" in status
    (seen,) = [p for p in a.json("sync", "status", "--no-count")["peers"] if p["machine"] == old_b]
    assert seen["condition"] == "silent" and not seen["live"]
    # Rebuilt: a fresh clone restored from the replicas is a new machine, told that the
    # old one looks dead, ran on this host, and how to retire it.
    rebuilt = clone(tmp_path, "b-rebuilt", env)
    stop_all.append(rebuilt)
    restored = rebuilt.json("sync", "restore", "--url", str(tmp_path / "replicas"))
    assert restored["new_machine"] != old_b and restored["retired"] is None
    assert restored["looks_dead"] == [
        {"machine": old_b, "host": socket.gethostname(), "this_host": True}
    ]
    # A forget on a names the dead machine and the way to retire it.
    forgot = a.cli("journal", "forget", eid).stdout
    assert f"machine {old_b}" in forgot and "looks dead" in forgot
    assert f"`recall-sqlite sync retire {old_b}`" in forgot
    assert _restorable(tmp_path, [], DEAD.encode())  # the old b's replica keeps it
    done = a.json("sync", "retire", old_b[:8])
    assert done["machine"] == old_b and done["deleted"] and done["condition"] == "silent"
    assert done["pulled"]["status"] == "merged"
    # Nothing it alone held is lost, nothing of it is left at the location.
    assert "only the old b knew this" in a.foci() and f"leaked {DEAD}" not in a.foci()
    assert not (ltx.parent).exists()
    assert old_b not in [p["machine"] for p in a.json("sync", "status", "--no-count")["peers"]]
    assert old_b not in json.loads((a.db().parent / f"{a.db().name}-sync" / "peers.json")
                                   .read_text())["peers"]  # fmt: skip
    assert _restorable(tmp_path, [], DEAD.encode()) == []
    # The rebuilt machine knew the old one from its restore's pull: its next pull finds it
    # gone from the location and forgets it too.
    book = rebuilt.db().parent / f"{rebuilt.db().name}-sync" / "peers.json"
    assert old_b in json.loads(book.read_text())["peers"]
    rebuilt.cli("sync", "pull")
    assert old_b not in json.loads(book.read_text())["peers"]
    # Retiring it again: no such machine any more (a user's mistake, exit 2).
    again = a.cli("sync", "retire", old_b, check=2)
    assert "no machine" in again.stderr


def test_restore_retires_the_machine_it_replaces_when_named(
    tmp_path: Path, env: dict[str, str], stop_all: list[Machine]
) -> None:
    url = str(tmp_path / "replicas")
    a, b = two_machines(tmp_path, env, stop_all)
    a.write("written on a", "s1")
    b.write("only the old b knew this", "s2")
    b.start()
    old_b = b.json("sync", "status", "--no-count")["machine"]
    b.kill9()
    rebuilt = clone(tmp_path, "b-rebuilt", env)
    stop_all.append(rebuilt)
    # Named while its claim is live: refused before anything is restored.
    refused = rebuilt.cli("sync", "restore", "--url", url, "--retire", old_b[:8], check=1)
    assert "nothing was restored" in refused.stderr
    assert not rebuilt.db().exists()
    _age_claim(tmp_path, old_b, 600)
    a.start()  # a's replica, so the rebuilt machine pulls it too
    done = rebuilt.json("sync", "restore", "--url", url, "--retire", old_b[:8])
    assert done["retired"]["machine"] == old_b and done["retired"]["deleted"]
    assert done["looks_dead"] == []
    assert rebuilt.foci() == ["only the old b knew this", "written on a"]
    assert [p.name for p in (tmp_path / "replicas").glob(f"*/{old_b}")] == []
    peers = rebuilt.json("sync", "status", "--no-count")["peers"]
    assert [p["machine"] for p in peers] == [a.json("sync", "status", "--no-count")["machine"]]
    assert a.stop()[0] == 0
