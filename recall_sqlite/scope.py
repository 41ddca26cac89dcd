"""Scope: what a read, a search or a vector search covers, and what it leaves out.

One definition for the three (journal reads, full-text search, vector search), so a search
from one worktree can never count "elsewhere" differently from a read there:

* the **shown rows** of a scope are the heads of its basis: within a worktree (`head_wt`,
  each worktree's own choice of a session's version) when the scope is one worktree, across
  the workspace (`head_ws`) when it is every worktree; narrowed to a branch and to
  meaningful entries when asked;
* every shown row of the basis falls in one **category**: in scope (0), in another worktree
  on the scope's branch (1), in this worktree on another branch (2), or neither (NULL: another
  worktree *and* another branch, which a read does not count). A workspace-wide scope has no
  "other worktrees": every other branch is category 2.

`Keys.category_sql` writes that rule in SQL once; the read sums it over the per-scope count
tables, the search over its matches, the vector search uses `shown_sql` as its filter.
(Records, not dataclasses: see _record.py.)"""

from __future__ import annotations

from ._record import Frozen
from .checks import require_bool, require_text
from .errors import InvalidInputError
from .memo import memo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    from .context import StoreContext

    class ScopeLike(Protocol):
        """A journal scope (Scope) or a summary scope (summaries.py SummaryScope)."""

        def to_dict(self) -> dict[str, Any]: ...


IN_SCOPE, OTHER_WORKTREE, OTHER_BRANCH = 0, 1, 2


class Scope(Frozen):
    """A scope as hosts see it: the workspace id (None: no store yet, so no id is minted),
    the worktree key (None: every worktree), the branch (None: every branch) and whether
    only meaningful entries count."""

    __slots__ = ("workspace_id", "worktree", "branch", "meaningful")
    workspace_id: str | None
    worktree: str | None
    branch: str | None
    meaningful: bool

    def __init__(
        self,
        workspace_id: str | None,
        worktree: str | None,
        branch: str | None,
        meaningful: bool = False,
    ) -> None:
        self._set(
            workspace_id=workspace_id, worktree=worktree, branch=branch, meaningful=meaningful
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace_id": self.workspace_id,
            "worktree": self.worktree,
            "branch": self.branch,
            "meaningful": self.meaningful,
        }

    def describe(self) -> str:
        where = "all worktrees" if self.worktree is None else f"worktree {self.worktree}"
        branch = "all branches" if self.branch is None else f"branch {self.branch or '(none)'}"
        kind = ", meaningful only" if self.meaningful else ""
        return f"{where}, {branch}{kind}"


class Elsewhere(Frozen):
    """Matching entries outside the scope: never a silent partial answer. `other_machines`:
    entry versions other machines of the repository held that this store had not pulled
    yet, when sync last looked (sync/; any scope, 0 when not synced)."""

    __slots__ = ("other_worktrees", "other_branches", "other_machines")
    other_worktrees: int
    other_branches: int
    other_machines: int

    def __init__(
        self, other_worktrees: int = 0, other_branches: int = 0, other_machines: int = 0
    ) -> None:
        self._set(
            other_worktrees=other_worktrees,
            other_branches=other_branches,
            other_machines=other_machines,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "other_worktrees": self.other_worktrees,
            "other_branches": self.other_branches,
            "other_machines": self.other_machines,
        }

    def with_machines(self, other_machines: int) -> Elsewhere:
        if not other_machines:
            return self
        return Elsewhere(self.other_worktrees, self.other_branches, other_machines)

    @property
    def total(self) -> int:
        """Outside the scope on this machine (other machines' are counted apart)."""
        return self.other_worktrees + self.other_branches


class Keys(Frozen):
    """A scope as database keys, with the SQL that selects and counts in it. Parameters
    are named (`:ws`, `:wt`, `:br`); `params()` gives their values."""

    __slots__ = ("workspace_pk", "worktree_pk", "branch", "meaningful")
    workspace_pk: int
    worktree_pk: int | None  # None: every worktree
    branch: str | None  # None: every branch
    meaningful: bool

    def __init__(
        self, workspace_pk: int, worktree_pk: int | None, branch: str | None, meaningful: bool
    ) -> None:
        self._set(
            workspace_pk=workspace_pk,
            worktree_pk=worktree_pk,
            branch=branch,
            meaningful=meaningful,
        )

    @property
    def shape(self) -> tuple[bool, bool, bool]:
        """(every worktree, one branch, meaningful only): what the SQL depends on."""
        return (self.worktree_pk is None, self.branch is not None, self.meaningful)

    @property
    def head(self) -> str:
        """The head column of the scope's basis."""
        return "head_ws" if self.worktree_pk is None else "head_wt"

    def params(self) -> dict[str, Any]:
        return {"ws": self.workspace_pk, "wt": self.worktree_pk, "br": self.branch}

    def basis_sql(self, alias: str, *, heads: bool = True) -> str:
        """The shown rows of the scope's basis (every worktree, every branch), as a WHERE
        clause over `alias` (journal_entries): what a search counts categories over.
        `heads=False`: every stored version (vector search's hidden versions)."""
        return _basis(self.shape, alias, heads)

    def shown_sql(
        self, alias: str, *, worktree: str = "", branch: str = "", heads: bool = True
    ) -> str:
        """The rows this scope shows, as a WHERE clause over `alias` (journal_entries):
        its heads, of its worktree and branch, meaningful ones when asked. `worktree` and
        `branch` name other columns that hold copies of the row's (a vector's)."""
        return _shown(self.shape, alias, worktree, branch, heads)

    def category_sql(self, worktree: str, branch: str) -> str:
        """The category (IN_SCOPE, OTHER_WORKTREE, OTHER_BRANCH, or NULL: not counted) of
        a shown row of the basis, from its worktree and branch columns."""
        return _category(self.shape, worktree, branch)

    def counts_sql(self) -> str:
        """(category, count) rows from the per-scope count tables (for `totals`)."""
        return _counts(self.shape)

    def public(self, ctx: StoreContext) -> Scope:
        """The scope as results report it (a scope of the current worktree, or every one)."""
        worktree = None if self.worktree_pk is None else ctx.worktree_key
        return Scope(ctx.workspace_uuid, worktree, self.branch, self.meaningful)


# The SQL of a scope depends on its shape only: built once per shape (reads are hot).
Shape = tuple[bool, bool, bool]


@memo
def _basis(shape: Shape, alias: str, heads: bool) -> str:
    every_worktree, _, meaningful = shape
    a = f"{alias}." if alias else ""
    where = [f"{a}workspace_id = :ws"]
    if heads:
        where.append(f"{a}{'head_ws' if every_worktree else 'head_wt'} = 1")
    if meaningful:
        where.append(f"{a}meaningful = 1")
    return " AND ".join(where)


@memo
def _shown(shape: Shape, alias: str, worktree: str, branch: str, heads: bool) -> str:
    every_worktree, by_branch, _ = shape
    a = f"{alias}." if alias else ""
    wt, br = worktree or f"{a}worktree_id", branch or f"{a}branch"
    where = [_basis(shape, alias, heads)]
    if not every_worktree:
        where.append(f"{wt} = :wt")
    if by_branch:
        where.append(f"{br} = :br")
    return " AND ".join(where)


@memo
def _category(shape: Shape, worktree: str, branch: str) -> str:
    every_worktree, by_branch, _ = shape
    if every_worktree:
        return f"CASE WHEN {branch} = :br THEN 0 ELSE 2 END" if by_branch else "0"
    if not by_branch:
        return f"CASE WHEN {worktree} = :wt THEN 0 ELSE 1 END"
    return (
        f"CASE WHEN {branch} = :br THEN (CASE WHEN {worktree} = :wt THEN 0 ELSE 1 END)"
        f" WHEN {worktree} = :wt THEN 2 END"
    )


@memo
def _counts(shape: Shape) -> str:
    every_worktree, _, meaningful = shape
    col = "meaningful" if meaningful else "heads"
    if every_worktree:
        table, worktree = "journal_counts_ws", "NULL"
    else:
        table, worktree = "journal_counts_wt", "worktree_id"
    # One row per (worktree, branch) with its category; totals() sums them (a GROUP BY
    # would cost a sorter on every read: bench/RESULTS.md, row 'read: scope counts').
    return (
        f"SELECT {_category(shape, worktree, 'branch')}, {col} FROM {table}"
        " WHERE workspace_id = :ws"
    )


def totals(rows: Any) -> tuple[int, Elsewhere]:
    """(in scope, elsewhere) from (category, count) rows."""
    got = [0, 0, 0]
    for category, n in rows:
        if category is not None:
            got[category] += n or 0
    return got[IN_SCOPE], Elsewhere(got[OTHER_WORKTREE], got[OTHER_BRANCH])


def keys(
    ctx: StoreContext,
    branch: object = None,
    all_worktrees: object = False,
    meaningful: object = False,
    *,
    error: type[InvalidInputError] = InvalidInputError,
) -> Keys:
    """The scope of a call from the current worktree, its arguments checked."""
    if branch is not None:
        require_text("branch", branch, error=error)
    all_wt = require_bool("all_worktrees", all_worktrees, error=error)
    only_meaningful = require_bool("meaningful", meaningful, error=error)
    b: str | None = branch  # type: ignore[assignment]  # checked above
    return Keys(ctx.workspace_pk, None if all_wt else ctx.worktree_pk, b, only_meaningful)


def scoped(scope: ScopeLike) -> dict[str, Any]:
    """The `scope` and `elsewhere` of an answer with nothing outside its scope: one where no
    store exists yet (its empty answer's)."""
    return {"scope": scope.to_dict(), "elsewhere": Elsewhere().to_dict()}


def unstored_scope(
    worktree: str, branch: str | None = None, all_worktrees: bool = False, meaningful: bool = False
) -> Scope:
    """The scope a journal read from `worktree` (its key) would have covered where no store
    exists yet: no workspace id, none being minted before the first write."""
    return Scope(None, None if all_worktrees else worktree, branch, meaningful)
