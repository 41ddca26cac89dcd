"""The survey's counts are what the import's own line classifier says of every line.

The survey answers a copy of a line it has seen from what it kept of the first (a packed
int per content) and inspects a synapt-shaped line without a JSON parse; these tests hold
both to the slow, obvious count: classify every line, key it by its content address."""

from __future__ import annotations

import importlib
import json
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from recall_sqlite.legacy import survey
from recall_sqlite.legacy.lines import Bad, classify

synapt_journal = __import__("synapt.recall.journal", fromlist=["append_entry"])
# the module (the package exports its function under the same name)
survey_module = importlib.import_module("recall_sqlite.legacy.survey")

entries = st.builds(
    dict,
    timestamp=st.sampled_from(
        [
            "2026-01-01T09:00:00+00:00",
            "2026-01-01T09:00:00.250000+00:00",
            "2026-01-02T23:59:59+00:00",
            "1969-12-31T23:59:59.999999+00:00",  # before the epoch: a negative instant
        ]
    ),
    session_id=st.sampled_from(["", "s1", "s2", "s\u00e9"]),
    branch=st.sampled_from(["", "main", "fix/a", "caf\u00e9"]),
    focus=st.sampled_from(["", "fix parser", "tab\there", "\U0001f600"]),
    auto=st.booleans(),
    enriched=st.booleans(),
)


def _synapt_lines(pool: list[dict[str, Any]], tmp: Path) -> list[bytes]:
    """Each entry's line as synapt's append_entry writes it."""
    path = tmp / "pool.jsonl"
    for e in pool:
        synapt_journal.append_entry(synapt_journal.JournalEntry(**e), path=path)
    return path.read_bytes().splitlines()


def _variant(line: bytes, how: int) -> bytes:
    """The same content in bytes synapt would not write, or a line that is no entry."""
    if how == 0:
        return line
    obj = json.loads(line)
    if how == 1:
        return json.dumps(obj, sort_keys=True).encode()
    if how == 2:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
    if how == 3:
        return json.dumps({**obj, "model": "m-1"}).encode()  # a field synapt does not know
    if how == 4:
        return b"  " + line + b" \r"  # padded: stripped before anything else
    return [b"{", b"", b"[1]", b'{"focus": "no timestamp"}'][how - 5]


def _expected(files: list[bytes]) -> dict[str, Any]:
    contents: set[bytes] = set()
    versions: dict[str, set[bytes]] = {}
    buckets_of: dict[str, set[int]] = {}
    per_bucket = []
    for index, data in enumerate(files):
        ends = data.endswith(b"\n")
        lines = data.split(b"\n")[:-1] if ends else data.split(b"\n") if data else []
        b: dict[str, Any] = {
            "lines": len(lines),
            "valid": 0,
            "duplicates": 0,
            "malformed": Counter[str](),
            "branches": Counter[str](),
            "auto": 0,
            "enriched": 0,
            "no_session": 0,
            "times": [],
            "sessions": set(),
        }
        for i, raw in enumerate(lines):
            fate = classify(raw, ends or i < len(lines) - 1)
            if isinstance(fate, Bad):
                b["malformed"][fate.reason] += 1
                continue
            b["valid"] += 1
            b["duplicates"] += fate.id in contents
            contents.add(fate.id)
            b["branches"][fate.branch] += 1
            b["auto"] += fate.auto
            b["enriched"] += fate.enriched
            b["times"].append(fate.ts_us)
            if fate.session_id:
                b["sessions"].add(fate.session_id)
                versions.setdefault(fate.session_id, set()).add(fate.id)
                buckets_of.setdefault(fate.session_id, set()).add(index)
            else:
                b["no_session"] += 1
        per_bucket.append(b)
    return {
        "buckets": per_bucket,
        "rows_to_create": len(contents),
        "sessions": len(versions),
        "several": sum(1 for v in buckets_of.values() if len(v) > 1),
        "differing": sum(1 for v in versions.values() if len(v) > 1),
    }


@settings(max_examples=80, deadline=None)
@given(
    pool=st.lists(entries, min_size=1, max_size=6),
    picks=st.lists(
        st.lists(st.tuples(st.integers(0, 5), st.integers(0, 9)), max_size=12),
        min_size=1,
        max_size=3,
    ),
    newline_at_end=st.lists(st.booleans(), min_size=3, max_size=3),
    odd_cache=st.sampled_from([1, 2, 100_000]),
)
def test_survey_counts_every_line_as_the_classifier_does(
    pool: list[dict[str, Any]],
    picks: list[list[tuple[int, int]]],
    newline_at_end: list[bool],
    odd_cache: int,
) -> None:
    tmp = Path(tempfile.mkdtemp())
    saved = survey_module._ODD_CACHE_MAX
    try:
        canonical = _synapt_lines(pool, tmp)
        # how 0 (synapt's own bytes) twice as often as each other form
        files = [
            b"\n".join(_variant(canonical[i % len(canonical)], max(0, how - 1)) for i, how in b)
            + (b"\n" if end and b else b"")
            for b, end in zip(picks, newline_at_end, strict=False)
        ]
        paths = []
        for n, data in enumerate(files):
            paths.append(tmp / f"b{n}.jsonl")
            paths[-1].write_bytes(data)
        want = _expected(files)
        survey_module._ODD_CACHE_MAX = odd_cache  # 1 and 2 keep clearing the odd-line cache
        got = survey(paths)
    finally:
        survey_module._ODD_CACHE_MAX = saved
        shutil.rmtree(tmp)
    assert len(got.buckets) == len(files)
    for s, w in zip(got.buckets, want["buckets"], strict=True):
        assert s.lines == w["lines"]
        assert s.valid == w["valid"]
        assert s.duplicates == w["duplicates"]
        assert dict(s.malformed) == dict(w["malformed"])
        assert dict(s.branches) == dict(w["branches"])
        assert (s.auto, s.enriched, s.no_session) == (w["auto"], w["enriched"], w["no_session"])
        assert s.sessions == len(w["sessions"])
        times = w["times"]
        assert (s.first_us, s.last_us) == ((min(times), max(times)) if times else (None, None))
    assert got.rows_to_create == want["rows_to_create"]
    assert got.sessions == want["sessions"]
    assert got.sessions_in_several_buckets == want["several"]
    assert got.sessions_with_differing_versions == want["differing"]
    assert got.quarantined == sum(sum(w["malformed"].values()) for w in want["buckets"])
