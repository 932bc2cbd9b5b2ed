"""Log-in lockout per username and per client address, and limits on the sign-up and password-reset
forms: over real HTTP, with the page saying what was limited and for how long."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import time_machine
from django.core.cache import cache

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "correct-horse-battery"
START = datetime(2026, 11, 22, 10, 0, 5, tzinfo=UTC)


@pytest.fixture
def limits(settings: Any) -> Iterator[None]:
    settings.HINDSIGHT_LOGIN_FAILURES_PER_USER = 5
    settings.HINDSIGHT_LOGIN_FAILURES_PER_ADDRESS = 8
    settings.HINDSIGHT_LOGIN_LOCKOUT_SECONDS = 900
    settings.HINDSIGHT_ACCOUNT_FORMS_PER_HOUR = 2
    cache.clear()
    with time_machine.travel(START, tick=True):
        yield


def _post(http: httpx.Client, path: str, data: dict[str, str]) -> httpx.Response:
    page = http.get(path)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token, page.text[:300]
    return http.post(path, data={**data, "csrfmiddlewaretoken": token.group(1)})


def _login(http: httpx.Client, username: str, password: str, path: str = "/accounts/login/") -> httpx.Response:
    return _post(http, path, {"username": username, "password": password})


def test_a_username_is_locked_after_five_failures_even_for_the_right_password(
    limits: None, owner: Any, http: httpx.Client
) -> None:
    for _ in range(5):
        assert _login(http, "owner", "wrong").status_code == 200  # the form again, with its error
    locked = _login(http, "owner", PASSWORD)
    assert locked.status_code == 429
    assert "Too many failed log-ins for the username “owner”" in locked.text
    assert "Try again in 15 minutes" in locked.text and int(locked.headers["Retry-After"]) > 800
    assert "sessionid" not in http.cookies
    # The admin's log-in is the same lock.
    assert _login(http, "owner", PASSWORD, "/admin/login/").status_code == 429
    with time_machine.travel(START + timedelta(minutes=16), tick=True):
        assert _login(http, "owner", PASSWORD).status_code == 302
        assert "sessionid" in http.cookies


def test_a_success_clears_the_count_for_its_username(limits: None, owner: Any, http: httpx.Client) -> None:
    for _ in range(4):
        _login(http, "owner", "wrong")
    assert _login(http, "owner", PASSWORD).status_code == 302
    http.cookies.clear()
    for _ in range(4):
        assert _login(http, "owner", "wrong").status_code == 200


def test_an_address_is_locked_after_failures_across_usernames(limits: None, owner: Any, http: httpx.Client) -> None:
    for i in range(8):
        assert _login(http, f"guess{i}", "wrong").status_code == 200
    locked = _login(http, "owner", PASSWORD)
    assert locked.status_code == 429 and "from your network address" in locked.text


def test_sign_ups_are_limited_per_address(limits: None, http: httpx.Client) -> None:
    for i in range(2):
        created = _post(
            http,
            "/signup/",
            {"username": f"new{i}", "email": "", "password1": "Zebra-quartz-91", "password2": "Zebra-quartz-91"},
        )
        assert created.status_code == 302
        http.cookies.clear()
    refused = _post(
        http,
        "/signup/",
        {"username": "new9", "email": "", "password1": "Zebra-quartz-91", "password2": "Zebra-quartz-91"},
    )
    assert refused.status_code == 429 and "Too many sign-ups from your network address" in refused.text
    from django.contrib.auth import get_user_model

    assert not get_user_model().objects.filter(username="new9").exists()


def test_password_reset_requests_are_limited(limits: None, owner: Any, http: httpx.Client) -> None:
    for _ in range(2):
        assert _post(http, "/accounts/password_reset/", {"email": "owner@example.org"}).status_code == 302
    refused = _post(http, "/accounts/password_reset/", {"email": "owner@example.org"})
    assert refused.status_code == 429 and "password-reset requests" in refused.text
