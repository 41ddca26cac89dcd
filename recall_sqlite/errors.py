"""Typed errors. Every failure a caller can cause has its own class, so hosts can
catch precisely and the CLI can print one line instead of a traceback."""

from __future__ import annotations


class RecallError(Exception):
    """Base of every error this package raises on purpose.

    `exit_code` is what the CLI exits with: 1 for a failure at run time (a busy, corrupt,
    full or missing store), 2 for a mistake in what the caller asked (see the subclasses
    that set it)."""

    exit_code = 1


# --- identity -------------------------------------------------------------


class WorkspaceError(RecallError):
    """A workspace could not be resolved (bad override, $HOME or / as root, ...)."""

    exit_code = 2


class WorkspaceAccessError(WorkspaceError):
    """A file or directory of the workspace exists but cannot be read, written or created
    (permissions, I/O): a failure at run time (exit 1), not a mistake in the command."""

    exit_code = 1


# --- the database file ----------------------------------------------------


class StoreError(RecallError):
    """The database file cannot be used as a recall-sqlite store."""


class NotAStoreError(StoreError):
    """The file exists but is not an SQLite database."""


class ForeignDatabaseError(StoreError):
    """The file is SQLite but belongs to another application."""


class SchemaTooNewError(StoreError):
    """The file was written by a newer recall-sqlite; this code must not touch it."""


class ReadOnlyStoreError(StoreError):
    """A write was attempted on a store opened (or only openable) read-only."""


class BusyError(StoreError):
    """Another process held the write lock for longer than the busy timeout."""


class CorruptStoreError(StoreError):
    """SQLite found the file damaged (run `recall-sqlite doctor`)."""


class DiskFullError(StoreError):
    """The disk (or a quota) is full: nothing of the failed write was kept."""


class StoreGoneError(StoreError):
    """The database file was deleted or replaced while this process had it open: a write
    would go to a file nobody will ever read again, so it is refused."""


class NoStoreError(StoreError):
    """A read found no store (or no workspace id) yet: nothing was created."""


class NeedsMigrationError(StoreError):
    """The store's schema is older than this code's and it was opened read-only, so it
    cannot be upgraded: open it once for writing (the CLI's reads do, unless --read-only)."""


# --- input ----------------------------------------------------------------


class InvalidInputError(RecallError, ValueError):
    """Caller-supplied data was rejected; nothing was written."""

    exit_code = 2


class InvalidEntryError(InvalidInputError):
    """A journal entry has a wrong field type, a bad timestamp, or forbidden text.

    `reason` is the code an import quarantines such a line under (legacy/lines.py; it is
    stored in the store and grouped by in reports): the class raised decides it where the
    mistake is found, never the wording of the message. Users' stores hold these values:
    never change one."""

    reason = "invalid-entry"


class MissingTimestampError(InvalidEntryError):
    """The entry has no timestamp (or a null one)."""

    reason = "missing-timestamp"


class BadTimestampError(InvalidEntryError):
    """The timestamp is text but names no instant this store keeps (unparseable, out of
    range, or with a NUL or a lone surrogate in it)."""

    reason = "bad-timestamp"


class FieldTypeError(InvalidEntryError):
    """A field (or the entry itself) is of the wrong JSON type: a number for a text, a text
    for a list, a string for true or false."""

    reason = "wrong-type"


class FieldTextError(InvalidEntryError):
    """A text field holds what SQLite would not give back unchanged: a NUL character or a
    lone surrogate."""

    reason = "bad-text"


class FieldTooLargeError(InvalidEntryError):
    """A text field (or a list field, all items together) is larger than the store's limit
    (default 1 MiB; `RECALL_SQLITE_MAX_FIELD_BYTES`)."""

    # the same reason as a line over the import's length limit: size is looked for in one place
    reason = "too-long"


class JournalFieldCollapse(InvalidEntryError):
    """A journal text field carries tool-call markup from an unclosed parameter
    (synapt refuses these on write; so do we)."""


class UsageError(InvalidInputError):
    """A command line that parses but makes no sense."""


class NotFoundError(RecallError, LookupError):
    """A referenced entry, summary or other object does not exist in this workspace."""

    exit_code = 2


class UnknownEntryError(InvalidInputError, NotFoundError):
    """An entry id given as input does not exist in this workspace (or not where it was
    expected). Both an input error (nothing was written) and a lookup failure."""


# --- vectors (here, not beside numpy: a host catches them without importing it) ---


class InvalidVectorError(InvalidInputError):
    """A vector was rejected (wrong dimension, NaN or infinity, empty or zero, not numeric);
    nothing was written."""


class InvalidOwnerError(InvalidInputError):
    """An owner reference is malformed (unknown kind, not a hex entry id, not a summary id)."""


class UnknownOwnerError(NotFoundError):
    """The entry or summary does not exist in this workspace."""


class UnknownModelError(NotFoundError):
    """This workspace has never stored a vector of that model, so its dimension is unknown."""


# --- legacy import -----------------------------------------------------------


class ImportConflict(StoreError):
    """Another process imported the same source file at the same time."""


class ImportWorkerError(RecallError):
    """A worker process of the import (legacy/workers.py) died or failed: the import
    stopped, what its chunks committed stays, and running it again resumes from there."""


# --- hosts ----------------------------------------------------------------


class HostError(RecallError):
    """A host adapter (recall_sqlite.synapt) cannot run: an unsupported host version, or a
    store problem met while answering the host, reported as one clear message."""


# --- more than one machine (sync/) -------------------------------------------


class SyncError(RecallError):
    """Sync could not do what was asked at run time: Litestream missing or failing, a
    replica that cannot be reached or read."""


class SyncSetupError(SyncError):
    """Sync is not set up, or set up wrongly: no `sync init`, a bad replica URL, no sync
    key for this repository."""

    exit_code = 2


class ReplicaOwnedError(SyncError):
    """The replica path belongs to another machine (or another copy of this store): two
    writers on one Litestream replica would corrupt it, so this one does not start."""


class PeerError(SyncError):
    """A peer's replica cannot be merged: not a store, written by a newer recall-sqlite,
    or holding no workspace of this repository's sync key."""
