"""The staff curation queue: drafts with provenance and scores; edit, approve (opens), reject (needs a reason)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from ingestion.models import Question
from tests.factories import ArticleFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft() -> Question:
    article = ArticleFactory(title="Ruritania calls a snap election", url="https://news.example.org/ruritania")
    question = QuestionFactory(
        title="Will the Ruritania coalition keep its majority?",
        status=Question.Status.DRAFT,
        origin=Question.Origin.NEWS,
        open_at=timezone.now(),
        close_at=timezone.now() + timedelta(days=60),
        resolve_by=timezone.now() + timedelta(days=60),
        generation={
            "model": "local-test-model",
            "scores": {"clarity": 0.9, "measurability": 0.7, "answerability": 0.8, "temporal_validity": 0.6},
            "reasons": {
                "clarity": "Unambiguous wording",
                "measurability": "Official seat counts",
                "answerability": "Results are published",
                "temporal_validity": "Election is before the date",
            },
        },
    )
    question.provenance_articles.add(article)
    return question


@pytest.fixture
def staff_client(staff: Any) -> Client:
    client = Client()
    client.force_login(staff)
    return client


def test_only_staff_see_the_queue(client: Client, draft: Question) -> None:
    url = reverse("ingestion:curation_queue")
    response = client.get(url)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    client.force_login(UserFactory(username="member"))
    assert client.get(url).status_code == 403
    assert client.post(reverse("ingestion:curation_approve", args=[draft.pk])).status_code == 403
    assert client.post(reverse("ingestion:curation_reject", args=[draft.pk]), {"reason": "no"}).status_code == 403
    assert client.post(reverse("ingestion:curation_edit", args=[draft.pk]), {"title": "x"}).status_code == 403
    draft.refresh_from_db()
    assert draft.status == Question.Status.DRAFT
    assert draft.title == "Will the Ruritania coalition keep its majority?"


def test_queue_lists_drafts_with_provenance_and_scores(staff_client: Client, draft: Question) -> None:
    QuestionFactory(title="An open question", status=Question.Status.OPEN)
    page = staff_client.get(reverse("ingestion:curation_queue")).content.decode()
    assert "Will the Ruritania coalition keep its majority?" in page
    assert "An open question" not in page
    assert "Ruritania calls a snap election" in page and "https://news.example.org/ruritania" in page
    assert "Unambiguous wording" in page and "0.90" in page and "Temporal validity" in page
    assert "local-test-model" in page


def test_approve_opens_the_question(staff_client: Client, draft: Question) -> None:
    response = staff_client.post(reverse("ingestion:curation_approve", args=[draft.pk]), follow=True)
    assert "Approved and opened" in response.content.decode()
    draft.refresh_from_db()
    assert draft.status == Question.Status.OPEN
    assert "Will the Ruritania" not in staff_client.get(reverse("ingestion:curation_queue")).content.decode()
    # Approving twice is refused with a message, nothing changes.
    response = staff_client.post(reverse("ingestion:curation_approve", args=[draft.pk]), follow=True)
    assert "Only a draft can be opened" in response.content.decode()


def test_approve_refuses_a_draft_past_its_deadline(staff_client: Client, draft: Question) -> None:
    Question.objects.filter(pk=draft.pk).update(
        open_at=datetime(2020, 1, 1, tzinfo=UTC), close_at=datetime(2020, 2, 1, tzinfo=UTC)
    )
    response = staff_client.post(reverse("ingestion:curation_approve", args=[draft.pk]), follow=True)
    assert "The deadline has passed" in response.content.decode()
    draft.refresh_from_db()
    assert draft.status == Question.Status.DRAFT


def test_reject_needs_a_reason(staff_client: Client, draft: Question) -> None:
    url = reverse("ingestion:curation_reject", args=[draft.pk])
    response = staff_client.post(url, {"reason": "   "}, follow=True)
    assert "Give a reason for rejecting" in response.content.decode()
    draft.refresh_from_db()
    assert draft.status == Question.Status.DRAFT
    assert staff_client.get(url).status_code == 405
    response = staff_client.post(url, {"reason": "Duplicate of an existing market question"}, follow=True)
    assert "Rejected" in response.content.decode()
    draft.refresh_from_db()
    assert draft.status == Question.Status.ANNULLED
    assert draft.rejection_reason == "Duplicate of an existing market question"


def test_edit_saves_valid_changes_and_shows_errors(staff_client: Client, draft: Question) -> None:
    url = reverse("ingestion:curation_edit", args=[draft.pk])
    page = staff_client.get(url).content.decode()
    assert 'name="title"' in page and "Will the Ruritania coalition keep its majority?" in page
    form = {
        "title": "Will the Ruritania coalition win at least 51 seats?",
        "options": "",
        "unit": "",
        "granularity": "",
        "resolution_criteria": "Official results.",
        "background": "",
        "domain": "politics",
        "open_at": draft.open_at.strftime("%Y-%m-%d %H:%M:%S"),
        "close_at": (draft.open_at - timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S"),
        "resolve_by": "",
    }
    response = staff_client.post(url, form)
    assert response.status_code == 200
    assert "The deadline must be after open_at." in response.content.decode()
    draft.refresh_from_db()
    assert draft.title == "Will the Ruritania coalition keep its majority?"

    response = staff_client.post(url, {**form, "options": "Yes\nNo"})
    assert "Options only apply to multiple-choice questions" in response.content.decode()

    form["close_at"] = (draft.open_at + timedelta(days=30)).strftime("%Y-%m-%d %H:%M:%S")
    response = staff_client.post(url, form)
    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.title == "Will the Ruritania coalition win at least 51 seats?"
    assert draft.status == Question.Status.DRAFT
    assert draft.close_at == (draft.open_at + timedelta(days=30)).replace(microsecond=0)


def test_only_drafts_are_editable(staff_client: Client) -> None:
    question = QuestionFactory(status=Question.Status.OPEN)
    assert staff_client.get(reverse("ingestion:curation_edit", args=[question.pk])).status_code == 404


def test_sources_page_says_whether_generation_is_on(staff_client: Client, settings: Any) -> None:
    settings.LLM_MODEL = ""
    page = staff_client.get(reverse("ingestion:sources_status")).content.decode()
    assert "Question generation: off (no LLM configured)" in page
    settings.LLM_MODEL = "local-test-model"
    page = staff_client.get(reverse("ingestion:sources_status")).content.decode()
    assert "Question generation: on (model local-test-model)" in page
    assert reverse("ingestion:curation_queue") in page
