"""The client waits out a 429 for as long as the server's Retry-After says and then succeeds; it
gives up with RateLimited when told to wait longer than it may, and with TransportError when the
server cannot be reached after its retries."""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from typing import Any

import pytest
import time_machine
from django.core.cache import cache

from hindsight_client import Client, RateLimited, TransportError
from leaderboard.models import Forecast
from tests.leaderboard.api_support import live_question

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def two_per_minute(settings: Any) -> None:
    settings.HINDSIGHT_RATE_LIMIT_REQUESTS = 2
    settings.HINDSIGHT_RATE_LIMIT_WINDOW = 60
    cache.clear()


def test_a_429_is_retried_after_retry_after(live_server: Any, agent_key: str, two_per_minute: None) -> None:
    question = live_question("binary")
    waits: list[float] = []
    # The server's clock stands still, 45 s into a window, until the client's wait moves it on.
    with time_machine.travel(datetime(2026, 11, 22, 10, 0, 45, tzinfo=UTC), tick=False) as clock:

        def wait(seconds: float) -> None:
            waits.append(seconds)
            clock.shift(seconds)

        with Client(live_server.url, agent_key, sleep=wait) as hs:
            for n in range(3):
                hs.submit_forecast(question.pk, {"probability": 0.5}, idempotency_key=f"retry-{n}")
    assert waits == [15.0]
    assert Forecast.objects.filter(question=question).count() == 3


def test_a_longer_wait_than_allowed_raises(live_server: Any, agent_key: str, two_per_minute: None) -> None:
    question = live_question("binary")
    with (
        time_machine.travel(datetime(2026, 11, 22, 10, 0, 5, tzinfo=UTC), tick=False),
        Client(live_server.url, agent_key, max_retry_wait=30, sleep=lambda s: None) as hs,
    ):
        hs.question(question.pk)
        hs.question(question.pk)
        with pytest.raises(RateLimited) as limited:
            hs.question(question.pk)
    assert (limited.value.status, limited.value.code, limited.value.retry_after) == (429, "throttled", 55.0)


def test_an_unreachable_server_is_retried_then_reported(transactional_db: Any) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits: list[float] = []
    with (
        Client(f"http://127.0.0.1:{port}", "key", max_retries=2, backoff=0.1, sleep=waits.append) as hs,
        pytest.raises(TransportError, match=f"127.0.0.1:{port}"),
    ):
        hs.question(1)
    assert waits == [0.1, 0.2]
