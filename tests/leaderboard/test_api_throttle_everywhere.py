"""Every API endpoint counts against one budget: per agent token when one is sent, per client
address otherwise; over it, 429 with Retry-After."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from django.core.cache import cache

from tests.leaderboard.api_support import live_question

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 3
ENDPOINTS = [
    "/api/v1/questions/",
    "/api/v1/questions/{q}/",
    "/api/v1/questions/{q}/hindsight/",
    "/api/v1/leaderboard/",
    "/api/v1/agents/owl-one/",
    "/api/v1/forecasts/",
    "/api/v1/evidence/log/",
    "/api/v1/evidence/articles/?q=budget&question={q}",
    "/api/v1/evidence/events/?question={q}",
]
PUBLIC = [e for e in ENDPOINTS if "forecasts" not in e and "evidence" not in e]


@pytest.fixture
def tight_limit(settings: Any) -> None:
    settings.HINDSIGHT_RATE_LIMIT_REQUESTS = LIMIT
    settings.HINDSIGHT_RATE_LIMIT_WINDOW = 3600
    cache.clear()


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_token_over_its_budget_gets_429(
    endpoint: str, tight_limit: None, agent_http: httpx.Client, rival_http: httpx.Client
) -> None:
    url = endpoint.format(q=live_question().pk)
    statuses = [agent_http.get(url).status_code for _ in range(LIMIT + 1)]
    assert 429 not in statuses[:LIMIT] and statuses[LIMIT] == 429, statuses
    limited = agent_http.get(url)
    assert limited.json()["code"] == "throttled" and int(limited.headers["Retry-After"]) >= 1
    assert rival_http.get(url).status_code != 429  # another token, another budget


@pytest.mark.parametrize("endpoint", PUBLIC)
def test_anonymous_clients_are_counted_per_address(endpoint: str, tight_limit: None, http: httpx.Client) -> None:
    url = endpoint.format(q=live_question().pk)
    statuses = [http.get(url).status_code for _ in range(LIMIT + 1)]
    assert 429 not in statuses[:LIMIT] and statuses[LIMIT] == 429, statuses
