"""The workspace id file, `<root>/.synapt/recall/workspace.json`: the id is a property of
the workspace, minted once (a random UUID), published atomically so racing processes agree,
and restored from the database's record when the file was lost. No SQL here: the caller
says what the database recorded."""

from __future__ import annotations

import os
import time

from ..errors import WorkspaceAccessError, WorkspaceError
from ..jsontext import loads
from ..timestamps import parse_timestamp, utc_now_iso
from .datadir import data_dir
from .files import SMALL_FILE_LIMIT, ensure_private_dir, fsync_dir, os_failure, write_private

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

    from .files import StrPath

WORKSPACE_FILE: Final = "workspace.json"
_NIL_UUIDS: Final = frozenset(
    {"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"}
)
# The stdlib uuid module imports platform and costs milliseconds at import; a version-4 UUID
# is 122 random bits with fixed version/variant bits, so it is built here directly. Its
# canonical text is checked without `re` (a read imports no regular expression).
_HEX: Final = frozenset("0123456789abcdef")
_HYPHENS: Final = (8, 13, 18, 23)


def workspace_file(root: StrPath) -> str:
    return os.path.join(data_dir(root), WORKSPACE_FILE)


def read_workspace_id(root: StrPath) -> str | None:
    """The workspace id recorded under `root`, or None if none was minted yet. Never
    writes. Raises WorkspaceError for an unreadable or corrupt workspace.json."""
    data = _read(root)
    if data is None:
        return None
    path = workspace_file(root)
    value = data.get("workspace_id")
    if not isinstance(value, str):
        raise _corrupt(path, "no string 'workspace_id'")
    # Canonical text only, so one id never has two spellings in the database.
    if not is_canonical_uuid(value):
        raise _corrupt(path, f"workspace_id {value!r} is not a canonical lowercase UUID")
    return value


def created_us(root: StrPath) -> int | None:
    """When the id under `root` was minted (epoch us), or None when the file does not say."""
    try:
        data = _read(root)
    except WorkspaceError:
        return None
    if data is None or not isinstance(data.get("created_at"), str):
        return None
    try:
        return parse_timestamp(data["created_at"])
    except ValueError:
        return None


def is_canonical_uuid(value: str) -> bool:
    """8-4-4-4-12 lowercase hex digits, and not the nil or max UUID."""
    return (
        len(value) == 36
        and all(value[i] == "-" for i in _HYPHENS)
        and _HEX.issuperset(value.replace("-", ""))
        and value.count("-") == 4
        and value not in _NIL_UUIDS
    )


def _read(root: StrPath) -> dict[str, object] | None:
    path = workspace_file(root)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(SMALL_FILE_LIMIT + 1)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        # A file where `.synapt` or `recall` should be: nothing minted, and creating one
        # will fail loudly in ensure_private_dir.
        return None
    except OSError as exc:
        raise WorkspaceAccessError(f"cannot read {path}: {exc}") from exc
    if len(raw) > SMALL_FILE_LIMIT:
        raise _corrupt(path, f"larger than {SMALL_FILE_LIMIT} bytes")
    try:
        data = loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _corrupt(path, f"not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _corrupt(path, f"expected a JSON object, found {type(data).__name__}")
    return data


def _corrupt(path: str, why: str) -> WorkspaceError:
    return WorkspaceError(
        f"{path} is corrupt ({why}); it holds this workspace's identity, so it is not "
        "replaced automatically: fix it, or move it aside to mint a new id (entries "
        "stored under the old id then no longer belong to this workspace)"
    )


def _uuid4() -> str:
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def ensure_workspace_id(root: StrPath) -> str:
    """The workspace id recorded under `root`, minting and publishing one atomically if
    there is none. Processes racing here all return the same id."""
    path = workspace_file(root)
    for _ in range(5):
        existing = read_workspace_id(root)
        if existing is not None:
            return existing
        minted = _publish(path, _uuid4(), "created_at")
        if minted is not None:
            return minted
        winner = _read_winner(root)
        if winner is not None:
            return winner
        # The winner's file vanished again (someone deleting it): try once more.
    raise WorkspaceError(f"could not establish a workspace id at {path}: it keeps disappearing")


def restore_workspace_id(root: StrPath, uuid: str) -> None:
    """Write back a workspace id the database recorded for this root (workspace.json was
    deleted, or the store was copied or restored here). Atomic like a mint; a file that
    appeared meanwhile wins."""
    _publish(workspace_file(root), uuid, "restored_at")


def _publish(path: str, uuid: str, stamp: str) -> str | None:
    """Publish `uuid` at `path`; None if another process published first."""
    directory = os.path.dirname(path)
    ensure_private_dir(directory)
    import json

    when = utc_now_iso()
    payload = (json.dumps({"workspace_id": uuid, stamp: when}, indent=2) + "\n").encode()
    tmp = os.path.join(directory, f".{WORKSPACE_FILE}.{os.getpid()}.{os.urandom(8).hex()}.tmp")
    try:
        write_private(tmp, payload, exclusive=True)
        try:
            # link() publishes a complete file and fails if one exists, so readers never
            # see a partial file and a racing minter never overwrites the winner.
            os.link(tmp, path)
        except FileExistsError:
            return None
        except (OSError, NotImplementedError):
            # Filesystems without hard links: exclusive create is still race-free for
            # the winner; losers tolerate a briefly partial file in _read_winner.
            try:
                write_private(path, payload, exclusive=True)
            except FileExistsError:
                return None
    except OSError as exc:
        raise os_failure(f"cannot write {path}", exc) from exc
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    fsync_dir(directory)
    return uuid


def _read_winner(root: StrPath) -> str | None:
    # Only the no-hard-link fallback can expose a half-written file, and only for the
    # few milliseconds the winner spends writing it.
    deadline = time.monotonic() + 2.0
    while True:
        try:
            return read_workspace_id(root)
        except WorkspaceError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.02)
