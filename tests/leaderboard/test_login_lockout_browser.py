"""In a browser: after five wrong passwords the log-in page is replaced by a page that says the
account is locked and until when (the end of the counting window), and the right password does not get in until then."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.cache import cache

from tests.browser import DEFAULT_PASSWORD, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _submit(page: Any, password: str) -> Any:
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "owner")
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.click("button[type=submit]")
    return page


def test_lockout_page_after_five_wrong_passwords(
    browser_page: Any, live_server: Any, owner: Any, settings: Any
) -> None:
    settings.HINDSIGHT_LOGIN_FAILURES_PER_USER = 5
    cache.clear()
    for _ in range(5):
        assert "Please enter a correct username and password" in _submit(browser_page, "wrong").content()
    page = _submit(browser_page, DEFAULT_PASSWORD)
    alert = page.get_by_role("alert")
    assert "Too many failed log-ins for the username “owner”" in alert.inner_text()
    assert re.search(r"Try again in \d+ (minutes?|seconds)\.", alert.inner_text())
    screenshot(page, "login-lockout")
    page.goto("/dashboard/")
    assert "/accounts/login/" in page.url  # still not signed in
    cache.clear()
