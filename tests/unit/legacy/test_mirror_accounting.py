"""The store knows its mirror lines: what the adapter (or the store) appends to a synapt
bucket is accounted for as the store's own, so survey, import, verify and doctor call the
file imported; a line stock synapt appends to the same file afterwards is still new."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import open_store
from recall_sqlite import synapt_layout as layout
from tests.helpers import add_worktree, new_repo, run_cli, stock_write, user_env


def _activated(cwd: Path, home: Path, focus: str) -> None:
    res = run_cli("synapt", "recall", "journal", "--write", "--focus", focus, cwd=cwd,
                  env=user_env(home))  # fmt: skip
    assert res.returncode == 0, res.stderr


def _healthy(repo: Path, home: Path) -> dict[str, Any]:
    env = user_env(home)
    doctor = run_cli("doctor", cwd=repo, env=env)
    verify = run_cli("verify", cwd=repo, env=env)
    survey = json.loads(run_cli("survey", "--json", cwd=repo, env=env).stdout)
    return {
        "doctor": (doctor.returncode, doctor.stdout),
        "verify": (verify.returncode, verify.stdout),
        "pending": survey["not_imported"]["lines"],
        "states": {b["import_state"] for b in survey["buckets"]},
    }


def test_adapter_writes_are_the_stores_own_and_stock_lines_still_count(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "myproj")
    (repo / "server").mkdir()
    feat = add_worktree(repo, tmp_path / "myproj-feat")
    stock_write(repo, home, "root work")
    stock_write(repo / "server", home, "server work")
    stock_write(feat, home, "feat work")
    assert run_cli("import", cwd=repo, env=user_env(home)).returncode == 0
    _activated(feat, home, "feat activated")
    _activated(repo / "server", home, "root activated")
    h = _healthy(repo, home)
    assert h["doctor"][0] == 0 and h["verify"][0] == 0, h
    assert h["pending"] == 0 and h["states"] == {"imported"}
    again = json.loads(run_cli("import", "--json", cwd=repo, env=user_env(home)).stdout)
    assert again["lines_total"] == 0 and again["duplicates"] == 0
    # Stock synapt appends to the mirror bucket: that line is new, and said so.
    stock_write(repo, home, "stock after the mirror")
    h = _healthy(repo, home)
    assert h["verify"][0] == 1 and "grown" in h["verify"][1]
    assert h["doctor"][0] == 1 and "partly imported" in h["doctor"][1]
    assert h["pending"] == 1
    got = json.loads(run_cli("import", "--json", cwd=repo, env=user_env(home)).stdout)
    assert (got["imported"], got["duplicates"]) == (1, 0)  # only the stock line is read
    h = _healthy(repo, home)
    assert h["doctor"][0] == 0 and h["verify"][0] == 0, h


# -- the rule, on any sequence of writers ---------------------------------------------------

ops = st.lists(st.sampled_from(["own", "stock", "import", "own-new-file"]), min_size=1, max_size=10)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_own_lines_are_accounted_and_stock_lines_are_not(steps: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        (root / ".grip").mkdir(parents=True)
        bucket = layout.bucket_file(layout.data_dir(root), "ws")
        fresh = layout.bucket_file(layout.data_dir(root), "other")
        with open_store(root) as s:
            stock_since_import = 0
            for i, op in enumerate(steps):
                record = {"timestamp": f"2026-01-01T00:00:{i:02d}+00:00", "focus": f"{op} {i}"}
                if op == "stock":
                    layout.append_lines(bucket, [layout.line(record)])
                    stock_since_import += 1
                elif op == "import":
                    s.legacy.import_paths()
                    stock_since_import = 0
                else:
                    s.journal.append(record)
                    target = bucket if op == "own" else fresh
                    s.legacy.append_own(target, [layout.line(record)])
                report = s.legacy.verify()
                clean = not report.problems and all(c.status == "ok" for c in report.sources)
                assert clean == (stock_since_import == 0), (steps, report.to_dict())
                plan = s.legacy.plan()
                states = s.legacy.states(plan)
                whole = all(states.get(p.key) == "imported" for p in plan.everything)
                assert whole == (stock_since_import == 0), states
            s.legacy.import_paths()
            deep = s.legacy.verify(deep=True)
            assert all(c.status == "ok" for c in deep.sources) and not deep.problems
            # Every line of every file is one entry of the store.
            lines = sum(len(p.read_text().splitlines()) for p in (bucket, fresh) if p.exists())
            assert s.journal.read(0, all_worktrees=True).total == lines
