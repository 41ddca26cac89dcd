"""`recall-sqlite browse` (recall_sqlite/browse/): every page and canned query of Datasette's
own test client on a store the tests build (two branches, a linked worktree, a summary, a
forget, a peer), the file untouched by a browse session (byte-identical, no -wal left),
reading beside a writer and its WAL, the loopback rule, and the command as a real process."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import apsw
import pytest

from recall_sqlite import open_store
from recall_sqlite.browse import serve
from recall_sqlite.errors import UsageError
from recall_sqlite.sync import place
from tests.helpers import CLI, add_worktree, new_repo, run_cli, user_env

SECRET = "a token pasted by mistake"
PEER = {
    "host": "laptop.local",
    "position": 3,
    "seen_position": 5,
    "pulled_at": "2026-03-02T12:00:00Z",
}


class Built:
    """The store the tests browse, and what they expect of it."""

    def __init__(self, root: Path, db: Path, forgotten: str, worktree: Path) -> None:
        self.root = root
        self.db = db
        self.forgotten = forgotten
        self.worktree = worktree


def build_store(base: Path) -> Built:
    """A git workspace: the main checkout on main (a session with a hidden auto version,
    a summary, a forgotten entry) and on feature, a linked worktree on its own branch, and
    a peer in peers.json. Closed, so nothing lies beside the file."""
    root = new_repo(base / "repo")
    wt = add_worktree(root, base / "wt")
    with open_store(root) as s:
        j = s.journal
        j.append(
            {
                "timestamp": "2026-03-01T08:59:00Z",
                "session_id": "s1",
                "branch": "main",
                "auto": True,
                "focus": "auto stub",
            }
        )
        j.append(
            {
                "timestamp": "2026-03-01T09:00:00Z",
                "session_id": "s1",
                "branch": "main",
                "focus": "websocket gateway: sticky sessions",
                "done": ["wrote schema.sql"],
                "next_steps": ["benchmarks", "write the docs"],
            }
        )
        j.append(
            {
                "timestamp": "2026-03-02T10:00:00Z",
                "session_id": "s2",
                "branch": "feature",
                "focus": "feature flag rollout",
                "done": ["write the docs"],
                "next_steps": ["ship the flag"],
            }
        )
        gone = j.append(
            {
                "timestamp": "2026-03-01T07:00:00Z",
                "session_id": "s4",
                "branch": "main",
                "focus": SECRET,
            }
        ).id
        j.forget(gone)
        s.summaries.add("What happened on main: the gateway", branch="main", kind="day")
        db = s.workspace.db_path
    with open_store(wt) as s:
        s.journal.append(
            {
                "timestamp": "2026-03-02T11:00:00Z",
                "session_id": "s3",
                "branch": "wt",
                "focus": "worktree experiment",
                "next_steps": ["measure latency"],
            }
        )
    sync_dir = Path(place.directory(db))
    sync_dir.mkdir()
    (sync_dir / place.PEERS).write_text(json.dumps({"peers": {"laptop": PEER}}))
    return Built(root, Path(db), gone, wt)


@pytest.fixture
def built(tmp_path: Path) -> Built:
    return build_store(tmp_path)


def fetch(db: Path, *paths: str) -> list[Any]:
    """Each path through Datasette's own test client: (status, JSON or HTML text)."""

    async def run() -> list[Any]:
        out = []
        with serve.viewer(db) as v:
            for path in paths:
                r = await v.datasette.client.get(path)
                body = r.json() if ".json" in path and r.status_code == 200 else r.text
                out.append((r.status_code, body))
        return out

    return asyncio.run(run())


def rows(db: Path, path: str) -> list[dict[str, Any]]:
    sep = "&" if "?" in path else "?"
    ((status, body),) = fetch(db, f"{path}{sep}_shape=array")
    assert status == 200, body
    assert isinstance(body, list)
    return body


def digest(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


def beside(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if p.name.startswith(db.name + "-"))


def test_every_page_and_canned_query_answers(built: Built) -> None:
    meta = serve.metadata()["databases"]
    pages = ["/", "/-/metadata.json", f"/{serve.DATABASE}"]
    for name, info in meta.items():
        pages += [f"/{name}/{t}" for t in info.get("tables", {})]
        pages += [f"/{name}/{q}" for q in info.get("queries", {})]
        pages += [f"/{name}/{q}.json" for q in info.get("queries", {})]
    answers = fetch(built.db, *pages)
    failed = [(p, s) for p, (s, _) in zip(pages, answers, strict=True) if s != 200]
    assert not failed
    # The machinery is hidden; what a person sees has a title and a description.
    for info in meta.values():
        for table, spec in info.get("tables", {}).items():
            assert spec.get("description"), table
            assert spec.get("hidden") or spec.get("title"), table
        for query, spec in info.get("queries", {}).items():
            assert spec.get("title") and spec.get("description"), query
    # The start page's own links lead somewhere.
    links = re.findall(r'href="(/[^"]*)"', serve.metadata()["description_html"])
    assert links and all(status == 200 for status, _ in fetch(built.db, *links)), links
    # Forgetting left no byte of the text, in any page.
    assert not [p for p, (_, body) in zip(pages, answers, strict=True) if SECRET in str(body)]


def test_the_journal_is_searched_and_faceted(built: Built) -> None:
    journal = rows(built.db, "/memory/journal.json")
    assert sorted(r["focus"] for r in journal) == [
        "feature flag rollout",
        "websocket gateway: sticky sessions",
        "worktree experiment",
    ]
    found = rows(built.db, "/memory/journal.json?_search=gateway")
    assert [r["session_id"] for r in found] == ["s1"]
    assert [r["worktree"] for r in rows(built.db, "/memory/journal.json?_search=latency")] == [
        "@wt"
    ]
    ((status, page),) = fetch(built.db, "/memory/journal.json?_facet=worktree&_facet=branch")
    assert status == 200
    facets = {
        name: {v["value"]: v["count"] for v in f["results"]}
        for name, f in page["facet_results"].items()
    }
    assert facets["worktree"] == {".": 2, "@wt": 1}
    assert facets["branch"] == {"main": 1, "feature": 1, "wt": 1}
    summaries = rows(built.db, "/memory/summaries_view.json?_search=gateway")
    assert [r["text"] for r in summaries] == ["What happened on main: the gateway"]
    assert rows(built.db, "/memory/summaries_view.json?_search=nothinglikethis") == []


def test_the_facets_and_search_box_come_from_the_metadata(built: Built) -> None:
    ((status, html),) = fetch(built.db, "/memory/journal")
    assert status == 200
    assert 'name="_search"' in html
    for facet in ("worktree", "branch", "session_id"):
        assert f'data-column="{facet}"' in html, facet
    # Lists are lists, not JSON text.
    assert "<li>wrote schema.sql</li>" in html
    assert "[&#34;wrote schema.sql&#34;]" not in html and '["wrote schema.sql"]' not in html
    # The raw table's 16-byte ids read as the hex the views show, not as a blob.
    head = rows(built.db, "/memory/journal.json?session_id=s1")[0]["id"]
    ((status, raw),) = fetch(built.db, "/memory/journal_entries?session_id=s1")
    assert status == 200 and f"<code>{head}</code>" in raw


def test_the_canned_queries_answer_what_the_library_does(built: Built) -> None:
    timeline = rows(built.db, "/memory/timeline.json")
    assert [(r["day"], r["branch"], r["sessions"]) for r in timeline] == [
        ("2026-03-02", "feature", 1),
        ("2026-03-02", "wt", 1),
        ("2026-03-01", "main", 1),
    ]
    assert set(timeline[0]) == {"day", "branch", "sessions", "worktrees"}
    with open_store(built.root, read_only=True) as s:
        pending = s.journal.pending_next_steps().pending
        versions = s.journal.versions(session_id="s1")
    assert pending == ["ship the flag", "benchmarks"]
    assert [r["step"] for r in rows(built.db, "/memory/pending_next_steps.json")] == pending
    assert [r["step"] for r in rows(built.db, "/memory/pending_next_steps.json?worktree=@wt")] == [
        "measure latency"
    ]
    got = rows(built.db, "/memory/session_versions.json?session_id=s1")
    assert [r["id"] for r in got] == [v.id for v in versions]
    assert [(r["focus"], r["shown_in_worktree"]) for r in got] == [
        ("auto stub", 0),
        ("websocket gateway: sticky sessions", 1),
    ]
    start = rows(built.db, "/memory/session_start.json?worktree=&branch=main")
    assert [(r["section"], r["text"]) for r in start] == [
        ("latest summary", "What happened on main: the gateway"),
        ("pending next step", "ship the flag"),
        ("pending next step", "benchmarks"),
        ("entry", "websocket gateway: sticky sessions"),
    ]
    forgotten = rows(built.db, "/memory/forgotten.json")
    assert [r["id"] for r in forgotten] == [built.forgotten]
    assert set(forgotten[0]) == {"id", "forgotten_at", "kind"}
    places = rows(built.db, "/memory/worktrees_and_branches.json")
    assert [(r["worktree"], r["branch"], r["sessions"]) for r in places] == [
        (".", "feature", 1),
        (".", "main", 1),
        ("@wt", "wt", 1),
    ]
    peers = rows(built.db, "/sync/sync_peers.json")
    assert [(p["machine"], p["host"], p["behind"], p["merged_position"]) for p in peers] == [
        ("laptop", "laptop.local", 1, 3)
    ]


class Chart(HTMLParser):
    """The timeline page's chart, as its markup says: each bar's (day, branch, sessions),
    x and height; each day's total label; the legend's items."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.svgs = 0
        self.bars: list[dict[str, str]] = []
        self.totals: list[str] = []
        self.legend: list[str] = []
        self._in: str | None = None
        self.html = html
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "svg" and "recall-timeline-chart" in a.get("class", ""):
            self.svgs += 1
        elif tag == "rect" and a.get("class") == "recall-bar":
            self.bars.append(a)
        elif tag == "text" and a.get("class") == "recall-total":
            self._in = "total"
            self.totals.append("")
        elif tag == "li" and self._in == "legend":
            self.legend.append("")
        elif tag == "ul" and a.get("class") == "recall-legend":
            self._in = "legend"

    def handle_endtag(self, tag: str) -> None:
        if (tag == "text" and self._in == "total") or (tag == "ul" and self._in == "legend"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "total":
            self.totals[-1] += data
        elif self._in == "legend" and self.legend:
            self.legend[-1] += data

    def rows(self) -> list[tuple[str, str, int]]:
        return sorted((b["data-day"], b["data-branch"], int(b["data-sessions"])) for b in self.bars)


def chart_of(db: Path) -> Chart:
    ((status, html),) = fetch(db, "/memory/timeline")
    assert status == 200
    return Chart(html)


def test_the_timeline_page_draws_its_rows_as_a_chart(built: Built) -> None:
    """Datasette finds the package's query-memory-timeline.html: the page holds an SVG with
    one bar per (day, branch) row of the query, its count as data and a total per day,
    above the table, which is still there; the SQL hidden until asked for."""
    chart = chart_of(built.db)
    html = chart.html
    assert chart.svgs == 1
    rows_ = rows(built.db, "/memory/timeline.json")
    assert chart.rows() == sorted((r["day"], r["branch"], r["sessions"]) for r in rows_)
    assert chart.totals == ["1", "2"]  # 03-01: main; 03-02: feature and wt, one bar
    assert [" ".join(item.split()) for item in chart.legend] == [
        "feature (1)",
        "main (1)",
        "wt (1)",
    ]
    assert html.index("recall-timeline-chart") < html.index('<table class="rows-and-columns"')
    assert '<td class="col-sessions">1</td>' in html
    assert '<pre id="sql-query">' not in html
    # One day's bars stack on one x; the next day's is one slot along.
    x = {(b["data-day"], b["data-branch"]): float(b["x"]) for b in chart.bars}
    assert x["2026-03-02", "feature"] == x["2026-03-02", "wt"] > x["2026-03-01", "main"]


def test_the_chart_keeps_the_calendar_and_the_newest_sixty_days(built: Built) -> None:
    """A day without sessions is a gap of one slot; past 60 days, the chart draws the newest
    60 (the table keeps all); bar heights follow the counts; past the palette's nine
    colours, the quieter branches share one grey and one legend item."""
    with open_store(built.root) as s:
        for day in range(1, 31):  # April: every day but the 10th, 11 branches
            if day == 10:
                continue
            for n in range(day % 3 + 1):
                s.journal.append(
                    {
                        "timestamp": f"2026-04-{day:02d}T{9 + n:02d}:00:00Z",
                        "session_id": f"a{day}-{n}",
                        "branch": "main" if n == 0 else f"topic-{day % 11}",
                        "focus": f"april {day}",
                    }
                )
        for day in (20, 21):  # and, after a gap of 19 days, two of May
            s.journal.append(
                {
                    "timestamp": f"2026-05-{day}T09:00:00Z",
                    "session_id": f"m{day}",
                    "branch": "main",
                    "focus": "may",
                }
            )
    chart = chart_of(built.db)
    every = rows(built.db, "/memory/timeline.json")
    newest = {r["day"] for r in every if r["day"] >= "2026-03-23"}  # 05-21 back 60 days
    assert {b["data-day"] for b in chart.bars} == newest
    assert "2026-03-02" in {r["day"] for r in every}  # the table keeps them
    assert "The newest 60 days; the table below lists every day." in chart.html
    x = {b["data-day"]: float(b["x"]) for b in chart.bars if b["data-branch"] == "main"}
    slot = (x["2026-05-21"] - x["2026-04-01"]) / 50  # the markup's x are rounded to 0.1
    assert slot > 17
    assert x["2026-04-02"] - x["2026-04-01"] == pytest.approx(slot, abs=0.2)
    assert x["2026-04-11"] - x["2026-04-09"] == pytest.approx(2 * slot, abs=0.2)  # the 10th: a gap
    assert x["2026-05-20"] - x["2026-04-30"] == pytest.approx(20 * slot, abs=0.2)
    height = {(b["data-day"], b["data-branch"]): float(b["height"]) for b in chart.bars}
    one = height["2026-04-06", "main"]
    assert height["2026-04-05", "main"] == pytest.approx(one, abs=0.1)
    assert height["2026-04-05", "topic-5"] == pytest.approx(2 * one, abs=0.1)  # two sessions
    colours = {b["data-branch"]: b["fill"] for b in chart.bars}
    assert len(set(colours.values())) == 10  # nine colours and the grey
    assert chart.legend[0].split() == ["main", "(31)"]  # the drawn days: not 03-01
    assert chart.legend[-1].split()[:3] == ["2", "other", "branches"]


def test_an_empty_timeline_draws_no_chart(store: Any) -> None:
    store.summaries.add("nothing journaled yet")
    ((status, html),) = fetch(Path(store.workspace.db_path), "/memory/timeline")
    assert status == 200
    assert "recall-timeline-chart" not in html and "0 results" in html


def test_a_browse_session_leaves_the_file_as_it_was(built: Built) -> None:
    before = digest(built.db)
    assert beside(built.db) == [f"{built.db.name}-sync"]
    fetch(built.db, "/memory/journal?_search=gateway", "/memory/timeline", "/memory/summaries_view")
    assert digest(built.db) == before
    assert beside(built.db) == [f"{built.db.name}-sync"]


def test_the_viewer_cannot_write(built: Built) -> None:
    answers = fetch(
        built.db,
        "/memory.json?sql=" + urllib.request.quote("delete from journal_entries"),
        "/memory.json?sql=" + urllib.request.quote("select count(*) as n from journal_entries"),
    )
    assert answers[0][0] == 400
    assert answers[1][1]["rows"] == [[4]]


def test_it_reads_beside_a_writer_and_sees_the_wal(built: Built) -> None:
    """A writer holds the write lock, with a commit still in its -wal: the viewer reads
    through it and sees that commit (immutable=1 would not: checked), and leaves the
    writer's files where they are."""
    with open_store(built.root) as s:
        s.journal.append(
            {
                "timestamp": "2026-03-03T09:00:00Z",
                "session_id": "s5",
                "branch": "main",
                "focus": "fresh in the wal",
            }
        )
        assert os.path.getsize(f"{built.db}-wal") > 0
        immutable = sqlite3.connect(f"file:{built.db}?immutable=1", uri=True)
        try:
            old = immutable.execute("select count(*) from journal_entries").fetchone()
        finally:
            immutable.close()
        assert old == (4,)  # the new commit lives in the WAL only
        writer = apsw.Connection(str(built.db))
        writer.execute("BEGIN IMMEDIATE")
        try:
            found = rows(built.db, "/memory/journal.json?_search=fresh")
        finally:
            writer.execute("ROLLBACK")
            writer.close()
        assert [r["session_id"] for r in found] == ["s5"]
        assert f"{built.db.name}-wal" in beside(built.db)


def test_a_non_loopback_host_is_refused_unless_named() -> None:
    assert serve.check_host(None, explicit=False) == "127.0.0.1"
    assert serve.check_host("localhost", explicit=False) == "localhost"
    assert serve.check_host("127.0.0.2", explicit=False) == "127.0.0.2"
    with pytest.raises(UsageError, match="not a loopback address"):
        serve.check_host("192.0.2.1", explicit=False)
    assert serve.check_host("192.0.2.1", explicit=True) == "192.0.2.1"
    assert not serve.is_loopback("0.0.0.0")


def test_no_store_and_no_datasette_are_one_line_each(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "empty")
    res = run_cli("--cwd", str(root), "browse", "--no-open")
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "no store" in res.stderr
    assert sorted(p.name for p in root.iterdir()) == [".git"]
    (tmp_path / "shadow").mkdir()
    (tmp_path / "shadow" / "datasette.py").write_text(
        "raise ModuleNotFoundError(name='datasette')\n"
    )
    res = run_cli("--cwd", str(root), "browse", env=user_env(PYTHONPATH=str(tmp_path / "shadow")))
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "[browse]" in res.stderr, res.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    def __init__(self, proc: subprocess.Popen[str], url: str) -> None:
        self.proc = proc
        self.url = url


def start(root: Path, *options: str) -> Served:
    """`recall-sqlite [OPTIONS] browse --no-open` as its own process on a free port: its
    URL, once it answers."""
    port = free_port()
    proc = subprocess.Popen(
        [*CLI, "--cwd", str(root), *options, "browse", "--no-open", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=user_env(),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    url = f"http://127.0.0.1:{port}/memory"
    assert url in line, (line, proc.stderr.read() if proc.poll() is not None else "")
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                assert r.status == 200
            return Served(proc, url)
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise


def stop(served: Served, sig: int = signal.SIGTERM) -> int:
    served.proc.send_signal(sig)
    try:
        return served.proc.wait(timeout=30)
    finally:
        if served.proc.poll() is None:
            served.proc.kill()


@pytest.fixture
def served(built: Built) -> Iterator[tuple[Built, Served]]:
    s = start(built.root)
    try:
        yield built, s
    finally:
        if s.proc.poll() is None:
            stop(s)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_the_command_serves_until_stopped_and_leaves_nothing(
    served: tuple[Built, Served], sig: int
) -> None:
    built, s = served
    before = digest(built.db)
    with urllib.request.urlopen(f"{s.url}/journal.json?_search=gateway&_shape=array") as r:
        assert [e["session_id"] for e in json.load(r)] == ["s1"]
    assert f"{built.db.name}-wal" in beside(built.db)  # the viewer's, while it reads
    assert stop(s, sig) == 0
    assert s.proc.stderr is not None and s.proc.stderr.read() == ""
    assert digest(built.db) == before
    assert beside(built.db) == [f"{built.db.name}-sync"]


def test_the_command_refuses_a_port_in_use(built: Built) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        res = run_cli("--cwd", str(built.root), "browse", "--no-open", "--port", str(port))
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "--port" in res.stderr


def test_a_file_shared_by_workspaces_is_named_as_such(store: Any, other: Any) -> None:
    """The viewer shows the whole file: serve warns when it holds another workspace's
    memory (a shared --db), which a workspace's own file never does."""
    store.journal.append({"timestamp": "2026-03-01T09:00:00Z", "focus": "mine"})
    other.journal.append({"timestamp": "2026-03-01T09:00:00Z", "focus": "theirs"})
    db = store.workspace.db_path
    held = serve.workspaces_in(db)
    assert sorted(u for u, _ in held) == sorted([store.workspace.id, other.workspace.id])


def test_a_workspace_file_holds_its_own_workspace_only(built: Built) -> None:
    with open_store(built.root, read_only=True) as s:
        assert [u for u, _ in serve.workspaces_in(built.db)] == [s.workspace.id]
    assert beside(built.db) == [f"{built.db.name}-sync"]


def test_the_command_serves_the_store_db_names(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere.db"
    with open_store(root, db_path=elsewhere) as s:
        s.journal.append({"timestamp": "2026-03-01T09:00:00Z", "focus": "kept elsewhere"})
    served = start(root, "--db", str(elsewhere))
    try:
        with urllib.request.urlopen(f"{served.url}/journal.json?_shape=array") as r:
            assert [e["focus"] for e in json.load(r)] == ["kept elsewhere"]
    finally:
        assert stop(served) == 0
    assert not (root / ".synapt" / "recall" / "recall-sqlite.db").exists()


def test_a_writer_that_stops_while_the_viewer_reads_leaves_nothing(built: Built) -> None:
    """A writer at work when the viewer starts, which stops while it reads: the viewer
    reads on, and nothing is left once both are gone; the commit is kept."""

    async def run() -> list[Any]:
        s = open_store(built.root)
        s.journal.append({"timestamp": "2026-03-03T09:00:00Z", "focus": "written meanwhile"})
        with serve.viewer(built.db) as v:
            await v.datasette.client.get("/memory/journal.json")
            s.close()
            r = await v.datasette.client.get("/memory/journal.json?_search=meanwhile&_shape=array")
        return list(r.json())

    assert [e["focus"] for e in asyncio.run(run())] == ["written meanwhile"]
    assert beside(built.db) == [f"{built.db.name}-sync"]
    with open_store(built.root, read_only=True) as s:
        assert s.journal.search("meanwhile").hits[0].entry.focus == "written meanwhile"
