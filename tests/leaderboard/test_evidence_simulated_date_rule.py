"""No way around the simulated date, over real HTTP: an agent working on a replay question gets no
as-of-now evidence except for live questions it is forecasting, and whatever it was served through
any scope, dated at or after a replay forecast's simulated date, is graded as a leak of that
forecast (never credited as evidence)."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import httpx
import pytest
from django.core.management import call_command

from ingestion.models import PricePoint, Question, StructuredEvent
from leaderboard.models import Agent, EvidenceAccess, Forecast, Grade
from leaderboard.services.evidence import evidence_log_flush
from tests.factories import T0, ArticleFactory, MarketFactory
from tests.leaderboard.api_support import T_RES, live_question, replay_question
from tests.leaderboard.grading_support import RefEvent, make_reference

pytestmark = [
    pytest.mark.dual_db,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("isolated_evidence_log"),
]

T_SIM = T0 + (T_RES - T0) / 2  # the replay question's mid-window simulated date


@pytest.fixture
def world() -> dict[str, Any]:
    """A replay question about a reservoir, its reports before and after the simulated date, and an
    open live question about something else."""
    before = ArticleFactory(title="Reservoir works begin upstream", published_at=T0 + timedelta(days=10))
    after = ArticleFactory(title="Reservoir dam completed ahead of plan", published_at=T_SIM + timedelta(days=20))
    later = ArticleFactory(title="Reservoir inauguration draws crowds", published_at=T_RES + timedelta(days=2))
    replay = replay_question("binary", outcome=True, title="Will the reservoir dam be completed?")
    make_reference(
        replay,
        [RefEvent("e1", "Dam completed", (T_SIM + timedelta(days=20)).date(), 0.9, 1.0, sources=[after, before])],
    )
    live = live_question("binary", title="Will the harbour reopen?")
    other_live = live_question("binary", title="Will the rail strike end?")
    return {"before": before, "after": after, "later": later, "replay": replay, "live": live, "other_live": other_live}


def _session(client: httpx.Client, question: Question) -> str:
    return str(client.post("/api/v1/replays/", json={"question": question.pk}).raise_for_status().json()["id"])


def _forecast(client: httpx.Client, question: Question, p: float, session: str | None = None, **extra: Any) -> None:
    body = {"question": question.pk, "session": session, "prediction": {"probability": p}, **extra}
    client.post("/api/v1/forecasts/", json=body).raise_for_status()


def _search(client: httpx.Client, **scope: Any) -> httpx.Response:
    return client.get("/api/v1/evidence/articles/", params={"q": "reservoir", "limit": 10, **scope})


def _publish_and_grade(question: Question) -> None:
    call_command("publish_outcome", str(question.pk), stdout=StringIO())


def _counting_grade(agent: Agent, question: Question) -> Grade:
    return Grade.objects.get(forecast__agent=agent, forecast__question=question, is_current=True, counts=True)


def test_working_on_a_replay_question_closes_as_of_now_evidence(
    world: dict[str, Any], agent: Agent, agent_http: httpx.Client
) -> None:
    live, other = world["live"], world["other_live"]
    session = _session(agent_http, world["replay"])

    for response in (
        _search(agent_http, question=live.pk),
        agent_http.get(f"/api/v1/evidence/articles/{world['after'].pk}/", params={"question": live.pk}),
        agent_http.get(f"/api/v1/evidence/prices/{live.pk}/"),
        agent_http.get("/api/v1/evidence/events/", params={"question": live.pk, "aggregate": "count"}),
    ):
        assert response.status_code == 403, response.text
        body = response.json()
        assert body["code"] == "permission_denied"
        assert f"working on replay question {world['replay'].pk}" in body["message"] and session in body["message"]
    evidence_log_flush()
    assert not EvidenceAccess.objects.filter(session__isnull=True).exists()

    # The session itself answers as of its simulated date.
    seen = {r["id"] for r in _search(agent_http, session=session).raise_for_status().json()["results"]}
    assert seen == {world["before"].pk}

    # A live question the agent forecasts is answered as of now; one it does not forecast is not.
    _forecast(agent_http, live, 0.4)
    seen = {r["id"] for r in _search(agent_http, question=live.pk).raise_for_status().json()["results"]}
    assert seen == {world["before"].pk, world["after"].pk, world["later"].pk}
    assert _search(agent_http, question=other.pk).status_code == 403

    # Once the agent has forecast in its session it is no longer working on it.
    _forecast(agent_http, world["replay"], 0.6, session=session)
    assert _search(agent_http, question=other.pk).status_code == 200


def test_reading_later_evidence_through_a_live_question_is_a_leak(
    world: dict[str, Any], agent: Agent, agent_http: httpx.Client, rival_agent: Agent, rival_http: httpx.Client
) -> None:
    replay, live, after, later = world["replay"], world["live"], world["after"], world["later"]
    # The attacker commits a forecast in its session, reads the later reports through a live
    # question it forecasts, then updates its replay forecast, citing nothing.
    session = _session(agent_http, replay)
    _forecast(agent_http, replay, 0.5, session=session)
    _forecast(agent_http, live, 0.5)
    hits = _search(agent_http, question=live.pk).raise_for_status().json()["results"]
    assert {h["id"] for h in hits} >= {after.pk, later.pk}
    agent_http.get(f"/api/v1/evidence/articles/{after.pk}/", params={"question": live.pk}).raise_for_status()
    _forecast(agent_http, replay, 0.99, session=session)
    # An honest rival reads only through its session.
    rival_session = _session(rival_http, replay)
    _search(rival_http, session=rival_session).raise_for_status()
    rival_http.get(f"/api/v1/evidence/articles/{world['before'].pk}/", params={"session": rival_session})
    _forecast(rival_http, replay, 0.7, session=rival_session, sources=[world["before"].pk])

    _publish_and_grade(replay)

    grade = _counting_grade(agent, replay)
    assert grade.leaks == 2
    assert set(grade.details["leaked_reads"]["items"]) == {after.pk, later.pk}
    # The leaked report is in the reference set, yet earns no credit: it only enlarges C.
    assert grade.source_precision == 0.0 and grade.details["evidence"]["overlap"] == 0
    first = Grade.objects.get(forecast__agent=agent, forecast__question=replay, counts=False, is_current=True)
    assert first.leaks == 0  # made before the later reports were read
    honest = _counting_grade(rival_agent, replay)
    assert honest.leaks == 0 and "leaked_reads" not in honest.details
    assert honest.source_precision == 1.0
    forecasts = agent_http.get("/api/v1/forecasts/", params={"question": replay.pk}).json()["results"]
    assert forecasts[0]["grade"]["leaks"] == 2


def test_reading_before_opening_the_session_is_a_leak(
    world: dict[str, Any], agent: Agent, agent_http: httpx.Client
) -> None:
    replay, live = world["replay"], world["live"]
    # No session yet: nothing stops a live read, but grading remembers it.
    agent_http.get(f"/api/v1/evidence/articles/{world['after'].pk}/", params={"question": live.pk}).raise_for_status()
    _forecast(agent_http, replay, 0.9, session=_session(agent_http, replay))
    _publish_and_grade(replay)
    grade = _counting_grade(agent, replay)
    assert grade.leaks == 1 and grade.details["leaked_reads"]["items"] == [world["after"].pk]


def test_prices_and_event_counts_as_of_now_are_leaks_too(
    world: dict[str, Any], agent: Agent, agent_http: httpx.Client
) -> None:
    replay = world["replay"]
    market = MarketFactory()
    live = live_question("binary", title="Will the reservoir levy pass?", market=market)
    early = PricePoint.objects.create(market=market, outcome="Yes", time=T_SIM - timedelta(days=3), probability=0.4)
    late = PricePoint.objects.create(market=market, outcome="Yes", time=T_SIM + timedelta(days=3), probability=0.9)
    StructuredEvent.objects.create(date=(T_SIM + timedelta(days=1)).date(), subject="USA", object="CHN",
                                   relation="042", relation_root="04")  # fmt: skip
    _forecast(agent_http, live, 0.5)
    agent_http.get(f"/api/v1/evidence/prices/{live.pk}/").raise_for_status()
    agent_http.get("/api/v1/evidence/events/", params={"question": live.pk, "aggregate": "count"}).raise_for_status()
    _forecast(agent_http, replay, 0.9, session=_session(agent_http, replay))
    _publish_and_grade(replay)

    items = _counting_grade(agent, replay).details["leaked_reads"]["items"]
    assert f"price:{late.pk}" in items and f"price:{early.pk}" not in items
    assert sum(1 for i in items if str(i).startswith("query:")) == 1
    assert _counting_grade(agent, replay).leaks == 2


def test_closing_the_session_ends_the_work_and_the_forecasts(
    world: dict[str, Any], agent: Agent, agent_http: httpx.Client, rival_http: httpx.Client
) -> None:
    replay, live = world["replay"], world["live"]
    session = _session(agent_http, replay)
    assert _search(agent_http, question=live.pk).status_code == 403
    assert rival_http.delete(f"/api/v1/replays/{session}/").status_code == 404  # only its own agent closes it

    closed = agent_http.delete(f"/api/v1/replays/{session}/")
    assert closed.status_code == 200 and closed.json()["id"] == session and closed.json()["closed_at"]
    assert agent_http.delete(f"/api/v1/replays/{session}/").json()["closed_at"] == closed.json()["closed_at"]
    assert _search(agent_http, question=live.pk).status_code == 200
    refused = agent_http.post(
        "/api/v1/forecasts/", json={"question": replay.pk, "session": session, "prediction": {"probability": 0.9}}
    )
    assert refused.status_code == 409 and "was closed" in refused.json()["message"]
    assert agent_http.post("/api/v1/replays/", json={"question": replay.pk}).json()["closed_at"] is not None
    assert not Forecast.objects.exists()
