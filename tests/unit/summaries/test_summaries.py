"""Summaries: store-assigned, strictly increasing created_at; supersede history; staleness
in insertion order; removal of links and vectors; typed errors that write nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import recall_sqlite.summaries as summaries_mod
from recall_sqlite import InvalidInputError, NotFoundError, Store
from recall_sqlite.errors import UnknownEntryError
from recall_sqlite.store import context_of
from recall_sqlite.summaries import ALL_BRANCHES, CoverRange
from recall_sqlite.timestamps import parse_timestamp
from tests.conftest import entry
from tests.helpers import cli_here, run_at_once

ISO_US = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$")


def _append(store: Store, branch: str = "main", **fields: Any) -> Any:
    fields.setdefault("ts", "2026-01-01T00:00:00Z")
    ts = fields.pop("ts")
    return store.journal.append(entry(ts, branch=branch, **fields))


def _increasing(values: list[Any]) -> bool:
    return all(values[i] < values[i + 1] for i in range(len(values) - 1))


def _counts(store: Store) -> tuple[int, ...]:
    return tuple(
        context_of(store).db.query(f"SELECT count(*) FROM {t}")[0][0]
        for t in ("summaries", "summary_sources", "cursors", "journal_entries")
    )


# -- created_at ---------------------------------------------------------------------------------


def test_add_assigns_utc_microsecond_created_at_and_records_fields(store: Store) -> None:
    a = _append(store, focus="a", session_id="a")
    s = store.summaries.add(
        "what happened", branch="main", kind="day", covers=[a.id], author="claude-x"
    )
    assert ISO_US.match(s.created_at)
    assert parse_timestamp(s.created_at) == s.created_us
    assert (s.branch, s.kind, s.text, s.author, s.entry_ids) == (
        "main",
        "day",
        "what happened",
        "claude-x",
        (a.id,),
    )
    assert s.current and not s.stale and s.workspace_id == store.workspace.id
    assert store.summaries.get(s.id) == s


def test_same_microsecond_and_clock_going_back_stay_strictly_increasing(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = iter([5_000_000_000_000_000] * 3 + [4_000_000_000_000_000] * 2)
    monkeypatch.setattr(summaries_mod, "now_us", lambda: next(clock))
    made = [store.summaries.add(f"s{i}", kind=f"k{i}") for i in range(5)]
    assert [s.created_us for s in made] == [5_000_000_000_000_000 + i for i in range(5)]
    assert [s.created_at for s in made] == sorted({s.created_at for s in made})
    assert all(parse_timestamp(s.created_at) == s.created_us for s in made)


def test_created_at_sequence_is_per_workspace(
    store: Store, other: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(summaries_mod, "now_us", lambda: 7_000_000_000_000_000)
    a = store.summaries.add("a")
    b = other.summaries.add("b")
    assert a.created_us == b.created_us == 7_000_000_000_000_000


_ADDER = r"""
import json, sys, time
from pathlib import Path
import recall_sqlite.summaries as m
from recall_sqlite import open_store
root, db, go, frozen, tag, n = sys.argv[1:7]
if frozen != "0":
    m.now_us = lambda: int(frozen)
store = open_store(root, db_path=db)
print("ready", flush=True)
while not Path(go).exists():
    time.sleep(0.002)
made = [store.summaries.add(f"{tag} {i}", branch=["main", None][i % 2], kind=tag).created_us
        for i in range(int(n))]
print(json.dumps(made), flush=True)
"""


def test_created_at_strictly_increasing_across_four_processes(store: Store, tmp_path: Path) -> None:
    go = tmp_path / "go"
    root, db = str(store.workspace.root), str(store.workspace.db_path)
    # Two processes with a frozen clock force the last+1 path; two use the real clock.
    frozen = ["0", "0", "1", "1"]
    per_process = run_at_once(
        _ADDER,
        [
            [root, db, str(go), str(int(f) * 2_000_000_000_000_000), f"p{i}", "15"]
            for i, f in enumerate(frozen)
        ],
        go,
    )
    rows = context_of(store).db.query("SELECT created_us, created_at FROM summaries ORDER BY id")
    assert len(rows) == 60
    assert _increasing([r[0] for r in rows]), "created_us not strictly increasing"
    assert _increasing([r[1] for r in rows]), "created_at not strictly increasing"
    assert all(_increasing(made) for made in per_process)


# -- scopes, supersede, history ---------------------------------------------------------------


def test_new_summary_supersedes_only_its_own_scope(store: Store, other: Store) -> None:
    first = store.summaries.add("main v1", branch="main", kind="day")
    others = [
        store.summaries.add("main other kind", branch="main", kind="session"),
        store.summaries.add("dev", branch="dev", kind="day"),
        store.summaries.add("workspace", kind="day"),
        other.summaries.add("other workspace", branch="main", kind="day"),
    ]
    second = store.summaries.add("main v2", branch="main", kind="day")
    assert store.summaries.get(first.id).superseded_by == second.id
    assert store.summaries.get(second.id).current
    assert all(s.current for s in (store.summaries.get(o.id) for o in others[:3]))
    assert other.summaries.get(others[3].id).current


def test_history_stays_visible_newest_first(store: Store) -> None:
    made = [store.summaries.add(f"v{i}", branch="main", kind="day") for i in range(3)]
    history = store.summaries.list("main", "day")
    assert [s.id for s in history] == [m.id for m in reversed(made)]
    assert [s.superseded_by for s in history] == [None, made[2].id, made[1].id]
    assert [s.id for s in store.summaries.list("main", "day", current_only=True)] == [made[2].id]
    assert store.summaries.latest("main", "day") == history[0]


def test_branch_none_means_workspace_wide_and_all_branches_means_every_scope(store: Store) -> None:
    ws = store.summaries.add("workspace-wide")
    main = store.summaries.add("main", branch="main", kind="other")
    empty = store.summaries.add("detached", branch="")
    assert store.summaries.latest() == store.summaries.get(ws.id)
    assert [s.id for s in store.summaries.list()] == [ws.id]
    assert store.summaries.latest("").id == empty.id
    assert store.summaries.latest("main").id == main.id
    assert store.summaries.latest("main", "summary") is None
    assert [s.id for s in store.summaries.list(ALL_BRANCHES)] == [empty.id, main.id, ws.id]
    assert store.summaries.latest(ALL_BRANCHES).id == empty.id
    assert store.summaries.latest(ALL_BRANCHES, "other").id == main.id


def test_list_since_until_limit(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    base = 1_800_000_000_000_000
    clock = iter([base, base + 1_000_000, base + 2_000_000])
    monkeypatch.setattr(summaries_mod, "now_us", lambda: next(clock))
    made = [store.summaries.add(f"v{i}", kind=f"k{i}") for i in range(3)]
    middle = made[1].created_at
    assert [s.id for s in store.summaries.list(since=middle)] == [made[2].id, made[1].id]
    assert [s.id for s in store.summaries.list(until=middle)] == [made[0].id]
    assert [s.id for s in store.summaries.list(limit=1)] == [made[2].id]
    assert len(store.summaries.list(limit=None)) == 3


def test_other_workspace_summaries_are_invisible(store: Store, other: Store) -> None:
    theirs = other.summaries.add("theirs", branch="main")
    assert store.summaries.list(ALL_BRANCHES) == []
    assert store.summaries.latest("main") is None
    with pytest.raises(NotFoundError):
        store.summaries.get(theirs.id)
    with pytest.raises(NotFoundError):
        store.summaries.remove(theirs.id)
    assert other.summaries.get(theirs.id).text == "theirs"


# -- staleness ---------------------------------------------------------------------------------


def test_staleness_counts_later_entries_on_its_branch_only(store: Store) -> None:
    a = _append(store, "main", focus="a", session_id="a")
    s = store.summaries.add("main so far", branch="main", covers=[a.id])
    assert not s.stale
    _append(store, "dev", focus="elsewhere", session_id="d")
    assert store.summaries.get(s.id).newer_entries == 0
    # Arrives later, timestamp older: still newer in insertion order, so stale.
    _append(store, "main", focus="late import", session_id="old", ts="2019-01-01T00:00:00Z")
    _append(store, "main", focus="b", session_id="b")
    assert store.summaries.get(s.id).newer_entries == 2
    assert store.summaries.get(s.id).stale


def test_staleness_follows_what_reads_show(store: Store) -> None:
    a = _append(store, "main", focus="a", session_id="a")
    s = store.summaries.add("covers a", branch="main", covers=[a.id])
    # A poorer (auto) version of a covered session: reads still show the covered one.
    _append(store, "main", session_id="a", auto=True, ts="2026-02-01T00:00:00Z")
    assert store.summaries.get(s.id).newer_entries == 0
    # A richer version: reads now show something the summary has not seen.
    _append(store, "main", session_id="a", focus="a", done=["more"], ts="2026-02-02T00:00:00Z")
    assert store.summaries.get(s.id).newer_entries == 1


def test_workspace_wide_summary_counts_every_branch(store: Store, other: Store) -> None:
    _append(store, "main", focus="x", session_id="x")
    s = store.summaries.add("everything")
    assert s.covered_through == 1 and not s.stale
    _append(store, "dev", focus="y")
    _append(store, "", focus="z")
    other.journal.append(entry(branch="dev", focus="not ours"))
    # A poorer version of a covered session changes nothing reads show: not counted.
    _append(store, "main", session_id="x", auto=True, ts="2026-03-01T00:00:00Z")
    assert store.summaries.get(s.id).newer_entries == 2
    latest = store.summaries.latest()
    assert latest is not None and latest.newer_entries == 2
    assert [x.newer_entries for x in store.summaries.list(ALL_BRANCHES)] == [2]


def test_cover_range_by_positions_and_ids(store: Store) -> None:
    appended = [_append(store, "main", focus=f"e{i}", session_id=f"s{i}") for i in range(4)]
    by_pos = store.summaries.add("first two", branch="main", kind="a", covers=CoverRange(1, 2))
    assert (by_pos.covers_from, by_pos.covers_to, by_pos.newer_entries) == (1, 2, 2)
    by_id = store.summaries.add(
        "middle", branch="main", kind="b", covers=CoverRange(appended[1].id, appended[2].id)
    )
    assert (by_id.covers_from, by_id.covers_to, by_id.newer_entries) == (2, 3, 1)
    assert by_id.entry_ids == ()


def test_stale_lists_current_stale_summaries_of_every_scope(store: Store) -> None:
    _append(store, "main", focus="x", session_id="x")
    old = store.summaries.add("old main", branch="main")
    fresh_ws = store.summaries.add("workspace")
    dev = store.summaries.add("dev", branch="dev")
    _append(store, "main", focus="y", session_id="y")
    new = store.summaries.add("new main", branch="main", covers=CoverRange(1, 1))
    stale = store.summaries.stale()
    assert [s.id for s in stale] == [new.id, fresh_ws.id]  # old is superseded, dev fresh
    assert all(s.current and s.stale for s in stale)
    assert [s.id for s in store.summaries.stale("main")] == [new.id]
    assert store.summaries.stale("dev") == []
    assert old.id not in {s.id for s in stale} and dev.id not in {s.id for s in stale}


# -- removal -------------------------------------------------------------------------------------


def _vector_for(store: Store, summary_id: int, branch: str | None) -> None:
    # Through the vector API, so the test follows its rules (model declared, dim fixed).
    from recall_sqlite.vectors import Owner

    store.vectors.put(Owner.summary(summary_id), [1.0, 0.5], model="m")
    rows = context_of(store).db.query(
        "SELECT branch FROM vectors WHERE summary_id = ?", (summary_id,)
    )
    assert rows == [(branch,)]


def test_remove_deletes_links_and_vectors_but_never_entries(store: Store) -> None:
    a, b = (_append(store, focus=f"e{i}", session_id=f"s{i}") for i in range(2))
    s = store.summaries.add("two", branch="main", covers=[a.id, b.id])
    keep = store.summaries.add("keep", branch="dev", covers=[a.id])
    _vector_for(store, s.id, "main")
    _vector_for(store, keep.id, "dev")
    gone = store.summaries.remove(s.id)
    assert gone.id == s.id and gone.entry_ids == (a.id, b.id)
    q = context_of(store).db.query
    assert q("SELECT count(*) FROM summary_sources WHERE summary_id = ?", (s.id,))[0][0] == 0
    assert q("SELECT count(*) FROM vectors WHERE summary_id = ?", (s.id,))[0][0] == 0
    assert q("SELECT count(*) FROM vectors WHERE summary_id = ?", (keep.id,))[0][0] == 1
    assert q("SELECT count(*) FROM journal_entries")[0][0] == 2
    assert store.summaries.get(keep.id).entry_ids == (a.id,)
    with pytest.raises(NotFoundError):
        store.summaries.get(s.id)
    with pytest.raises(NotFoundError):
        store.summaries.remove(s.id)


def test_remove_relinks_the_supersede_chain(store: Store) -> None:
    v1, v2, v3 = (store.summaries.add(f"v{i}", branch="main") for i in range(3))
    store.summaries.remove(v2.id)  # a middle link
    assert store.summaries.get(v1.id).superseded_by == v3.id
    assert [s.id for s in store.summaries.list("main", current_only=True)] == [v3.id]
    store.summaries.remove(v3.id)  # the current one: v1 is current again
    assert store.summaries.latest("main") == store.summaries.get(v1.id)
    assert store.summaries.get(v1.id).current


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"text": ""},
        {"text": "   \n"},
        {"text": None},
        {"text": "nul \x00 inside"},
        {"text": "ok", "covers": ["00" * 16]},
        {"text": "ok", "covers": ["not hex"]},
        {"text": "ok", "covers": []},
        {"text": "ok", "covers": 42},
        {"text": "ok", "kind": ""},
        {"text": "ok", "branch": "a\x00b"},
        {"text": "ok", "branch": 3},
        {"text": "ok", "author": ""},
        {"text": "ok", "covers": CoverRange(2, 1)},
        {"text": "ok", "covers": CoverRange(1, 999)},
        {"text": "ok", "covers": CoverRange(-1, 1)},
    ],
)
def test_bad_add_is_a_typed_error_and_writes_nothing(store: Store, kwargs: dict[str, Any]) -> None:
    _append(store, focus="a", session_id="a")
    _append(store, focus="b", session_id="b")
    store.summaries.add("existing", branch="main")
    before = _counts(store)
    latest = store.summaries.latest("main")
    text = kwargs.pop("text")
    with pytest.raises(InvalidInputError):
        store.summaries.add(text, **kwargs)
    assert _counts(store) == before
    assert store.summaries.latest("main") == latest  # nothing superseded either


def test_unknown_ids_are_named_and_a_partly_known_list_writes_nothing(
    store: Store, other: Store
) -> None:
    known = _append(store, focus="a").id
    theirs = other.journal.append(entry(focus="theirs")).id
    before = _counts(store)
    with pytest.raises(UnknownEntryError, match=theirs):
        store.summaries.add("mixed", covers=[known, theirs])
    assert _counts(store) == before


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.list(limit=0),
        lambda s: s.list(since="yesterday"),
        lambda s: s.list(until=12),
        lambda s: s.list(kind=""),
        lambda s: s.get(0),
        lambda s: s.remove("1"),
    ],
)
def test_bad_read_arguments_are_typed_errors(store: Store, call: Any) -> None:
    with pytest.raises(InvalidInputError):
        call(store.summaries)


# -- CLI -------------------------------------------------------------------------------------------


def test_cli_summary_commands(
    store: Store, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a = _append(store, focus="a", session_id="a")
    code, out, _ = cli_here(
        capsys,
        store,
        "summary",
        "add",
        "first",
        "--branch",
        "main",
        "--covers",
        a.id,
        "--author",
        "me",
    )
    assert code == 0 and "Summary stored." in out and "covers 1 entry" in out
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("from stdin"))
    code, out, _ = cli_here(
        capsys, store, "summary", "add", "-", "--branch", "main", "--range", "1:1", "--json"
    )
    second = json.loads(out)
    assert second["text"] == "from stdin" and second["covers_range"] == [1, 1]
    code, out, _ = cli_here(capsys, store, "summary", "latest", "--branch", "main")
    assert "from stdin" in out and "current" in out and "scope: branch 'main'" in out
    code, out, _ = cli_here(capsys, store, "summary", "list", "--branch", "main", "--json")
    listed = json.loads(out)
    assert [s["text"] for s in listed] == ["from stdin", "first"]
    assert listed[1]["superseded_by"] == second["id"]
    code, out, _ = cli_here(capsys, store, "summary", "list")
    assert "No summaries." in out and "--all-branches" in out
    _append(store, focus="b", session_id="b")
    code, out, _ = cli_here(capsys, store, "summary", "list", "--stale", "--json")
    assert [s["id"] for s in json.loads(out)] == [second["id"]]
    code, out, _ = cli_here(capsys, store, "summary", "remove", str(second["id"]))
    assert code == 0 and f"Removed summary #{second['id']}" in out
    code, out, _ = cli_here(capsys, store, "summary", "latest", "--branch", "main", "--json")
    assert json.loads(out)["text"] == "first"


def test_cli_summary_errors_are_one_line(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli_here(capsys, store, "summary", "add", "  ")
    assert code == 2 and err.count("\n") == 1 and "text must not be empty" in err
    code, _, err = cli_here(capsys, store, "summary", "add", "x", "--covers", "ab" * 16)
    assert code == 2 and "not in this workspace" in err
    code, _, err = cli_here(capsys, store, "summary", "latest", "--branch", "b", "--all-branches")
    assert code == 2 and "not both" in err
    assert context_of(store).db.query("SELECT count(*) FROM summaries")[0][0] == 0


# -- the SQL stays an index walk from what the summary covers ----------------------------------


@pytest.mark.parametrize("select", ["_SELECT", "_SELECT_WORKSPACE_WIDE", "_SELECT_ONE_BRANCH"])
def test_staleness_and_sources_are_index_walks(store: Store, select: str) -> None:
    sql = getattr(summaries_mod, select) + " WHERE s.workspace_id = ? AND s.kind = ?"
    plan = [r[3] for r in context_of(store).db.query("EXPLAIN QUERY PLAN " + sql, (1, "k"))]
    journal_steps = [p for p in plan if " e " in f" {p} "]
    assert journal_steps and not any(
        p.startswith("SCAN") or "journal_heads" in p for p in journal_steps
    ), plan
    if select != "_SELECT_ONE_BRANCH":
        assert "SEARCH e USING INTEGER PRIMARY KEY (rowid>?)" in plan
    if select != "_SELECT_WORKSPACE_WIDE":
        walk = "SEARCH e USING INDEX journal_by_branch_seq (workspace_id=? AND branch=? AND seq>?)"
        assert walk in plan
    assert not any("TEMP B-TREE" in p for p in plan)
