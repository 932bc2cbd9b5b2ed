"""The guarded matcher's embeddings are stored: a regrade in a fresh process (an empty in-memory
cache) runs the model on no text, and the stored vectors give the same grades and match pairs."""

from __future__ import annotations

import datetime as dt

import pytest

from grading.embeddings import DatabaseEmbeddingStore, stored_embedding_cache
from grading.models import TextEmbedding
from grading.scoring.guarded import guarded_matcher_settings
from grading.scoring.matchers import build_reference_index
from grading.scoring.matching import Event
from grading.scoring.multilingual import EMBEDDING_MODEL, EmbeddingCache
from leaderboard.models import Agent, Grade
from leaderboard.services.grade_runs import grade_question
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

D = dt.date(2026, 3, 1)
REFERENCE = [
    Event(
        "r1", "Texaco files for Chapter 11 bankruptcy protection", date=D, magnitude=1, confidence=1, has_impact=True
    ),
    Event("r2", "Oil prices fall after the OPEC meeting", date=D, magnitude=0.5, confidence=1, has_impact=True),
]
FORECAST = [
    Event("f1", "Texaco beantragt Gläubigerschutz nach Chapter 11", date=D),  # German: only the embedding sees it
    Event("f2", "Die Ölpreise fallen nach dem Treffen der OPEC", date=D),
    Event("f3", "Oil prices go up", date=D),
]


def scored(cache: EmbeddingCache) -> tuple[list[tuple[str, str]], tuple[tuple[str, str, float, str], ...]]:
    index = build_reference_index(REFERENCE, guarded_matcher_settings(), embeddings=cache)
    result = index.score(FORECAST)
    return [(m.forecast_id, m.reference_id) for m in result.matches], result.verdicts


def test_a_fresh_cache_reads_the_store_and_embeds_nothing() -> None:
    first = EmbeddingCache(store=DatabaseEmbeddingStore())
    pairs, verdicts = scored(first)
    assert pairs == [("f2", "r2"), ("f1", "r1")]  # both through the embeddings (German titles)
    assert first.embedded > 0
    assert TextEmbedding.objects.filter(model=EMBEDDING_MODEL).count() == first.embedded

    fresh = EmbeddingCache(store=DatabaseEmbeddingStore())  # a new worker process
    assert scored(fresh) == (pairs, verdicts)
    assert fresh.embedded == 0 and fresh.loaded == first.embedded

    # The store changes nothing: the same pairs, verdicts and scores as the model's own vectors.
    assert scored(EmbeddingCache()) == (pairs, verdicts)
    assert TextEmbedding.objects.count() == first.embedded  # nothing stored twice


def test_a_regrade_with_an_emptied_cache_embeds_no_text(agent: Agent) -> None:
    question = make_question("binary", title="Will Texaco file for bankruptcy protection by June?")
    src = articles(1)
    make_reference(
        question, [RefEvent("e1", "Texaco files for Chapter 11 bankruptcy protection", day(10), 0.9, 0.9, sources=src)]
    )
    graph = {
        "events": [
            {"id": "a", "title": "Texaco beantragt Gläubigerschutz nach Chapter 11", "date": day(11).isoformat()},
            {"id": "b", "title": "Texaco seeks court protection from its creditors", "date": day(10).isoformat()},
        ]
    }
    forecast = add_forecast(agent, question, {"probability": 0.7}, graph=graph)
    resolve(question, True)
    stored_embedding_cache.cache_clear()
    grade_question(question_id=question.pk)
    assert stored_embedding_cache().embedded > 0
    first = Grade.objects.get(forecast=forecast, is_current=True)

    stored_embedding_cache.cache_clear()  # as a new worker process starts
    grade_question(question_id=question.pk, force=True)
    assert stored_embedding_cache().embedded == 0 and stored_embedding_cache().loaded > 0
    again = Grade.objects.get(forecast=forecast, is_current=True)
    assert again.version == first.version + 1
    assert again.key_event_recall == first.key_event_recall == 1.0
    assert again.details["reasoning"] == first.details["reasoning"]
