"""scope.py is the one definition of what a read covers and what it counts elsewhere: its SQL
agrees with the rule written out plainly here, and a read, a search and a vector search
from the same place report the same scope and the same elsewhere."""

from __future__ import annotations

from typing import Any

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recall_sqlite import open_store
from recall_sqlite.scope import Keys, totals
from tests.conftest import make_workspace

ROW = st.tuples(
    st.sampled_from([1, 2, 3]), st.sampled_from(["main", "feat", ""]), st.integers(0, 5)
)


def _reference(
    rows: list[tuple[int, str, int]], wt: int | None, br: str | None
) -> tuple[int, int, int]:
    """(in scope, other worktrees, other branches), as docs/journal.md says reads count them."""
    total = other_wt = other_br = 0
    for w, b, n in rows:
        on_branch = br is None or b == br
        if wt is None or w == wt:
            if on_branch:
                total += n
            else:
                other_br += n
        elif on_branch:
            other_wt += n  # another worktree on another branch is not counted
    return total, other_wt, other_br


@settings(max_examples=200, deadline=None)
@given(
    st.lists(ROW, max_size=12, unique_by=lambda r: (r[0], r[1])),
    st.sampled_from([None, 1, 2]),
    st.sampled_from([None, "main", "", "nope"]),
)
def test_counts_sql_is_the_rule(
    rows: list[tuple[int, str, int]], wt: int | None, br: str | None
) -> None:
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE TABLE journal_counts_wt (workspace_id, worktree_id, branch, heads, meaningful);"
        "CREATE TABLE journal_counts_ws (workspace_id, branch, heads, meaningful)"
    )
    conn.executemany("INSERT INTO journal_counts_wt VALUES (1, ?, ?, ?, 0)", rows)
    per_branch: dict[str, int] = {}
    for _, b, n in rows:
        per_branch[b] = per_branch.get(b, 0) + n
    conn.executemany("INSERT INTO journal_counts_ws VALUES (1, ?, ?, 0)", list(per_branch.items()))
    k = Keys(1, wt, br, False)
    total, elsewhere = totals(conn.execute(k.counts_sql(), k.params()))
    assert (total, elsewhere.other_worktrees, elsewhere.other_branches) == _reference(rows, wt, br)


@pytest.fixture
def two_desks(tmp_path: Any) -> Any:
    root = make_workspace(tmp_path)
    (root / "desk" / ".git").mkdir(parents=True)
    (root / "desk" / ".git" / "HEAD").write_text("ref: refs/heads/feat\n")
    with open_store(root) as s:
        for i, branch in enumerate(("main", "main", "feat")):
            s.journal.append(
                {
                    "timestamp": f"2026-01-0{i + 1}T00:00:00Z",
                    "session_id": f"r{i}",
                    "branch": branch,
                    "focus": "gateway work",
                }
            )
    with open_store(root / "desk") as s:
        for i, branch in enumerate(("feat", "main")):
            s.journal.append(
                {
                    "timestamp": f"2026-02-0{i + 1}T00:00:00Z",
                    "session_id": f"d{i}",
                    "branch": branch,
                    "focus": "gateway work",
                }
            )
    return root


@pytest.mark.parametrize("all_worktrees", [False, True])
@pytest.mark.parametrize("branch", [None, "main", "feat", "gone"])
def test_read_search_and_vectors_agree_on_scope(
    two_desks: Any, all_worktrees: bool, branch: str | None
) -> None:
    for where in (two_desks, two_desks / "desk"):
        with open_store(where) as s:
            read = s.journal.read(50, branch=branch, all_worktrees=all_worktrees)
            found = s.journal.search("gateway", 50, branch=branch, all_worktrees=all_worktrees)
            assert found.scope == read.scope
            assert (found.total, found.elsewhere) == (read.total, read.elsewhere)
            assert [h.entry.id for h in found.hits] == [e.id for e in read.entries]
            ids = [e.id for e in s.journal.read(50, all_worktrees=True).entries]
            assert ids
            s.vectors.put_many([("entry", i) for i in ids], [[1.0, 0.5]] * len(ids), model="m")
            hits = s.vectors.search(
                [1.0, 0.5], 50, model="m", branch=branch, all_worktrees=all_worktrees
            )
            assert {h.owner.id for h in hits.hits} == {e.id for e in read.entries}
            assert hits.scope.worktree == read.scope.worktree
