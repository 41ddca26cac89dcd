"""import takes only what synapt wrote: a path that is neither a synapt journal nor a
directory holding synapt stores is refused with exit 2 and nothing written (`--force` takes
a stray file anyway), and `--map` naming a bucket no store has is a mistake too."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from recall_sqlite import synapt_layout as layout
from recall_sqlite.legacy.admit import looks_like_journal
from tests.helpers import new_repo, run_cli, user_env

PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"


def _line(focus: str, ts: str = "2026-01-01T00:00:00+00:00") -> str:
    return layout.line({"timestamp": ts, "focus": focus})


def _db(repo: Path) -> Path:
    return repo / ".synapt/recall/recall-sqlite.db"


def _rows(repo: Path, table: str) -> int:
    conn = apsw.Connection(str(_db(repo)), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])
    finally:
        conn.close()


def test_a_stranger_file_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "proj")
    stranger = tmp_path / "passwd"
    stranger.write_text(PASSWD)
    res = run_cli("import", str(stranger), cwd=repo, env=user_env(tmp_path))
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "not a synapt journal" in res.stderr and "--force" in res.stderr
    assert not (repo / ".synapt").exists()  # not even a store was made for it
    # In a workspace with a store: still refused, and the quarantine holds nothing of it.
    assert run_cli("journal", "write", "--focus", "x", cwd=repo).returncode == 0
    res = run_cli("import", str(stranger), cwd=repo, env=user_env(tmp_path))
    assert res.returncode == 2
    assert _rows(repo, "quarantine") == 0 and _rows(repo, "import_sources") == 0
    res = run_cli("import", "--force", str(stranger), cwd=repo, env=user_env(tmp_path))
    assert res.returncode == 0, res.stderr
    assert _rows(repo, "quarantine") == 2


def test_a_stray_bucket_of_synapt_lines_is_taken(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "proj")
    stray = tmp_path / "old-bucket.jsonl"
    stray.write_text(_line("kept from an old machine") + "\n" + '{"timestamp": "2026-01\n')
    res = run_cli("import", str(stray), "--json", cwd=repo, env=user_env(tmp_path))
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["imported"] == 1


def test_paths_that_hold_no_journal_are_mistakes(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "proj")
    (repo / "src").mkdir()
    for path in (tmp_path / "nonexistent", repo / "src", tmp_path):
        res = run_cli("import", str(path), cwd=repo, env=user_env(tmp_path))
        assert res.returncode == 2 and res.stderr.count("\n") == 1, (path, res.stderr)
    assert not (repo / ".synapt").exists()


def test_map_with_a_bucket_no_store_has_is_a_mistake(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "proj")
    bucket = layout.bucket_file(layout.data_dir(repo), "proj")
    layout.append_lines(bucket, [_line("real")])
    res = run_cli("import", "--map", "nosuch=nowhere", cwd=repo, env=user_env(tmp_path))
    assert res.returncode == 2 and "nosuch" in res.stderr and "proj" in res.stderr
    assert not _db(repo).exists()
    res = run_cli("survey", "--map", "nosuch=.", cwd=repo, env=user_env(tmp_path))
    assert res.returncode == 2
    assert run_cli("import", "--map", "proj=.", cwd=repo, env=user_env(tmp_path)).returncode == 0


_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=60)


@settings(max_examples=60, deadline=None)
@given(st.lists(_text.filter(lambda x: x.strip() != ""), min_size=1, max_size=20))
def test_lines_that_are_no_json_objects_make_no_journal(lines: list[str]) -> None:
    import tempfile

    assume(any(not x.lstrip().startswith("{") for x in lines))

    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("\n".join(x for x in lines if not x.lstrip().startswith("{")) + "\n")
    try:
        assert not looks_like_journal(Path(f.name))
    finally:
        Path(f.name).unlink()


@settings(max_examples=60, deadline=None)
@given(st.lists(_text, min_size=1, max_size=20), st.integers(0, 5))
def test_synapt_lines_make_a_journal_even_with_some_damage(focus: list[str], bad: int) -> None:
    import tempfile

    good = [_line(x) for x in focus]
    damaged = ["{not json", *(["garbage"] * bad)][: max(0, min(bad, len(good)))]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        f.write("\n".join(good + damaged) + "\n")
    try:
        assert looks_like_journal(Path(f.name))
    finally:
        Path(f.name).unlink()
