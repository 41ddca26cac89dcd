"""Record: the base of the value classes that every process start touches (the workspace,
the store context, journal entries and read results).

They are deliberately not dataclasses. Importing `dataclasses` (and with it `inspect`) and
generating the methods of each class cost a large part of what a session-start hook's
whole `journal read` may take (bench/RESULTS.md, row 'CLI start: dataclasses'); a Record
costs nothing to define. A
subclass lists its fields in `__slots__` and writes its own typed `__init__`; equality and
repr follow the slots in order. `Frozen` records are hashable and refuse assignment after
`__init__` (which sets fields with `_set`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Record:
    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, like a dataclass

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Frozen(Record):
    __slots__: tuple[str, ...] = ()

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable (cannot set {name!r})")

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())
