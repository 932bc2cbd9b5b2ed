"""The evidence token of a replay delivery reads evidence in its own session only: refused on
other sessions and questions, on every non-evidence endpoint and the access log, when tampered
with, and after it expires."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
import time_machine
from django.utils import timezone

from leaderboard.models import Agent, ReplaySession
from leaderboard.services.evidence_tokens import evidence_token_issue
from leaderboard.services.replay_sessions import replay_session_open
from tests.factories import T0, ArticleFactory
from tests.leaderboard.api_support import live_question, replay_question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dual_db]

SEARCH = "/api/v1/evidence/articles/"


@pytest.fixture
def sessions(agent: Agent) -> tuple[ReplaySession, ReplaySession]:
    mine, _ = replay_session_open(agent=agent, question_id=replay_question().pk)
    other, _ = replay_session_open(agent=agent, question_id=replay_question().pk)
    return mine, other


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Token {key}"}


def test_the_token_reads_its_session_and_nothing_else(
    http: httpx.Client, agent_key: str, sessions: tuple[ReplaySession, ReplaySession]
) -> None:
    mine, other = sessions
    article = ArticleFactory(title="Harbour strike", published_at=T0 + timedelta(days=5))
    token = evidence_token_issue(session=mine, now=timezone.now(), lifetime=timedelta(hours=1))
    auth = bearer(token.key)

    found = http.get(SEARCH, params={"q": "harbour"}, headers=auth)
    assert found.status_code == 200 and [r["id"] for r in found.json()["results"]] == [article.pk]
    assert http.get(SEARCH, params={"q": "harbour", "session": str(mine.pk)}, headers=auth).status_code == 200
    assert http.get(f"/api/v1/evidence/articles/{article.pk}/", headers=auth).status_code == 200
    assert http.get(f"/api/v1/evidence/prices/{mine.question_id}/", headers=auth).status_code == 200

    scope = f"reads only replay session {mine.pk} (question {mine.question_id})"
    refused = [
        http.get(SEARCH, params={"q": "harbour", "session": str(other.pk)}, headers=auth),
        http.get(SEARCH, params={"q": "harbour", "question": other.question_id}, headers=auth),
        http.get(f"/api/v1/evidence/articles/{article.pk}/", params={"session": str(other.pk)}, headers=auth),
        http.get(f"/api/v1/evidence/prices/{other.question_id}/", headers=auth),
        http.get("/api/v1/evidence/events/", params={"question": live_question().pk}, headers=auth),
    ]
    for response in refused:
        assert response.status_code == 403, response.text
        assert scope in response.json()["message"]
    log = http.get("/api/v1/evidence/log/", headers=auth)
    assert log.status_code == 403 and "use your API token" in log.json()["message"]

    # Not an API key: every other endpoint refuses it.
    body = {"question": mine.question_id, "session": str(mine.pk), "prediction": {"probability": 0.5}}
    for response in [
        http.post("/api/v1/forecasts/", json=body, headers=auth),
        http.get("/api/v1/forecasts/", headers=auth),
        http.post("/api/v1/replays/", json={"question": other.question_id}, headers=auth),
        http.get("/api/v1/questions/", headers=auth),
        http.get("/api/v1/deliveries/", headers=auth),
        http.post("/api/v1/deliveries/", json={"question": other.question_id}, headers=auth),
    ]:
        assert response.status_code == 401, response.text
    # The agent's own key is not narrowed by any of this.
    assert http.get(SEARCH, params={"q": "harbour", "session": str(other.pk)}, headers=bearer(agent_key)).is_success


def test_the_token_expires(http: httpx.Client, sessions: tuple[ReplaySession, ReplaySession]) -> None:
    mine, _ = sessions
    token = evidence_token_issue(session=mine, now=timezone.now(), lifetime=timedelta(minutes=10))
    assert http.get(SEARCH, params={"q": "x"}, headers=bearer(token.key)).status_code == 200
    with time_machine.travel(token.expires_at + timedelta(seconds=1), tick=True):
        expired = http.get(SEARCH, params={"q": "x"}, headers=bearer(token.key))
    assert expired.status_code == 401
    assert expired.json()["message"].startswith(f"This evidence token expired at {token.expires_at.isoformat()}")


def test_a_tampered_token_or_one_whose_session_is_gone_is_refused(
    http: httpx.Client, sessions: tuple[ReplaySession, ReplaySession]
) -> None:
    mine, other = sessions
    token = evidence_token_issue(session=mine, now=timezone.now(), lifetime=timedelta(hours=1))
    # Swap the session inside the signed payload for another: the signature no longer matches.
    forged = evidence_token_issue(session=other, now=timezone.now(), lifetime=timedelta(hours=1))
    spliced = forged.key.split(":")[0] + ":" + ":".join(token.key.split(":")[1:])
    response = http.get(SEARCH, params={"q": "x"}, headers=bearer(spliced))
    assert response.status_code == 401 and "signature does not match" in response.json()["message"]

    mine.delete()  # the session is gone (its agent was deleted, say): so is the token's access
    gone = http.get(SEARCH, params={"q": "x"}, headers=bearer(token.key))
    assert gone.status_code == 401 and "no longer exists" in gone.json()["message"]
