"""Question generation from a small news cluster with the real small model: every stored draft is
valid, everything else is a logged rejection; nothing malformed is stored."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from ingestion.models import NewsCluster, Question
from ingestion.services.question_generation import questions_generate_from_news
from ingestion.services.question_prompts import CRITERIA, GENERATED_TYPES
from tests.factories import ArticleFactory
from tests.ingestion.test_question_generation import ELECTION, NOW
from tests.real_llm.conftest import assert_estimates_cover_the_real_counts

pytestmark = [pytest.mark.real_llm, pytest.mark.django_db]


def test_a_cluster_yields_valid_drafts_or_logged_rejections(settings: Any, real_llm: str, measured: Any) -> None:
    settings.QUESTION_GENERATION_MAX_QUESTIONS_PER_CLUSTER = 2
    articles = [
        ArticleFactory(title=title, summary=summary, published_at=NOW - timedelta(hours=2 + i))
        for i, (title, summary) in enumerate(ELECTION)
    ]
    report = questions_generate_from_news(now=NOW)
    cluster = NewsCluster.objects.get()
    measured(cluster.llm_usage, [f"question generation: {p}" for p in report.problems[:4]])
    assert_estimates_cover_the_real_counts(cluster.llm_usage)
    assert report.clusters_found == 1 and report.clusters_failed == 0, report.problems
    assert cluster.finished_at is not None
    drafts = list(Question.objects.filter(origin=Question.Origin.NEWS))
    # Either drafts or reasons: the run never ends silently empty.
    assert drafts or report.problems
    assert report.questions_created == len(drafts)
    cluster_ids = {a.pk for a in articles}
    for draft in drafts:
        assert draft.status == Question.Status.DRAFT and draft.type in GENERATED_TYPES
        assert draft.title.strip() and draft.resolution_criteria.strip()
        assert draft.resolve_by > NOW + timedelta(days=1)
        assert set(draft.provenance_articles.values_list("pk", flat=True)) <= cluster_ids
        assert set(draft.generation["scores"]) == set(CRITERIA)
        assert all(0 <= v <= 1 for v in draft.generation["scores"].values())
    assert [p["problem"] for p in cluster.problems] == report.problems
