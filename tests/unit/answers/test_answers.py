"""The JSON shape of every answer (recall_sqlite/answers.py) against the code that makes it:
the library's `to_dict()` of each call validates against its schema, the CLI's `--json`
for the same call is the same JSON, the schemas are valid draft-07 and strict (a key
gained or lost anywhere fails), and random valid journal inputs give answers that validate.

The one answer with two spellings: the library's `journal.latest(...)` is `journal read
-n 1` on the command line (there is no `journal latest` command; latest is read(n=1))."""

from __future__ import annotations

import ast
import datetime as dt
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from recall_sqlite import Elsewhere, Scope, Store, open_store
from recall_sqlite.answers import ANSWERS, DEFS, TOOL_ANSWERS
from recall_sqlite.context import whole_workspace
from recall_sqlite.cursors import Cursors
from recall_sqlite.errors import InvalidEntryError, JournalFieldCollapse
from recall_sqlite.journal.journal import Journal
from recall_sqlite.summaries import ALL_BRANCHES, CoverRange, Summaries
from recall_sqlite.synapt_fields import FIELDS
from tests.conftest import make_workspace
from tests.helpers import (
    ISSUE_34_CALLS,
    REPO,
    add_worktree,
    cli_here,
    modules_loaded_by_cli,
    new_repo,
)

# The calls issue 34 serves as MCP tools: each has one answer schema.
CALLS = ISSUE_34_CALLS
# Objects whose keys are the data's, not the project's (an entry's unknown legacy fields,
# a finding's rows): no key is required or refused in them, and each is emitted only when
# it holds something.
DATA_KEYS = ("extra", "data")

VALIDATORS = {name: Draft7Validator(schema) for name, schema in ANSWERS.items()}


def invalid(name: str, answer: object) -> str:
    """'' when `answer` is a valid `name` answer; else the validator's best complaint."""
    errors = sorted(VALIDATORS[name].iter_errors(answer), key=lambda e: e.path)
    if not errors:
        return ""
    from jsonschema.exceptions import best_match

    best = best_match(errors)
    return f"{name}: {best.message} at {list(best.absolute_path)}"


def as_json(value: object) -> Any:
    """`value` as a JSON reader sees it (tuples are lists, keys are text)."""
    return json.loads(json.dumps(value))


def check(name: str, answer: object) -> Any:
    """The library's answer, validated as JSON: what the CLI and the MCP server send."""
    data = as_json(answer)
    problem = invalid(name, data)
    assert not problem, problem
    return data


# -- the store the tests read ----------------------------------------------------------------


class World:
    """A git repository with a linked worktree on another branch, one store: several
    sessions with versions (an auto stub enriched later), an entry on a second branch of the
    main checkout, a legacy line's unknown field, a forget, summaries (superseded, covering
    ids, covering a range) and a cursor that read a stub whose richer version came after."""

    def __init__(self, tmp: Path) -> None:
        self.main = new_repo(tmp / "proj")
        self.linked = add_worktree(self.main, tmp / "proj-feature", "feature")
        self.here = open_store(self.main)
        self.there = open_store(self.linked)
        j, k = self.here.journal, self.there.journal
        self.stub = j.append(
            {
                "timestamp": "2026-03-01T10:00:00+00:00",
                "session_id": "s1",
                "auto": True,
                "focus": "auto stub",
                "branch": "main",
            }
        )
        self.here.cursors.advance("indexer", "main", to=self.stub.seq)
        j.append(
            {
                "timestamp": "2026-03-01T10:05:00+00:00",
                "session_id": "s1",
                "enriched": True,
                "focus": "the gateway rewrite",
                "done": ["read the code"],
                "next_steps": ["split the gateway", "write the tests"],
                "branch": "main",
                "files_modified": ["gw.py"],
                "git_log": ["abc123 start"],
            }
        )
        j.write(
            focus="tests first",
            done=["write the tests"],
            session_id="s2",
            timestamp="2026-03-01T11:00:00+00:00",
            next_steps=["review the gateway"],
        )
        j.append(
            {
                "timestamp": "2026-03-01T12:00:00Z",
                "session_id": "s3",
                "branch": "hotfix",
                "focus": "a hotfix on the main checkout",
                "legacy_note": {"from": "synapt"},
                "agent_id": "agent-7",
                "griptree": "g",
            }
        )
        self.secret = j.append(
            {
                "timestamp": "2026-03-01T12:30:00+00:00",
                "session_id": "s4",
                "focus": "sk-123",
                "branch": "main",
            }
        )
        k.write(
            focus="feature work",
            session_id="f1",
            next_steps=["ship the feature"],
            timestamp="2026-03-02T09:00:00+00:00",
        )
        k.append(
            {
                "timestamp": "2026-03-02T09:30:00+00:00",
                "session_id": "f1",
                "auto": True,
                "focus": "feature stub",
                "branch": "feature",
            }
        )
        k.write(
            focus="feature review",
            session_id="f2",
            decisions=["keep the flag"],
            timestamp="2026-03-02T10:00:00+00:00",
        )
        self.forgotten = j.forget([self.secret.id])
        s = self.here.summaries
        s.add("the first week", author="tester")
        s.add("the week again", covers=CoverRange(1, self.stub.seq))
        s.add("main so far", branch="main", kind="day", covers=[self.stub.id])
        s.add("feature so far", branch="feature", kind="day")

    def close(self) -> None:
        self.here.close()
        self.there.close()

    def store(self, where: str) -> Store:
        return self.here if where == "main" else self.there

    def path(self, where: str) -> Path:
        return self.main if where == "main" else self.linked


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    try:
        yield w
    finally:
        w.close()


def cli(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> Any:
    """`recall-sqlite --cwd CWD ARGV --json`, in this process: its JSON."""
    argv_ = list(argv)
    at = argv_.index("--") if "--" in argv_ else len(argv_)
    argv_.insert(at, "--json")
    code, out, err = cli_here(capsys, None, "--cwd", str(cwd), *argv_)
    assert code in (0, 1), err
    return json.loads(out)


# The reads: (answer, CLI line, the same call through the library), from either checkout.
READS: list[tuple[str, list[str], Callable[[Store], Any]]] = [
    ("journal_read", ["journal", "read"], lambda s: s.journal.read()),
    ("journal_read", ["journal", "read", "-n", "0"], lambda s: s.journal.read(0)),
    (
        "journal_read",
        ["journal", "read", "-n", "9", "--all-worktrees", "--branch", "main", "--meaningful"],
        lambda s: s.journal.read(9, branch="main", all_worktrees=True, meaningful=True),
    ),
    (
        "journal_read",
        ["journal", "read", "--branch", ""],
        lambda s: s.journal.read(branch=""),
    ),
    ("journal_latest", ["journal", "read", "-n", "1"], lambda s: s.journal.latest()),
    (
        "journal_latest",
        ["journal", "read", "-n", "1", "--meaningful", "--all-worktrees"],
        lambda s: s.journal.latest(True, all_worktrees=True),
    ),
    (
        "journal_latest",
        ["journal", "read", "-n", "1", "--branch", "nowhere"],
        lambda s: s.journal.latest(branch="nowhere"),
    ),
    ("journal_pending", ["journal", "pending"], lambda s: s.journal.pending_next_steps()),
    (
        "journal_pending",
        ["journal", "pending", "--all-worktrees"],
        lambda s: s.journal.pending_next_steps(all_worktrees=True),
    ),
    ("journal_search", ["journal", "search", "gateway"], lambda s: s.journal.search("gateway")),
    (
        "journal_search",
        ["journal", "search", "feature", "-n", "1", "--all-worktrees", "--meaningful"],
        lambda s: s.journal.search("feature", 1, all_worktrees=True, meaningful=True),
    ),
    (
        "journal_search",
        ["journal", "search", "--branch", "main", "--", '"the gateway"', "rew*"],
        lambda s: s.journal.search('"the gateway" rew*', branch="main"),
    ),
    ("journal_search", ["journal", "search", "--", "-"], lambda s: s.journal.search("-")),
    ("summary_latest", ["summary", "latest"], lambda s: s.summaries.read_latest()),
    (
        "summary_latest",
        ["summary", "latest", "--branch", "main", "--kind", "day"],
        lambda s: s.summaries.read_latest("main", "day"),
    ),
    (
        "summary_latest",
        ["summary", "latest", "--all-branches"],
        lambda s: s.summaries.read_latest(ALL_BRANCHES),
    ),
    (
        "summary_latest",
        ["summary", "latest", "--branch", "nowhere"],
        lambda s: s.summaries.read_latest("nowhere"),
    ),
    (
        "cursor_unread",
        ["cursor", "unread", "indexer", "--branch", "main"],
        lambda s: s.cursors.unread("indexer", "main"),
    ),
    (
        "cursor_unread",
        ["cursor", "unread", "indexer", "--branch", "main", "--limit", "1"],
        lambda s: s.cursors.unread("indexer", "main", limit=1),
    ),
    (
        "cursor_unread",
        ["cursor", "unread", "newcomer", "--branch", "feature"],
        lambda s: s.cursors.unread("newcomer", "feature"),
    ),
    ("where", ["where"], lambda s: s.workspace),
    ("doctor", ["doctor"], lambda s: s.doctor()),
]


def _dict(result: Any) -> Any:
    return None if result is None else result.to_dict()


@pytest.mark.parametrize("where", ["main", "linked"])
def test_every_read_validates_and_the_cli_says_the_same(
    world: World, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, argv, call in READS:
        ours = check(name, _dict(call(world.store(where))))
        theirs = cli(capsys, world.path(where), *argv)
        assert theirs == ours, (name, argv)


def test_the_world_holds_what_the_shapes_need(world: World) -> None:
    """The store holds each optional and nullable part at least once, so the validations
    above meet them: an entry's extra, a revision, a range, an author, superseded summaries,
    a hit's highlights, other worktrees and branches, a forget's ids."""
    j = world.here.journal
    wide = j.read(20, all_worktrees=True).to_dict()
    assert any("extra" in e for e in wide["entries"])
    assert j.read(branch="main").elsewhere.other_branches and j.read().elsewhere.other_worktrees
    unread = world.here.cursors.unread("indexer", "main").to_dict()
    assert any(e["revision"] for e in unread["entries"])
    summaries = [s.to_dict() for s in world.here.summaries.list(ALL_BRANCHES)]
    assert any(s["covers_range"] for s in summaries) and any(s["author"] for s in summaries)
    assert any(s["entry_ids"] for s in summaries) and any(s["superseded_by"] for s in summaries)
    assert j.search("gateway").to_dict()["entries"][0]["highlights"]
    assert world.forgotten.to_dict()["entries"] == [world.secret.id]


# -- the writes: the CLI's answer is its library call's -------------------------------------


class Spy:
    """Wraps a library method: what it returned to the CLI, to compare with what the CLI
    printed (a write cannot be made twice to compare two answers)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> None:
        self.results: list[Any] = []
        real = getattr(owner, name)

        def spied(*args: Any, **kwargs: Any) -> Any:
            got = real(*args, **kwargs)
            self.results.append(got)
            return got

        monkeypatch.setattr(owner, name, spied)

    def answer(self) -> Any:
        assert len(self.results) == 1, self.results
        return self.results.pop().to_dict()


def test_every_write_validates_and_the_cli_says_what_the_library_returned(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    main, linked = world.main, world.linked
    # the journal write the CLI is given twice: the second finds it already stored
    first_write = [
        "journal",
        "write",
        "--focus",
        "from the CLI",
        "--done",
        "split the gateway",
        "--next",
        "deploy",
        "--session-id",
        "c1",
        "--timestamp",
        "2026-03-03T08:00:00Z",
        "--file",
        "a.py",
        "--decision",
        "ship",
    ]
    writes: list[tuple[str, type, str, Path, list[str]]] = [
        (
            "journal_write",
            Journal,
            "write",
            main,
            first_write,
        ),
        # the same content again: already stored (created false), carried alike
        (
            "journal_write",
            Journal,
            "write",
            main,
            first_write,
        ),
        (
            "journal_write",
            Journal,
            "write",
            linked,
            ["journal", "write", "--focus", "on the feature", "--branch", ""],
        ),
        ("summary_add", Summaries, "write", main, ["summary", "add", "from the CLI"]),
        (
            "summary_add",
            Summaries,
            "write",
            linked,
            [
                "summary",
                "add",
                "ranged",
                "--branch",
                "feature",
                "--kind",
                "day",
                "--range",
                f"1:{world.stub.id}",
                "--author",
                "cli",
            ],
        ),
        (
            "cursor_advance",
            Cursors,
            "advance",
            main,
            ["cursor", "advance", "indexer", "--branch", "main", "--to", "3"],
        ),
        (
            "cursor_advance",
            Cursors,
            "advance",
            main,
            ["cursor", "advance", "indexer", "--branch", "main", "--to", "1"],
        ),
        (
            "cursor_advance",
            Cursors,
            "advance",
            linked,
            ["cursor", "advance", "fresh", "--branch", "main", "--to", world.stub.id],
        ),
        (
            "cursor_unread",
            Cursors,
            "take",
            main,
            ["cursor", "unread", "taker", "--branch", "main", "--take", "--limit", "2"],
        ),
        ("journal_forget", Journal, "forget", main, ["journal", "forget", "--session", "s2"]),
        ("journal_forget", Journal, "forget", linked, ["journal", "forget", world.stub.id]),
        ("doctor", Store, "doctor", main, ["doctor", "--repair"]),
    ]
    # every call is met, here or among the reads
    assert {w[0] for w in writes} | {r[0] for r in READS} == set(CALLS)
    for name, owner, method, cwd, argv in writes:
        with monkeypatch.context() as m:
            spy = Spy(m, owner, method)
            theirs = cli(capsys, cwd, *argv)
            assert theirs == check(name, spy.answer()), argv


# -- where no store exists yet, and where the store does not open -----------------------------


NO_STORE_READS = [
    ("journal_read", ["journal", "read"]),
    ("journal_latest", ["journal", "read", "-n", "1"]),
    ("journal_pending", ["journal", "pending"]),
    ("journal_search", ["journal", "search", "x"]),
    ("summary_latest", ["summary", "latest"]),
    ("cursor_unread", ["cursor", "unread", "c", "--branch", "main"]),
    ("where", ["where"]),
    ("doctor", ["doctor"]),
]


def test_a_read_where_no_store_exists_answers_its_empty_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = new_repo(tmp_path / "empty")
    for name, argv in NO_STORE_READS:
        data = cli(capsys, repo, *argv)
        assert not invalid(name, data), invalid(name, data)
    assert not list(repo.rglob("*.db")), "a read created a store"


def test_a_read_where_no_store_exists_says_the_scope_it_would_have_covered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No workspace id (none is minted by a read), the worktree the directory resolves to
    unless every worktree was asked for, the branch and kind asked for; nothing elsewhere."""
    main = new_repo(tmp_path / "proj")
    linked = add_worktree(main, tmp_path / "proj-feature", "feature")
    key = cli(capsys, linked, "where")["worktree"]
    nothing = Elsewhere().to_dict()
    for argv, scope in (
        (["journal", "read", "--branch", "x", "--meaningful"], Scope(None, key, "x", True)),
        (["journal", "read", "-n", "1", "--all-worktrees"], Scope(None, None, None)),
        (["journal", "search", "q", "--branch", ""], Scope(None, key, "")),
        (["journal", "pending"], Scope(None, key, None)),
        (["journal", "pending", "--all-worktrees"], Scope(None, None, None)),
        (["cursor", "unread", "c"], Scope(None, None, "feature")),
        (["cursor", "unread", "c", "--branch", "main"], Scope(None, None, "main")),
        (["where"], Scope(None, None, None)),
        (["doctor"], Scope(None, None, None)),
    ):
        data = cli(capsys, linked, *argv)
        assert (data["scope"], data["elsewhere"]) == (scope.to_dict(), nothing), argv
    data = cli(capsys, linked, "summary", "latest", "--all-branches", "--kind", "day")
    assert data["scope"] == {
        "workspace_id": None,
        "branch": None,
        "all_branches": True,
        "kind": "day",
        "include_superseded": False,
    }
    assert data["elsewhere"] == nothing


def test_where_says_the_same_before_and_after_the_first_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where no store exists the id is null (the scope's too) and the database absent;
    every other key is the one the store reports once it exists."""
    repo = new_repo(tmp_path / "w")
    before = cli(capsys, repo, "where")
    with open_store(repo) as store:
        after = check("where", store.workspace.to_dict())
    assert before["workspace_id"] is None
    assert before["scope"] == {**after["scope"], "workspace_id": None}
    assert {**before, "workspace_id": after["workspace_id"], "scope": after["scope"]} == after


def test_doctor_on_a_store_that_does_not_open_answers_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as store:
        db = store.workspace.db_path
    db.write_bytes(b"not a database at all" * 100)
    data = cli(capsys, root, "doctor")
    assert not invalid("doctor", data), invalid("doctor", data)
    assert data["ok"] is False and data["findings"]


def test_a_doctor_finding_with_its_data_validates(world: World) -> None:
    """A finding carries `data` (the rows involved) only when it has some: a worktree
    whose directory is gone is one such finding."""
    world.there.close()
    shutil.rmtree(world.linked)
    report = check("doctor", world.here.doctor().to_dict())
    assert any("data" in f for f in report["findings"]), report


# -- every answer says its scope and what lies outside it ------------------------------------


def _required(document: dict[str, Any], node: dict[str, Any]) -> Iterator[set[str]]:
    """The keys required of each object `node` may be: one set per alternative of its
    anyOf, a $ref's required keys with those of the node that extends it."""
    own = set(node.get("required", ()))
    if "anyOf" in node:
        for alternative in node["anyOf"]:
            for keys in _required(document, alternative):
                yield own | keys
    elif "allOf" in node:
        (only,) = node["allOf"]
        for keys in _required(document, only):
            yield own | keys
    elif "$ref" in node:
        target = document["$defs"][node["$ref"].removeprefix("#/$defs/")]
        for keys in _required(document, target):
            yield own | keys
    else:
        yield own


@pytest.mark.parametrize("answers", [ANSWERS, TOOL_ANSWERS], ids=["library", "tool"])
def test_every_answer_requires_its_scope_and_elsewhere(answers: dict[str, Any]) -> None:
    """Issue 34: every answer carries its scope and elsewhere, as reads do: each call's
    schema requires both in every shape its answer may take (no store included)."""
    assert set(answers) == set(CALLS)
    for name, schema in answers.items():
        shapes = list(_required(schema, schema))
        assert shapes, name
        for keys in shapes:
            assert {"scope", "elsewhere"} <= keys, (name, sorted(keys))


def test_the_whole_workspace_is_spelled_as_scope_py_spells_it() -> None:
    """context.whole_workspace spells a Scope and an Elsewhere by hand (context sits below
    scope.py): the same JSON."""
    for workspace_id in (None, "0c2f8f3e-95c5-4d43-9d5b-7f0a8a3b8f9e"):
        assert whole_workspace(workspace_id) == {
            "scope": Scope(workspace_id, None, None).to_dict(),
            "elsewhere": Elsewhere().to_dict(),
        }


def test_each_answer_says_what_a_read_of_its_scope_says(world: World) -> None:
    """A write's scope is the worktree and branch it wrote to, with what a read of them
    counts elsewhere; a cursor's its branch in every worktree; forget, where and doctor
    the whole workspace, nothing elsewhere; a summary answer the summaries asked for, with
    the current ones of its kind in other scopes."""
    here, there = world.here, world.there
    for store, branch in ((here, None), (there, ""), (here, "hotfix")):
        wrote = store.journal.write(focus=f"on {branch!r}", branch=branch)
        read = store.journal.read(branch=wrote.entry.branch)
        assert (wrote.scope, wrote.elsewhere) == (read.scope, read.elsewhere), branch
        assert wrote.scope.worktree == store.workspace.worktree
        assert wrote.scope.worktree == wrote.entry.worktree
    assert wrote.elsewhere.other_branches, "the world has entries on other branches"
    wide = here.journal.read(branch="main", all_worktrees=True)
    unread = there.cursors.unread("indexer", "main")
    moved = there.cursors.advance("indexer", "main", to=unread.next_position)
    for answer in (unread, moved):
        assert (answer.scope, answer.elsewhere) == (wide.scope, wide.elsewhere)
    assert wide.elsewhere.other_branches and not wide.elsewhere.other_worktrees
    whole = Scope(here.workspace.id, None, None).to_dict()
    for answer in (
        world.forgotten.to_dict(),
        here.workspace.to_dict(),
        there.workspace.to_dict(),
        here.doctor().to_dict(),
    ):
        assert (answer["scope"], answer["elsewhere"]) == (whole, Elsewhere().to_dict())
    current = here.summaries.list(ALL_BRANCHES, current_only=True, limit=None)
    for branch, kind in ((None, None), ("main", "day"), ("main", None), ("nowhere", None)):
        latest = here.summaries.read_latest(branch, kind)
        assert latest.summary == here.summaries.latest(branch, kind)
        assert (latest.scope.branch, latest.scope.kind) == (branch, kind)
        others = [s for s in current if s.branch != branch and kind in (None, s.kind)]
        assert latest.elsewhere == Elsewhere(other_branches=len(others)), (branch, kind)
    assert here.summaries.read_latest(ALL_BRANCHES).elsewhere == Elsewhere()
    assert here.summaries.read_latest(ALL_BRANCHES).scope.all_branches
    written = there.summaries.write("feature, again", branch="feature", kind="day")
    assert written.summary == there.summaries.latest("feature", "day")
    assert written.elsewhere == there.summaries.read_latest("feature", "day").elsewhere
    assert written.elsewhere.other_branches == 1  # main's day summary


def test_what_other_machines_hold_is_counted_as_a_read_counts_it(tmp_path: Path) -> None:
    """A store that syncs knows how many entry versions other machines hold that it has
    not pulled (sync/peers.py): a write's and a cursor's elsewhere count them as a read of
    their scope does. (The record is written by hand here: sync needs Litestream.)"""
    from recall_sqlite.sync import place

    root = make_workspace(tmp_path)
    with open_store(root) as store:
        store.journal.write(focus="here")
        db = store.workspace.db_path
    Path(place.directory(db)).mkdir()
    peers = {"peers": {"m1": {"ahead": 3, "seen_position": 5}}}
    (Path(place.directory(db)) / place.PEERS).write_text(json.dumps(peers), "utf-8")
    with open_store(root) as store:
        branch = store.workspace.branch
        assert store.journal.read(branch=branch).elsewhere.other_machines == 3
        assert store.journal.write(focus="again").elsewhere.other_machines == 3
        assert store.cursors.unread("c", branch).elsewhere.other_machines == 3
        assert store.cursors.advance("c", branch, to=1).elsewhere.other_machines == 3


def test_a_summary_answer_is_the_summary_beside_its_scope(world: World) -> None:
    """summary latest's and summary add's answers were the summary itself before they said
    their scope: its fields stay where they were; the MCP tool's stays under "summary"."""
    latest = world.here.summaries.read_latest("main", "day")
    assert latest.summary is not None
    data = latest.to_dict()
    said = {k: data.pop(k) for k in ("scope", "elsewhere")}
    assert data == latest.summary.to_dict()
    assert latest.wrapped_dict() == {"summary": latest.summary.to_dict(), **said}
    none = world.here.summaries.read_latest("nowhere")
    assert none.to_dict() == none.wrapped_dict() and none.to_dict()["summary"] is None


# -- the schemas themselves ----------------------------------------------------------------


def test_there_is_one_schema_per_call_and_each_is_valid() -> None:
    assert set(ANSWERS) == set(CALLS)
    for name, schema in ANSWERS.items():
        Draft7Validator.check_schema(schema)
        assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
        assert schema["title"] == name
        # A draft-07 meta-schema does not look under $defs: each shape is checked itself.
        for shape in schema["$defs"].values():
            Draft7Validator.check_schema(shape)


def test_no_keyword_needs_a_later_draft_and_no_ref_has_siblings() -> None:
    """Draft-07 ignores what it does not know (unevaluatedProperties, prefixItems,
    $dynamicRef...) and every keyword beside a $ref: a shape that used one would validate
    less than it says."""
    later = {"unevaluatedProperties", "unevaluatedItems", "prefixItems", "$dynamicRef"}
    later |= {"$anchor", "dependentRequired", "dependentSchemas", "minContains", "maxContains"}
    for name, schema in {**ANSWERS, **TOOL_ANSWERS}.items():
        for node in _walk(schema):
            assert not later & set(node), (name, sorted(later & set(node)))
            if "$ref" in node:
                assert set(node) == {"$ref"}, (name, node)


def _walk(node: object) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_every_reference_resolves_within_its_document() -> None:
    """Each document is whole (an MCP tool's outputSchema stands alone) and holds only the
    definitions it uses."""
    for name, schema in ANSWERS.items():
        refs = {n["$ref"] for n in _walk(schema) if isinstance(n.get("$ref"), str)}
        names = {r.removeprefix("#/$defs/") for r in refs}
        assert all(r.startswith("#/$defs/") for r in refs), name
        assert names == set(schema["$defs"]), name


def test_the_answers_are_objects() -> None:
    """An MCP tool's structured answer is a JSON object; so is every library answer."""
    for name, schema in {**ANSWERS, **TOOL_ANSWERS}.items():
        assert schema["type"] == "object", name


def test_the_entry_shape_is_synapts_fields_and_the_stores() -> None:
    fields = DEFS["entry_fields"]
    assert list(fields["properties"]) == [*FIELDS, "id", "worktree", "extra"]
    assert fields["required"] == [*FIELDS, "id", "worktree"]


def test_the_documents_are_copies() -> None:
    """A host that edits one document (a title, a description) changes no other."""
    a, b = ANSWERS["journal_read"]["$defs"]["scope"], ANSWERS["journal_pending"]["$defs"]["scope"]
    assert a == b and a is not b and a is not DEFS["scope"]


# -- strictness: a key gained or lost anywhere fails -------------------------------------------


def _mutations(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[str, Any]]:
    """Copies of `data` with one key added to, or one always-emitted key removed from, one
    object the project owns."""
    if isinstance(data, dict):
        if path and path[-1] in DATA_KEYS:
            return
        yield f"{list(path)} + surplus", {**data, "surplus": 1}
        for key in data:
            if key not in DATA_KEYS:
                yield f"{list(path)} - {key}", {k: v for k, v in data.items() if k != key}
        for key, value in data.items():
            for what, changed in _mutations(value, (*path, key)):
                yield what, {**data, key: changed}
    elif isinstance(data, list):
        for i, value in enumerate(data[:2]):
            for what, changed in _mutations(value, (*path, i)):
                yield what, [*data[:i], changed, *data[i + 1 :]]


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def test_a_key_gained_or_lost_anywhere_fails(world: World) -> None:
    answers = [(name, as_json(_dict(call(world.here)))) for name, _, call in READS]
    answers.append(("journal_forget", as_json(world.forgotten.to_dict())))
    answers.append(("summary_add", as_json(world.here.summaries.write("w", kind="day").to_dict())))
    answers.append(
        ("cursor_advance", as_json(world.here.cursors.advance("x", "main", to=1).to_dict()))
    )
    answers.append(("journal_write", as_json(world.here.journal.write(focus="w").to_dict())))
    tried = 0
    for name, data in answers:
        if data is None:
            continue
        for what, changed in _mutations(data):
            tried += 1
            assert invalid(name, changed), f"{name}: {what} still validates"
    assert tried > 500


def test_a_value_of_the_wrong_type_fails(world: World) -> None:
    data = as_json(world.here.journal.read().to_dict())
    for path, value in (
        (("total",), 1.5),
        (("total",), "3"),
        (("scope", "meaningful"), 0),
        (("elsewhere", "other_branches"), -1),
        (("entries", 0, "id"), "ab"),
        (("entries", 0, "done"), "not a list"),
        (("entries", 0, "worktree"), None),
        (("scope", "workspace_id"), 1),
    ):
        changed = json.loads(json.dumps(data))
        parent = _at(changed, path[:-1])
        parent[path[-1]] = value
        assert invalid("journal_read", changed), path


# -- the answers are never on the read path ----------------------------------------------------


def test_answers_imports_nothing() -> None:
    """Pure data: only `from __future__` and the type checker's names."""
    source = REPO / "recall_sqlite" / "answers.py"
    tree = ast.parse(source.read_text("utf-8"))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [n.module for n in top if isinstance(n, ast.ImportFrom)] == ["__future__"]
    assert all(not isinstance(n, ast.Import) for n in top)


def test_a_journal_read_loads_neither_the_schemas_nor_a_validator(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    with open_store(root) as s:
        s.journal.append({"timestamp": "2026-01-01T10:00:00Z", "focus": "one entry"})
    loaded = modules_loaded_by_cli(tmp_path, "--cwd", str(root), "journal", "read", "--json")
    assert "recall_sqlite.journal.journal" in loaded
    assert not loaded & {"recall_sqlite.answers", "jsonschema"}


# -- random valid journal inputs ---------------------------------------------------------------

_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12
)
_word = st.sampled_from(["gateway", "tests", "ship", "feature", "fix"])
_items = st.lists(st.one_of(_word, _text), max_size=3)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _text,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_text, inner, max_size=2),
    max_leaves=4,
)


@st.composite
def _entry(draw: st.DrawFn) -> dict[str, Any]:
    when = draw(st.datetimes(dt.datetime(2000, 1, 1), dt.datetime(2100, 1, 1)))
    stamp = when.replace(tzinfo=dt.timezone.utc).isoformat()
    entry: dict[str, Any] = {
        "timestamp": draw(st.sampled_from([stamp, stamp.replace("+00:00", "Z")])),
        "session_id": draw(st.sampled_from(["", "s1", "s2", "s3"])),
        "branch": draw(st.sampled_from(["", "main", "feature", "x/y"])),
        "focus": draw(st.one_of(_word, _text)),
        "done": draw(_items),
        "decisions": draw(_items),
        "next_steps": draw(_items),
        "files_modified": draw(_items),
        "git_log": draw(_items),
        "auto": draw(st.booleans()),
        "enriched": draw(st.booleans()),
        "griptree": draw(_text),
        "agent_id": draw(_text),
        "repair": draw(st.booleans()),
    }
    extra = draw(st.dictionaries(st.sampled_from(["note", "legacy", "ü"]), _json, max_size=2))
    return {**entry, **extra}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    entries=st.lists(_entry(), min_size=1, max_size=6),
    n=st.integers(0, 8),
    branch=st.sampled_from([None, "", "main", "feature"]),
    all_worktrees=st.booleans(),
    meaningful=st.booleans(),
    query=st.one_of(_word, _text),
    write=st.fixed_dictionaries(
        {"focus": _text, "done": _items, "next_steps": _items, "decisions": _items}
    ),
    forget=st.booleans(),
    linked=st.booleans(),
)
def test_random_journal_inputs_give_answers_that_validate(
    world: World,
    entries: list[dict[str, Any]],
    n: int,
    branch: str | None,
    all_worktrees: bool,
    meaningful: bool,
    query: str,
    write: dict[str, Any],
    forget: bool,
    linked: bool,
) -> None:
    store = world.there if linked else world.here
    j = store.journal
    try:
        appended = j.append_many(entries)
    except InvalidEntryError as exc:
        # an example replayed after an earlier one forgot its entry: never stored again
        assert "was forgotten" in str(exc)
        reject()
    scope = {"branch": branch, "all_worktrees": all_worktrees, "meaningful": meaningful}
    check("journal_read", j.read(n, **scope).to_dict())
    check(
        "journal_latest", j.latest(meaningful, branch=branch, all_worktrees=all_worktrees).to_dict()
    )
    check("journal_pending", j.pending_next_steps(all_worktrees=all_worktrees).to_dict())
    check("journal_search", j.search(query, n, **scope).to_dict())
    try:
        check("journal_write", j.write(session_id="w", **write).to_dict())
    except JournalFieldCollapse:
        pass  # generated text that reads as an unclosed tool-call tag ('<focus>'): refused
    except InvalidEntryError as exc:
        assert str(exc).startswith("nothing to journal"), exc
    cursor_branch = branch or "main"
    unread = check(
        "cursor_unread", store.cursors.unread("c", cursor_branch, limit=n or None).to_dict()
    )
    check(
        "cursor_advance",
        store.cursors.advance("c", cursor_branch, to=unread["next_position"]).to_dict(),
    )
    check(
        "summary_add",
        # (a summary's text must hold more than white space: the query may not)
        store.summaries.write(
            query.strip() or "x", branch=branch, covers=[appended[0].id]
        ).to_dict(),
    )
    check("summary_latest", store.summaries.read_latest(branch).to_dict())
    if forget:
        check("journal_forget", j.forget([appended[-1].id]).to_dict())
