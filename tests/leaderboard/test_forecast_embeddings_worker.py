"""A real worker on the grade queue alone embeds and parses a submitted forecast's event texts into
the store."""

from __future__ import annotations

from typing import Any

import pytest

from grading.models import TextEmbedding
from grading.scoring.event_features import facts_model
from grading.scoring.multilingual import EMBEDDING_MODEL, normalise, text_digest
from leaderboard.models import Agent
from leaderboard.services.forecasts import forecast_submit
from tests.celery_worker import running_worker, wait_until
from tests.leaderboard.api_support import VALID_PREDICTIONS, live_question

TITLES = ["Parliament rejects the budget bill", "Die Zentralbank erhöht die Leitzinsen"]


@pytest.mark.celery_worker
def test_a_real_worker_embeds_a_stored_forecast(transactional_db: Any, agent: Agent, settings: Any) -> None:
    settings.HINDSIGHT_EMBED_ON_SUBMIT = True
    assert settings.CELERY_TASK_ROUTES["leaderboard.tasks.embed_*"] == {"queue": "grade"}
    graph = {"events": [{"id": str(i), "title": t, "date": "2026-03-01"} for i, t in enumerate(TITLES)]}
    with running_worker(queues="grade"):
        forecast_submit(
            agent=agent, question_id=live_question("binary").pk, prediction=VALID_PREDICTIONS["binary"], graph=graph
        )
        vectors = TextEmbedding.objects.filter(model=EMBEDDING_MODEL)
        assert wait_until(lambda: vectors.count() == 2, timeout=60)
        # The English title's parse facts too (the German one is decided without a parse).
        assert wait_until(lambda: TextEmbedding.objects.filter(model=facts_model()).count() == 1, timeout=60)
    assert set(vectors.values_list("digest", flat=True)) == {text_digest(normalise(t)) for t in TITLES}
