"""The local vector table (`store.vectors`): embeddings hosts store for entries and
summaries, searched by exact cosine, scoped like journal reads.

owners.py    Owner: what a vector belongs to; the kinds of owner (no numpy)
stats.py     what the table holds per model (SQL only, no numpy)
results.py   what the family returns (no numpy)
validate.py  vectors as numpy sees them: checked, float32, normalised
matrix.py    the per-scope matrix cache and its catch-up from the change log
vectors.py   Vectors: put, get, delete, search, stats

`from recall_sqlite.vectors import Owner` does not load numpy; `Vectors` and
`DEFAULT_CACHE_BYTES` load it on first use (PEP 562).
"""

from __future__ import annotations

import importlib

from ..errors import InvalidOwnerError, InvalidVectorError, UnknownModelError, UnknownOwnerError
from .owners import KINDS, Owner, OwnerKind, OwnerLike
from .results import CacheInfo, Hit, PutResult, SearchResult, SearchScope
from .stats import ModelStats, VectorStats, vector_stats

TYPE_CHECKING = False
# The names that need numpy, loaded on first use.
_NUMPY = ("Vectors", "DEFAULT_CACHE_BYTES")

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
    if name not in _NUMPY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(".vectors", __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from .vectors import DEFAULT_CACHE_BYTES as DEFAULT_CACHE_BYTES
    from .vectors import Vectors as Vectors
