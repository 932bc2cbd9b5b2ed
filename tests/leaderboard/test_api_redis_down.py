"""Redis stopped while agents submit: 503 with Retry-After and nothing stored (the rate limiter
fails closed), or, with HINDSIGHT_RATE_LIMIT_FAIL_OPEN, submissions served uncounted; never a 500."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from leaderboard.models import Forecast
from tests.leaderboard.api_support import live_question

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def stoppable_redis(settings: Any, tmp_path: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A Redis of this test's own as the cache, so that the test can stop it."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (scripts/test.sh installs it)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait()


def test_submissions_get_503_with_retry_after_and_store_nothing(
    stoppable_redis: subprocess.Popen[bytes], agent_http: httpx.Client
) -> None:
    body = {"question": live_question().pk, "prediction": {"probability": 0.6}}
    assert agent_http.post("/api/v1/forecasts/", json=body).status_code == 201
    _stop(stoppable_redis)
    for path, payload in [("/api/v1/forecasts/", body), ("/api/v1/forecasts/batch/", [body])]:
        response = agent_http.post(path, json=payload)
        assert response.status_code == 503, response.text
        assert response.json()["code"] == "unavailable"
        assert int(response.headers["Retry-After"]) >= 1
    assert agent_http.get("/api/v1/leaderboard/").status_code == 503
    assert Forecast.objects.count() == 1


def test_failing_open_serves_submissions_uncounted(
    stoppable_redis: subprocess.Popen[bytes], agent_http: httpx.Client, settings: Any
) -> None:
    settings.HINDSIGHT_RATE_LIMIT_FAIL_OPEN = True
    body = {"question": live_question().pk, "prediction": {"probability": 0.6}}
    _stop(stoppable_redis)
    assert [agent_http.post("/api/v1/forecasts/", json=body).status_code for _ in range(3)] == [201] * 3
    # The cached leaderboard itself needs Redis: a 503 with Retry-After, not a 500.
    leaderboard = agent_http.get("/api/v1/leaderboard/")
    assert leaderboard.status_code == 503 and "Retry-After" in leaderboard.headers
    assert Forecast.objects.count() == 3
