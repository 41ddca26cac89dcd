"""Path -> workspace / worktree / branch, from the filesystem alone (docs/identity.md).

No SQL and no subprocess: hooks call this on every tool use, so it must be cheap and must
not depend on a `git` binary being on PATH. Every answer says how it was reached
(`resolved_by`) and what was doubtful about it (`warnings`), because a store chosen by a
wrong guess looks exactly like a store with a short history.
"""

from __future__ import annotations

import os
import sys

from .._record import Frozen
from ..errors import RecallError, WorkspaceAccessError, WorkspaceError
from ..jsontext import loads
from .files import exists, is_dir, is_file, pure, read_small, real, relative, within
from .git import common_dir, linked_admin, read_branch, read_gitdir_pointer
from .idfile import workspace_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path
    from typing import Final

    from .files import StrPath

_join = os.path.join
_up = os.path.dirname

RESOLVED_BY: Final = (
    "argument",
    "SYNAPT_RECALL_ROOT",
    "GRIPSPACE_ROOT",
    "grip",
    "gitgrip",
    "git",
    "directory",
)

# Bounds the directory scan done for a linked griptree so a huge directory cannot make
# resolution slow.
_GRIPTREE_SCAN_LIMIT: Final = 1024


class Workspace(Frozen):
    """The answer: the roots as text (`root_text`, `worktree_root_text`), and as Paths for
    hosts (`root`, `worktree_root`; pathlib is imported when one is asked for)."""

    __slots__ = (
        "root_text",
        "resolved_by",
        "weak",
        "worktree_root_text",
        "worktree",
        "worktree_name",
        "branch",
        "warnings",
    )
    root_text: str
    resolved_by: str
    weak: bool
    worktree_root_text: str
    worktree: str
    worktree_name: str
    branch: str
    warnings: tuple[str, ...]

    def __init__(
        self,
        root: str,
        resolved_by: str,
        weak: bool,
        worktree_root: str,
        worktree: str,
        worktree_name: str,
        branch: str,
        warnings: tuple[str, ...],
    ) -> None:
        self._set(
            root_text=root,
            resolved_by=resolved_by,
            weak=weak,
            worktree_root_text=worktree_root,
            worktree=worktree,
            worktree_name=worktree_name,
            branch=branch,
            warnings=warnings,
        )

    @property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self.root_text)

    @property
    def worktree_root(self) -> Path:
        from pathlib import Path

        return Path(self.worktree_root_text)


# --------------------------------------------------------------------------- helpers


def _resolve_path(path: str, what: str) -> str:
    try:
        return real(path)
    except (OSError, RuntimeError) as exc:
        raise WorkspaceError(f"cannot resolve {what} {path!r}: {exc}") from exc


def _stat_key(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class _Home:
    """$HOME as a path *and* an inode: comparing by inode also catches $HOME reached by a
    differently-cased or bind-mounted spelling that `resolve()` does not canonicalise."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.path = _home_path(env)
        self.key = _stat_key(self.path) if self.path is not None else None

    def is_home(self, path: str) -> bool:
        if self.path is None:
            return False
        if path == self.path:
            return True
        return self.key is not None and _stat_key(path) == self.key


def _home_path(env: Mapping[str, str]) -> str | None:
    value = env.get("HOME", "")
    if value and os.path.isabs(value):
        try:
            return real(value)
        except (OSError, RuntimeError):
            return pure(value)
    # An env without HOME (a sanitised hook environment) must not switch the guard off.
    if sys.platform != "win32":
        import pwd

        try:
            return real(pwd.getpwuid(os.getuid()).pw_dir)
        except (KeyError, OSError, RuntimeError):
            return None
    try:
        return real(os.path.expanduser("~"))
    except (OSError, RuntimeError):
        return None


def _is_fs_root(path: str) -> bool:
    return path == _up(path)


def _walk_up(start: str, home: _Home) -> Iterator[str]:
    """`start` and its ancestors, never yielding $HOME or the filesystem root and never
    going above $HOME: anything found there is above every project."""
    current = start
    while not _is_fs_root(current) and not home.is_home(current):
        yield current
        current = _up(current)


def is_checkout_root(directory: StrPath) -> bool:
    directory = os.fspath(directory)
    return (
        os.path.lexists(_join(directory, ".git"))
        or is_dir(_join(directory, ".grip"))
        or is_file(_join(directory, ".gitgrip", "griptree.json"))
    )


def _is_gripspace_root(directory: str) -> bool:
    return is_file(_join(directory, ".gitgrip", "griptrees.json")) or is_dir(
        _join(directory, ".grip")
    )


# --------------------------------------------------------------------------- markers


def _griptree_parent(griptree: str, home: _Home) -> str | None:
    """The gripspace a linked griptree belongs to, or None if that cannot be established.

    Git's own worktree pointers are tried first because git keeps them current; the
    paths gitgrip records are a fallback since a moved gripspace leaves them stale.
    """
    for child in _griptree_children(griptree):
        dotgit = _join(child, ".git")
        if not is_file(dotgit):
            continue
        gitdir = read_gitdir_pointer(dotgit)
        if gitdir is None:
            continue
        common, linked = common_dir(gitdir)
        if not linked:
            # No commondir file: fall back to the conventional `<repo>/.git/worktrees/<n>`.
            common = next((p for p in _self_and_up(gitdir) if _name(p) == ".git"), gitdir)
        if _name(common) != ".git":
            continue
        for candidate in _walk_up(_up(common), home):
            if candidate == griptree:
                break
            if is_file(_join(candidate, ".gitgrip", "griptrees.json")):
                return candidate
    for declared in _griptree_declared_parents(griptree):
        if declared != griptree and _is_gripspace_root(declared) and not home.is_home(declared):
            return declared
    return None


def _name(path: str) -> str:
    return os.path.basename(path)


def _self_and_up(path: str) -> Iterator[str]:
    """`path` and every ancestor up to the filesystem root (Path's (path, *parents))."""
    while True:
        yield path
        parent = _up(path)
        if parent == path:
            return
        path = parent


def _griptree_children(griptree: str) -> list[str]:
    children: list[str] = []
    try:
        with os.scandir(griptree) as entries:
            for index, entry in enumerate(entries):
                if index >= _GRIPTREE_SCAN_LIMIT:
                    break
                try:
                    if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                        children.append(entry.path)
                except OSError:
                    pass
    except OSError:
        return []
    # Sorted so two processes pick the same sub-repo when several could answer.
    return sorted(children)


def _griptree_declared_parents(griptree: str) -> Iterator[str]:
    """Parent paths recorded by gitgrip: `.griptree` (mainWorkspace) and, if a tool put
    one there, a parent key in `.gitgrip/griptree.json` (whose own `path` is the griptree
    itself, not its parent)."""
    keys = ("mainWorkspace", "main_workspace", "parent", "gripspace_root", "gripspaceRoot")
    for source in (_join(griptree, ".griptree"), _join(griptree, ".gitgrip", "griptree.json")):
        text = read_small(source)
        if text is None:
            continue
        try:
            data = loads(text)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        for key in keys:
            value = data.get(key)
            if isinstance(value, str) and value:
                try:
                    resolved = real(_join(griptree, pure(value)))
                except (OSError, RuntimeError):
                    continue
                if is_dir(resolved):
                    yield resolved


def _marker_at(directory: str, home: _Home, warnings: list[str]) -> tuple[str, str] | None:
    gitgrip = _join(directory, ".gitgrip")
    # A linked griptree is checked before the other markers because membership beats
    # locality: its data belongs with the gripspace it is a member of, even if `gr`
    # also copied a griptrees.json or a .grip/ into it.
    if is_file(_join(gitgrip, "griptree.json")):
        parent = _griptree_parent(directory, home)
        if parent is not None:
            return parent, "gitgrip"
        if is_dir(_join(directory, ".grip")):
            return directory, "grip"
        warnings.append(
            f"{directory} is a linked griptree (.gitgrip/griptree.json) but its parent "
            "gripspace could not be found; using the griptree itself as the workspace root"
        )
        return directory, "gitgrip"
    if is_file(_join(gitgrip, "griptrees.json")):
        return directory, "gitgrip"
    if is_dir(_join(directory, ".grip")):
        return directory, "grip"
    return None


def _find_marker(start: str, home: _Home, warnings: list[str]) -> tuple[str, str] | None:
    for directory in _walk_up(start, home):
        found = _marker_at(directory, home, warnings)
        if found is not None:
            return found
    return None


# --------------------------------------------------------------------------- git


def _git_root(start: str, home: _Home, warnings: list[str]) -> tuple[str, bool] | None:
    """(workspace root from the nearest `.git`, whether it came through a linked worktree)."""
    for directory in _walk_up(start, home):
        dotgit = _join(directory, ".git")
        if is_dir(dotgit):
            return directory, False
        if is_file(dotgit):
            return _linked_main_root(directory, dotgit, warnings), True
    return None


def _linked_main_root(checkout: str, dotgit: str, warnings: list[str]) -> str:
    gitdir = read_gitdir_pointer(dotgit)
    if gitdir is None:
        warnings.append(
            f"{dotgit} is not a readable 'gitdir: <path>' pointer; "
            f"using {checkout} as the workspace root"
        )
        return checkout
    if not is_dir(gitdir):
        warnings.append(
            f"{dotgit} points at {gitdir}, which does not exist (moved or pruned?); "
            f"using {checkout} as the workspace root"
        )
        return checkout
    common, linked = common_dir(gitdir)
    if not linked:
        # A separated git dir (submodule, --separate-git-dir) is its own repository whose
        # checkout is right here.
        return checkout
    if not is_dir(common):
        warnings.append(
            f"{gitdir}/commondir names {common}, which does not exist; "
            f"using {checkout} as the workspace root"
        )
        return checkout
    if _name(common) == ".git":
        return _up(common)
    warnings.append(
        f"{checkout} is a linked worktree of the bare repository {common}; "
        "using the worktree itself as the workspace root"
    )
    return checkout


# --------------------------------------------------------------------------- resolve


def _explicit_root(value: StrPath, source: str, base: str, home: _Home) -> str:
    text = os.fspath(value)
    path = pure(text)
    if home.path is not None and (text == "~" or text.startswith("~/")):
        path = pure(_join(home.path, text[2:]))
    if not path.startswith("/"):
        path = pure(_join(base, path))
    what = "the root argument" if source == "argument" else f"{source}={text!r}"
    if not exists(path):
        raise WorkspaceError(
            f"{what}: {path} does not exist; refusing to create a store under a path "
            "that may be a typo (create the directory first)"
        )
    if not is_dir(path):
        raise WorkspaceError(f"{what}: {path} is not a directory")
    return _resolve_path(path, what)


def _check_root(root: str, home: _Home, resolved_by: str) -> None:
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


def _resolve_cwd(cwd: StrPath | None) -> str:
    if cwd is None:
        try:
            path = pure(os.getcwd())
        except OSError as exc:
            raise WorkspaceAccessError(f"the current directory is not accessible: {exc}") from exc
    else:
        path = pure(cwd)
    if not exists(path):
        raise WorkspaceError(f"working directory {path!r} does not exist")
    if not is_dir(path):
        raise WorkspaceError(f"working directory {path!r} is not a directory")
    return _resolve_path(path, "working directory")


def _find_root(
    cwd: str,
    root: StrPath | None,
    env: Mapping[str, str],
    home: _Home,
    warnings: list[str],
) -> tuple[str, str]:
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
        if is_file(workspace_file(directory)):
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


def _worktree_root(cwd: str, root: str, home: _Home, warnings: list[str]) -> str:
    if within(cwd, root):
        current = cwd
        while current != root:
            if not home.is_home(current) and is_checkout_root(current):
                return current
            current = _up(current)
        return root
    for directory in _walk_up(cwd, home):
        if is_checkout_root(directory):
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
    cwd: StrPath | None = None,
    *,
    root: StrPath | None = None,
    env: Mapping[str, str] | None = None,
) -> Workspace:
    """Resolve the workspace, worktree and branch for `cwd` (default: the process cwd).

    `root` and the root variables in `env` (default: os.environ) may be relative, meaning
    relative to `cwd`, or start with `~/` (the HOME in `env`). Raises WorkspaceError.
    """
    try:
        return _resolve(cwd, root, env)
    except (OSError, ValueError) as exc:
        if isinstance(exc, RecallError):
            raise
        # A path too long for the filesystem, with a NUL, or otherwise unusable (Python
        # 3.11's Path.exists raises for some): one typed error, never a traceback.
        shown = "the current directory" if cwd is None else repr(os.fspath(cwd))[:200]
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise WorkspaceError(f"cannot use {shown} as a working directory: {why}") from None


def _resolve(
    cwd: StrPath | None,
    root: StrPath | None,
    env: Mapping[str, str] | None,
) -> Workspace:
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
        worktree_name = _name(wt_root)

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


def worktree_key(wt_root: StrPath, ws_root: StrPath) -> str:
    """The key a checkout is recorded under: '.' for the workspace root, `<main>@<name>`
    for a linked git worktree (`@<name>` when its main checkout is the root; <name> is
    git's administrative name, which survives `git worktree move`), else the checkout's
    path relative to the root (absolute when it lies outside)."""
    wt_root, ws_root = pure(wt_root), pure(ws_root)
    if wt_root == ws_root:
        return "."
    admin = linked_admin(wt_root)
    if admin is not None:
        main, name = admin
        if main == ws_root:
            return f"@{name}"
        if within(main, ws_root):
            return f"{relative(main, ws_root)}@{name}"
    if within(wt_root, ws_root):
        return relative(wt_root, ws_root)
    return wt_root
