"""Workspace / worktree / branch resolution and the workspace id file."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import stat
import string
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_sqlite.errors import WorkspaceError
from recall_sqlite.paths import idfile as wsmod
from recall_sqlite.paths.datadir import data_dir, default_db_path
from recall_sqlite.paths.files import ensure_private_dir
from recall_sqlite.paths.git import read_branch
from recall_sqlite.paths.idfile import ensure_workspace_id, read_workspace_id
from recall_sqlite.paths.resolve import RESOLVED_BY, resolve
from tests.helpers import git

# --------------------------------------------------------------------------- helpers


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    # A HOME of our own, so no test depends on (or can refuse) the real one.
    return {"HOME": str(tmp_path / "home"), **extra}


def mkdirs(*paths: Path) -> None:
    for p in paths:
        p.mkdir(parents=True, exist_ok=True)


def make_grip(root: Path) -> Path:
    mkdirs(root / ".grip")
    return root.resolve()


def make_git_dir(checkout: Path, branch: str = "main") -> Path:
    """A minimal main checkout: enough of `.git` for the filesystem reader."""
    dotgit = checkout / ".git"
    mkdirs(dotgit)
    (dotgit / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
    return dotgit


def make_linked(
    main: Path, linked: Path, name: str, branch: str, *, relative: bool = False
) -> None:
    """What `git worktree add` leaves on disk, without running git."""
    private = main / ".git" / "worktrees" / name
    mkdirs(private, linked)
    (private / "commondir").write_text("../..\n")
    (private / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
    (private / "gitdir").write_text(str(linked / ".git") + "\n")
    target = os.path.relpath(private, linked) if relative else str(private)
    (linked / ".git").write_text(f"gitdir: {target}\n")


@pytest.fixture
def no_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("workspace resolution must not start a subprocess")

    monkeypatch.setattr(subprocess, "Popen", boom)
    monkeypatch.setattr(os, "system", boom)


# --------------------------------------------------------------------------- markers


def test_grip_workspace_and_constituent_repo(tmp_path: Path) -> None:
    ws = make_grip(tmp_path / "ws")
    mkdirs(ws / "sub", ws / "sub" / "repo" / "x")
    make_git_dir(ws / "sub" / "repo", "dev")
    env = env_for(tmp_path)

    at_root = resolve(ws, env=env)
    at_sub = resolve(ws / "sub", env=env)
    in_repo = resolve(ws / "sub" / "repo" / "x", env=env)

    assert at_root.root == at_sub.root == in_repo.root == ws
    assert at_root.resolved_by == in_repo.resolved_by == "grip"
    assert not at_root.weak and at_root.warnings == ()
    assert (at_root.worktree, at_sub.worktree) == (".", ".")
    assert at_root.worktree_root == ws and at_root.worktree_name == "ws"
    # The constituent repo's .git is a desk inside the workspace, never the workspace.
    assert in_repo.worktree == "sub/repo"
    assert in_repo.worktree_root == ws / "sub" / "repo"
    assert in_repo.worktree_name == "repo"
    assert in_repo.branch == "dev"
    assert at_root.branch == ""


def test_subdirectories_share_a_worktree_equal_basenames_do_not(tmp_path: Path) -> None:
    ws = make_grip(tmp_path / "ws")
    for parent in ("a", "b"):
        mkdirs(ws / parent / "proj" / "src" / "deep")
        make_git_dir(ws / parent / "proj")
    env = env_for(tmp_path)

    top = resolve(ws / "a" / "proj", env=env)
    deep = resolve(ws / "a" / "proj" / "src" / "deep", env=env)
    other = resolve(ws / "b" / "proj" / "src", env=env)

    assert top.worktree == deep.worktree == "a/proj"
    assert other.worktree == "b/proj"
    assert top.worktree_name == other.worktree_name == "proj"
    assert top.root == other.root == ws


def test_nested_grip_desk_is_its_own_worktree(tmp_path: Path) -> None:
    ws = make_grip(tmp_path / "ws")
    desk = ws / "agents" / "desk1"
    mkdirs(desk / ".grip", desk / "work")
    got = resolve(desk / "work", env=env_for(tmp_path))
    # Nearest marker wins for the root; the desk is recorded as the worktree.
    assert got.root == desk.resolve()
    assert got.worktree == "."


def test_gitgrip_root(tmp_path: Path) -> None:
    gs = (tmp_path / "gs").resolve()
    mkdirs(gs / ".gitgrip", gs / "app" / "src")
    (gs / ".gitgrip" / "griptrees.json").write_text('{"griptrees": {}}')
    make_git_dir(gs / "app", "main")

    got = resolve(gs / "app" / "src", env=env_for(tmp_path))
    assert (got.root, got.resolved_by, got.worktree, got.branch) == (gs, "gitgrip", "app", "main")
    assert resolve(gs, env=env_for(tmp_path)).worktree == "."


def _gripspace_with_linked_griptree(tmp_path: Path) -> tuple[Path, Path]:
    gs = (tmp_path / "gs").resolve()
    mkdirs(gs / ".gitgrip", gs / "app")
    (gs / ".gitgrip" / "griptrees.json").write_text('{"griptrees": {"feat": {}}}')
    make_git_dir(gs / "app", "main")
    tree = (tmp_path / "gs-feat").resolve()
    mkdirs(tree / ".gitgrip", tree / "app" / "src")
    (tree / ".gitgrip" / "griptree.json").write_text(
        json.dumps({"branch": "feat", "path": str(tree)})
    )
    make_linked(gs / "app", tree / "app", "feat", "feat")
    return gs, tree


def test_linked_griptree_resolves_to_parent(tmp_path: Path, no_subprocess: None) -> None:
    gs, tree = _gripspace_with_linked_griptree(tmp_path)
    env = env_for(tmp_path)

    in_repo = resolve(tree / "app" / "src", env=env)
    assert (in_repo.root, in_repo.resolved_by) == (gs, "gitgrip")
    assert in_repo.worktree_root == tree / "app"
    # a linked worktree of the checkout `app`: keyed by git's administrative name
    assert in_repo.worktree == "app@feat"
    assert in_repo.branch == "feat"
    assert in_repo.warnings == ()

    at_tree = resolve(tree, env=env)
    assert at_tree.root == gs
    assert at_tree.worktree_root == tree and at_tree.worktree_name == "gs-feat"
    # The parent's own desk is a different worktree.
    assert resolve(gs / "app", env=env).worktree == "app"


def test_linked_griptree_membership_beats_its_own_markers(tmp_path: Path) -> None:
    gs, tree = _gripspace_with_linked_griptree(tmp_path)
    # `gr` may copy the whole .gitgrip (griptrees.json too) and a .grip/ into the tree.
    (tree / ".gitgrip" / "griptrees.json").write_text("{}")
    mkdirs(tree / ".grip")
    assert resolve(tree / "app" / "src", env=env_for(tmp_path)).root == gs


def test_linked_griptree_via_griptree_pointer(tmp_path: Path) -> None:
    gs = (tmp_path / "gs").resolve()
    mkdirs(gs / ".gitgrip")
    (gs / ".gitgrip" / "griptrees.json").write_text("{}")
    tree = (tmp_path / "tree").resolve()
    mkdirs(tree / ".gitgrip", tree / "notes")
    (tree / ".gitgrip" / "griptree.json").write_text("{}")
    (tree / ".griptree").write_text(json.dumps({"mainWorkspace": str(gs), "branch": "x"}))
    got = resolve(tree / "notes", env=env_for(tmp_path))
    assert (got.root, got.resolved_by) == (gs, "gitgrip")


def test_unresolvable_griptree(tmp_path: Path) -> None:
    tree = (tmp_path / "tree").resolve()
    mkdirs(tree / ".gitgrip", tree / "x")
    (tree / ".gitgrip" / "griptree.json").write_text("not json at all")
    got = resolve(tree / "x", env=env_for(tmp_path))
    assert (got.root, got.resolved_by) == (tree, "gitgrip")
    assert any("parent gripspace could not be found" in w for w in got.warnings)

    mkdirs(tree / ".grip")
    got = resolve(tree / "x", env=env_for(tmp_path))
    assert (got.root, got.resolved_by, got.warnings) == (tree, "grip", ())


# --------------------------------------------------------------------------- git


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_real_git_main_and_linked_worktree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    main = (tmp_path / "proj").resolve()
    mkdirs(main / "src")
    git(main, "init", "-q", "-b", "main")
    git(main, "commit", "-q", "--allow-empty", "-m", "init")
    git(main, "worktree", "add", "-q", "../wt-feature", "-b", "feature/x")
    linked = (tmp_path / "wt-feature").resolve()
    mkdirs(linked / "pkg")
    env = env_for(tmp_path)

    def boom(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("no subprocess during resolution")

    monkeypatch.setattr(subprocess, "Popen", boom)

    m = resolve(main / "src", env=env)
    f = resolve(linked / "pkg", env=env)
    assert m.root == f.root == main
    assert m.resolved_by == f.resolved_by == "git"
    assert (m.worktree, m.worktree_root, m.branch) == (".", main, "main")
    # git's administrative name, which `git worktree move` keeps, not the path
    assert (f.worktree, f.worktree_root, f.branch) == ("@wt-feature", linked, "feature/x")
    assert f.worktree_name == "wt-feature"
    assert m.warnings == f.warnings == ()

    monkeypatch.undo()
    git(main, "checkout", "-q", "--detach")
    assert read_branch(main) == ""
    assert resolve(main, env=env).branch == ""
    assert read_branch(linked) == "feature/x"


def test_linked_worktree_relative_gitdir(tmp_path: Path) -> None:
    main = (tmp_path / "main").resolve()
    make_git_dir(main)
    linked = (tmp_path / "side" / "wt").resolve()
    make_linked(main, linked, "wt", "topic", relative=True)
    got = resolve(linked, env=env_for(tmp_path))
    assert (got.root, got.worktree_root, got.branch) == (main, linked, "topic")


def test_linked_worktree_outside_grip_workspace(tmp_path: Path) -> None:
    ws = make_grip(tmp_path / "ws")
    make_git_dir(ws / "repo")
    linked = (tmp_path / "elsewhere" / "feat").resolve()
    make_linked(ws / "repo", linked, "feat", "feat")
    mkdirs(linked / "src")
    got = resolve(linked / "src", env=env_for(tmp_path))
    assert (got.root, got.resolved_by) == (ws, "grip")
    assert (got.worktree_root, got.branch) == (linked, "feat")


def test_linked_worktree_of_bare_repo_and_dangling_pointer(tmp_path: Path) -> None:
    bare = (tmp_path / "repo.git").resolve()
    mkdirs(bare)
    linked = (tmp_path / "wt").resolve()
    make_linked_bare = bare / "worktrees" / "wt"
    mkdirs(make_linked_bare, linked)
    (make_linked_bare / "commondir").write_text("../..\n")
    (make_linked_bare / "HEAD").write_text("ref: refs/heads/b\n")
    (linked / ".git").write_text(f"gitdir: {make_linked_bare}\n")
    got = resolve(linked, env=env_for(tmp_path))
    assert (got.root, got.resolved_by, got.branch) == (linked, "git", "b")
    assert any("bare repository" in w for w in got.warnings)

    gone = (tmp_path / "gone").resolve()
    mkdirs(gone)
    (gone / ".git").write_text(f"gitdir: {tmp_path / 'nowhere'}\n")
    got = resolve(gone, env=env_for(tmp_path))
    assert got.root == gone and any("does not exist" in w for w in got.warnings)
    assert got.branch == ""


def test_read_branch_edge_cases(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    dotgit = make_git_dir(repo)
    (dotgit / "HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")
    assert read_branch(repo) == ""
    (dotgit / "HEAD").write_bytes(b"ref: refs/heads/\xff\n")
    assert read_branch(repo) == ""
    (dotgit / "HEAD").write_text("ref: refs/heads/.invalid\n")  # reftable placeholder
    assert read_branch(repo) == ""
    (dotgit / "HEAD").unlink()
    assert read_branch(repo) == ""
    assert read_branch(tmp_path / "not-a-repo") == ""


branch_names = st.text(
    alphabet=string.ascii_letters + string.digits + "-_./", min_size=1, max_size=30
).filter(lambda s: s != ".invalid" and s.strip() == s)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=branch_names)
def test_read_branch_roundtrip(tmp_path: Path, name: str) -> None:
    dotgit = make_git_dir(tmp_path / "rt")
    (dotgit / "HEAD").write_text(f"ref: refs/heads/{name}\n")
    assert read_branch(tmp_path / "rt") == name


# --------------------------------------------------------------------------- fallback, env


def test_directory_fallback_is_weak(tmp_path: Path) -> None:
    d = (tmp_path / "loose" / "dir").resolve()
    mkdirs(d)
    got = resolve(d, env=env_for(tmp_path))
    assert (got.root, got.resolved_by, got.weak, got.worktree) == (d, "directory", True, ".")
    assert got.warnings and "weak" in got.warnings[0]


def test_bad_cwd(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        resolve(tmp_path / "missing", env=env_for(tmp_path))
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(WorkspaceError, match="not a directory"):
        resolve(f, env=env_for(tmp_path))


def test_symlinked_cwd_resolves(tmp_path: Path) -> None:
    ws = make_grip(tmp_path / "ws")
    mkdirs(ws / "a")
    (tmp_path / "link").symlink_to(ws / "a")
    got = resolve(tmp_path / "link", env=env_for(tmp_path))
    assert got.root == ws and got.worktree == "."


def test_synapt_recall_root(tmp_path: Path) -> None:
    target = (tmp_path / "store-root").resolve()
    mkdirs(target)
    ws = make_grip(tmp_path / "ws")
    env = env_for(tmp_path, SYNAPT_RECALL_ROOT=str(target), GRIPSPACE_ROOT=str(ws))
    got = resolve(ws, env=env)
    assert (got.root, got.resolved_by, got.weak) == (target, "SYNAPT_RECALL_ROOT", False)
    assert any("GRIPSPACE_ROOT" in w for w in got.warnings)


def test_synapt_recall_root_must_exist(tmp_path: Path) -> None:
    typo = tmp_path / "tpyo"
    env = env_for(tmp_path, SYNAPT_RECALL_ROOT=str(typo))
    with pytest.raises(WorkspaceError, match="SYNAPT_RECALL_ROOT") as info:
        resolve(tmp_path, env=env)
    assert str(typo) in str(info.value)
    assert not typo.exists()
    (tmp_path / "plain").write_text("")
    with pytest.raises(WorkspaceError, match="not a directory"):
        resolve(tmp_path, env=env_for(tmp_path, SYNAPT_RECALL_ROOT=str(tmp_path / "plain")))


def test_gripspace_root_env(tmp_path: Path) -> None:
    ws = make_grip(tmp_path / "ws")
    sibling = (tmp_path / "agent-desk").resolve()
    make_git_dir(sibling, "agent")
    got = resolve(sibling, env=env_for(tmp_path, GRIPSPACE_ROOT=str(ws)))
    assert (got.root, got.resolved_by) == (ws, "GRIPSPACE_ROOT")
    # A desk that is the workspace's filesystem sibling keeps its own identity.
    assert (got.worktree_root, got.worktree, got.branch) == (sibling, sibling.as_posix(), "agent")
    with pytest.raises(WorkspaceError, match="GRIPSPACE_ROOT"):
        resolve(sibling, env=env_for(tmp_path, GRIPSPACE_ROOT=str(tmp_path / "nope")))
    assert not (tmp_path / "nope").exists()


def test_root_argument(tmp_path: Path) -> None:
    ws = make_grip(tmp_path / "ws")
    other = (tmp_path / "other").resolve()
    mkdirs(other)
    env = env_for(tmp_path, SYNAPT_RECALL_ROOT=str(ws))
    got = resolve(ws, root=other, env=env)
    assert (got.root, got.resolved_by) == (other, "argument")
    with pytest.raises(WorkspaceError, match="root argument"):
        resolve(ws, root=tmp_path / "missing", env=env)


def test_worktree_label(tmp_path: Path) -> None:
    ws = make_grip(tmp_path / "ws")
    mkdirs(ws / "repo")
    make_git_dir(ws / "repo", "dev")
    got = resolve(ws / "repo", env=env_for(tmp_path, SYNAPT_RECALL_WORKTREE="desk-7"))
    assert (got.worktree, got.worktree_name) == ("desk-7", "desk-7")
    assert got.worktree_root == ws / "repo" and got.branch == "dev"
    for bad in ("a/b", "a\\b", "..", ".", " x", "x\n"):
        with pytest.raises(WorkspaceError, match="SYNAPT_RECALL_WORKTREE"):
            resolve(ws, env=env_for(tmp_path, SYNAPT_RECALL_WORKTREE=bad))


def test_os_environ_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_grip(tmp_path / "ws")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SYNAPT_RECALL_WORKTREE", "from-env")
    monkeypatch.delenv("SYNAPT_RECALL_ROOT", raising=False)
    monkeypatch.delenv("GRIPSPACE_ROOT", raising=False)
    monkeypatch.chdir(ws)
    got = resolve()
    assert got.root == ws and got.worktree == "from-env"


# --------------------------------------------------------------------------- $HOME and /


def test_home_is_never_a_root(tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    mkdirs(home / "notes")
    env = env_for(tmp_path)
    with pytest.raises(WorkspaceError, match=r"\$HOME"):
        resolve(home, env=env)
    # A dotfiles repo or a stray marker at $HOME must not capture everything below it.
    make_git_dir(home)
    mkdirs(home / ".grip")
    got = resolve(home / "notes", env=env)
    assert (got.root, got.resolved_by) == (home / "notes", "directory")
    for var in ("SYNAPT_RECALL_ROOT", "GRIPSPACE_ROOT"):
        with pytest.raises(WorkspaceError, match=r"\$HOME"):
            resolve(home / "notes", env={**env, var: str(home)})
    with pytest.raises(WorkspaceError, match=r"\$HOME"):
        resolve(home / "notes", root="~", env=env)


def test_home_via_symlink_is_refused(tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    mkdirs(home)
    (tmp_path / "alias").symlink_to(home)
    with pytest.raises(WorkspaceError, match=r"\$HOME"):
        resolve(tmp_path / "alias", env={"HOME": str(tmp_path / "alias")})


def test_filesystem_root_is_never_a_root(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    with pytest.raises(WorkspaceError, match="filesystem root"):
        resolve("/", env=env)
    with pytest.raises(WorkspaceError, match="filesystem root"):
        resolve(tmp_path, root="/", env=env)


def test_linked_worktree_of_home_repo_is_refused(tmp_path: Path) -> None:
    home = (tmp_path / "home").resolve()
    make_git_dir(home)
    linked = (tmp_path / "dotfiles-wt").resolve()
    make_linked(home, linked, "d", "d")
    with pytest.raises(WorkspaceError, match=r"\$HOME"):
        resolve(linked, env=env_for(tmp_path))


# --------------------------------------------------------------------------- data dir, id


def test_paths() -> None:
    root = Path("/x/ws")
    # Text, like every path the engine keeps (paths/files.py); a str or a Path root alike.
    for spelled in (root, "/x/ws", "/x//ws/"):
        assert data_dir(spelled) == str(root / ".synapt" / "recall")
        assert default_db_path(spelled) == str(root / ".synapt" / "recall" / "recall-sqlite.db")
    assert RESOLVED_BY == (
        "argument",
        "SYNAPT_RECALL_ROOT",
        "GRIPSPACE_ROOT",
        "grip",
        "gitgrip",
        "git",
        "directory",
    )


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_ensure_private_dir(tmp_path: Path, umask_022: None) -> None:
    existing = tmp_path / "existing"
    existing.mkdir(mode=0o755)
    target = existing / "a" / "b"
    ensure_private_dir(target)
    ensure_private_dir(target)  # idempotent
    assert stat.S_IMODE((existing / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert stat.S_IMODE(existing.stat().st_mode) == 0o755  # not ours: untouched
    (tmp_path / "f").write_text("")
    with pytest.raises(WorkspaceError, match="not a directory"):
        ensure_private_dir(tmp_path / "f")
    with pytest.raises(WorkspaceError):
        ensure_private_dir(tmp_path / "f" / "sub")


def test_workspace_id_minted_once(tmp_path: Path, umask_022: None) -> None:
    root = make_grip(tmp_path / "ws")
    assert read_workspace_id(root) is None
    assert not (root / ".synapt").exists()  # reading has no side effects

    first = ensure_workspace_id(root)
    assert str(uuid.UUID(first)) == first and uuid.UUID(first).version == 4
    assert ensure_workspace_id(root) == first == read_workspace_id(root)

    path = Path(data_dir(root)) / "workspace.json"
    doc = json.loads(path.read_text())
    assert doc["workspace_id"] == first and doc["created_at"].endswith("+00:00")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((root / ".synapt").stat().st_mode) == 0o700
    assert stat.S_IMODE(Path(data_dir(root)).stat().st_mode) == 0o700
    assert sorted(p.name for p in Path(data_dir(root)).iterdir()) == ["workspace.json"]


def test_workspace_id_without_hard_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_link(*_a: Any, **_k: Any) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)
    root = make_grip(tmp_path / "ws")
    first = ensure_workspace_id(root)
    assert ensure_workspace_id(root) == first
    path = Path(data_dir(root)) / "workspace.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in Path(data_dir(root)).iterdir()) == ["workspace.json"]


def test_workspace_id_lost_race_returns_winner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_grip(tmp_path / "ws")
    winner = str(uuid.uuid4())
    ensure_private_dir(Path(data_dir(root)))
    real_read = wsmod.read_workspace_id
    calls = {"n": 0}

    def late_read(r: Path) -> str | None:
        calls["n"] += 1
        if calls["n"] == 1:
            # Between our check and our publish another process writes its id.
            (Path(data_dir(r)) / "workspace.json").write_text(json.dumps({"workspace_id": winner}))
            return None
        return real_read(r)

    monkeypatch.setattr(wsmod, "read_workspace_id", late_read)
    assert ensure_workspace_id(root) == winner
    assert (
        json.loads((Path(data_dir(root)) / "workspace.json").read_text())["workspace_id"] == winner
    )
    assert sorted(p.name for p in Path(data_dir(root)).iterdir()) == ["workspace.json"]


def _mint_worker(root: str, barrier: Any, out: Any) -> None:
    barrier.wait()
    out.put(ensure_workspace_id(Path(root)))


def test_workspace_id_concurrent_processes(tmp_path: Path) -> None:
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx: Any = multiprocessing.get_context(method)
    n = 8
    for round_ in range(3):
        root = make_grip(tmp_path / f"ws{round_}")
        barrier = ctx.Barrier(n)
        out = ctx.Queue()
        procs = [ctx.Process(target=_mint_worker, args=(str(root), barrier, out)) for _ in range(n)]
        for p in procs:
            p.start()
        ids = [out.get(timeout=20) for _ in range(n)]
        for p in procs:
            p.join(timeout=20)
            assert p.exitcode == 0
        assert len(set(ids)) == 1
        assert read_workspace_id(root) == ids[0]
        assert sorted(p.name for p in Path(data_dir(root)).iterdir()) == ["workspace.json"]


@pytest.mark.parametrize(
    "content",
    [
        "",
        "{not json",
        "[1, 2]",
        '"just a string"',
        "{}",
        '{"workspace_id": 42}',
        '{"workspace_id": "not-a-uuid"}',
        json.dumps({"workspace_id": str(uuid.uuid4()).upper()}),
        json.dumps({"workspace_id": uuid.uuid4().hex}),
        json.dumps({"workspace_id": "00000000-0000-0000-0000-000000000000"}),
    ],
)
def test_corrupt_workspace_json_is_an_error(tmp_path: Path, content: str) -> None:
    root = make_grip(tmp_path / "ws")
    ensure_private_dir(Path(data_dir(root)))
    path = Path(data_dir(root)) / "workspace.json"
    path.write_text(content)
    with pytest.raises(WorkspaceError, match="workspace.json"):
        read_workspace_id(root)
    with pytest.raises(WorkspaceError, match="workspace.json"):
        ensure_workspace_id(root)
    assert path.read_text() == content  # never silently re-minted


def test_workspace_json_extra_fields_are_kept(tmp_path: Path) -> None:
    root = make_grip(tmp_path / "ws")
    ensure_private_dir(Path(data_dir(root)))
    wid = str(uuid.uuid4())
    (Path(data_dir(root)) / "workspace.json").write_text(
        json.dumps({"workspace_id": wid, "note": "hand-edited"})
    )
    assert ensure_workspace_id(root) == wid


# --------------------------------------------------------------------------- properties

segment = st.text(alphabet=string.ascii_letters + string.digits + "-_. ", min_size=1, max_size=8)
segment = segment.filter(lambda s: s not in (".", "..") and s.strip() == s)


@pytest.fixture(scope="module")
def prop_ws(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, str]]:
    base = tmp_path_factory.mktemp("prop")
    ws = make_grip(base / "ws")
    make_git_dir(ws / "repo", "trunk")
    return ws, ensure_workspace_id(ws), {"HOME": str(base / "home")}


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(segment, max_size=4), in_repo=st.booleans())
def test_any_subdirectory_resolves_to_the_same_workspace(
    prop_ws: tuple[Path, str, dict[str, str]], parts: list[str], in_repo: bool
) -> None:
    ws, wid, env = prop_ws
    # A generated name must not plant a marker of its own.
    if any(p in (".git", ".grip", ".gitgrip", "repo", ".synapt") for p in parts):
        return
    base = ws / "repo" if in_repo else ws
    cwd = base.joinpath(*parts)
    cwd.mkdir(parents=True, exist_ok=True)

    got = resolve(cwd, env=env)
    assert got.root == ws and got.resolved_by == "grip" and not got.weak
    assert ensure_workspace_id(got.root) == wid
    if in_repo:
        assert (got.worktree, got.branch) == ("repo", "trunk")
    else:
        assert (got.worktree, got.branch) == (".", "")


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX modes and paths")
