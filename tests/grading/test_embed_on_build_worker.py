"""A real worker that builds a hindsight graph embeds and parses its events as it stores it, and the
grading that follows, on the same worker, only reads stored vectors and parse facts: it embeds and
parses no text."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from grading.models import HindsightEvent, HindsightGraph, TextEmbedding
from grading.scoring.event_features import facts_model
from grading.scoring.guarded import EMBEDDED_CHARS
from grading.scoring.multilingual import EMBEDDING_MODEL, normalise, text_digest
from ingestion.models import Question
from leaderboard.models import Grade
from leaderboard.services.forecasts import forecast_submit
from tests.celery_worker import running_worker, wait_until
from tests.factories import AgentFactory
from tests.grading.corpus import T0, make_corpus, make_question, resolve


@pytest.mark.celery_worker
def test_a_built_graph_is_embedded_once_and_grading_reads_its_vectors(
    transactional_db: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HINDSIGHT_EMBED_ON_BUILD", "1")  # the worker's own settings
    settings.HINDSIGHT_EMBED_ON_SUBMIT = True
    question = make_question(status=Question.Status.OPEN)
    make_corpus()
    with running_worker(queues="grade"):
        agent = AgentFactory()
        graph = {"events": [{"id": "a", "title": "Der Senat billigt das Budget für Artemis", "date": "2026-02-20"}]}
        forecast = forecast_submit(
            agent=agent,
            question_id=question.pk,
            prediction={"probability": 0.6},
            graph=graph,
            now=T0 + timedelta(days=9),
        ).forecast
        vectors = TextEmbedding.objects.filter(model=EMBEDDING_MODEL)
        assert wait_until(lambda: vectors.count() == 1, timeout=60)  # embedded on submission
        resolve(question)
        assert wait_until(lambda: Grade.objects.filter(forecast=forecast, is_current=True).exists(), timeout=120)
    built = HindsightGraph.objects.get(question=question, is_current=True)
    events = HindsightEvent.objects.filter(graph=built, is_outcome=False)
    texts = {normalise(f"{e.title} {e.description}"[:EMBEDDED_CHARS]) for e in events}
    assert events.exists()
    stored = set(vectors.values_list("digest", flat=True))
    assert {text_digest(t) for t in texts} <= stored  # every event, once, when the graph was stored
    # Grading stored nothing new: every vector and parse it needed was there already.
    assert len(stored) == len(texts) + 1
    facts = TextEmbedding.objects.filter(model=facts_model())
    assert 0 < facts.count() <= events.count()  # the German forecast event is decided without a parse
    last = TextEmbedding.objects.order_by("-created_at").values_list("created_at", flat=True)[0]
    grade = Grade.objects.get(forecast=forecast, is_current=True)
    assert last <= grade.created_at and grade.key_event_recall is not None
