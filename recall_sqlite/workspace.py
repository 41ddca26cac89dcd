"""Path -> workspace / worktree / branch, from the filesystem alone.

No SQL and no subprocess: hooks call this on every tool use, so it must be cheap and must
not depend on a `git` binary being on PATH. Every answer says how it was reached
(`resolved_by`) and what was doubtful about it (`warnings`), because a store chosen by a
wrong guess looks exactly like a store with a short history.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from ._record import Frozen
from .errors import WorkspaceError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Final

__all__ = [
    "RESOLVED_BY",
    "Workspace",
    "data_dir",
    "linked_admin",
    "default_db_path",
    "ensure_private_dir",
    "check_data_dir",
    "ensure_gitignore",
    "ensure_workspace_id",
    "linked_worktrees",
    "read_branch",
    "read_workspace_id",
    "resolve",
    "worktree_key",
    "restore_workspace_id",
]

RESOLVED_BY: Final = (
    "argument",
    "SYNAPT_RECALL_ROOT",
    "GRIPSPACE_ROOT",
    "grip",
    "gitgrip",
    "git",
    "directory",
)

WORKSPACE_FILE: Final = "workspace.json"
DB_FILE: Final = "recall-sqlite.db"

# Marker/pointer files are tiny; a cap keeps a hostile or mistaken multi-GB file from
# stalling a hook.
_SMALL_FILE_LIMIT: Final = 64 * 1024
# Bounds the directory scan done for a linked griptree so a huge directory cannot make
# resolution slow.
_GRIPTREE_SCAN_LIMIT: Final = 1024
_NIL_UUIDS: Final = frozenset(
    {"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"}
)


class Workspace(Frozen):
    __slots__ = (
        "root",
        "resolved_by",
        "weak",
        "worktree_root",
        "worktree",
        "worktree_name",
        "branch",
        "warnings",
    )
    root: Path
    resolved_by: str
    weak: bool
    worktree_root: Path
    worktree: str
    worktree_name: str
    branch: str
    warnings: tuple[str, ...]

    def __init__(
        self,
        root: Path,
        resolved_by: str,
        weak: bool,
        worktree_root: Path,
        worktree: str,
        worktree_name: str,
        branch: str,
        warnings: tuple[str, ...],
    ) -> None:
        self._set(
            root=root,
            resolved_by=resolved_by,
            weak=weak,
            worktree_root=worktree_root,
            worktree=worktree,
            worktree_name=worktree_name,
            branch=branch,
            warnings=warnings,
        )


# --------------------------------------------------------------------------- helpers


def _resolve_path(path: Path, what: str) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop on Python < 3.13
        raise WorkspaceError(f"cannot resolve {what} {str(path)!r}: {exc}") from exc


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class _Home:
    """$HOME as a path *and* an inode: comparing by inode also catches $HOME reached by a
    differently-cased or bind-mounted spelling that `resolve()` does not canonicalise."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.path = _home_path(env)
        self.key = _stat_key(self.path) if self.path is not None else None

    def is_home(self, path: Path) -> bool:
        if self.path is None:
            return False
        if path == self.path:
            return True
        return self.key is not None and _stat_key(path) == self.key


def _home_path(env: Mapping[str, str]) -> Path | None:
    value = env.get("HOME", "")
    if value and os.path.isabs(value):
        try:
            return Path(value).resolve()
        except (OSError, RuntimeError):
            return Path(value)
    # An env without HOME (a sanitised hook environment) must not switch the guard off.
    if sys.platform != "win32":
        import pwd

        try:
            return Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
        except (KeyError, OSError, RuntimeError):
            return None
    try:
        return Path.home().resolve()
    except (OSError, RuntimeError):
        return None


def _is_fs_root(path: Path) -> bool:
    return path == path.parent


def _walk_up(start: Path, home: _Home) -> Iterator[Path]:
    """`start` and its ancestors, never yielding $HOME or the filesystem root and never
    going above $HOME: anything found there is above every project."""
    current = start
    while not _is_fs_root(current) and not home.is_home(current):
        yield current
        current = current.parent


def _read_small(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            data = fh.read(_SMALL_FILE_LIMIT + 1)
    except OSError:
        return None
    if len(data) > _SMALL_FILE_LIMIT:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _first_line(text: str) -> str:
    lines = text.splitlines()
    return lines[0].strip() if lines else ""


def _read_gitdir_pointer(dotgit_file: Path) -> Path | None:
    """The directory a `.git` *file* points at (`gitdir: <path>`), relative paths being
    relative to the file's own directory, as git reads them."""
    text = _read_small(dotgit_file)
    if text is None:
        return None
    line = _first_line(text)
    if not line.startswith("gitdir:"):
        return None
    value = line[len("gitdir:") :].strip()
    if not value:
        return None
    target = Path(value)
    if not target.is_absolute():
        target = dotgit_file.parent / target
    try:
        return target.resolve()
    except (OSError, RuntimeError):
        return None


def _common_dir(gitdir: Path) -> tuple[Path, bool]:
    """(common git dir, whether gitdir is a linked worktree's private dir)."""
    text = _read_small(gitdir / "commondir")
    if text is None:
        return gitdir, False
    value = _first_line(text)
    if not value:
        return gitdir, False
    common = Path(value)
    if not common.is_absolute():
        common = gitdir / common
    try:
        return common.resolve(), True
    except (OSError, RuntimeError):
        return common, True


def _is_checkout_root(directory: Path) -> bool:
    return (
        os.path.lexists(directory / ".git")
        or (directory / ".grip").is_dir()
        or (directory / ".gitgrip" / "griptree.json").is_file()
    )


def _is_gripspace_root(directory: Path) -> bool:
    return (directory / ".gitgrip" / "griptrees.json").is_file() or (directory / ".grip").is_dir()


# --------------------------------------------------------------------------- markers


def _griptree_parent(griptree: Path, home: _Home) -> Path | None:
    """The gripspace a linked griptree belongs to, or None if that cannot be established.

    Git's own worktree pointers are tried first because git keeps them current; the
    paths gitgrip records are a fallback since a moved gripspace leaves them stale.
    """
    for child in _griptree_children(griptree):
        dotgit = child / ".git"
        if not dotgit.is_file():
            continue
        gitdir = _read_gitdir_pointer(dotgit)
        if gitdir is None:
            continue
        common, linked = _common_dir(gitdir)
        if not linked:
            # No commondir file: fall back to the conventional `<repo>/.git/worktrees/<n>`.
            common = next((p for p in (gitdir, *gitdir.parents) if p.name == ".git"), gitdir)
        if common.name != ".git":
            continue
        for candidate in _walk_up(common.parent, home):
            if candidate == griptree:
                break
            if (candidate / ".gitgrip" / "griptrees.json").is_file():
                return candidate
    for declared in _griptree_declared_parents(griptree):
        if declared != griptree and _is_gripspace_root(declared) and not home.is_home(declared):
            return declared
    return None


def _griptree_children(griptree: Path) -> list[Path]:
    children: list[Path] = []
    try:
        with os.scandir(griptree) as entries:
            for index, entry in enumerate(entries):
                if index >= _GRIPTREE_SCAN_LIMIT:
                    break
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                        children.append(Path(entry.path))
    except OSError:
        return []
    # Sorted so two processes pick the same sub-repo when several could answer.
    return sorted(children)


def _griptree_declared_parents(griptree: Path) -> Iterator[Path]:
    """Parent paths recorded by gitgrip: `.griptree` (mainWorkspace) and, if a tool put
    one there, a parent key in `.gitgrip/griptree.json` (whose own `path` is the griptree
    itself, not its parent)."""
    keys = ("mainWorkspace", "main_workspace", "parent", "gripspace_root", "gripspaceRoot")
    for source in (griptree / ".griptree", griptree / ".gitgrip" / "griptree.json"):
        text = _read_small(source)
        if text is None:
            continue
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        for key in keys:
            value = data.get(key)
            if isinstance(value, str) and value:
                path = Path(value)
                if not path.is_absolute():
                    path = griptree / path
                try:
                    resolved = path.resolve()
                except (OSError, RuntimeError):
                    continue
                if resolved.is_dir():
                    yield resolved


def _marker_at(directory: Path, home: _Home, warnings: list[str]) -> tuple[Path, str] | None:
    gitgrip = directory / ".gitgrip"
    # A linked griptree is checked before the other markers because membership beats
    # locality: its data belongs with the gripspace it is a member of, even if `gr`
    # also copied a griptrees.json or a .grip/ into it.
    if (gitgrip / "griptree.json").is_file():
        parent = _griptree_parent(directory, home)
        if parent is not None:
            return parent, "gitgrip"
        if (directory / ".grip").is_dir():
            return directory, "grip"
        warnings.append(
            f"{directory} is a linked griptree (.gitgrip/griptree.json) but its parent "
            "gripspace could not be found; using the griptree itself as the workspace root"
        )
        return directory, "gitgrip"
    if (gitgrip / "griptrees.json").is_file():
        return directory, "gitgrip"
    if (directory / ".grip").is_dir():
        return directory, "grip"
    return None


def _find_marker(start: Path, home: _Home, warnings: list[str]) -> tuple[Path, str] | None:
    for directory in _walk_up(start, home):
        found = _marker_at(directory, home, warnings)
        if found is not None:
            return found
    return None


# --------------------------------------------------------------------------- git


def _git_root(start: Path, home: _Home, warnings: list[str]) -> tuple[Path, bool] | None:
    """(workspace root from the nearest `.git`, whether it came through a linked worktree)."""
    for directory in _walk_up(start, home):
        dotgit = directory / ".git"
        if dotgit.is_dir():
            return directory, False
        if dotgit.is_file():
            return _linked_main_root(directory, dotgit, warnings), True
    return None


def _linked_main_root(checkout: Path, dotgit: Path, warnings: list[str]) -> Path:
    gitdir = _read_gitdir_pointer(dotgit)
    if gitdir is None:
        warnings.append(
            f"{dotgit} is not a readable 'gitdir: <path>' pointer; "
            f"using {checkout} as the workspace root"
        )
        return checkout
    if not gitdir.is_dir():
        warnings.append(
            f"{dotgit} points at {gitdir}, which does not exist (moved or pruned?); "
            f"using {checkout} as the workspace root"
        )
        return checkout
    common, linked = _common_dir(gitdir)
    if not linked:
        # A separated git dir (submodule, --separate-git-dir) is its own repository whose
        # checkout is right here.
        return checkout
    if not common.is_dir():
        warnings.append(
            f"{gitdir}/commondir names {common}, which does not exist; "
            f"using {checkout} as the workspace root"
        )
        return checkout
    if common.name == ".git":
        return common.parent
    warnings.append(
        f"{checkout} is a linked worktree of the bare repository {common}; "
        "using the worktree itself as the workspace root"
    )
    return checkout


# --------------------------------------------------------------------------- resolve


def _explicit_root(value: str | os.PathLike[str], source: str, base: Path, home: _Home) -> Path:
    text = os.fspath(value)
    path = Path(text)
    if home.path is not None and (text == "~" or text.startswith("~/")):
        path = home.path / text[2:]
    if not path.is_absolute():
        path = base / path
    what = "the root argument" if source == "argument" else f"{source}={text!r}"
    if not path.exists():
        raise WorkspaceError(
            f"{what}: {path} does not exist; refusing to create a store under a path "
            "that may be a typo (create the directory first)"
        )
    if not path.is_dir():
        raise WorkspaceError(f"{what}: {path} is not a directory")
    return _resolve_path(path, what)


def _check_root(root: Path, home: _Home, resolved_by: str) -> None:
    if resolved_by in ("argument", "SYNAPT_RECALL_ROOT", "GRIPSPACE_ROOT"):
        hint = f"point {resolved_by} at a project directory"
    else:
        hint = "run from inside a project or set SYNAPT_RECALL_ROOT"
    if _is_fs_root(root):
        raise WorkspaceError(
            f"refusing to use the filesystem root {root} as a workspace root "
            f"(resolved by {resolved_by}); {hint}"
        )
    if home.is_home(root):
        raise WorkspaceError(
            f"refusing to use $HOME ({root}) as a workspace root (resolved by {resolved_by}): "
            f"a store there would sit above every project; {hint}"
        )


def _resolve_cwd(cwd: str | os.PathLike[str] | None) -> Path:
    if cwd is None:
        try:
            path = Path(os.getcwd())
        except OSError as exc:
            raise WorkspaceError(f"the current directory is not accessible: {exc}") from exc
    else:
        path = Path(os.fspath(cwd))
    if not path.exists():
        raise WorkspaceError(f"working directory {str(path)!r} does not exist")
    if not path.is_dir():
        raise WorkspaceError(f"working directory {str(path)!r} is not a directory")
    return _resolve_path(path, "working directory")


def _find_root(
    cwd: Path,
    root: str | os.PathLike[str] | None,
    env: Mapping[str, str],
    home: _Home,
    warnings: list[str],
) -> tuple[Path, str]:
    if root is not None:
        return _explicit_root(root, "argument", cwd, home), "argument"
    recall_root = env.get("SYNAPT_RECALL_ROOT", "")
    grip_root = env.get("GRIPSPACE_ROOT", "")
    if recall_root:
        if grip_root and os.path.normpath(grip_root) != os.path.normpath(recall_root):
            warnings.append(
                f"GRIPSPACE_ROOT={grip_root!r} ignored: SYNAPT_RECALL_ROOT={recall_root!r} "
                "takes precedence"
            )
        return _explicit_root(recall_root, "SYNAPT_RECALL_ROOT", cwd, home), "SYNAPT_RECALL_ROOT"
    if grip_root:
        return _explicit_root(grip_root, "GRIPSPACE_ROOT", cwd, home), "GRIPSPACE_ROOT"

    marker = _find_marker(cwd, home, warnings)
    if marker is not None:
        return marker
    git = _git_root(cwd, home, warnings)
    if git is not None:
        git_root, linked = git
        if linked:
            # A linked worktree can live outside its gripspace (`git worktree add ../x`);
            # its main checkout still sits inside it, so look for markers from there.
            marker = _find_marker(git_root, home, warnings)
            if marker is not None:
                return marker
        return git_root, "git"
    # Without git, a subdirectory of a directory that already has a workspace id is part of
    # that workspace: its legacy stores were imported there, and a read from it must see them.
    for directory in _walk_up(cwd, home):
        if (directory / ".synapt" / "recall" / WORKSPACE_FILE).is_file():
            warnings.append(
                f"no workspace marker (.grip/, .gitgrip/), git checkout or SYNAPT_RECALL_ROOT "
                f"found above {cwd}; using {directory}, which has a workspace id, as a weak "
                "workspace root"
            )
            return directory, "directory"
    warnings.append(
        f"no workspace marker (.grip/, .gitgrip/), git checkout or SYNAPT_RECALL_ROOT found "
        f"above {cwd}; using that directory itself as a weak workspace root"
    )
    return cwd, "directory"


def _worktree_root(cwd: Path, root: Path, home: _Home, warnings: list[str]) -> Path:
    if cwd == root or cwd.is_relative_to(root):
        current = cwd
        while current != root:
            if not home.is_home(current) and _is_checkout_root(current):
                return current
            current = current.parent
        return root
    for directory in _walk_up(cwd, home):
        if _is_checkout_root(directory):
            return directory
    warnings.append(
        f"{cwd} is outside the workspace root {root} and not inside any checkout; "
        "using it as its own worktree"
    )
    return cwd


def _worktree_label(value: str) -> str:
    if "/" in value or "\\" in value or value in (".", "..") or value != value.strip():
        raise WorkspaceError(
            f"SYNAPT_RECALL_WORKTREE={value!r} is not a bare label (no '/', '\\', "
            "surrounding spaces, '.' or '..')"
        )
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise WorkspaceError(f"SYNAPT_RECALL_WORKTREE={value!r} contains control characters")
    return value


def resolve(
    cwd: str | os.PathLike[str] | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Workspace:
    """Resolve the workspace, worktree and branch for `cwd` (default: the process cwd).

    `root` and the root variables in `env` (default: os.environ) may be relative, meaning
    relative to `cwd`, or start with `~/` (the HOME in `env`). Raises WorkspaceError.
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    start = _resolve_cwd(cwd)
    home = _Home(environ)
    warnings: list[str] = []

    label = environ.get("SYNAPT_RECALL_WORKTREE", "")
    if label:
        _worktree_label(label)  # reject before any filesystem work

    ws_root, resolved_by = _find_root(start, root, environ, home, warnings)
    _check_root(ws_root, home, resolved_by)

    wt_root = _worktree_root(start, ws_root, home, warnings)
    if label:
        worktree = worktree_name = label
    else:
        worktree = worktree_key(wt_root, ws_root)
        worktree_name = wt_root.name

    return Workspace(
        root=ws_root,
        resolved_by=resolved_by,
        weak=resolved_by == "directory",
        worktree_root=wt_root,
        worktree=worktree,
        worktree_name=worktree_name,
        branch=read_branch(wt_root),
        warnings=tuple(warnings),
    )


def linked_admin(checkout: Path) -> tuple[Path, str] | None:
    """(main checkout, git's administrative name) when `checkout` is a linked worktree
    (`.git` file -> `<main>/.git/worktrees/<name>`), else None. The name is what
    `git worktree move` keeps, so it, not the path, is the worktree's identity."""
    dotgit = checkout / ".git"
    if not dotgit.is_file():
        return None
    gitdir = _read_gitdir_pointer(dotgit)
    if gitdir is None:
        return None
    common, linked = _common_dir(gitdir)
    if not linked or common.name != ".git" or gitdir.parent.name != "worktrees":
        return None
    return common.parent, gitdir.name


def worktree_key(wt_root: Path, ws_root: Path) -> str:
    """The key a checkout is recorded under: '.' for the workspace root, `<main>@<name>`
    for a linked git worktree (`@<name>` when its main checkout is the root; <name> is
    git's administrative name, which survives `git worktree move`), else the checkout's
    path relative to the root (absolute when it lies outside)."""
    if wt_root == ws_root:
        return "."
    admin = linked_admin(wt_root)
    if admin is not None:
        main, name = admin
        if main == ws_root:
            return f"@{name}"
        if main.is_relative_to(ws_root):
            return f"{main.relative_to(ws_root).as_posix()}@{name}"
    if wt_root.is_relative_to(ws_root):
        return wt_root.relative_to(ws_root).as_posix()
    return wt_root.as_posix()


def linked_worktrees(main: Path) -> list[Path]:
    """The linked worktrees git records for the main checkout `main` (from
    `.git/worktrees/*/gitdir`, which git keeps current); only those that exist."""
    admin = main / ".git" / "worktrees"
    out: list[Path] = []
    try:
        names = sorted(e.name for e in os.scandir(admin) if e.is_dir(follow_symlinks=False))
    except OSError:
        return out
    for name in names:
        try:
            text = (admin / name / "gitdir").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if not text:
            continue
        dotgit = Path(text)
        if not dotgit.is_absolute():
            dotgit = admin / name / dotgit
        wt = dotgit.parent
        if wt.is_dir():
            out.append(Path(os.path.abspath(wt)))
    return out


def read_branch(worktree_root: Path) -> str:
    """The branch checked out at `worktree_root`, read from HEAD; "" when detached,
    not a git checkout, or unreadable."""
    dotgit = Path(worktree_root) / ".git"
    gitdir: Path | None
    if dotgit.is_dir():
        gitdir = dotgit
    elif dotgit.is_file():
        gitdir = _read_gitdir_pointer(dotgit)
    else:
        gitdir = None
    if gitdir is None:
        return ""
    text = _read_small(gitdir / "HEAD")
    if text is None:
        return ""
    line = _first_line(text)
    if not line.startswith("ref:"):
        return ""
    ref = line[len("ref:") :].strip()
    prefix = "refs/heads/"
    if not ref.startswith(prefix):
        return ""
    name = ref[len(prefix) :]
    # Reftable repositories leave this placeholder in HEAD; the real ref is in the table.
    if name == ".invalid":
        return ""
    return name


# --------------------------------------------------------------------------- data dir & id


def data_dir(root: Path) -> Path:
    return Path(root) / ".synapt" / "recall"


def default_db_path(root: Path) -> Path:
    return data_dir(root) / DB_FILE


def ensure_private_dir(path: Path) -> None:
    """`mkdir -p`, every directory it creates private to the user (0o700 regardless of
    umask); directories that already exist are left as they are."""
    path = Path(path)
    missing: list[Path] = []
    current = path
    while not current.exists():
        if os.path.islink(current):
            raise WorkspaceError(f"cannot create directory {current}: dangling symlink")
        if os.path.lexists(current):
            break  # another process created it between the two checks
        missing.append(current)
        if current == current.parent:
            break
        current = current.parent
    if not missing and not path.is_dir():
        raise WorkspaceError(f"{path} exists and is not a directory")
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            # A concurrent process created it first: fine if it is a directory, and its
            # mode is that process's business.
            if not directory.is_dir():
                raise WorkspaceError(f"{directory} exists and is not a directory") from None
            continue
        except OSError as exc:
            raise WorkspaceError(f"cannot create directory {directory}: {exc}") from exc
        try:
            os.chmod(directory, 0o700)
        except OSError as exc:
            raise WorkspaceError(f"cannot make {directory} private: {exc}") from exc


def check_data_dir(root: Path, *, trusted: bool = False) -> None:
    """Refuse a `.synapt`, `.synapt/recall` or store file that is a symlink leading out of
    the workspace: a repository can carry one (into another user's world-writable
    directory, or into /etc for a root process), and entries would be written and read
    there. `trusted`: the root was set explicitly (SYNAPT_RECALL_ROOT), like `--db`."""
    if trusted:
        return
    try:
        real_root = os.path.realpath(root)
    except (OSError, ValueError):
        return
    for path in (root / ".synapt", data_dir(root), default_db_path(root)):
        if not os.path.islink(path):
            continue
        target = os.path.realpath(path)
        if target != real_root and not target.startswith(real_root + os.sep):
            raise WorkspaceError(
                f"{path} is a symlink to {target}, outside the workspace; refusing to keep "
                "memory there (set SYNAPT_RECALL_ROOT or --db to choose a place explicitly)"
            )


_GITIGNORE = "# recall-sqlite: session memory can hold secrets; never commit it\n*\n"


def ensure_gitignore(root: Path) -> None:
    """`.synapt/.gitignore` ignoring everything, so `git add -A` does not publish the store."""
    target = Path(root) / ".synapt" / ".gitignore"
    if os.path.lexists(target) or not target.parent.is_dir():
        return
    with contextlib.suppress(OSError):
        _write_private(target, _GITIGNORE.encode(), exclusive=True)


def restore_workspace_id(root: Path, uuid: str) -> None:
    """Write back a workspace id the database recorded for this root (workspace.json was
    deleted). Atomic like a mint; a file that appeared meanwhile wins."""
    path = _workspace_file(root)
    ensure_private_dir(path.parent)
    payload = (
        json.dumps(
            {
                "workspace_id": uuid,
                "restored_at": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
            },
            indent=2,
        )
        + "\n"
    ).encode()
    tmp = path.parent / f".{WORKSPACE_FILE}.{os.getpid()}.{os.urandom(8).hex()}.tmp"
    try:
        _write_private(tmp, payload, exclusive=True)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    except OSError as exc:
        raise WorkspaceError(f"cannot restore {path}: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _workspace_file(root: Path) -> Path:
    return data_dir(root) / WORKSPACE_FILE


def _corrupt(path: Path, why: str) -> WorkspaceError:
    return WorkspaceError(
        f"{path} is corrupt ({why}); it holds this workspace's identity, so it is not "
        "replaced automatically: fix it, or move it aside to mint a new id (entries "
        "stored under the old id then no longer belong to this workspace)"
    )


def read_workspace_id(root: Path) -> str | None:
    """The workspace id recorded under `root`, or None if none was minted yet. Never
    writes. Raises WorkspaceError for an unreadable or corrupt workspace.json."""
    path = _workspace_file(root)
    try:
        with path.open("rb") as fh:
            raw = fh.read(_SMALL_FILE_LIMIT + 1)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        # A file where `.synapt` or `recall` should be: nothing minted, and creating one
        # will fail loudly in ensure_private_dir.
        return None
    except OSError as exc:
        raise WorkspaceError(f"cannot read {path}: {exc}") from exc
    if len(raw) > _SMALL_FILE_LIMIT:
        raise _corrupt(path, f"larger than {_SMALL_FILE_LIMIT} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _corrupt(path, f"not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _corrupt(path, f"expected a JSON object, found {type(data).__name__}")
    value = data.get("workspace_id")
    if not isinstance(value, str):
        raise _corrupt(path, "no string 'workspace_id'")
    # Canonical text only, so one id never has two spellings in the database.
    if not _CANONICAL_UUID.match(value) or value in _NIL_UUIDS:
        raise _corrupt(path, f"workspace_id {value!r} is not a canonical lowercase UUID")
    return value


# The stdlib uuid module imports platform and costs milliseconds at import; a version-4 UUID
# is 122 random bits with fixed version/variant bits, so it is built here directly.
_CANONICAL_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")


def _uuid4() -> str:
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def ensure_workspace_id(root: Path) -> str:
    """The workspace id recorded under `root`, minting and publishing one atomically if
    there is none. Processes racing here all return the same id."""
    path = _workspace_file(root)
    for _ in range(5):
        existing = read_workspace_id(root)
        if existing is not None:
            return existing
        minted = _mint(path)
        if minted is not None:
            return minted
        winner = _read_winner(root)
        if winner is not None:
            return winner
        # The winner's file vanished again (someone deleting it): try once more.
    raise WorkspaceError(f"could not establish a workspace id at {path}: it keeps disappearing")


def _mint(path: Path) -> str | None:
    """Publish a new id at `path`; None if another process published first."""
    directory = path.parent
    ensure_private_dir(directory)
    new_id = _uuid4()
    created_at = datetime.now(timezone.utc).isoformat(timespec="microseconds")
    payload = (
        json.dumps({"workspace_id": new_id, "created_at": created_at}, indent=2) + "\n"
    ).encode("utf-8")
    tmp = directory / f".{WORKSPACE_FILE}.{os.getpid()}.{os.urandom(8).hex()}.tmp"
    try:
        _write_private(tmp, payload, exclusive=True)
        try:
            # link() publishes a complete file and fails if one exists, so readers never
            # see a partial file and a racing minter never overwrites the winner.
            os.link(tmp, path)
        except FileExistsError:
            return None
        except (OSError, NotImplementedError):
            # Filesystems without hard links: exclusive create is still race-free for
            # the winner; losers tolerate a briefly partial file in _read_winner.
            try:
                _write_private(path, payload, exclusive=True)
            except FileExistsError:
                return None
    except OSError as exc:
        raise WorkspaceError(f"cannot write {path}: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _fsync_dir(directory)
    return new_id


def _write_private(path: Path, payload: bytes, *, exclusive: bool) -> None:
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    try:
        if sys.platform != "win32":
            os.fchmod(fd, 0o600)  # the umask may have removed bits; make it exact
        view = memoryview(payload)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _read_winner(root: Path) -> str | None:
    # Only the no-hard-link fallback can expose a half-written file, and only for the
    # few milliseconds the winner spends writing it.
    deadline = time.monotonic() + 2.0
    while True:
        try:
            return read_workspace_id(root)
        except WorkspaceError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.02)
