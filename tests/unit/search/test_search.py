"""Full-text search: scope and counts like reads, the shown version only, deletes, rows
written by the shell and by the bulk path, any typed text as a query, the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import given
from hypothesis import strategies as st

from recall_sqlite import RecallError, Store, open_store
from recall_sqlite.search.index import check_index, rebuild_index
from recall_sqlite.search.query import parse_query
from recall_sqlite.store import context_of
from tests.conftest import entry, make_workspace
from tests.helpers import CLI, REPO


def _two_worktrees(tmp_path: Path) -> tuple[Path, Path]:
    root = make_workspace(tmp_path)
    desk = root / "desk"
    (desk / ".git").mkdir(parents=True)
    (desk / ".git" / "HEAD").write_text("ref: refs/heads/feat\n")
    return root, desk


def _fill(root: Path, desk: Path) -> None:
    with open_store(root) as s:
        s.journal.append_many(
            [
                entry(
                    "2026-01-01T10:00:00Z",
                    session_id="a",
                    branch="main",
                    focus="websocket gateway design",
                    decisions=["one gateway per region"],
                ),
                entry(
                    "2026-01-02T10:00:00Z",
                    session_id="b",
                    branch="feat",
                    focus="billing",
                    done=["moved the gateway config"],
                ),
                entry(
                    "2026-01-03T10:00:00Z",
                    session_id="c",
                    branch="main",
                    auto=True,
                    focus="gateway noise",
                ),
            ]
        )
    with open_store(desk) as s:
        s.journal.append_many(
            [
                entry(
                    "2026-01-04T10:00:00Z",
                    session_id="d",
                    branch="main",
                    focus="the gateway next door",
                ),
                entry(
                    "2026-01-05T10:00:00Z",
                    session_id="e",
                    branch="feat",
                    focus="gateway on feat in desk",
                ),
            ]
        )


def _ids(result: Any) -> list[str]:
    return [e.session_id for e in result.entries]


def test_scope_total_and_elsewhere_like_read(tmp_path: Path) -> None:
    root, desk = _two_worktrees(tmp_path)
    _fill(root, desk)
    with open_store(root) as s:
        r = s.journal.search("gateway")
        assert sorted(_ids(r)) == ["a", "b", "c"]
        assert (r.total, r.elsewhere.other_worktrees, r.elsewhere.other_branches) == (3, 2, 0)
        r = s.journal.search("gateway", branch="main")
        assert sorted(_ids(r)) == ["a", "c"]
        # other worktrees on main: d; other branches here: b; e (desk, feat) is neither,
        # exactly as a read counts
        assert (r.total, r.elsewhere.other_worktrees, r.elsewhere.other_branches) == (2, 1, 1)
        r = s.journal.search("gateway", all_worktrees=True)
        assert sorted(_ids(r)) == ["a", "b", "c", "d", "e"]
        assert (r.total, r.elsewhere.total) == (5, 0)
        r = s.journal.search("gateway", all_worktrees=True, branch="feat")
        assert sorted(_ids(r)) == ["b", "e"]
        assert (r.total, r.elsewhere.other_worktrees, r.elsewhere.other_branches) == (2, 0, 3)
        r = s.journal.search("gateway", meaningful=True, all_worktrees=True)
        assert "c" not in _ids(r) and r.total == 4
        assert r.scope == s.journal.read(all_worktrees=True, meaningful=True).scope
    with open_store(desk) as s:
        r = s.journal.search("gateway")
        assert sorted(_ids(r)) == ["d", "e"]
        assert (r.total, r.elsewhere.other_worktrees) == (2, 3)


def test_counts_equal_reads_when_every_entry_matches(tmp_path: Path) -> None:
    root, desk = _two_worktrees(tmp_path)
    _fill(root, desk)
    for where in (root, desk):
        with open_store(where) as s:
            for kw in (
                {},
                {"branch": "main"},
                {"branch": "feat"},
                {"all_worktrees": True},
                {"all_worktrees": True, "branch": "main"},
                {"meaningful": True},
                {"meaningful": True, "branch": "feat", "all_worktrees": True},
            ):
                read = s.journal.read(100, **kw)  # type: ignore[arg-type]
                found = s.journal.search("gateway", 100, **kw)  # type: ignore[arg-type]
                assert (found.scope, found.total, found.elsewhere) == (
                    read.scope,
                    read.total,
                    read.elsewhere,
                ), kw
                assert sorted(e.id or "" for e in found.entries) == sorted(
                    e.id or "" for e in read.entries
                ), kw


def test_only_the_shown_version_of_a_session(store: Store) -> None:
    store.journal.append(
        entry("2026-01-01T10:00:00Z", session_id="s", auto=True, focus="gateway stub")
    )
    rich = store.journal.append(
        entry(
            "2026-01-01T09:00:00Z", session_id="s", focus="gateway decided", decisions=["keep it"]
        )
    )
    r = store.journal.search("gateway")
    assert [e.id for e in r.entries] == [rich.id] and r.total == 1
    # the hidden version's own words find nothing either
    assert store.journal.search("stub").total == 0


def test_best_first_weights_and_ties_newest_first(store: Store) -> None:
    store.journal.append(
        entry("2026-01-03T00:00:00Z", session_id="late", files_modified=["src/gateway.py"])
    )
    store.journal.append(entry("2026-01-01T00:00:00Z", session_id="focus", focus="gateway"))
    store.journal.append(entry("2026-01-02T00:00:00Z", session_id="tie1", done=["gateway"]))
    store.journal.append(entry("2026-01-04T00:00:00Z", session_id="tie2", done=["gateway"]))
    hits = store.journal.search("gateway").hits
    assert [h.entry.session_id for h in hits] == ["focus", "tie2", "tie1", "late"]
    assert hits[0].field == "focus" and hits[-1].field == "files_modified"
    assert hits[0].score > hits[1].score == hits[2].score > hits[3].score


def test_hit_names_fields_and_highlights(store: Store) -> None:
    store.journal.append(
        entry(
            session_id="s",
            focus="the websocket gateway",
            decisions=["gateway per region\nwith retry"],
            next_steps=["unrelated"],
        )
    )
    hit = store.journal.search("gateway").hits[0]
    assert hit.field == "focus" and hit.fields == ("focus", "decisions")
    assert hit.snippet.marked("[", "]") == "the websocket [gateway]"
    hit = store.journal.search("retry").hits[0]
    assert hit.field == "decisions"
    assert hit.snippet.marked("[", "]") == "gateway per region / with [retry]"
    d = store.journal.search("retry").to_dict()["entries"][0]
    assert d["snippet"] == "gateway per region / with **retry**" and d["field"] == "decisions"


def test_json_escapes_inside_items_do_not_glue_words(store: Store) -> None:
    store.journal.append(entry(session_id="s", done=['line one\nsecond "quoted" C:\\new']))
    for word in ("second", "quoted", "new"):
        assert store.journal.search(word).total == 1, word


def test_delete_removes_the_hit(store: Store) -> None:
    """A DELETE at the sqlite3 prompt keeps the index right (forget runs the same DELETE)."""
    keep = store.journal.append(entry(session_id="a", focus="gateway kept"))
    gone = store.journal.append(
        entry("2026-01-02T00:00:00Z", session_id="b", focus="gateway forgotten")
    )
    assert store.journal.search("gateway").total == 2
    with context_of(store).db.write() as conn:
        conn.execute("DELETE FROM journal_entries WHERE id = ?", (bytes.fromhex(gone.id),))
        assert check_index(conn).ok
    assert [e.id for e in store.journal.search("gateway").entries] == [keep.id]
    assert store.journal.search("forgotten").total == 0


def test_forget_removes_the_hit_and_promotes_the_next_version(store: Store) -> None:
    store.journal.append(entry(session_id="a", focus="gateway stub", auto=True))
    rich = store.journal.append(
        entry("2026-01-02T00:00:00Z", session_id="a", focus="gateway secret token")
    )
    other = store.journal.append(entry(session_id="b", focus="gateway other"))
    assert store.journal.search("secret").total == 1
    store.journal.forget(rich.id)
    assert store.journal.search("secret").total == 0
    got = store.journal.search("gateway")
    assert got.total == 2 and {e.focus for e in got.entries} == {"gateway stub", "gateway other"}
    store.journal.forget(session_id="b")
    assert [e.id for e in store.journal.search("gateway").entries] != [other.id]
    assert store.journal.search("other").total == 0
    with context_of(store).db.read() as conn:
        assert check_index(conn).ok


def test_bulk_and_import_rows_are_indexed(store: Store) -> None:
    rows = [
        entry(
            f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
            session_id=f"s{i}",
            focus=f"bulk {i} gateway",
        )
        for i in range(100)
    ]
    store.journal.append_many(rows)  # journal_bulk.py: no per-row head trigger
    assert store.journal.search("gateway", 5).total == 100
    assert store.journal.search("bulk 42").entries[0].session_id == "s42"


def test_summaries_search_scope_superseded_and_delete(store: Store) -> None:
    first = store.summaries.add("the gateway plan, first take", branch="main")
    second = store.summaries.add("the gateway plan, final", branch="main")
    wide = store.summaries.add("workspace gateway overview", branch=None)
    store.summaries.add("feature work on gateway", branch="feat", kind="day")
    r = store.summaries.search("gateway")
    assert r.total == 3 and first.id not in [s.id for s in r.summaries]
    assert r.elsewhere.total == 0
    r = store.summaries.search("gateway", branch="main")
    assert [s.id for s in r.summaries] == [second.id] and r.elsewhere.other_branches == 2
    assert [s.id for s in store.summaries.search("gateway", branch=None).summaries] == [wide.id]
    r = store.summaries.search("gateway", branch="main", include_superseded=True)
    assert [s.id for s in r.summaries] == [second.id, first.id]  # ties: newest first
    assert [s.id for s in store.summaries.search("gateway", kind="day").summaries] != []
    hit = store.summaries.search("final").hits[0]
    assert hit.snippet.marked("[", "]").endswith("[final]")
    store.summaries.remove(second.id)
    r = store.summaries.search("gateway", branch="main")
    assert [s.id for s in r.summaries] == [first.id]  # current again
    assert store.summaries.search("final").total == 0


def test_shell_written_rows_are_found_and_recipe_runs(tmp_path: Path) -> None:
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("no sqlite3 shell on this machine")
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append(
            entry(session_id="a", focus="websocket gateway decided", decisions=["sticky sessions"])
        )
        s.summaries.add("gateway summary", branch="main")
        db = s.workspace.db_path
    insert = (
        "INSERT INTO journal_entries (id, workspace_id, worktree_id, session_id, timestamp,"
        " ts_us, focus, decisions, stored_us)"
        " SELECT randomblob(16), workspace_id, worktree_id, 'shell', '2026-02-01T00:00:00Z',"
        " 1769904000000000, 'typed at the prompt', '[\"a gateway from the shell\"]', 0"
        " FROM journal_entries LIMIT 1;"
        " INSERT INTO summaries (workspace_id, branch, kind, text, created_at, created_us)"
        " SELECT id, NULL, 'note', 'shell gateway summary', '2026-02-01', 1 FROM workspaces;"
    )
    res = subprocess.run([shell, str(db), insert], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    with open_store(root) as s:
        assert "shell" in _ids(s.journal.search("gateway"))
        assert s.summaries.search("shell gateway").total == 1
    # The recipe docs/search.md shows, verbatim.
    doc = REPO / "docs" / "search.md"
    (line,) = [x for x in doc.read_text(encoding="utf-8").splitlines() if "JOIN journal j" in x]
    recipe = line[line.index('"') + 1 : line.rindex('"')]
    res = subprocess.run([shell, str(db), recipe], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 2 and "[gateway]" in lines[0] and "sticky" not in lines[1]
    assert "|.|" in lines[0]


def test_check_and_rebuild(store: Store) -> None:
    store.journal.append(entry(session_id="a", focus="gateway"))
    store.summaries.add("gateway")
    with context_of(store).db.write() as conn:
        assert check_index(conn).ok
        conn.execute("INSERT INTO journal_fts (journal_fts) VALUES ('delete-all')")
        conn.execute("INSERT INTO summaries_fts (rowid, text) VALUES (999, 'ghost')")
        bad = check_index(conn)
        assert (bad.missing_entries, bad.stale_summaries) == (1, 1) and not bad.ok
        rebuild_index(conn)
        assert check_index(conn).ok
        conn.execute("INSERT INTO journal_fts (journal_fts) VALUES ('integrity-check')")
    assert store.journal.search("gateway").total == 1
    assert store.summaries.search("ghost").total == 0


# -- any text is a query --------------------------------------------------------------------

CORPUS = [
    '"',
    '""',
    '"""',
    '"unclosed phrase',
    "AND",
    "OR",
    "NOT",
    "a AND b",
    "a OR b",
    "NOT x",
    "-x",
    "--",
    "x -y",
    "*",
    "**",
    "x*",
    "*x",
    "x**",
    '"a b"*',
    "NEAR(",
    "NEAR(a b, 3)",
    "NEAR",
    "(",
    ")",
    "((a))",
    "a)",
    "(a",
    "focus:gateway",
    "{focus done}: x",
    "^x",
    "+x",
    "'; DROP TABLE journal_entries; --",
    "1=1 OR '1'='1'",
    "%",
    "_",
    "\\",
    '\\"',
    "x'y",
    "ünïcödé",
    "日本語のテキスト",
    "emoji 🚀 gateway",
    "\u200b",
    "\x00",
    "\ud800 x",
    "a\x00b",
    "\t\n\r",
    " " * 10,
    "",
    "x" * 10_000,
    " ".join(["w"] * 500),
    "gateway:",
    ":",
    ",",
    ".",
    "a.b",
    "a-b",
    "a/b",
    '"NEAR(a b)"',
    "rank",
    "bm25(",
    "MATCH",
    "journal_fts",
    "col:",
    '"a" "b" AND',
    "AND AND",
    "OR OR OR",
    "x NOT",
    "* AND *",
]


def test_any_text_is_a_query(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append(entry(session_id="a", focus="gateway AND or NOT near x"))
        s.summaries.add("gateway note")
        for q in CORPUS:
            r = s.journal.search(q)
            assert r.total >= 0 and json.dumps(r.to_dict())
            s.summaries.search(q)
        # FTS keywords are words, not operators
        assert s.journal.search("AND OR NOT").total == 1
        assert s.journal.search("NEAR(x").total == 1
        assert s.journal.search("-x gateway").total == 1
        assert s.journal.search("gate*").total == 1
        assert s.journal.search('"gateway and"').total == 1
        assert s.journal.search('"and gateway"').total == 0  # a phrase keeps its order
        assert s.journal.search("'; DROP TABLE journal_entries; --").total == 0
    cli = [*CLI, "--cwd", str(root)]
    # argv cannot hold NUL; bytes that are not UTF-8 reach Python as lone surrogates
    args: list[str | bytes] = [q.replace("\x00", " ") for q in CORPUS[:30] if "\ud800" not in q]
    for arg in [*args, "'; DROP TABLE x; --", "NEAR(", b"\xff\xfe gateway"]:
        res = subprocess.run(
            [*cli, "journal", "search", "--json", "--", arg], capture_output=True, text=True
        )
        assert res.returncode == 0 and "Traceback" not in res.stderr, (arg, res.stderr)
    # without `--`, a leading dash is argparse's usage error: one message, no traceback
    res = subprocess.run([*cli, "journal", "search", "-x"], capture_output=True, text=True)
    assert res.returncode == 2 and "Traceback" not in res.stderr


def test_parse_query_keeps_phrases_and_prefixes() -> None:
    p = parse_query('websocket "sticky session" gate* -x NEAR( "open')
    assert [str(t) for t in p.terms] == [
        "websocket",
        '"sticky session"',
        "gate*",
        "-x",
        "NEAR",
        "open",
    ]
    assert p.match == '"websocket" "sticky session" "gate"* "-x" "NEAR" "open"'
    assert parse_query("*** ( ) ;;").terms == ()
    many = parse_query(" ".join(f"w{i}" for i in range(100)))
    assert len(many.terms) == 32 and many.truncated


def test_bad_arguments_are_typed_errors(store: Store) -> None:
    from recall_sqlite import InvalidInputError

    for kwargs in ({"n": -1}, {"n": True}, {"branch": 3}, {"vector": [1.0]}, {"model": "m"}):
        with pytest.raises(InvalidInputError):
            store.journal.search("x", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        store.journal.search(b"bytes")  # type: ignore[arg-type]
    assert store.journal.search("x", 0).hits == []


def test_cli_text_ends_with_the_read_scope_line(tmp_path: Path) -> None:
    root, desk = _two_worktrees(tmp_path)
    _fill(root, desk)
    cli = [*CLI, "--cwd", str(root)]
    out = subprocess.run(
        [*cli, "journal", "search", "gateway", "--branch", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    read = subprocess.run(
        [*cli, "journal", "read", "--branch", "main"], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == read.strip().splitlines()[-1].replace(
        "in scope", "in scope"
    )
    assert "**gateway**" in out
    data = json.loads(
        subprocess.run(
            [*cli, "journal", "search", "gateway", "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert set(data) >= {"entries", "scope", "total", "elsewhere"}
    first = data["entries"][0]
    assert {"id", "worktree", "score", "snippet", "focus", "done", "session_id"} <= set(first)
    out = subprocess.run(
        [*cli, "summary", "search", "nothing"], capture_output=True, text=True, check=True
    ).stdout
    assert "0 of 0 in scope" in out


def test_reads_do_not_import_numpy_and_search_does_not_either(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append(entry(session_id="a", focus="gateway"))
    code = (
        "import sys; from recall_sqlite import open_store;"
        f"s = open_store({str(root)!r}); s.journal.read(); s.journal.search('gateway');"
        "print('numpy' in sys.modules)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "False"


def test_read_only_store_can_search(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append(entry(session_id="a", focus="gateway"))
    with open_store(root, read_only=True) as s:
        assert s.journal.search("gateway").total == 1


def test_fts_tables_are_plain_sqlite(store: Store) -> None:
    conn = apsw.Connection(str(store.workspace.db_path), flags=apsw.SQLITE_OPEN_READONLY)
    names = {n for (n,) in conn.execute("SELECT name FROM sqlite_schema WHERE name LIKE '%fts%'")}
    conn.close()
    assert {"journal_fts", "summaries_fts", "journal_fts_content"} <= names


# -- hybrid ---------------------------------------------------------------------------------


def test_hybrid_fuses_text_and_vector_rankings(store: Store) -> None:
    pytest.importorskip("numpy")
    a = store.journal.append(
        entry("2026-01-01T00:00:00Z", session_id="a", focus="websocket gateway")
    )
    b = store.journal.append(
        entry("2026-01-02T00:00:00Z", session_id="b", focus="socket proxy in front of the api")
    )
    c = store.journal.append(
        entry("2026-01-03T00:00:00Z", session_id="c", focus="billing", auto=True)
    )
    from recall_sqlite.vectors import Owner

    store.vectors.put_many(
        [Owner.entry(a.id), Owner.entry(b.id), Owner.entry(c.id)],
        [[1.0, 0.1, 0.0], [0.9, 0.0, 0.1], [0.0, 0.0, 1.0]],
        model="m",
    )
    text = store.journal.search("gateway")
    assert [e.id for e in text.entries] == [a.id]
    for fusion in ("rrf", "combsum"):
        r = store.journal.search("gateway", vector=[1.0, 0.0, 0.0], model="m", fusion=fusion)  # type: ignore[arg-type]
        assert r.mode == "hybrid" and r.fusion == fusion
        ids = [e.id for e in r.entries]
        assert ids[:2] == [a.id, b.id] and set(ids) == {a.id, b.id, c.id}
        assert r.hits[0].text_rank == 1 and r.hits[0].vector_rank == 1
        assert r.hits[1].text_rank is None and r.hits[1].field is None
        assert r.hits[1].snippet.text.startswith("socket proxy")
        assert (r.total, r.elsewhere.total) == (text.total, text.elsewhere.total)
    # the scope filters apply to the vector side too
    r = store.journal.search("gateway", vector=[0.0, 0.0, 1.0], model="m", meaningful=True)
    assert c.id not in [e.id for e in r.entries]
    # no words at all: the vector ranking alone
    r = store.journal.search("***", vector=[0.0, 0.0, 1.0], model="m")
    assert [e.id for e in r.entries][0] == c.id and r.total == 0
    with pytest.raises(Exception, match="dimension"):
        store.journal.search("x", vector=[1.0, 0.0], model="m")
    with pytest.raises(Exception, match="fusion"):
        store.journal.search("x", vector=[1.0, 0.0, 0.0], model="m", fusion="nope")  # type: ignore[arg-type]


def test_hybrid_summaries(store: Store) -> None:
    pytest.importorskip("numpy")
    one = store.summaries.add("gateway decisions", branch="main")
    two = store.summaries.add("proxy notes", branch="feat")
    from recall_sqlite.vectors import Owner

    store.vectors.put_many(
        [Owner.summary(one.id), Owner.summary(two.id)], [[1.0, 0.0], [0.9, 0.2]], model="m"
    )
    r = store.summaries.search("gateway", vector=[1.0, 0.1], model="m")
    assert [s.id for s in r.summaries] == [one.id, two.id]
    r = store.summaries.search("gateway", branch="main", vector=[1.0, 0.1], model="m")
    assert [s.id for s in r.summaries] == [one.id]


def test_snippets_are_read_on_first_use_while_the_store_is_open(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append(entry("2026-01-01T00:00:00Z", focus="the websocket gateway"))
        kept = s.journal.search("gateway")
        asked = s.journal.search("gateway")
        assert asked.hits[0].snippet.marked("[", "]") == "the websocket [gateway]"
    assert asked.hits[0].field == "focus"  # cached: no store needed any more
    with pytest.raises(RecallError):  # a typed error, never apsw's
        _ = kept.hits[0].snippet


@given(st.text(st.characters(exclude_categories=())))
def test_a_query_is_cleaned_of_controls_and_lone_surrogates_alone(text: str) -> None:
    # The printable fast path and the per-character rule give one text: controls and lone
    # surrogates become spaces, every other character stays.
    import unicodedata

    want = "".join(" " if unicodedata.category(c) in ("Cc", "Cs") else c for c in text)
    assert parse_query(text).text == want
