"""An annulled replay question reads resolved (never annulled) until its outcome is
published (API status and filters, page badges and filters), but it opens no new session and takes
no forecast: its forecasts could only ever be void. The refusal says only that it was withdrawn
from the replay track, on the API, MCP, the web form and deliveries alike."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ingestion.models import Question
from ingestion.services.questions import question_annul, question_publish_outcome
from leaderboard.models import Agent, Grade
from tests.browser import screenshot
from tests.leaderboard.api_support import replay_question

pytestmark = pytest.mark.django_db(transaction=True)


def _annulled_and_plain(before: Any = None) -> tuple[Question, Question]:
    """Two twin replay questions, the first annulled (after ``before(question)``, if given)."""
    annulled = replay_question("binary", outcome=True, title="Will the dam be finished?")
    if before is not None:
        before(annulled)
    question_annul(question=annulled, reason="The dam project was cancelled.", author_label="staff")
    plain = replay_question("binary", outcome=False, title="Will the bridge be finished?")
    return Question.objects.get(pk=annulled.pk), plain


def _ids(client: httpx.Client, **params: str) -> set[int]:
    return {q["id"] for q in client.get("/api/v1/questions/", params=params).raise_for_status().json()["results"]}


def test_api_shows_an_unpublished_annulment_as_resolved_and_takes_nothing_new(
    http: httpx.Client, agent_http: httpx.Client, rival_http: httpx.Client
) -> None:
    made: dict[str, Any] = {}

    def forecast_before_the_annulment(question: Question) -> None:
        session = agent_http.post("/api/v1/replays/", json={"question": question.pk}).json()["id"]
        body = {"question": question.pk, "session": session, "prediction": {"probability": 0.5}}
        made.update(session=session, forecast=agent_http.post("/api/v1/forecasts/", json=body).json()["id"])

    annulled, plain = _annulled_and_plain(before=forecast_before_the_annulment)
    assert annulled.status == Question.Status.ANNULLED

    detail = http.get(f"/api/v1/questions/{annulled.pk}/").json()
    twin = http.get(f"/api/v1/questions/{plain.pk}/").json()
    for key in ("status", "outcome", "resolutions", "outcome_revealed", "outcome_published_at"):
        assert detail[key] == twin[key], key
    assert detail["status"] == "resolved"
    assert _ids(http, status="annulled") == set()
    assert _ids(http, status="resolved", track="replay") == {annulled.pk, plain.pk}
    for client in (http, agent_http):
        listed = {q["id"]: q["status"] for q in client.get("/api/v1/questions/").json()["results"]}
        assert listed[annulled.pk] == listed[plain.pk] == "resolved"

    # No new session (another agent), no new forecast (in the session opened before).
    withdrawn = f"replay question {annulled.pk} was withdrawn from the replay track"
    opened = rival_http.post("/api/v1/replays/", json={"question": annulled.pk})
    assert opened.status_code == 409 and opened.json()["message"].startswith(withdrawn)
    body = {"question": annulled.pk, "session": made["session"], "prediction": {"probability": 0.6}}
    refused = agent_http.post("/api/v1/forecasts/", json=body)
    assert refused.status_code == 409 and refused.json()["message"].startswith(withdrawn)
    assert "annul" not in opened.text + refused.text
    # Its twin takes both.
    session = rival_http.post("/api/v1/replays/", json={"question": plain.pk})
    assert session.status_code == 201
    twin_body = {"question": plain.pk, "session": session.json()["id"], "prediction": {"probability": 0.5}}
    assert rival_http.post("/api/v1/forecasts/", json=twin_body).status_code == 201

    question_publish_outcome(question=annulled)
    assert http.get(f"/api/v1/questions/{annulled.pk}/").json()["status"] == "annulled"
    assert _ids(http, status="annulled") == {annulled.pk}
    forecast = agent_http.get("/api/v1/forecasts/", params={"question": annulled.pk}).json()["results"][0]
    assert forecast["id"] == made["forecast"] and forecast["grade_status"] == "void"
    assert Grade.objects.get(forecast_id=forecast["id"], is_current=True).void


@pytest.mark.browser
def test_pages_show_an_unpublished_annulment_as_resolved_and_off_offer(browser_page: Any, agent: Agent) -> None:
    annulled, _plain = _annulled_and_plain()
    page = browser_page
    page.goto(f"/questions/{annulled.pk}/")
    badges = page.locator("main p").first.inner_text()
    # It takes no more forecasts, so it is not "Open for replay"; it reads resolved, not annulled.
    assert "Resolved" in badges and "Open for replay" not in badges and "Annulled" not in badges
    assert "hidden until staff publish" in page.inner_text("main")
    screenshot(page, "annulled-replay-unpublished")

    page.goto("/questions/?status=annulled")
    assert "Will the dam be finished?" not in page.inner_text("main")
    page.goto("/questions/?status=open&track=replay")
    text = page.inner_text("main")
    assert "Will the dam be finished?" not in text and "Will the bridge be finished?" in text
    page.goto("/questions/?status=resolved&track=replay")
    text = page.inner_text("main")
    assert "Will the dam be finished?" in text
    assert "Annulled" not in page.locator("table tbody").inner_text()

    question_publish_outcome(question=annulled)
    page.goto(f"/questions/{annulled.pk}/")
    assert "Annulled" in page.locator("main p").first.inner_text()
    page.goto("/questions/?status=annulled")
    assert "Will the dam be finished?" in page.inner_text("main")
