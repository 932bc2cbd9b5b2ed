"""/mcp/ admits only an agent's live token (the REST API's 401 answers otherwise), refuses foreign
Host and Origin headers, and counts tool calls in the token's REST rate-limit budget."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import time_machine
from django.core.cache import cache

from config.inprocess_server import InProcessServer
from leaderboard.models import ApiToken, Forecast
from leaderboard.services.teams import token_revoke
from tests.leaderboard.api_support import live_question
from tests.mcp_server.support import body, mcp_session, run

pytestmark = pytest.mark.django_db(transaction=True)

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def post(url: str, **headers: str) -> httpx.Response:
    return httpx.post(f"{url}/mcp/", json=LIST_TOOLS, headers={**HEADERS, **headers}, timeout=30)


def test_tokens_are_checked_as_the_rest_api_checks_them(site: InProcessServer, agent_key: str) -> None:
    for authorization in (None, "Bearer " + agent_key, "Token not-a-key", f"Token {agent_key} extra"):
        headers = {"Authorization": authorization} if authorization else {}
        answer = post(site.url, **headers)
        api = httpx.get(f"{site.url}/api/v1/forecasts/", headers=headers)
        assert (answer.status_code, answer.json()) == (401, api.json()), authorization
        assert answer.headers["WWW-Authenticate"] == "Token"

    listed = post(site.url, Authorization=f"Token {agent_key}")
    assert listed.status_code == 200 and len(listed.json()["result"]["tools"]) == 9
    # Without the trailing slash too.
    bare = httpx.post(f"{site.url}/mcp", json=LIST_TOOLS, headers={**HEADERS, "Authorization": f"Token {agent_key}"})
    assert bare.status_code == 200

    token_revoke(token=ApiToken.objects.get())
    revoked = post(site.url, Authorization=f"Token {agent_key}")
    assert (revoked.status_code, revoked.json()["code"]) == (401, "authentication_failed")


def test_foreign_host_and_origin_are_refused(site: InProcessServer, agent_key: str) -> None:
    token = f"Token {agent_key}"
    assert post(site.url, Authorization=token, Host="attacker.example").status_code == 400
    assert post(site.url, Authorization=token, Origin="http://attacker.example").status_code == 403
    assert post(site.url, Authorization=token, Origin=f"http://127.0.0.1:{site.port}").status_code == 200


def test_tool_calls_share_the_tokens_rate_limit(site: InProcessServer, agent_key: str, settings: Any) -> None:
    settings.HINDSIGHT_RATE_LIMIT_REQUESTS = 3
    settings.HINDSIGHT_RATE_LIMIT_WINDOW = 3600
    cache.clear()
    question = live_question()
    forecast = {"question": question.pk, "prediction": {"probability": 0.5}}

    with time_machine.travel(datetime(2026, 11, 22, 10, 59, tzinfo=UTC), tick=True):
        api = httpx.post(
            f"{site.url}/api/v1/forecasts/", json=forecast, headers={"Authorization": f"Token {agent_key}"}
        )
        assert api.status_code == 201

        async def calling() -> list[Any]:
            async with mcp_session(site.url, agent_key) as client:
                return [await client.call_tool("submit_forecast", forecast) for _ in range(3)]

        first, second, limited = run(calling)
    assert not first.is_error and not second.is_error
    assert limited.is_error
    error = body(limited)
    assert (error["status"], error["code"]) == (429, "throttled")
    assert 1 <= error["retry_after"] <= timedelta(minutes=2).total_seconds()
    assert f"{error['retry_after']} seconds" in error["message"]
    assert Forecast.objects.filter(question=question).count() == 3
