"""Property: whatever agents, sessions, questions, scopes and reading orders, no replay forecast gets
clean credit for evidence dated at or after its simulated date.

Random agents open (and close) replay sessions, search, read, list and count structured events and read prices
through sessions and live questions, and forecast (citing what they were served), all through the
services the API calls, with the clock moving forward. Then every replay outcome is published and
graded. The oracle is the gateway's own visibility rule (the ingestion selectors): an item the
agent was served before its counting replay forecast that the gateway would not have shown as of
the forecast's simulated date is a leak. Each grade must count exactly those (and the cited ones),
and must not credit any of them as supporting evidence. The gateway's refusals must follow the
rule for agents working on a replay question.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingestion.models import Article, Market, PricePoint, Question, StructuredEvent
from ingestion.selectors.evidence import article_get, prices_history
from ingestion.selectors.structured_events import events_query
from leaderboard.models import Agent, Forecast, Grade, ReplaySession
from leaderboard.services.errors import ForecastConflict
from leaderboard.services.evidence import (
    EventFilters,
    EvidenceForbidden,
    EvidenceNotFound,
    evidence_article_read,
    evidence_articles_search,
    evidence_events,
    evidence_log_discard,
    evidence_prices,
    evidence_scope_resolve,
)
from leaderboard.services.forecasts import forecast_submit
from leaderboard.services.grade_runs import grade_questions
from leaderboard.services.replay_sessions import replay_session_close, replay_session_open
from tests.factories import T0, AgentFactory, MarketFactory
from tests.leaderboard.api_support import live_question, replay_question
from tests.leaderboard.grading_support import RefEvent, make_reference

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db, pytest.mark.usefixtures("isolated_evidence_log")]

NOW = T0 + timedelta(days=140)  # the clock when the agents start; every item is dated before it
POLICIES = ("early", "mid", "late", "near_resolution")
KINDS = ("open", "search", "read", "events", "count", "prices", "forecast", "forecast", "close")
TOTALS: Counter[str] = Counter()


@dataclass
class Served:
    at: datetime
    key: Any  # article id, ("event", id), ("price", id) or ("query", as_of)


@dataclass
class World:
    agents: list[Agent]
    replay: list[Question]
    live: list[Question]
    articles: list[Article]
    market: Market
    references: dict[int, set[int]]
    served: dict[int, list[Served]] = field(default_factory=dict)  # agent id -> what it was served
    session_reads: dict[str, list[tuple[datetime, int]]] = field(default_factory=dict)  # session -> full reads


def build(data: dict[str, Any]) -> World:
    articles = [
        Article.objects.create(
            url=f"https://news.example.org/reservoir/{i}",
            title=f"Reservoir report {i}",
            summary="Works on the reservoir.",
            body="reservoir dam " * (i + 1),
            published_at=T0 + timedelta(hours=hours),
            fetched_at=NOW,
            content_hash=f"leak{i:060x}",
        )
        for i, hours in enumerate(data["article_hours"])
    ]
    market = MarketFactory()
    for hours in data["price_hours"]:
        PricePoint.objects.create(market=market, outcome="Yes", time=T0 + timedelta(hours=hours), probability=0.5)
    for i, days in enumerate(data["event_days"]):
        StructuredEvent.objects.create(
            date=(T0 + timedelta(days=days)).date(),
            subject="USA",
            object="CHN",
            relation="042",
            relation_root="04",
            dedupe_key=f"leak-property-{i}",
        )
    replay = [replay_question("binary", outcome=True, simulated_date_policy=p) for p in data["policies"]]
    references = {}
    for question, picks in zip(replay, data["reference_picks"], strict=False):  # three picks, 1-3 questions
        sources = [articles[i % len(articles)] for i in picks] if articles else []
        make_reference(
            question, [RefEvent("e1", "Dam finished", (T0 + timedelta(days=60)).date(), 0.9, 1.0, sources=sources)]
        )
        references[question.pk] = {a.pk for a in sources}
    live = [live_question("binary", market=market if i == 0 else None) for i in range(data["n_live"])]
    agents = [AgentFactory() for _ in range(data["n_agents"])]
    return World(agents, replay, live, articles, market, references)


def in_progress(world: World, agent: Agent) -> bool:
    """The oracle of 'working on a replay question': an open session on an offered question, no forecast in it."""
    return any(
        not Forecast.objects.filter(session=s).exists()
        for s in ReplaySession.objects.filter(
            agent=agent, closed_at__isnull=True, question__outcome_published_at__isnull=True
        )
    )


def session_of(agent: Agent, target: Question, now: datetime) -> ReplaySession | None:
    """The agent's session on a replay target (opened now if it has none yet)."""
    if target.track != Question.Track.REPLAY:
        return None
    return replay_session_open(agent=agent, question_id=target.pk, now=now)[0]


def probe(world: World, agent: Agent, kind: str, target: Question, pick: int, now: datetime) -> None:
    """One evidence call through the services; records what was served."""
    session = session_of(agent, target, now)
    refused = target.track == Question.Track.LIVE and (
        in_progress(world, agent) and not Forecast.objects.filter(agent=agent, question=target).exists()
    )
    TOTALS["probes"] += 1
    try:
        scope = evidence_scope_resolve(
            agent=agent,
            session_id=session.pk if session else None,
            question_id=None if session else target.pk,
            now=now,
        )
    except EvidenceForbidden:
        assert refused, "refused although the agent may read as of now"
        TOTALS["refused"] += 1
        return
    assert not refused, "served as of now to an agent working on a replay question"
    served = world.served.setdefault(agent.pk, [])
    if kind == "search":
        page = evidence_articles_search(agent=agent, scope=scope, query="reservoir", limit=5, offset=0, now=now)
        served.extend(Served(now, r.id) for r in page.results)
    elif kind == "read" and world.articles:
        article = world.articles[pick % len(world.articles)]
        try:
            evidence_article_read(agent=agent, scope=scope, article_id=article.pk, now=now)
        except EvidenceNotFound:
            return
        served.append(Served(now, article.pk))
        if scope.session is not None:
            world.session_reads.setdefault(str(scope.session.pk), []).append((now, article.pk))
    elif kind == "events":
        result = evidence_events(agent=agent, scope=scope, filters=EventFilters(subject="USA"), limit=5, now=now)
        served.extend(Served(now, ("event", e.pk)) for e in result["events"])
    elif kind == "count":
        evidence_events(agent=agent, scope=scope, filters=EventFilters(subject="USA"), aggregate="count", now=now)
        served.append(Served(now, ("query", scope.as_of)))
    elif kind == "prices":
        _, points = evidence_prices(agent=agent, scope=scope, now=now)
        served.extend(Served(now, ("price", p.pk)) for p in points)


def forecast(world: World, agent: Agent, target: Question, pick: int, now: datetime) -> None:
    session = session_of(agent, target, now)
    articles = sorted({s.key for s in world.served.get(agent.pk, []) if isinstance(s.key, int)})
    cited = [a for i, a in enumerate(articles) if pick >> i & 1]
    if session is not None and session.closed_at is not None:
        with pytest.raises(ForecastConflict, match="was closed"):
            forecast_submit(agent=agent, question_id=target.pk, session_id=session.pk, prediction={}, now=now)
        return
    forecast_submit(
        agent=agent,
        question_id=target.pk,
        session_id=session.pk if session else None,
        prediction={"probability": 0.3 + 0.1 * (pick % 5)},
        sources=cited,
        now=now,
    )


def visible(key: Any, as_of: datetime, market: Market) -> bool:
    """The gateway's visibility rule, from the ingestion selectors."""
    if isinstance(key, int):
        return article_get(article_id=key, as_of=as_of) is not None
    kind, value = key
    if kind == "event":
        return events_query(as_of=as_of).filter(pk=value).exists()
    if kind == "price":
        return prices_history(market=market, as_of=as_of).filter(pk=value).exists()
    return bool(value <= as_of)  # an aggregate answered as of `value`


def check_grades(world: World) -> None:
    for question in world.replay:
        for grade in Grade.objects.filter(forecast__question=question, is_current=True, counts=True).select_related(
            "forecast", "forecast__session"
        ):
            f = grade.forecast
            assert f.session is not None
            as_of = f.session.simulated_at
            served = [s for s in world.served.get(f.agent_id, []) if s.at <= f.received_at]
            leaked = {s.key for s in served if not visible(s.key, as_of, world.market)}
            queries = sum(1 for s in served if not isinstance(s.key, int) and s.key[0] == "query" and s.key in leaked)
            items = {k for k in leaked if isinstance(k, int) or k[0] != "query"}
            cited = {int(a) for a in f.sources}
            cited_leaks = {a for a in cited if not visible(a, as_of, world.market)}
            expected = len(items | cited_leaks) + queries
            TOTALS["replay forecasts"] += 1
            TOTALS["post-date items served before a replay forecast"] += len(leaked)
            TOTALS["of them counted as leaks"] += min(grade.leaks or 0, len(leaked))
            assert grade.leaks == expected, (grade.leaks, expected, grade.details)
            if leaked or cited_leaks:
                assert grade.leaks > 0  # never clean credit
            # SrcP: C is the cited articles, the articles read in full through the session and the
            # leaked articles; only the clean ones can overlap the reference.
            read = {a for at, a in world.session_reads.get(str(f.session_id), []) if at <= f.received_at}
            sources = cited | read | {k for k in leaked if isinstance(k, int)}
            clean = sources - leaked - cited_leaks
            reference = world.references[question.pk]
            assert grade.details["evidence"]["overlap"] == len(clean & reference)
            expected_srcp = len(clean & reference) / len(sources) if sources else 0.0
            assert grade.source_precision == pytest.approx(expected_srcp)


# Simulated dates fall on whole days (25, 50, 75 and 95 days after t0): items land on them and beside them.
BOUNDARY_DAYS = (25, 50, 75, 95)
hours = st.one_of(st.integers(0, 130 * 24), st.sampled_from([24 * d + k for d in BOUNDARY_DAYS for k in (-1, 0, 1)]))
days = st.one_of(st.integers(0, 130), st.sampled_from([d + k for d in BOUNDARY_DAYS for k in (-1, 0, 1)]))
ops = st.lists(
    st.tuples(st.sampled_from(KINDS), st.integers(0, 2), st.integers(0, 4), st.integers(0, 255)),
    min_size=15,
    max_size=40,
)


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    data=st.fixed_dictionaries(
        {
            "article_hours": st.lists(hours, min_size=1, max_size=8),
            "price_hours": st.lists(hours, max_size=4, unique=True),
            "event_days": st.lists(days, max_size=4),
            "policies": st.lists(st.sampled_from(POLICIES), min_size=1, max_size=3),
            "reference_picks": st.lists(st.lists(st.integers(0, 7), max_size=3), min_size=3, max_size=3),
            "n_live": st.integers(1, 2),
            "n_agents": st.integers(1, 3),
        }
    ),
    operations=ops,
)
def test_no_replay_forecast_gets_clean_credit_for_later_evidence(data: dict[str, Any], operations: list[Any]) -> None:
    with transaction.atomic():
        world = build(data)
        targets = [*world.replay, *world.live]
        now = NOW
        for kind, agent_index, target_index, pick in operations:
            now += timedelta(minutes=1 + pick % 7)
            agent = world.agents[agent_index % len(world.agents)]
            target = targets[target_index % len(targets)]
            if kind == "open":
                session_of(agent, target, now)
            elif kind == "close":
                if (session := session_of(agent, target, now)) is not None:
                    replay_session_close(agent=agent, session_id=session.pk, now=now)
            elif kind == "forecast":
                forecast(world, agent, target, pick, now)
            else:
                probe(world, agent, kind, target, pick, now)
        published = now + timedelta(hours=1)
        Question.objects.filter(pk__in=[q.pk for q in world.replay]).update(outcome_published_at=published)
        grade_questions(question_ids=[q.pk for q in world.replay], now=published)
        check_grades(world)
        transaction.set_rollback(True)
    evidence_log_discard()


def test_report_totals() -> None:
    """Runs after the property (same module, file order): prints what it probed (pytest -s shows it)."""
    print("leak property:", dict(TOTALS))
    assert TOTALS["post-date items served before a replay forecast"] == TOTALS["of them counted as leaks"]
