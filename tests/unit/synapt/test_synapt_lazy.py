"""The fast whole-worktree read (`_read_all_entries`) and the `_dedup_entries` short-cut:
the entries are synapt's, and the short-cut answers exactly what synapt's own dedup answers
over the same versions, or stands aside."""

from __future__ import annotations

import copy
import pickle
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import synapt.recall.journal as sj
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import Store, open_store
from recall_sqlite.synapt import api, lazy
from tests.conftest import make_workspace
from tests.helpers import full_dedup_tie, synapt_activated

# Several spellings of a few instants: equal timestamps across sessions and versions.
INSTANTS = [
    "2026-01-01T09:00:00+00:00",
    "2026-01-01T09:00:00Z",
    "2026-01-01T09:00:00",
    "2026-01-01T11:00:00+02:00",
    "2026-01-01T09:00:00.000001+00:00",
    "2026-01-02T08:00:00+00:00",
    "2026-01-02T08:00:00Z",
    "2025-12-31T23:59:59-05:00",
]
SESSIONS = ["", "s1", "s2", "s3", "s4"]
texts = st.lists(st.sampled_from(["a", "b", "c"]), max_size=2)
versions = st.lists(
    st.fixed_dictionaries(
        {
            "timestamp": st.sampled_from(INSTANTS),
            "session_id": st.sampled_from(SESSIONS),
            "focus": st.sampled_from(["", "f", "g"]),
            "done": texts,
            "decisions": texts,
            "next_steps": texts,
            "files_modified": st.lists(st.sampled_from(["x.py", "y.py"]), max_size=1),
            "auto": st.booleans(),
        }
    ),
    min_size=1,
    max_size=25,
)


@pytest.fixture(scope="module", autouse=True)
def _activated_for_the_module() -> Iterator[None]:
    with synapt_activated():
        yield


def fresh_store(entries: list[dict[str, Any]]) -> tuple[Store, tempfile.TemporaryDirectory[str]]:
    tmp = tempfile.TemporaryDirectory()
    store = open_store(make_workspace(Path(tmp.name)))
    for e in entries:  # one by one: the per-row trigger keeps the heads
        store.journal.append(e)
    return store, tmp


def plain(entries: list[Any]) -> list[Any]:
    return [sj.JournalEntry(**e.to_dict()) for e in entries]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(versions)
def test_the_short_cut_is_synapts_dedup_over_the_same_versions(
    history: list[dict[str, Any]],
) -> None:
    store, tmp = fresh_store(history)
    try:
        read = lazy.read_versions(store)
        got = lazy.dedup(read)  # before anything loads a list
        assert got is not None, "an untouched read takes the short-cut"
        original = api.ORIGINAL["_dedup_entries"]
        expected = original(list(read))
        if full_dedup_tie(history):
            # The documented difference (journal/order.py): of two fully tied versions
            # synapt keeps the first line, the store the smaller id. One per session still.
            assert len(got) == len(expected)
            return
        # The very same objects in the same order as synapt's dedup of this read ...
        assert [id(e) for e in got] == [id(e) for e in expected]
        # ... the read is every stored version, oldest first, as synapt's entries ...
        assert [e.to_dict() for e in read] == [
            sj.JournalEntry(**e.synapt_dict()).to_dict() for e in store.journal.versions()
        ]
        # ... and synapt's dedup of plain copies picks the same values.
        assert [e.to_dict() for e in got] == [e.to_dict() for e in original(plain(read))]
        # Loaded entries keep the short-cut, through the rebound name too.
        assert sj._dedup_entries is api._dedup_entries
        assert lazy.dedup(read) == expected and sj._dedup_entries(read) == expected
    finally:
        store.close()
        tmp.cleanup()


HISTORY = [
    {"timestamp": "2026-01-01T09:00:00+00:00", "session_id": "s1", "focus": "stub", "auto": True},
    {"timestamp": "2026-01-01T09:00:00Z", "session_id": "s1", "focus": "hand", "done": ["x"]},
    {"timestamp": "2026-01-01T10:00:00+00:00", "session_id": "s2", "next_steps": ["y"]},
    {"timestamp": "2026-01-01T10:00:00+00:00", "focus": "no session"},
    {"timestamp": "2026-01-01T11:00:00+00:00", "session_id": "s2", "focus": "later"},
]


@pytest.fixture
def lazy_store() -> Iterator[Store]:
    """A store holding HISTORY, appended one by one."""
    s, tmp = fresh_store(HISTORY)
    yield s
    s.close()
    tmp.cleanup()


def foreign() -> Any:
    return sj.JournalEntry(
        "2026-01-01T12:00:00+00:00", session_id="s1", focus="elsewhere", done=["z"]
    )


def test_a_list_extended_with_foreign_entries_goes_to_synapts_dedup(lazy_store: Store) -> None:
    read = lazy.read_versions(lazy_store)
    combined: list[Any] = []
    combined.extend(read)  # synapt's `all_entries.extend(_read_all_entries(jf))`
    assert lazy.dedup(combined) is None
    combined.append(foreign())
    assert lazy.dedup(combined) is None
    got = api._dedup_entries(combined)
    assert [id(e) for e in got] == [id(e) for e in api.ORIGINAL["_dedup_entries"](combined)]
    assert got[0].focus == "elsewhere"
    read.append(foreign())  # the read itself, extended
    assert lazy.dedup(read) is None
    assert [e.focus for e in api._dedup_entries(read)] == ["elsewhere", "later", "no session"]


@pytest.mark.parametrize(
    "change",
    [
        lambda es: es.reverse(),
        lambda es: es.__setitem__(0, foreign()),
        lambda es: setattr(es[0], "auto", False),
        lambda es: setattr(es[1], "timestamp", "2020-01-01T00:00:00+00:00"),
        lambda es: setattr(es[2], "session_id", "s9"),
        lambda es: setattr(es[4], "focus", ""),
        lambda es: setattr(es[1], "done", []),  # assigned before its lists were loaded
        lambda es: es[1].done.clear(),  # loaded, then emptied in place
    ],
)
def test_a_changed_read_goes_to_synapts_dedup(lazy_store: Store, change: Any) -> None:
    read = lazy.read_versions(lazy_store)
    change(read)
    assert lazy.dedup(read) is None
    got = api._dedup_entries(read)
    assert [id(e) for e in got] == [id(e) for e in api.ORIGINAL["_dedup_entries"](list(read))]


def test_loaded_lists_that_keep_their_emptiness_keep_the_short_cut(lazy_store: Store) -> None:
    read = lazy.read_versions(lazy_store)
    read[1].done.append("more")
    assert lazy.dedup(read) is not None


def test_lazy_entries_are_synapts_entries(lazy_store: Store) -> None:
    read = lazy.read_versions(lazy_store)
    e = read[1]
    assert isinstance(e, sj.JournalEntry) and repr(e).startswith("JournalEntry(")
    twin = sj.JournalEntry(**e.to_dict())
    assert e == twin and twin == e and e != foreign()
    assert e.done == ["x"] and e.decisions == [] and e.files_modified == []
    assert not hasattr(e, "worktree")
    for other in (copy.copy(e), copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        assert type(other) is sj.JournalEntry and other == twin


def test_many_loads_fetch_the_rest_of_the_read_in_one_go(tmp_path: Path) -> None:
    n = lazy.SINGLE_LOADS + 40
    with open_store(make_workspace(tmp_path)) as store:
        store.journal.append_many(
            [
                {
                    "timestamp": f"2026-01-01T09:{i // 60:02d}:{i % 60:02d}+00:00",
                    "session_id": f"s{i}",
                    "done": [f"d{i}"],
                    "git_log": [f"c{i}"],
                }
                for i in range(n)
            ]
        )
        read = lazy.read_versions(store)
        assert [e.done for e in read] == [[f"d{i}"] for i in range(n)]
        assert [e.git_log for e in read] == [[f"c{i}"] for i in range(n)]
        assert all(lazy._ROW not in vars(e) for e in read)
