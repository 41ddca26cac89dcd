"""A smoke run of every benchmark suite at tiny sizes: the harness runs end to end against
the real peers and reports numbers. No timing is asserted (machines are noisy)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO


@pytest.mark.slow
def test_every_suite_runs_at_tiny_sizes(tmp_path: Path) -> None:
    pytest.importorskip("synapt")
    pytest.importorskip("numpy")
    out = tmp_path / "results.json"
    res = subprocess.run(
        [sys.executable, str(REPO / "bench" / "run.py"), "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    report = json.loads(out.read_text())
    suites = {r["suite"] for r in report["rows"]}
    assert suites == {
        "journal",
        "summaries+cursors",
        "vectors",
        "legacy",
        "synapt",
        "search",
        "integrity",
        "sync",
        "agents",
    }
    for r in report["rows"]:
        if r.get("unit") == "info":  # descriptive rows (e.g. the BLAS kernel), not measurements
            continue
        assert isinstance(r["ours"], (int, float)) and math.isfinite(r["ours"]) and r["ours"] > 0
        for key in ("limit", "peer"):
            if r.get(key) is not None:
                assert r[key] > 0
    assert "| suite | case |" in res.stdout


@pytest.mark.slow
def test_search_suite_runs_in_quick_mode(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    res = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "run.py"),
            "--quick",
            "--only",
            "search",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    rows = json.loads(out.read_text())["rows"]
    assert {r["suite"] for r in rows} == {"search"} and len(rows) >= 6
    for r in rows:
        assert isinstance(r["ours"], (int, float)) and math.isfinite(r["ours"]) and r["ours"] > 0


def test_fusion_evaluation_prefers_the_default() -> None:
    """The labelled set's verdict (bench/search_eval.py, deterministic): hybrid with the
    default fusion beats either ranking alone and is not worse than the alternative."""
    pytest.importorskip("numpy")
    sys.path.insert(0, str(REPO / "bench"))
    import search_eval

    got = search_eval.evaluate()
    rrf = got["hybrid rrf"]
    assert rrf[1] > got["text only"][1] and rrf[1] > got["vectors only"][1]
    assert rrf[1] >= got["hybrid combsum"][1]


@pytest.mark.slow
def test_the_statement_journal_count_runs_and_counts(tmp_path: Path) -> None:
    """bench/statement_journal.py at a small size (two chunks' worth of lines: the second
    move writes to a statement journal the pages the first filled): both sides reported,
    and the import moves its staged rows as often as the same work by hand, once per
    transaction (not once per source)."""
    res = subprocess.run(
        [sys.executable, str(REPO / "bench" / "statement_journal.py"), "--lines", "40000"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    totals = dict(
        line.split(": ", 1) for line in res.stdout.splitlines() if line.startswith("the ")
    )
    assert set(totals) == {"the import", "the same work by hand"}
    ours = float(totals["the import"].split()[0])
    assert ours > 0 and math.isfinite(float(totals["the same work by hand"].split()[0]))
    moves = [
        line.split(" run(s)")[0].split()[-1]
        for line in res.stdout.splitlines()
        if "INSERT INTO main.journal_entries" in line
    ]
    assert len(moves) == 2 and moves[0] == moves[1] == "2", res.stdout
