"""The methods page in a real browser: contents links jump to their sections, formulas and tables are
readable without the page scrolling sideways. Screenshots go to test-artifacts/."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser import ARTIFACTS_DIR

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _window_shot(page: Any, name: str) -> None:
    """The window only: a full-page shot of this long page is slow on a busy machine."""
    ARTIFACTS_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS_DIR / f"{name}.png"))


def test_methods_page_reads_and_links(browser_page: Any, live_server: Any) -> None:
    page = browser_page
    page.goto("/")
    page.click("header.site >> text=Methods")
    page.wait_for_url("**/methods/")
    assert page.locator("article.methods h1").inner_text() == "Methods"
    assert page.locator("article.methods h2").count() >= 8
    assert page.locator("article.methods pre").count() >= 15
    assert page.locator("#matcher-settings table tbody tr").count() >= 10
    _window_shot(page, "methods-01-top")

    page.click("article.methods >> text=Reasoning")
    page.wait_for_url("**/methods/#reasoning")
    assert page.locator("h2#reasoning").is_visible()
    top = page.evaluate("document.getElementById('reasoning').getBoundingClientRect().top")
    assert -1 < top < 200  # the section heading is at the top of the window (sub-pixel scrolling aside)
    _window_shot(page, "methods-02-reasoning")

    # Long formulas scroll inside their box; the page itself never scrolls sideways.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.set_viewport_size({"width": 420, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.goto("/methods/#outcome")
    _window_shot(page, "methods-03-narrow")
