"""The local vector table (`store.vectors`): embeddings hosts store for entries and
summaries, searched by exact cosine, scoped like journal reads.

owner.py   Owner: what a vector belongs to (no numpy)
stats.py   what the table holds per model (SQL only, no numpy)
family.py  Vectors: put, get, delete, search, stats (imports numpy)

`from recall_sqlite.vectors import Owner` does not load numpy; the names that need it load
family.py on first use (PEP 562).
"""

from __future__ import annotations

import importlib

from .owner import KINDS, Owner, OwnerKind, OwnerLike
from .stats import ModelStats, VectorStats, vector_stats

TYPE_CHECKING = False
_FAMILY = (
    "Vectors",
    "PutResult",
    "SearchScope",
    "Hit",
    "SearchResult",
    "CacheInfo",
    "DEFAULT_CACHE_BYTES",
)
_ERRORS = ("InvalidVectorError", "InvalidOwnerError", "UnknownOwnerError", "UnknownModelError")

__all__ = [
    "DEFAULT_CACHE_BYTES",
    "KINDS",
    "CacheInfo",
    "Hit",
    "InvalidOwnerError",
    "InvalidVectorError",
    "ModelStats",
    "Owner",
    "OwnerKind",
    "OwnerLike",
    "PutResult",
    "SearchResult",
    "SearchScope",
    "UnknownModelError",
    "UnknownOwnerError",
    "VectorStats",
    "Vectors",
    "vector_stats",
]


def __getattr__(name: str) -> object:
    if name in _FAMILY:
        value = getattr(importlib.import_module(".family", __name__), name)
    elif name in _ERRORS:
        value = getattr(importlib.import_module("..errors", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from ..errors import (
        InvalidOwnerError,
        InvalidVectorError,
        UnknownModelError,
        UnknownOwnerError,
    )
    from .family import (
        DEFAULT_CACHE_BYTES,
        CacheInfo,
        Hit,
        PutResult,
        SearchResult,
        SearchScope,
        Vectors,
    )
