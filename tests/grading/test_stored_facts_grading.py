"""The guarded matcher's parse facts are stored beside the vectors, computed where the vectors are
(a hindsight graph stored, a forecast accepted): a new worker process grades from them without
parsing a text or loading the parser, and gives the same grade."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from grading.embeddings import stored_embedding_cache
from grading.models import TextEmbedding
from grading.scoring import event_features
from grading.scoring.event_features import facts_counts, facts_from_bytes, facts_model, text_facts_many
from grading.scoring.guarded_texts import parsed_texts
from grading.scoring.matching import Event
from grading.scoring.multilingual import EMBEDDING_MODEL
from grading.text_facts import DatabaseFactsStore, event_texts_parse, stored_facts_store
from leaderboard.models import Agent, Forecast, Grade
from leaderboard.services import grade_scoring
from leaderboard.services.forecast_embeddings import forecast_embeddings_compute
from leaderboard.services.grade_runs import grade_question
from tests.grading.scoring.test_stored_facts import ODD, real_texts
from tests.leaderboard.grading_support import (
    RefEvent,
    add_forecast,
    articles,
    day,
    make_question,
    make_reference,
    resolve,
)

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]

REFERENCE = [
    ("e1", "Texaco files for Chapter 11 bankruptcy protection", "The oil company lists debts of $21 billion."),
    ("e2", "Oil prices fall 5% after the OPEC meeting", ""),
    ("e3", "Pennzoil wins a $10.5 billion judgment against Texaco", ""),
]
GRAPH = {
    "events": [
        {"id": "a", "title": "Texaco seeks court protection from its creditors", "date": day(10).isoformat()},
        {"id": "b", "title": "Texaco does not file for bankruptcy", "date": day(10).isoformat()},
        {"id": "c", "title": "Oil prices fall 5% after OPEC meets", "date": day(11).isoformat()},
        {"id": "d", "title": "Pennzoil loses its case against Texaco", "date": day(12).isoformat()},
        {"id": "e", "title": "Texaco beantragt Gläubigerschutz nach Chapter 11", "date": day(10).isoformat()},
    ]
}


def new_process() -> None:
    """Forget every vector and parse of this process, as a new worker starts."""
    stored_embedding_cache.cache_clear()
    stored_facts_store.cache_clear()
    event_features._cache.clear()


def resolved_forecast(agent: Agent) -> Forecast:
    """A forecast with a graph on a resolved question with a hindsight graph, not graded yet."""
    question = make_question("binary", title="Will Texaco file for bankruptcy protection by June?")
    src = articles(1)
    make_reference(question, [RefEvent(k, t, day(10), 0.9, 0.9, description=d, sources=src) for k, t, d in REFERENCE])
    forecast = add_forecast(agent, question, {"probability": 0.7}, graph=GRAPH)
    resolve(question, True)
    return forecast


@pytest.fixture
def parser_loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the times the matcher asks for the parser."""
    calls: list[int] = []
    real = event_features.load_parser

    def counted() -> Any:
        calls.append(1)
        return real()

    monkeypatch.setattr(event_features, "load_parser", counted)
    return calls


def test_stored_facts_read_back_exactly_as_parsed() -> None:
    texts = real_texts()[:200] + ODD
    new_process()
    parsed = text_facts_many(texts)
    new_process()
    assert event_texts_parse(texts=texts) == len(texts)
    rows = TextEmbedding.objects.filter(model=facts_model())
    assert 0 < rows.count() <= len(texts) and not TextEmbedding.objects.filter(model=EMBEDDING_MODEL).exists()
    stored = DatabaseFactsStore().get_many(list(rows.values_list("digest", flat=True)))
    assert {facts_from_bytes(blob) for blob in stored.values()} == set(parsed)

    new_process()  # idempotent: read, not parsed, and nothing stored twice
    assert event_texts_parse(texts=texts) == 0
    assert text_facts_many(texts) == parsed
    assert TextEmbedding.objects.filter(model=facts_model()).count() == len(stored)


def test_a_new_worker_grades_from_stored_facts_without_parsing(agent: Agent, parser_loads: list[int]) -> None:
    forecast = resolved_forecast(agent)

    # Ahead of grading, as the product does when a graph is stored and when a forecast is accepted.
    new_process()
    events = [Event(k, t, d) for k, t, d in REFERENCE]
    assert event_texts_parse(texts=parsed_texts(events, hindsight=True)) == len(REFERENCE)
    forecast_embeddings_compute(forecast_ids=[forecast.pk])
    assert facts_counts["parsed"] > 0

    new_process()
    parser_loads.clear()
    before = facts_counts.copy()
    grade_question(question_id=forecast.question_id)
    assert facts_counts["parsed"] == before["parsed"] and not parser_loads
    assert facts_counts["read"] > before["read"]
    first = Grade.objects.get(forecast=forecast, is_current=True)
    verdicts = {v[3] for v in first.details["reasoning"]["verdicts"]}
    assert "matched" in verdicts and verdicts - {"matched"}  # the learned decision ran on both kinds

    # A regrade without the store parses, and gives the same grade.
    new_process()
    stored = TextEmbedding.objects.filter(model=facts_model())
    stored.delete()
    grade_question(question_id=forecast.question_id, force=True)
    assert facts_counts["parsed"] > before["parsed"] and parser_loads
    again = Grade.objects.get(forecast=forecast, is_current=True)
    assert again.version == first.version + 1
    assert again.details["reasoning"] == first.details["reasoning"]
    assert again.key_event_recall == first.key_event_recall


def test_a_failing_store_leaves_grading_and_its_transaction_working(
    agent: Agent, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    forecast = resolved_forecast(agent)
    new_process()
    # A key longer than its column: on PostgreSQL every write fails (SQLite does not check lengths).
    monkeypatch.setattr(grade_scoring, "stored_facts_store", lambda: DatabaseFactsStore("facts:" + "x" * 200))
    grade_question(question_id=forecast.question_id)
    grade = Grade.objects.get(forecast=forecast, is_current=True)
    assert grade.key_event_recall is not None
    assert "matched" in {v[3] for v in grade.details["reasoning"]["verdicts"]}
    assert connection.vendor != "postgresql" or "storing parse facts failed" in caplog.text
