"""The evidence access log: every gateway query is recorded, in bulk, and each agent sees only its own."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from django.test import override_settings

from ingestion.models import Question
from leaderboard.models import Agent, EvidenceAccess, ReplaySession
from leaderboard.selectors.evidence import articles_read_for, evidence_log_for_agent
from leaderboard.services.evidence import (
    EvidenceScope,
    evidence_access_record,
    evidence_log_discard,
    evidence_log_flush,
    evidence_scope_resolve,
)
from tests.factories import ArticleFactory, QuestionFactory

T_SIM = datetime(2025, 3, 1, 12, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _isolated_log() -> Iterator[None]:
    evidence_log_discard()
    yield
    evidence_log_discard()


def make_session(agent: Agent) -> ReplaySession:
    question = QuestionFactory(track=Question.Track.REPLAY, status=Question.Status.RESOLVED)
    return ReplaySession.objects.create(agent=agent, question=question, simulated_at=T_SIM, created_at=T_SIM)


@pytest.mark.django_db(transaction=True)
def test_searches_reads_events_and_prices_are_logged(
    agent: Agent, agent_http: httpx.Client, rival_agent: Agent, rival_http: httpx.Client
) -> None:
    session = make_session(agent)
    rival_session = make_session(rival_agent)
    early = ArticleFactory(title="Harbour strike spreads", published_at=T_SIM - timedelta(days=1))
    also = ArticleFactory(title="Harbour reopens", published_at=T_SIM - timedelta(days=2))
    sid = str(session.pk)
    agent_http.get("/api/v1/evidence/articles/", params={"q": "harbour", "session": sid})
    agent_http.get(f"/api/v1/evidence/articles/{early.pk}/", params={"session": sid})
    agent_http.get("/api/v1/evidence/events/", params={"session": sid, "relation": "04"})
    agent_http.get(f"/api/v1/evidence/prices/{session.question_id}/", params={"session": sid})
    rival_http.get("/api/v1/evidence/articles/", params={"q": "strike", "session": str(rival_session.pk)})
    # Failed requests (another agent's session, invisible article) are not accesses.
    rival_http.get("/api/v1/evidence/articles/", params={"q": "strike", "session": sid})

    log = agent_http.get("/api/v1/evidence/log/").json()
    assert log["count"] == 4
    kinds = [e["kind"] for e in log["results"]]
    assert sorted(kinds) == ["events", "prices", "read", "search"]
    search = next(e for e in log["results"] if e["kind"] == "search")
    assert search["query"]["q"] == "harbour"
    assert sorted(search["item_ids"]) == sorted([early.pk, also.pk])
    assert search["session"] == sid and search["question"] == session.question_id
    read = next(e for e in log["results"] if e["kind"] == "read")
    assert read["article"] == early.pk
    assert next(e for e in log["results"] if e["kind"] == "events")["query"] == {"relation": "04"}

    rival_log = rival_http.get("/api/v1/evidence/log/").json()
    assert rival_log["count"] == 1 and rival_log["results"][0]["query"]["q"] == "strike"
    assert agent_http.get("/api/v1/evidence/log/", params={"limit": 1}).json()["next"]

    assert articles_read_for(agent, session.question, session) == {early.pk}
    assert articles_read_for(agent, session.question, session, include_search_results=True) == {early.pk, also.pk}
    assert articles_read_for(rival_agent, session.question) == set()


@pytest.mark.django_db(transaction=True)
def test_log_rows_are_written_once_the_request_has_finished(agent: Agent, agent_http: httpx.Client) -> None:
    session = make_session(agent)
    a = ArticleFactory(title="Bridge collapse", published_at=T_SIM - timedelta(days=1))
    r = agent_http.get(f"/api/v1/evidence/articles/{a.pk}/", params={"session": str(session.pk)})
    assert r.status_code == 200
    evidence_log_flush()  # whatever the server thread has not written yet, in this same process
    assert EvidenceAccess.objects.filter(agent=agent, kind="read", article=a).count() == 1


@pytest.mark.django_db(transaction=True)  # foreign keys are checked at commit: autocommit needed
def test_buffer_writes_in_batches_and_survives_a_bad_row(agent: Agent, rival_agent: Agent) -> None:
    session = make_session(agent)
    scope = evidence_scope_resolve(agent=agent, session_id=session.pk, now=T_SIM + timedelta(days=400))
    with override_settings(HINDSIGHT_EVIDENCE_LOG_BATCH=3):
        for i in range(2):
            evidence_access_record(agent=agent, scope=scope, kind="search", query={"q": str(i)}, item_ids=[], now=T_SIM)
        assert EvidenceAccess.objects.count() == 0
        evidence_access_record(agent=agent, scope=scope, kind="search", query={"q": "2"}, item_ids=[], now=T_SIM)
        assert EvidenceAccess.objects.count() == 3
    ghost = Agent(pk=987654, team=agent.team, name="ghost", slug="ghost")
    ghost_scope = EvidenceScope(as_of=T_SIM, session=None, question=None)
    evidence_access_record(agent=ghost, scope=ghost_scope, kind="search", query={}, item_ids=[], now=T_SIM)
    evidence_access_record(agent=agent, scope=scope, kind="read", query={}, item_ids=[1], now=T_SIM)
    assert evidence_log_flush() == 1
    assert evidence_log_for_agent(agent).count() == 4
    assert evidence_log_for_agent(rival_agent).count() == 0


@pytest.mark.django_db
def test_scope_needs_an_aware_now(agent: Agent) -> None:
    live = QuestionFactory()
    with pytest.raises(ValueError, match="timezone-aware"):
        evidence_scope_resolve(agent=agent, question_id=live.pk, now=datetime(2025, 1, 1))
