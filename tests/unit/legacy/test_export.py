"""`export`: a synapt bucket that synapt 0.30.0 itself reads with the store's answers
(differential, hypothesis over sessions with several versions, auto stubs, equal instants
in several spellings, entries without a session), NDJSON with every field, and the file
rules (no overwrite without --force, atomic, 0600, `-o -`)."""

from __future__ import annotations

import json
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import Store, open_store
from recall_sqlite.demo import synapt_line
from recall_sqlite.errors import InvalidInputError
from recall_sqlite.synapt_layout import FIELDS as SYNAPT_FIELDS
from tests.conftest import make_workspace
from tests.helpers import run_cli

journal = pytest.importorskip("synapt.recall.journal")

# Equal instants in every spelling synapt and the store both order by instant (Z, +00:00,
# another offset, naive = UTC, minute precision), and a few distinct ones.
TIMES = [
    "2026-03-01T10:00:00+00:00",
    "2026-03-01T10:00:00Z",
    "2026-03-01T12:00:00+02:00",
    "2026-03-01T10:00:00",
    "2026-03-01T10:00",
    "2026-03-01T10:00:00.000001+00:00",
    "2026-03-01T09:59:59+00:00",
    "2026-03-02T08:00:00-05:00",
    "2026-02-28T23:00:00Z",
]
STEPS = ["write tests", "ship it", "review the API", "  ship it  ", "Write Tests"]

entries = st.lists(
    st.fixed_dictionaries(
        {
            "timestamp": st.sampled_from(TIMES),
            "session_id": st.sampled_from(["", "", "s1", "s2", "s3", "s4", "s5"]),
            "focus": st.sampled_from(["", "", "schema", "cli"]),
            "done": st.lists(st.sampled_from(STEPS), max_size=2),
            "decisions": st.lists(st.sampled_from(["keep JSONL"]), max_size=1),
            "next_steps": st.lists(st.sampled_from(STEPS), max_size=3),
            "files_modified": st.lists(st.sampled_from(["a.py", "b.py"]), max_size=1),
            "auto": st.booleans(),
            "enriched": st.booleans(),
            "branch": st.sampled_from(["main", "feat", ""]),
            "worktree": st.sampled_from([".", "a"]),
        }
    ),
    min_size=1,
    max_size=25,
)


def two_worktrees(base: Path) -> Path:
    """A gr2 workspace whose root is one worktree and `a/` (a checkout) another."""
    root = make_workspace(base)
    (root / "a" / ".git").mkdir(parents=True)
    (root / "a" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    with open_store(root / "a"):
        pass
    return root


def synapt_answers(path: Path) -> dict[str, Any]:
    """synapt 0.30.0's own reads of a bucket file."""

    def d(e: Any) -> dict[str, Any] | None:
        return None if e is None else {k: getattr(e, k) for k in SYNAPT_FIELDS}

    return {
        **{f"read{n}": [d(e) for e in journal.read_entries(path, n=n)] for n in (1, 3, 5, 50)},
        "latest": d(journal.read_latest(path)),
        "latest_meaningful": d(journal.read_latest(path, meaningful=True)),
        "pending": journal.pending_next_steps(path),
    }


def store_answers(store: Store, *, all_worktrees: bool = False) -> dict[str, Any]:
    def d(e: Any) -> dict[str, Any] | None:
        return None if e is None else e.synapt_dict()

    j = store.journal
    return {
        **{
            f"read{n}": [d(e) for e in j.read(n, all_worktrees=all_worktrees).entries]
            for n in (1, 3, 5, 50)
        },
        "latest": d(j.latest(all_worktrees=all_worktrees).entry),
        "latest_meaningful": d(j.latest(True, all_worktrees=all_worktrees).entry),
        "pending": j.pending_next_steps(all_worktrees=all_worktrees).pending,
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries)
def test_synapt_reads_an_export_as_the_store_reads_its_scope(rows: list[dict[str, Any]]) -> None:
    # Fewer than 50 sessions, so latest(meaningful) looks at the same window in both (the
    # documented difference is asserted below); identical entries without a session are
    # stored once and so exported once: synapt then sees one too.
    with tempfile.TemporaryDirectory() as tmp:
        root = two_worktrees(Path(tmp))
        with open_store(root) as store:
            for r in rows:
                fields = {k: v for k, v in r.items() if k != "worktree"}
                if not (
                    fields["focus"]
                    or fields["done"]
                    or fields["decisions"]
                    or fields["next_steps"]
                    or fields["files_modified"]
                ):
                    fields["focus"] = "x"
                store.journal.append(fields, worktree=r["worktree"])
            for wt in (".", "a"):
                out = Path(tmp) / f"export-{wt}.jsonl"
                report = store.legacy.export(out, worktree=wt)
                assert report.lines == len(store.journal.versions(worktree=wt))
                with open_store(root if wt == "." else root / "a") as there:
                    assert synapt_answers(out) == store_answers(there), wt
            every = Path(tmp) / "export-all.jsonl"
            store.legacy.export(every, all_worktrees=True)
            assert synapt_answers(every) == store_answers(store, all_worktrees=True)


def test_ties_at_one_instant_read_in_synapt_as_in_the_store(tmp_path: Path) -> None:
    """At one instant the store orders sessions, and picks among fully tied versions, by
    content (journal/order.py); synapt by file order: the export writes the file in the
    order that makes synapt answer as the store, however the versions arrived."""
    root = two_worktrees(tmp_path)
    t = "2026-03-01T10:00:00Z"
    with open_store(root) as store:
        for sid in ("s4", "s3", "s2", "s1"):
            store.journal.append({"timestamp": t, "session_id": sid, "focus": sid})
        # two versions of s5 tied in everything the dedup looks at
        store.journal.append({"timestamp": t, "session_id": "s5", "focus": "b", "done": ["x"]})
        store.journal.append({"timestamp": t, "session_id": "s5", "focus": "a", "done": ["y"]})
        store.journal.append({"timestamp": t, "focus": "no session"})
        store.legacy.export(tmp_path / "out.jsonl")
        assert synapt_answers(tmp_path / "out.jsonl") == store_answers(store)
        shown = [e.focus for e in store.journal.read(10).entries]
    assert shown[-1] == "no session" and len(shown) == 6
    lines = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(lines) == 7  # every version, the hidden one too


def test_each_line_is_what_synapt_append_entry_writes(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    fields = {
        "timestamp": "2026-03-01T10:00:00+00:00",
        "session_id": "s1",
        "branch": "main",
        "focus": "caf\u00e9 \u2192 t\u00e9",
        "done": ['a "quoted" item'],
        "next_steps": ["\U0001f600"],
        "auto": True,
        "enriched": True,
        "agent_id": "x",
    }
    with open_store(root) as store:
        store.journal.append(fields)
        store.legacy.export(tmp_path / "out.jsonl")
    want = tmp_path / "synapt.jsonl"
    journal.append_entry(journal.JournalEntry(**fields), path=want)
    assert (tmp_path / "out.jsonl").read_bytes() == want.read_bytes()
    assert want.read_text().rstrip("\n") == synapt_line(**fields)


def test_every_version_in_insertion_order(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as store:
        rich = store.journal.append(
            {
                "timestamp": "2026-03-01T11:00:00Z",
                "session_id": "s1",
                "focus": "rich",
                "done": ["x"],
                "auto": True,
                "enriched": True,
            }
        ).id
        stub = store.journal.append(
            {"timestamp": "2026-03-01T10:00:00Z", "session_id": "s1", "focus": "stub", "auto": True}
        ).id
        store.legacy.export(tmp_path / "out.jsonl")
        got = [json.loads(x)["focus"] for x in (tmp_path / "out.jsonl").read_text().splitlines()]
        assert got == ["rich", "stub"]
        ids = [json.loads(x)["id"] for x in _ndjson(store, tmp_path / "n.jsonl")]
        assert ids == [rich, stub]


def test_latest_meaningful_beyond_synapts_window_is_the_documented_difference(
    tmp_path: Path,
) -> None:
    """docs/journal.md's deliberate differences: latest(meaningful) searches the whole
    scope, synapt the newest 50 sessions. The export keeps every version; synapt answers as
    it always did."""
    root = make_workspace(tmp_path)
    with open_store(root) as store:
        store.journal.append(
            {
                "timestamp": "2026-01-01T00:00:00Z",
                "session_id": "old",
                "focus": "the last real entry",
                "next_steps": ["resume"],
            }
        )
        for i in range(50):
            store.journal.append(
                {
                    "timestamp": f"2026-02-01T00:{i:02d}:00Z",
                    "session_id": f"stub{i}",
                    "focus": "auto",
                    "auto": True,
                }
            )
        store.legacy.export(tmp_path / "out.jsonl")
        assert store.journal.latest(True).entry.session_id == "old"
    assert journal.read_latest(tmp_path / "out.jsonl", meaningful=True) is None
    assert len(journal.read_entries(tmp_path / "out.jsonl", n=100)) == 51


def _ndjson(store: Store, path: Path, **kw: Any) -> list[str]:
    store.legacy.export(path, format="ndjson", **kw)
    return path.read_text(encoding="utf-8").splitlines()


def test_ndjson_has_every_field_and_the_store_identity(tmp_path: Path) -> None:
    root = two_worktrees(tmp_path)
    with open_store(root) as store:
        a = store.journal.append(
            {
                "timestamp": "2026-03-01T12:00:00+02:00",
                "session_id": "s1",
                "branch": "main",
                "focus": "caf\u00e9",
                "legacy_x": [1],
            }
        )
        store.journal.append({"timestamp": "2026-03-02T00:00:00Z", "focus": "in a"}, worktree="a")
        mine = [json.loads(x) for x in _ndjson(store, tmp_path / "mine.jsonl")]
        every = [json.loads(x) for x in _ndjson(store, tmp_path / "all.jsonl", all_worktrees=True)]
        report = store.legacy.export(tmp_path / "r.jsonl", format="ndjson", all_worktrees=True)
    assert "caf\u00e9" in (tmp_path / "mine.jsonl").read_text(encoding="utf-8")  # UTF-8 kept
    assert len(mine) == 1
    e = mine[0]
    assert e["id"] == a.id and e["worktree"] == "." and e["workspace_id"] == store.workspace.id
    assert e["timestamp"] == "2026-03-01T12:00:00+02:00"
    assert e["timestamp_utc"] == "2026-03-01T10:00:00.000000+00:00"
    assert set(SYNAPT_FIELDS) <= set(e) and e["extra"] == {"legacy_x": [1]}
    assert [x["worktree"] for x in every] == [".", "a"]
    assert report.worktrees == [".", "a"] and report.lines == 2


def test_fields_synapt_does_not_know_are_counted_not_written(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as store:
        store.journal.append({"timestamp": "2026-03-01T10:00:00Z", "focus": "f", "legacy_x": 1})
        report = store.legacy.export(tmp_path / "out.jsonl")
    assert report.extra_dropped == 1
    assert list(json.loads((tmp_path / "out.jsonl").read_text())) == list(SYNAPT_FIELDS)


def test_files_are_private_atomic_and_never_clobbered(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    out = tmp_path / "out.jsonl"
    out.write_text("precious\n")
    with open_store(root) as store:
        store.journal.append({"timestamp": "2026-03-01T10:00:00Z", "focus": "f"})
        with pytest.raises(InvalidInputError, match="--force"):
            store.legacy.export(out)
        assert out.read_text() == "precious\n"
        store.legacy.export(out, force=True)
        assert json.loads(out.read_text())["focus"] == "f"
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
        store.legacy.export(tmp_path / "new.jsonl")
        assert stat.S_IMODE((tmp_path / "new.jsonl").stat().st_mode) == 0o600
        with pytest.raises(InvalidInputError, match="unknown worktree 'nope'"):
            store.legacy.export(tmp_path / "x.jsonl", worktree="nope")
        with pytest.raises(InvalidInputError, match="format"):
            store.legacy.export(tmp_path / "x.jsonl", format="csv")  # type: ignore[arg-type]
    # no temp file left behind, nothing written for the refused calls
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.jsonl", "out.jsonl", "proj"]


def test_cli_export(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as store:
        store.journal.append({"timestamp": "2026-03-01T10:00:00Z", "session_id": "s", "focus": "f"})
    r = run_cli("export", "--format", "synapt", "-o", "-", cwd=root)
    assert r.returncode == 0, r.stderr
    assert (
        r.stdout == synapt_line(timestamp="2026-03-01T10:00:00Z", session_id="s", focus="f") + "\n"
    )
    assert "Wrote 1 line(s)" in r.stderr  # the report stays out of the data
    r = run_cli("export", "-o", "out.jsonl", "--json", cwd=root)
    assert r.returncode == 0 and json.loads(r.stdout)["lines"] == 1
    again = run_cli("export", "-o", "out.jsonl", cwd=root)
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "--force" in again.stderr
    assert "Traceback" not in again.stderr
    assert run_cli("export", "-o", "out.jsonl", "--force", cwd=root).returncode == 0
    bad = run_cli("export", "--worktree", "nope", "-o", "x", cwd=root)
    assert bad.returncode == 2 and "unknown worktree" in bad.stderr
    both = run_cli("export", "--worktree", ".", "--all-worktrees", "-o", "x", cwd=root)
    assert both.returncode == 2
    nd = run_cli("export", "--format", "ndjson", "--all-worktrees", "-o", "-", cwd=root)
    assert nd.returncode == 0 and json.loads(nd.stdout)["worktree"] == "."
    nowhere = run_cli("export", "-o", "-", cwd=tmp_path)  # no store here: one line, exit 1
    assert nowhere.returncode == 1 and nowhere.stderr.count("\n") == 1
