"""Journal semantics: content addressing, dedup to the richest version, ordering by instant,
scoping in SQL with nothing silently left out, carry-forward and pending next steps."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import (
    InvalidEntryError,
    JournalEntry,
    JournalFieldCollapse,
    Store,
    open_store,
)
from recall_sqlite.store import context_of
from tests.conftest import entry, make_workspace


def test_identical_append_stores_one_row(store: Store) -> None:
    first = store.journal.append(entry(session_id="s", focus="f"))
    again = store.journal.append(entry(session_id="s", focus="f"))
    assert first.created and not again.created
    assert first.id == again.id and first.seq == again.seq
    rows = context_of(store).db.query("SELECT count(*) FROM journal_entries")
    assert rows[0][0] == 1


def test_distinct_versions_are_kept_and_read_shows_the_richest(store: Store) -> None:
    stub = store.journal.append(
        entry("2026-01-01T10:00:00Z", session_id="s", focus="auto", auto=True)
    )
    manual = store.journal.append(
        entry("2026-01-01T09:00:00Z", session_id="s", focus="hand", done=["x"])
    )
    newer_auto = store.journal.append(
        entry("2026-01-01T11:00:00Z", session_id="s", auto=True, focus="later auto")
    )
    assert context_of(store).db.query("SELECT count(*) FROM journal_entries")[0][0] == 3
    result = store.journal.read(n=10)
    # non-auto beats auto even when the auto versions are newer
    assert [e.id for e in result.entries] == [manual.id]
    assert result.total == 1
    assert {stub.id, newer_auto.id}.isdisjoint({e.id for e in result.entries})


def test_within_a_class_newest_wins_then_richness(store: Store) -> None:
    store.journal.append(
        entry("2026-01-01T10:00:00Z", session_id="s", focus="a", done=["d"], decisions=["x"])
    )
    newer = store.journal.append(entry("2026-01-01T10:05:00Z", session_id="s", focus="b"))
    assert store.journal.read().entries[0].id == newer.id
    richer_same_instant = store.journal.append(
        entry("2026-01-01T10:05:00+00:00", session_id="s", focus="b", done=["more"])
    )
    assert store.journal.read().entries[0].id == richer_same_instant.id


def test_entries_without_session_id_are_never_merged(store: Store) -> None:
    a = store.journal.append(entry("2026-01-01T10:00:00Z", focus="one"))
    b = store.journal.append(entry("2026-01-01T10:00:00Z", focus="two"))
    assert {e.id for e in store.journal.read(n=10).entries} == {a.id, b.id}


def test_mixed_timestamp_forms_are_ordered_by_instant_and_kept_verbatim(store: Store) -> None:
    forms = {
        "z": "2026-03-01T12:00:00Z",
        "offset": "2026-03-01T13:30:00+02:00",  # 11:30Z, older than z
        "naive": "2026-03-01T12:30:00",  # naive = UTC: newest
        "minute": "2026-03-01T11:45",  # minute precision
        "fraction": "2026-03-01T11:59:59.999999+00:00",
    }
    for sid, ts in forms.items():
        store.journal.append(entry(ts, session_id=sid, focus=sid))
    got = store.journal.read(n=10).entries
    assert [e.session_id for e in got] == ["naive", "z", "fraction", "minute", "offset"]
    assert {e.session_id: e.timestamp for e in got} == forms


def test_meaningful_skips_auto_focus_only_entries(store: Store) -> None:
    store.journal.append(
        entry("2026-01-01T10:00:00Z", session_id="old", focus="real work", done=["d"])
    )
    store.journal.append(
        entry("2026-01-01T11:00:00Z", session_id="stub", focus="auto focus", auto=True)
    )
    store.journal.append(
        entry("2026-01-01T12:00:00Z", session_id="files", files_modified=["a.py"], auto=True)
    )
    assert store.journal.latest().entry is not None
    assert store.journal.latest().entry.session_id == "files"  # type: ignore[union-attr]
    latest = store.journal.latest(meaningful=True)
    assert latest.entry is not None and latest.entry.session_id == "old"
    assert latest.total == 1
    assert store.journal.read(meaningful=True).total == 1


def test_previous_meaningful_skips_the_current_session(store: Store) -> None:
    store.journal.append(entry("2026-01-01T10:00:00Z", session_id="a", focus="A"))
    store.journal.append(entry("2026-01-01T11:00:00Z", session_id="b", focus="B"))
    prev = store.journal.host.previous_meaningful("b")
    assert prev is not None and prev.session_id == "a"
    newest = store.journal.host.previous_meaningful("")
    assert newest is not None and newest.session_id == "b"


def test_write_carries_forward_unresolved_next_steps(store: Store) -> None:
    store.journal.write(
        focus="one", next_steps=["a", "b", "c"], session_id="s1", timestamp="2026-01-01T10:00:00Z"
    )
    w2 = store.journal.write(
        focus="two", done=["A"], next_steps=["d"], session_id="s2", timestamp="2026-01-02T10:00:00Z"
    )
    assert w2.entry.next_steps == [
        "d",
        "b [carried since 2026-01-01]",
        "c [carried since 2026-01-01]",
    ]
    assert (w2.carry.carried, w2.carry.retired_by_done) == (2, 1)
    # a later write of the same session: its earlier done items stay retired
    w3 = store.journal.write(
        focus="two again", done=["b"], session_id="s2", timestamp="2026-01-02T11:00:00Z"
    )
    assert w3.entry.next_steps == ["c [carried since 2026-01-01]"]
    assert store.journal.pending_next_steps().pending == ["c [carried since 2026-01-01]"]


def test_write_bounds_the_carry_and_says_so(store: Store) -> None:
    store.journal.write(
        focus="many",
        next_steps=[f"step {i}" for i in range(25)],
        session_id="s1",
        timestamp="2026-01-01T10:00:00Z",
    )
    w = store.journal.write(focus="next", session_id="s2", timestamp="2026-01-02T10:00:00Z")
    assert w.carry.carried == 20 and w.carry.withheld == 5
    assert w.entry.next_steps[-1].startswith("[carry bound] 5 carried steps withheld")
    assert "[carry bound]" not in " ".join(store.journal.pending_next_steps().pending)


def test_write_refuses_collapsed_markup_and_empty_entries(store: Store) -> None:
    with pytest.raises(JournalFieldCollapse):
        store.journal.write(focus='x</focus><parameter name="done">y</done>')
    with pytest.raises(InvalidEntryError):
        store.journal.write()
    assert context_of(store).db.query("SELECT count(*) FROM journal_entries")[0][0] == 0


def test_write_defaults_branch_to_the_worktree_branch(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    with open_store(root) as s:
        w = s.journal.write(focus="f")
        assert w.entry.branch == "feature/x"
        assert s.journal.read(branch="feature/x").total == 1


def test_branch_filter_reports_other_branches(store: Store) -> None:
    store.journal.append(entry("2026-01-01T10:00:00Z", session_id="a", branch="main", focus="x"))
    store.journal.append(entry("2026-01-01T11:00:00Z", session_id="b", branch="dev", focus="y"))
    store.journal.append(entry("2026-01-01T12:00:00Z", session_id="c", branch="dev", focus="z"))
    r = store.journal.read(branch="main")
    assert [e.session_id for e in r.entries] == ["a"]
    assert (r.total, r.elsewhere.other_branches, r.elsewhere.other_worktrees) == (1, 2, 0)
    r_all = store.journal.read(branch="dev", all_worktrees=True)
    assert [e.session_id for e in r_all.entries] == ["c", "b"]
    assert r_all.elsewhere.other_branches == 1


def test_total_counts_beyond_n(store: Store) -> None:
    store.journal.append_many(
        entry(f"2026-01-01T10:{i:02d}:00Z", session_id=f"s{i}", focus="f") for i in range(12)
    )
    r = store.journal.read(n=3)
    assert len(r.entries) == 3 and r.total == 12
    assert [e.session_id for e in r.entries] == ["s11", "s10", "s9"]


def test_append_many_is_all_or_nothing(store: Store) -> None:
    with pytest.raises(InvalidEntryError):
        store.journal.append_many(
            [entry(session_id="ok", focus="a"), entry(ts="not a time", session_id="bad")]
        )
    assert context_of(store).db.query("SELECT count(*) FROM journal_entries")[0][0] == 0


def test_unknown_fields_are_kept(store: Store) -> None:
    res = store.journal.append(entry(session_id="s", focus="f", legacy_tag={"k": [1, 2]}))
    got = store.journal.get(res.id)
    assert got is not None and got.extra == {"legacy_tag": {"k": [1, 2]}}
    assert store.journal.read().entries[0].extra == {"legacy_tag": {"k": [1, 2]}}


def test_read_rejects_bad_arguments(store: Store) -> None:
    with pytest.raises(InvalidEntryError):
        store.journal.read(n=-1)
    with pytest.raises(InvalidEntryError):
        store.journal.get("zz")


def test_store_is_safe_from_several_threads(store: Store) -> None:
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(40):
                store.journal.append(
                    entry(f"2026-01-01T10:{i:02d}:00Z", session_id=f"t{t}-{i}", focus="x")
                )
                store.journal.read(n=3)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert store.journal.read().total == 160


# --- properties ---------------------------------------------------------------------

_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00<"), max_size=12
)
_entries = st.builds(
    JournalEntry,
    timestamp=st.datetimes(
        min_value=__import__("datetime").datetime(2020, 1, 1),
        max_value=__import__("datetime").datetime(2030, 1, 1),
    ).map(lambda d: d.isoformat() + "+00:00"),
    session_id=st.sampled_from(["", "a", "b", "c"]),
    branch=st.sampled_from(["", "main", "dev"]),
    focus=_text,
    done=st.lists(_text, max_size=3),
    next_steps=st.lists(_text, max_size=3),
    auto=st.booleans(),
    extra=st.dictionaries(st.sampled_from(["x", "y"]), st.integers() | _text, max_size=2),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_entries, max_size=8))
def test_append_read_round_trip(tmp_path: Path, batch: list[JournalEntry]) -> None:
    root = make_workspace(tmp_path / str(abs(hash(tuple(map(repr, batch))))))
    with open_store(root) as s:
        ids = [s.journal.append(e).id for e in batch]
        for e, eid in zip(batch, ids, strict=True):
            got = s.journal.get(eid)
            assert got is not None
            assert got.synapt_dict() == e.synapt_dict() and got.extra == e.extra
        # appending the same batch again changes nothing
        assert [s.journal.append(e).created for e in batch] == [False] * len(batch)
        stored = context_of(s).db.query("SELECT count(*) FROM journal_entries")[0][0]
        assert stored == len(set(ids))
        # every session appears once; no-session entries are each their own
        shown = s.journal.read(n=100).entries
        sids = [e.session_id for e in shown if e.session_id]
        assert len(sids) == len(set(sids))
        assert s.journal.read(n=100).total == len(shown)


def test_versions_session_ids_and_done_items_see_every_stored_version(tmp_path: Path) -> None:
    """Hosts that replay a journal file need every version, not just the heads reads show."""
    root = make_workspace(tmp_path)
    (root / "desk" / ".git").mkdir(parents=True)
    with open_store(root) as s:
        s.journal.append(entry("2026-01-01T00:00:00Z", session_id="a", focus="stub", auto=True))
        s.journal.append(entry("2026-01-01T01:00:00Z", session_id="a", focus="real", done=["one"]))
        s.journal.append(entry("2026-01-01T02:00:00Z", session_id="a", done=["two"]))
        s.journal.append(entry("2026-01-01T03:00:00Z", focus="no session"))
        assert [e.focus for e in s.journal.versions()] == ["stub", "real", "", "no session"]
        assert [e.focus for e in s.journal.versions(session_id="a")] == ["stub", "real", ""]
        assert s.journal.host.session_ids() == {"a"}
        assert s.journal.host.done_items("a") == ["one", "two"]
        assert s.journal.versions(worktree="nope") == []
        assert len(s.journal.read(10).entries) == 2  # reads show one version per session
    with open_store(root / "desk") as d:
        d.journal.append(entry("2026-01-02T00:00:00Z", session_id="b", focus="desk"))
        assert [e.focus for e in d.journal.versions()] == ["desk"]
        assert [e.focus for e in d.journal.versions(worktree=".")][:1] == ["stub"]
        assert d.journal.host.session_ids(all_worktrees=True) == {"a", "b"}
        assert d.journal.host.done_items("a") == []
        assert d.journal.host.done_items("a", all_worktrees=True) == ["one", "two"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 5),
            st.sampled_from(["", "s1", "s2"]),
            st.sampled_from(["", "focus"]),
            st.booleans(),
            st.booleans(),
        ),
        max_size=12,
    )
)
def test_newest_is_latest_without_the_counts(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[int, str, str, bool, bool]]
) -> None:
    root = make_workspace(tmp_path_factory.mktemp("newest"))
    with open_store(root) as s:
        for minute, sid, focus, auto, step in rows:
            s.journal.append(
                entry(
                    f"2026-01-01T00:0{minute}:00+00:00",
                    session_id=sid,
                    focus=focus,
                    auto=auto,
                    next_steps=["x"] if step else [],
                )
            )
        for meaningful in (False, True):
            want = s.journal.latest(meaningful=meaningful).entry
            got = s.journal.host.newest(meaningful=meaningful)
            assert (got.id if got else None) == (want.id if want else None)
