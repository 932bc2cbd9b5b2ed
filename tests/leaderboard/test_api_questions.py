"""GET /api/v1/questions/: no drafts, filters, pagination; outcomes hidden until revealed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.utils import timezone

from ingestion.models import Question, Resolution
from tests.leaderboard.api_support import T_RES, live_question, replay_question, staff_client

pytestmark = pytest.mark.django_db(transaction=True)


def ids(response: httpx.Response) -> set[int]:
    assert response.status_code == 200, response.text
    return {q["id"] for q in response.json()["results"]}


def test_list_hides_drafts_and_filters(http: httpx.Client, live_server: Any, staff: Any) -> None:
    binary = live_question("binary", domain="politics")
    choice = live_question("multiple_choice", domain="Economy")
    closed = live_question("binary", status=Question.Status.CLOSED, domain="economy")
    draft = live_question("binary", status=Question.Status.DRAFT)
    replay = replay_question("quantity", outcome=42, domain="economy")

    assert ids(http.get("/api/v1/questions/")) == {binary.pk, choice.pk, closed.pk, replay.pk}
    assert ids(http.get("/api/v1/questions/", params={"status": "closed"})) == {closed.pk}
    assert ids(http.get("/api/v1/questions/", params={"track": "replay"})) == {replay.pk}
    assert ids(http.get("/api/v1/questions/", params={"type": "multiple_choice"})) == {choice.pk}
    assert ids(http.get("/api/v1/questions/", params={"domain": "economy"})) == {choice.pk, closed.pk, replay.pk}
    assert ids(http.get("/api/v1/questions/", params={"status": "draft"})) == set()
    with staff_client(live_server.url, staff) as client:
        assert draft.pk in ids(client.get("/api/v1/questions/"))

    response = http.get("/api/v1/questions/", params={"status": "bogus"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "status"


def test_pagination(http: httpx.Client) -> None:
    made = [live_question() for _ in range(5)]
    page = http.get("/api/v1/questions/", params={"limit": 2}).json()
    assert page["count"] == 5 and len(page["results"]) == 2 and page["next"]
    rest = http.get("/api/v1/questions/", params={"limit": 2, "offset": 4}).json()
    assert [q["id"] for q in rest["results"]] == [made[-1].pk]


def test_detail_unknown_and_draft_are_404(http: httpx.Client) -> None:
    draft = live_question(status=Question.Status.DRAFT)
    assert http.get("/api/v1/questions/999999/").status_code == 404
    response = http.get(f"/api/v1/questions/{draft.pk}/")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_replay_outcome_hidden_until_published(
    http: httpx.Client, agent_http: httpx.Client, rival_http: httpx.Client, live_server: Any, staff: Any
) -> None:
    question = replay_question("multiple_choice", outcome="Maybe")
    for client in (http, agent_http, rival_http):
        detail = client.get(f"/api/v1/questions/{question.pk}/").json()
        assert detail["outcome"] is None and detail["resolutions"] == [] and detail["outcome_revealed"] is False
        listed = client.get("/api/v1/questions/").json()["results"][0]
        assert "outcome" not in listed and "resolutions" not in listed
    with staff_client(live_server.url, staff) as client:
        detail = client.get(f"/api/v1/questions/{question.pk}/").json()
        assert detail["outcome"] == "Maybe" and detail["resolutions"][0]["version"] == 1

    Question.objects.filter(pk=question.pk).update(outcome_published_at=timezone.now())
    detail = http.get(f"/api/v1/questions/{question.pk}/").json()
    assert detail["outcome"] == "Maybe" and detail["outcome_revealed"] is True
    assert detail["resolutions"][0]["resolved_at"].startswith(T_RES.date().isoformat())


def test_live_question_shows_resolution_history_once_resolved(http: httpx.Client) -> None:
    question = live_question("binary")
    detail = http.get(f"/api/v1/questions/{question.pk}/").json()
    assert detail["outcome"] is None and detail["resolutions"] == []
    now = timezone.now()
    Resolution.objects.create(
        question=question, version=1, kind="resolve", outcome=True, resolved_at=now, note="first", created_at=now
    )
    Resolution.objects.create(
        question=question,
        version=2,
        kind="amend",
        outcome=False,
        resolved_at=now,
        note="corrected",
        created_at=now + timedelta(hours=1),
    )
    Question.objects.filter(pk=question.pk).update(status=Question.Status.RESOLVED)
    detail = http.get(f"/api/v1/questions/{question.pk}/").json()
    assert detail["outcome"] is False
    assert [(r["version"], r["kind"], r["note"]) for r in detail["resolutions"]] == [
        (1, "resolve", "first"),
        (2, "amend", "corrected"),
    ]
