"""The store served by Datasette's own server (uvicorn), read-only, on loopback.

How the file is opened, and why not one of Datasette's two ways alone:

* `datasette -i` (immutable=1) takes no lock and makes no file, but it reads the main file
  only: commits still in the -wal (a writer's, before its checkpoint) are invisible, and a
  checkpoint while it reads may show it a torn page. The store is written while an agent
  works, so that is wrong.
* `datasette FILE` opens every connection `mode=ro`: no write is possible, it reads beside
  a writer that holds the write lock, and it sees every commit. But on a WAL store without
  a -wal file, a read-only connection creates -wal and -shm and, unable to checkpoint,
  leaves them behind.

So the viewer is Datasette's `mode=ro` database, and when it stops, after closing every
connection Datasette opened, it has the store's own read-only open (db.py: query_only, the
-wal and -shm removed by SQLite when it is the last connection) close the store last. A
writer still at work is not done with its files, and keeps them: SQLite removes them only
for the last connection. A directory the viewer may not write (no -shm can be made) gets
immutable=1, as db.py's reader does, and only while no -wal holds commits.
"""

from __future__ import annotations

import json
import os
import sys

from ..errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    import sqlite3
    from typing import IO, Any

    from datasette.app import Datasette

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8001  # Datasette's own
DATABASE = "memory"  # the store's name in Datasette's URLs: /memory/journal
PEERS_DATABASE = "sync"
METADATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "metadata.json")
# Templates Datasette looks up before its own: query-memory-timeline.html draws the
# timeline canned query's rows as a chart.
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
SETTINGS = {
    # The file is never offered for download (it is the whole memory, forgotten-free or
    # not, and immutable databases would otherwise offer it).
    "allow_download": False,
    "default_facet_size": 10,
    # One person's viewer on a local file, not a public site: a large store's sorted
    # journal and its facets get more time than Datasette's defaults (1 s, 0.2 s).
    "sql_time_limit_ms": 5000,
    "facet_time_limit_ms": 2000,
}
PLUGIN_NAME = "recall_sqlite.browse"


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback one (127.0.0.0/8, ::1)."""
    import ipaddress
    import socket

    try:
        infos = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return False
    return bool(infos) and all(
        ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos
    )


def check_host(host: str | None, *, explicit: bool) -> str:
    """The address to bind: loopback unless a host was named explicitly (`--host`); a
    non-loopback host that was not is refused, since the memory would be open to that
    network."""
    if host is None:
        return DEFAULT_HOST
    if not is_loopback(host) and not explicit:
        raise UsageError(
            f"refusing to serve the store on {host}, which is not a loopback address: "
            f"anyone who reaches it could read this memory (name it with --host {host})"
        )
    return host


def metadata() -> dict[str, Any]:
    """metadata.json, the package's Datasette metadata."""
    with open(METADATA, encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def datasette_missing() -> bool:
    try:
        import datasette  # noqa: F401
    except ModuleNotFoundError:
        return True
    return False


def require_datasette() -> None:
    if datasette_missing():
        from ..dist import install_hint

        raise UsageError(f"this command needs Datasette: {install_hint('browse')}")


def _register_plugin() -> None:
    from datasette.plugins import pm

    from . import cells

    if not pm.is_registered(cells):
        pm.register(cells, name=PLUGIN_NAME)


def _companions(path: str) -> list[str]:
    return [p for p in (f"{path}-wal", f"{path}-shm") if os.path.exists(p)]


def _wal_holds_commits(path: str) -> bool:
    try:
        return os.stat(f"{path}-wal").st_size > 0
    except OSError:
        return False


def _readable_mode_ro(path: str) -> bool:
    """Whether a `mode=ro` connection can read the file here (a WAL store needs its -shm,
    which a directory this process may not write cannot take)."""
    import sqlite3
    from urllib.parse import quote

    try:
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()
        return True
    except sqlite3.Error:
        return False
    finally:
        conn.close()


class _Viewer:
    """One Datasette instance on one store file, and what it must undo when it stops."""

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        require_datasette()
        from datasette.app import Datasette
        from datasette.database import Database

        self.path = os.path.abspath(os.fspath(db_path))
        if not os.path.isfile(self.path):
            raise UsageError(f"{self.path}: no store file to browse")
        mutable = _readable_mode_ro(self.path)
        if not mutable and _wal_holds_commits(self.path):
            raise UsageError(
                f"{self.path} lies where it cannot be read beside its -wal file, which still "
                "holds commits: open it once where it is writable to checkpoint it"
            )
        _register_plugin()
        ds = Datasette(metadata=metadata(), settings=SETTINGS, template_dir=TEMPLATES)
        ds.remove_database("_memory")
        ds.add_database(Database(ds, path=self.path, is_mutable=mutable), name=DATABASE)
        self._peers = self._peers_database(ds)
        self.datasette: Datasette = ds

    def _peers_database(self, ds: Datasette) -> sqlite3.Connection:
        """sync/peers.py's record of the other machines (outside the store, by design) as
        an in-memory database of its own; this connection keeps it alive."""
        import secrets
        import sqlite3
        from pathlib import Path

        from datasette.database import Database

        from ..sync import place
        from ..sync.peers import Peer, PeerBook

        name = secrets.token_hex(8)
        conn = sqlite3.connect(f"file:{name}?mode=memory&cache=shared", uri=True)
        columns = [*Peer.__slots__, "behind"]
        conn.execute(f"CREATE TABLE peers ({', '.join(columns)}, PRIMARY KEY (machine))")
        peers = PeerBook(Path(place.directory(self.path)) / place.PEERS).load()
        conn.executemany(
            f"INSERT INTO peers VALUES ({', '.join('?' * len(columns))})",
            [[*(getattr(p, c) for c in Peer.__slots__), int(p.behind)] for p in peers.values()],
        )
        conn.commit()
        ds.add_database(Database(ds, memory_name=name), name=PEERS_DATABASE)
        return conn

    def close(self) -> None:
        for db in self.datasette.databases.values():
            db.close()
        self._peers.close()
        if _companions(self.path):
            leave_nothing_behind(self.path)

    def __enter__(self) -> _Viewer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def viewer(db_path: str | os.PathLike[str]) -> _Viewer:
    """Datasette on the store file at `db_path`, read-only (use it with `with`)."""
    return _Viewer(db_path)


def leave_nothing_behind(path: str) -> None:
    """Remove the -wal/-shm files read-only connections made, or that a writer which
    stopped while they read left to them: the store's own read-only open (db.py) closes
    as the last connection, so SQLite removes them; where another process still has the
    store open, they are its files and stay."""
    from ..db import Database
    from ..errors import RecallError

    try:
        Database(path, read_only=True).close()
    except RecallError:
        pass  # harmless files: the next open of the store removes them


def workspaces_in(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(workspace id, its last root) of every workspace the file holds: the viewer shows
    the whole file, so a file shared by several (`--db`) shows each of them."""
    from .. import identity
    from ..db import Database

    db = Database(path, read_only=True)
    try:
        return identity.workspaces_last_seen(db)
    finally:
        db.close()


def _bind(host: str, port: int) -> socket.socket:
    import socket

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise UsageError(f"cannot serve on {host}: {exc.strerror or exc}") from None
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot serve on {host}:{port}: {exc.strerror or exc} (choose another --port)"
        ) from None
    return sock


def url_of(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/{DATABASE}"


def serve(
    db_path: str | os.PathLike[str],
    *,
    host: str | None = None,
    port: int = DEFAULT_PORT,
    explicit_host: bool = False,
    open_browser: bool = True,
    out: IO[str] | None = None,
) -> None:
    """Serve the store until interrupted (Ctrl-C, SIGTERM), then leave the file as it was."""
    require_datasette()
    import uvicorn

    bound = check_host(host, explicit=explicit_host)
    out = sys.stdout if out is None else out
    held = workspaces_in(db_path)
    if len(held) > 1:
        sys.stderr.write(
            f"recall-sqlite: warning: this file holds {len(held)} workspaces' memory "
            f"({', '.join(root for _, root in held)}): the viewer shows all of it\n"
        )
    with viewer(db_path) as v:
        sock = _bind(bound, port)
        url = url_of(bound, port)
        if not is_loopback(bound):
            sys.stderr.write(
                f"recall-sqlite: warning: {bound} is not loopback: the network reads this memory\n"
            )
        out.write(f"Serving {v.path} read-only at {url} (Ctrl-C stops it)\n")
        out.flush()
        if open_browser:
            import webbrowser

            webbrowser.open(url)
        config = uvicorn.Config(v.datasette.app(), log_level="warning", lifespan="on")
        previous = _stop_on_signals()
        try:
            uvicorn.Server(config).run(sockets=[sock])
        except _Stopped:
            pass
        finally:
            _restore(previous)
            sock.close()


class _Stopped(Exception):
    """SIGINT or SIGTERM, after uvicorn's graceful shutdown: serving is over."""


def _stop(signum: int, frame: object) -> None:
    raise _Stopped


def _stop_on_signals() -> dict[int, Any]:
    """uvicorn shuts down on SIGINT and SIGTERM, then raises the signal again under the
    handler it found: this one, so that the viewer's cleanup runs (SIGTERM's default would
    end the process first, leaving the -wal and -shm the viewer made)."""
    import signal

    previous: dict[int, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, _stop)
        except ValueError:
            break  # not the main thread: signals are its caller's
    return previous


def _restore(previous: dict[int, Any]) -> None:
    import signal

    for sig, handler in previous.items():
        signal.signal(sig, handler)
