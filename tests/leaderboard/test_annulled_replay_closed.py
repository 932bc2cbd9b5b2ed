"""An annulled replay question is closed on every way in, not only the REST API: MCP's tools, the web
form (not offered, and refused when named) and deliveries refuse a new session or forecast with the
API's words, which say it was withdrawn from the replay track and nothing about why."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from config.inprocess_server import InProcessServer
from endpoints.services.deliveries import delivery_request
from endpoints.services.registration import endpoint_register
from ingestion.services.questions import question_annul
from leaderboard.models import Agent, Forecast, ReplaySession
from leaderboard.services.errors import ForecastConflict
from leaderboard.services.replay_sessions import replay_session_open
from tests.leaderboard.api_support import replay_question, staff_client

pytestmark = pytest.mark.django_db(transaction=True)

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def _tool(url: str, key: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    headers = {**MCP_HEADERS, "Authorization": f"Token {key}"}
    response = httpx.post(f"{url}/mcp/", json=message, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


def test_mcp_the_web_form_and_deliveries_refuse_it(
    agent: Agent, owner: Any, agent_key: str, rival_key: str, settings: Any
) -> None:
    settings.HINDSIGHT_DELIVERY_ALLOW_LOOPBACK = True
    question = replay_question("binary", outcome=True, title="Will the dam be finished?")
    session, _ = replay_session_open(agent=agent, question_id=question.pk)  # opened before the annulment
    endpoint_register(agent=agent, url="https://127.0.0.1:9/agent", created_by=owner)
    question_annul(question=question, reason="The dam project was cancelled.", author_label="staff")
    withdrawn = f"replay question {question.pk} was withdrawn from the replay track"

    server = InProcessServer(port=0).start()
    try:
        opened = _tool(server.url, rival_key, "open_replay_session", {"question": question.pk})
        forecast = {"question": question.pk, "session": str(session.pk), "prediction": {"probability": 0.6}}
        submitted = _tool(server.url, agent_key, "submit_forecast", forecast)
        for result in (opened, submitted):
            assert result["isError"] and result["structuredContent"]["status"] == 409
            assert result["structuredContent"]["message"].startswith(withdrawn)

        with staff_client(server.url, owner) as site:
            assert "Will the dam be finished?" not in site.get("/forecast/", params={"find": "dam"}).text
            form = f"/forecast/?agent={agent.slug}&question={question.pk}"
            page = site.get(form).text
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
            key = re.search(r'name="idempotency_key" value="([^"]+)"', page)
            assert token and key
            data = {
                "csrfmiddlewaretoken": token.group(1),
                "idempotency_key": key.group(1),
                "session": str(session.pk),
                "action": "submit",
                "probability": "0.6",
            }
            refused = site.post(form, data=data)
            # The form says it as a sentence.
            assert refused.status_code == 200 and withdrawn.capitalize() in refused.text
    finally:
        server.stop()

    with pytest.raises(ForecastConflict, match=withdrawn):
        delivery_request(agent=agent, question_id=question.pk, requested_by=owner)
    assert not Forecast.objects.exists() and ReplaySession.objects.count() == 1
