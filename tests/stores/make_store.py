"""Build a frozen store of the current schema version for the migration tests.

Run once per released schema version, with the code of that version, and commit the
result: `python tests/stores/make_store.py tests/stores/v1`. The directory gets
`store.db` (checkpointed, rollback journal mode, so one file holds everything) and
`expected.json`: the workspace id and what the reads of that version answered. Later
versions must migrate the file and give the same answers (tests/unit/migrations/test_migrations.py).

Only public API is used, so the script keeps running on later versions too (a fixture of
the current version can be rebuilt by hand to compare).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from recall_sqlite import ALL_BRANCHES, open_store
from recall_sqlite.store import context_of

SYNAPT_LINE = (
    '{{"timestamp": "{ts}", "session_id": "{sid}", "branch": "main", "focus": "{focus}", '
    '"done": [], "decisions": [], "next_steps": ["{step}"], "files_modified": [], '
    '"git_log": [], "auto": false, "enriched": false, "griptree": "", "agent_id": "", '
    '"repair": false}}\n'
)


def legacy_bucket() -> str:
    """The synapt bucket "proj" the store imports: five lines, the first again (a duplicate)
    and a line that is not JSON (quarantined)."""
    lines = [
        SYNAPT_LINE.format(
            ts=f"2026-02-0{d}T10:00:00+00:00",
            sid=f"legacy{d}",
            focus=f"legacy {d}",
            step=f"legacy step {d}",
        )
        for d in range(1, 6)
    ]
    return "".join(lines) + lines[0] + "{not json\n"


def _entries() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(24):
        out.append(
            {
                "timestamp": f"2026-03-{1 + i // 4:02d}T{8 + i % 4:02d}:00:00+00:00",
                "session_id": f"s{i % 9}",
                "branch": ("main", "feat", "")[i % 3],
                "focus": f"focus {i} websocket gateway" if i % 5 else "",
                "done": [f"done {i}"] if i % 2 else [],
                "decisions": [f"decision {i}"] if i % 4 == 1 else [],
                "next_steps": [f"next {i}", "shared step"] if i % 3 else [],
                "files_modified": [f"src/f{i}.py"],
                "auto": i % 7 == 0,
                "enriched": i % 11 == 0,
            }
        )
    out.append(
        {
            "timestamp": "2026-03-09T10:00:00Z",
            "focus": "no session, extra field",
            "legacy_field": {"nested": [1, 2]},
        }
    )
    return out


def answers(root: Path, db: Path) -> dict[str, Any]:
    """What the reads of the store answer: compared before and after migration."""
    got: dict[str, Any] = {}
    for wt in (".", "desk"):
        with open_store(root / wt if wt != "." else root, db_path=db) as s:
            j = s.journal
            got[wt] = {
                "read": j.read(50).to_dict(),
                "read_all": j.read(50, all_worktrees=True).to_dict(),
                "read_main": j.read(3, branch="main").to_dict(),
                "meaningful": j.read(50, meaningful=True, all_worktrees=True).to_dict(),
                "pending": j.pending_next_steps(all_worktrees=True).to_dict(),
            }
    with open_store(root, db_path=db) as s:
        got["summaries"] = [x.to_dict() for x in s.summaries.list(ALL_BRANCHES, limit=50)]
        got["stale"] = [x.to_dict() for x in s.summaries.stale()]
        got["cursor"] = s.cursors.unread("hook", "main").to_dict()
        got["cursors"] = [c.to_dict() for c in s.cursors.list()]
        got["vectors"] = s.vectors.stats().to_dict()
        for name, hidden in (("vector_search", False), ("vector_search_hidden", True)):
            hits = s.vectors.search([0.3, -0.2, 0.9], k=5, model="m3", include_hidden=hidden)
            got[name] = [(h.owner.to_dict(), round(h.score, 6)) for h in hits.hits]
        got["accounting"] = [
            list(r)
            for r in context_of(s).db.query(
                "SELECT bucket, worktree, lines, imported, duplicates, quarantined, complete"
                " FROM import_accounting ORDER BY bucket"
            )
        ]
    return got


def build(target: Path) -> None:
    import numpy as np

    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        (root / ".grip").mkdir(parents=True)
        (root / "desk" / ".git").mkdir(parents=True)
        (root / "desk" / ".git" / "HEAD").write_text("ref: refs/heads/feat\n")
        db = Path(tmp) / "store.db"
        entries = _entries()
        with open_store(root, db_path=db) as s:
            ids = [s.journal.append(e).id for e in entries[:14]]
            s.journal.write(
                focus="written by hand",
                done=["done 3"],
                next_steps=["next 99"],
                session_id="s3",
                timestamp="2026-03-10T09:00:00+00:00",
                branch="main",
            )
            first = s.summaries.add(
                "what happened on main", branch="main", kind="day", covers=ids[:5], author="model-a"
            )
            s.summaries.add("newer day on main", branch="main", kind="day", covers=ids[5:8])
            s.summaries.add("workspace wide", branch=None, covers=ids[:2])
            s.cursors.advance("hook", "main", to=3)
            s.cursors.advance("other", "feat", to=ids[7])
            from recall_sqlite.vectors import Owner

            rng = np.random.default_rng(7)
            s.vectors.put_many(
                [Owner.entry(i) for i in ids], rng.normal(size=(len(ids), 3)), model="m3"
            )
            s.vectors.put(Owner.summary(first.id), rng.normal(size=3), model="m3")
        with open_store(root / "desk", db_path=db) as s:
            s.journal.append_many(entries[14:])
        bucket = root / ".synapt" / "recall" / "worktrees" / "proj"
        bucket.mkdir(parents=True)
        (bucket / "journal.jsonl").write_text(legacy_bucket())
        with open_store(root, db_path=db) as s:
            s.legacy.import_paths([root])
        expected = {"workspace_id": _workspace_id(root), "answers": answers(root, db)}
        # One self-contained file: no -wal beside it.
        import apsw

        conn = apsw.Connection(str(db))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("VACUUM")
        conn.close()
        shutil.copyfile(db, target / "store.db")
        os.chmod(target / "store.db", 0o644)
    (target / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


def _workspace_id(root: Path) -> str:
    data = json.loads((root / ".synapt" / "recall" / "workspace.json").read_text())
    return str(data["workspace_id"])


if __name__ == "__main__":
    build(Path(sys.argv[1]))
