"""close_replay_session over MCP (the official SDK client over HTTP): while an agent's replay session
is open, as-of-now evidence for a live question it does not forecast is a tool error carrying the
REST 403; closing the session through the tool lifts it, answers what DELETE /api/v1/replays/{id}/
answers, and refuses what that endpoint refuses, with the same codes and messages."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from config.inprocess_server import InProcessServer
from leaderboard.models import Forecast, ReplaySession
from tests.factories import ArticleFactory
from tests.leaderboard.api_support import live_question, replay_question
from tests.mcp_server.support import body, mcp_session, rest, run

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]


def test_closing_a_session_through_mcp_lifts_the_replay_rule(
    site: InProcessServer, agent_key: str, rival_key: str
) -> None:
    replay = replay_question("binary", title="Will the levee hold?")
    live = live_question("binary", title="Will the ferry sail?")
    ArticleFactory(title="Ferry timetable published")
    with rest(site.url, rival_key) as rival_api:
        rival_session = rival_api.post("/api/v1/replays/", json={"question": replay.pk}).json()["id"]
    unknown = str(uuid.uuid4())
    search = {"q": "ferry", "question": live.pk}

    async def working() -> dict[str, Any]:
        async with mcp_session(site.url, agent_key) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            opened = body(await client.call_tool("open_replay_session", {"question": replay.pk}))
            session = opened["id"]
            return {
                "tools": tools,
                "opened": opened,
                "refused": await client.call_tool("search_articles", search),
                "malformed": await client.call_tool("close_replay_session", {"session": "levee"}),
                "unknown": await client.call_tool("close_replay_session", {"session": unknown}),
                "rivals": await client.call_tool("close_replay_session", {"session": rival_session}),
                "closed": body(await client.call_tool("close_replay_session", {"session": session})),
                "again": body(await client.call_tool("close_replay_session", {"session": session})),
                "search": body(await client.call_tool("search_articles", search)),
                "late_forecast": await client.call_tool(
                    "submit_forecast", {"question": replay.pk, "session": session, "prediction": {"probability": 0.5}}
                ),
            }

    found = run(working)
    tools, opened, closed = found["tools"], found["opened"], found["closed"]
    assert "evidence as of now" in tools["open_replay_session"].description
    assert "close_replay_session" in tools["open_replay_session"].description
    hints = tools["close_replay_session"].annotations
    assert hints.idempotent_hint is True and hints.destructive_hint is True and hints.read_only_hint is not True
    assert tools["close_replay_session"].input_schema["required"] == ["session"]

    refused = found["refused"]
    assert refused.is_error and refused.structured_content["status"] == 403
    assert refused.structured_content["code"] == "permission_denied"
    assert opened["id"] in refused.structured_content["message"]

    assert {k: v for k, v in closed.items() if k != "closed_at"} == {
        k: v for k, v in opened.items() if k not in ("closed_at", "created")
    }
    assert opened["closed_at"] is None and closed["closed_at"] and found["again"] == closed
    assert [hit["title"] for hit in found["search"]["results"]] == ["Ferry timetable published"]

    malformed = found["malformed"]
    assert malformed.is_error and malformed.structured_content["status"] == 400
    assert malformed.structured_content["code"] == "invalid"
    assert [e["field"] for e in malformed.structured_content["errors"]] == ["session"]
    late = found["late_forecast"]
    assert late.is_error and late.structured_content["status"] == 409
    with rest(site.url, agent_key) as api:
        # The same calls over REST answer the same bodies.
        assert api.delete(f"/api/v1/replays/{opened['id']}/").json() == closed
        assert late.structured_content == {
            "status": 409,
            **api.post(
                "/api/v1/forecasts/",
                json={"question": replay.pk, "session": opened["id"], "prediction": {"probability": 0.5}},
            ).json(),
        }
        for name, session in (("unknown", unknown), ("rivals", rival_session)):
            answer = api.delete(f"/api/v1/replays/{session}/")
            assert answer.status_code == 404
            assert found[name].is_error and found[name].structured_content == {"status": 404, **answer.json()}, name
    assert ReplaySession.objects.get(pk=rival_session).closed_at is None
    assert not Forecast.objects.exists()
