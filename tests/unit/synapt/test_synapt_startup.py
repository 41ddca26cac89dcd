"""The activated session start answers from a few index steps (recall_sqlite/synapt/startup.py)
and says exactly what synapt's own code says over the whole history: line for line against
the activated path that reads every version (on random histories with every kind of tie,
timestamp form, branch and starting session), against stock synapt 0.30.0 on its JSONL
(histories whose instants are distinct: at one microsecond the store's dedup order is its
own, documented), and synapt's unclean-end verdict on the few authored heads equals its
verdict on all of them."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

synapt_cli = pytest.importorskip("synapt.recall.cli")
import synapt.recall.channel as channel  # noqa: E402
import synapt.recall.journal as sj  # noqa: E402
import synapt.recall.resume as resume  # noqa: E402

import recall_sqlite.synapt as adapter  # noqa: E402
from recall_sqlite.synapt import patch, startup  # noqa: E402
from tests.helpers import git  # noqa: E402

BASE = datetime(2026, 4, 1, 9, 0, tzinfo=timezone.utc)
COLLAPSED = "<parameter name=next_steps>oops"


def stamp(seconds: int, form: int) -> str:
    t = BASE + timedelta(seconds=seconds)
    return (
        t.isoformat(),
        t.strftime("%Y-%m-%dT%H:%M:%SZ"),
        t.astimezone(timezone(timedelta(hours=2))).isoformat(),
        t.replace(tzinfo=None).isoformat(),
        (t + timedelta(microseconds=500_000)).isoformat(),
    )[form]


texts = st.sampled_from(["", "wrote the parser", "fixed the lock", COLLAPSED, "naïve ünïcode"])
items = st.lists(st.sampled_from(["a", "b", "ship it", COLLAPSED, "[carry bound] x"]), max_size=3)
entries = st.lists(
    st.fixed_dictionaries(
        {
            "sec": st.integers(0, 40),
            "form": st.integers(0, 4),
            "session_id": st.sampled_from(["", "s1", "s2", "s3", "s4"]),
            "branch": st.sampled_from(["main", "feat"]),
            "focus": texts,
            "done": items,
            "decisions": items,
            "next_steps": items,
            "files_modified": st.sampled_from([[], ["a.py"]]),
            "auto": st.booleans(),
        }
    ),
    max_size=25,
)


@pytest.fixture
def quiet_synapt(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """synapt's channel sections have side effects on every call (a join changes the next
    call's lines): out of the comparison."""
    monkeypatch.setattr(channel, "channel_join", lambda *a, **k: None)
    monkeypatch.setattr(channel, "channel_unread", lambda *a, **k: {})
    monkeypatch.setattr(channel, "check_directives", lambda *a, **k: "")
    yield
    patch.deactivate()


def _history(root: Path, rows: list[dict[str, Any]], branch: str) -> None:
    if (root / ".synapt").exists():
        shutil.rmtree(root / ".synapt")
    git(root, "checkout", "-q", "-B", branch)
    patch.deactivate()
    path = sj._journal_path()
    for r in rows:
        fields = {k: v for k, v in r.items() if k not in ("sec", "form")}
        sj.append_entry(
            sj.JournalEntry(timestamp=stamp(r["sec"], r["form"]), **fields),
            path,
            allow_collapsed=True,
        )


def _sources(rows: list[dict[str, Any]], pick: int, offset: int) -> list[Any]:
    sid = ("s1", "s2", "s9")[pick % 3]
    last = (BASE + timedelta(seconds=20 + offset)).isoformat()
    return [resume.CallerTranscript(sid, Path("/t.jsonl"), 0.0, 0, last)]


@pytest.fixture(autouse=True)
def _in_repo(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)  # synapt's session start reads where the process stands


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=entries,
    branch=st.sampled_from(["main", "feat", "other"]),
    session=st.sampled_from([None, "s1", "fresh"]),
    continuity=st.booleans(),
    pick=st.integers(0, 2),
    offset=st.sampled_from([0, 5, 900, 901, -900, 3000]),
)
def test_the_few_give_what_the_whole_history_gives(
    repo: Path,
    quiet_synapt: None,
    monkeypatch: pytest.MonkeyPatch,
    rows: list[dict[str, Any]],
    branch: str,
    session: str | None,
    continuity: bool,
    pick: int,
    offset: int,
) -> None:
    _history(repo, rows, branch)
    monkeypatch.setattr(resume, "caller_transcripts", lambda *a: _sources(rows, pick, offset))
    adapter.activate()
    fast = synapt_cli.generate_startup_context
    assert fast is startup.generate_startup_context
    whole = startup.ORIGINAL["generate_startup_context"]
    kwargs = {"include_continuity": continuity, "current_session_id": session}
    assert fast(repo, **kwargs) == whole(repo, **kwargs)
    instants = [
        (BASE + timedelta(seconds=r["sec"])).timestamp() + 0.5 * (r["form"] == 4) for r in rows
    ]
    if len(set(instants)) == len(instants):
        patch.deactivate()
        stock = synapt_cli.generate_startup_context(repo, **kwargs)
        adapter.activate()
        assert fast(repo, **kwargs) == stock


def test_the_fast_path_is_taken_and_counts_what_it_withholds(
    repo: Path, quiet_synapt: None
) -> None:
    rows = [
        {"sec": i, "form": 0, "session_id": f"s{i}", "branch": "main", "focus": f"f{i}"}
        for i in range(8)
    ]
    _history(repo, rows, "main")
    adapter.activate()
    seen: list[int] = []

    def spy(path: Any) -> Any:
        got = startup.served_read(path)
        if got is not None:
            seen.append(len(got))
        return got

    from recall_sqlite.synapt import api

    api.SERVED["read"] = spy
    lines = synapt_cli.generate_startup_context(repo)
    assert seen and max(seen) <= 4  # a few versions, not the history
    line = next(x for x in lines if x.startswith("Journal read: "))
    assert '"shown":3' in line and '"withheld":5' in line


def test_another_build_of_synapt_keeps_its_own_path(
    repo: Path, quiet_synapt: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(startup.FINGERPRINTS, "generate_startup_context", "0" * 64)
    adapter.activate()
    assert synapt_cli.generate_startup_context is not startup.generate_startup_context


def _row(sec: int, sid: str, focus: str, **more: Any) -> dict[str, Any]:
    return {"sec": sec, "form": 0, "session_id": sid, "branch": "main", "focus": focus, **more}


@pytest.mark.parametrize(
    "rows",
    [
        # Two sessions at one timestamp text: synapt's stable sort keeps its dedup order, each
        # session where it first appears (s1), not where its head lies (s1's head is later).
        [
            _row(10, "s1", "first of s1"),
            _row(10, "s2", "s2"),
            _row(10, "s1", "richer s1", next_steps=["x"], done=["y"]),
        ],
        # Rich heads tied at the third place, more of them than fit: which one is shown is
        # decided among all of them.
        [
            _row(30, "s1", "newest"),
            _row(29, "s2", "second"),
            _row(5, "s5", "tied e"),
            _row(5, "s4", "tied d"),
            _row(5, "s3", "tied c"),
            _row(5, "s3", "tied c, richer", done=["z"]),
            _row(1, "s6", "old"),
        ],
    ],
)
def test_ties_in_synapts_text_order(
    repo: Path, quiet_synapt: None, rows: list[dict[str, Any]]
) -> None:
    _history(repo, rows, "main")
    adapter.activate()
    whole = startup.ORIGINAL["generate_startup_context"]
    assert synapt_cli.generate_startup_context(repo) == whole(repo)
