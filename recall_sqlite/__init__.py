"""recall-sqlite: the session memory of coding agents in one SQLite database per workspace.

    from recall_sqlite import open_store
    store = open_store()                 # any directory of the workspace
    store.journal.append({...})
    result = store.journal.read(n=5)     # entries + scope + total + elsewhere

Names are loaded on first use (PEP 562), so `import recall_sqlite` in a hook or an MCP
server costs almost nothing until the store is opened.
"""

from __future__ import annotations

# Not typing.TYPE_CHECKING: importing typing alone costs more than the rest of this module.
# mypy honours any constant of this name.
TYPE_CHECKING = False

__version__ = "0.1.0"

# The public face, name -> the module that defines it: the one list of it. (The typed
# imports at the bottom say the same for type checkers; tests/house/test_architecture.py holds
# the two equal.)
_EXPORTS: dict[str, str] = {
    "open_store": "store",
    "restore_store": "store",
    "Store": "store",
    "WorkspaceInfo": "context",
    "WorktreeInfo": "context",
    "Scope": "scope",
    "Elsewhere": "scope",
    "JournalEntry": "journal",
    "ReadResult": "journal",
    "PendingResult": "journal",
    "AppendResult": "journal",
    "WriteResult": "journal",
    "CarryReport": "journal",
    "Summary": "summaries",
    "CoverRange": "summaries",
    "ALL_BRANCHES": "summaries",
    "Cursor": "cursors",
    "CursorMove": "cursors",
    "UnreadResult": "cursors",
    "UnreadEntry": "cursors",
    "RecallError": "errors",
    "WorkspaceError": "errors",
    "WorkspaceAccessError": "errors",
    "StoreError": "errors",
    "NotAStoreError": "errors",
    "ForeignDatabaseError": "errors",
    "SchemaTooNewError": "errors",
    "ReadOnlyStoreError": "errors",
    "BusyError": "errors",
    "CorruptStoreError": "errors",
    "DiskFullError": "errors",
    "StoreGoneError": "errors",
    "NoStoreError": "errors",
    "InvalidInputError": "errors",
    "InvalidEntryError": "errors",
    "FieldTooLargeError": "errors",
    "JournalFieldCollapse": "errors",
    "NotFoundError": "errors",
    "UnknownEntryError": "errors",
    "HostError": "errors",
    "SyncError": "errors",
    "SyncSetupError": "errors",
    "ReplicaOwnedError": "errors",
    "PeerError": "errors",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:  # noqa: F821 - Any is only for type checkers
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'recall_sqlite' has no attribute {name!r}")
    # __import__, not importlib: importing importlib brings warnings into every CLI start
    # (bench/RESULTS.md, row 'CLI start: importlib').
    value = getattr(__import__(f"{__name__}.{module}", fromlist=(name,)), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
    from typing import Any

    from .context import WorkspaceInfo as WorkspaceInfo
    from .context import WorktreeInfo as WorktreeInfo
    from .cursors import Cursor as Cursor
    from .cursors import CursorMove as CursorMove
    from .cursors import UnreadEntry as UnreadEntry
    from .cursors import UnreadResult as UnreadResult
    from .errors import BusyError as BusyError
    from .errors import CorruptStoreError as CorruptStoreError
    from .errors import DiskFullError as DiskFullError
    from .errors import FieldTooLargeError as FieldTooLargeError
    from .errors import ForeignDatabaseError as ForeignDatabaseError
    from .errors import HostError as HostError
    from .errors import InvalidEntryError as InvalidEntryError
    from .errors import InvalidInputError as InvalidInputError
    from .errors import JournalFieldCollapse as JournalFieldCollapse
    from .errors import NoStoreError as NoStoreError
    from .errors import NotAStoreError as NotAStoreError
    from .errors import NotFoundError as NotFoundError
    from .errors import PeerError as PeerError
    from .errors import ReadOnlyStoreError as ReadOnlyStoreError
    from .errors import RecallError as RecallError
    from .errors import ReplicaOwnedError as ReplicaOwnedError
    from .errors import SchemaTooNewError as SchemaTooNewError
    from .errors import StoreError as StoreError
    from .errors import StoreGoneError as StoreGoneError
    from .errors import SyncError as SyncError
    from .errors import SyncSetupError as SyncSetupError
    from .errors import UnknownEntryError as UnknownEntryError
    from .errors import WorkspaceAccessError as WorkspaceAccessError
    from .errors import WorkspaceError as WorkspaceError
    from .journal import AppendResult as AppendResult
    from .journal import CarryReport as CarryReport
    from .journal import JournalEntry as JournalEntry
    from .journal import PendingResult as PendingResult
    from .journal import ReadResult as ReadResult
    from .journal import WriteResult as WriteResult
    from .scope import Elsewhere as Elsewhere
    from .scope import Scope as Scope
    from .store import Store as Store
    from .store import open_store as open_store
    from .store import restore_store as restore_store
    from .summaries import ALL_BRANCHES as ALL_BRANCHES
    from .summaries import CoverRange as CoverRange
    from .summaries import Summary as Summary
