"""/api/v1/evidence/ over real HTTP: auth, scopes, paging rules, 404s, and no hindsight leaks."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest

from ingestion.models import Market, PricePoint, Question, Resolution, StructuredEvent
from leaderboard.models import Agent, ReplaySession
from leaderboard.services.evidence import evidence_log_discard
from tests.factories import ArticleFactory, QuestionFactory

pytestmark = pytest.mark.django_db(transaction=True)

T_SIM = datetime(2025, 3, 1, 12, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _isolated_log() -> Iterator[None]:
    evidence_log_discard()
    yield
    evidence_log_discard()


@pytest.fixture
def market() -> Market:
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id="m", title="Will X?", status="resolved")
    market.raw = {"resolution": "YES"}
    market.save()
    for days, p in [(-10, 0.3), (-1, 0.45), (0, 0.5), (40, 1.0)]:
        PricePoint.objects.create(market=market, outcome="Yes", time=T_SIM + timedelta(days=days), probability=p)
    return market


@pytest.fixture
def replay_question(market: Market) -> Question:
    q = QuestionFactory(
        track=Question.Track.REPLAY,
        status=Question.Status.RESOLVED,
        market=market,
        open_at=T_SIM - timedelta(days=30),
        close_at=T_SIM + timedelta(days=30),
    )
    Resolution.objects.create(
        question=q,
        version=1,
        kind=Resolution.Kind.RESOLVE,
        outcome={"value": "SECRET-OUTCOME"},
        created_at=T_SIM + timedelta(days=31),
    )
    return q


@pytest.fixture
def session(agent: Agent, replay_question: Question) -> ReplaySession:
    return ReplaySession.objects.create(
        agent=agent, question=replay_question, simulated_at=T_SIM, created_at=datetime.now(UTC)
    )


@pytest.fixture
def corpus() -> dict[str, Any]:
    return {
        "early": ArticleFactory(title="Senate debates budget", published_at=T_SIM - timedelta(days=3)),
        "at_cut": ArticleFactory(title="Senate passes budget", published_at=T_SIM),
        "late": ArticleFactory(title="Budget outcome known", published_at=T_SIM + timedelta(days=5)),
        "undated": ArticleFactory(title="Budget rumours", published_at=None),
    }


def test_no_token_is_401_everywhere(http: httpx.Client, session: ReplaySession, replay_question: Question) -> None:
    for path in [
        f"/api/v1/evidence/articles/?q=budget&session={session.pk}",
        f"/api/v1/evidence/articles/1/?session={session.pk}",
        f"/api/v1/evidence/events/?session={session.pk}",
        f"/api/v1/evidence/prices/{replay_question.pk}/?session={session.pk}",
        "/api/v1/evidence/log/",
    ]:
        r = http.get(path)
        assert r.status_code == 401, path
        assert r.headers["WWW-Authenticate"] == "Token"
    assert http.get("/api/v1/evidence/log/", headers={"Authorization": "Token nope"}).status_code == 401


def test_search_as_of_the_session_date(agent_http: httpx.Client, session: ReplaySession, corpus: dict) -> None:
    r = agent_http.get("/api/v1/evidence/articles/", params={"q": "budget", "session": str(session.pk)})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["count"] == 1
    assert [x["id"] for x in body["results"]] == [corpus["early"].pk]
    assert set(body["results"][0]) == {"id", "title", "url", "source", "published_at", "snippet", "score"}
    assert "<mark>" in body["results"][0]["snippet"]
    assert datetime.fromisoformat(body["as_of"].replace("Z", "+00:00")) == T_SIM


def test_another_agents_session_is_404_like_an_unknown_one(
    rival_http: httpx.Client, session: ReplaySession, replay_question: Question, corpus: dict
) -> None:
    answers = []
    for sid in [session.pk, uuid.uuid4()]:
        for path in [
            "/api/v1/evidence/articles/?q=budget",
            f"/api/v1/evidence/articles/{corpus['early'].pk}/?x=1",
            "/api/v1/evidence/events/?x=1",
            f"/api/v1/evidence/prices/{replay_question.pk}/?x=1",
        ]:
            r = rival_http.get(f"{path}&session={sid}")
            assert r.status_code == 404, (path, r.text)
            answers.append(r.json())
    assert all(a == {"code": "not_found", "message": "Replay session not found."} for a in answers)


def test_limit_above_the_maximum_and_bad_paging_are_400(agent_http: httpx.Client, session: ReplaySession) -> None:
    for i in range(55):
        ArticleFactory(title=f"Budget item {i}", published_at=T_SIM - timedelta(hours=i + 1))
    r = agent_http.get("/api/v1/evidence/articles/", params={"q": "budget", "session": str(session.pk), "limit": 50})
    assert r.status_code == 200
    assert r.json()["limit"] == 50 and len(r.json()["results"]) == 50 and r.json()["count"] == 55
    for params, field in [
        ({"offset": -1}, "offset"),
        ({"limit": 0}, "limit"),
        ({"limit": 51}, "limit"),
        ({"q": ""}, "q"),
    ]:
        r = agent_http.get("/api/v1/evidence/articles/", params={"q": "budget", "session": str(session.pk), **params})
        assert r.status_code == 400
        assert r.json()["errors"][0]["field"] == field


def test_read_not_yet_published_is_404_exactly_like_missing(
    agent_http: httpx.Client, session: ReplaySession, corpus: dict
) -> None:
    ok = agent_http.get(f"/api/v1/evidence/articles/{corpus['early'].pk}/", params={"session": str(session.pk)})
    assert ok.status_code == 200 and ok.json()["body"] == corpus["early"].body
    misses = [
        agent_http.get(f"/api/v1/evidence/articles/{pk}/", params={"session": str(session.pk)})
        for pk in [corpus["at_cut"].pk, corpus["late"].pk, corpus["undated"].pk, 987654]
    ]
    assert {m.status_code for m in misses} == {404}
    assert len({m.text for m in misses}) == 1


def test_scope_rules(agent_http: httpx.Client, replay_question: Question, corpus: dict) -> None:
    r = agent_http.get("/api/v1/evidence/articles/", params={"q": "budget", "question": replay_question.pk})
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "session"
    r = agent_http.get("/api/v1/evidence/articles/", params={"q": "budget"})
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "session"
    live = QuestionFactory(track=Question.Track.LIVE, status=Question.Status.OPEN)
    r = agent_http.get("/api/v1/evidence/articles/", params={"q": "budget", "question": live.pk})
    assert r.status_code == 200 and r.json()["count"] == 3  # as of now: everything dated
    draft = QuestionFactory(status=Question.Status.DRAFT)
    assert agent_http.get("/api/v1/evidence/events/", params={"question": draft.pk}).status_code == 404


def test_relation_question_follows_miraIs_horizon_rule(agent_http: httpx.Client) -> None:
    target = date(2025, 5, 10)
    question = QuestionFactory(
        type=Question.Type.RELATION, subject="USA", object="CHN", target_date=target, horizon_days=7
    )
    for offset in range(-9, 0):
        day = target + timedelta(days=offset)
        StructuredEvent.objects.create(
            date=day, subject="USA", object="CHN", relation="042", relation_root="04", dedupe_key=str(day)
        )
    r = agent_http.get("/api/v1/evidence/events/", params={"question": question.pk, "subject": "USA"})
    assert r.status_code == 200, r.text
    # Day t - l = May 3 is the last visible day.
    assert [e["date"] for e in r.json()["events"]] == ["2025-05-03", "2025-05-02", "2025-05-01"]
    assert r.json()["as_of"].startswith("2025-05-04T00:00:00")


def test_events_aggregates_and_field_errors(agent_http: httpx.Client, session: ReplaySession) -> None:
    day = T_SIM.date() - timedelta(days=2)
    for i, (s, o, rel) in enumerate([("USA", "CHN", "042"), ("USA", "CHN", "043"), ("CHN", "RUS", "190")]):
        StructuredEvent.objects.create(
            date=day, subject=s, object=o, relation=rel, relation_root=rel[:2], dedupe_key=str(i)
        )
    base = {"session": str(session.pk)}
    get = lambda **p: agent_http.get("/api/v1/evidence/events/", params={**base, **p})  # noqa: E731
    assert get(aggregate="count", relation="04").json()["count"] == 2
    assert get(aggregate="relation").json()["distribution"] == {"042": 1, "043": 1, "190": 1}
    assert get(aggregate="entity", role="head").json()["distribution"] == {"USA": 2, "CHN": 1}
    listed = get(limit=2).json()
    assert listed["count"] == 3 and len(listed["events"]) == 2
    for params, field in [
        ({"relation": "77"}, "relation"),
        ({"subject": "U$A"}, "subject"),
        ({"offset": -3}, "offset"),
        ({"start": "2025-02-10", "end": "2025-02-01"}, "end"),
        ({"aggregate": "sum"}, "aggregate"),
    ]:
        r = get(**params)
        assert r.status_code == 400, params
        assert r.json()["errors"][0]["field"] == field


def test_prices_stop_before_the_session_date_and_hide_the_settlement(
    agent_http: httpx.Client, session: ReplaySession, replay_question: Question
) -> None:
    r = agent_http.get(f"/api/v1/evidence/prices/{replay_question.pk}/", params={"session": str(session.pk)})
    assert r.status_code == 200, r.text
    assert [p["probability"] for p in r.json()["prices"]] == [0.3, 0.45]
    assert "1.0" not in r.text and "resolved" not in r.text and "YES" not in r.text
    other = QuestionFactory(track=Question.Track.REPLAY, status=Question.Status.RESOLVED)
    r = agent_http.get(f"/api/v1/evidence/prices/{other.pk}/", params={"session": str(session.pk)})
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "question"


def test_no_endpoint_reveals_the_replay_outcome(
    agent_http: httpx.Client, session: ReplaySession, replay_question: Question, corpus: dict
) -> None:
    sid = str(session.pk)
    texts = [
        agent_http.get("/api/v1/evidence/articles/", params={"q": "budget", "session": sid}).text,
        agent_http.get(f"/api/v1/evidence/articles/{corpus['early'].pk}/", params={"session": sid}).text,
        agent_http.get("/api/v1/evidence/events/", params={"session": sid}).text,
        agent_http.get(f"/api/v1/evidence/prices/{replay_question.pk}/", params={"session": sid}).text,
        agent_http.get("/api/v1/evidence/log/").text,
    ]
    for text in texts:
        assert "SECRET-OUTCOME" not in text and "resolution" not in text and "hindsight" not in text
