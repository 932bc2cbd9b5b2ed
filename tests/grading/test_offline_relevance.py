"""Only news about the question's subject becomes an event; without any, no graph (insufficient evidence)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from grading.builders.relevance import entity_phrases
from grading.models import GraphBuildAttempt, HindsightGraph
from grading.services import hindsight_build
from tests.factories import ArticleFactory
from tests.grading.corpus import NOISE, T0, make_corpus, make_question, resolve


def test_entity_phrases_are_runs_of_capitalised_words() -> None:
    text = "After the vote, the Reserve Bank of Maravia said Hanna Voss's plan for June was fine. Prices rose."
    assert entity_phrases(text) == [("reserv", "bank", "maravia"), ("hanna", "voss")]
    # A Title Case headline names nothing reliably.
    assert entity_phrases("Reserve Bank Cuts Rates As Inflation Slows", skip_title_case=True) == []


@pytest.mark.django_db
def test_a_question_without_news_about_it_gets_no_graph() -> None:
    question = make_question(
        title="Will the Halvorsen Tunnel open to traffic by March 2026?",
        resolution_criteria="Resolves YES if the Halvorsen Tunnel opens to road traffic before March 2026.",
    )
    make_corpus()  # plenty of news, all about the Artemis lunar budget and unrelated local stories
    resolve(question)
    assert hindsight_build(question_id=question.pk, builder="offline") is None
    attempt = GraphBuildAttempt.objects.get(question=question)
    assert attempt.reason == "insufficient_evidence" and not attempt.succeeded
    assert "halvorsen tunnel" in attempt.error.lower() and "no graph is built" in attempt.error
    assert not HindsightGraph.objects.filter(question=question).exists()


@pytest.mark.django_db
def test_unrelated_stories_in_the_window_are_left_out() -> None:
    question = make_question()
    make_corpus()
    ArticleFactory(
        url="https://herald.example.org/budget-bakery",
        title="City council approves bakery budget",
        summary="The council approved the budget of the municipal bakery.",
        published_at=T0 + timedelta(days=30),
    )
    resolve(question)
    graph = hindsight_build(question_id=question.pk, builder="offline")
    assert graph is not None
    titles = set(graph.events.values_list("sources__title", flat=True))
    assert not titles & ({title for _, title, _ in NOISE} | {"City council approves bakery budget"})
