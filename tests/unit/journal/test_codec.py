"""The journal codec is the one definition of an entry row: its hand-written canonical JSON
is exactly the generic encoder's, its id is the hash of that, its list columns are what
json writes, its derived columns follow synapt's rules, and every select list decodes by
name."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from recall_sqlite import synapt_layout as layout
from recall_sqlite.journal import codec
from recall_sqlite.journal.entry import JournalEntry
from recall_sqlite.migrations import v007_convergent as v007
from recall_sqlite.store import context_of

TEXT = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=12)
LISTS = st.lists(TEXT, max_size=3)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | TEXT
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
entries = st.builds(
    JournalEntry,
    timestamp=st.sampled_from(
        ["2026-01-01T00:00:00+00:00", "2026-03-04T05:06:07.123456Z", "2026-01-01 10:00"]
    ),
    session_id=TEXT,
    branch=TEXT,
    focus=TEXT,
    done=LISTS,
    decisions=LISTS,
    next_steps=LISTS,
    files_modified=LISTS,
    git_log=LISTS,
    auto=st.booleans(),
    enriched=st.booleans(),
    griptree=TEXT,
    agent_id=TEXT,
    repair=st.booleans(),
    extra=st.dictionaries(TEXT.filter(lambda k: k not in layout.FIELDS), JSON_VALUES, max_size=3),
)
UUID = "6f1c0e56-0000-4000-8000-000000000000"


@settings(max_examples=500, deadline=None)
@given(e=entries)
def test_encode_is_the_generic_encoders_answer(e: JournalEntry) -> None:
    e.validate()
    eid, row = e.encode()
    canon: dict[str, Any] = e.synapt_dict()
    if e.extra:
        canon["extra"] = e.extra
    text = json.dumps(
        canon, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    # v7: the content alone; before, the workspace uuid was hashed in (old tombstones)
    assert eid == hashlib.sha256(text.encode()).digest()[:16] == codec.entry_id(text)
    assert (
        codec.pre_v7_entry_id(UUID, text)
        == hashlib.sha256(f"{UUID}\n{text}".encode()).digest()[:16]
    )
    by_col = dict(zip(codec.CONTENT_COLUMNS, row, strict=True))
    for name in layout.LIST_FIELDS:
        assert by_col[name] == json.dumps(getattr(e, name), ensure_ascii=False)
        assert json.loads(by_col[name]) == getattr(e, name)
    for name in layout.BOOL_FIELDS:
        assert by_col[name] == int(getattr(e, name))
    assert by_col["extra"] == (codec.canonical_json(e.extra) if e.extra else None)
    assert by_col["rich"] == sum(1 for n in codec.RICH_FIELDS if getattr(e, n))
    assert by_col["meaningful"] == int(
        bool(e.done or e.decisions or e.next_steps or (e.focus and not e.auto))
    )
    assert by_col["sid_order"] == codec.tie_key(e.session_id, eid)
    # The v7 migration's frozen formulas are the live ones (for a row as stored).
    cols = v007._COPIED.replace(" ", "").split(",")[3:19]  # session_id .. extra
    stored = (0, 0, 0, *(by_col[c] for c in cols))
    assert v007.entry_id(stored) == eid
    assert v007.tie_key(e.session_id, eid) == by_col["sid_order"]


def test_every_content_column_is_a_table_column() -> None:
    from recall_sqlite.migrations import schema_sql

    table = schema_sql().split("CREATE TABLE journal_entries (", 1)[1].split(") STRICT", 1)[0]
    declared = {
        line.split()[0]
        for line in table.splitlines()
        if line.strip() and not line.strip().startswith("--")
    }
    assert set(codec.ROW_COLUMNS) <= declared


def test_rows_decode_by_name(tmp_path: Any) -> None:
    """A select list with the columns in another order decodes the same: decoding follows
    SELECT_INDEX, not positions written into the reader."""
    from recall_sqlite import open_store

    (tmp_path / "ws" / ".grip").mkdir(parents=True)
    with open_store(tmp_path / "ws") as s:
        s.journal.append(
            {
                "timestamp": "2026-01-01T00:00:00Z",
                "session_id": "s",
                "focus": "f",
                "done": ["d"],
                "auto": True,
                "legacy": {"k": 1},
            }
        )
        rows = context_of(s).db.query(f"SELECT {codec.select_list()} FROM journal_entries")
        (got,) = JournalEntry.from_rows(rows, context_of(s).worktree_key_of)
        assert (got.focus, got.done, got.auto, got.extra, got.session_id) == (
            "f",
            ["d"],
            True,
            {"legacy": {"k": 1}},
            "s",
        )
        assert codec.SELECT_COLUMNS[codec.SELECT_INDEX["focus"]] == "focus"
