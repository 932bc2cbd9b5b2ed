"""Forecast body validation without HTTP: every shape rule, all errors at once, field paths named."""

from __future__ import annotations

import math
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from ingestion.models import Question
from leaderboard.services.forecast_graphs import validate_graph
from leaderboard.services.forecast_sources import validate_sources
from leaderboard.services.predictions import forecast_body_clean, validate_prediction
from tests.factories import ArticleFactory
from tests.leaderboard.api_support import TYPE_FIELDS, VALID_PREDICTIONS


def q(qtype: str, **kwargs: Any) -> Question:
    return Question(type=qtype, **{**TYPE_FIELDS[qtype], **kwargs})


def errors_of(fn: Any, **kwargs: Any) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as info:
        fn(**kwargs)
    return info.value.message_dict


@pytest.mark.parametrize("qtype", list(VALID_PREDICTIONS))
def test_valid_prediction_each_type(qtype: str) -> None:
    assert validate_prediction(question=q(qtype), prediction=VALID_PREDICTIONS[qtype])


@pytest.mark.parametrize("bad", [1.5, -0.01, math.nan, math.inf, "0.5", True, None, [0.5]])
def test_binary_probability_rejected(bad: Any) -> None:
    errs = errors_of(validate_prediction, question=q("binary"), prediction={"probability": bad})
    assert list(errs) == ["prediction.probability"]


def test_binary_unknown_key_and_missing() -> None:
    errs = errors_of(validate_prediction, question=q("binary"), prediction={"prob": 0.5})
    assert set(errs) == {"prediction.prob", "prediction.probability"}


def test_multiple_choice_missing_unknown_and_sum() -> None:
    errs = errors_of(
        validate_prediction,
        question=q("multiple_choice"),
        prediction={"probabilities": {"Yes": 0.5, "No": 0.5, "Perhaps": 0.0}},
    )
    assert "prediction.probabilities.Perhaps" in errs
    assert "prediction.probabilities.Maybe" in errs
    errs = errors_of(
        validate_prediction,
        question=q("multiple_choice"),
        prediction={"probabilities": {"Yes": 0.5, "No": 0.3, "Maybe": 0.3}},
    )
    assert "add up to 1" in errs["prediction.probabilities"][0]
    ok = validate_prediction(
        question=q("multiple_choice"), prediction={"probabilities": {"Maybe": 0.2, "No": 0.3, "Yes": 0.5 + 5e-7}}
    )
    assert list(ok["probabilities"]) == ["Yes", "No", "Maybe"]


def test_quantity_shapes() -> None:
    question = q("quantity")
    assert validate_prediction(question=question, prediction={"value": 12}) == {"value": 12.0}
    clean = validate_prediction(question=question, prediction={"quantiles": {"0.9": 30, "0.10": 10, "0.5": 20}})
    assert clean == {"quantiles": {"0.1": 10.0, "0.5": 20.0, "0.9": 30.0}}
    errs = errors_of(validate_prediction, question=question, prediction={"interval": [20, 10]})
    assert "lower end above its upper end" in errs["prediction.interval"][0]
    errs = errors_of(validate_prediction, question=question, prediction={"quantiles": {"0.1": 30, "0.9": 10}})
    assert "must not decrease" in errs["prediction.quantiles"][0]
    errs = errors_of(validate_prediction, question=question, prediction={"quantiles": {"1.5": 3, "x": 4}})
    assert set(errs) == {"prediction.quantiles.1.5", "prediction.quantiles.x"}
    errs = errors_of(validate_prediction, question=question, prediction={"value": 5000})
    assert "bounds" in errs["prediction.value"][0]
    errs = errors_of(validate_prediction, question=question, prediction={"value": 1, "interval": [1, 2]})
    assert "exactly one" in errs["prediction"][0]


def test_timeframe_period_must_match_granularity() -> None:
    assert validate_prediction(question=q("timeframe"), prediction={"period": "2026-q3"}) == {"period": "2026-Q3"}
    errs = errors_of(validate_prediction, question=q("timeframe"), prediction={"period": "2026-07"})
    assert "YYYY-Qn" in errs["prediction.period"][0]
    week = q("timeframe", granularity="week")
    assert validate_prediction(question=week, prediction={"period": "2026-W28"}) == {"period": "2026-W28"}


def test_relation_codes() -> None:
    question = q("relation")
    clean = validate_prediction(question=question, prediction={"relations": {"04": ["043", "042", "042"]}})
    assert clean == {"relations": {"04": ["042", "043"]}}
    errs = errors_of(
        validate_prediction, question=question, prediction={"relations": {"04": ["051", "999"], "21": ["211"]}}
    )
    assert "'051'" in errs["prediction.relations.04[0]"][0] and "'05'" in errs["prediction.relations.04[0]"][0]
    assert "'999'" in errs["prediction.relations.04[1]"][0]
    assert "'21'" in errs["prediction.relations.21"][0]


def test_open_ended() -> None:
    question = q("open_ended")
    assert validate_prediction(question=question, prediction={"answer": " Because. "}) == {"answer": "Because."}
    errs = errors_of(validate_prediction, question=question, prediction={"events": ["ok", "", 3]})
    assert set(errs) == {"prediction.events[1]", "prediction.events[2]"}
    errs = errors_of(validate_prediction, question=question, prediction={"events": [f"e{i}" for i in range(51)]})
    assert "at most 50" in errs["prediction.events"][0]
    errs = errors_of(validate_prediction, question=question, prediction={"events": []})
    assert "prediction.events" in errs


def _graph(n: int = 3) -> dict[str, Any]:
    return {
        "events": [
            {"id": f"e{i}", "title": f"Event {i}", "description": "", "date": f"2026-03-0{i + 1}"} for i in range(n)
        ],
        "edges": [
            {"source": "e0", "target": "e1", "relation": "Causes", "strength": 0.8, "confidence": 0.7},
            {"source": "e1", "target": "e2", "relation": "enables", "strength": -0.5, "confidence": 1},
        ],
    }


def test_graph_valid_and_normalised() -> None:
    clean = validate_graph(graph=_graph())
    assert clean is not None
    assert clean["edges"][1]["relation"] == "Enables"
    assert validate_graph(graph=None) is None


def test_graph_errors_all_at_once() -> None:
    graph = _graph()
    graph["events"].append({"id": "e0", "title": "dup", "date": "March 3rd"})
    graph["edges"] += [
        {"source": "e2", "target": "zz", "relation": "Causes"},
        {"source": "e0", "target": "e2", "relation": "Explains", "strength": 2, "confidence": -0.1},
    ]
    errs = errors_of(validate_graph, graph=graph)
    assert "the id of an earlier event" in errs["graph.events[3].id"][0]
    assert "ISO 8601" in errs["graph.events[3].date"][0]
    assert "graph.edges[2].target" in errs
    assert "graph.edges[3].relation" in errs
    assert "graph.edges[3].strength" in errs
    assert "graph.edges[3].confidence" in errs


def test_graph_cycle_and_size() -> None:
    graph = _graph()
    graph["edges"].append({"source": "e2", "target": "e0", "relation": "Triggers"})
    errs = errors_of(validate_graph, graph=graph)
    assert "cycle" in errs["graph.edges"][0]
    errs = errors_of(validate_graph, graph={"events": _graph(1)["events"] * 51, "edges": []})
    assert "at most 50" in errs["graph.events"][0]


@pytest.mark.django_db
def test_sources_ids_urls_and_limits() -> None:
    article = ArticleFactory(url="https://news.example.org/a")
    clean, ids = validate_sources(
        sources=[article.pk, str(article.pk), "https://NEWS.example.org/a#top", "http://x.org/b"]
    )
    assert clean == [article.pk, article.pk, "https://NEWS.example.org/a#top", "http://x.org/b"]
    assert ids == [article.pk]
    errs = errors_of(validate_sources, sources=[999999, "ftp://x.org/f", "not a url", None])
    assert set(errs) == {"sources[0]", "sources[1]", "sources[2]", "sources[3]"}
    assert "999999" in errs["sources[0]"][0]
    errs = errors_of(validate_sources, sources=["http://x.org/"] * 201)
    assert "at most 200" in errs["sources"][0]


@pytest.mark.django_db
def test_whole_body_collects_every_field() -> None:
    errs = errors_of(
        forecast_body_clean,
        question=q("binary"),
        prediction={"probability": 2},
        sources="http://x.org",
        rationale=5,
        graph={"events": [], "edges": [{"source": "a", "target": "b", "relation": "Causes"}]},
    )
    assert {"prediction.probability", "sources", "rationale", "graph.edges[0].source", "graph.edges[0].target"} <= set(
        errs
    )
