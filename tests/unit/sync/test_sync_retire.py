"""Retiring a machine, the parts that need no Litestream (tests/behaviour/test_sync_removals.py
drives the whole of it with the real binary): what a claim says of its machine, which
machine a retire names, the peer book forgetting one, and each backend deleting a replica
whole (a directory; an S3 prefix, on moto; an SFTP directory file by file, against a
stand-in `sftp` that runs the batch on a local directory)."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recall_sqlite.errors import UsageError
from recall_sqlite.sync.owner import LEASE_S, condition
from recall_sqlite.sync.peers import PeerBook
from recall_sqlite.sync.remote import FileRemote, parse
from recall_sqlite.sync.retire import find_machine
from tests.unit.sync.test_sync_setup import FAKE_SFTP

MACHINE = "0123456789abcdef"
OTHER = "0123fedcba987654"


@given(age=st.floats(0, 10 * LEASE_S), stopped=st.booleans())
def test_a_claim_says_live_stopped_or_silent(age: float, stopped: bool) -> None:
    held = {"heartbeat": time.time() - age, "stopped": stopped, "host": "h"}
    said = condition(held)
    if stopped:
        assert said == "stopped"
    elif age < LEASE_S - 1:
        assert said == "live"
    elif age > LEASE_S + 1:
        assert said == "silent"


@pytest.mark.parametrize(
    ("held", "said"),
    [(None, "unknown"), ({"unreadable": True}, "unknown"), ({"host": "h"}, "silent")],
)
def test_a_missing_or_odd_claim(held: dict[str, Any] | None, said: str) -> None:
    assert condition(held) == said


def test_a_retire_names_exactly_one_other_machine() -> None:
    machines = [MACHINE, OTHER, "fedcba9876543210"]
    assert find_machine(machines, "fed", "x") == "fedcba9876543210"
    assert find_machine(machines, MACHINE, "x") == MACHINE
    for wanted, says in (("0123", "2 machines"), ("99", "no machine")):
        with pytest.raises(UsageError, match=says):
            find_machine(machines, wanted, "x")
    with pytest.raises(UsageError, match="is this one"):
        find_machine(machines, "fed", "fedcba9876543210")


def test_the_book_forgets_a_machine_and_writes_only_then(tmp_path: Path) -> None:
    book = PeerBook(tmp_path / "peers.json")
    book.seen(MACHINE, "h", 5, None, 3)
    book.seen(OTHER, "h", 5, None, 4)
    assert book.ahead() == 7
    before = (tmp_path / "peers.json").stat().st_mtime_ns
    assert book.drop({"not-there"}) is False
    assert (tmp_path / "peers.json").stat().st_mtime_ns == before
    assert book.drop({MACHINE}) is True
    assert set(book.load()) == {OTHER} and book.ahead() == 4


def _replica(directory: Path) -> None:
    (directory / "ltx" / "0").mkdir(parents=True)
    (directory / "ltx" / "0" / "0000000000000001-0000000000000003.ltx").write_bytes(b"x")
    (directory / "owner.json").write_text("{}")


def test_a_file_location_deletes_a_replica_whole(tmp_path: Path) -> None:
    remote = FileRemote(tmp_path)
    for m in (MACHINE, OTHER):
        _replica(tmp_path / "k" / m)
    assert remote.remove("k", MACHINE) is True
    assert remote.machines("k") == [OTHER]
    assert remote.remove("k", MACHINE) is True  # nothing left: still done


def test_an_s3_location_deletes_a_replica_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto import mock_aws

    for name, value in (("AWS_ACCESS_KEY_ID", "t"), ("AWS_SECRET_ACCESS_KEY", "t")):
        monkeypatch.setenv(name, value)
    with mock_aws():
        remote = parse("s3://recall-bucket/pre?region=us-east-1")
        remote.client().create_bucket(Bucket="recall-bucket")  # type: ignore[attr-defined]
        for m in (MACHINE, OTHER):
            remote.write_owner("k", m, {"machine": m})
            remote.client().put_object(  # type: ignore[attr-defined]
                Bucket="recall-bucket",
                Key=f"pre/k/{m}/ltx/0/0000000000000001-0000000000000001.ltx",
                Body=b"x",
            )
        assert remote.purge("k", MACHINE) and remote.machines("k") == [MACHINE, OTHER]
        assert remote.remove("k", MACHINE) is True
        assert remote.machines("k") == [OTHER]
        assert remote.position("k", OTHER) is not None


def test_an_sftp_location_deletes_a_replica_file_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "sftp"
    # The stand-in learns sftp's rm and rmdir (a leading "-": an error is not fatal).
    fake.write_text(
        FAKE_SFTP.replace("{python}", sys.executable)
        + "    elif cmd in ('-rm', '-rmdir'):\n"
        + "        try: (os.remove if cmd == '-rm' else os.rmdir)(local(arg))\n"
        + "        except OSError: pass\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    root = tmp_path / "server"
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SFTP_ROOT", str(root))
    for m in (MACHINE, OTHER):
        _replica(root / "srv/replicas/k" / m)
    remote = parse("sftp://me@host/srv/replicas")
    assert remote.remove("k", MACHINE) is True
    assert remote.machines("k") == [OTHER]
    assert not (root / "srv/replicas/k" / MACHINE).exists()
