"""PostgreSQL stopped for a few seconds while an agent submits forecasts to the production server:
every answer is 201 or 503 with Retry-After (the API's JSON error; the site a 503 page; MCP an
HTTP 503 with the same JSON error), never a 500; no accepted forecast is lost, nothing refused is
stored, and once the database is back submissions succeed again without restarting anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest

from tests.celery_worker import ROOT
from tests.reliability.servers import PostgresServer
from tests.served import served

OUTAGE_SECONDS = 6
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}

SEED = """
import json, django
django.setup()
from leaderboard.services.teams import token_create
from tests.factories import AgentFactory, MembershipFactory
from tests.leaderboard.api_support import live_question
agent = AgentFactory()
owner = MembershipFactory(team=agent.team).user
key = token_create(agent=agent, created_by=owner).key
print(json.dumps({"key": key, "question": live_question().pk}))
"""


def _manage_env(database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="config.settings.test",
        PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "platform"), env.get("PYTHONPATH", "")]),
    )
    return env


@pytest.fixture
def world(stoppable_postgres: PostgresServer) -> Iterator[dict[str, Any]]:
    """The test's own database, migrated, with an agent, its token and a live question."""
    env = _manage_env(stoppable_postgres.url)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    seeded = subprocess.run([sys.executable, "-c", SEED], cwd=ROOT, env=env, check=True, capture_output=True)
    yield json.loads(seeded.stdout.decode().strip().splitlines()[-1])


def _forecasts(database_url: str) -> int:
    with psycopg.connect(database_url) as db:
        row = db.execute("SELECT count(*) FROM leaderboard_forecast").fetchone()
        assert row is not None
        return int(row[0])


def test_database_outage_answers_503_everywhere_and_loses_nothing(
    stoppable_postgres: PostgresServer, world: dict[str, Any]
) -> None:
    auth = {"Authorization": f"Token {world['key']}"}
    with (
        served("production", DATABASE_URL=stoppable_postgres.url, HINDSIGHT_RATE_LIMIT_REQUESTS="100000") as url,
        httpx.Client(base_url=url, headers=auth, timeout=30) as agent,
    ):
        # (sent, answered, status, error code, Retry-After) per submission
        answers: list[tuple[float, float, int, str, str | None]] = []
        stop = threading.Event()

        def submit() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                body = {"question": world["question"], "prediction": {"probability": 0.6}, "idempotency_key": f"k{n}"}
                sent = time.monotonic()
                response = agent.post("/api/v1/forecasts/", json=body)
                code = response.json().get("code", "") if response.status_code >= 400 else ""
                answers.append(
                    (sent, time.monotonic(), response.status_code, code, response.headers.get("Retry-After"))
                )
                time.sleep(0.05)

        submitter = threading.Thread(target=submit)
        submitter.start()
        time.sleep(2)
        stoppable_postgres.stop()
        stopped_at = time.monotonic()
        time.sleep(1)
        page = httpx.get(f"{url}/questions/", timeout=30)
        mcp = httpx.post(
            f"{url}/mcp/",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={**MCP_HEADERS, **auth},
            timeout=30,
        )
        time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - stopped_at)))
        restarting_at = time.monotonic()
        stoppable_postgres.start()
        started_at = time.monotonic()
        time.sleep(3)
        stop.set()
        submitter.join(timeout=30)

    statuses = Counter(status for _, _, status, _, _ in answers)
    # Sent once the database was down and answered before it was being started again.
    during = [a for a in answers if a[0] >= stopped_at and a[1] <= restarting_at]
    after = [a for a in answers if a[0] > started_at + 1]
    print(f"database outage: {dict(statuses)} ({len(during)} answers during the outage, {len(after)} after)")
    assert set(statuses) <= {201, 503}, statuses
    assert statuses[503] > 0 and during and all(status == 503 for _, _, status, _, _ in during)
    assert all(code == "unavailable" and retry and int(retry) >= 1 for _, _, s, code, retry in answers if s == 503)
    assert after and all(status == 201 for _, _, status, _, _ in after)
    assert _forecasts(stoppable_postgres.url) == statuses[201]  # every accepted forecast stored, no other

    assert page.status_code == 503 and page.headers["Content-Type"].startswith("text/html"), page.text[:500]
    assert "Temporarily unavailable" in page.text and int(page.headers["Retry-After"]) >= 1
    assert mcp.status_code == 503 and int(mcp.headers["Retry-After"]) >= 1, mcp.text
    assert mcp.json()["code"] == "unavailable" and "database" in mcp.json()["message"]
