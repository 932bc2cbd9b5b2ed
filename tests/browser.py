"""Browser-test helpers: Playwright (sync API) driving Debian's chromium against `live_server`.

Usage in any test module (the fixtures are registered in tests/conftest.py, so no import is
needed for them; import the helpers you call)::

    import pytest
    from tests.browser import login, screenshot

    pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

    def test_leaderboard_page(browser_page, live_server, owner):
        login(browser_page, "owner")                 # UserFactory's password by default
        browser_page.goto("/")                       # relative to live_server.url
        screenshot(browser_page, "leaderboard-home")  # -> test-artifacts/leaderboard-home.png

Fixtures
- ``browser`` (session): one headless chromium for the whole run, launched from
  ``$HINDSIGHT_CHROMIUM`` (default /usr/bin/chromium) with ``CHROMIUM_ARGS``.
- ``browser_page`` (function): a fresh context (own cookies) and page whose ``base_url`` is the
  live server, so ``page.goto("/path/")`` works; closed after the test. Needs a transactional
  database (``@pytest.mark.django_db(transaction=True)``), like every live_server test.

Helpers
- ``login(page, username, password=DEFAULT_PASSWORD)`` logs in through the real login form and
  waits for the dashboard.
- ``screenshot(page, name)`` saves ``test-artifacts/<name>.png`` (full page) and returns the path.

The Playwright sync API runs an event loop in the test's thread, which makes Django refuse ORM
calls there ("SynchronousOnlyOperation"); the ``browser`` fixture sets
``DJANGO_ALLOW_ASYNC_UNSAFE`` for the run because the tests, not an event loop, own that thread.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DEFAULT_PASSWORD = "correct-horse-battery"  # tests.factories.UserFactory's password
ARTIFACTS_DIR = Path(__file__).resolve().parents[1] / "test-artifacts"
DEFAULT_TIMEOUT_MS = 15_000


def chromium_path() -> str:
    return os.environ.get("HINDSIGHT_CHROMIUM") or "/usr/bin/chromium"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(chromium_path()).exists():
        pytest.skip(f"chromium not found at {chromium_path()} (set HINDSIGHT_CHROMIUM)")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def browser_page(browser: Any, live_server: Any) -> Iterator[Any]:
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS_DIR / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', name)}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def login(page: Any, username: str, password: str = DEFAULT_PASSWORD) -> None:
    """Log in through the login form; fails the test with the page's error if that does not work."""
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("form.stacked button[type=submit]")
    page.wait_for_load_state()
    if "/accounts/login/" in page.url:
        errors = page.locator(".errorlist").all_inner_texts()
        pytest.fail(f"login as {username!r} failed: {errors}")
