"""The Python client package (clients/python, ``hindsight_client``) against the live test server:
typed questions page by page, a replay session, as-of evidence, forecasts and the agent's own log."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import pytest

from hindsight_client import (
    Article,
    Client,
    Conflict,
    Forecast,
    NotFound,
    Question,
    ReplaySession,
    SearchPage,
)
from ingestion.models import Market, PricePoint, StructuredEvent
from ingestion.models import Question as QuestionRow
from leaderboard.models import Agent
from tests.factories import ArticleFactory
from tests.leaderboard.api_support import T_RES, live_question, replay_question

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def hs(live_server: Any, agent_key: str) -> Any:
    with Client(live_server.url, agent_key) as client:
        yield client


def test_questions_page_lazily_and_carry_types(hs: Client) -> None:
    made = [live_question("binary", origin=QuestionRow.Origin.SAMPLE) for _ in range(5)]
    live_question("multiple_choice", origin=QuestionRow.Origin.IMPORTED)
    relation = live_question("relation", origin=QuestionRow.Origin.SAMPLE)

    listed = list(hs.questions(origin="sample", page_size=2))
    assert [q.id for q in listed] == [q.pk for q in [*made, relation]]  # close_at, id order over 3 pages
    assert all(isinstance(q, Question) and q.open_at.tzinfo is not None for q in listed)
    assert len(list(hs.questions(origin=["sample", "imported"], page_size=50))) == 7
    detail = hs.question(relation.pk)
    assert detail.target_date == date(2026, 6, 1) and detail.subject == "USA" and detail.outcome is None
    assert detail.raw["id"] == relation.pk


def test_replay_session_evidence_and_forecasts(hs: Client, agent: Agent) -> None:
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id="levee", title="Levee")
    question = replay_question("binary", title="Will the levee hold?", market=market)
    early = ArticleFactory(title="Levee inspection finds cracks", published_at=question.open_at - timedelta(days=3))
    late = ArticleFactory(title="Levee holds through the flood", published_at=T_RES + timedelta(days=1))
    StructuredEvent.objects.create(
        date=question.open_at.date() - timedelta(days=1), subject="USA", object="CAN", relation="042",
        relation_root="04", dedupe_key="client-1",
    )  # fmt: skip
    PricePoint.objects.create(market=market, outcome="Yes", time=question.open_at - timedelta(hours=2), probability=0.3)
    PricePoint.objects.create(market=market, outcome="Yes", time=question.open_at - timedelta(hours=1), probability=0.4)
    PricePoint.objects.create(market=market, outcome="Yes", time=T_RES + timedelta(days=2), probability=0.99)

    session = hs.open_replay(question.pk)
    assert isinstance(session, ReplaySession) and session.created is True
    reopened = hs.open_replay(question.pk)
    assert (reopened.id, reopened.simulated_date, reopened.created) == (session.id, session.simulated_date, False)
    assert isinstance(session.simulated_date, datetime)

    page = hs.search_articles("levee", session=session)
    assert isinstance(page, SearchPage) and [hit.id for hit in page.results] == [early.pk]
    assert page.as_of == session.simulated_date and page.next_offset is None
    article = hs.read_article(early.pk, session=session)
    assert isinstance(article, Article) and article.body and article.published_at < session.simulated_date
    with pytest.raises(NotFound) as hidden:
        hs.read_article(late.pk, session=session)
    assert (hidden.value.status, hidden.value.code, hidden.value.message) == (404, "not_found", "Article not found.")

    events = hs.events(session=session, subject="USA")
    assert [(e.object, e.relation) for e in events.events] == [("CAN", "042")]
    assert hs.event_count(session=session, relation="04") == 1
    assert hs.event_distribution("relation", session=session) == {"042": 1}
    prices = hs.prices(question.pk, session=session)
    assert prices.market is not None and prices.market.title == "Levee" and prices.latest() == {"Yes": 0.4}

    forecast = hs.submit_forecast(
        question.pk, {"probability": 0.25}, session=session, sources=[article.id], idempotency_key="levee-1"
    )
    assert isinstance(forecast, Forecast) and forecast.created is True and forecast.session == session.id
    again = hs.submit_forecast(
        question.pk, {"probability": 0.25}, session=session, sources=[article.id], idempotency_key="levee-1"
    )
    assert (again.id, again.created) == (forecast.id, False)
    with pytest.raises(Conflict) as conflict:
        hs.submit_forecast(question.pk, {"probability": 0.9}, session=session, idempotency_key="levee-1")
    assert conflict.value.status == 409 and "levee-1" in conflict.value.message

    mine = list(hs.forecasts(question=question.pk))
    assert [f.id for f in mine] == [forecast.id]
    assert mine[0].grade is None and mine[0].grade_status.startswith("withheld")
    log = list(hs.evidence_log(page_size=2))
    assert sorted(entry.kind for entry in log) == ["events", "events", "events", "prices", "read", "search"]
    assert {entry.session for entry in log} == {session.id}
