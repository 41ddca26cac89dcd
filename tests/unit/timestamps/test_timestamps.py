"""The clock's conversions: microseconds to ISO text without datetime (a CLI start never
imports it) says what datetime says, at every instant a timestamp can name."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recall_sqlite import InvalidEntryError
from recall_sqlite.timestamps import (
    _general,
    _in_iso_utc_form,
    datetime_us,
    fast_us,
    is_after,
    iso_utc,
    parse_timestamp,
    synapt_now,
    synapt_shaped,
    utc_now_iso,
)

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
FIRST = datetime_us(datetime(1, 1, 1, tzinfo=timezone.utc))
LAST = datetime_us(datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc))


@given(st.integers(min_value=FIRST, max_value=LAST))
def test_iso_utc_is_datetimes_isoformat(us: int) -> None:
    want = (EPOCH + timedelta(microseconds=us)).isoformat(timespec="microseconds")
    assert iso_utc(us) == want
    assert parse_timestamp(iso_utc(us)) == us


@pytest.mark.parametrize("us", [FIRST, -1, 0, 1, 951_782_400_000_000, LAST])
def test_iso_utc_at_the_edges(us: int) -> None:
    assert iso_utc(us) == (EPOCH + timedelta(microseconds=us)).isoformat(timespec="microseconds")


def test_now_in_both_forms() -> None:
    before = datetime.now(timezone.utc)
    ours, synapts = parse_timestamp(utc_now_iso()), synapt_now()
    after = datetime.now(timezone.utc)
    assert datetime_us(before) <= ours <= datetime_us(after)
    assert before <= datetime.fromisoformat(synapts) <= after
    assert synapts.endswith("+00:00")


@given(
    st.integers(min_value=FIRST, max_value=LAST),
    st.integers(min_value=FIRST, max_value=LAST),
    st.sampled_from(["iso", "Z", "offset"]),
)
def test_is_after_is_the_instants_order(a: int, b: int, form: str) -> None:
    text = iso_utc(a)
    if form == "Z":
        text = text.replace("+00:00", "Z")
    elif form == "offset" and a // 1_000_000 > FIRST // 1_000_000 + 86_400:
        at = datetime.fromisoformat(iso_utc(a)).astimezone(timezone(timedelta(hours=-5)))
        text = at.isoformat(timespec="microseconds")
    assert is_after(text, b) == (a > b)


@pytest.mark.parametrize(
    "text",
    [
        "yesterday",
        "2026-13-01T00:00:00.000000+00:00",  # iso_utc's shape, no month 13: parsed, refused
        "2026-01-01T24:00:00.000000+00:00",
        "2026-02-30T00:00:00.000000+00:00",  # a day past its month's end
        "2025-02-29T00:00:00.000000+00:00",  # not a leap year
        "0000-01-01T00:00:00.000000+00:00",  # no year 0
    ],
)
def test_is_after_refuses_what_does_not_parse(text: str) -> None:
    with pytest.raises(InvalidEntryError):
        is_after(text, 0)


@given(
    st.integers(min_value=FIRST, max_value=LAST),
    st.lists(st.tuples(st.integers(0, 31), st.sampled_from("0123456789-T:.+Z \u0663")), max_size=3),
)
def test_the_text_comparison_is_taken_exactly_for_iso_utcs_own_texts(
    us: int, edits: list[tuple[int, str]]
) -> None:
    """is_after compares as text exactly when the text is one iso_utc writes (ASCII
    digits, fields in range, a real day): the text of the instant it parses to."""
    chars = list(iso_utc(us))
    for at, c in edits:
        chars[at] = c
    text = "".join(chars)
    try:
        own = text.isascii() and iso_utc(parse_timestamp(text)) == text
    except InvalidEntryError:
        own = False
    assert _in_iso_utc_form(text) == own


@given(
    st.tuples(
        st.integers(0, 10_000) | st.sampled_from([1900, 2000, 2023, 2024]),
        st.integers(0, 13) | st.just(2),
        st.integers(0, 32) | st.sampled_from([28, 29, 30, 31]),
        st.integers(0, 25),
        st.integers(0, 61),
        st.integers(0, 61),
        st.integers(0, 999_999),
    )
)
def test_the_text_comparison_checks_every_field_range(fields: tuple[int, ...]) -> None:
    y, mo, d, h, mi, s, f = fields
    text = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.{f:06d}+00:00"
    try:
        own = iso_utc(parse_timestamp(text)) == text
    except InvalidEntryError:
        own = False
    assert _in_iso_utc_form(text) == own


@given(st.integers(min_value=FIRST, max_value=LAST), st.booleans(), st.booleans())
def test_the_fast_path_is_the_general_parser_on_synapts_shapes(
    us: int, whole: bool, zulu: bool
) -> None:
    when = EPOCH + timedelta(microseconds=us)
    if whole:
        when = when.replace(microsecond=0)
    text = when.isoformat()  # what synapt writes: no fraction at a whole second
    if zulu:
        text = text[: -len("+00:00")] + "Z"
    assert synapt_shaped(text)
    assert fast_us(text) == _general(text) == parse_timestamp(text) == datetime_us(when)


@pytest.mark.parametrize(
    "text",
    [
        "\u0662\u0660\u0662\u0666-01-01T10:00:00+00:00",  # Arabic-Indic digits
        "2026-01-01T10:00:00.\uff11\uff12\uff13\uff14\uff15\uff16Z",  # fullwidth digits
    ],
)
def test_digits_that_are_not_ascii_go_to_the_general_parser(text: str) -> None:
    # They used to reach the fast path's ascii encode: an import stopped with an
    # internal error. Their reading is the general parser's, unchanged.
    assert not synapt_shaped(text) and fast_us(text) is None
    assert parse_timestamp(text) == _general(text)


@pytest.mark.parametrize(
    "text",
    [
        "2026-02-30T10:00:00+00:00",
        "2026-01-01T24:00:00Z",
        "2026-01-01T10:60:00Z",
        "2026-01-01T10:00:60.000001+00:00",
        "0000-01-01T00:00:00Z",
    ],
)
def test_a_shaped_instant_that_does_not_exist_is_refused(text: str) -> None:
    # After a real instant of the same day and time of day: what is cached of those parts
    # must not vouch for the others.
    fast_us(text[:11] + "10:00:00" + text[19:])
    assert synapt_shaped(text) and fast_us(text) is None
    with pytest.raises(InvalidEntryError):
        parse_timestamp(text)
