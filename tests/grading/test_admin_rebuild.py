"""Staff rebuild a hindsight graph from the admin (button and action)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from grading.models import HindsightGraph
from tests.grading.corpus import make_corpus, make_question, resolve

pytestmark = pytest.mark.django_db


def test_button_and_action_rebuild(
    client: Client, staff: Any, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.LLM_MODEL = ""
    question = make_question()
    make_corpus()
    resolve(question)
    client.force_login(staff)
    page = client.get(f"/admin/grading/questionhindsight/{question.pk}/change/")
    assert page.status_code == 200 and "Rebuild hindsight graph" in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/grading/questionhindsight/{question.pk}/rebuild/")
    assert response.status_code == 302
    assert HindsightGraph.objects.filter(question=question).count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            "/admin/grading/questionhindsight/",
            {"action": "rebuild_hindsight", "_selected_action": [question.pk]},
        )
    assert HindsightGraph.objects.filter(question=question).count() == 2
    assert client.get("/admin/grading/hindsightgraph/").status_code == 200
