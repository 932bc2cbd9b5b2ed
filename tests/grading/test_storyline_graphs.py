"""The offline builder on hand-written storylines (not the sample world's), through the real path:
feeds served and polled by the real poller, questions loaded with load_questions, graphs built and
stored by the build service, forecasts graded against them."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime, timedelta

import pytest

from grading.models import HindsightGraph
from grading.scoring.matchers import score_events
from grading.scoring.matching import Event
from grading.services import hindsight_build
from ingestion.models import Question
from leaderboard.services.grade_runs import grade_question
from tests.factories import AgentFactory
from tests.grading import storylines
from tests.ingestion.fakeserver import FakeServer
from tests.ingestion.fakeserver import fake_server as fake_server  # the fixture
from tests.leaderboard.grading_support import add_forecast, current

pytestmark = pytest.mark.django_db

NOW = datetime(2025, 12, 31, tzinfo=UTC)


@pytest.fixture
def archive(fake_server: FakeServer) -> dict[str, Question]:
    return storylines.publish(storylines.load(), fake_server, now=NOW)


def _events(graph: HindsightGraph) -> list[Event]:
    return [
        Event(id=e.key, title=e.title, description=e.description, date=e.occurred_on)
        for e in graph.events.filter(is_outcome=False)
    ]


def test_every_storyline_gets_a_graph_that_passes_and_finds_the_true_key_events(archive: dict[str, Question]) -> None:
    recalls: dict[str, float] = {}
    for story in storylines.load():
        graph = hindsight_build(question_id=archive[story.key].pk, builder="offline")
        assert graph is not None, story.key
        assert graph.graph_built, (story.key, graph.quality["failures"])
        assert graph.builder == "offline" and graph.builder_version == "offline-4.0"
        # The offline builder's events against the true graph, with the default matcher.
        score = score_events(storylines.truth(story), _events(graph))
        assert score.ker is not None
        recalls[story.key] = score.ker
        # Links come from evidence: at least one chain of three developments ends at the outcome.
        assert graph.quality["depth"] >= 3 and graph.links.filter(target__is_outcome=True).exists()
    assert statistics.fmean(recalls.values()) >= 0.6, recalls
    assert min(recalls.values()) >= 0.6, recalls


def test_same_archive_same_graph(archive: dict[str, Question]) -> None:
    question = archive["politics-clean-rivers"]
    first = hindsight_build(question_id=question.pk, builder="offline")
    second = hindsight_build(question_id=question.pk, builder="offline")
    assert first is not None and second is not None

    def shape(graph: HindsightGraph) -> tuple[object, ...]:
        events = sorted(
            (e.key, e.title, e.occurred_on, e.impact.direction) for e in graph.events.exclude(is_outcome=True)
        )
        links = sorted((x.source.key, x.target.key, x.relation, x.strength, x.confidence) for x in graph.links.all())
        return tuple(events), tuple(links)

    assert shape(first) == shape(second)


def test_unrelated_stories_stay_out_of_the_graph(archive: dict[str, Question]) -> None:
    story = next(s for s in storylines.load() if s.key == "conflict-tesh-valley")
    graph = hindsight_build(question_id=archive[story.key].pk, builder="offline")
    assert graph is not None
    noise = {a["title"] for a in story.articles if a["event"] is None}
    other = {a["title"] for s in storylines.load() if s.key != story.key for a in s.articles if "title" in a}
    cited = set(graph.events.values_list("sources__title", flat=True))
    assert not cited & (noise | other)


def test_storyline_forecasts_are_graded_against_the_built_graph(archive: dict[str, Question]) -> None:
    story = next(s for s in storylines.load() if s.key == "politics-clean-rivers")
    question = archive[story.key]
    assert hindsight_build(question_id=question.pk, builder="offline") is not None
    # An agent that lays out the true story, and one that gives no graph at all.
    true_graph = {
        "events": [
            {"id": e["key"], "title": e["title"], "description": e["description"], "date": e["date"]}
            for e in story.events
        ],
        "edges": [],
    }
    at = question.open_at + timedelta(days=30)
    informed = add_forecast(AgentFactory(), question, {"probability": 0.8}, received_at=at, graph=true_graph)
    silent = add_forecast(AgentFactory(), question, {"probability": 0.8}, received_at=at)
    report = grade_question(question_id=question.pk)
    assert report.reference == "built"
    assert current(informed).key_event_recall is not None and current(informed).key_event_recall >= 0.6
    assert current(silent).key_event_recall is None and current(silent).carried_graph is False
