"""Property: for any entries and any query made of words drawn from them, search returns
exactly the shown versions in scope that contain every word (a brute-force oracle over the
rows), and its total and elsewhere are the oracle's counts, as Journal.read counts."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite import open_store
from recall_sqlite.store import context_of
from tests.conftest import make_workspace

VOCAB = ("alpha", "beta", "gamma", "delta", "gate", "gateway", "zeta", "omega")
SEPARATORS = (" ", "\n", " - ", '"', "\\", ", ", "/", "_")


def _text(words: list[str], seps: list[str], upper: list[bool]) -> str:
    out = []
    for w, sep, up in zip(words, seps, upper, strict=False):
        out.append((w.upper() if up else w) + sep)
    return "".join(out).strip()


texts = st.builds(
    _text,
    st.lists(st.sampled_from(VOCAB), max_size=4),
    st.lists(st.sampled_from(SEPARATORS), min_size=4, max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),
)

entries = st.lists(
    st.fixed_dictionaries(
        {
            "desk": st.booleans(),
            "session_id": st.sampled_from(["", "s1", "s2", "s3"]),
            "branch": st.sampled_from(["main", "feat", ""]),
            "auto": st.booleans(),
            "day": st.integers(1, 5),
            "focus": texts,
            "done": st.lists(texts, max_size=2),
            "decisions": st.lists(texts, max_size=1),
            "next_steps": st.lists(texts, max_size=1),
            "files_modified": st.lists(texts, max_size=1),
        }
    ),
    min_size=1,
    max_size=12,
)


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _matches(row_text: str, words: list[tuple[str, bool]]) -> bool:
    toks = set(_tokens(row_text))
    return all(any(t.startswith(w) for t in toks) if prefix else w in toks for w, prefix in words)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    rows=entries,
    data=st.data(),
    scope=st.fixed_dictionaries(
        {
            "all_worktrees": st.booleans(),
            "branch": st.sampled_from([None, "main", "feat", ""]),
            "meaningful": st.booleans(),
        }
    ),
)
def test_search_equals_the_oracle(
    rows: list[dict[str, Any]], data: st.DataObject, scope: dict[str, Any]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = make_workspace(Path(tmp))
        desk = root / "desk"
        (desk / ".git").mkdir(parents=True)
        with open_store(root) as s, open_store(desk) as d:
            for i, r in enumerate(rows):
                fields = {k: v for k, v in r.items() if k not in ("desk", "day")}
                fields["timestamp"] = f"2026-01-0{r['day']}T00:00:{i:02d}Z"
                (d if r["desk"] else s).journal.append(fields, allow_collapsed=True)
            present = sorted({t for r in rows for t in _tokens(json.dumps(r))} & set(VOCAB))
            pool = present or list(VOCAB)
            picked = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
            prefixes = data.draw(
                st.lists(st.booleans(), min_size=len(picked), max_size=len(picked))
            )
            words = [(w[:3] if p else w, p) for w, p in zip(picked, prefixes, strict=True)]
            query = " ".join(w + ("*" if p else "") for w, p in words)

            got = s.journal.search(query, 1000, **scope)

            wt = context_of(s).worktree_pk
            all_wt, branch = scope["all_worktrees"], scope["branch"]
            flag = "head_ws" if all_wt else "head_wt"
            # The oracle: a scan of the rows with the head flags reads walk.
            want: set[str] = set()
            other_wt = other_br = 0
            for rid, w, b, focus, *lists in context_of(s).db.query(
                "SELECT lower(hex(id)), worktree_id, branch, focus, done, decisions,"
                f" next_steps, files_modified FROM journal_entries WHERE {flag} = 1"
                + (" AND meaningful = 1" if scope["meaningful"] else "")
            ):
                text = " ".join([focus] + [" ".join(json.loads(x)) for x in lists])
                if not _matches(text, words):
                    continue
                here = all_wt or w == wt
                on_branch = branch is None or b == branch
                if here and on_branch:
                    want.add(rid)
                elif here:
                    other_br += 1
                elif on_branch:
                    other_wt += 1
            assert {e.id for e in got.entries} == want, query
            assert got.total == len(want)
            assert (got.elsewhere.other_worktrees, got.elsewhere.other_branches) == (
                other_wt,
                other_br,
            )
            if branch is None:  # then nothing falls between the scope and elsewhere
                everywhere = sum(
                    1
                    for rid, *cols in context_of(s).db.query(
                        "SELECT lower(hex(id)), focus, done, decisions, next_steps, files_modified"
                        f" FROM journal_entries WHERE {flag} = 1"
                        + (" AND meaningful = 1" if scope["meaningful"] else "")
                    )
                    if _matches(
                        " ".join([cols[0]] + [" ".join(json.loads(x)) for x in cols[1:]]), words
                    )
                )
                assert got.total + got.elsewhere.total == everywhere
            # best first and newest first among ties, never a version reads hide
            scores = [h.score for h in got.hits]
            assert scores == sorted(scores, reverse=True)
