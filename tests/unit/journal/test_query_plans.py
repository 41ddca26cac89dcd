"""The journal's hot reads are index walks whatever the size of the workspace: every scope
shape of "newest n" walks its partial head index in order (no scan, no sort), and the other
per-read statements are key lookups. A schema or query change that loses an index fails
here, not months later in a benchmark."""

from __future__ import annotations

import itertools

import pytest

from recall_sqlite import Store
from recall_sqlite.journal.heads import ENTRY_COLUMNS, _walk_sql
from recall_sqlite.scope import Keys
from recall_sqlite.store import context_of
from tests.conftest import entry


def _plan(store: Store, sql: str, params: object) -> str:
    return " | ".join(
        str(r[3]) for r in context_of(store).db.query("EXPLAIN QUERY PLAN " + sql, params)
    )


@pytest.fixture
def filled(store: Store) -> Store:
    store.journal.append_many(
        [
            entry(
                f"2026-01-01T00:{i % 60:02d}:00Z",
                session_id=f"s{i % 40}",
                branch=("main", "feat")[i % 2],
                focus=f"f{i}",
                auto=i % 3 == 0,
            )
            for i in range(200)
        ]
    )
    # With statistics too: the plan must not depend on ANALYZE having run or not.
    return store


@pytest.mark.parametrize("analyzed", [False, True])
@pytest.mark.parametrize(
    "all_worktrees,by_branch,meaningful", list(itertools.product([False, True], repeat=3))
)
def test_newest_n_walks_its_head_index(
    filled: Store, analyzed: bool, all_worktrees: bool, by_branch: bool, meaningful: bool
) -> None:
    if analyzed:
        context_of(filled).db.query("ANALYZE")
    k = Keys(1, None if all_worktrees else 1, "main" if by_branch else None, meaningful)
    plan = _plan(filled, _walk_sql(k.shown_sql("")), {**k.params(), "n": 5})
    index = "journal_heads_" + ("ws" if all_worktrees else "wt") + ("_branch" if by_branch else "")
    assert f"USING INDEX {index} " in plan + " ", plan
    assert "TEMP B-TREE" not in plan, plan
    assert "SCAN" not in plan or "USING INDEX" in plan, plan


def test_per_read_lookups_use_keys(filled: Store) -> None:
    counts_wt = _plan(
        filled,
        "SELECT worktree_id, branch, heads FROM journal_counts_wt WHERE workspace_id = ?",
        (1,),
    )
    counts_ws = _plan(
        filled, "SELECT branch, heads FROM journal_counts_ws WHERE workspace_id = ?", (1,)
    )
    by_id = _plan(
        filled,
        f"SELECT {ENTRY_COLUMNS} FROM journal_entries WHERE id = ? AND workspace_id = ?",
        (b"x" * 16, 1),
    )
    done = _plan(
        filled,
        "SELECT done FROM journal_entries WHERE workspace_id = ? AND session_id = ? ORDER BY seq",
        (1, "s1"),
    )
    for plan in (counts_wt, counts_ws):
        assert "SEARCH" in plan and "PRIMARY KEY" in plan, plan
    assert "USING INDEX sqlite_autoindex_journal_entries" in by_id, by_id
    assert "USING INDEX journal_by_session" in done, done


def test_the_session_start_branch_lookup_walks_its_partial_index(filled: Store) -> None:
    """journal/wake.py asks for the newest version of a branch other than main or master
    in the words of journal_wake_branch's predicate, so the planner may use the index (a
    lookup of a trunk branch is never made)."""
    from recall_sqlite.journal import wake
    from recall_sqlite.migrations import schema_sql

    assert f"WHERE {wake._LOOKED_UP};" in schema_sql()
    ctx = context_of(filled)
    params = {"ws": ctx.workspace_pk, "wt": ctx.worktree_pk, "br": "feat"}
    plan = _plan(filled, wake._BRANCH_TOP, params)
    assert "journal_wake_branch" in plan and "TEMP B-TREE" not in plan, plan


@pytest.mark.parametrize("analyzed", [False, True])
@pytest.mark.parametrize(
    "all_worktrees,by_branch,meaningful", list(itertools.product([False, True], repeat=3))
)
def test_search_probes_the_narrow_head_index_per_match(
    filled: Store, analyzed: bool, all_worktrees: bool, by_branch: bool, meaningful: bool
) -> None:
    from recall_sqlite.search.journal import _sql as search_sql

    if analyzed:
        context_of(filled).db.query("ANALYZE")
    k = Keys(1, None if all_worktrees else 1, "main" if by_branch else None, meaningful)
    sql = search_sql(k.shape, k.category_sql("e.worktree_id", "e.branch"), k.basis_sql("e"))
    plan = _plan(filled, sql, {**k.params(), "match": "f1", "limit": 10})
    # the full-text index drives; each match is one probe of the index, never of the row
    assert "SCAN f VIRTUAL TABLE" in plan, plan
    assert "SEARCH e USING COVERING INDEX journal_heads_by_seq (seq=?" in plan, plan
    assert plan.index("SCAN f") < plan.index("SEARCH e"), plan
