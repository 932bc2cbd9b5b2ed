"""Errors outside any view: an unknown API address or an API failure answers with the API's JSON
envelope, an unknown page or a failing page with the site's own pages (real HTTP, real browser)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.browser import screenshot

pytestmark = pytest.mark.django_db(transaction=True)

FAILING_URLS = "tests.leaderboard.error_urls"


@pytest.mark.parametrize("method", ["get", "post"])
def test_unknown_api_address_is_a_json_404_naming_it(http: httpx.Client, method: str) -> None:
    response = http.request(method.upper(), "/api/v1/sessions/", json={"question": 1})
    assert response.status_code == 404
    assert response.headers["Content-Type"] == "application/json"
    body = response.json()
    assert body["code"] == "not_found"
    assert f"No API endpoint at /api/v1/sessions/ ({method.upper()})" in body["message"]
    assert "/api/docs/" in body["message"]


def test_api_failure_is_a_json_500(http: httpx.Client, settings: Any, caplog: pytest.LogCaptureFixture) -> None:
    settings.ROOT_URLCONF = FAILING_URLS
    response = http.get("/api/v1/failing/")
    assert response.status_code == 500
    assert response.json() == {
        "code": "server_error",
        "message": "The server failed to handle this request; it has been logged.",
    }
    assert "deliberate failure" in caplog.text


def test_failing_page_is_the_site_error_page(http: httpx.Client, settings: Any) -> None:
    settings.ROOT_URLCONF = FAILING_URLS
    response = http.get("/failing/")
    assert response.status_code == 500
    assert response.headers["Content-Type"].startswith("text/html")
    assert "Something went wrong" in response.text
    assert "deliberate failure" not in response.text


@pytest.mark.browser
def test_unknown_page_is_the_site_404_with_its_navigation(browser_page: Any) -> None:
    response = browser_page.goto("/questions/999999/")
    assert response is not None and response.status == 404
    main = browser_page.inner_text("main")
    assert "Page not found" in main and "/questions/999999/" in main
    screenshot(browser_page, "error-404")
    browser_page.click("main >> text=All questions")
    browser_page.wait_for_url("**/questions/")
    assert browser_page.locator("h1").first.inner_text() == "Questions"
