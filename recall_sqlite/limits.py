"""Every limit the store enforces on what it is given, defined once. Each is a guard
against input that would make every later read slow or impossible, not a tuning knob;
the modules that enforce them import them from here."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

# SQLite integers are signed 64-bit: a larger Python int cannot be bound at all.
INT64_MAX: Final = (1 << 63) - 1
INT64_MIN: Final = -INT64_MAX - 1
# Deeper nesting in an entry's unknown fields (`extra`) is refused on write and quarantined
# on import: json and every reader recurse per level.
MAX_NESTING: Final = 64
# The largest text field (or list field, items together) in UTF-8 bytes, unless
# RECALL_SQLITE_MAX_FIELD_BYTES says otherwise: every read prints the fields it shows, so
# a 20 MB focus pasted by mistake would cost every session start.
MAX_FIELD_BYTES: Final = 1 << 20
FIELD_BYTES_ENV: Final = "RECALL_SQLITE_MAX_FIELD_BYTES"
# A synapt line is a few KiB at most; one far beyond that is damage or not a journal, and
# parsing it would hold hundreds of MiB of objects. Such lines are quarantined whole.
MAX_LINE_BYTES: Final = 16 * 1024 * 1024
# Instants every reader can print, in epoch microseconds UTC: datetime covers years 1-9999,
# and an entry whose UTC instant falls outside (year 1 with a positive offset) would break
# every report that shows its date. Lines outside are quarantined on import.
MIN_INSTANT_US: Final = -62135596800 * 1_000_000
MAX_INSTANT_US: Final = 253402300799 * 1_000_000 + 999_999
# A vector model's name.
MAX_MODEL_LEN: Final = 200
# Words of a search query (an AND of more matches nearly nothing, and each costs a doclist
# read); the result says when the rest were dropped.
MAX_QUERY_TERMS: Final = 32
# A vector's dimension: the largest embedding models give a few thousand; far beyond is
# damage (a peer's blob of gigabytes would be loaded by every search of its model).
MAX_VECTOR_DIM: Final = 65536
# A machine id (sync/state.py mints it with secrets.token_hex(8)): this many hex digits.
MACHINE_ID_HEX: Final = 16
# A summary created at one microsecond on two machines moves the later arrival by 1 µs
# (sync/merge_summaries.py): its created_us may run ahead of its created_at by that much
# per clash, never behind it. A second of clashes is not a clash: a forged order.
MAX_CLASH_SHIFT_US: Final = 1_000_000
# A sync key (sync/key.py): the name of the repository on every machine.
MAX_SYNC_KEY: Final = 200

_field_limit: list[int] = []


def max_field_bytes() -> int:
    """MAX_FIELD_BYTES or RECALL_SQLITE_MAX_FIELD_BYTES (read once per process: validation
    is on every write)."""
    if not _field_limit:
        import os

        value = os.environ.get(FIELD_BYTES_ENV, "")
        _field_limit.append(max(1, int(value)) if value.isdigit() else MAX_FIELD_BYTES)
    return _field_limit[0]
