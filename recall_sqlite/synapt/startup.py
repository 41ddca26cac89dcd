"""synapt's session start in constant time: its `generate_startup_context` runs unchanged,
but while it runs, its reads of the journal get a handful of versions instead of the whole
history (the store's `journal.wake`, a few index steps), chosen so that everything synapt
derives from them is what the whole history gives.

* Its two `_read_all_entries(jf)` calls get the versions it looks at (the newest rich heads,
  the newest authored head, the branch's newest version), its `_dedup_entries` their heads
  in its own dedup order; the shown entries, their order and text, the branch context, the
  newest authored timestamp and the "newer journal elsewhere" line follow from synapt's own
  code. The one figure that does not is `len(rich)`, the `withheld` count of its
  `Journal read:` line: that line is written again with the store's count.
* With a starting session (every real start), its unclean-end check gets an equivalent set
  of authored heads (`journal.unclean_candidates`): the verdict, the cover and both maxima
  are in it, ties included.
* Anything unusual goes to synapt's own path, as before this module existed: another build
  of synapt (its functions' code is fingerprinted), no store or mirror, a store error, too
  many ties, a re-entrant call, a read by any other caller. tests/unit/synapt/test_synapt_startup.py
  holds the output equal to stock synapt's, line for line, on random histories."""

from __future__ import annotations

import contextvars
import hashlib
import json
import sys
from typing import Any

from ..errors import RecallError

ORIGINAL: dict[str, Any] = {}
SERVING: contextvars.ContextVar[View | None] = contextvars.ContextVar(
    "recall_sqlite_startup", default=None
)
# The functions whose behaviour this module relies on, as synapt 0.30.0 ships them (a
# digest of their code): another build is answered by synapt's own path.
FINGERPRINTS = {
    "generate_startup_context": "ed93b75408ed58f13c78cdcb56ea5f8c91cb74ec93bbb46e8cb0b9ec1f971177",
    "detect_unclean_end": "cab0b5e0f36aed1c73df6ff405721ce86aa4f81be8ed937110ce8a7c7f7749c9",
}
_FRAMES = 6  # how far up a served read may look for synapt's generate_startup_context


class Served(list):  # type: ignore[type-arg]
    """The list a served `_read_all_entries` returns, tagged with its view."""

    __slots__ = ("view",)
    view: View


class View:
    def __init__(self, store: Any, path: Any, versions: list[Any], heads: list[Any]) -> None:
        self.store, self.path, self.versions, self.heads = store, path, versions, heads
        self.fake = self.true = ""


def code_digest(fn: Any) -> str:
    """A digest of a function's source lines (the same on every Python that runs it)."""
    import linecache

    code = fn.__code__
    last = code.co_firstlineno

    def walk(c: Any) -> None:
        nonlocal last
        last = max([last, *(line for _, _, line in c.co_lines() if line)])
        for const in c.co_consts:
            if hasattr(const, "co_lines"):
                walk(const)

    walk(code)
    lines = linecache.getlines(code.co_filename)[code.co_firstlineno - 1 : last]
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def _known(name: str) -> bool:
    expected = FINGERPRINTS.get(name)
    return bool(expected) and code_digest(ORIGINAL[name]) == expected


def install() -> None:
    """Rebind synapt's generate_startup_context (activate() calls this once); a build of
    synapt whose function differs is left as it is. Its unclean-end check is rebound when
    a session start needs it (synapt imports that module only then)."""
    import synapt.recall.cli as cli

    from . import api

    ORIGINAL.setdefault("generate_startup_context", cli.generate_startup_context)
    if _known("generate_startup_context"):
        cli.generate_startup_context = generate_startup_context
        api.SERVED.update(read=served_read, dedup=served_dedup)


def _install_detect() -> None:
    import synapt.recall.resume as resume

    if "detect_unclean_end" not in ORIGINAL:
        ORIGINAL["detect_unclean_end"] = resume.detect_unclean_end
        if _known("detect_unclean_end"):
            resume.detect_unclean_end = detect_unclean_end


def uninstall() -> None:
    import synapt.recall.cli as cli

    from . import api

    api.SERVED.clear()
    if "generate_startup_context" in ORIGINAL:
        cli.generate_startup_context = ORIGINAL.pop("generate_startup_context")
    if "detect_unclean_end" in ORIGINAL:
        import synapt.recall.resume as resume

        resume.detect_unclean_end = ORIGINAL.pop("detect_unclean_end")


def _journal_line(shown: list[Any], rich_total: int) -> str:
    """synapt's `Journal read:` line for these shown entries and this many rich heads."""
    payload = {
        "shown": len(shown),
        "withheld": rich_total - len(shown),
        "oldest_shown_at": shown[-1].timestamp if shown else None,
    }
    return "Journal read: " + json.dumps(payload, separators=(",", ":"))


def _view(project: Any) -> View | None:
    import synapt.recall.journal as sj

    from . import api

    opened = api._open(None)
    if opened is None:
        return None
    store, target = opened
    if not target.journal.exists():
        return None  # synapt takes its other branch, which reads nothing
    wake = store.journal.host.wake(sj._get_branch(str(project)))
    if not wake.complete:
        return None
    versions = [api.to_synapt(e) for e in wake.versions]
    by_id = {e.id: v for e, v in zip(wake.versions, versions, strict=True)}
    heads = [by_id[e.id] for e in wake.heads]
    view = View(store, target.journal, versions, heads)
    rich = sorted(
        (h for h in heads if h.has_rich_content()), key=lambda e: e.timestamp, reverse=True
    )
    shown = rich[:3]  # synapt's _WAKE_JOURNAL_ENTRY_LIMIT
    view.fake = _journal_line(shown, len(rich))
    view.true = _journal_line(shown, wake.rich_heads)
    return view


def generate_startup_context(
    project: Any, *, include_continuity: bool = True, current_session_id: str | None = None
) -> list[str]:
    original = ORIGINAL["generate_startup_context"]
    kwargs = {"include_continuity": include_continuity, "current_session_id": current_session_id}
    if SERVING.get() is not None:
        return list(original(project, **kwargs))
    if current_session_id:
        _install_detect()
    try:
        view = _view(project)
    except (RecallError, OSError):
        view = None  # synapt's own path says what is wrong, as it did before
    if view is None:
        return list(original(project, **kwargs))
    token = SERVING.set(view)
    try:
        lines = list(original(project, **kwargs))
    finally:
        SERVING.reset(token)
    if view.fake != view.true:
        for i, line in enumerate(lines):
            if line == view.fake:
                lines[i] = view.true
                break
    return lines


def served_read(path: Any) -> Served | None:
    """The few versions for synapt's generate_startup_context's own `_read_all_entries(jf)`
    (and for nobody else); None: read as usual."""
    view = SERVING.get()
    if view is None or path != view.path:
        return None
    code = ORIGINAL["generate_startup_context"].__code__
    frame: Any = sys._getframe(1)
    for _ in range(_FRAMES):
        if frame is None:
            return None
        if frame.f_code is code:
            out = Served(view.versions)
            out.view = view
            return out
        frame = frame.f_back
    return None


def served_dedup(entries: Any) -> list[Any] | None:
    """The heads of a served read, when given that very list unchanged."""
    view = SERVING.get()
    if view is None or type(entries) is not Served or entries.view is not view:
        return None
    if len(entries) != len(view.versions) or any(
        a is not b for a, b in zip(entries, view.versions, strict=True)
    ):
        return None
    return list(view.heads)


def detect_unclean_end(
    sources: Any,
    *,
    checkpoint: Any,
    authored_journals: Any,
    exclude_session_id: Any = None,
    grace_seconds: Any = None,
) -> Any:
    """synapt's check, given an equivalent few authored heads when it was handed the
    served ones (its authored list of the whole history otherwise)."""
    import synapt.recall.resume as rs

    original = ORIGINAL["detect_unclean_end"]
    grace = rs.UNCLEAN_END_GRACE_SECONDS if grace_seconds is None else grace_seconds
    kwargs = {
        "checkpoint": checkpoint,
        "exclude_session_id": exclude_session_id,
        "grace_seconds": grace,
    }
    view = SERVING.get()
    served = (
        view is not None
        and isinstance(authored_journals, list)
        and all(any(e is h for h in view.heads) for e in authored_journals)
    )
    if not served:
        return original(sources, authored_journals=authored_journals, **kwargs)
    assert view is not None
    candidates = [i for i in sources if i.latest_timestamp and i.session_id != exclude_session_id]
    if not candidates:
        return original(sources, authored_journals=[], **kwargs)
    newest = max(candidates, key=lambda i: rs._timestamp_epoch(i.latest_timestamp))
    last = rs._timestamp_epoch(newest.latest_timestamp)
    equivalent = _equivalent(view, rs, newest.session_id, last, float(grace))
    return original(sources, authored_journals=equivalent, **kwargs)


def _equivalent(view: View, rs: Any, session_id: str, last: float, grace: float) -> list[Any]:
    from . import api

    margin = grace + 2.0
    found = view.store.journal.host.unclean_candidates(
        session_id, int((last - margin) * 1e6), int((last + margin) * 1e6)
    )
    # synapt reads the instant with its own parser: where it reads another one than the
    # store, the few heads might not hold its maximum; then its whole authored list.
    if any(abs(rs._timestamp_epoch(e.timestamp) * 1e6 - us) > 1 for e, us in found):
        return _all_authored(view)
    entries = [api.to_synapt(e) for e, _ in found]
    entries.sort(key=lambda e: e.timestamp, reverse=True)
    return entries


def _all_authored(view: View) -> list[Any]:
    from . import api

    token = SERVING.set(None)  # the whole history, as synapt's own path reads it
    try:
        heads = api._dedup_entries(api._read_all_entries(view.path))
    finally:
        SERVING.reset(token)
    authored = [e for e in heads if not e.auto and e.has_content()]
    authored.sort(key=lambda e: e.timestamp, reverse=True)
    return authored
