"""This project as a distribution: its name on the package index and how to install it.

The import package is `recall_sqlite` and the command `recall-sqlite`, but the index's
`recall-sqlite` is another project (import package `recall`), so the distribution has a name
of its own: `synapt-recall-sqlite` (the recall store for synapt). It is not published, so an
install hint never names the index: it installs this project from where it was installed
from (pip records that, PEP 610), else from a checkout.

Loaded only for `--version` and for an error that needs a hint: importlib.metadata is not
cheap."""

from __future__ import annotations

NAME = "synapt-recall-sqlite"
# Where the source lives, for a hint when pip recorded no origin.
CHECKOUT = "a checkout of the recall-sqlite repository"


def version() -> str:
    """The installed distribution's version ('unknown' when it is not installed, e.g. run
    from a source tree on sys.path)."""
    from importlib import metadata

    try:
        return metadata.version(NAME)
    except metadata.PackageNotFoundError:
        return "unknown"


def _origin() -> tuple[str, bool] | None:
    """(the directory pip installed this project from, whether editably), or None."""
    import json
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    try:
        text = metadata.distribution(NAME).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    url = data.get("url") if isinstance(data, dict) else None
    info = data.get("dir_info") if isinstance(data, dict) else None
    if not isinstance(url, str) or not isinstance(info, dict):
        return None  # a wheel or an archive: no directory to point at
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path), bool(info.get("editable"))


def install_hint(extra: str = "") -> str:
    """The command that installs this project (with `extra`): from the directory it was
    installed from when pip recorded one, else from a checkout, never from the index."""
    spec = f"[{extra}]" if extra else ""
    origin = _origin()
    if origin is not None:
        path, editable = origin
        return f"pip install {'-e ' if editable else ''}'{path}{spec}'"
    return f"pip install -e '.{spec}' in {CHECKOUT} ({NAME} is not on the package index)"
