"""Tool arguments the database could not store (NUL, lone surrogates) or nested deeper than any
forecast are refused as the REST API refuses the same body or query: same status, code and message,
nothing stored."""

from __future__ import annotations

from typing import Any

import pytest

from config.inprocess_server import InProcessServer
from leaderboard.apis.parsing import MAX_JSON_DEPTH
from leaderboard.models import Forecast
from tests.leaderboard.api_support import live_question
from tests.mcp_server.support import mcp_session, rest, run

pytestmark = pytest.mark.django_db(transaction=True)


def test_unstorable_or_deep_arguments_get_the_rest_answer(site: InProcessServer, agent_key: str) -> None:
    question = live_question("binary")
    deep: Any = 0.5
    for _ in range(MAX_JSON_DEPTH + 5):
        deep = {"p": deep}
    with_nul = {"question": question.pk, "prediction": {"probability": 0.5}, "rationale": "before\x00after"}
    too_deep = {"question": question.pk, "prediction": deep}
    search = {"q": "strike\x00", "question": question.pk}

    async def calling() -> list[dict[str, Any]]:
        async with mcp_session(site.url, agent_key) as client:
            results = [
                await client.call_tool("submit_forecast", with_nul),
                await client.call_tool("submit_forecast", too_deep),
                await client.call_tool("search_articles", search),
            ]
        assert all(result.is_error for result in results)
        return [result.structured_content for result in results]

    nul_error, deep_error, search_error = run(calling)
    with rest(site.url, agent_key) as api:
        for error, answer in [
            (nul_error, api.post("/api/v1/forecasts/", json=with_nul)),
            (deep_error, api.post("/api/v1/forecasts/", json=too_deep)),
            (search_error, api.get("/api/v1/evidence/articles/", params=search)),
        ]:
            assert error == {"status": answer.status_code, **answer.json()}
            assert answer.status_code == 400
    assert nul_error["errors"][0]["field"] == "rationale" and "NUL" in nul_error["message"]
    assert "nested more than" in deep_error["message"]
    assert search_error["errors"][0]["field"] == "q"
    assert not Forecast.objects.exists()
