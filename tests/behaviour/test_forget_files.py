"""journal forget reaches every copy the store wrote: the mirror lines of a forgotten entry
are removed from synapt's buckets (in place, under synapt's lock: a concurrent append is
kept), copies in files the store did not write are listed by path and line and removed
with --scrub-sources, and the report never says nothing is left while a file holds it."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from recall_sqlite import open_store
from recall_sqlite import synapt_layout as layout
from recall_sqlite.journal.forget import ForgetTarget
from recall_sqlite.legacy.copies import _cut_copies, _Matcher
from recall_sqlite.legacy.lines import Bad, classify
from tests.helpers import new_repo, run_cli, stock_synapt, stock_write, user_env

SECRET = "sk-live-SECRETtoken-1234567890abcdef"


def _files_holding(root: Path, text: str) -> list[str]:
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*.jsonl") if text.encode() in p.read_bytes()
    )


def _ok(repo: Path, home: Path) -> None:
    for cmd in (["doctor"], ["verify"]):
        res = run_cli(*cmd, cwd=repo, env=user_env(home))
        assert res.returncode == 0, (cmd, res.stdout)


def _id_of(repo: Path, home: Path, words: str) -> str:
    res = run_cli("journal", "search", words, "--json", cwd=repo, env=user_env(home))
    return str(json.loads(res.stdout)["entries"][0]["id"])


def test_forget_removes_the_mirror_line_and_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    stock_write(repo, home, "stock")
    res = run_cli(
        "synapt", "recall", "journal", "--write", "--focus", f"pasted {SECRET}",
        cwd=repo, env=user_env(home),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    mirror = layout.journal_for(repo, layout.neutral_env(user_env(home)))
    assert _files_holding(repo, SECRET) == [str(mirror.relative_to(repo))]
    before = mirror.read_bytes()
    res = run_cli("journal", "forget", _id_of(repo, home, SECRET), cwd=repo, env=user_env(home))
    assert res.returncode == 0, res.stderr
    said = res.stdout.splitlines()
    assert "removed 1 line holding them from 1 synapt bucket" in said
    assert "no synapt bucket of the workspace holds them now" in said
    assert said[0] == "Forgot 1 entry version:"
    # (the mirror line was imported back by the next activated start: one line accounted)
    assert said[2] == (
        "removed 0 vectors, 0 summary links; 1 imported line now accounted as forgotten;"
        " 0 quarantined lines emptied"
    )
    assert _files_holding(repo, SECRET) == []
    # Every other line is as it was, and stock synapt reads it.
    assert mirror.read_bytes() == b"".join(
        x + b"\n" for x in before.splitlines() if SECRET.encode() not in x
    )
    listed = stock_synapt(repo, home, "recall", "journal", "--list")
    assert "stock" in listed.stdout and SECRET not in listed.stdout
    _ok(repo, home)


def test_verify_after_a_rewrite_says_which_duplicates_came_from_the_file_itself(
    tmp_path: Path,
) -> None:
    # forget rewrites the bucket it mirrored into, which is then imported again: its first
    # line is a duplicate of the entry the first import stored from it, and verify says so
    # rather than leaving "0 imported" for the file the history came from.
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    env = user_env(home)
    stock_write(repo, home, "stock")
    assert run_cli("import", cwd=repo, env=env).returncode == 0
    res = run_cli("synapt", "recall", "journal", "--write", "--focus", SECRET, cwd=repo, env=env)
    assert res.returncode == 0, res.stderr
    assert (
        run_cli("journal", "forget", _id_of(repo, home, SECRET), cwd=repo, env=env).returncode == 0
    )
    res = run_cli("verify", "--json", cwd=repo, env=env)
    assert res.returncode == 0, res.stdout
    data = json.loads(res.stdout)
    (src,) = data["sources"]
    assert (src["imported"], src["duplicates"], src["imported_before"]) == (0, 1, 1)
    assert data["imported_before"] == 1
    text = run_cli("verify", cwd=repo, env=env).stdout
    assert (
        "1 line: 0 imported, 1 duplicate (1 imported from this file by an earlier import)" in text
    )
    assert text.endswith(
        "1 of the duplicates was imported from the same file by an earlier import"
        " (the file changed and was read again).\n"
    )


def test_copies_in_imported_sources_are_listed_and_scrubbed_on_request(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    (repo / "server").mkdir()
    for cwd, focus in ((repo, "root"), (repo / "server", f"server {SECRET}"), (repo, "later")):
        stock_write(cwd, home, focus)
    assert run_cli("import", cwd=repo, env=user_env(home)).returncode == 0
    eid = _id_of(repo, home, SECRET)
    res = run_cli("journal", "forget", eid, "--json", cwd=repo, env=user_env(home))
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    nested = repo / "server/.synapt/recall/worktrees/proj/journal.jsonl"
    assert data["copies_left"] == [
        {"path": str(nested), "line": 1, "entry": eid, "removed": False, "kind": "bucket"}
    ]
    assert data["copies_removed"] == []
    text = run_cli("journal", "forget", "--scrub-sources", eid, cwd=repo, env=user_env(home))
    # Already forgotten: the files are still searched, by content, and scrubbed.
    assert text.returncode == 0, text.stderr
    assert _files_holding(repo, SECRET) == []
    _ok(repo, home)


def test_the_report_never_says_nothing_is_left_while_a_file_holds_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    stock_write(repo, home, SECRET)
    assert run_cli("import", cwd=repo, env=user_env(home)).returncode == 0
    res = run_cli("journal", "forget", _id_of(repo, home, SECRET), cwd=repo, env=user_env(home))
    assert res.returncode == 0
    assert _files_holding(repo, SECRET)  # the user's own line: left, and said so
    assert "1 line of synapt buckets the store did not write still holds them" in res.stdout
    assert "--scrub-sources" in res.stdout
    assert "no synapt bucket" not in res.stdout and ".jsonl:1" in res.stdout


def test_the_report_names_a_cache_and_another_file_for_what_they_are(tmp_path: Path) -> None:
    # synapt's session-start cache quoting the text is removed whole and said to be a cache,
    # not a bucket's line; another file of synapt's is listed without the --scrub-sources
    # promise, which touches journals only.
    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    env = user_env(home)
    res = run_cli(
        "synapt", "recall", "journal", "--write", "--focus", f"pasted {SECRET}", cwd=repo, env=env
    )
    assert res.returncode == 0, res.stderr
    res = run_cli("synapt", "recall", "hook", "session-start", cwd=repo, env=env, input="{}")
    assert res.returncode == 0, res.stderr
    data = layout.data_dir(repo)
    cache = next(data.rglob("wake/latest.md"))
    assert SECRET in cache.read_text()
    notes = data / "notes.md"
    notes.write_text(f"a line\npasted {SECRET}\n")
    res = run_cli("journal", "forget", _id_of(repo, home, SECRET), cwd=repo, env=env)
    assert res.returncode == 0, res.stderr
    said = res.stdout.splitlines()
    assert "removed 1 line holding them from 1 synapt bucket" in said
    assert f"removed 1 synapt cache file quoting them (synapt writes it anew): {cache}" in said
    at = said.index("1 line of synapt's other files still quotes them (no journal: edit or"
                    " remove them by hand):")  # fmt: skip
    assert said[at + 1] == f"  {notes}:2"
    assert "--scrub-sources" not in res.stdout
    assert "no synapt bucket" not in res.stdout  # only when no file it knows holds them
    assert not cache.exists() and SECRET in notes.read_text()


_HOLD = """
import fcntl, sys, time
from pathlib import Path
path = Path(sys.argv[1])
with open(path, "a", encoding="utf-8") as f:
    fcntl.flock(f.fileno(), fcntl.LOCK_EX)
    print("locked", flush=True)
    time.sleep(1.0)
    f.write(sys.argv[2] + "\\n")
    f.flush()
"""


def test_a_concurrent_synapt_append_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".grip").mkdir(parents=True)
    bucket = layout.bucket_file(layout.data_dir(root), "ws")
    with open_store(root) as s:
        records = [
            {"timestamp": f"2026-01-01T00:00:0{i}+00:00", "focus": f"entry {i} {SECRET}"}
            for i in range(3)
        ]
        ids = [s.journal.append(r).id for r in records]
        s.legacy.append_own(bucket, [layout.line(r) for r in records])
        late = layout.line({"timestamp": "2026-01-02T00:00:00+00:00", "focus": "stock, late"})
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLD, str(bucket), late], stdout=subprocess.PIPE, text=True
        )
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        started = time.monotonic()
        done: list[object] = []
        t = threading.Thread(target=lambda: done.append(s.journal.forget(ids[1])))
        t.start()
        t.join(60)
        assert holder.wait(60) == 0 and done
        assert time.monotonic() - started >= 0.5  # it waited for synapt's lock
        got = bucket.read_text().splitlines()
        assert got == [layout.line(records[0]), layout.line(records[2]), late]
        assert s.legacy.import_paths().ok
        assert s.legacy.verify(deep=True).ok


_lines = st.lists(
    st.tuples(st.text(alphabet="abcdefgh xyz", max_size=20), st.booleans(), st.booleans()),
    min_size=1,
    max_size=12,
)


@settings(max_examples=80, deadline=None)
@given(_lines, st.booleans())
def test_a_rewrite_removes_exactly_the_copies_and_keeps_every_other_byte(
    spec: list[tuple[str, bool, bool]], terminated: bool
) -> None:
    """Each line: (its text, forgotten?, damaged? (cut short: no copy of a forgotten one))."""
    raw: list[bytes] = []
    targets: list[ForgetTarget] = []
    removed: set[int] = set()
    for i, (text, forgotten, damaged) in enumerate(spec):
        ts = f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}+00:00"
        line = layout.line({"timestamp": ts, "focus": f"n{i} {text}"}).encode()
        if damaged:
            line = line[: len(line) // 2]
        elif forgotten:
            fate = classify(line, True)
            assert not isinstance(fate, Bad)
            targets.append(ForgetTarget(fate.id, ts, "", f"n{i} {text}", True))
            removed.add(i)
        raw.append(line)
    data = b"\n".join(raw) + (b"\n" if terminated else b"")
    kept = [x for i, x in enumerate(raw) if i not in removed]
    want = b"".join(x + b"\n" for x in kept)
    if not terminated and len(raw) - 1 not in removed:
        want = want[:-1]  # the unterminated last line stays unterminated
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "journal.jsonl"
        path.write_bytes(data)
        found, changed = _cut_copies(path, _Matcher(tuple(targets)), False)
        assert path.read_bytes() == want
        assert changed == bool(removed)
        assert sorted(c.line for c in found if c.removed) == [
            sum(1 for j in range(i) if j not in removed) + 1 for i in sorted(removed)
        ]


def test_synapt_files_quoting_the_text_are_a_cache_removed_or_listed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".grip").mkdir(parents=True)
    data = layout.data_dir(root)
    bucket = layout.bucket_file(data, "ws")
    wake = bucket.parent / "wake" / "latest.md"
    knowledge = data / "knowledge.jsonl"
    with open_store(root) as s:
        record = {"timestamp": "2026-01-01T00:00:00+00:00", "focus": f"pasted {SECRET}"}
        eid = s.journal.append(record).id
        s.legacy.append_own(bucket, [layout.line(record)])
        wake.parent.mkdir()
        wake.write_text(f"# Last session\nFocus: pasted {SECRET}\n")
        knowledge.write_text(
            '{"fact": "unrelated"}\n' + json.dumps({"fact": f"pasted {SECRET}"}) + "\n"
        )
        report = s.journal.forget(eid)
    # synapt's wake text is a cache it writes anew: removed; knowledge is the user's: listed.
    assert not wake.exists()
    assert sorted((c.path, c.line, c.removed) for c in report.copies) == sorted(
        [(str(bucket), 1, True), (str(wake), 0, True), (str(knowledge), 2, False)]
    )
    assert _files_holding(root, SECRET) == [str(knowledge.relative_to(root))]


def test_a_forgotten_id_whose_copies_a_file_still_holds_is_found_and_forgotten_again(
    tmp_path: Path,
) -> None:
    # The row went without its files' scrub (a pull that applied another machine's forget
    # before issue 32; a shell DELETE): the mirror line keeps the text. verify takes the
    # line for accounted (an import never brings it back); doctor names it, and a forget
    # of the id removes it and says the id was forgotten already (it said "no entry").
    from recall_sqlite.store import context_of

    home = tmp_path / "home"
    home.mkdir()
    repo = new_repo(tmp_path / "proj")
    env = user_env(home)
    stock_write(repo, home, "stock")
    res = run_cli(
        "synapt", "recall", "journal", "--write", "--focus", f"pasted {SECRET}", cwd=repo, env=env
    )
    assert res.returncode == 0, res.stderr
    eid = _id_of(repo, home, SECRET)
    with open_store(repo) as s, context_of(s).db.write() as conn:
        conn.execute("DELETE FROM journal_entries WHERE id = ?", (bytes.fromhex(eid),))
    mirror = layout.journal_for(repo, layout.neutral_env(env))
    assert _files_holding(repo, SECRET) == [str(mirror.relative_to(repo))]
    assert run_cli("verify", cwd=repo, env=env).returncode == 0
    res = run_cli("doctor", "--json", cwd=repo, env=env)
    assert res.returncode == 1
    (found,) = [f for f in json.loads(res.stdout)["findings"] if f["kind"] == "forgotten_copies"]
    assert [c["entry"] for c in found["data"]["copies"]] == [eid]
    assert f"journal forget {eid}" in found["message"]
    res = run_cli("journal", "forget", eid, cwd=repo, env=env)
    assert res.returncode == 0, res.stderr
    said = res.stdout.splitlines()
    assert said[0] == "No stored entry version to forget" and eid in said[1]
    assert "removed 1 line holding them from 1 synapt bucket" in said
    assert _files_holding(repo, SECRET) == []
    listed = stock_synapt(repo, home, "recall", "journal", "--list")
    assert "stock" in listed.stdout and SECRET not in listed.stdout
    _ok(repo, home)
