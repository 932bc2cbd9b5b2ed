"""Switching the matcher (or its version) regrades every forecast with one command; the earlier grades
stay as history, each with the matcher name and version it was computed with."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client

from grading.scoring.matching import MATCHER_VERSION
from grading.scoring.worldreasoner import WORLDREASONER_MATCHER_VERSION
from leaderboard.models import Agent, Grade
from leaderboard.services.grade_runs import grade_question
from tests.leaderboard.grading_support import (
    RefEvent,
    add_forecast,
    articles,
    day,
    make_question,
    make_reference,
    resolve,
)

pytestmark = pytest.mark.django_db

GRAPH = {
    "events": [{"id": "a", "title": "Minister visits flooded town", "description": "", "date": day(11).isoformat()}]
}


def test_regrade_with_the_worldreasoner_matcher_keeps_the_hybrid_grades_as_history(agent: Agent, settings) -> None:  # type: ignore[no-untyped-def]
    question = make_question("binary")
    src = articles(2)
    make_reference(
        question,
        [
            RefEvent("e1", "Prime minister resigns amid mass protests", day(10), 0.9, 0.9, sources=[src[0]]),
            RefEvent("e2", "Parliament dissolved", day(13), 0.5, 0.8, sources=[src[1]]),
        ],
    )
    forecast = add_forecast(agent, question, {"probability": 0.6}, graph=GRAPH)
    resolve(question, True)
    settings.HINDSIGHT_MATCHER = "hybrid"
    grade_question(question_id=question.pk)
    first = Grade.objects.get(forecast=forecast, is_current=True)
    assert (first.matcher_settings["matcher"], first.matcher_settings["version"]) == ("hybrid", MATCHER_VERSION)
    assert first.key_event_recall == 0.0  # one shared word is not a match for the default matcher

    settings.HINDSIGHT_MATCHER = "worldreasoner"
    out = io.StringIO()
    call_command("regrade", stdout=out)
    assert "1 graded" in out.getvalue()
    grades = list(Grade.objects.filter(forecast=forecast).order_by("version"))
    assert [(g.version, g.is_current) for g in grades] == [(1, False), (2, True)]
    second = grades[1]
    assert (second.matcher_settings["matcher"], second.matcher_settings["version"]) == (
        "worldreasoner",
        WORLDREASONER_MATCHER_VERSION,
    )
    assert second.key_event_recall == 0.5  # the evaluator's best-candidate scaling takes the one word
    assert grades[0].key_event_recall == 0.0  # history unchanged

    page = Client().get("/methods/").content.decode()
    assert WORLDREASONER_MATCHER_VERSION in page and MATCHER_VERSION in page
    assert 'id="matcher-name">worldreasoner<' in page and "Why guarded is the default" in page
