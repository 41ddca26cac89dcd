"""`recall-sqlite browse` as a person uses it: the command as a real process, and Debian's
headless Chromium (driven by playwright, which never downloads a browser here) loading the
timeline, typing into the journal's search box and reading what it found. The screenshots
are the ones docs/browse.md and the README show."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recall_sqlite import open_store
from tests.helpers import REPO
from tests.unit.browse.test_browse import Built, build_store, start, stop

CHROMIUM = "/usr/bin/chromium"
# What this machine's closed network needs of Chromium (no background connections, no GPU).
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = REPO / "docs"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM),
        reason=f"no {CHROMIUM}: install Debian's chromium (.ci/run does)",
    ),
]


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield browser.new_page(viewport={"width": 1280, "height": 800})
        finally:
            browser.close()


def shoot(page: Any, name: str) -> None:
    """A screenshot for docs/, the same bytes every run: the footer's query time hidden."""
    page.add_style_tag(content=".ft { visibility: hidden; }")
    page.screenshot(path=str(SHOTS / name), full_page=True)


def a_fortnight(built: Built) -> None:
    """More days of work than the other tests need, so the timeline's bars differ."""
    with open_store(built.root) as s:
        for day in range(3, 15):
            for n in range(day % 5 + 1):
                branch = "main" if n % 2 == 0 else "feature"
                s.journal.append(
                    {
                        "timestamp": f"2026-03-{day:02d}T{9 + n:02d}:00:00Z",
                        "session_id": f"d{day}-{n}",
                        "branch": branch,
                        "focus": f"day {day}: session {n} on {branch}",
                    }
                )


def chart_is_drawn(page: Any, rows: int) -> None:
    """The timeline's chart as the browser lays it out: a bar per row of the table, above
    it, within a 1280 px window, each day's labels clear of the next day's."""
    chart = page.locator("svg.recall-timeline-chart")
    assert chart.is_visible()
    box = chart.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 1280
    assert box["y"] + box["height"] <= page.locator("table.rows-and-columns").bounding_box()["y"]
    bars = chart.locator("rect.recall-bar")
    assert bars.count() == rows
    day = chart.locator('rect[data-day="2026-03-14"][data-branch="main"]')
    assert day.get_attribute("data-sessions") == "3"
    assert day.bounding_box()["height"] > 0
    legend = page.locator(".recall-legend li").all_inner_texts()
    assert [t.split() for t in legend] == [["main", "(24)"], ["feature", "(17)"], ["wt", "(1)"]]
    days = chart.locator("g.recall-day")
    labels = [days.nth(i).locator("text").last.bounding_box() for i in range(days.count())]
    totals = [days.nth(i).locator("text.recall-total").bounding_box() for i in range(days.count())]
    for boxes in (labels, totals):
        for a, b in zip(boxes, boxes[1:], strict=False):
            assert a["x"] + a["width"] <= b["x"] + 0.5, (a, b)


def test_the_timeline_and_the_search_box_in_a_real_browser(tmp_path: Path, page: Any) -> None:
    built: Built = build_store(tmp_path)
    a_fortnight(built)
    served = start(built.root)
    try:
        page.goto(f"{served.url}/timeline")
        table = page.locator("table.rows-and-columns")
        text = table.inner_text()
        for day, branch in (
            ("2026-03-02", "feature"),
            ("2026-03-02", "wt"),
            ("2026-03-01", "main"),
        ):
            assert day in text and branch in text
        assert "Timeline: sessions per day per branch" in page.inner_text("h1")
        assert "2026-03-14\tmain\t3\t" in text
        chart_is_drawn(page, rows=table.locator("tbody tr").count())
        shoot(page, "browse-timeline.png")

        page.goto(f"{served.url}/journal")
        box = page.locator('input[name="_search"]')
        box.fill("gateway")
        box.press("Enter")
        page.wait_for_url("**_search=gateway**")
        found = page.locator("table.rows-and-columns tbody tr")
        assert found.count() == 1
        row = found.first.inner_text()
        assert "websocket gateway: sticky sessions" in row
        assert "feature flag rollout" not in page.inner_text("table.rows-and-columns")
        # The list column is a list the browser shows item by item.
        assert page.locator("td.col-done li").first.inner_text() == "wrote schema.sql"
        # The picture leaves out the workspace's random id, as it would differ every run.
        page.goto(f"{page.url}&_nocol=workspace")
        shoot(page, "browse-search.png")
    finally:
        assert stop(served) == 0
