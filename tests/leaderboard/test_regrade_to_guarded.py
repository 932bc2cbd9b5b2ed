"""When the default matcher changes, every existing grade is regraded: the grade history keeps the old
matcher's grade and the forecast graph page shows the new matcher's verdict on each pair."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client

from grading.scoring.guarded import GUARDED_MATCHER_VERSION
from grading.scoring.matching import MATCHER_VERSION
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
    "events": [
        {"id": "a", "title": "Parliament rejects the budget bill", "description": "", "date": day(10).isoformat()},
        {"id": "b", "title": "Parliament rejects the budget bill", "description": "", "date": day(12).isoformat()},
        {"id": "c", "title": "The central bank raises interest rates", "description": "", "date": day(13).isoformat()},
    ]
}


def test_switching_to_the_guarded_default_regrades_and_shows_verdicts(agent: Agent, settings) -> None:  # type: ignore[no-untyped-def]
    question = make_question("binary", title="Will parliament pass the budget bill by June?")
    src = articles(2)
    make_reference(
        question,
        [
            RefEvent("e1", "Parliament approves the budget bill", day(10), 0.9, 0.9, sources=[src[0]]),
            RefEvent("e2", "The central bank lifts interest rates", day(14), 0.5, 0.8, sources=[src[1]]),
        ],
    )
    forecast = add_forecast(agent, question, {"probability": 0.6}, graph=GRAPH)
    resolve(question, True)
    settings.HINDSIGHT_MATCHER = "hybrid"
    grade_question(question_id=question.pk)
    before = Grade.objects.get(forecast=forecast, is_current=True)
    assert (before.matcher_settings["matcher"], before.matcher_settings["version"]) == ("hybrid", MATCHER_VERSION)
    assert before.key_event_recall == 1.0  # "rejects" took "approves"

    settings.HINDSIGHT_MATCHER = "guarded"
    out = io.StringIO()
    call_command("regrade", stdout=out)
    assert "1 graded" in out.getvalue()
    grades = list(Grade.objects.filter(forecast=forecast).order_by("version"))
    assert [(g.version, g.is_current, g.matcher_settings["matcher"]) for g in grades] == [
        (1, False, "hybrid"),
        (2, True, "guarded"),
    ]
    after = grades[1]
    assert after.matcher_settings["version"] == GUARDED_MATCHER_VERSION
    assert after.key_event_recall == 0.5  # the rate rise still matches; the rejection does not
    verdicts = {(v[0], v[1]): v[3] for v in after.details["reasoning"]["verdicts"]}
    assert "opposite direction" in verdicts.values() and "matched" in verdicts.values()

    history = Client().get(f"/forecasts/{forecast.pk}/").content.decode()
    assert "matcher hybrid (threshold 0.45) → guarded (threshold 0.45)" in history

    page = Client().get(f"/forecasts/{forecast.pk}/graph/")
    assert page.status_code == 200
    html = page.content.decode()
    table = html[html.index('id="match-verdicts"') :]
    assert "Parliament rejects the budget bill" in table and "opposite direction" in table
    assert "The central bank raises interest rates" in table and "matched" in table
