"""Shared fixtures: every test runs with a private HOME and none of the identity
environment variables of the machine it runs on; the workspaces, repositories, stores and
the activated synapt adapter the tests stand in (helpers.py holds the plain functions)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from recall_sqlite import Store, open_store
from tests.helpers import new_repo, synapt_activated

IDENTITY_ENV = (
    "SYNAPT_RECALL_ROOT",
    "GRIPSPACE_ROOT",
    "SYNAPT_RECALL_WORKTREE",
    "RECALL_SQLITE_DB",
)


@pytest.fixture(autouse=True)
def _isolated_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in IDENTITY_ENV:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    # A test that forgets --cwd must not mint a store inside the checkout it runs from.
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


def make_workspace(base: Path, name: str = "proj") -> Path:
    """A gr2-style workspace (a `.grip/` marker) at base/name."""
    root = base / name
    (root / ".grip").mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture
def workspace_root(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


@pytest.fixture
def store(workspace_root: Path) -> Iterator[Store]:
    s = open_store(workspace_root)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def other(store: Store, tmp_path: Path) -> Iterator[Store]:
    """A second workspace in the same database file as `store`."""
    s = open_store(make_workspace(tmp_path, "other"), db_path=store.workspace.db_path)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository (branch main, one empty commit) at tmp_path/repo, with the
    subdirectory server/api a user may run an agent from."""
    root = new_repo(tmp_path / "repo")
    (root / "server" / "api").mkdir(parents=True)
    return root


@pytest.fixture
def activated() -> Iterator[None]:
    """synapt 0.30.0 with the adapter activated (its journal on the store) for one test."""
    with synapt_activated():
        yield


def entry(ts: str = "2026-01-01T00:00:00+00:00", **fields: object) -> dict[str, object]:
    return {"timestamp": ts, **fields}


__all__ = ["make_workspace", "entry", "os"]
