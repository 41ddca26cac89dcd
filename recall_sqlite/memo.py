"""Memoised functions without functools: importing it (with contextlib, which needs it)
weighs on a `journal read` process (bench/RESULTS.md, row 'CLI start: contextlib'), which
memoises a few SQL texts and nothing else.

`memo` keeps every answer (for functions of few distinct arguments: the SQL of a scope's
shape, or of none: a pattern or an encoder built on first use); `bounded(n)` keeps at most
n answers of a one-argument function that never answers None, forgetting all of them
when full (a hot path's cache: a session's tie order, a timestamp). An exception is
raised, never kept."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    R = TypeVar("R")
    A = TypeVar("A")


def memo(fn: Callable[..., R]) -> Callable[..., R]:
    answers: dict[tuple[Any, ...], R] = {}

    def memoised(*args: Any) -> R:
        try:
            return answers[args]
        except KeyError:
            answer = answers[args] = fn(*args)
            return answer

    memoised.__doc__, memoised.__name__ = fn.__doc__, fn.__name__
    return memoised


def bounded(size: int) -> Callable[[Callable[[A], R]], Callable[[A], R]]:
    def wrap(fn: Callable[[A], R]) -> Callable[[A], R]:
        answers: dict[A, R] = {}
        get = answers.get

        def memoised(arg: A) -> R:
            answer = get(arg)
            if answer is None:
                if len(answers) >= size:
                    answers.clear()
                answer = answers[arg] = fn(arg)
            return answer

        memoised.__doc__, memoised.__name__ = fn.__doc__, fn.__name__
        return memoised

    return wrap
