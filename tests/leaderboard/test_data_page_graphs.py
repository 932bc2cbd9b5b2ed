"""/data/ says when a forecast's graph becomes public, and the forecast graph page keeps to it."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from grading.services import hindsight_build
from leaderboard.models import Forecast
from tests.factories import AgentFactory
from tests.grading.corpus import T0, make_corpus, make_question, resolve

pytestmark = pytest.mark.django_db


def test_a_forecast_graph_is_public_once_the_outcome_is_and_data_page_says_so(client: Client, settings: Any) -> None:
    settings.LLM_MODEL = ""
    text = " ".join(client.get("/data/").content.decode().split())
    assert "becomes public on the forecast's page <code>/forecasts/&lt;id&gt;/graph/</code>" in text
    assert "as soon as the question's outcome is public" in text
    question = make_question()
    make_corpus()
    forecast = Forecast.objects.create(
        agent=AgentFactory(),
        question=question,
        received_at=T0,
        prediction={"probability": 0.7},
        graph={"events": [{"id": "e1", "title": "Committee approves the draft", "date": "2026-01-04"}], "edges": []},
    )
    assert client.get(f"/forecasts/{forecast.pk}/graph/").status_code == 404  # closed, not resolved
    resolve(question)
    assert hindsight_build(question_id=question.pk, builder="offline") is not None
    page = client.get(f"/forecasts/{forecast.pk}/graph/")
    assert page.status_code == 200 and "Committee approves the draft" in page.content.decode()
