"""The deterministic offline builder on a generated corpus."""

from __future__ import annotations

from typing import Any

import pytest

from grading.models import GraphBuildAttempt, HindsightGraph
from grading.selectors import reference_for_question
from grading.services import hindsight_build
from tests.grading.corpus import STORYLINES, T_RES, make_corpus, make_question, resolve

pytestmark = pytest.mark.django_db


def _shape(graph: HindsightGraph) -> dict[str, Any]:
    events = [
        (
            e.key,
            e.title,
            e.occurred_on.isoformat(),
            e.event_type,
            e.is_outcome,
            sorted(a.url for a in e.sources.all()),
            None if not hasattr(e, "impact") else (e.impact.direction, e.impact.magnitude, e.impact.confidence),
        )
        for e in graph.events.order_by("key")
    ]
    links = sorted(
        (link.source.key, link.target.key, link.relation, link.strength, link.confidence) for link in graph.links.all()
    )
    return {"events": events, "links": links, "explanation": graph.explanation, "quality": graph.quality}


def test_rich_corpus_meets_thresholds_and_is_deterministic() -> None:
    question = make_question()
    make_corpus()
    resolve(question)
    first = hindsight_build(question_id=question.pk, builder="offline")
    second = hindsight_build(question_id=question.pk, builder="offline")
    assert first is not None and second is not None
    first.refresh_from_db()
    assert (first.version, second.version) == (1, 2)
    assert not first.is_current and second.is_current
    assert _shape(first) == _shape(second)
    assert second.graph_built, second.quality
    assert second.builder == "offline" and second.builder_version.startswith("offline-")
    quality = second.quality
    assert quality["depth"] >= 3 and quality["events"] >= 10 and quality["sources"] >= 20 and quality["links"] >= 1
    # Near-duplicates from three outlets are merged: one event per storyline, plus the outcome node.
    assert second.events.filter(is_outcome=False).count() == len(STORYLINES)
    outcome = second.events.get(is_outcome=True)
    assert outcome.event_type == "Outcome" and outcome.occurred_on == T_RES.date()
    assert not hasattr(outcome, "impact") or outcome.impact is None
    # Every stored link is an included link.
    for link in second.links.all():
        assert link.confidence >= 0.6 and abs(link.strength) >= 0.3
    assert "Offline-built" in second.explanation
    attempt = GraphBuildAttempt.objects.filter(graph=second).get()
    assert attempt.succeeded and attempt.reason == "built"


def test_directions_follow_lexical_cues() -> None:
    question = make_question()
    make_corpus()
    resolve(question)
    graph = hindsight_build(question_id=question.pk, builder="offline")
    assert graph is not None
    by_title = {e.title: e for e in graph.events.select_related("impact")}
    approve = next(e for t, e in by_title.items() if "final vote" in t)
    delay = next(e for t, e in by_title.items() if "delay vote" in t)
    assert approve.impact.direction == "Positive"
    assert delay.impact.direction == "Negative"
    for event in graph.events.select_related("impact").filter(is_outcome=False):
        if event.impact.direction == "Neutral":
            assert event.impact.magnitude <= 0.3
        # Three outlets report every storyline.
        assert event.impact.confidence == pytest.approx(0.9)


def test_no_article_after_resolution_is_used() -> None:
    question = make_question()
    make_corpus()
    resolve(question)
    hindsight_build(question_id=question.pk, builder="offline")
    reference = reference_for_question(question.pk)
    assert reference is not None
    assert "https://herald.example.org/after/1" not in reference.source_urls
    assert all("noise" not in url for url in reference.source_urls)


def test_thin_corpus_is_stored_with_graph_built_false() -> None:
    question = make_question()
    make_corpus(STORYLINES[:4], outlets=("herald.example.org",))
    resolve(question)
    graph = hindsight_build(question_id=question.pk, builder="offline")
    assert graph is not None and graph.is_current
    assert graph.graph_built is False
    assert graph.quality["failures"]
    attempt = GraphBuildAttempt.objects.get(graph=graph)
    assert attempt.reason == "quality_failed" and "Quality thresholds unmet" in attempt.error
    reference = reference_for_question(question.pk)
    assert reference is not None and reference.graph_built is False


def test_no_articles_records_a_reason_and_writes_no_graph() -> None:
    question = make_question()
    resolve(question)
    assert hindsight_build(question_id=question.pk, builder="offline") is None
    assert not HindsightGraph.objects.filter(question=question).exists()
    attempt = GraphBuildAttempt.objects.get(question=question)
    assert attempt.reason == "no_articles" and not attempt.succeeded and "No articles" in attempt.error


def test_unresolved_question_is_refused_with_a_reason() -> None:
    question = make_question()
    make_corpus()
    assert hindsight_build(question_id=question.pk, builder="offline") is None
    attempt = GraphBuildAttempt.objects.get(question=question)
    assert attempt.reason == "not_resolved"
