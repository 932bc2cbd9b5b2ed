"""The anonymous rate limit counts per client address, believing X-Forwarded-For only from a
configured proxy: a spoofed header buys no fresh budget. Under the servers the README runs (the
production command and the embedded default's server), whose uvicorn must not believe the header
on its own either."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.core.cache import cache

from tests.served import SERVERS, served

pytestmark = pytest.mark.django_db(transaction=True)

TIGHT_LIMIT = {"HINDSIGHT_RATE_LIMIT_REQUESTS": "2", "HINDSIGHT_RATE_LIMIT_WINDOW": "3600"}


@pytest.fixture(params=SERVERS)
def server_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _client(kind: str, **env: str) -> Iterator[httpx.Client]:
    with served(kind, **TIGHT_LIMIT, **env) as url, httpx.Client(base_url=url, timeout=15) as client:
        cache.clear()  # the production server counts in the tests' Redis
        yield client


@pytest.fixture
def http_untrusting(server_kind: str, transactional_db: Any) -> Iterator[httpx.Client]:
    yield from _client(server_kind)


@pytest.fixture
def http_behind_proxies(server_kind: str, transactional_db: Any) -> Iterator[httpx.Client]:
    yield from _client(server_kind, HINDSIGHT_TRUSTED_PROXIES="127.0.0.1,::1,10.0.0.0/8")


def _get(http: httpx.Client, forwarded_for: str) -> int:
    return http.get("/api/v1/questions/", headers={"X-Forwarded-For": forwarded_for}).status_code


def test_spoofed_forwarded_for_is_ignored_without_trusted_proxies(http_untrusting: httpx.Client) -> None:
    http = http_untrusting
    assert [_get(http, f"10.0.0.{i}") for i in range(2)] == [200, 200]
    spoofed = [_get(http, f"203.0.113.{i}") for i in range(50)]
    assert spoofed == [429] * 50
    assert http.get("/api/v1/questions/").status_code == 429


def test_a_trusted_proxy_names_the_client(http_behind_proxies: httpx.Client) -> None:
    http = http_behind_proxies
    # Two proxies (the server's peer, then 10.1.2.3) appended what they saw: 198.51.100.7.
    assert [_get(http, "198.51.100.7, 10.1.2.3") for _ in range(3)] == [200, 200, 429]
    # Another client behind the same proxies has its own budget.
    assert _get(http, "198.51.100.8, 10.1.2.3") == 200
    # Entries a client writes itself sit to the left of what the proxies add: they change nothing.
    assert [_get(http, f"{spoof}, 198.51.100.8, 10.1.2.3") for spoof in ("9.9.9.9", "8.8.4.4")] == [200, 429]


def test_a_bad_trusted_proxy_setting_stops_startup(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.core.exceptions import ImproperlyConfigured

    from config.settings.base import env_networks

    monkeypatch.setenv("HINDSIGHT_TRUSTED_PROXIES", "10.0.0.0/8, proxy.internal")
    with pytest.raises(ImproperlyConfigured, match=r"proxy\.internal"):
        env_networks("HINDSIGHT_TRUSTED_PROXIES")
