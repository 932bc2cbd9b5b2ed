"""The leaderboard explains itself, in a real browser on laptop screens: which score ranks, baselines in
their place, every column that matters on screen without scrolling sideways, per-type views and one
scale per kind of metric. Screenshots go to test-artifacts/."""

from __future__ import annotations

from typing import Any

import pytest

from leaderboard.services.standings import standings_rebuild
from tests.browser import screenshot
from tests.leaderboard.mixed_world import build_mixed_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MAIN_HEADERS = (
    "Adjusted Brier",
    "Brier",
    "Peer score",
    "Accuracy",
    "MIRAI F1",
    "Open-ended F1",
    "SrcP",
    "Leaks",
    "KER",
)


def _overflow(page: Any) -> int:
    """How far the table sticks out of its box (0: no horizontal scrolling)."""
    return int(
        page.evaluate(
            "() => { const b = document.querySelector('.table-scroll'); return b.scrollWidth - b.clientWidth; }"
        )
    )


def _headers_on_screen(page: Any, width: int) -> None:
    for label in MAIN_HEADERS:
        header = page.locator("table.leaderboard thead tr:not(.groups) th:visible", has_text=label).first
        box = header.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (label, box)


@pytest.mark.parametrize("width,height", [(1366, 768), (1920, 1080)])
def test_columns_that_matter_fit_a_laptop_screen(browser_page: Any, settings: Any, width: int, height: int) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 10
    build_mixed_world()
    standings_rebuild()
    page = browser_page
    page.set_viewport_size({"width": width, "height": height})
    page.goto("/leaderboard/")
    main = page.inner_text("main")
    assert "Ranked by Adjusted Brier (lower is better)" in main
    assert _overflow(page) == 0
    _headers_on_screen(page, width)
    screenshot(page, f"leaderboard-{width}")


def test_the_table_explains_itself(browser_page: Any, settings: Any) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 10
    build_mixed_world()
    standings_rebuild()
    page = browser_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto("/leaderboard/")
    rows = page.locator("table.leaderboard tbody tr")
    classes = [rows.nth(i).get_attribute("class") or "" for i in range(rows.count())]
    # Baselines stand among the agents, not pinned above them.
    assert "baseline" in classes and classes[0] != "baseline"
    first_baseline = classes.index("baseline")
    assert any(c != "baseline" for c in classes[first_baseline + 1 :])
    assert rows.nth(first_baseline).locator("td").first.inner_text().strip() == "baseline"
    # The platform's own baseline agent is marked, shown for reference and not ranked.
    half = page.locator("table.leaderboard tbody tr", has_text="always-half")
    assert "baseline" in half.inner_text()
    assert half.locator("td").first.inner_text().strip() == "baseline"
    # The provisional rule compares the n the row shows.
    for i in range(rows.count()):
        cells = rows.nth(i).locator("td")
        rank, n = cells.nth(0).inner_text().strip(), int(cells.nth(2).inner_text())
        if rank == "provisional":
            assert n < 10
        elif rank.isdigit():
            assert n >= 10
    # One scale per kind of metric: both F1 columns as percentages.
    top = rows.first.inner_text()
    assert top.count("%") >= 4
    screenshot(page, "leaderboard-explained")

    page.click("nav[aria-label='Question type'] >> text=Relation (MIRAI)")
    page.wait_for_url("**type=relation**")
    assert "Ranked by MIRAI F1 (higher is better)" in page.inner_text("main")
    assert page.locator("tr.baseline").count() == 0  # the baselines forecast binary questions only
    screenshot(page, "leaderboard-relation")

    page.goto("/leaderboard/?type=binary")
    page.click("#more-columns")
    page.wait_for_url("**columns=all**")
    head = page.inner_text("table.leaderboard thead")
    for label in ("Log score", "Time-averaged Brier"):  # no market in this world: no market edge
        assert label in head
    assert head.split().count("Outcome") == 1  # the extra outcome scores sit with the others
    screenshot(page, "leaderboard-binary-more-columns")
