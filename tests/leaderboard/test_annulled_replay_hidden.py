"""An annulled replay question looks like any unpublished replay question until its outcome is
published: API status and filters, page badges and filters, and it keeps taking sessions and
forecasts (refusing them would say it was annulled)."""

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


def _annulled_and_plain() -> tuple[Question, Question]:
    annulled = replay_question("binary", outcome=True, title="Will the dam be finished?")
    question_annul(question=annulled, reason="The dam project was cancelled.", author_label="staff")
    plain = replay_question("binary", outcome=False, title="Will the bridge be finished?")
    return Question.objects.get(pk=annulled.pk), plain


def _ids(client: httpx.Client, **params: str) -> set[int]:
    return {q["id"] for q in client.get("/api/v1/questions/", params=params).raise_for_status().json()["results"]}


def test_api_shows_an_unpublished_annulment_as_resolved(http: httpx.Client, agent_http: httpx.Client) -> None:
    annulled, plain = _annulled_and_plain()
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

    # It takes sessions and forecasts like its twin; the grade says only "withheld".
    for question in (annulled, plain):
        session = agent_http.post("/api/v1/replays/", json={"question": question.pk})
        assert session.status_code == 201
        body = {"question": question.pk, "session": session.json()["id"], "prediction": {"probability": 0.5}}
        created = agent_http.post("/api/v1/forecasts/", json=body)
        assert (
            created.status_code == 201 and created.json()["grade_status"] == "withheld until the outcome is published"
        )

    question_publish_outcome(question=annulled)
    assert http.get(f"/api/v1/questions/{annulled.pk}/").json()["status"] == "annulled"
    assert _ids(http, status="annulled") == {annulled.pk}
    forecast = agent_http.get("/api/v1/forecasts/", params={"question": annulled.pk}).json()["results"][0]
    assert forecast["grade_status"] == "void"
    assert Grade.objects.get(forecast_id=forecast["id"], is_current=True).void


@pytest.mark.browser
def test_pages_show_an_unpublished_annulment_like_any_replay_on_offer(browser_page: Any, agent: Agent) -> None:
    annulled, _plain = _annulled_and_plain()
    page = browser_page
    page.goto(f"/questions/{annulled.pk}/")
    badges = page.locator("main p").first.inner_text()
    # Like its twin, it is still on offer for replay forecasts: open, not annulled.
    assert "Open for replay" in badges and "Annulled" not in badges
    assert "hidden until staff publish" in page.inner_text("main")
    screenshot(page, "annulled-replay-unpublished")

    page.goto("/questions/?status=annulled")
    assert "Will the dam be finished?" not in page.inner_text("main")
    page.goto("/questions/?status=open&track=replay")
    text = page.inner_text("main")
    assert "Will the dam be finished?" in text and "Will the bridge be finished?" in text
    assert "Annulled" not in page.locator("table tbody").inner_text()

    question_publish_outcome(question=annulled)
    page.goto(f"/questions/{annulled.pk}/")
    assert "Annulled" in page.locator("main p").first.inner_text()
    page.goto("/questions/?status=annulled")
    assert "Will the dam be finished?" in page.inner_text("main")
