"""An agent works a replay question through MCP over HTTP with the official SDK client: it lists the
tools, opens a session, searches, reads and queries evidence (nothing at or after the simulated date),
submits, and then sees the forecast and every evidence call through the REST API."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import pytest
from mcp import Client

from config.inprocess_server import InProcessServer
from ingestion.models import Market, PricePoint, StructuredEvent
from leaderboard.models import Agent
from tests.factories import ArticleFactory
from tests.leaderboard.api_support import replay_question
from tests.mcp_server.support import body, mcp_session, rest, run

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]

TOOLS = {
    "list_questions",
    "get_question",
    "open_replay_session",
    "close_replay_session",
    "search_articles",
    "read_article",
    "query_events",
    "price_history",
    "submit_forecast",
}


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def corpus_around(simulated: datetime, market: Market) -> dict[str, Any]:
    """Stories, events and prices before, exactly at and after the simulated date."""
    before = [
        ArticleFactory(title="Harbour strike enters its third week", published_at=simulated - timedelta(days=20)),
        ArticleFactory(title="Harbour strike talks stall", published_at=simulated - timedelta(seconds=1)),
    ]
    hidden = [
        ArticleFactory(title="Harbour strike talks resume", published_at=simulated),
        ArticleFactory(title="Harbour strike ends with a deal", published_at=simulated + timedelta(days=5)),
    ]
    events = [
        StructuredEvent.objects.create(
            date=(simulated + timedelta(days=days)).date(),
            subject="USA",
            object="CHN",
            relation="042",
            relation_root="04",
            dedupe_key=f"mcp-{days}",
        )
        for days in (-3, 2)
    ]
    for days, price in ((-10, 0.4), (-1, 0.45), (3, 0.9)):
        PricePoint.objects.create(
            market=market, outcome="Yes", time=simulated + timedelta(days=days), probability=price
        )
    return {"before": before, "hidden": hidden, "event_before": events[0]}


async def open_session(client: Client, question_id: int) -> dict[str, Any]:
    tools = (await client.list_tools()).tools
    opened = body(await client.call_tool("open_replay_session", {"question": question_id}))
    again = body(await client.call_tool("open_replay_session", {"question": question_id}))
    return {"tools": {tool.name: tool for tool in tools}, "opened": opened, "again": again}


async def gather_and_submit(client: Client, question_id: int, session: str, late_article: int) -> dict[str, Any]:
    found: dict[str, Any] = {}
    found["search"] = body(await client.call_tool("search_articles", {"q": "harbour strike", "session": session}))
    first = found["search"]["results"][0]["id"]
    found["read"] = body(await client.call_tool("read_article", {"article": first, "session": session}))
    found["late_read"] = await client.call_tool("read_article", {"article": late_article, "session": session})
    found["events"] = body(await client.call_tool("query_events", {"session": session, "subject": "USA"}))
    found["prices"] = body(await client.call_tool("price_history", {"question": question_id, "session": session}))
    found["forecast"] = body(
        await client.call_tool(
            "submit_forecast",
            {
                "question": question_id,
                "session": session,
                "prediction": {"probability": 0.35},
                "sources": [found["read"]["id"]],
                "rationale": "Talks stalled before the date.",
                "idempotency_key": "mcp-replay-1",
            },
        )
    )
    return found


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["2026-07-28", "initialize-handshake"])
def test_replay_question_through_mcp_then_rest(site: InProcessServer, agent: Agent, agent_key: str, mode: str) -> None:
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id="harbour", title="Harbour strike")
    question = replay_question("binary", title="Will the harbour strike end by June?", market=market)

    async def opening() -> dict[str, Any]:
        async with mcp_session(site.url, agent_key, mode=mode) as client:
            return await open_session(client, question.pk)

    found = run(opening)
    # The corpus is laid out around the date the platform chose, whatever its policy.
    corpus = corpus_around(parse(found["opened"]["simulated_date"]), market)

    async def working() -> dict[str, Any]:
        async with mcp_session(site.url, agent_key, mode=mode) as client:
            return await gather_and_submit(client, question.pk, found["opened"]["id"], corpus["hidden"][1].pk)

    found.update(run(working))

    assert set(found["tools"]) == TOOLS
    submit = found["tools"]["submit_forecast"]
    assert sorted(submit.input_schema["required"]) == ["prediction", "question"]
    assert submit.description.startswith("Submit a forecast: the body of POST /api/v1/forecasts/")
    assert "retry" in submit.input_schema["properties"]["idempotency_key"]["description"]
    assert found["tools"]["search_articles"].annotations.read_only_hint is True

    opened, simulated = found["opened"], parse(found["opened"]["simulated_date"])
    assert opened["question"] == question.pk and opened["agent"] == agent.slug and opened["created"] is True
    assert found["again"] == {**opened, "created": False}

    search = found["search"]
    assert {hit["id"] for hit in search["results"]} == {a.pk for a in corpus["before"]}
    assert all(parse(hit["published_at"]) < simulated for hit in search["results"])
    assert parse(search["as_of"]) == simulated and search["count"] == 2
    assert found["read"]["body"] and parse(found["read"]["published_at"]) < simulated
    late = found["late_read"]
    assert late.is_error and late.structured_content == {
        "status": 404,
        "code": "not_found",
        "message": "Article not found.",
    }
    assert [e["id"] for e in found["events"]["events"]] == [corpus["event_before"].pk]
    assert [p["probability"] for p in found["prices"]["prices"]] == [0.4, 0.45]
    assert found["prices"]["market"]["title"] == "Harbour strike"

    forecast = found["forecast"]
    assert forecast["created"] is True and forecast["channel"] == "mcp" and forecast["session"] == opened["id"]

    with rest(site.url, agent_key) as api:
        listed = api.get("/api/v1/forecasts/", params={"question": question.pk}).json()["results"]
        assert [(f["id"], f["session"], f["prediction"], f["sources"]) for f in listed] == [
            (forecast["id"], opened["id"], {"probability": 0.35}, [found["read"]["id"]])
        ]
        log = api.get("/api/v1/evidence/log/").json()["results"]
        # One row per successful evidence call (the refused read is not a read), each as of the date.
        assert Counter(row["kind"] for row in log) == {"search": 1, "read": 1, "events": 1, "prices": 1}
        assert {(row["session"], parse(row["as_of"])) for row in log} == {(opened["id"], simulated)}
        assert next(row for row in log if row["kind"] == "read")["article"] == found["read"]["id"]

        # The tools answer exactly what the REST endpoints answer.
        same_search = api.get("/api/v1/evidence/articles/", params={"q": "harbour strike", "session": opened["id"]})
        assert same_search.json() == search
        same_read = api.get(f"/api/v1/evidence/articles/{found['read']['id']}/", params={"session": opened["id"]})
        assert same_read.json() == found["read"]
        same_late = api.get(f"/api/v1/evidence/articles/{corpus['hidden'][1].pk}/", params={"session": opened["id"]})
        assert (same_late.status_code, same_late.json()) == (
            404,
            {"code": "not_found", "message": "Article not found."},
        )
