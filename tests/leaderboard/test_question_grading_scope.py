"""A question page says what its forecasts are graded on, and the graph, the grades and the
words agree: an imported (ForecastBench) question whose dates Hindsight's news covers gets a
hindsight graph and evidence and reasoning grades, and its page says so; when the graph misses the
quality thresholds, or none could be built, the page says "outcome grades only" and shows no
source precision or key-event recall, and it links to a hindsight graph only when one exists."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest
from django.test import Client

from grading.models import GraphBuildAttempt, HindsightGraph
from grading.services import hindsight_build
from ingestion.models import Question
from ingestion.services.questions import question_resolve
from leaderboard.models import Forecast
from leaderboard.services.grade_runs import grade_question
from tests.factories import AgentFactory
from tests.grading.corpus import T0, T_RES, make_corpus, make_question

pytestmark = pytest.mark.django_db

NOW = T_RES + timedelta(days=5)
FORECASTBENCH = {"source": "ForecastBench (Forecasting Research Institute)", "licence": "CC BY-SA 4.0"}


def _text(client: Client, question: Question) -> str:
    html = client.get(f"/questions/{question.pk}/").content.decode()
    return unescape(re.sub(r"<[^>]+>", " ", html.split("<main", 1)[1]))


def _page(client: Client, question: Question) -> str:
    return client.get(f"/questions/{question.pk}/").content.decode()


def _imported_question_with_forecast() -> Question:
    question = make_question(origin=Question.Origin.IMPORTED, attribution=FORECASTBENCH)
    make_corpus()
    agent = AgentFactory()
    Forecast.objects.create(
        agent=agent,
        question=question,
        received_at=T0 + timedelta(days=30),
        prediction={"probability": 0.8},
        sources=["https://herald.example.org/3/1"],
        graph={
            "events": [
                {"id": "a", "title": "Senate committee approves Artemis lunar budget draft", "date": "2026-01-04"},
                {"id": "b", "title": "Senate approves Artemis lunar budget in final vote", "date": "2026-02-23"},
            ],
            "edges": [{"source": "a", "target": "b", "relation": "Causes"}],
        },
    )
    question_resolve(question=question, outcome=True, resolved_at=T_RES, now=NOW)
    return question


def test_the_page_the_graph_and_the_grades_agree(client: Client) -> None:
    question = _imported_question_with_forecast()
    graph = hindsight_build(question_id=question.pk, builder="offline")
    assert graph is not None and graph.graph_built
    grade_question(question_id=question.pk, now=NOW)

    text, html = _text(client, question), _page(client, question)
    assert "graded on evidence (SrcP) and reasoning (KER) as well as on the outcome" in text
    assert "no hindsight graph is built" not in text and "outcome grades only" not in text
    assert 'id="hindsight-link"' in html
    assert ">SrcP</th>" in html and ">KER</th>" in html

    # The graph misses the quality thresholds: grades lose evidence and reasoning, the page says so.
    HindsightGraph.objects.filter(pk=graph.pk).update(graph_built=False)
    grade_question(question_id=question.pk, now=NOW)
    text, html = _text(client, question), _page(client, question)
    assert "Its hindsight graph does not meet the quality thresholds" in text and "outcome grades only" in text
    assert ">SrcP</th>" not in html and ">KER</th>" not in html
    assert 'id="hindsight-link"' in html  # the graph exists: its page explains why it does not count

    # No graph at all: no link to one, and the reason the build gave.
    HindsightGraph.objects.filter(question=question).delete()
    GraphBuildAttempt.objects.filter(question=question).update(reason=GraphBuildAttempt.Reason.NO_ARTICLES)
    grade_question(question_id=question.pk, now=NOW)
    text, html = _text(client, question), _page(client, question)
    assert "No hindsight graph could be built for it (no articles in the evidence window)" in text
    assert 'id="hindsight-link"' not in html and ">SrcP</th>" not in html


def test_an_imported_question_without_news_says_outcome_only(client: Client) -> None:
    question = make_question(origin=Question.Origin.IMPORTED, attribution=FORECASTBENCH, status="open")
    text = _text(client, question)
    assert "Hindsight holds no news archive covering its dates" in text and "outcome grades only" in text
