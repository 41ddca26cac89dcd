"""The carry stamp ("[carried since YYYY-MM-DD]") is read by hand, without `re`: it must split
every step exactly as synapt 0.30.0's own pattern does (differential, on text built to come
near the stamp: whitespace of every kind, decimal digits of other scripts, near misses)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from synapt.recall.journal import strip_carry_stamp as synapt_strip

from recall_sqlite.journal.carry import strip_carry_stamp

_PIECES = st.sampled_from(
    [
        "[carried since ",
        "]",
        "-",
        "2026",
        "12",
        "04",
        "٢٠٢٦",
        "１２",
        " ",
        "\n",
        "\t",
        "\u2003",
        "\x0b",
        "x",
        "[",
        "carried",
        "since",
        "2026-12-04",
        "]\n",
        "[carried since 2026-12-04]",
    ]
)
_STEPS = st.lists(st.one_of(_PIECES, st.text(max_size=3)), max_size=8).map("".join)


@given(_STEPS)
@settings(max_examples=600)
@example("do it [carried since 2026-12-04]")
@example("do it [carried since 2026-12-04]  \n")
@example("[carried since 2026-12-04]")
@example("a [carried since 2026-12-04] [carried since 2025-01-02]")
@example("a [carried since 2026-12-04] b")
@example("a [carried since ٢٠٢٦-١٢-٠٤]")
@example("a [carried since 2026-1-04]")
@example("a [carried since 20261-2-04]")
def test_the_stamp_splits_as_synapts_pattern_does(step: str) -> None:
    assert strip_carry_stamp(step) == synapt_strip(step)
