"""The form and `POST /api/v1/forecasts/` (real HTTP) refuse the same bodies with the same messages."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import httpx
import pytest
from django.test import Client
from django.urls import reverse

from ingestion.models import Question
from leaderboard.models import Agent, Forecast
from tests.factories import QuestionFactory

pytestmark = pytest.mark.django_db(transaction=True)


def page_errors(html: str) -> list[str]:
    lists = re.findall(r'<ul class="errorlist"[^>]*>(.*?)</ul>', html, re.S)
    return [unescape(item) for block in lists for item in re.findall(r"<li>(.*?)</li>", block, re.S)]


CASES: list[tuple[dict[str, Any], dict[str, Any], dict[str, str]]] = [
    # (question fields, API body extras, form fields)
    ({}, {"prediction": {"probability": 1.5}}, {"probability": "1.5"}),
    ({}, {"prediction": {"probability": "high"}}, {"probability": "high"}),
    (
        {"type": Question.Type.MULTIPLE_CHOICE, "options": ["A", "B"]},
        {"prediction": {"probabilities": {"A": 0.7}}},
        {"option_0": "0.7", "option_1": ""},
    ),
    (
        {"type": Question.Type.MULTIPLE_CHOICE, "options": ["A", "B"]},
        {"prediction": {"probabilities": {"A": 0.7, "B": 0.7}}},
        {"option_0": "0.7", "option_1": "0.7"},
    ),
    (
        {"type": Question.Type.QUANTITY},
        {"prediction": {"interval": [5, 1]}},
        {"quantity_mode": "interval", "interval_low": "5", "interval_high": "1"},
    ),
    (
        {"type": Question.Type.TIMEFRAME, "granularity": Question.Granularity.MONTH},
        {"prediction": {"period": "2026-Q3"}},
        {"period": "2026-Q3"},
    ),
    (
        {"type": Question.Type.RELATION, "subject": "USA", "object": "CHN"},
        {"prediction": {"relations": {"04": ["999", "051"], "77": []}}},
        {"relations": '{"04": ["999", "051"], "77": []}'},
    ),
    (
        {},
        {
            "prediction": {"probability": 0.5},
            "sources": ["ftp://x", 99999],
            "graph": {
                "events": [{"id": "a", "title": "A", "date": "2026-13-01"}],
                "edges": [{"source": "a", "target": "zz", "relation": "Causes"}],
            },
        },
        {
            "probability": "0.5",
            "sources": "ftp://x\n99999",
            "graph_events": '[{"id": "a", "title": "A", "date": "2026-13-01"}]',
            "graph_edges": '[{"source": "a", "target": "zz", "relation": "Causes"}]',
        },
    ),
]


@pytest.mark.parametrize(("question_fields", "body", "form_fields"), CASES)
def test_same_errors_through_form_and_api(
    question_fields: dict[str, Any],
    body: dict[str, Any],
    form_fields: dict[str, str],
    owner: Any,
    agent: Agent,
    agent_http: httpx.Client,
) -> None:
    question = QuestionFactory(**question_fields)
    api = agent_http.post("/api/v1/forecasts/", json={"question": question.pk, **body})
    assert api.status_code == 400, api.text
    api_errors = api.json()["errors"]
    assert api_errors

    client = Client()
    client.force_login(owner)
    url = f"{reverse('leaderboard:forecast_form')}?agent={agent.slug}&question={question.pk}"
    html = client.post(url, {"action": "submit", **form_fields}).content.decode()
    shown = page_errors(html)
    # The form words each message as a sentence naming the field as the form calls it; the API's
    # message (or the API's field-qualified message) is inside it.
    for error in api_errors:
        said = (error["message"].rstrip("."), f"{error['field']}: {error['message']}")
        assert any(part in line for part in said for line in shown), (error, shown)
    assert len(shown) == len(api_errors), shown
    assert not Forecast.objects.exists()
