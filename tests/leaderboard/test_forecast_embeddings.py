"""A forecast with a graph, once stored, has its event texts embedded and parsed on the grade queue
(here in process): the vectors and parse facts are in the store before grading, bounded to the text
the matcher reads."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import pytest

from grading.embeddings import stored_embedding_cache
from grading.models import TextEmbedding
from grading.scoring.event_features import facts_model
from grading.scoring.guarded import EMBEDDED_CHARS
from grading.scoring.multilingual import EMBEDDING_MODEL, normalise, text_digest
from tests.leaderboard.api_support import VALID_PREDICTIONS, live_question

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]

LONG = "The central bank raises interest rates " + "to fight inflation again and again " * 280  # ~10,000 chars


def submit(client: httpx.Client, events: list[dict[str, Any]]) -> httpx.Response:
    question = live_question("binary")
    body = {"question": question.pk, "prediction": VALID_PREDICTIONS["binary"], "graph": {"events": events}}
    return client.post("/api/v1/forecasts/", json=body)


def test_a_submitted_graph_is_embedded_once_and_bounded(agent_http: httpx.Client, settings: Any) -> None:
    settings.HINDSIGHT_EMBED_ON_SUBMIT = True
    stored_embedding_cache.cache_clear()
    events = [
        {"id": "a", "title": "Parliament   rejects the budget bill ", "date": "2026-03-01"},
        {"id": "b", "title": LONG[:900], "description": LONG, "date": "2026-03-02"},
        {"id": "c", "title": "Budget", "date": "2026-03-03"},  # one word: never embedded
    ]
    response = submit(agent_http, events)
    assert response.status_code == 201, response.text
    stored = dict(TextEmbedding.objects.filter(model=EMBEDDING_MODEL).values_list("digest", "vector"))
    expected = [
        normalise("Parliament   rejects the budget bill "),
        normalise((LONG[:900] + " " + LONG)[:EMBEDDED_CHARS]),
    ]
    assert set(stored) == {text_digest(t) for t in expected}
    vector = np.frombuffer(bytes(stored[text_digest(expected[0])]), dtype="<f4")
    assert vector.shape == (384,) and abs(float(vector @ vector) - 1.0) < 1e-4
    embedded = stored_embedding_cache().embedded
    assert embedded == 2

    # The same texts again (another forecast): read from the store, the model is not run.
    stored_embedding_cache.cache_clear()
    assert submit(agent_http, events[:2]).status_code == 201
    assert stored_embedding_cache().embedded == 0
    assert TextEmbedding.objects.filter(model=EMBEDDING_MODEL).count() == 2
    # Their parse facts too (the one-word event is never parsed), each once.
    assert TextEmbedding.objects.filter(model=facts_model()).count() == 2


def test_off_without_a_broker(agent_http: httpx.Client, settings: Any) -> None:
    settings.HINDSIGHT_EMBED_ON_SUBMIT = False
    assert (
        submit(
            agent_http, [{"id": "a", "title": "Parliament rejects the budget bill", "date": "2026-03-01"}]
        ).status_code
        == 201
    )
    assert not TextEmbedding.objects.exists()
