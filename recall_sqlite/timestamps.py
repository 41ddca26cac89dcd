"""Time in the store: one parser for journal timestamps as found in real buckets (`Z`,
`+00:00`, other offsets, naive = UTC as synapt reads them, minute or second precision, any
fraction; written for Python 3.10 too, whose fromisoformat rejects most of these), one
clock and one microseconds-to-ISO conversion for every table family."""

from __future__ import annotations

import time

from .errors import BadTimestampError, FieldTypeError
from .memo import bounded, memo

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from datetime import datetime, timedelta, timezone

    _Clock = tuple[type[datetime], type[timedelta], type[timezone], datetime]

# datetime is imported when a text is first parsed, not here: it is a noticeable part of a
# CLI start (bench/RESULTS.md, row 'CLI start: datetime'), and a read never parses one (the
# instant is stored). Kept once imported: an import statement in a function costs on every
# call, and an import parses thousands (row 'timestamps: fast path').
_clock: _Clock | None = None


def _load() -> _Clock:
    """(datetime, timedelta, timezone, the epoch)."""
    global _clock
    from datetime import datetime, timedelta, timezone

    _clock = (datetime, timedelta, timezone, datetime(1970, 1, 1, tzinfo=timezone.utc))
    return _clock


# The pattern is compiled on first use: `re` (with `enum`) is a large part of a CLI read's
# start (bench/RESULTS.md, row 'CLI start: re'), and a read parses no timestamp.
@memo
def _iso_pattern() -> re.Pattern[str]:
    import re

    return re.compile(
        r"""^(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})
            (?:[T ](?P<h>\d{2}):(?P<mi>\d{2})
                (?::(?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?
                (?P<tz>Z|z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?
            )?$""",
        re.VERBOSE,
    )


def parse_timestamp(text: object) -> int:
    """The instant `text` names, in epoch microseconds UTC. Raises BadTimestampError, or
    FieldTypeError for a value that is not text (both InvalidEntryError)."""
    if not isinstance(text, str):
        raise FieldTypeError(f"timestamp must be an ISO-8601 string, got {type(text).__name__}")
    return _parse(text)


# Cached: validation and the row builder both parse the same text, and legacy imports
# repeat timestamps across buckets. Errors are raised, never cached.
@bounded(8192)
def _parse(text: str) -> int:
    us = fast_us(text)
    return _general(text) if us is None else us


# The shapes synapt writes, compiled on first use (a read parses no timestamp). ASCII
# only: `\d` also matches every script's digits, which int() reads but an ascii encode
# refuses (and synapt's fromisoformat does too).
@memo
def _synapt_shape() -> re.Pattern[str]:
    import re

    from .synapt_fields import TIMESTAMP

    return re.compile(TIMESTAMP + r"\Z", re.ASCII)


def synapt_shaped(text: str) -> bool:
    """Whether `text` has a shape synapt writes, 2026-11-29T20:46:35[.123456](+00:00|Z)."""
    return _synapt_shape().match(text) is not None


def fast_us(text: str) -> int | None:
    """Epoch us of a timestamp in a shape synapt writes, by arithmetic on cached days and
    times of day, a fraction of the general parser's time (bench/RESULTS.md, row
    'timestamps: fast path'); None sends anything else, and a date or time that does not
    exist, to the general parser."""
    return shaped_us(text.encode("ascii")) if synapt_shaped(text) else None


# What shaped_us has worked out: days by their bytes (journals span few days), and the
# microseconds of "HH:MM" and of "SS" (only real ones are kept). Two tables of at most
# 1,440 and 60 entries stay in the processor's caches, where one of every "HH:MM:SS" grew
# to 86,400 on a large journal and made the survey's lookups miss (bench/RESULTS.md, row
# 'timestamps: time-of-day tables').
_DAYS: dict[bytes, int | None] = {}
_MINUTES: dict[bytes, int] = {}
_SECONDS: dict[bytes, int] = {}


def shaped_us(ts: bytes) -> int | None:
    """fast_us of a timestamp already known to have synapt's shape (bytes, as the legacy
    survey matches it with synapt_fields.TIMESTAMP); None for a date or time that does
    not exist."""
    day = _DAYS.get(ts[:10], -1)
    if day == -1:
        datetime, _, timezone, epoch = _clock or _load()
        try:
            midnight = datetime.fromisoformat(ts[:10].decode()).replace(tzinfo=timezone.utc)
            day = (midnight - epoch).days * 86_400_000_000
        except ValueError:
            day = None
        if len(_DAYS) > 100_000:
            _DAYS.clear()
        _DAYS[ts[:10]] = day
    minute = _MINUTES.get(ts[11:16])
    if minute is None:
        h, m = int(ts[11:13]), int(ts[14:16])
        if h > 23 or m > 59:
            return None
        minute = _MINUTES[ts[11:16]] = (h * 60 + m) * 60_000_000
    second = _SECONDS.get(ts[17:19])
    if second is None:
        sec = int(ts[17:19])
        if sec > 59:
            return None
        second = _SECONDS[ts[17:19]] = sec * 1_000_000
    if day is None:
        return None
    us = day + minute + second
    return us + int(ts[20:26]) if ts[19:20] == b"." else us


def _general(text: str) -> int:
    """Every form the module docstring names."""
    datetime, timedelta, timezone, epoch = _clock or _load()
    m = _iso_pattern().match(text.strip())
    if m is None:
        raise BadTimestampError(f"unparseable timestamp {text!r}")
    try:
        frac = (m.group("f") or "").ljust(6, "0")[:6]
        naive = datetime(
            int(m.group("y")),
            int(m.group("mo")),
            int(m.group("d")),
            int(m.group("h") or 0),
            int(m.group("mi") or 0),
            int(m.group("s") or 0),
            int(frac),
        )
        delta = naive.replace(tzinfo=_offset(m.group("tz"), timedelta, timezone)) - epoch
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    except (ValueError, OverflowError) as exc:
        raise BadTimestampError(f"invalid timestamp {text!r}: {exc}") from None


def _offset(tz: str | None, timedelta: type[timedelta], timezone: type[timezone]) -> timezone:
    if not tz or tz in ("Z", "z"):
        return timezone.utc
    sign = -1 if tz[0] == "-" else 1
    digits = tz[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    seconds = int(digits[4:6] or 0)
    if hours > 23 or minutes > 59 or seconds > 59:
        raise ValueError(f"offset {tz} out of range")
    return timezone(sign * timedelta(hours=hours, minutes=minutes, seconds=seconds))


def iso_utc(us: int) -> str:
    """ISO-8601 UTC with microseconds, e.g. 2026-11-29T20:46:35.123456+00:00 (exact: integer
    arithmetic, no float division)."""
    secs, frac = divmod(us, 1_000_000)
    t = time.gmtime(secs)
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"
        f"T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{frac:06d}+00:00"
    )


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


# iso_utc's own form, 2026-11-29T20:46:35.123456+00:00: fixed width, so text order is
# time order. Checked by position, without `re` (every store open compares one).
_SEPARATORS = {4: "-", 7: "-", 10: "T", 13: ":", 16: ":", 19: "."}
_DIGITS = frozenset("0123456789")


def _in_iso_utc_form(text: str) -> bool:
    """Whether `text` is in iso_utc's form with ASCII digits, every field in range and a
    date that exists (no Feb 30, no year 0)."""
    if len(text) != 32 or text[26:] != "+00:00":
        return False
    if any(text[i] != c for i, c in _SEPARATORS.items()):
        return False
    if not _DIGITS.issuperset(text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16]):
        return False
    if not _DIGITS.issuperset(text[17:19] + text[20:26]):
        return False
    y, m, d = int(text[:4]), int(text[5:7]), int(text[8:10])
    if not (1 <= m <= 12 and text[11:13] < "24" and text[14:16] < "60" and text[17:19] < "60"):
        return False
    leap = m == 2 and y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    return y >= 1 and 1 <= d <= _MONTH_DAYS[m - 1] + leap


def is_after(text: str, us: int) -> bool:
    """Whether the instant `text` names is after `us`. A text in iso_utc's form (every
    time this store writes) naming a real date is compared as text, without parsing it;
    any other is parsed. Raises InvalidEntryError when `text` does not parse."""
    if _in_iso_utc_form(text):
        return text > iso_utc(us)
    return parse_timestamp(text) > us


def now_us() -> int:
    return time.time_ns() // 1000


def utc_now_iso() -> str:
    return iso_utc(now_us())


def synapt_now() -> str:
    """Now as synapt writes an entry's timestamp (`isoformat()`: no fraction at a whole
    second)."""
    datetime, _, timezone, _ = _clock or _load()
    return datetime.now(timezone.utc).isoformat()


def datetime_us(value: datetime) -> int:
    """A datetime as epoch microseconds UTC (naive = UTC, as synapt reads it); exact."""
    _, _, timezone, epoch = _clock or _load()
    aware = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    delta = aware - epoch
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
