"""A refused tool call is an MCP tool error carrying the status, code and message (and per-field
errors) the REST endpoint answers for the same input; nothing is stored."""

from __future__ import annotations

from typing import Any

import pytest

from config.inprocess_server import InProcessServer
from leaderboard.models import Forecast, ReplaySession
from tests.leaderboard.api_support import live_question, replay_question
from tests.mcp_server.support import mcp_session, rest, run

pytestmark = pytest.mark.django_db(transaction=True)


def tool_errors(url: str, key: str, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    async def calling() -> list[dict[str, Any]]:
        async with mcp_session(url, key) as client:
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
        assert all(result.is_error for result in results), [r.structured_content for r in results]
        return [result.structured_content for result in results]

    return run(calling)


def test_tool_errors_carry_the_rest_answer(site: InProcessServer, agent_key: str, rival_key: str) -> None:
    live = live_question("binary")
    replay = replay_question("multiple_choice", outcome="Yes")
    with rest(site.url, rival_key) as rival_api:
        rival_session = rival_api.post("/api/v1/replays/", json={"question": replay.pk}).json()["id"]
    forecasts_before = Forecast.objects.count()

    bad_forecast = {"question": live.pk, "prediction": {"probability": 1.5}, "sources": ["ftp://x"], "rationale": 3}
    cases: list[tuple[str, dict[str, Any], str, str, dict[str, Any]]] = [
        # tool, arguments, REST method, path, REST body or query
        ("submit_forecast", bad_forecast, "POST", "/api/v1/forecasts/", bad_forecast),
        ("submit_forecast", {"question": replay.pk, "prediction": {"probabilities": {"Yes": 1}}}, "POST",
         "/api/v1/forecasts/", {"question": replay.pk, "prediction": {"probabilities": {"Yes": 1}}}),
        ("submit_forecast", {"question": 999999, "prediction": {"probability": 0.5}}, "POST", "/api/v1/forecasts/",
         {"question": 999999, "prediction": {"probability": 0.5}}),
        ("open_replay_session", {"question": live.pk}, "POST", "/api/v1/replays/", {"question": live.pk}),
        ("get_question", {"question": 999999}, "GET", "/api/v1/questions/999999/", {}),
        ("search_articles", {"q": "strike", "session": rival_session}, "GET", "/api/v1/evidence/articles/",
         {"q": "strike", "session": rival_session}),
        ("search_articles", {"q": "strike", "question": replay.pk}, "GET", "/api/v1/evidence/articles/",
         {"q": "strike", "question": replay.pk}),
        ("search_articles", {"q": "strike", "question": live.pk, "offset": -1}, "GET", "/api/v1/evidence/articles/",
         {"q": "strike", "question": live.pk, "offset": -1}),
        ("query_events", {"question": live.pk, "start": "2026-05-02", "end": "2026-05-01"}, "GET",
         "/api/v1/evidence/events/", {"question": live.pk, "start": "2026-05-02", "end": "2026-05-01"}),
        ("list_questions", {"status": "bogus"}, "GET", "/api/v1/questions/", {"status": "bogus"}),
    ]  # fmt: skip
    errors = tool_errors(site.url, agent_key, [(name, arguments) for name, arguments, *_ in cases])

    with rest(site.url, agent_key) as api:
        for (name, _, method, path, payload), error in zip(cases, errors, strict=True):
            answer = api.post(path, json=payload) if method == "POST" else api.get(path, params=payload)
            assert answer.status_code >= 400, (name, answer.text)
            assert error == {"status": answer.status_code, **answer.json()}, name

    assert errors[0]["code"] == "invalid" and {e["field"] for e in errors[0]["errors"]} >= {
        "prediction.probability",
        "sources[0]",
    }
    assert errors[3]["status"] == 409 and "live track" in errors[3]["message"]
    assert Forecast.objects.count() == forecasts_before
    assert not ReplaySession.objects.filter(question=live).exists()


def test_idempotency_key_replays_or_conflicts_as_in_the_api(site: InProcessServer, agent_key: str) -> None:
    question = live_question("binary")
    first = {"question": question.pk, "prediction": {"probability": 0.6}, "idempotency_key": "run-1"}
    changed = {**first, "prediction": {"probability": 0.7}}

    async def submitting() -> list[Any]:
        async with mcp_session(site.url, agent_key) as client:
            return [await client.call_tool("submit_forecast", body) for body in (first, first, changed)]

    created, replayed, conflict = run(submitting)
    assert created.structured_content["created"] is True and not created.is_error
    assert replayed.structured_content == {**created.structured_content, "created": False}
    assert conflict.is_error and conflict.structured_content["status"] == 409
    with rest(site.url, agent_key) as api:
        again = api.post("/api/v1/forecasts/", json=changed)
        assert conflict.structured_content == {"status": 409, **again.json()}
    assert Forecast.objects.filter(question=question).count() == 1
