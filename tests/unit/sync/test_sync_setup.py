"""Setting sync up: which repository a store syncs as (the sync key, the same on every clone),
which machine it is (a copied or restored store is another one), where replicas live (the
URL forms, each refused with what is accepted), and the SFTP location's use of OpenSSH's
`sftp` in batch mode (against a stand-in `sftp` that runs the batch on a local directory)."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recall_sqlite import SyncSetupError, open_store
from recall_sqlite.sync import key as keys
from recall_sqlite.sync.remote import FileRemote, S3Remote, SftpRemote, parse
from recall_sqlite.sync.state import SyncState
from tests.helpers import git, new_repo, run_cli, user_env

FORMS = (
    "git@github.com:Org/Repo.git",
    "ssh://git@github.com/Org/Repo.git",
    "ssh://git@github.com:22/Org/Repo",
    "https://github.com/Org/Repo",
    "https://user:token@github.com/Org/Repo.git/",
    "git://github.com/Org/Repo.git",
    "GitHub.com:Org/Repo",
)


@pytest.mark.parametrize("url", FORMS)
def test_every_form_of_one_remote_is_one_key(url: str) -> None:
    assert keys.normalise_remote(url) == "github.com/Org/Repo"


def test_other_remotes_are_other_keys() -> None:
    assert keys.normalise_remote("git@github.com:Org/Other.git") != "github.com/Org/Repo"
    assert keys.normalise_remote("git@gitlab.com:Org/Repo.git") == "gitlab.com/Org/Repo"
    assert keys.normalise_remote("/srv/git/repo.git") == "path:/srv/git/repo.git"


@given(st.text(min_size=1, max_size=300))
def test_a_slug_is_one_safe_path_segment_and_keys_do_not_collide(key: str) -> None:
    s = keys.slug(key)
    assert "/" not in s and s not in (".", "..") and len(s) <= 89
    assert all(c.isalnum() or c in "._-" for c in s)
    assert keys.slug(key + "x") != s


def test_the_key_comes_from_config_then_file_then_origin_then_root_commit(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert keys.derive(repo) == (f"root:{first}", "the repository's root commit")
    git(repo, "remote", "add", "origin", "https://github.com/org/repo.git")
    assert keys.derive(repo)[0] == "github.com/org/repo"
    (repo / keys.KEY_FILE).write_text("team-key\n")
    assert keys.derive(repo) == ("team-key", keys.KEY_FILE)
    git(repo, "config", keys.GIT_CONFIG_KEY, "mine")
    assert keys.derive(repo)[0] == "mine"


def test_no_key_is_refused_with_what_to_do(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(SyncSetupError, match="--key"):
        keys.derive(plain)
    empty = new_repo(tmp_path / "empty", commit=False)
    with pytest.raises(SyncSetupError, match="no origin remote and no root commit"):
        keys.derive(empty)
    full = new_repo(tmp_path / "full")
    for i in range(3):
        git(full, "commit", "-q", "--allow-empty", "-m", f"c{i}")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{full}", str(shallow))
    git(shallow, "remote", "remove", "origin")
    with pytest.raises(SyncSetupError, match="shallow"):
        keys.derive(shallow)


def test_init_refuses_without_a_key_and_writes_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".grip").mkdir(parents=True)
    done = run_cli("sync", "init", "--url", str(tmp_path / "r"), cwd=ws, env=user_env(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--key" in done.stderr
    assert not list((ws / ".synapt" / "recall").glob("*-sync"))


def test_a_copied_store_is_another_machine(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".grip").mkdir(parents=True)
    with open_store(ws) as s:
        db = s.workspace.db_path
    first = SyncState(db).machine()
    assert SyncState(db).machine() == first  # stable for its file
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    shutil.copytree(SyncState(db).dir, SyncState(copy).dir)
    assert SyncState(copy).machine() != first
    os.replace(copy, db)  # a restore over the same path: another file, another machine
    assert SyncState(db).machine() not in (first,)


@pytest.mark.parametrize(
    ("url", "cls"),
    [
        ("/srv/replicas", FileRemote),
        ("file:///srv/replicas", FileRemote),
        ("relative/dir", FileRemote),
        ("s3://bucket/prefix?endpoint=http://127.0.0.1:9000&force-path-style=true", S3Remote),
        ("sftp://me@host:2222/srv/r?key-path=/k", SftpRemote),
    ],
)
def test_replica_urls(url: str, cls: type) -> None:
    assert isinstance(parse(url), cls)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("", "empty"),
        ("gs://bucket/x", "file://"),
        ("s3:///nobucket", "names a bucket"),
        ("s3://b/p?endpont=x", "unknown s3 options"),
        ("sftp://me:pw@host/x", "no password"),
        ("file://otherhost/x", "local path"),
    ],
)
def test_bad_replica_urls_say_what_is_accepted(url: str, says: str) -> None:
    with pytest.raises(SyncSetupError, match=says):
        parse(url)


def test_s3_replica_block_and_vfs_url() -> None:
    r = parse("s3://b/pre/fix?endpoint=http://127.0.0.1:9&region=eu-1&force-path-style=true")
    assert r.replica("k-1", "m" * 16) == {
        "type": "s3",
        "bucket": "b",
        "path": f"pre/fix/k-1/{'m' * 16}",
        "endpoint": "http://127.0.0.1:9",
        "region": "eu-1",
        "force-path-style": True,
    }
    assert r.vfs_url("k-1", "ab" * 8).startswith(f"s3://b/pre/fix/k-1/{'ab' * 8}?endpoint=")


FAKE_SFTP = r'''#!{python}
"""A stand-in for OpenSSH's sftp -b -: runs ls -1, get, put and -mkdir on a local root."""
import os, shutil, sys
root = os.environ["FAKE_SFTP_ROOT"]
def local(p): return os.path.join(root, p.strip('"').lstrip("/"))
for line in sys.stdin.read().splitlines():
    cmd, *args = line.split(" ", 1)
    arg = args[0] if args else ""
    if cmd == "ls":
        d = local(arg.split(" ", 1)[1])
        if not os.path.isdir(d):
            sys.stderr.write(f"Can't ls: No such file or directory\n"); sys.exit(1)
        for n in sorted(os.listdir(d)): print(n)
    elif cmd == "get":
        src, dst = arg.split('" "')
        if not os.path.exists(local(src)):
            sys.stderr.write("No such file or directory\n"); sys.exit(1)
        shutil.copy(local(src), dst.strip('"'))
    elif cmd == "put":
        src, dst = arg.split('" "')
        shutil.copy(src.strip('"'), local(dst))
    elif cmd == "-mkdir":
        os.makedirs(local(arg), exist_ok=True)
'''


def test_sftp_location_through_a_batch_sftp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "sftp"
    fake.write_text(FAKE_SFTP.replace("{python}", sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    root = tmp_path / "server"
    root.mkdir()
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SFTP_ROOT", str(root))
    r = parse("sftp://me@host:2222/srv/replicas")
    machine = "0123456789abcdef"
    assert r.machines("k") == [] and r.read_owner("k", machine) is None
    r.write_owner("k", machine, {"machine": machine, "host": "h"})
    assert r.machines("k") == [machine]
    assert r.read_owner("k", machine) == {"machine": machine, "host": "h"}
    ltx = root / "srv/replicas/k" / machine / "ltx" / "0"
    ltx.mkdir(parents=True)
    (ltx / "0000000000000001-0000000000000003.ltx").write_bytes(b"x")
    pos = r.position("k", machine)
    assert pos is not None and pos.txid == 3
    assert r.purge("k", machine) is False  # sftp history ages out with the retention
    assert r.replica("k", machine) == {
        "type": "sftp",
        "host": "host:2222",
        "path": f"/srv/replicas/k/{machine}",
        "user": "me",
    }


@pytest.mark.parametrize("command", [["status"], ["pull"], ["run"], ["status", "--json"]])
def test_sync_commands_before_setup_create_no_store(tmp_path: Path, command: list[str]) -> None:
    """A new machine's fresh clone: `sync status` (or pull, run) says how to set up or
    restore and creates nothing, so the `sync restore` that follows finds no store in its
    way (it once met the store `sync status` had just made)."""
    repo = new_repo(tmp_path / "clone")
    done = run_cli("sync", *command, cwd=repo, env=user_env(tmp_path))
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1
    assert "sync init --url" in done.stderr and "sync restore --url" in done.stderr
    assert not (repo / ".synapt").exists()


def test_an_unpurgeable_history_names_the_local_pages_too(tmp_path: Path) -> None:
    # The forget's scan leaves the store's sync state to this note (legacy/copies.py): where
    # the replica cannot be purged, Litestream's local pages are kept too, and said so.
    from recall_sqlite.sync.pause import purged_note

    state = SyncState(tmp_path / "recall-sqlite.db")
    note = purged_note(state, False)
    assert "cannot be purged" in note and str(state.meta) in note
    assert str(state.meta) not in purged_note(state, True)  # removed with the history


def test_the_sync_face_before_and_after_init(tmp_path: Path) -> None:
    """store.sync: nothing set up reads as such (a typed error, nothing created); init sets
    the store up, after which a store opened anew composes the forget's hold and a pull
    with no peer says so."""
    repo = new_repo(tmp_path / "repo")
    git(repo, "remote", "add", "origin", "https://github.com/org/face.git")
    with open_store(repo) as store:
        assert not store.sync.configured()
        with pytest.raises(SyncSetupError, match="sync init"):
            store.sync.status()
        assert store.journal._hold is None  # noqa: SLF001 - what the journal was composed with
        joined = store.sync.init(str(tmp_path / "replicas"))
        assert (joined.key, joined.peers) == ("github.com/org/face", ())
        assert store.sync.configured()
        assert store.sync.config().url == str(tmp_path / "replicas")
    with open_store(repo) as store:
        assert store.journal._hold is not None  # noqa: SLF001
        pulled = store.sync.pull()
        assert (pulled.peers, pulled.failed, pulled.entries) == ((), (), 0)
        assert pulled.to_dict() == {"peers": []}
        assert store.sync.verify().ok  # no peer: nothing to meet


def test_a_machine_id_that_would_leave_the_replica_location_is_refused(tmp_path: Path) -> None:
    """machine.json names this machine's replica directory (and what a forget purges): an
    id of any other shape than the minted one is refused, never used as a path."""
    import json

    ws = tmp_path / "ws"
    (ws / ".grip").mkdir(parents=True)
    with open_store(ws) as s:
        db = s.workspace.db_path
    state = SyncState(db)
    state.machine()
    data = json.loads(state.machine_file.read_text())
    data["machine"] = "../../escaped"
    state.machine_file.write_text(json.dumps(data))
    with pytest.raises(SyncSetupError, match="not a machine id"):
        state.machine()


def test_a_location_lists_only_directories_named_as_machines(tmp_path: Path) -> None:
    base = tmp_path / "replicas"
    for name in ("0123456789abcdef", "..x", "ESCAPED0123456789", "0123456789abcdef0", "note"):
        (base / "key" / name).mkdir(parents=True)
    assert FileRemote(base).machines("key") == ["0123456789abcdef"]


@pytest.mark.parametrize(
    "url",
    [
        "/srv/git/origin",
        "/srv/git/./origin",  # `git clone ./origin` from /srv/git
        "/srv/git/origin/",  # `git clone origin/`
        "/srv/git/origin/.git",
        "//srv/git/origin",
        "file:///srv/git/origin",  # `git clone --depth 1 file:///srv/git/origin`
        "file://localhost/srv/git/origin/",
        "FILE:///srv/git/origin",
    ],
)
def test_every_spelling_of_a_local_origin_is_its_path(url: str) -> None:
    assert keys.normalise_remote(url) == "path:/srv/git/origin"


def test_a_bare_repository_keeps_its_name() -> None:
    assert keys.normalise_remote("file:///srv/git/origin.git") == "path:/srv/git/origin.git"
    assert keys.normalise_remote("/srv/git/origin.git/") == "path:/srv/git/origin.git"


def _replicating(remote: FileRemote, key: str, machine: str, facts: dict[str, str]) -> None:
    """What `sync run` leaves beside a replica: its claim, with its key and facts."""
    from recall_sqlite.sync.owner import Claim

    claim = Claim(remote, keys.slug(key), machine, "0" * 16, key=key, facts=facts)
    remote.write_owner(keys.slug(key), machine, claim._record(stopped=True))


def test_a_clone_with_no_origin_is_told_the_key_its_path_clones_replicate_under(
    tmp_path: Path,
) -> None:
    from recall_sqlite.sync.setup import elsewhere

    laptop = new_repo(tmp_path / "laptop")
    git(tmp_path, "clone", "-q", str(laptop), str(tmp_path / "desktop"))
    desktop_key, _ = keys.derive(tmp_path / "desktop")
    assert desktop_key == f"path:{laptop}"
    remote = FileRemote(tmp_path / "replicas")
    _replicating(remote, desktop_key, "d" * 16, keys.facts(tmp_path / "desktop"))
    root_key, _ = keys.derive(laptop)
    assert root_key.startswith("root:")
    # The laptop's own keys never name the desktop's: only the facts beside its replica.
    assert keys.alternatives(laptop, root_key) == []
    assert elsewhere(remote, laptop, root_key, "a" * 16) == (
        (desktop_key, "the same root commit", ("d" * 16,)),
    )


def test_machines_of_another_repository_or_a_lying_owner_file_are_not_named(
    tmp_path: Path,
) -> None:
    from recall_sqlite.sync.setup import elsewhere

    mine = new_repo(tmp_path / "mine")
    other = new_repo(tmp_path / "other", commit=False)
    git(other, "commit", "-q", "--allow-empty", "-m", "another history")
    remote = FileRemote(tmp_path / "replicas")
    _replicating(remote, "root:" + "0" * 40, "b" * 16, keys.facts(other))
    # An owner file under one key's directory that names another key is not believed.
    facts = keys.facts(mine)
    _replicating(remote, "some-key", "c" * 16, facts)
    owner = remote.read_owner(keys.slug("some-key"), "c" * 16) or {}
    remote.write_owner(keys.slug("some-key"), "c" * 16, {**owner, "key": "another-key"})
    key, _ = keys.derive(mine)
    assert elsewhere(remote, mine, key, "a" * 16) == ()


def test_same_repository_says_how() -> None:
    same = keys.same_repository
    assert same({"root": "r1"}, {"root": "r1"}) == "the same root commit"
    assert same({"root": "r1"}, {"root": "r2"}) is None
    assert same({"origin": "github.com/o/r"}, {"origin": "github.com/o/r"}) == "the same origin"
    assert same({"origin": "path:/x"}, {"path": "path:/x"}) is not None
    assert same({"path": "path:/x"}, {"origin": "path:/x"}) is not None
    assert same({"path": "path:/x"}, {"path": "path:/x"}) is None  # two repos, one path
    assert same({"root": "r1"}, "not a dict") is None
