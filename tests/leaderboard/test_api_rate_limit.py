"""Per-token rate limit in the shared cache: 429 with Retry-After, budgets per token, window resets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import time_machine
from django.core.cache import cache

from leaderboard.models import Forecast
from tests.leaderboard.api_support import live_question

pytestmark = pytest.mark.django_db(transaction=True)

WINDOW_START = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)


@pytest.fixture
def tight_limit(settings: Any) -> None:
    settings.HINDSIGHT_RATE_LIMIT_REQUESTS = 3
    settings.HINDSIGHT_RATE_LIMIT_WINDOW = 3600
    cache.clear()


def test_429_with_retry_after_per_token(tight_limit: None, agent_http: httpx.Client, rival_http: httpx.Client) -> None:
    question = live_question()
    body = {"question": question.pk, "prediction": {"probability": 0.5}}
    with time_machine.travel(WINDOW_START + timedelta(minutes=59), tick=True):
        for _ in range(3):
            assert agent_http.post("/api/v1/forecasts/", json=body).status_code == 201
        limited = agent_http.post("/api/v1/forecasts/", json=body)
        assert limited.status_code == 429
        assert limited.json()["code"] == "throttled"
        assert 1 <= int(limited.headers["Retry-After"]) <= 61
        # Reads count against the same budget; another agent's token has its own.
        assert agent_http.get("/api/v1/forecasts/").status_code == 429
        assert rival_http.post("/api/v1/forecasts/", json=body).status_code == 201
    assert Forecast.objects.filter(agent__slug="owl-one").count() == 3
    with time_machine.travel(WINDOW_START + timedelta(hours=1, seconds=5), tick=True):
        assert agent_http.post("/api/v1/forecasts/", json=body).status_code == 201
