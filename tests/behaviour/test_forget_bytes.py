"""Forget leaves no byte (issue 19, point 1): after a forget, neither the database file nor its
-wal nor its -shm holds the text, in its stored form or as the full-text index's token, in
every way the text can have reached the store: a fresh store, many appends around it, a
legacy import (the batch path), a re-homing import, searches that read it, a summary that
quotes it (forget lists the summary; `summary remove` then takes its text too)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from recall_sqlite import Store, derived, open_store
from recall_sqlite.store import context_of
from tests.conftest import make_workspace

# One FTS token (letters and digits only), so the index holds it whole: its lowercase form.
SECRET = "Zq7SecretTokenXwVb3KlmN0pQrStUv9"
NEEDLES = (SECRET.encode(), SECRET.lower().encode(), SECRET.lower()[-14:].encode())


def _leaks(store: Store) -> list[str]:
    """The store's files (db, -wal, -shm) that hold any form of the secret."""
    base = store.workspace.db_path
    found = []
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{base}{suffix}")
        if path.exists():
            data = path.read_bytes()
            found += [f"{path.name}: {n!r}" for n in NEEDLES if n in data]
    return found


def _noise(store: Store, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        store.journal.append(
            {
                "timestamp": f"2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z",
                "session_id": f"s{i % 11}",
                "focus": f"ordinary work {i} on the gateway",
                "done": [f"step {i}", "another step " * (i % 5)],
            }
        )


def _secret_entry(ts: str = "2026-02-01T00:00:00Z") -> dict[str, object]:
    return {
        "timestamp": ts,
        "session_id": "leak",
        "focus": f"pasted {SECRET} by mistake",
        "done": [f"used {SECRET}"],
        "next_steps": [f"rotate {SECRET}"],
        "extra": {"note": SECRET},
    }


def _jline(entry: dict[str, object]) -> str:  # a line of a synapt bucket
    return json.dumps(entry)


def _bucket(root: Path, name: str, lines: list[str]) -> None:
    path = root / ".synapt" / "recall" / "worktrees" / name / "journal.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")


def fresh(root: Path) -> tuple[Store, list[str]]:
    s = open_store(root)
    return s, [s.journal.append(_secret_entry()).id or ""]


def many_appends(root: Path) -> tuple[Store, list[str]]:
    s = open_store(root)
    _noise(s, 1500)
    eid = s.journal.append(_secret_entry()).id or ""
    _noise(s, 1500, start=1500)
    return s, [eid]


def imported(root: Path) -> tuple[Store, list[str]]:
    lines = [
        _jline({"timestamp": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z", "focus": f"n{i}"})
        for i in range(800)
    ]
    lines.insert(400, _jline(_secret_entry()))
    _bucket(root, "proj", lines)
    s = open_store(root)
    assert s.legacy.import_paths([root]).ok
    return s, [e.id or "" for e in s.journal.versions() if SECRET in e.focus]


def rehomed(root: Path) -> tuple[Store, list[str]]:
    (root / "desk" / ".git").mkdir(parents=True)
    (root / "desk" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    lines = [
        _jline({"timestamp": f"2026-01-01T01:00:{i:02d}Z", "focus": f"d{i}"}) for i in range(50)
    ]
    _bucket(root, "alpha", [*lines, _jline(_secret_entry())])
    s = open_store(root)
    assert s.legacy.import_paths(mapping={"alpha": "."}).ok
    assert s.legacy.import_paths(mapping={"alpha": "desk"}).ok  # moved: rows rewritten
    return s, [e.id or "" for e in s.journal.versions(worktree="desk") if SECRET in e.focus]


def searched(root: Path) -> tuple[Store, list[str]]:
    s, ids = many_appends(root)
    assert s.journal.search(SECRET).total == 1
    assert s.journal.search("pasted mistake", all_worktrees=True).total == 1
    return s, ids


def versions_of_a_session(root: Path) -> tuple[Store, list[str]]:
    s = open_store(root)
    _noise(s, 300)
    ids = [
        s.journal.append(_secret_entry(f"2026-02-0{i + 1}T00:00:00Z")).id or "" for i in range(3)
    ]
    return s, ids


SCENARIOS: dict[str, Callable[[Path], tuple[Store, list[str]]]] = {
    "fresh": fresh,
    "after many appends": many_appends,
    "after an import": imported,
    "after a re-homing import": rehomed,
    "with search used": searched,
    "several versions": versions_of_a_session,
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_no_byte_of_a_forgotten_entry_is_left(tmp_path: Path, name: str) -> None:
    store, ids = SCENARIOS[name](make_workspace(tmp_path))
    try:
        assert ids and all(ids)
        assert _leaks(store), "the secret never reached the files: nothing is tested"
        report = store.journal.forget(ids)
        assert sorted(report.entries) == sorted(ids) and report.wal_emptied
        assert _leaks(store) == []
        assert store.journal.search(SECRET, all_worktrees=True).total == 0
        assert store.journal.search("gateway").total >= 0  # the index still answers
        with context_of(store).db.read() as conn:
            assert derived.check(conn) == []
        assert store.doctor().ok, store.doctor().to_dict()
    finally:
        store.close()
    with open_store(store.workspace.root, read_only=True) as again:
        assert _leaks(again) == []


def test_a_summary_that_quotes_it_is_named_and_its_removal_leaves_no_byte(
    tmp_path: Path,
) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        _noise(s, 200)
        eid = s.journal.append(_secret_entry()).id or ""
        quoting = s.summaries.add(f"summary: the token {SECRET} leaked", kind="day", covers=[eid])
        s.summaries.add("the next day", kind="day")
        assert s.summaries.search(SECRET, include_superseded=True).total == 1
        report = s.journal.forget(eid)
        assert report.summaries == (quoting.id,)
        assert _leaks(s)  # the summary's own text: forget names it, does not touch it
        s.summaries.remove(quoting.id)
        assert _leaks(s) == []
        assert s.summaries.search(SECRET, include_superseded=True).total == 0
        assert s.doctor().ok
