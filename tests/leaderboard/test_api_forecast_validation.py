"""Bad forecast bodies over HTTP: 400 naming every bad field at once, 413 for big bodies; nothing stored."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.leaderboard.api_support import live_question, stored

pytestmark = pytest.mark.django_db(transaction=True)

EVENTS = [{"id": "a", "title": "A", "date": "2026-03-01"}, {"id": "b", "title": "B", "date": "2026-03-02"}]


def bad(client: httpx.Client, qtype: str, **body: Any) -> dict[str, str]:
    question = live_question(qtype)
    response = client.post("/api/v1/forecasts/", json={"question": question.pk, **body})
    assert response.status_code == 400, response.text
    payload = response.json()
    assert payload["code"] == "invalid"
    assert stored() == (0, 0)
    return {e["field"]: e["message"] for e in payload["errors"]}


@pytest.mark.parametrize(
    ("qtype", "body", "field", "words"),
    [
        ("binary", {"prediction": {"probability": 1.2}}, "prediction.probability", "between 0 and 1"),
        ("binary", {"prediction": {"probability": -0.1}}, "prediction.probability", "between 0 and 1"),
        ("binary", {"prediction": {"probability": "0.7"}}, "prediction.probability", "must be a number"),
        ("binary", {"prediction": {"probability": True}}, "prediction.probability", "must be a number"),
        ("binary", {"prediction": "0.7"}, "prediction", "must be an object"),
        (
            "multiple_choice",
            {"prediction": {"probabilities": {"Yes": 0.5, "No": 0.5}}},
            "prediction.probabilities.Maybe",
            "missing",
        ),
        (
            "multiple_choice",
            {"prediction": {"probabilities": {"Yes": 0.5, "No": 0.3, "Maybe": 0.1, "Never": 0.1}}},
            "prediction.probabilities.Never",
            "is not an option",
        ),
        (
            "multiple_choice",
            {"prediction": {"probabilities": {"Yes": 0.5, "No": 0.3, "Maybe": 0.3}}},
            "prediction.probabilities",
            "add up to 1",
        ),
        ("quantity", {"prediction": {"interval": [9, 3]}}, "prediction.interval", "lower end above its upper end"),
        ("quantity", {"prediction": {"quantiles": {"0.1": 9, "0.9": 3}}}, "prediction.quantiles", "not decrease"),
        ("timeframe", {"prediction": {"period": "2026-07"}}, "prediction.period", "YYYY-Qn"),
        ("timeframe", {"prediction": {"period": "2026-Q5"}}, "prediction.period", "YYYY-Qn"),
        ("relation", {"prediction": {"relations": {"04": ["999"]}}}, "prediction.relations.04[0]", "'999'"),
        ("relation", {"prediction": {"relations": {"99": []}}}, "prediction.relations.99", "'99'"),
        (
            "relation",
            {"prediction": {"relations": {"04": ["051"]}}},
            "prediction.relations.04[0]",
            "not under '04'",
        ),
        ("open_ended", {"prediction": {"events": [f"e{i}" for i in range(51)]}}, "prediction.events", "at most 50"),
        ("binary", {"prediction": {"probability": 0.5}, "sources": ["http://x.org/"] * 201}, "sources", "at most 200"),
        ("binary", {"prediction": {"probability": 0.5}, "sources": [999999]}, "sources[0]", "article 999999"),
        (
            "binary",
            {"prediction": {"probability": 0.5}, "sources": ["javascript:alert(1)"]},
            "sources[0]",
            "http(s) URL",
        ),
        (
            "binary",
            {
                "prediction": {"probability": 0.5},
                "graph": {"events": EVENTS, "edges": [{"source": "a", "target": "z", "relation": "Causes"}]},
            },
            "graph.edges[0].target",
            "names no event",
        ),
        (
            "binary",
            {
                "prediction": {"probability": 0.5},
                "graph": {
                    "events": EVENTS,
                    "edges": [
                        {"source": "a", "target": "b", "relation": "Causes"},
                        {"source": "b", "target": "a", "relation": "Causes"},
                    ],
                },
            },
            "graph.edges",
            "cycle",
        ),
        (
            "binary",
            {
                "prediction": {"probability": 0.5},
                "graph": {"events": EVENTS, "edges": [{"source": "a", "target": "b", "relation": "Foreshadows"}]},
            },
            "graph.edges[0].relation",
            "Correlates",
        ),
        (
            "binary",
            {
                "prediction": {"probability": 0.5},
                "graph": {"events": [{"id": "a", "title": "A", "date": "1 March 2026"}], "edges": []},
            },
            "graph.events[0].date",
            "ISO 8601",
        ),
        (
            "binary",
            {
                "prediction": {"probability": 0.5},
                "graph": {"events": [{"id": f"e{i}", "title": "x", "date": "2026-01-01"} for i in range(51)]},
            },
            "graph.events",
            "at most 50",
        ),
        ("binary", {}, "prediction", "required"),
        ("binary", {"prediction": {"probability": 0.5}, "probability": 0.5}, "probability", "unknown field"),
    ],
)
def test_bad_body_names_field(
    agent_http: httpx.Client, qtype: str, body: dict[str, Any], field: str, words: str
) -> None:
    errors = bad(agent_http, qtype, **body)
    assert field in errors, errors
    assert words in errors[field]


def test_all_errors_at_once(agent_http: httpx.Client) -> None:
    errors = bad(
        agent_http,
        "multiple_choice",
        prediction={"probabilities": {"Yes": 2, "Nope": 0.1}},
        sources=[0, "nope"],
        graph={"events": [{"id": "a", "title": "", "date": "soon"}], "edges": []},
    )
    assert {
        "prediction.probabilities.Yes",
        "prediction.probabilities.Nope",
        "prediction.probabilities.No",
        "prediction.probabilities.Maybe",
        "sources[0]",
        "sources[1]",
        "graph.events[0].title",
        "graph.events[0].date",
    } <= set(errors)


def test_nan_and_infinity_are_400_naming_the_field(agent_http: httpx.Client) -> None:
    question = live_question()
    for constant in ("NaN", "Infinity", "-Infinity"):
        raw = f'{{"question": {question.pk}, "prediction": {{"probability": {constant}}}}}'
        response = agent_http.post("/api/v1/forecasts/", content=raw, headers={"Content-Type": "application/json"})
        assert response.status_code == 400
        assert [e["field"] for e in response.json()["errors"]] == ["prediction.probability"]
    assert stored() == (0, 0)


def test_malformed_json_is_400(agent_http: httpx.Client) -> None:
    live_question()
    response = agent_http.post("/api/v1/forecasts/", content="{not json", headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and response.json()["code"] == "parse_error"
    assert stored() == (0, 0)


def test_body_over_1mb_is_413(agent_http: httpx.Client) -> None:
    question = live_question()
    body = {"question": question.pk, "prediction": {"probability": 0.5}, "rationale": "x" * (1024 * 1024 + 10)}
    for path in ("/api/v1/forecasts/", "/api/v1/forecasts/batch/"):
        response = agent_http.post(path, json=body if path.endswith("forecasts/") else [body])
        assert response.status_code == 413
        assert response.json()["code"] == "request_too_large"
    assert stored() == (0, 0)
