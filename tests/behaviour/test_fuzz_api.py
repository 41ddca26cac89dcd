"""The public API raises only the package's own errors (issue 19, point 6): hypothesis draws
calls of every family (journal and its search, summaries and theirs, cursors, vectors,
legacy, doctor, opening a store) with hostile and plausible values mixed, and any exception
that is not a RecallError fails the test with the call that raised it."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from recall_sqlite import ALL_BRANCHES, CoverRange, RecallError, Store, open_store
from recall_sqlite.limits import INT64_MAX
from tests.conftest import make_workspace

pytest.importorskip("numpy")

SPECIAL = [
    "",
    "x",
    "main",
    "\udcff",
    "\ud800",
    "a\x00b",
    "é\u200b",
    "x" * 300,
    "-1",
    "00" * 16,
    "zz" * 16,
    "2026-01-01T00:00:00Z",
    "2026-13-45T99:00:00",
    'NOT AND OR NEAR( * "',
    "..",
    "nosuch/dir",
]
NUMBERS = [0, 1, -1, INT64_MAX, INT64_MAX + 1, -(1 << 63) - 1, 1 << 80]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(1 << 70), 1 << 70),
    st.sampled_from(NUMBERS),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(SPECIAL),
    st.binary(max_size=6),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["focus", "timestamp", "done", "k", "x"]), inner, max_size=3
        ),
        st.tuples(inner, inner),
    ),
    max_leaves=6,
)
entries = st.one_of(
    values,
    st.fixed_dictionaries(
        {"timestamp": st.one_of(st.just("2026-01-01T00:00:00Z"), values)},
        optional={
            "focus": values,
            "done": values,
            "session_id": values,
            "extra": values,
            "auto": values,
            "branch": values,
        },
    ),
)
vectors = st.one_of(
    values,
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=4),
    st.lists(st.lists(st.floats(-2, 2), min_size=3, max_size=3), max_size=3),
)


def _calls(s: Store, root: Path, tmp: Path) -> dict[str, Callable[[st.DataObject], Any]]:
    def v(d: st.DataObject) -> Any:
        return d.draw(values)

    j, sm, c, vec, lg = s.journal, s.summaries, s.cursors, s.vectors, s.legacy
    paths = st.one_of(values, st.sampled_from([str(tmp / "missing"), str(tmp / "odd\udcff")]))
    return {
        "journal.read": lambda d: j.read(v(d), branch=v(d), all_worktrees=v(d), meaningful=v(d)),
        "journal.latest": lambda d: j.latest(meaningful=v(d)),
        "journal.pending": lambda d: j.pending_next_steps(all_worktrees=v(d)),
        "journal.get": lambda d: j.get(v(d)),
        "journal.versions": lambda d: list(j.versions(session_id=v(d), worktree=v(d))),
        "journal.append": lambda d: j.append(d.draw(entries), worktree=v(d)),
        "journal.append_many": lambda d: j.append_many(d.draw(st.lists(entries, max_size=3))),
        "journal.write": lambda d: j.write(focus=v(d), done=v(d), next_steps=v(d), branch=v(d)),
        "journal.forget": lambda d: j.forget(v(d), session_id=v(d)),
        "journal.search": lambda d: j.search(
            v(d), v(d), branch=v(d), all_worktrees=v(d), meaningful=v(d)
        ).to_dict(),
        "journal.search.hybrid": lambda d: j.search(
            "gateway", vector=d.draw(vectors), model=v(d), fusion=v(d)
        ).to_dict(),
        "summaries.add": lambda d: sm.add(
            v(d),
            branch=v(d),
            kind=v(d),
            covers=d.draw(st.one_of(values, st.builds(CoverRange, values, values))),
            author=v(d),
        ),
        "summaries.latest": lambda d: sm.latest(v(d), v(d)),
        "summaries.list": lambda d: sm.list(
            d.draw(st.one_of(values, st.just(ALL_BRANCHES))),
            v(d),
            since=v(d),
            until=v(d),
            limit=v(d),
        ),
        "summaries.stale": lambda d: sm.stale(v(d), v(d)),
        "summaries.get": lambda d: sm.get(v(d)),
        "summaries.remove": lambda d: sm.remove(v(d)),
        "summaries.search": lambda d: sm.search(v(d), v(d), branch=v(d), kind=v(d)).to_dict(),
        "cursors.get": lambda d: c.get(v(d), v(d)),
        "cursors.unread": lambda d: c.unread(v(d), v(d), limit=v(d)),
        "cursors.take": lambda d: c.take("hook", v(d), limit=v(d)),
        "cursors.count_unread": lambda d: c.count_unread(v(d), v(d)),
        "cursors.list": lambda d: c.list(v(d)),
        "cursors.advance": lambda d: c.advance(v(d), v(d), to=v(d)),
        "cursors.reset": lambda d: c.reset("hook", v(d), to=v(d)),
        "vectors.put": lambda d: vec.put(v(d), d.draw(vectors), model=v(d)),
        "vectors.put_many": lambda d: vec.put_many(v(d), d.draw(vectors), model=v(d)),
        "vectors.get": lambda d: vec.get(v(d), model=v(d)),
        "vectors.delete": lambda d: vec.delete(v(d), model=v(d)),
        "vectors.search": lambda d: vec.search(
            d.draw(vectors), v(d), model=v(d), branch=v(d), kinds=v(d), all_worktrees=v(d)
        ).to_dict(),
        "vectors.search_like": lambda d: vec.search_like(v(d), v(d), model=v(d)).to_dict(),
        "vectors.stats": lambda d: vec.stats().to_dict(),
        "vectors.cache_limit": lambda d: setattr(vec, "cache_limit", v(d)),
        "legacy.survey": lambda d: lg.survey(d.draw(paths), mapping=v(d)).to_dict(),
        "legacy.import": lambda d: lg.import_paths(d.draw(paths), mapping=v(d)).to_dict(),
        "legacy.verify": lambda d: lg.verify(d.draw(paths), deep=v(d)).to_dict(),
        "legacy.export": lambda d: lg.export(
            d.draw(st.one_of(values, st.just(str(tmp / "out.jsonl")))),
            format=v(d),
            worktree=v(d),
            force=True,
        ).to_dict(),
        "doctor": lambda d: s.doctor(repair=v(d), deep=v(d)).to_dict(),
        "open_store": lambda d: open_store(
            d.draw(st.one_of(values, st.just(str(root)))),
            db_path=v(d),
            root=v(d),
            read_only=v(d),
            force=v(d),
        ).close(),
        "worktrees": lambda d: [w.to_dict() for w in s.worktrees()],
    }


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[tuple[Store, Path]]:
    root = make_workspace(tmp_path)
    s = open_store(root)
    for i in range(8):
        e = s.journal.append(
            {
                "timestamp": f"2026-01-0{i + 1}T00:00:00Z",
                "session_id": f"s{i % 3}",
                "focus": f"gateway {i}",
                "next_steps": [f"n{i}"],
            }
        )
        s.vectors.put(("entry", e.id), [1.0, float(i), 0.5], model="m")
    s.summaries.add("gateway summary", kind="day")
    try:
        yield s, root
    finally:
        s.close()


def _well_formed(result: Any) -> None:
    """Results are plain values: JSON-able where they say so, no NaN smuggled in."""
    if isinstance(result, float):
        assert not math.isnan(result)


@settings(
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_every_family_raises_only_recall_errors(
    filled: tuple[Store, Path], tmp_path: Path, data: st.DataObject
) -> None:
    s, root = filled
    calls = _calls(s, root, tmp_path)
    name = data.draw(st.sampled_from(sorted(calls)), label="call")
    try:
        _well_formed(calls[name](data))
    except (RecallError, HypothesisException):
        # (hypothesis's own control flow: a value drawn inside the call was rejected)
        if not isinstance(sys.exc_info()[1], RecallError):
            raise
    except Exception as exc:  # noqa: BLE001 - the point: nothing else may escape
        pytest.fail(f"{name} raised {type(exc).__name__}: {exc}")
