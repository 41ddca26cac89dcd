"""jsontext answers what json answers: loads for every text, pretty for every value."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recall_sqlite import jsontext

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
        # keys json converts (int, bool, None, float): pretty leaves these to json
        | st.dictionaries(st.integers() | st.none() | st.booleans(), inner, max_size=2)
    ),
    max_leaves=12,
)


def _same(a: object, b: object) -> bool:
    """Equality that takes NaN as equal to NaN (json round-trips it)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@given(values, st.sampled_from([None, 0, 2]), st.sampled_from(["", " ", "\n\t ", "\r\n"]))
def test_loads_reads_every_document_json_writes(
    value: object, indent: int | None, pad: str
) -> None:
    text = pad + json.dumps(value, indent=indent, ensure_ascii=bool(indent)) + pad
    assert _same(jsontext.loads(text), json.loads(text))


@given(st.text(alphabet='[]{}",:0123456789.eE+-tfrunalsx \\\t\n\x00', max_size=20))
def test_loads_refuses_exactly_what_json_refuses(text: str) -> None:
    try:
        want = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            jsontext.loads(text)
    else:
        assert _same(jsontext.loads(text), want)


@pytest.mark.parametrize("text", ["", " ", "[1] x", "[1,]", '"\x01"', "\ufeff[]", "nul", "1 2"])
def test_loads_refuses_malformed_text(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        jsontext.loads(text)


@given(values)
def test_pretty_writes_what_json_writes(value: object) -> None:
    assert jsontext.pretty(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_pretty_leaves_a_deep_value_to_json() -> None:
    deep: list[object] = []
    for _ in range(300):
        deep = [{"k": deep}]
    assert jsontext.pretty(deep) == json.dumps(deep, indent=2, ensure_ascii=False)
