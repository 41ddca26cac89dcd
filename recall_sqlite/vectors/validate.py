"""Vectors as numpy sees them: what a cosine can be taken of (finite, non-zero, float32
range), as little-endian float32; norms and normalisation in float64, chunked."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..errors import InvalidVectorError

# Rows normalised per step: float64 copies of a big matrix would double memory.
NORMALISE_CHUNK = 8192

Float32Matrix = npt.NDArray[np.float32]


def as_float32(values: object, what: str, ndim: int) -> Float32Matrix:
    """Validate numerically and return little-endian float32, C-contiguous. Rejects what a
    cosine cannot be taken of or that float32 cannot hold, naming the first bad row."""
    if isinstance(values, (str, bytes)):
        raise InvalidVectorError(f"{what} must be numbers, got {type(values).__name__}")
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError) as exc:
        raise InvalidVectorError(f"{what} is not a numeric array: {exc}") from None
    if arr.dtype.kind not in "iuf":
        raise InvalidVectorError(f"{what} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        shape = "a 1-D vector" if ndim == 1 else "a 2-D array (one row per owner)"
        raise InvalidVectorError(f"{what} must be {shape}, got shape {arr.shape}")
    if arr.size == 0:
        raise InvalidVectorError(f"{what} is empty (dimension 0)")
    rows = arr.reshape(1, -1) if ndim == 1 else arr
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.ascontiguousarray(rows, dtype="<f4")
    if not np.isfinite(out).all():  # the cause is looked for only once there is one
        finite = np.isfinite(out).all(axis=1)
        i = int(np.argmin(finite))
        cause = (
            "contains NaN or infinity"
            if not np.isfinite(rows[i]).all()
            else "has a value beyond float32 range"
        )
        raise InvalidVectorError(f"{_row_name(what, ndim, i)} {cause}")
    norms = norms64(out)
    nonzero = norms > 0
    if not nonzero.all():
        raise InvalidVectorError(
            f"{_row_name(what, ndim, int(np.argmin(nonzero)))} is a zero "
            "vector (it has no direction, so no cosine)"
        )
    return out


def check_embedding(blob: bytes, what: str = "embedding") -> None:
    """Stored bytes (little-endian float32, as a put stores them) held to as_float32's
    rule: a pull checks a peer's embedding as a local put checks it."""
    as_float32(np.frombuffer(blob, dtype="<f4"), what, 1)


def rowwise_dot(matrix: Float32Matrix, q: Float32Matrix) -> npt.NDArray[np.float32]:
    if hasattr(np, "vecdot"):  # numpy >= 2.0
        return np.vecdot(matrix, q)  # type: ignore[no-any-return]
    return np.einsum("ij,j->i", matrix, q)  # type: ignore[no-any-return]


def _row_name(what: str, ndim: int, i: int) -> str:
    return what if ndim == 1 else f"{what}[{i}]"


def norms64(rows: Float32Matrix) -> npt.NDArray[np.float64]:
    """Row norms computed in float64, chunked: float32 squares of large or tiny values would
    overflow or vanish, and a whole float64 copy of a big matrix would double memory."""
    out = np.empty(rows.shape[0], dtype=np.float64)
    for start in range(0, rows.shape[0], NORMALISE_CHUNK):
        chunk = rows[start : start + NORMALISE_CHUNK].astype(np.float64)
        out[start : start + len(chunk)] = np.sqrt(np.einsum("ij,ij->i", chunk, chunk))
    return out


def normalise_into(dest: Float32Matrix, raw: Float32Matrix) -> None:
    for start in range(0, raw.shape[0], NORMALISE_CHUNK):
        chunk = raw[start : start + NORMALISE_CHUNK].astype(np.float64)
        norms = np.sqrt(np.einsum("ij,ij->i", chunk, chunk))
        dest[start : start + len(chunk)] = chunk / norms[:, None]
