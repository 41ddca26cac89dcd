"""memo and bounded: each answer computed once, at most n kept, an exception never kept."""

from __future__ import annotations

import pytest

from recall_sqlite.memo import bounded, memo


def test_memo_computes_each_answer_once() -> None:
    calls: list[tuple[int, str]] = []

    @memo
    def f(a: int, b: str) -> str:
        calls.append((a, b))
        return f"{a}{b}"

    assert [f(1, "x"), f(1, "x"), f(2, "x"), f(1, "y"), f(2, "x")] == ["1x", "1x", "2x", "1y", "2x"]
    assert calls == [(1, "x"), (2, "x"), (1, "y")]


def test_bounded_keeps_at_most_n_and_never_an_error() -> None:
    calls: list[int] = []

    @bounded(2)
    def g(a: int) -> int:
        calls.append(a)
        if a < 0:
            raise ValueError(a)
        return a * 10

    assert [g(1), g(1), g(2), g(2)] == [10, 10, 20, 20]
    assert calls == [1, 2]
    assert g(3) == 30  # full: the two kept are forgotten, 3 is kept
    assert g(1) == 10 and calls == [1, 2, 3, 1]
    for _ in range(2):
        with pytest.raises(ValueError):
            g(-1)
    assert calls.count(-1) == 2
