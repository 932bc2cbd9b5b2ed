"""Staff manage questions in the admin: list, edit, resolve/amend/annul as new versions, publish."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from ingestion.models import Question, Resolution
from tests.factories import QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(staff: Any) -> Client:
    client = Client()
    client.force_login(staff)
    return client


def test_question_list_and_change_page_show_the_resolution_history(staff_client: Client) -> None:
    question = QuestionFactory(title="Will the dam open?")
    assert "Will the dam open?" in staff_client.get(reverse("admin:ingestion_question_changelist")).content.decode()
    page = staff_client.get(reverse("admin:ingestion_question_change", args=[question.pk])).content.decode()
    assert "Resolve / amend / annul" in page


def test_resolve_then_amend_then_annul_through_the_admin_form(staff_client: Client, staff: Any) -> None:
    question = QuestionFactory()
    url = reverse("admin:ingestion_question_resolution", args=[question.pk])
    assert staff_client.post(url, {"action": "resolve", "outcome": "true", "note": "official"}).status_code == 302
    assert staff_client.post(url, {"action": "resolve", "outcome": "false"}).status_code == 302
    assert staff_client.post(url, {"action": "annul", "note": "cancelled"}).status_code == 302
    rows = list(question.resolutions.values_list("version", "kind", "outcome", "author"))
    assert rows == [(1, "resolve", True, staff.pk), (2, "amend", False, staff.pk), (3, "annul", None, staff.pk)]
    question.refresh_from_db()
    assert question.status == Question.Status.ANNULLED


def test_bad_outcome_and_missing_reason_are_shown_and_change_nothing(staff_client: Client) -> None:
    question = QuestionFactory(type=Question.Type.MULTIPLE_CHOICE, options=["Red", "Blue"])
    url = reverse("admin:ingestion_question_resolution", args=[question.pk])
    page = staff_client.post(url, {"action": "resolve", "outcome": '"Green"'}).content.decode()
    assert "not one of the options" in page
    page = staff_client.post(url, {"action": "resolve", "outcome": "Red"}).content.decode()
    assert "Give the outcome as JSON" in page
    page = staff_client.post(url, {"action": "annul", "note": ""}).content.decode()
    assert "Give the reason for annulling" in page
    assert Resolution.objects.count() == 0


def test_publish_outcome_action_reveals_replay_questions(staff_client: Client) -> None:
    replay = QuestionFactory(track=Question.Track.REPLAY, status=Question.Status.RESOLVED)
    staff_client.post(
        reverse("admin:ingestion_question_changelist"),
        {"action": "publish_outcomes", "_selected_action": [replay.pk]},
    )
    replay.refresh_from_db()
    assert replay.outcome_published_at is not None and replay.is_revealed


def test_non_staff_cannot_reach_the_resolution_form() -> None:
    client = Client()
    client.force_login(UserFactory(username="someone"))
    question = QuestionFactory()
    response = client.get(reverse("admin:ingestion_question_resolution", args=[question.pk]))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
