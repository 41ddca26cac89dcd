"""`sync peek MACHINE`: another machine's newest entries read straight from its replica,
read-only, through Litestream's VFS (pip `litestream-vfs`), nothing downloaded or merged.

The VFS runs in a child process of its own (`python -m recall_sqlite.sync.peek`): once the
extension is loaded, SQLite fails to open any other connection in that process (its
auto-extension hook returns garbage), and its Go runtime reads credentials only from the
environment the process started with. The child prints one JSON document."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

from ..errors import SyncError, SyncSetupError, UsageError
from . import litestream

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .state import SyncConfig

TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Peeked:
    """A peer's newest entries as its replica holds them (`store.sync.peek`)."""

    machine: str
    total: int  # the sessions it holds (heads, workspace-wide)
    txid: int | None  # the replica's transaction read (None: the VFS did not say)
    replica_time: str | None
    entries: tuple[dict[str, Any], ...]  # newest first, as `journal read --json` gives them

    def to_dict(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "total": self.total,
            "txid": self.txid,
            "replica_time": self.replica_time,
            "entries": list(self.entries),
        }


def peek_machine(config: SyncConfig, machine: str, n: int) -> Peeked:
    """The newest `n` entries of the one machine of this repository whose id starts with
    `machine`; UsageError when none or several do."""
    remote = config.remote()
    machines = [m for m in remote.machines(config.slug) if m.startswith(machine)]
    if len(machines) != 1:
        found = "no machine" if not machines else f"{len(machines)} machines"
        raise UsageError(f"{found} of this repository starts with {machine!r}")
    answer = peek(remote.vfs_url(config.slug, machines[0]), config.key, n)
    return Peeked(
        machine=machines[0],
        total=int(answer["total"]),
        txid=answer.get("txid"),
        replica_time=answer.get("replica_time"),
        entries=tuple(answer["entries"]),
    )


def peek(url: str, key: str, n: int) -> dict[str, Any]:
    """The peer's n newest entries (one per session, as a workspace-wide read shows them),
    how many it holds, and how fresh the replica is."""
    request = json.dumps({"url": url, "key": key, "n": n})
    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__],
            input=request,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            env=litestream.child_env(),
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SyncError(f"sync peek could not run: {exc}") from None
    try:
        answer: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        raise SyncError(f"sync peek failed: {done.stderr.strip()[-300:] or 'no answer'}") from None
    if "error" in answer:
        cls = SyncSetupError if answer.get("setup") else SyncError
        raise cls(str(answer["error"]))
    return answer


def _child(request: dict[str, Any]) -> dict[str, Any]:
    import ctypes

    import apsw

    try:
        import litestream_vfs
    except ModuleNotFoundError:
        return {"error": f"sync peek needs litestream-vfs: {litestream.install_hint()}", "setup": 1}
    from .. import identity
    from ..journal import codec
    from ..journal.entry import JournalEntry
    from ..journal.order import READ_ORDER

    so = litestream_vfs.loadable_path()
    boot = apsw.Connection(":memory:")
    boot.enable_load_extension(True)
    boot.load_extension(so)
    lib = ctypes.CDLL(so)
    lib.GoLitestreamConfigure.argtypes = [ctypes.c_char_p] * 3
    lib.GoLitestreamConfigure.restype = ctypes.c_void_p
    err = lib.GoLitestreamConfigure(b"peer", b"replica_url", str(request["url"]).encode())
    if err:
        return {"error": f"the replica URL was refused: {ctypes.string_at(err).decode()}"}
    try:
        conn = apsw.Connection(
            "file:peer?vfs=litestream&mode=ro",
            flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
        )
        synced = identity.synced_workspaces(conn, str(request["key"]))
        if not synced:
            return {"error": "the peer's replica holds no workspace of this sync key"}
        ws = synced[0][0]
        keys = {pk: key for pk, (key, _) in identity.worktree_names(conn, ws).items()}
        found = conn.execute(
            f"SELECT {codec.select_list()} FROM journal_entries"
            f" WHERE workspace_id = ? AND head_ws = 1 ORDER BY {READ_ORDER} LIMIT ?",
            (ws, int(request["n"])),
        ).fetchall()
        total = conn.execute(
            "SELECT coalesce(sum(heads), 0) FROM journal_counts_ws WHERE workspace_id = ?", (ws,)
        ).fetchall()[0][0]
        txid, when = conn.execute("SELECT litestream_txid(), litestream_time()").fetchall()[0]
    except apsw.Error as exc:
        return {"error": f"the peer's replica cannot be read: {exc}"}
    entries = JournalEntry.from_rows(found, lambda pk: keys.get(pk, f"#{pk}"))
    return {
        "entries": [e.to_dict() for e in entries],
        "total": int(str(total)),
        "txid": int(str(txid), 16) if txid else None,
        "replica_time": when,
    }


if __name__ == "__main__":
    try:
        out = _child(json.loads(sys.stdin.read()))
    except Exception as exc:  # noqa: BLE001 - the child answers in JSON, always
        out = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(out))
