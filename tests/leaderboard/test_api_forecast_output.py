"""The write endpoints render forecasts exactly as the documented ForecastOutputSerializer does,
and a single submission links every cited archived article (by id, by URL, by a tracking-laden URL)."""

from __future__ import annotations

import json

import httpx
import pytest
from rest_framework.renderers import JSONRenderer

from leaderboard.apis.forecasts import ForecastOutputSerializer, forecast_output
from leaderboard.models import Forecast
from tests.factories import ArticleFactory
from tests.leaderboard.api_support import VALID_PREDICTIONS, live_question, replay_question

pytestmark = pytest.mark.django_db(transaction=True)


def rendered(data: object) -> object:
    return json.loads(JSONRenderer().render(data))


def test_single_response_matches_serializer_and_links_citations(agent_http: httpx.Client) -> None:
    question = live_question("multiple_choice")
    by_id, by_url, by_tracked_url = ArticleFactory(), ArticleFactory(), ArticleFactory()
    ArticleFactory()  # archived but not cited
    body = {
        "question": question.pk,
        "prediction": VALID_PREDICTIONS["multiple_choice"],
        "sources": [by_id.pk, by_url.url, f"{by_tracked_url.url}?utm_source=feed", str(by_id.pk), "https://x.org/a"],
        "rationale": "  Because.  ",
        "graph": {"events": [{"id": "a", "title": "A", "date": "2026-03-01"}], "edges": []},
        "idempotency_key": "out-1",
    }
    response = agent_http.post("/api/v1/forecasts/", json=body)
    assert response.status_code == 201, response.text
    forecast = Forecast.objects.select_related("agent", "question").get()
    assert response.json() == rendered(ForecastOutputSerializer(forecast).data)
    assert set(forecast.cited_articles.values_list("pk", flat=True)) == {by_id.pk, by_url.pk, by_tracked_url.pk}
    again = agent_http.post("/api/v1/forecasts/", json=body)
    assert again.status_code == 200 and again.json() == response.json()
    assert forecast.cited_articles.count() == 3


def test_forecast_output_matches_serializer_for_replay_and_batch(agent_http: httpx.Client) -> None:
    question = replay_question()
    session = agent_http.post("/api/v1/replays/", json={"question": question.pk}).json()
    live = live_question()
    items = [
        {"question": question.pk, "session": session["id"], "prediction": {"probability": 0.2}},
        {"question": live.pk, "prediction": {"probability": 0.9}, "sources": ["https://example.com/n"]},
    ]
    response = agent_http.post("/api/v1/forecasts/batch/", json=items)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    for row in results:
        forecast = Forecast.objects.select_related("agent", "question").get(pk=row["forecast"]["id"])
        expected = rendered(ForecastOutputSerializer(forecast).data)
        assert row["forecast"] == expected
        assert rendered(forecast_output(forecast)) == expected
    assert results[0]["forecast"]["grade_status"] == "withheld until the outcome is published"
