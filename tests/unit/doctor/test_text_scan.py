"""doctor/text.py's quick decode of a whole table against each value decoded alone."""

from __future__ import annotations

import apsw
from hypothesis import example, given, settings
from hypothesis import strategies as st

from recall_sqlite.doctor import text

# Fragments of multi-byte characters (a lead byte, its continuations), so that a value's
# end and the next value's start often make a character only when joined without a
# separator; and ASCII, NUL and whole characters.
PIECE = st.sampled_from(
    [b"a", b"\x00", b"\xc3", b"\xa9", b"\xc3\xa9", b"\xe2\x82", b"\xac", b"\xf0\x9f\x98\x80"]
)
VALUE = st.one_of(st.none(), st.lists(PIECE, max_size=3).map(b"".join))


def _decodes(value: bytes | None) -> bool:
    if value is None:
        return True
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@settings(max_examples=300)
# A character split between two columns of a row, and between two rows.
@example([(b"\xc3", b"\xa9")])
@example([(b"a", b"\xe2\x82"), (b"\xac", None)])
@given(st.lists(st.tuples(VALUE, VALUE), max_size=8))
def test_a_table_decodes_whole_exactly_when_every_value_does(
    rows: list[tuple[bytes | None, bytes | None]],
) -> None:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE t (a TEXT, b TEXT)")
    conn.executemany("INSERT INTO t VALUES (CAST(? AS TEXT), CAST(? AS TEXT))", rows)
    want = all(_decodes(a) and _decodes(b) for a, b in rows)
    assert text._all_decode(conn, "t", ["a", "b"]) is want
    # ... and the scan then names exactly the undecodable rows.
    named = {key[0] for _, key, _ in text.scan(conn)}
    assert named == {i + 1 for i, (a, b) in enumerate(rows) if not (_decodes(a) and _decodes(b))}
