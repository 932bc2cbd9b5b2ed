"""The README's production command (gunicorn, uvicorn workers, config.asgi) serves the site and /mcp/
from several worker processes: an MCP client submits, and the REST API shows the forecast."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from leaderboard.models import Agent
from tests.leaderboard.api_support import live_question
from tests.mcp_server.support import body, mcp_session, rest, run
from tests.served import served

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def production_url(transactional_db: Any) -> Iterator[str]:
    with served("production", workers=2) as url:
        yield url


def test_gunicorn_serves_mcp_and_the_site(production_url: str, agent: Agent, agent_key: str) -> None:
    question = live_question("binary")

    async def submitting() -> list[dict[str, Any]]:
        # Several requests, so both worker processes answer some: the transport keeps no state.
        async with mcp_session(production_url, agent_key) as client:
            listed = body(await client.call_tool("list_questions", {"track": "live", "status": "open"}))
            detail = body(await client.call_tool("get_question", {"question": question.pk}))
            submitted = body(
                await client.call_tool(
                    "submit_forecast", {"question": question.pk, "prediction": {"probability": 0.3}, "session": None}
                )
            )
            return [listed, detail, submitted]

    listed, detail, submitted = run(submitting)
    assert [q["id"] for q in listed["results"]] == [question.pk] and detail["title"] == question.title
    with rest(production_url, agent_key) as api:
        mine = api.get("/api/v1/forecasts/").json()["results"]
        assert [(f["id"], f["channel"]) for f in mine] == [(submitted["id"], "mcp")]
        assert api.get("/leaderboard/").status_code == 200
