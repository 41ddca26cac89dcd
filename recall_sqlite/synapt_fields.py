"""synapt 0.30.0's journal entry: its fields, their order and kinds, and their defaults
(synapt/recall/journal.py `JournalEntry`). A module of its own, without synapt_layout's
filesystem rules, because every read of the journal needs these names and nothing else
of synapt's files; synapt_layout re-exports them for the code that handles lines."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

# synapt 0.30.0's JournalEntry fields, in its order (append_entry writes them so), by kind.
FIELDS: Final = (
    "timestamp",
    "session_id",
    "branch",
    "focus",
    "done",
    "decisions",
    "next_steps",
    "files_modified",
    "git_log",
    "auto",
    "enriched",
    "griptree",
    "agent_id",
    "repair",
)
TEXT_FIELDS: Final = ("session_id", "branch", "focus", "griptree", "agent_id")
LIST_FIELDS: Final = ("done", "decisions", "next_steps", "files_modified", "git_log")
BOOL_FIELDS: Final = ("auto", "enriched", "repair")
# The timestamps synapt writes: datetime.now(timezone.utc).isoformat(), or with Z (a
# pattern's text: the legacy survey matches it in bytes, the timestamp parser in text).
TIMESTAMP: Final = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{6})?(?:\+00:00|Z)"


def defaults() -> dict[str, Any]:
    """synapt's JournalEntry defaults, a fresh copy: what a missing key (or, as recall-sqlite
    reads it, a JSON null) means for each field except the timestamp."""
    return {
        **{n: "" for n in TEXT_FIELDS},
        **{n: [] for n in LIST_FIELDS},
        **{n: False for n in BOOL_FIELDS},
    }
