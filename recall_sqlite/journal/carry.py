"""Carry-forward of unresolved next steps, with synapt 0.30.0's matching rules: a step is
retired only by an exact (normalised) `done` item; carried steps are stamped with the date
they were first written; the carry is bounded and the bound announces itself; tool-call
markup from a collapsed field is never carried or served."""

from __future__ import annotations

from .._record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

# Literals that cannot occur in prose: an unclosed tool-call parameter swallowed the
# fields after it (synapt's recall journal documents the shapes seen in real stores).
COLLAPSE_SIGNATURES: tuple[str, ...] = (
    "</focus>",
    "</done>",
    "</decisions>",
    "</next_steps>",
    "</invoke>",
    "<parameter name=",
    "<focus>",
    "<done>",
    "<decisions>",
    "<next_steps>",
)
CARRY_LIMIT = 20
WITHHELD_PREFIX = "[carry bound]"


# Every signature holds a '<': text without one (nearly all) is answered by one scan.
assert all("<" in sig for sig in COLLAPSE_SIGNATURES)


def is_collapsed(text: object) -> bool:
    return isinstance(text, str) and "<" in text and any(sig in text for sig in COLLAPSE_SIGNATURES)


# "[carried since YYYY-MM-DD]": read by hand rather than by a pattern, so that a read of
# pending steps (a session-start hook's) never imports `re` (and with it enum). As synapt's
# pattern does, the stamp ends the step but for whitespace, and a digit is any decimal digit.
_STAMP_HEAD = "[carried since "
_STAMP_LEN = len(_STAMP_HEAD) + len("YYYY-MM-DD]")


def _is_date(text: str) -> bool:
    digits = text[:4] + text[5:7] + text[8:]
    return text[4] == "-" == text[7] and len(digits) == 8 and all(c.isdecimal() for c in digits)


def strip_carry_stamp(step: str) -> tuple[str, str | None]:
    tail = step.rstrip()
    if tail.endswith("]") and len(tail) >= _STAMP_LEN:
        stamp = tail[-_STAMP_LEN:]
        date = stamp[len(_STAMP_HEAD) : -1]
        if stamp.startswith(_STAMP_HEAD) and _is_date(date):
            return tail[:-_STAMP_LEN].strip(), date
    return step.strip(), None


def is_withheld_marker(step: str) -> bool:
    return step.strip().startswith(WITHHELD_PREFIX)


def step_key(step: str) -> str:
    """Normalise for exact matching: stamp ignored, display bullets ("- ", possibly
    repeated) ignored, whitespace collapsed, case folded."""
    bare = strip_carry_stamp(step)[0].strip()
    while bare.startswith("- "):
        bare = bare[2:]
    return " ".join(bare.split()).casefold()


class CarryReport(Record):
    __slots__ = ("carried", "retired_by_done", "retired_earlier", "withheld", "oldest_since")

    def __init__(
        self,
        carried: int = 0,
        retired_by_done: int = 0,
        retired_earlier: int = 0,
        withheld: int = 0,
        oldest_since: str | None = None,
    ) -> None:
        self.carried, self.retired_by_done, self.retired_earlier = (
            carried,
            retired_by_done,
            retired_earlier,
        )
        self.withheld, self.oldest_since = withheld, oldest_since

    def to_dict(self) -> dict[str, object]:
        return {
            "carried": self.carried,
            "retired_by_done": self.retired_by_done,
            "retired_earlier": self.retired_earlier,
            "withheld": self.withheld,
            "oldest_since": self.oldest_since,
        }


def _keys(items: Iterable[str]) -> set[str]:
    return {step_key(i) for i in items if i and i.strip()}


def merge_carried_forward(
    next_steps: Sequence[str],
    done: Sequence[str],
    previous_next_steps: Sequence[str],
    previous_timestamp: str,
    same_session_done: Sequence[str] = (),
) -> tuple[list[str], CarryReport]:
    """The new entry's next steps: its own first, then the previous meaningful entry's
    unresolved ones (stamped, bounded). `same_session_done` are the done items of this
    session's earlier writes, so a step retired minutes ago does not come back."""
    report = CarryReport()
    merged = [
        s.strip()
        for s in next_steps
        if s and s.strip() and not is_collapsed(s) and not is_withheld_marker(s)
    ]
    seen = {step_key(s) for s in merged}
    retired_now = _keys(done)
    retired_before = _keys(same_session_done) - retired_now
    retired = retired_now | retired_before
    if not previous_next_steps:
        return merged, report

    origin = previous_timestamp[:10]
    carried: list[tuple[str, str]] = []
    for step in previous_next_steps:
        clean = step.strip()
        if not clean or is_withheld_marker(clean) or is_collapsed(clean):
            continue
        key = step_key(clean)
        if key in seen:
            continue
        if key in retired:
            if key in retired_before:
                report.retired_earlier += 1
            else:
                report.retired_by_done += 1
            continue
        bare, since = strip_carry_stamp(clean)
        since = since or origin
        carried.append((f"{bare} [carried since {since}]" if since else bare, since))
        seen.add(key)

    kept, withheld = carried[:CARRY_LIMIT], carried[CARRY_LIMIT:]
    merged.extend(text for text, _ in kept)
    report.carried, report.withheld = len(kept), len(withheld)
    dates = sorted(d for _, d in carried if d)
    report.oldest_since = dates[0] if dates else None
    if withheld:
        marker = f"{WITHHELD_PREFIX} {len(withheld)} carried steps withheld"
        oldest = min((d for _, d in withheld if d), default=None)
        if oldest:
            marker += f"; oldest since {oldest}"
        marker += "; `recall-sqlite journal pending` lists every unresolved step"
        merged.append(marker)
    return merged, report
