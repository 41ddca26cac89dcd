"""Differential tests against the real peer, synapt 0.30.0: buckets written by its
`append_entry`, imported, must read back as its `read_entries` reads their concatenation.
And the importer's fast row builder must agree with the journal's own validator."""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import InvalidEntryError, JournalEntry, open_store
from recall_sqlite.demo import synapt_line
from recall_sqlite.journal.journal import Journal
from recall_sqlite.legacy.lines import Bad, Parsed, classify

synapt_journal = __import__("synapt.recall.journal", fromlist=["append_entry"])

from tests.conftest import make_workspace  # noqa: E402
from tests.helpers import full_dedup_tie, ties_unordered  # noqa: E402

BUCKETS = ("api", "proj", "server", "zz-old")  # "api" is a real checkout below
TIMES = [
    f"2026-01-0{d}T{h:02d}:00:00{frac}+00:00"
    for d in (1, 2)
    for h in (9, 10)
    for frac in ("", ".250000")
]
TEXT = st.sampled_from(["", "fix parser", "write tests", "caf\u00e9 \u2192 done", "\U0001f600"])

entries = st.builds(
    dict,
    timestamp=st.sampled_from(TIMES),
    session_id=st.sampled_from(["", "", "s1", "s2", "s3"]),
    branch=st.sampled_from(["", "main"]),
    focus=TEXT,
    done=st.lists(TEXT.filter(bool), max_size=2),
    next_steps=st.lists(TEXT.filter(bool), max_size=2),
    auto=st.booleans(),
    enriched=st.booleans(),
)


def _oracle(concatenated: Path) -> list[dict[str, Any]]:
    """synapt's read over the concatenation, with one documented difference folded in:
    synapt keeps identical entries without a session id as separate entries, while the
    store is content-addressed and holds identical content once (the first copy)."""
    got = synapt_journal.read_entries(concatenated, n=10_000)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for e in got:
        d = e.to_dict()
        key = json.dumps(d, sort_keys=True)
        if not e.session_id:
            if key in seen:
                continue
            seen.add(key)
        out.append(d)
    return out


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    pool=st.lists(entries, min_size=1, max_size=12),
    layout=st.lists(st.lists(st.integers(0, 11), max_size=10), min_size=1, max_size=4),
)
def test_import_reads_like_synapt_over_the_concatenated_buckets(
    pool: list[dict[str, Any]], layout: list[list[int]]
) -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        root = make_workspace(tmp)
        (root / "api" / ".git").mkdir(parents=True)
        files: list[Path] = []
        for name, picks in zip(BUCKETS, layout, strict=False):
            path = root / ".synapt" / "recall" / "worktrees" / name / "journal.jsonl"
            path.parent.mkdir(parents=True)
            path.touch()
            for i in picks:
                e = synapt_journal.JournalEntry(**pool[i % len(pool)])
                synapt_journal.append_entry(e, path=path)
            files.append(path)
        concatenated = tmp / "all.jsonl"
        concatenated.write_bytes(b"".join(f.read_bytes() for f in files))  # import order
        with open_store(root) as store:
            report = store.legacy.import_paths([root])
            assert report.ok
            assert report.to_dict()["quarantined"] == 0
            got = [
                e.synapt_dict() for e in store.journal.read(n=10_000, all_worktrees=True).entries
            ]
        _same_as_synapt(got, _oracle(concatenated), pool)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _same_as_synapt(got: list[dict[str, Any]], want: list[dict[str, Any]], pool: list[Any]) -> None:
    """Equal, but for the documented difference at one instant (journal/order.py): the
    order inside a run of equal instants, and which of two fully tied versions wins."""
    if full_dedup_tie(pool):
        assert len(got) == len(want)
        return
    assert ties_unordered(got) == ties_unordered(want)


# -- the fast row builder agrees with the journal -------------------------------------

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.text(max_size=6),
    st.lists(st.text(max_size=4), max_size=3),
    st.lists(st.integers(0, 2), max_size=2),
    st.sampled_from(
        [
            "2026-01-01T10:00:00+00:00",
            "2026-01-01T10:00:00.5Z",
            "2026-01-01 10:00",
            "2026-13-01T00:00:00Z",
            "nope",
            "2026-01-01T10:00:00.123456Z",
            "2026-01-01T10:00:00.123456+00:00",
            "2026-02-30T00:00:00Z",
            "2026-01-01T24:00:00+00:00",
            "2026-01-01T23:59:60Z",
            "2026-01-01T23:60:00Z",
            "0001-01-01T00:00:00Z",
            "2024-02-29T23:59:59.999999+00:00",
            "1969-12-31T23:59:59.5+00:00",
        ]
    ),
)
# synapt's own field names, asked of the real peer (not the package's copy, so that a field
# the package forgot would still be generated), and two it does not know.
keys = st.sampled_from(
    [f.name for f in dataclasses.fields(synapt_journal.JournalEntry)] + ["future", "x"]
)
objects = st.dictionaries(keys, values, max_size=8).map(
    lambda d: d if "timestamp" in d else {**d, "timestamp": "2026-02-03T04:05:06.7+00:00"}
)


_texts = st.text(
    alphabet=st.sampled_from(list('ab "\\/\n\x01\x7f\u00e9\u2192\U0001f600<')), max_size=5
)
_typed = {
    "timestamp": st.sampled_from(
        [
            "2026-01-01T10:00:00+00:00",
            "2026-01-01T10:00:00.250000Z",
            "2026-03-04T05:06:07.000001+00:00",
        ]
    ),
    **{k: _texts for k in ("session_id", "branch", "focus", "griptree", "agent_id")},
    **{
        k: st.lists(_texts, max_size=3)
        for k in ("done", "decisions", "next_steps", "files_modified", "git_log")
    },
    **{k: st.booleans() for k in ("auto", "enriched", "repair")},
}
# Well-typed synapt objects with any subset of the optional fields: the fast path's ground.
plain_objects = st.fixed_dictionaries(
    {"timestamp": _typed["timestamp"]},
    optional={k: v for k, v in _typed.items() if k != "timestamp"},
)


class _Ctx:
    workspace_uuid = "6f1c0e56-0000-4000-8000-000000000000"
    workspace_pk = 1


@settings(max_examples=400, deadline=None)
@given(obj=st.one_of(objects, plain_objects), ascii_escapes=st.booleans())
def test_fast_rows_match_the_journal(obj: dict[str, Any], ascii_escapes: bool) -> None:
    line = json.dumps(obj, ensure_ascii=ascii_escapes).encode()
    fate = classify(line, True)
    try:
        entry = JournalEntry.from_mapping(json.loads(line))
    except InvalidEntryError as exc:
        assert isinstance(fate, Bad) and fate.detail == str(exc)
        return
    assert isinstance(fate, Parsed)
    journal = Journal(_Ctx())  # type: ignore[arg-type]  # _row needs only the ids
    want = journal._row(entry, 7)
    assert fate.id == want[0]
    assert fate.row == want[4:]  # the row after (id, workspace, worktree, stored)


# -- the survey's no-parse path for synapt-shaped lines agrees with the parser ---------

# Plain entries with one special character put into one text field: every escape class
# json.dumps writes, and the defects the journal refuses (NUL, lone surrogates).
SPECIALS = [
    "\x00",
    "\ud800",
    "\udfff",
    "\U0001f600",
    "\x01",
    "\x1f",
    "\x7f",
    "\u00e9",
    "\u2192",
    "\ud7ff",
    "\ue000",
    "\ufffe",
    "\\",
    "/",
    '"',
    "\n",
    "\t",
    "\\u0041",
    "\\u0000",
    "u0000",
    "<",
]
TEXT_KEYS = ["session_id", "branch", "focus", "griptree", "agent_id", "done", "git_log"]
synapt_entries = st.builds(
    lambda ts, key, special, auto, enriched, repair: {
        "timestamp": ts,
        "session_id": "s1",
        "branch": "main",
        "focus": "fix the parser",
        "done": ["one", "two"],
        "decisions": ["caf\u00e9 \ue000"],
        "next_steps": ["next"],
        "files_modified": ["a.py"],
        "git_log": [],
        "auto": auto,
        "enriched": enriched,
        "griptree": "",
        "agent_id": "",
        "repair": repair,
        key: [f"x{special}y"] if key in ("done", "git_log") else f"x{special}y",
    },
    st.sampled_from(
        [
            "2026-01-01T10:00:00+00:00",
            "2026-01-01T10:00:00.250000Z",
            "2026-02-30T10:00:00+00:00",
            "2026-01-01T24:00:00Z",
        ]
    ),
    st.sampled_from(TEXT_KEYS),
    st.sampled_from(SPECIALS),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(
    e=synapt_entries,
    variant=st.sampled_from(
        ["synapt", "utf8", "compact", "sorted", "escaped-ascii", "upper-hex", "upper-hex-2"]
    ),
)
def test_survey_fast_path_agrees_with_the_parser(e: dict[str, Any], variant: str) -> None:

    import recall_sqlite.legacy.lines as lr

    kwargs: dict[str, Any] = {
        "utf8": {"ensure_ascii": False},
        "compact": {"separators": (",", ":")},
        "sorted": {"sort_keys": True},
    }.get(variant, {})
    from recall_sqlite.synapt_layout import FIELDS as SYNAPT_FIELDS

    e = {name: e[name] for name in SYNAPT_FIELDS}  # synapt's field order
    try:
        raw = json.dumps(e, **kwargs).encode("utf-8")
    except UnicodeEncodeError:
        return  # a lone surrogate cannot even be written as UTF-8 text
    canonical = json.dumps(e).encode()
    assert variant != "synapt" or raw == synapt_line(**e).encode()
    # same content, escapes json.dumps would not write
    if variant == "escaped-ascii":
        raw = raw.replace(b"parser", b"p\\u0061rser")
    elif variant == "upper-hex":
        raw = raw.replace(b"\\u00e9", b"\\u00E9")
    elif variant == "upper-hex-2":
        raw = raw.replace(b"\\ue000", b"\\uE000")
    fast = lr.inspect(raw, True)
    slow = lr.inspect(raw, True, written=False)
    slow_canonical = lr.inspect(canonical, True, written=False)
    assert fast == slow
    # one content, one key, whichever way it was serialised
    assert slow == slow_canonical


# Where synapt 0.30.0 leaves stores in a gr2 workspace with a checkout: the shared data
# directory, nested data directories at any depth, inside and outside the checkout.
PLACES = (".", "sub", "sub/deeper", "api", "api/src", ".synapse-old")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    pool=st.lists(entries, min_size=1, max_size=10),
    stores=st.lists(
        st.tuples(
            st.sampled_from(PLACES),
            st.sampled_from(BUCKETS),
            st.lists(st.integers(0, 9), max_size=8),
        ),
        min_size=1,
        max_size=5,
    ),
)
def test_overlapping_stores_anywhere_import_like_their_concatenation(
    pool: list[dict[str, Any]], stores: list[tuple[str, str, list[int]]]
) -> None:
    from recall_sqlite.legacy import make_plan

    tmp = Path(tempfile.mkdtemp())
    try:
        root = make_workspace(tmp)
        (root / "api" / ".git").mkdir(parents=True)
        for place, name, picks in stores:
            data = (
                root / ".synapse" / "recall"
                if place == ".synapse-old"
                else root / place / ".synapt" / "recall"
            )
            path = data / "worktrees" / name / "journal.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
            for i in picks:
                synapt_journal.append_entry(
                    synapt_journal.JournalEntry(**pool[i % len(pool)]), path=path
                )
        order = [s.path for s in make_plan(root).everything]  # the import's order
        concatenated = tmp / "all.jsonl"
        concatenated.write_bytes(b"".join(p.read_bytes() for p in order))
        with open_store(root) as store:
            report = store.legacy.import_paths()
            assert report.ok, report.to_dict()
            got = [
                e.synapt_dict() for e in store.journal.read(n=10_000, all_worktrees=True).entries
            ]
        _same_as_synapt(got, _oracle(concatenated), pool)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
