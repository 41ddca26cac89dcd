"""recall-sqlite: the session memory of coding agents in one SQLite database per workspace.

    from recall_sqlite import open_store
    store = open_store()                 # any directory of the workspace
    store.journal.append({...})
    result = store.journal.read(n=5)     # entries + scope + total + elsewhere

Names are loaded on first use (PEP 562), so `import recall_sqlite` in a hook or an MCP
server costs almost nothing until the store is opened.
"""

from __future__ import annotations

import importlib

# Not typing.TYPE_CHECKING: importing typing alone costs more than the rest of this module.
# mypy honours any constant of this name.
TYPE_CHECKING = False

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "open_store": "store",
    "Store": "store",
    "WorkspaceInfo": "store",
    "JournalEntry": "journal",
    "ReadResult": "journal",
    "PendingResult": "journal",
    "AppendResult": "journal",
    "WriteResult": "journal",
    "Scope": "journal",
    "Elsewhere": "journal",
    "CarryReport": "journal",
    "Summary": "summaries",
    "CoverRange": "summaries",
    "ALL_BRANCHES": "summaries",
    "Cursor": "cursors",
    "CursorMove": "cursors",
    "UnreadResult": "cursors",
    "UnreadEntry": "cursors",
    "UnknownEntryError": "errors",
    "RecallError": "errors",
    "WorkspaceError": "errors",
    "StoreError": "errors",
    "NotAStoreError": "errors",
    "ForeignDatabaseError": "errors",
    "SchemaTooNewError": "errors",
    "ReadOnlyStoreError": "errors",
    "BusyError": "errors",
    "InvalidInputError": "errors",
    "InvalidEntryError": "errors",
    "JournalFieldCollapse": "errors",
    "NotFoundError": "errors",
    "HostError": "errors",
    "CorruptStoreError": "errors",
    "DiskFullError": "errors",
    "StoreGoneError": "errors",
    "NoStoreError": "errors",
    "FieldTooLargeError": "errors",
}

__all__ = [
    "ALL_BRANCHES",
    "CoverRange",
    "Cursor",
    "CursorMove",
    "Summary",
    "UnknownEntryError",
    "UnreadEntry",
    "UnreadResult",
    "AppendResult",
    "BusyError",
    "CarryReport",
    "CorruptStoreError",
    "DiskFullError",
    "Elsewhere",
    "FieldTooLargeError",
    "ForeignDatabaseError",
    "HostError",
    "NoStoreError",
    "StoreGoneError",
    "InvalidEntryError",
    "InvalidInputError",
    "JournalEntry",
    "JournalFieldCollapse",
    "NotAStoreError",
    "NotFoundError",
    "PendingResult",
    "ReadOnlyStoreError",
    "ReadResult",
    "RecallError",
    "SchemaTooNewError",
    "Scope",
    "Store",
    "StoreError",
    "WorkspaceError",
    "WorkspaceInfo",
    "WriteResult",
    "open_store",
]


def __getattr__(name: str) -> Any:  # noqa: F821 - Any is only for type checkers
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'recall_sqlite' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
    from typing import Any

    from .cursors import Cursor, CursorMove, UnreadEntry, UnreadResult
    from .errors import (
        BusyError,
        CorruptStoreError,
        DiskFullError,
        FieldTooLargeError,
        ForeignDatabaseError,
        HostError,
        InvalidEntryError,
        InvalidInputError,
        JournalFieldCollapse,
        NoStoreError,
        NotAStoreError,
        NotFoundError,
        ReadOnlyStoreError,
        RecallError,
        SchemaTooNewError,
        StoreError,
        StoreGoneError,
        UnknownEntryError,
        WorkspaceError,
    )
    from .journal import (
        AppendResult,
        CarryReport,
        Elsewhere,
        JournalEntry,
        PendingResult,
        ReadResult,
        Scope,
        WriteResult,
    )
    from .store import Store, WorkspaceInfo, open_store
    from .summaries import ALL_BRANCHES, CoverRange, Summary
