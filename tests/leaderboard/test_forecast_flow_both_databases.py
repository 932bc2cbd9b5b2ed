"""The forecast path works on the embedded SQLite default as on PostgreSQL (marked dual_db).

A forecast that cites archived articles by id and by URL, with a rationale and a forecast graph,
is stored over real HTTP; resolving the question grades it in-process; the agent reads the grade.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from ingestion.services.questions import question_resolve
from leaderboard.models import Forecast, Grade
from tests.factories import ArticleFactory, QuestionFactory

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]


def test_cited_forecast_is_stored_and_graded(agent_http: httpx.Client, settings: Any) -> None:
    settings.LLM_MODEL = ""
    question = QuestionFactory()
    by_id, by_url = ArticleFactory(), ArticleFactory()
    body = {
        "question": question.pk,
        "prediction": {"probability": 0.8},
        "sources": [by_id.pk, by_url.url + "?utm_source=agent", "https://elsewhere.example.org/a"],
        "rationale": "Two archived stories and one outside link.",
        "graph": {
            "events": [
                {"id": "e1", "title": "Talks resume", "description": "", "date": "2026-03-01"},
                {"id": "e2", "title": "Deal signed", "description": "", "date": "2026-04-01"},
            ],
            "edges": [{"source": "e1", "target": "e2", "relation": "Causes", "strength": 0.6, "confidence": 0.7}],
        },
        "idempotency_key": "both-databases-1",
    }
    response = agent_http.post("/api/v1/forecasts/", json=body)
    assert response.status_code == 201, response.text
    forecast = Forecast.objects.get(pk=response.json()["id"])
    assert set(forecast.cited_articles.values_list("pk", flat=True)) == {by_id.pk, by_url.pk}
    assert agent_http.post("/api/v1/forecasts/", json=body).status_code == 200

    question_resolve(question=question, outcome=True, author_label="test")
    assert Grade.objects.filter(forecast=forecast, is_current=True).exists()
    listed = agent_http.get("/api/v1/forecasts/", params={"question": question.pk}).json()["results"]
    assert listed[0]["grade"] is not None and listed[0]["grade"]["brier"] == pytest.approx(0.04)
