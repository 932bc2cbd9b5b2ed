"""Question generation within the model's limits: JSON by response_format with a schema for the
cluster, prompts cut to the context window, bounded answers, and the per-stage record kept."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ingestion.llm.tokens import estimate_message_tokens
from ingestion.models import NewsCluster, Question
from ingestion.services.question_generation import questions_generate_from_news
from tests.ingestion.fake_llm import Reply, fake_llm
from tests.ingestion.test_question_generation import (
    NOW,
    good_scores,
    prompt_ids,
    question,
    responder,
)
from tests.ingestion.test_question_generation import articles as articles

pytestmark = pytest.mark.django_db


def configure(settings: Any, url: str, **overrides: Any) -> None:
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY = url, "local-test-model", "k"
    settings.LLM_TIMEOUT_SECONDS = 5.0
    settings.LLM_STRUCTURED_OUTPUT = "json_schema"
    settings.LLM_CONTEXT_TOKENS, settings.LLM_MAX_OUTPUT_TOKENS, settings.LLM_STAGE_LIMITS = 8192, 4096, ""
    for name, value in overrides.items():
        setattr(settings, name, value)


def test_json_schema_names_the_cluster_and_the_record_is_kept(settings: Any, articles: Any) -> None:
    def generate(request: dict[str, Any], ids: list[int]) -> Reply:
        return Reply(json.dumps({"questions": [question(ids, title=f"Will story {ids[0]} continue?")]}))

    with fake_llm(responder(generate)) as fake:
        configure(settings, fake.base_url)
        report = questions_generate_from_news(now=NOW)
    assert report.questions_created == 2 and report.problems == []
    for request in fake.calls("generate"):
        schema = request["response_format"]["json_schema"]["schema"]
        item = schema["properties"]["questions"]["items"]
        assert sorted(item["properties"]["provenance"]["items"]["enum"]) == sorted(prompt_ids(request))
        assert schema["properties"]["questions"]["maxItems"] == 3
        assert request["max_tokens"] == 1536
    assert {r["max_tokens"] for r in fake.calls("score")} == {512}
    for cluster in NewsCluster.objects.all():
        stages = {s["stage"]: s for s in cluster.llm_usage}
        assert set(stages) == {"question_generation", "question_scoring"}
        assert stages["question_generation"]["valid_first_try"] is True
        assert stages["question_generation"]["structured_output"] == "json_schema"
        assert stages["question_scoring"]["calls"] == 1 and stages["question_scoring"]["prompt_tokens"] == 120


def test_a_small_window_shortens_the_articles_and_stays_inside(settings: Any, articles: Any) -> None:
    def generate(request: dict[str, Any], ids: list[int]) -> Reply:
        return Reply(json.dumps({"questions": []}))

    with fake_llm(responder(generate, lambda request: Reply(good_scores()))) as fake:
        configure(settings, fake.base_url, LLM_CONTEXT_TOKENS=1000, LLM_MAX_OUTPUT_TOKENS=600)
        questions_generate_from_news(now=NOW)
    election = next(r for r in fake.calls("generate") if "Ruritania" in r["messages"][0]["content"])
    # The newest articles are kept first.
    newest = sorted(articles["election"], key=lambda a: (a.published_at, a.pk), reverse=True)
    shown = prompt_ids(election)
    assert shown and shown == [a.pk for a in newest[: len(shown)]]
    for request in fake.requests:
        assert estimate_message_tokens(request["messages"]) + request["max_tokens"] <= 1000
    assert not Question.objects.exists()
