"""recall-sqlite: the session memory of coding agents in one SQLite database per workspace.

    from recall_sqlite import open_store
    store = open_store()                 # any directory of the workspace
    store.journal.append({...})
    result = store.journal.read(n=5)     # entries + scope + total + elsewhere
"""

from .carry import CarryReport
from .errors import (
    BusyError,
    ForeignDatabaseError,
    InvalidEntryError,
    InvalidInputError,
    JournalFieldCollapse,
    NotAStoreError,
    NotFoundError,
    ReadOnlyStoreError,
    RecallError,
    SchemaTooNewError,
    StoreError,
    WorkspaceError,
)
from .journal import (
    AppendResult,
    Elsewhere,
    JournalEntry,
    PendingResult,
    ReadResult,
    Scope,
    WriteResult,
)
from .store import Store, WorkspaceInfo, open_store

__version__ = "0.1.0"

__all__ = [
    "AppendResult", "BusyError", "CarryReport", "Elsewhere", "ForeignDatabaseError",
    "InvalidEntryError", "InvalidInputError", "JournalEntry", "JournalFieldCollapse",
    "NotAStoreError", "NotFoundError", "PendingResult", "ReadOnlyStoreError", "ReadResult",
    "RecallError", "SchemaTooNewError", "Scope", "Store", "StoreError", "WorkspaceError",
    "WorkspaceInfo", "WriteResult", "open_store",
]
