"""The vector table: storage, scoping like journal reads, exact top-k, the cross-process
cache, typed rejection of bad input, and the CLI. Each test names the behaviour it guards."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recall_sqlite import Elsewhere, InvalidInputError, NotFoundError, Store, open_store
from recall_sqlite.store import context_of
from recall_sqlite.vectors import (
    InvalidOwnerError,
    InvalidVectorError,
    Owner,
    UnknownModelError,
    UnknownOwnerError,
)
from recall_sqlite.vectors import matrix as vmod
from tests.conftest import make_workspace
from tests.helpers import cli_here

M = "mini"
_created = itertools.count(1)


def add_entries(
    store: Store, specs: list[dict[str, Any]], worktree: str | None = None
) -> list[str]:
    return [r.id for r in store.journal.append_many(specs, worktree=worktree)]


def add_summary(
    store: Store, branch: str | None, *, kind: str = "session", superseded_by: int | None = None
) -> int:
    """Summaries are written by another module; the vector table only needs the row."""
    us = 1_800_000_000_000_000 + next(_created)
    with context_of(store).db.write() as conn:
        rows = conn.execute(
            "INSERT INTO summaries (workspace_id, branch, kind, text, created_at, created_us,"
            " superseded_by) VALUES (?, ?, ?, 'text', '2027-01-15T08:00:00+00:00', ?, ?)"
            " RETURNING id",
            (context_of(store).workspace_pk, branch, kind, us, superseded_by),
        ).fetchall()
    return int(rows[0][0])


def set_superseded(store: Store, summary_id: int, by: int | None) -> None:
    with context_of(store).db.write() as conn:
        conn.execute("UPDATE summaries SET superseded_by = ? WHERE id = ?", (by, summary_id))


def vector_rows(store: Store) -> list[tuple[Any, ...]]:
    """Everything the vector tables hold, to prove a rejected write left no trace."""
    return (
        context_of(store).db.query("SELECT * FROM vectors ORDER BY id")
        + context_of(store).db.query("SELECT * FROM vector_models ORDER BY 1, 2")
        + context_of(store).db.query("SELECT * FROM vector_generations ORDER BY 1, 2")
        + context_of(store).db.query("SELECT * FROM vector_changes ORDER BY 1, 2, 3, 4")
    )


def ids(result: Any) -> list[str]:
    return [str(h.owner) for h in result.hits]


def unit(*xs: float) -> np.ndarray:
    return np.array(xs, dtype=np.float32)


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Store]:
    root = make_workspace(tmp_path)
    s = open_store(root)
    try:
        yield s
    finally:
        s.close()


# -- storage --------------------------------------------------------------------------


def test_vector_is_stored_as_little_endian_float32_and_read_back(ws: Store) -> None:
    (eid,) = add_entries(ws, [{"timestamp": "2026-01-01T00:00:00Z", "focus": "a"}])
    v = [0.5, -1.25, 3.0, 1e-3]
    res = ws.vectors.put(("entry", eid), v, model=M)
    assert (res.added, res.replaced, res.dim) == (1, 0, 4)
    blob, dim, kind = context_of(ws).db.query("SELECT embedding, dim, owner_kind FROM vectors")[0]
    assert blob == np.asarray(v, dtype="<f4").tobytes() and dim == 4 and kind == "entry"
    got = ws.vectors.get(Owner.entry(eid.upper()), model=M)
    assert got is not None and got.dtype == np.float32 and got.tolist() == list(np.float32(v))
    assert ws.vectors.get(("entry", eid), model="other") is None
    assert ws.vectors.models() == {M: 4}


def test_replacing_a_vector_keeps_one_row_and_identical_replace_writes_nothing(ws: Store) -> None:
    (eid,) = add_entries(ws, [{"timestamp": "2026-01-01T00:00:00Z", "focus": "a"}])
    ws.vectors.put(("entry", eid), [1, 0], model=M)
    res = ws.vectors.put(("entry", eid), [0, 1], model=M)
    assert (res.added, res.replaced) == (0, 1)
    assert context_of(ws).db.query("SELECT count(*) FROM vectors")[0][0] == 1
    got = ws.vectors.get(("entry", eid), model=M)
    assert got is not None and got.tolist() == [0.0, 1.0]
    before = vector_rows(ws)
    ws.vectors.put(("entry", eid), [0, 1], model=M)
    assert vector_rows(ws) == before  # no generation bump: no cache anywhere goes stale


def test_dimension_is_fixed_per_workspace_and_model_by_the_first_vector(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    with (
        open_store(make_workspace(tmp_path, "a"), db_path=db) as a,
        open_store(make_workspace(tmp_path, "b"), db_path=db) as b,
    ):
        ea = add_entries(a, [{"timestamp": "2026-01-01T00:00:00Z", "focus": "a"}] * 1)[0]
        eb = add_entries(b, [{"timestamp": "2026-01-01T00:00:00Z", "focus": "b"}])[0]
        a.vectors.put(("entry", ea), [1, 2, 3], model=M)
        before = vector_rows(a)
        with pytest.raises(InvalidVectorError, match="dimension 3"):
            a.vectors.put(("entry", ea), [1, 2], model=M)
        assert vector_rows(a) == before
        a.vectors.put(("entry", ea), [1, 2], model="other")  # another model: its own dim
        b.vectors.put(("entry", eb), [1, 2, 3, 4, 5], model=M)  # another workspace: its own
        assert a.vectors.models() == {M: 3, "other": 2}
        assert b.vectors.models() == {M: 5}


# -- bad input ------------------------------------------------------------------------

BAD_VECTORS = [
    ([1.0, float("nan"), 2.0], "NaN"),
    ([1.0, float("inf"), 2.0], "infinity"),
    ([-float("inf"), 1.0, 2.0], "infinity"),
    ([], "empty"),
    ([0.0, 0.0, 0.0], "zero vector"),
    (["a", "b", "c"], "real numbers"),
    ("abc", "numbers"),
    ([None, 1.0, 2.0], "real numbers"),
    ([True, False, True], "real numbers"),
    ([1 + 2j, 1.0, 2.0], "real numbers"),
    ([[1.0, 2.0, 3.0]], "1-D"),
    ([1.0, 1e39, 2.0], "float32 range"),
    ([1.0, 2.0], "dimension 3"),
]


@pytest.mark.parametrize(("bad", "message"), BAD_VECTORS)
def test_bad_vector_is_a_typed_error_naming_the_problem_and_writes_nothing(
    ws: Store, bad: Any, message: str
) -> None:
    e1, e2, e3 = add_entries(
        ws, [{"timestamp": f"2026-01-0{i + 1}T00:00:00Z", "focus": str(i)} for i in range(3)]
    )
    ws.vectors.put(("entry", e1), [1, 2, 3], model=M)
    before = vector_rows(ws)
    with pytest.raises(InvalidVectorError, match=message):
        ws.vectors.put(("entry", e2), bad, model=M)
    assert vector_rows(ws) == before
    if isinstance(bad, list) and bad and all(isinstance(x, bool) for x in bad):
        return  # in a list of numbers, numpy reads True/False as the ints they are
    # The same row inside an otherwise good batch rejects the whole batch.
    rows: Any = [[4.0, 5.0, 6.0], bad, [7.0, 8.0, 9.0]]
    with pytest.raises(InvalidVectorError):
        ws.vectors.put_many([("entry", e1), ("entry", e2), ("entry", e3)], rows, model=M)
    assert vector_rows(ws) == before


def test_bad_row_in_a_batch_is_named_and_nothing_of_the_batch_is_written(ws: Store) -> None:
    eids = add_entries(
        ws, [{"timestamp": f"2026-01-0{i + 1}T00:00:00Z", "focus": str(i)} for i in range(5)]
    )
    owners = [("entry", e) for e in eids]
    rows = np.ones((5, 3), dtype=np.float32)
    rows[3, 1] = np.nan
    with pytest.raises(InvalidVectorError, match=r"vectors\[3\] contains NaN"):
        ws.vectors.put_many(owners, rows, model=M)
    rows[3] = 0
    with pytest.raises(InvalidVectorError, match=r"vectors\[3\] is a zero vector"):
        ws.vectors.put_many(owners, rows, model=M)
    with pytest.raises(InvalidVectorError, match="5 owners but 4 vector rows"):
        ws.vectors.put_many(owners, np.ones((4, 3)), model=M)
    with pytest.raises(InvalidOwnerError, match="twice"):
        ws.vectors.put_many([*owners[:4], owners[0]], np.ones((5, 3)), model=M)
    assert vector_rows(ws) == []


def test_unknown_owners_are_typed_errors_and_reject_the_whole_batch(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    with (
        open_store(make_workspace(tmp_path, "a"), db_path=db) as a,
        open_store(make_workspace(tmp_path, "b"), db_path=db) as b,
    ):
        mine = add_entries(a, [{"timestamp": "2026-01-01T00:00:00Z", "focus": "a"}])[0]
        theirs = add_entries(b, [{"timestamp": "2026-01-01T00:00:00Z", "focus": "b"}])[0]
        their_summary = add_summary(b, None)
        for bad, message in (
            (("entry", "0" * 32), "no entry"),
            (("entry", theirs), "no entry"),
            (("summary", 999_999), "no summary"),
            (("summary", their_summary), "no summary"),
        ):
            with pytest.raises(UnknownOwnerError, match=message):
                a.vectors.put(bad, [1, 2], model=M)
            with pytest.raises(UnknownOwnerError):
                a.vectors.put_many([("entry", mine), bad], [[1, 2], [3, 4]], model=M)
            with pytest.raises(NotFoundError):
                a.vectors.delete(bad)
        assert vector_rows(a) == []


@pytest.mark.parametrize(
    "owner",
    [
        ("entry", "xyz"),
        ("entry", "ab" * 17),
        ("entry", 5),
        ("summary", 0),
        ("summary", True),
        ("summary", "3"),
        ("note", 1),
        "entry:abc",
        ["entry", "0" * 32],
        None,
    ],
)
def test_malformed_owner_is_an_invalid_owner_error(ws: Store, owner: Any) -> None:
    with pytest.raises(InvalidOwnerError):
        ws.vectors.put(owner, [1, 2], model=M)


def test_owner_forms() -> None:
    h = "AB" * 16
    assert (
        Owner.entry(h)
        == Owner.of(("entry", h))
        == Owner.parse(f"entry:{h}")
        == Owner.parse(h)
        == Owner("entry", h.lower())
    )
    assert Owner.of(("summary", np.int64(7))) == Owner.parse("summary:7") == Owner("summary", 7)
    assert str(Owner.summary(7)) == "summary:7"
    assert Owner.summary(7).to_dict() == {"kind": "summary", "id": 7}


def test_bad_search_arguments_are_typed_errors(ws: Store) -> None:
    (eid,) = add_entries(ws, [{"timestamp": "2026-01-01T00:00:00Z", "focus": "a"}])
    ws.vectors.put(("entry", eid), [1, 2, 3], model=M)
    with pytest.raises(UnknownModelError, match="mini"):
        ws.vectors.search([1, 2, 3], model="typo")
    for bad_k in (0, -1, True, 2.5):
        with pytest.raises(InvalidInputError, match="k must"):
            ws.vectors.search([1, 2, 3], bad_k, model=M)  # type: ignore[arg-type]
    with pytest.raises(InvalidVectorError, match="dimension 2"):
        ws.vectors.search([1, 2], model=M)
    with pytest.raises(InvalidVectorError, match="NaN"):
        ws.vectors.search([1, float("nan"), 2], model=M)
    with pytest.raises(InvalidVectorError, match="zero"):
        ws.vectors.search([0, 0, 0], model=M)
    with pytest.raises(InvalidInputError, match="kind"):
        ws.vectors.search([1, 2, 3], model=M, kinds=["entries"])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="empty"):
        ws.vectors.search([1, 2, 3], model=M, kinds=[])
    with pytest.raises(InvalidInputError, match="branch"):
        ws.vectors.search([1, 2, 3], model=M, branch=3)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="model"):
        ws.vectors.search([1, 2, 3], model="")


# -- exact top-k ----------------------------------------------------------------------


class World:
    """A workspace with two worktrees, three branches, sessions with several versions,
    summaries (some superseded), a second model and a second workspace in the same file;
    it remembers every vector put, so a brute-force reference can be computed."""

    BRANCHES = ("main", "dev", "")
    DIM = 5

    def __init__(self, tmp: Path) -> None:
        db = tmp / "world.db"
        root = make_workspace(tmp, "w")
        (root / "desk2" / ".git").mkdir(parents=True)
        self.s = open_store(root, db_path=db)
        self.desk2 = open_store(root / "desk2", db_path=db)  # registers worktree desk2
        self.other = open_store(make_workspace(tmp, "elsewhere"), db_path=db)
        self.entries: dict[str, tuple[str, str]] = {}  # id -> (worktree, branch)
        self.summaries: dict[int, str | None] = {}  # id -> branch
        self.superseded: set[int] = set()
        self.vectors: dict[Owner, np.ndarray] = {}  # model M, this workspace
        self.tick = itertools.count()

    def close(self) -> None:
        self.s.close()
        self.desk2.close()
        self.other.close()

    def append(self, rng: np.random.Generator, n: int) -> None:
        for _ in range(n):
            wt = "." if rng.random() < 0.6 else "desk2"
            branch = self.BRANCHES[int(rng.integers(0, 3))]
            t = next(self.tick)
            spec = {
                "timestamp": f"2026-02-01T00:00:00.{t:06d}Z",
                "session_id": f"s{int(rng.integers(0, 12))}",
                "branch": branch,
                "focus": f"f{t}",
                "auto": bool(rng.random() < 0.2),
            }
            (eid,) = add_entries(self.s, [spec], worktree=wt)
            self.entries[eid] = (wt, branch)
        if rng.random() < 0.5:
            branch = [None, *self.BRANCHES][int(rng.integers(0, 4))]
            sid = add_summary(self.s, branch)
            self.summaries[sid] = branch
            if self.summaries and rng.random() < 0.4:
                old = list(self.summaries)[int(rng.integers(0, len(self.summaries)))]
                if old != sid:
                    set_superseded(self.s, old, sid)
                    self.superseded.add(old)

    def owners(self) -> list[Owner]:
        return [Owner.entry(e) for e in self.entries] + [Owner.summary(i) for i in self.summaries]

    def put_random(self, rng: np.random.Generator, frac: float) -> None:
        owners = [o for o in self.owners() if rng.random() < frac]
        if not owners:
            return
        rows = rng.standard_normal((len(owners), self.DIM)).astype(np.float32)
        known = list(self.vectors.values())
        for i in range(len(owners)):
            if known and rng.random() < 0.25:
                # exact duplicates and power-of-two multiples: ties the order must break
                rows[i] = known[int(rng.integers(0, len(known)))] * (2.0 ** int(rng.integers(0, 3)))
        self.s.vectors.put_many(owners, rows, model=M)
        self.vectors.update(zip(owners, rows, strict=True))
        # noise the filters must never let through: another model, another workspace
        self.s.vectors.put_many(owners, -rows, model="other-model")
        t = next(self.tick)
        their = add_entries(
            self.other,
            [{"timestamp": f"2026-02-02T00:00:00.{t:06d}Z", "focus": "x", "branch": "main"}],
        )
        self.other.vectors.put(("entry", their[0]), rows[0], model=M)

    def delete_random(self, rng: np.random.Generator) -> None:
        if self.vectors:
            victim = list(self.vectors)[int(rng.integers(0, len(self.vectors)))]
            self.s.vectors.delete(victim, model=M)
            del self.vectors[victim]

    def reference(
        self,
        q: np.ndarray,
        k: int,
        branch: str | None,
        kinds: tuple[str, ...],
        all_worktrees: bool,
        include_hidden: bool,
    ) -> list[tuple[str, float]]:
        """Brute force over what the test itself put, scoped by journal reads."""
        shown = {
            e.id
            for e in self.s.journal.read(
                n=10**6, branch=branch, all_worktrees=all_worktrees
            ).entries
        }
        scored = []
        for owner, v in self.vectors.items():
            if owner.kind not in kinds:
                continue
            if owner.kind == "entry":
                wt, b = self.entries[str(owner.id)]
                if include_hidden:
                    if (branch is not None and b != branch) or (not all_worktrees and wt != "."):
                        continue
                elif owner.id not in shown:
                    continue
            else:
                sb = self.summaries[int(owner.id)]
                if branch is not None and sb != branch:
                    continue
                if not include_hidden and int(owner.id) in self.superseded:
                    continue
            a, b64 = v.astype(np.float64), q.astype(np.float64)
            score = float(a @ b64 / (np.linalg.norm(a) * np.linalg.norm(b64)))
            rank = (0, str(owner.id), 0) if owner.kind == "entry" else (1, "", int(owner.id))
            scored.append((-score, rank, str(owner), score))
        scored.sort()
        return [(name, score) for _, _, name, score in scored[:k]]

    def reference_elsewhere(
        self, branch: str | None, kinds: tuple[str, ...], all_worktrees: bool, include_hidden: bool
    ) -> Elsewhere:
        """The vectors a scope leaves out, by what the test put, counted as a read counts
        entries (scope.py): the versions each worktree's reads show (or every version with
        hidden ones), in other worktrees on the scope's branch and here on other branches."""

        def shown(store: Store, every: bool) -> set[str]:
            return {e.id for e in store.journal.read(n=10**6, all_worktrees=every).entries}

        heads = (
            shown(self.s, True)
            if all_worktrees
            else shown(self.s, False) | shown(self.desk2, False)
        )
        got = [0, 0]
        for owner in self.vectors:
            if owner.kind not in kinds:
                continue
            if owner.kind == "summary":
                sb = self.summaries[int(owner.id)]
                hidden = int(owner.id) in self.superseded
                if branch is not None and sb != branch and (include_hidden or not hidden):
                    got[1] += 1
                continue
            if not include_hidden and owner.id not in heads:
                continue
            wt, b = self.entries[str(owner.id)]
            on_branch = branch is None or b == branch
            if all_worktrees or wt == ".":
                got[1] += 0 if on_branch else 1
            elif on_branch:
                got[0] += 1
        return Elsewhere(*got)


def test_top_k_equals_brute_force_with_and_without_filters(tmp_path: Path) -> None:
    """Random workspaces, writes (puts, replacements, deletes, new session versions that hide
    old ones, superseded summaries) and random scopes: search returns exactly the brute-force
    top k, in the documented order, with exact cosines; warm, caught-up and cold caches alike."""
    world = World(tmp_path)

    @settings(max_examples=40, deadline=None, derandomize=True)
    @given(
        seed=st.integers(0, 2**32 - 1),
        k=st.integers(1, 12),
        branch=st.sampled_from([None, "main", "dev", ""]),
        kinds=st.sampled_from([("entry", "summary"), ("entry",), ("summary",)]),
        all_worktrees=st.booleans(),
        include_hidden=st.booleans(),
        cold=st.booleans(),
    )
    def check(
        seed: int,
        k: int,
        branch: str | None,
        kinds: tuple[str, ...],
        all_worktrees: bool,
        include_hidden: bool,
        cold: bool,
    ) -> None:
        rng = np.random.default_rng(seed)
        world.append(rng, int(rng.integers(0, 6)))
        world.put_random(rng, float(rng.uniform(0.2, 1.0)))
        if rng.random() < 0.3:
            world.delete_random(rng)
        if not world.vectors:
            return
        q = rng.standard_normal(World.DIM).astype(np.float32)
        if rng.random() < 0.3:
            q = list(world.vectors.values())[0].copy()  # ties at the very top
        if cold:
            world.s.vectors.clear_cache()
        got = world.s.vectors.search(
            q,
            k,
            model=M,
            branch=branch,
            kinds=kinds,  # type: ignore[arg-type]
            all_worktrees=all_worktrees,
            include_hidden=include_hidden,
        )
        want = world.reference(q, k, branch, kinds, all_worktrees, include_hidden)
        assert ids(got) == [name for name, _ in want]
        for hit, (_, score) in zip(got.hits, want, strict=True):
            assert hit.score == pytest.approx(score, abs=1e-12)
        unfiltered = world.s.vectors.search(q, k, model=M, all_worktrees=True, include_hidden=True)
        assert ids(unfiltered) == [
            n for n, _ in world.reference(q, k, None, ("entry", "summary"), True, True)
        ]
        assert got.elsewhere == world.reference_elsewhere(
            branch, kinds, all_worktrees, include_hidden
        )
        assert (
            got.scope.read_scope
            == world.s.journal.read(n=1, branch=branch, all_worktrees=all_worktrees).scope
        )
        assert unfiltered.elsewhere == Elsewhere()

    try:
        check()
        info = world.s.vectors.cache_info()
        assert info.refreshes > 0 and info.builds > 0  # both cache paths were exercised
    finally:
        world.close()


@pytest.mark.parametrize("blas", [False, True])
def test_ranking_is_exact_where_float32_rounding_inverts_the_order(
    ws: Store, monkeypatch: pytest.MonkeyPatch, blas: bool
) -> None:
    """Near-duplicates whose float32 scores rank differently from their exact cosines: the
    float32 pass only nominates candidates, the answer is the exact order (through numpy's
    own loop and through BLAS, which big matrices use)."""
    monkeypatch.setattr(vmod, "_BLAS_MIN_ELEMENTS", 0 if blas else 10**12)
    rng = np.random.default_rng(11)
    base = rng.standard_normal(384)
    rows = (base + 2e-6 * rng.standard_normal((300, 384))).astype(np.float32)
    q = (base + 1e-3 * rng.standard_normal(384)).astype(np.float32)
    unit_rows = (rows / np.linalg.norm(rows.astype(np.float64), axis=1)[:, None]).astype("f4")
    q32 = (q / np.linalg.norm(q.astype(np.float64))).astype(np.float32)
    fast = np.einsum("ij,j->i", unit_rows, q32)
    r64 = rows.astype(np.float64)
    q64 = q.astype(np.float64)
    exact = r64 @ q64 / (np.linalg.norm(r64, axis=1) * np.linalg.norm(q64))
    assert np.argsort(-fast, kind="stable")[:5].tolist() != np.argsort(-exact)[:5].tolist()
    eids = add_entries(
        ws, [{"timestamp": f"2026-01-01T00:00:00.{i:06d}Z", "focus": str(i)} for i in range(300)]
    )
    ws.vectors.put_many([("entry", e) for e in eids], rows, model=M)
    for k in (1, 5):
        got = ws.vectors.search(q, k, model=M)
        assert ids(got) == [f"entry:{eids[i]}" for i in np.argsort(-exact)[:k]]
        assert [h.score for h in got.hits] == pytest.approx(
            np.sort(exact)[::-1][:k].tolist(), abs=1e-12
        )


def test_equal_scores_rank_entries_by_id_then_summaries_by_id(ws: Store) -> None:
    eids = add_entries(
        ws, [{"timestamp": f"2026-01-0{i + 1}T00:00:00Z", "focus": str(i)} for i in range(4)]
    )
    sids = [add_summary(ws, None) for _ in range(2)]
    owners = [
        ("summary", sids[1]),
        ("entry", eids[2]),
        ("summary", sids[0]),
        ("entry", eids[0]),
        ("entry", eids[3]),
        ("entry", eids[1]),
    ]
    v = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 1.0, 1.5]]
    ws.vectors.put_many(owners, [v[i % 3] for i in range(6)], model=M)
    got = ws.vectors.search([1, 2, 3], 6, model=M)
    assert ids(got) == [f"entry:{e}" for e in sorted(eids)] + [f"summary:{s}" for s in sids]
    assert all(h.score == 1.0 for h in got.hits)


# -- scoping ----------------------------------------------------------------------------


def test_filters_never_leak_another_workspace_branch_model_kind_or_worktree(tmp_path: Path) -> None:
    """Every vector identical to the query, one per scope dimension: each filter shows its
    own and nothing else, and the widened search shows what the narrow one left out."""
    db = tmp_path / "shared.db"
    root = make_workspace(tmp_path, "a")
    (root / "desk2" / ".git").mkdir(parents=True)
    with (
        open_store(root, db_path=db) as a,
        open_store(root / "desk2", db_path=db) as a2,
        open_store(make_workspace(tmp_path, "b"), db_path=db) as b,
    ):
        q = unit(1, 0, 0)
        main_e, dev_e = add_entries(
            a,
            [
                {"timestamp": "2026-01-01T00:00:00Z", "branch": "main", "focus": "m"},
                {"timestamp": "2026-01-02T00:00:00Z", "branch": "dev", "focus": "d"},
            ],
        )
        (desk_e,) = add_entries(
            a2, [{"timestamp": "2026-01-03T00:00:00Z", "branch": "main", "focus": "desk"}]
        )
        (other_ws,) = add_entries(
            b, [{"timestamp": "2026-01-01T00:00:00Z", "branch": "main", "focus": "b"}]
        )
        summ_main, summ_all = add_summary(a, "main"), add_summary(a, None)
        for owner in (
            ("entry", main_e),
            ("entry", dev_e),
            ("entry", desk_e),
            ("summary", summ_main),
            ("summary", summ_all),
        ):
            a.vectors.put(owner, q, model=M)
        a.vectors.put(("entry", main_e), q, model="other-model")
        b.vectors.put(("entry", other_ws), q, model=M)

        def found(**kw: Any) -> set[str]:
            r = a.vectors.search(q, 50, model=M, **kw)
            assert all(h.score == 1.0 for h in r.hits)
            return {str(h.owner) for h in r.hits}

        e = lambda x: f"entry:{x}"  # noqa: E731
        s = lambda x: f"summary:{x}"  # noqa: E731
        assert found() == {e(main_e), e(dev_e), s(summ_main), s(summ_all)}
        assert found(all_worktrees=True) == {
            e(main_e),
            e(dev_e),
            e(desk_e),
            s(summ_main),
            s(summ_all),
        }
        assert found(branch="main") == {e(main_e), s(summ_main)}
        assert found(branch="main", all_worktrees=True) == {e(main_e), e(desk_e), s(summ_main)}
        assert found(branch="dev", kinds="entry") == {e(dev_e)}
        assert found(kinds=["summary"]) == {s(summ_main), s(summ_all)}
        assert found(branch="nope") == set()
        assert {str(h.owner) for h in a2.vectors.search(q, 50, model=M).hits} == {
            e(desk_e),
            s(summ_main),
            s(summ_all),
        }
        assert ids(b.vectors.search(q, 50, model=M)) == [e(other_ws)]
        assert ids(a.vectors.search(q, 50, model="other-model")) == [e(main_e)]
        narrow = a.vectors.search(q, 50, model=M, branch="dev")
        assert (narrow.searched, narrow.elsewhere) == (1, Elsewhere(other_branches=3))
        assert narrow.scope.to_dict() == {
            "workspace_id": a.workspace.id,
            "worktree": ".",
            "branch": "dev",
            "meaningful": False,
            "model": M,
            "kinds": ["entry", "summary"],
            "include_hidden": False,
        }


def test_a_search_reports_the_scope_and_elsewhere_a_journal_read_reports(tmp_path: Path) -> None:
    """With a vector for every entry version, a vector search of entries says the scope and
    the elsewhere counts that a journal read of the same scope says (scope.py counts both),
    whether its matrix is built, caught up after writes, or current."""
    db = tmp_path / "shared.db"
    root = make_workspace(tmp_path, "a")
    (root / "desk2" / ".git").mkdir(parents=True)
    with open_store(root, db_path=db) as a, open_store(root / "desk2", db_path=db) as a2:
        tick = itertools.count()

        def add(store: Store, branch: str, session: str, auto: bool = False) -> None:
            t = next(tick)
            spec = {
                "timestamp": f"2026-01-01T00:00:{t:02d}Z",
                "session_id": session,
                "branch": branch,
                "focus": f"f{t}",
                "auto": auto,
            }
            (eid,) = add_entries(store, [spec])
            store.vectors.put(("entry", eid), [1.0, float(t)], model=M)

        for store, branch, session in [
            (a, "main", "s1"),
            (a, "dev", "s2"),
            (a, "", "s3"),
            (a2, "main", "s4"),
            (a2, "dev", "s5"),
            (a2, "main", "s6"),
        ]:
            add(store, branch, session)

        def same_as_reads() -> None:
            for branch in (None, "main", "dev", "", "nope"):
                for every in (False, True):
                    read = a.journal.read(n=100, branch=branch, all_worktrees=every)
                    got = a.vectors.search(
                        [1, 0], 100, model=M, branch=branch, kinds="entry", all_worktrees=every
                    )
                    where = (branch, every)
                    assert got.scope.read_scope == read.scope, where
                    assert got.elsewhere == read.elsewhere, where
                    assert got.searched == read.total == len(got.hits), where

        same_as_reads()  # every matrix built
        same_as_reads()  # every matrix current
        before = a.vectors.cache_info().refreshes
        add(a, "main", "s1")  # a new version of s1 hides the old one
        add(a2, "dev", "s7")
        add(a, "dev", "s2", auto=True)  # a poorer version: the old one stays shown
        s3 = ("entry", a.journal.read(n=1, branch="").entries[0].id)
        a.vectors.delete(s3, model=M)
        gone = a.vectors.search([1, 0], model=M, branch="", kinds="entry")
        assert gone.searched == 0  # its vector gone, the entry still read
        a.vectors.put(s3, [2.0, 1.0], model=M)
        a.vectors.put(s3, [3.0, 1.0], model=M)  # a vector new since the cache, then replaced
        add(a, "", "s8")
        same_as_reads()  # caught up from the change log
        assert a.vectors.cache_info().refreshes > before
        assert a.vectors.search([1, 0], model=M, all_worktrees=True).elsewhere == Elsewhere()
        narrow = a.vectors.search([1, 0], model=M, branch="dev")
        with pytest.warns(DeprecationWarning, match="elsewhere"):
            assert narrow.outside == narrow.elsewhere.total > 0  # the old name, deprecated


def test_only_the_versions_reads_show_are_searched_and_a_new_version_hides_the_old(
    ws: Store,
) -> None:
    old, other = add_entries(
        ws,
        [
            {"timestamp": "2026-01-01T00:00:00Z", "session_id": "s1", "focus": "draft"},
            {"timestamp": "2026-01-01T00:00:00Z", "session_id": "s2", "focus": "x"},
        ],
    )
    ws.vectors.put_many([("entry", old), ("entry", other)], [[1, 0], [0, 1]], model=M)
    assert ids(ws.vectors.search([1, 0], 1, model=M)) == [f"entry:{old}"]  # cache warm
    # A richer version of s1 arrives (no vector yet): reads now show it, not `old`.
    (new,) = add_entries(
        ws,
        [
            {
                "timestamp": "2026-01-02T00:00:00Z",
                "session_id": "s1",
                "focus": "final",
                "done": ["it"],
            }
        ],
    )
    assert [e.id for e in ws.journal.read(n=10).entries if e.session_id == "s1"] == [new]
    assert ids(ws.vectors.search([1, 0], 5, model=M)) == [f"entry:{other}"]
    assert f"entry:{old}" in ids(ws.vectors.search([1, 0], 5, model=M, include_hidden=True))
    ws.vectors.put(("entry", new), [1, 0.1], model=M)
    assert ids(ws.vectors.search([1, 0], 1, model=M)) == [f"entry:{new}"]
    stats = ws.vectors.stats().models[0]
    assert (stats.vectors, stats.hidden, stats.orphans) == (3, 1, 0)


def test_superseded_summaries_are_hidden_until_reinstated(ws: Store) -> None:
    first = add_summary(ws, "main")
    ws.vectors.put(("summary", first), [1, 0], model=M)
    assert ids(ws.vectors.search([1, 0], 5, model=M)) == [f"summary:{first}"]
    second = add_summary(ws, "main")
    set_superseded(ws, first, second)
    assert ids(ws.vectors.search([1, 0], 5, model=M)) == []
    assert ids(ws.vectors.search([1, 0], 5, model=M, include_hidden=True)) == [f"summary:{first}"]
    set_superseded(ws, first, None)
    assert ids(ws.vectors.search([1, 0], 5, model=M)) == [f"summary:{first}"]


def test_deleting_an_owner_deletes_its_vectors_with_or_without_foreign_keys(ws: Store) -> None:
    e1, e2, e3 = add_entries(
        ws, [{"timestamp": f"2026-01-0{i + 1}T00:00:00Z", "focus": str(i)} for i in range(3)]
    )
    s1 = add_summary(ws, None)
    ws.vectors.put_many(
        [("entry", e1), ("entry", e2), ("entry", e3), ("summary", s1)],
        [[1, 0], [1, 0.1], [1, 0.2], [1, 0.3]],
        model=M,
    )
    assert len(ws.vectors.search([1, 0], 10, model=M).hits) == 4  # cache warm
    with context_of(ws).db.write() as conn:  # the store's connection: foreign keys on
        conn.execute("DELETE FROM journal_entries WHERE id = ?", (bytes.fromhex(e1),))
    shell = apsw.Connection(str(ws.workspace.db_path))  # like the sqlite3 shell: keys off
    try:
        assert shell.execute("PRAGMA foreign_keys").fetchall() == [(0,)]
        shell.execute("DELETE FROM journal_entries WHERE id = ?", (bytes.fromhex(e2),))
        shell.execute("DELETE FROM summaries WHERE id = ?", (s1,))
    finally:
        shell.close()
    assert ids(ws.vectors.search([1, 0], 10, model=M)) == [f"entry:{e3}"]
    assert context_of(ws).db.query("SELECT count(*) FROM vectors")[0][0] == 1
    assert ws.vectors.stats().models[0].orphans == 0


def test_an_orphan_is_never_searched_and_is_reported(ws: Store) -> None:
    """Defence in depth: even with the cascading trigger gone and keys off, the owner join
    keeps an orphan out of every top k, and stats counts it."""
    e1, e2 = add_entries(
        ws,
        [
            {"timestamp": "2026-01-01T00:00:00Z", "focus": "a"},
            {"timestamp": "2026-01-02T00:00:00Z", "focus": "b"},
        ],
    )
    ws.vectors.put_many([("entry", e1), ("entry", e2)], [[1, 0], [0, 1]], model=M)
    shell = apsw.Connection(str(ws.workspace.db_path))
    try:
        shell.execute("DROP TRIGGER vectors_follow_entry_delete")
        shell.execute("DELETE FROM journal_entries WHERE id = ?", (bytes.fromhex(e1),))
    finally:
        shell.close()
    ws.vectors.clear_cache()
    for kw in ({}, {"all_worktrees": True, "include_hidden": True}):
        assert ids(ws.vectors.search([1, 0], 10, model=M, **kw)) == [f"entry:{e2}"]
    assert ws.vectors.stats().models[0].orphans == 1


def test_triggers_hold_rows_written_from_a_shell_to_the_same_rules(ws: Store) -> None:
    eid, e2 = add_entries(
        ws,
        [
            {"timestamp": "2026-01-01T00:00:00Z", "branch": "main", "focus": "a"},
            {"timestamp": "2026-01-02T00:00:00Z", "branch": "main", "focus": "b"},
        ],
    )
    ws.vectors.put(("entry", eid), [1, 0], model=M)
    assert ids(ws.vectors.search([0, 1], 5, model=M)) == [f"entry:{eid}"]  # cache warm
    (seq, wt), (seq2, _) = context_of(ws).db.query(
        "SELECT seq, worktree_id FROM journal_entries ORDER BY seq"
    )
    pk = context_of(ws).workspace_pk
    insert = (
        "INSERT INTO vectors (workspace_id, model, dim, entry_seq, owner_kind, branch,"
        " worktree_id, embedding, created_at) VALUES (?, ?, ?, ?, 'entry', ?, ?, ?, 'now')"
    )
    with pytest.raises(apsw.ConstraintError, match="dimension differs"):
        context_of(ws).db.conn.execute(insert, (pk, M, 3, seq2, "main", wt, b"\0" * 12))
    with pytest.raises(apsw.ConstraintError, match="not declared in vector_models"):
        context_of(ws).db.conn.execute(insert, (pk, "m2", 2, seq2, "main", wt, b"\0" * 8))
    with pytest.raises(apsw.ConstraintError, match="branch/worktree_id differ"):
        context_of(ws).db.conn.execute(insert, (pk, M, 2, seq2, "dev", wt, b"\0" * 8))
    with pytest.raises(apsw.ConstraintError, match="cannot change"):
        context_of(ws).db.conn.execute("UPDATE vectors SET model = 'm2'")
    with pytest.raises(apsw.ConstraintError, match="UNIQUE"):
        context_of(ws).db.conn.execute(insert, (pk, M, 2, seq, "main", wt, b"\0" * 8))
    assert ws.vectors.models() == {M: 2}
    # A row the shell writes correctly is searched, and the warm cache notices it.
    context_of(ws).db.conn.execute(
        insert, (pk, M, 2, seq2, "main", wt, np.array([0, 1], "<f4").tobytes())
    )
    assert ids(ws.vectors.search([0, 1], 5, model=M)) == [f"entry:{e2}", f"entry:{eid}"]


# -- the cache ----------------------------------------------------------------------------

_WRITER = textwrap.dedent("""
    import sys
    from recall_sqlite import open_store
    op, root, owner, *values = sys.argv[1:]
    kind, ident = owner.split(":")
    with open_store(root) as s:
        if op == "put":
            s.vectors.put((kind, ident if kind == "entry" else int(ident)),
                          [float(v) for v in values], model="mini")
        else:
            s.vectors.delete((kind, ident if kind == "entry" else int(ident)))
""")


def _python(code: str, *args: str) -> None:
    """Run `code` in another interpreter; its asserts fail this test."""
    res = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert res.returncode == 0, res.stderr


def _other_process(*args: str) -> None:
    _python(_WRITER, *args)


def test_a_write_from_another_process_invalidates_this_process_cache(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        e1, e2, e3 = add_entries(
            s, [{"timestamp": f"2026-01-0{i + 1}T00:00:00Z", "focus": str(i)} for i in range(3)]
        )
        s.vectors.put_many([("entry", e1), ("entry", e2)], [[1, 0], [0, 1]], model=M)
        assert ids(s.vectors.search([1, 0], 1, model=M)) == [f"entry:{e1}"]
        assert ids(s.vectors.search([1, 0], 1, model=M)) == [f"entry:{e1}"]
        warm = s.vectors.cache_info()
        assert warm.hits == 1 and warm.builds == 1  # the second search used the cache

        _other_process("put", str(root), f"entry:{e3}", "1", "0.001")  # an insert
        assert ids(s.vectors.search([1, 0.01], 1, model=M)) == [f"entry:{e3}"]
        _other_process("put", str(root), f"entry:{e2}", "1", "0.01")  # a replacement
        assert ids(s.vectors.search([1, 0.01], 1, model=M)) == [f"entry:{e2}"]
        _other_process("delete", str(root), f"entry:{e2}")  # a delete
        assert ids(s.vectors.search([1, 0.01], 3, model=M)) == [f"entry:{e3}", f"entry:{e1}"]
        info = s.vectors.cache_info()
        assert info.builds == 1 and info.refreshes == 3  # caught up, never rebuilt


def test_a_cache_too_far_behind_the_pruned_log_rebuilds(
    ws: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vmod, "LOG_MIN_GENERATIONS", 4)
    eids = add_entries(
        ws, [{"timestamp": f"2026-01-01T00:00:{i:02d}Z", "focus": str(i)} for i in range(12)]
    )
    owners = [("entry", e) for e in eids]
    rng = np.random.default_rng(7)
    ws.vectors.put_many(owners, rng.standard_normal((12, 3)), model=M)
    ws.vectors.search([1, 0, 0], model=M)
    for i in range(30):  # replacements: each one is logged
        ws.vectors.put(owners[i % 12], rng.standard_normal(3), model=M)
    assert context_of(ws).db.query("SELECT count(*) FROM vector_changes")[0][0] <= 2 * 4
    got = ws.vectors.search([1, 0, 0], 12, model=M)
    assert ws.vectors.cache_info().builds == 2
    ws.vectors.clear_cache()
    assert ids(ws.vectors.search([1, 0, 0], 12, model=M)) == ids(got)


def test_cache_memory_is_bounded_and_searches_stay_right_beyond_it(ws: Store) -> None:
    eids = add_entries(
        ws,
        [
            {"timestamp": f"2026-01-01T00:00:{i:02d}Z", "focus": str(i), "branch": "ab"[i % 2]}
            for i in range(40)
        ],
    )
    rng = np.random.default_rng(3)
    ws.vectors.put_many([("entry", e) for e in eids], rng.standard_normal((40, 8)), model=M)
    q = rng.standard_normal(8)
    full = ids(ws.vectors.search(q, 5, model=M))
    branch_a = ids(ws.vectors.search(q, 5, model=M, branch="a"))
    assert ws.vectors.cache_info().matrices == 2
    one = ws.vectors.cache_info().bytes
    ws.vectors.cache_limit = one - 1  # less than both: the older goes
    assert ws.vectors.cache_info().matrices == 1
    branch_b = ids(ws.vectors.search(q, 5, model=M, branch="b"))  # a third filter fits
    info = ws.vectors.cache_info()  # only by evicting the other
    assert info.matrices == 1 and info.bytes <= one - 1
    assert ids(ws.vectors.search(q, 5, model=M, branch="b")) == branch_b
    assert ws.vectors.cache_info().hits == info.hits + 1
    ws.vectors.cache_limit = 64  # room for nothing
    for _ in range(2):
        assert ids(ws.vectors.search(q, 5, model=M)) == full
        assert ids(ws.vectors.search(q, 5, model=M, branch="a")) == branch_a
        info = ws.vectors.cache_info()
        assert info.bytes == 0 and info.matrices == 0


# -- numpy stays out of the journal path -------------------------------------------------


def test_journal_path_and_cli_import_no_numpy(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    code = textwrap.dedent(f"""
        import sys
        import recall_sqlite
        import recall_sqlite.cli as cli
        from recall_sqlite.vectors import Owner, InvalidVectorError
        cli.build_parser(list(dict.fromkeys(cli.COMMANDS.values())))
        s = recall_sqlite.open_store({str(root)!r})
        s.journal.append({{"timestamp": "2026-01-01T00:00:00Z", "focus": "x"}})
        s.journal.read()
        s.close()
        assert "numpy" not in sys.modules, "numpy was imported"
        s = recall_sqlite.open_store({str(root)!r})
        s.vectors
        assert "numpy" in sys.modules      # the check above can fail
    """)
    _python(code)


# -- search_like and the CLI -------------------------------------------------------------


def test_search_like_leaves_the_owner_itself_out(ws: Store) -> None:
    eids = add_entries(
        ws, [{"timestamp": f"2026-01-0{i + 1}T00:00:00Z", "focus": str(i)} for i in range(3)]
    )
    ws.vectors.put_many([("entry", e) for e in eids], [[1, 0], [1, 0.2], [0, 1]], model=M)
    got = ws.vectors.search_like(("entry", eids[0]), 5, model=M)
    assert ids(got) == [f"entry:{eids[1]}", f"entry:{eids[2]}"]
    with pytest.raises(NotFoundError, match="no vector"):
        ws.vectors.search_like(("entry", eids[0]), model="other")


def test_cli_vectors_stats_and_search_like(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        eids = add_entries(
            s,
            [
                {
                    "timestamp": f"2026-01-0{i + 1}T00:00:00Z",
                    "focus": f"focus {i}",
                    "branch": "main",
                }
                for i in range(3)
            ],
        )
        s.vectors.put_many([("entry", e) for e in eids], [[1, 0], [1, 0.2], [0, 1]], model=M)
        s.vectors.put(("summary", add_summary(s, None)), [1, 0.1], model=M)

    def vectors(*argv: str) -> tuple[int, str, str]:
        return cli_here(capsys, None, "--cwd", str(root), "vectors", *argv)

    code, out, _ = vectors("stats", "--json")
    data = json.loads(out)
    assert code == 0 and data["total"] == 4
    assert data["models"] == [
        {
            "model": M,
            "dim": 2,
            "vectors": 4,
            "entries": 3,
            "summaries": 1,
            "hidden": 0,
            "orphans": 0,
            "wrong_dim": 0,
        }
    ]
    code, out, _ = vectors("stats")
    assert code == 0 and M in out and "orphans" in out
    code, out, _ = vectors("search", "--like", eids[0], "-k", "1", "--json")
    data = json.loads(out)
    assert code == 0 and [h["owner"]["id"] for h in data["hits"]] == [eids[1]]
    assert data["hits"][0]["focus"] == "focus 1" and data["like"] == eids[0]
    assert data["scope"]["kinds"] == ["entry"]
    assert set(data["elsewhere"]) == {"other_worktrees", "other_branches", "other_machines"}
    code, out, _ = vectors(
        "search", "--like", eids[0], "--branch", "main", "--all-worktrees", "--model", M
    )
    assert code == 0 and "focus 1" in out and eids[1][:12] in out
    code, _, err = vectors("search", "--like", "0" * 32)
    assert code == 2 and "no entry" in err and "Traceback" not in err
    code, _, err = vectors("search", "--like", eids[0], "--model", "nope")
    assert code == 2 and "nope" in err


def test_vectors_stats_need_no_numpy(ws: Store, tmp_path: Path) -> None:
    """stats are SQL: a host without numpy (or the CLI) still learns what the table holds."""
    eids = add_entries(ws, [{"timestamp": "2026-01-01T00:00:00Z", "focus": "x"}])
    ws.vectors.put(("entry", eids[0]), [1.0, 0.0], model=M)
    code = textwrap.dedent(f"""
        import sys, json, io, contextlib
        sys.modules["numpy"] = None          # any import of numpy now fails
        from recall_sqlite.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["--cwd", {str(ws.workspace.root)!r}, "--db",
                         {str(ws.workspace.db_path)!r}, "vectors", "stats", "--json"])
        assert code == 0, code
        got = json.loads(out.getvalue())
        assert got["total"] == 1 and got["models"][0]["dim"] == 2, got
    """)
    _python(code)
