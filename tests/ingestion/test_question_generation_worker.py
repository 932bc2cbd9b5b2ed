"""The hourly question-from-news task runs on a real Celery worker (with embedded beat) against a
local OpenAI-compatible server: a valid answer becomes a scored draft in the curation queue, a
malformed one for another cluster is skipped without stopping it."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from ingestion.models import NewsCluster, Question
from tests.celery_worker import running_worker, wait_until
from tests.factories import ArticleFactory
from tests.ingestion.fake_llm import Reply, fake_llm
from tests.ingestion.test_question_generation import DROUGHT, ELECTION, is_election, question, responder


@pytest.mark.celery_worker
def test_beat_drafts_questions_from_news_on_a_real_worker(transactional_db: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("HINDSIGHT_FAST_BEAT", "1")
    now = timezone.now()
    for stories in (ELECTION, DROUGHT):
        for i, (title, summary) in enumerate(stories):
            ArticleFactory(title=title, summary=summary, published_at=now - timedelta(hours=1 + i))
    resolve_by = (now + timedelta(days=90)).date().isoformat()

    def generate(request: dict[str, Any], ids: list[int]) -> Reply:
        if is_election(request):
            return Reply('{"questions": [{"title": "Will the')  # cut off mid-answer
        drought = question(ids, title="Will Lake Mead's water level rise by the autumn?", resolve_by=resolve_by)
        return Reply(json.dumps({"questions": [drought]}))

    with fake_llm(responder(generate)) as fake:
        # The worker is a separate process: it reads the model settings from its environment.
        monkeypatch.setenv("HINDSIGHT_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("HINDSIGHT_LLM_MODEL", "local-test-model")
        monkeypatch.setenv("HINDSIGHT_LLM_API_KEY", "sk-local")
        with running_worker(queues="ingest", beat=True):
            assert wait_until(lambda: NewsCluster.objects.filter(finished_at__isnull=False).count() == 2, timeout=90)
    draft = Question.objects.get()
    assert draft.title == "Will Lake Mead's water level rise by the autumn?"
    assert (draft.status, draft.origin) == (Question.Status.DRAFT, Question.Origin.NEWS)
    assert draft.generation["model"] == "local-test-model"
    assert set(draft.generation["scores"]) == {"clarity", "measurability", "answerability", "temporal_validity"}
    assert draft.provenance_articles.count() == 2
    malformed = NewsCluster.objects.get(questions_created=0)
    assert "not valid JSON" in malformed.problems[0]["problem"]
    # Later beats found both clusters done: one generation request per cluster (plus one correction
    # for the cut-off answer), no duplicates.
    assert len(fake.calls("generate")) == 3 and len(fake.calls("score")) == 1
    # The server answers neither response_format nor tool calls with the schema: detected as text.
    assert {r.get("response_format", {}).get("type") for r in fake.calls("generate")} == {None}
