"""What the sample world tells a reader stays true to it: its fictional markets link to no real
prediction-market site, and advancing the clock counts the sample replay questions apart from the
real ones it publishes too."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingestion.models import Market, Question
from ingestion.services.questions import question_resolve
from sampleworld.management.commands.sample_world import grade_and_rank, sample_world_run
from sampleworld.publish import SampleWorldRun, WorldParams
from tests.factories import QuestionFactory

REAL_SITES = ("polymarket.com", "kalshi.com", "manifold.markets")


@pytest.mark.django_db(transaction=True)
def test_fictional_markets_link_to_no_real_site() -> None:
    run = SampleWorldRun.start(params=WorldParams(size="tiny", seed=7, end=datetime.now(UTC)))
    try:
        sample_world_run(run, until="present", log=lambda m: None)
    finally:
        run.disable_sources()
        run.stop()
    markets = list(Market.objects.all())
    assert {m.platform for m in markets} >= {"polymarket", "kalshi", "manifold"}
    assert [m.url for m in markets if any(site in m.url for site in REAL_SITES)] == []
    linked = Question.objects.filter(market__isnull=False).values_list("provenance_url", flat=True)
    assert linked and [url for url in linked if any(site in url for site in REAL_SITES)] == []


@pytest.mark.django_db
def test_advancing_counts_sample_and_real_replay_questions_apart() -> None:
    at = datetime(2025, 3, 1, tzinfo=UTC)
    for origin, n in ((Question.Origin.SAMPLE, 2), (Question.Origin.ARCHIVE, 1)):
        for _ in range(n):
            question = QuestionFactory(track=Question.Track.REPLAY, origin=origin, open_at=at, close_at=at)
            question_resolve(question=question, outcome=True, resolved_at=at, now=at)
    lines: list[str] = []
    grade_and_rank(log=lines.append, publish_replays=True)
    assert "    published the outcomes of 2 sample and 1 real replay questions (as staff would)" in lines
