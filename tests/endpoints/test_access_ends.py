"""Deliveries end with access: once the agent is retired, or the person who registered its
endpoint is deleted, deactivated or taken off the team, nothing more is delivered (waiting deliveries are
cancelled naming why, no new question is offered), the evidence tokens already handed out are
refused, and an answer arriving after access ended is not stored."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.db import connection
from django.utils import timezone

from endpoints.delivering import delivery_run
from endpoints.models import Delivery
from endpoints.services.deliveries import deliveries_offer_live, delivery_request
from leaderboard.models import Agent, Forecast, Membership
from leaderboard.services.evidence_tokens import IssuedEvidenceToken, evidence_token_issue
from leaderboard.services.teams import token_create
from tests.access_cases import ENDINGS, WHY, assert_refused, end_access
from tests.endpoints.agent_server import AgentServer, Received, Reply
from tests.factories import QuestionFactory, UserFactory
from tests.leaderboard.api_support import live_question, replay_question

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("case", list(ENDINGS))
def test_deliveries_and_evidence_tokens_stop(
    case: str, agent: Agent, owner: Any, endpoint: Any, agent_server: AgentServer, http: httpx.Client, agent_key: str
) -> None:
    waiting, _ = delivery_request(agent=agent, question_id=live_question().pk, requested_by=owner)
    replay, token, search = replay_delivery_reading(agent=agent, owner=owner, http=http)

    end_access(case, agent=agent, owner=owner)

    code, _ = ENDINGS[case]
    for delivery in (waiting, replay):
        assert delivery_run(delivery_id=str(delivery.pk)).status == "skipped"
        delivery.refresh_from_db()
        assert delivery.status == Delivery.Status.CANCELLED and f"access ended ({code})" in delivery.last_error
    assert agent_server.received == []
    now = timezone.now()
    QuestionFactory(open_at=now - timedelta(minutes=1), close_at=now + timedelta(days=3))
    assert deliveries_offer_live(now=now) == []
    # The evidence token carries whoever registered the endpoint: it ends as the endpoint does.
    refused = http.get("/api/v1/evidence/articles/", params=search, headers=auth(token.key))
    assert_refused(refused.status_code, refused.json(), case)
    assert case == "retired" or "who created this endpoint" in refused.json()["message"]
    asked = http.post("/api/v1/deliveries/", json={"question": live_question().pk}, headers=auth(agent_key))
    assert_refused(asked.status_code, asked.json(), case)


def test_an_answer_arriving_after_retirement_is_not_stored(
    agent: Agent, owner: Any, endpoint: Any, agent_server: AgentServer
) -> None:
    def retired_while_thinking(received: Received) -> Reply:
        end_access("retired", agent=agent, owner=owner)
        return Reply(status=200, body={"prediction": {"probability": 0.7}})

    agent_server.reply = retired_while_thinking
    delivery, _ = delivery_request(agent=agent, question_id=live_question().pk, requested_by=owner)
    assert delivery_run(delivery_id=str(delivery.pk)).status == Delivery.Status.REFUSED
    delivery.refresh_from_db()
    assert "403 agent_retired" in delivery.last_error and "was retired on" in delivery.last_error
    assert not Forecast.objects.exists()


def test_a_deleted_team_ends_its_deliveries_and_evidence_tokens(
    agent: Agent, owner: Any, endpoint: Any, agent_server: AgentServer, http: httpx.Client
) -> None:
    _, token, search = replay_delivery_reading(agent=agent, owner=owner, http=http)

    def team_deleted_while_thinking(received: Received) -> Reply:
        agent.team.delete()
        connection.close()  # this thread's, so that the test database can be dropped
        return Reply(status=200, body={"prediction": {"probability": 0.7}})

    agent_server.reply = team_deleted_while_thinking
    live, _ = delivery_request(agent=agent, question_id=live_question().pk, requested_by=owner)
    # The answer arrives for an agent that no longer exists: nothing is stored, nothing fails.
    assert delivery_run(delivery_id=str(live.pk)).status == "claim-lost"
    assert not Forecast.objects.exists() and not Delivery.objects.exists()
    refused = http.get("/api/v1/evidence/articles/", params=search, headers=auth(token.key))
    assert refused.status_code == 401 and "no longer exists" in refused.json()["message"]


@pytest.mark.parametrize("case", ["deleted", "deactivated", "removed"])
def test_a_member_who_stays_is_told_why_the_endpoint_stopped(
    case: str, agent: Agent, owner: Any, endpoint: Any, http: httpx.Client
) -> None:
    colleague = UserFactory(username="colleague")
    Membership.objects.create(team=agent.team, user=colleague)
    key = token_create(agent=agent, created_by=colleague).key
    end_access(case, agent=agent, owner=owner)  # what happens to the endpoint's registrant
    asked = http.post("/api/v1/deliveries/", json={"question": live_question().pk}, headers=auth(key))
    assert asked.status_code == 409
    _, words = ENDINGS[case]
    assert f"{words} endpoint" in asked.json()["message"] and WHY[case] in asked.json()["message"]


def replay_delivery_reading(
    *, agent: Agent, owner: Any, http: httpx.Client
) -> tuple[Delivery, IssuedEvidenceToken, dict[str, str]]:
    """A replay question's delivery, the evidence token it carries and a search that token makes (200)."""
    replay, _ = delivery_request(agent=agent, question_id=replay_question().pk, requested_by=owner)
    assert replay.session is not None
    token = evidence_token_issue(
        session=replay.session, now=timezone.now(), lifetime=timedelta(hours=1), holder_id=owner.pk
    )
    search = {"q": "harbour", "session": str(replay.session.pk)}
    assert http.get("/api/v1/evidence/articles/", params=search, headers=auth(token.key)).status_code == 200
    return replay, token, search


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Token {key}"}
