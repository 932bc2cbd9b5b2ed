"""Property over real HTTP: for random corpora and simulated dates, no gateway endpoint returns,
counts, snippets or pages over an article, event or price at or after the session's date."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingestion.models import Article, Market, PricePoint, Question, StructuredEvent
from leaderboard.models import Agent, ReplaySession
from leaderboard.services.evidence import evidence_log_discard, evidence_log_flush
from tests.factories import QuestionFactory

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]

CUT = datetime(2025, 6, 1, 12, tzinfo=UTC)
offsets = st.one_of(
    st.just(timedelta(0)),
    st.integers(-2, 2).map(lambda us: timedelta(microseconds=us)),
    st.integers(-3 * 86400, 3 * 86400).map(lambda s: timedelta(seconds=s)),
)
zones = st.sampled_from([UTC, timezone(timedelta(hours=9)), timezone(timedelta(hours=-5))])
instants = st.tuples(offsets, zones).map(lambda t: (CUT + t[0]).astimezone(t[1]))


@pytest.fixture(autouse=True)
def _isolated_log() -> Iterator[None]:
    evidence_log_discard()
    yield
    evidence_log_discard()


def parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    article_times=st.lists(st.one_of(st.none(), instants), max_size=8),
    event_days=st.lists(st.integers(-3, 2), max_size=6),
    price_times=st.lists(instants, max_size=6, unique_by=lambda t: t.astimezone(UTC)),
    simulated_at=instants,
)
def test_no_endpoint_sees_past_the_session_date(
    agent: Agent,
    agent_http: httpx.Client,
    article_times: list[datetime | None],
    event_days: list[int],
    price_times: list[datetime],
    simulated_at: datetime,
) -> None:
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id=str(uuid.uuid4()), title="Prop")
    question = QuestionFactory(track=Question.Track.REPLAY, status=Question.Status.RESOLVED, market=market)
    session = ReplaySession.objects.create(
        agent=agent, question=question, simulated_at=simulated_at, created_at=CUT + timedelta(days=60)
    )
    try:
        articles = [
            Article.objects.create(
                url=f"https://news.example.org/prop/{i}",
                title=f"Zebra sighting {i}",
                summary="A zebra was seen.",
                body="zebra " * (i + 1),
                published_at=t,
                fetched_at=CUT + timedelta(days=30),
                content_hash=f"prop{i:060x}",
            )
            for i, t in enumerate(article_times)
        ]
        events = [
            StructuredEvent.objects.create(
                date=CUT.date() + timedelta(days=d),
                subject="USA",
                object="CHN" if i % 2 else "RUS",
                relation="042" if i % 3 else "190",
                relation_root="04" if i % 3 else "19",
                dedupe_key=f"prop{i}",
            )
            for i, d in enumerate(event_days)
        ]
        for t in [*price_times, CUT + timedelta(days=90)]:
            PricePoint.objects.create(market=market, outcome="Yes", time=t, probability=0.5)

        visible = {a.pk for a in articles if a.published_at is not None and a.published_at < simulated_at}
        last_day: date = simulated_at.astimezone(UTC).date() - timedelta(days=1)
        seen_events = [e for e in events if e.date <= last_day]
        sid = str(session.pk)

        seen: list[int] = []
        offset = 0
        while True:
            r = agent_http.get(
                "/api/v1/evidence/articles/", params={"q": "zebra", "session": sid, "limit": 3, "offset": offset}
            )
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["count"] == len(visible)
            if not body["results"]:
                break
            assert all(parse(x["published_at"]) < simulated_at for x in body["results"])
            seen.extend(x["id"] for x in body["results"])
            offset += 3
        assert sorted(seen) == sorted(visible)

        for a in articles:
            r = agent_http.get(f"/api/v1/evidence/articles/{a.pk}/", params={"session": sid})
            assert r.status_code == (200 if a.pk in visible else 404)

        r = agent_http.get("/api/v1/evidence/events/", params={"session": sid, "limit": 50}).json()
        assert sorted(e["id"] for e in r["events"]) == sorted(e.pk for e in seen_events)
        assert r["count"] == len(seen_events)
        count = agent_http.get("/api/v1/evidence/events/", params={"session": sid, "aggregate": "count"}).json()
        assert count["count"] == len(seen_events)
        rel = agent_http.get("/api/v1/evidence/events/", params={"session": sid, "aggregate": "relation"}).json()
        assert rel["distribution"] == dict(Counter(e.relation for e in seen_events))
        ent = agent_http.get("/api/v1/evidence/events/", params={"session": sid, "aggregate": "entity"}).json()
        assert sum(ent["distribution"].values()) == 2 * len(seen_events)

        prices = agent_http.get(f"/api/v1/evidence/prices/{question.pk}/", params={"session": sid}).json()
        assert len(prices["prices"]) == sum(1 for t in price_times if t < simulated_at)
        assert all(parse(p["time"]) < simulated_at for p in prices["prices"])
    finally:
        # The next example starts from an empty world; session, question and market rows stay (each
        # example makes its own) because the server may still be writing log rows that refer to them.
        evidence_log_flush()
        Article.objects.filter(url__startswith="https://news.example.org/prop/").delete()
        StructuredEvent.objects.filter(dedupe_key__startswith="prop").delete()
        PricePoint.objects.filter(market=market).delete()
