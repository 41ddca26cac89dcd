"""journal.forget removes an entry for real: no byte of its text in any file of the store,
derived state right, vectors/provenance/quarantine copies gone, and a re-import does not
bring it back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import apsw
import pytest

from recall_sqlite import InvalidEntryError, UnknownEntryError, derived, open_store
from recall_sqlite.store import context_of
from tests.conftest import make_workspace
from tests.helpers import CLI

SECRET = "ghp_SECRETtokenVALUE1234567890abcdefXYZ"


def _store_bytes(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


def test_no_byte_of_a_forgotten_entry_is_left_in_any_file(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as store:
        for i in range(200):  # enough pages that the secret's page is not the only one
            store.journal.append(
                {
                    "timestamp": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
                    "session_id": f"s{i % 7}",
                    "focus": f"ordinary {i}",
                }
            )
        eid = store.journal.append(
            {
                "timestamp": "2026-02-01T00:00:00Z",
                "session_id": "leak",
                "focus": f"pasted {SECRET}",
                "done": [f"used {SECRET}"],
                "extra": {"note": SECRET},
            }
        ).id
        data = context_of(store).db.path.parent
        assert any(SECRET.encode() in b for b in _store_bytes(data).values())
        report = store.journal.forget(eid)
        assert report.entries == (eid,)
        assert report.wal_emptied
        with context_of(store).db.read() as conn:
            assert derived.check(conn) == []
        assert store.journal.get(eid) is None
    for name, content in _store_bytes(data).items():
        assert SECRET.encode() not in content, name


def test_forget_by_session_and_the_report(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as store:
        ids = [
            store.journal.append(
                {"timestamp": f"2026-01-0{i + 1}T00:00:00Z", "session_id": "s", "focus": f"v{i}"}
            ).id
            for i in range(3)
        ]
        keep = store.journal.append(
            {"timestamp": "2026-01-09T00:00:00Z", "session_id": "t", "focus": "kept"}
        ).id
        summary = store.summaries.add("about s", kind="day", covers=ids[:1])
        report = store.journal.forget(session_id="s")
        assert sorted(report.entries) == sorted(ids)
        assert report.sessions == ("s",)
        assert report.summary_links == 1 and report.summaries == (summary.id,)
        r = store.journal.read(10)
        assert [e.id for e in r.entries] == [keep] and r.total == 1
        # Forgetting it again says it was forgotten already (issue 32: a pulled forget
        # leaves the same state), and an id this workspace never held is still refused.
        again = store.journal.forget(ids[0])
        assert again.entries == () and again.already == (ids[0],)
        assert again.to_dict()["already_forgotten"] == [ids[0]]
        with pytest.raises(UnknownEntryError):
            store.journal.forget("0" * 32)
        with pytest.raises(UnknownEntryError):
            store.journal.forget(session_id="nope")


def test_forget_a_string_is_one_id_not_its_characters(tmp_path: Path) -> None:
    with open_store(make_workspace(tmp_path)) as store:
        eid = store.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "x"}).id
        assert store.journal.forget(eid).entries == (eid,)


def test_a_reimport_does_not_bring_a_forgotten_entry_back(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    bucket = root / ".synapt" / "recall" / "worktrees" / "proj"
    bucket.mkdir(parents=True)
    lines = [
        {
            "timestamp": f"2026-01-0{i + 1}T00:00:00Z",
            "session_id": f"s{i}",
            "focus": f"line {i}" + (f" {SECRET}" if i == 1 else ""),
        }
        for i in range(3)
    ]
    journal = bucket / "journal.jsonl"
    journal.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with open_store(root) as store:
        store.legacy.import_paths([root])
        leaked = [e for e in store.journal.read(10).entries if SECRET in e.focus]
        assert leaked
        report = store.journal.forget(leaked[0].id or "")
        assert report.provenance == 1
        with context_of(store).db.read() as conn:
            assert derived.check(conn) == []
            assert conn.execute("SELECT reason, length(raw) FROM quarantine").fetchall() == [
                ("forgotten", 0)
            ]
        # the file changes (rewritten), so the importer reads every line again
        journal.write_text("".join(json.dumps(x) + "\n" for x in [*lines, lines[0]]))
        store.legacy.import_paths([root])
        assert not [e for e in store.journal.read(10).entries if SECRET in e.focus]
        assert store.doctor().ok
    for name, content in _store_bytes(root / ".synapt" / "recall").items():
        if name.startswith("recall-sqlite.db"):
            assert SECRET.encode() not in content, name


def test_cli_forget(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as store:
        eid = store.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "x"}).id
    run = [*CLI, "--cwd", str(root), "journal", "forget"]
    res = subprocess.run([*run, eid, "--json"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["entries"] == [eid]
    # Again: forgotten already, said as such (issue 32), not "no entry" (exit 2).
    res = subprocess.run([*run, eid], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("No stored entry version to forget\nalready forgotten on this")
    assert eid in res.stdout.splitlines()[1]
    res = subprocess.run([*run, "0" * 32], capture_output=True, text=True)
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    res = subprocess.run(run, capture_output=True, text=True)
    assert res.returncode == 2
    # Once more with --scrub-sources (the files may still hold it): nothing left to forget
    # in the store, said as such.
    res = subprocess.run([*run, eid, "--scrub-sources"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("No stored entry version to forget\n"), res.stdout
    with open_store(root) as store:
        other = store.journal.append({"timestamp": "2026-01-02T00:00:00Z", "focus": "y"}).id
    res = subprocess.run([*run, other], capture_output=True, text=True)
    assert res.stdout.startswith(f"Forgot 1 entry version:\n  {other}\n"), res.stdout
    # The sessions the versions belonged to, named with a noun that agrees with them.
    with open_store(root) as store:
        ids = [
            store.journal.append({"timestamp": f"2026-01-0{d}T00:00:00Z", "focus": "z",
                                  "session_id": sid}).id
            for d, sid in ((3, "s1"), (4, "s2"), (5, "s3"))
        ]  # fmt: skip
    res = subprocess.run([*run, ids[0]], capture_output=True, text=True)
    assert res.stdout.startswith("Forgot 1 entry version (session s1):\n"), res.stdout
    res = subprocess.run([*run, *ids[1:]], capture_output=True, text=True)
    assert res.stdout.startswith("Forgot 2 entry versions (sessions s2, s3):\n"), res.stdout


def test_a_shell_delete_is_tombstoned_too(tmp_path: Path) -> None:
    with open_store(make_workspace(tmp_path)) as store:
        store.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "x"})
        shell = apsw.Connection(str(context_of(store).db.path))
        shell.execute("DELETE FROM journal_entries")
        assert shell.execute("SELECT count(*) FROM journal_tombstones").fetchall() == [(1,)]
        shell.close()


def test_a_forgotten_version_appended_again_is_refused_in_plain_words(tmp_path: Path) -> None:
    """The schema's trigger refuses it (journal.py reads its RAISE message by name); the
    caller gets the journal's own typed error naming the id, not a constraint failure."""
    entry = {"timestamp": "2026-01-01T00:00:00Z", "focus": "gone for good"}
    with open_store(make_workspace(tmp_path)) as store:
        eid = store.journal.append(entry).id
        store.journal.forget([eid])
        with pytest.raises(InvalidEntryError) as refused:
            store.journal.append(entry)
        assert str(refused.value).startswith(f"entry {eid} was forgotten (journal forget):")
        assert store.journal.read().total == 0
