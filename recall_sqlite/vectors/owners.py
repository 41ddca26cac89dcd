"""What a vector belongs to. No numpy here: hosts name owners (and catch vector errors,
which live in errors.py) without loading it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ..checks import parse_entry_id, require_choice, require_int, require_list, require_pair
from ..errors import InvalidInputError, InvalidOwnerError

OwnerKind = Literal["entry", "summary"]
KINDS: tuple[OwnerKind, ...] = ("entry", "summary")


@dataclass(frozen=True)
class Owner:
    """What a vector belongs to: a journal entry version, named by its hex id as journal reads
    return it (`JournalEntry.id`), or a summary, named by its integer id. Build one with
    `Owner.entry(hex_id)`, `Owner.summary(summary_id)`, `Owner.parse("entry:<hex>")`; the API
    also accepts a plain tuple `("entry", hex_id)` / `("summary", summary_id)`."""

    kind: OwnerKind
    id: str | int

    @classmethod
    def entry(cls, hex_id: str) -> Owner:
        return cls("entry", parse_entry_id(hex_id, error=InvalidOwnerError).hex())

    @classmethod
    def summary(cls, summary_id: int) -> Owner:
        """A summary by its id: a positive integer (numpy's integers too)."""
        return cls(
            "summary",
            require_int("summary id", summary_id, minimum=1, index=True, error=InvalidOwnerError),
        )

    @classmethod
    def of(cls, value: OwnerLike) -> Owner:
        if isinstance(value, Owner):
            return cls._check(value.kind, value.id)
        kind, ident = require_pair(
            "an owner",
            value,
            what="Owner(kind, id) or ('entry', hex_id) / ('summary', id)",
            error=InvalidOwnerError,
        )
        return cls._check(kind, ident)

    @classmethod
    def parse(cls, text: str) -> Owner:
        """`entry:<hex>` or `summary:<id>`; a bare 32-digit hex id means an entry."""
        kind, sep, ident = text.partition(":")
        if not sep:
            return cls.entry(text)
        if kind == "summary":
            if not ident.isdigit():
                raise InvalidOwnerError(f"not a summary id: {ident!r}")
            return cls.summary(int(ident))
        return cls._check(kind, ident)

    @classmethod
    def _check(cls, kind: object, ident: object) -> Owner:
        if require_choice("owner kind", kind, KINDS, error=InvalidOwnerError) == "entry":
            return cls.entry(ident)  # type: ignore[arg-type]
        return cls.summary(ident)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id}


OwnerLike: TypeAlias = "Owner | tuple[str, str | int]"


def check_kinds(kinds: object) -> tuple[OwnerKind, ...]:
    """`kinds` as a search takes it (None: both; one kind; a list of kinds), checked."""
    if kinds is None:
        return KINDS
    items = require_list(
        "kinds", kinds, single=str, iterable=True, what="'entry', 'summary' or a list of them"
    )
    chosen = {require_choice("owner kind", item, KINDS) for item in items}
    if not chosen:
        raise InvalidInputError("kinds is empty: nothing could match")
    return tuple(k for k in KINDS if k in chosen)
