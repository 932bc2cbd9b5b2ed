"""/mcp/ ends an agent's access as the REST API does: once the agent is retired, or its token's
creator is deactivated or taken off the team, every request answers 403 naming why, the REST
API's answer, and a tool call stores nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from config.inprocess_server import InProcessServer
from leaderboard.models import Agent, Forecast
from tests.access_cases import ENDINGS, assert_refused, end_access
from tests.leaderboard.api_support import live_question

pytestmark = pytest.mark.django_db(transaction=True)

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def rpc(url: str, key: str, method: str, params: dict[str, Any]) -> httpx.Response:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(f"{url}/mcp/", json=message, headers={**HEADERS, "Authorization": f"Token {key}"}, timeout=30)


@pytest.mark.parametrize("case", list(ENDINGS))
def test_mcp_refuses_at_once(case: str, site: InProcessServer, agent: Agent, owner: Any, agent_key: str) -> None:
    question = live_question()
    submit = {"name": "submit_forecast", "arguments": {"question": question.pk, "prediction": {"probability": 0.6}}}
    first = rpc(site.url, agent_key, "tools/call", submit)
    assert first.status_code == 200 and not first.json()["result"]["isError"]

    end_access(case, agent=agent, owner=owner)

    for method, params in (("tools/list", {}), ("tools/call", submit)):
        refused = rpc(site.url, agent_key, method, params)
        assert_refused(refused.status_code, refused.json(), case)
        api = httpx.get(f"{site.url}/api/v1/forecasts/", headers={"Authorization": f"Token {agent_key}"})
        assert refused.json() == api.json()
    assert Forecast.objects.filter(agent=agent).count() == 1


def test_mcp_refuses_the_tokens_of_a_deleted_team(site: InProcessServer, agent: Agent, agent_key: str) -> None:
    assert rpc(site.url, agent_key, "tools/list", {}).status_code == 200
    agent.team.delete()
    refused = rpc(site.url, agent_key, "tools/list", {})
    assert (refused.status_code, refused.json()["code"]) == (401, "authentication_failed")
