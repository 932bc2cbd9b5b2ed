"""python manage.py regrade [ID]: one question by id or external id, or all; safe to run twice; the
standings follow the grades it writes. Runs on both databases."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from leaderboard.models import Agent, Grade, Standing
from tests.factories import AgentFactory
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


def run(*args: str) -> str:
    out = StringIO()
    call_command("regrade", *args, stdout=out)
    return out.getvalue()


def test_regrade_one_all_and_twice() -> None:
    first = make_question("binary", external_id="ext-1")
    second = make_question("binary")
    for q in (first, second):
        add_forecast(AgentFactory(), q, {"probability": 0.3})
        add_forecast(AgentFactory(), q, {"probability": 0.6})
        resolve(q, True)
    unresolved = make_question("binary")
    add_forecast(AgentFactory(), unresolved, {"probability": 0.6})

    out = run("ext-1")
    assert f"question {first.pk}: graded; 2 graded" in out
    assert "Regraded 1 question(s): 2 grades written (0 void), 0 unchanged, 0 withdrawn." in out

    out = run()
    assert "Regraded 2 question(s): 2 grades written (0 void), 2 unchanged, 0 withdrawn." in out
    assert Grade.objects.count() == 4

    out = run()
    assert "Regraded 2 question(s): 0 grades written (0 void), 4 unchanged, 0 withdrawn." in out

    out = run(str(second.pk), "--force")
    assert "2 grades written" in out
    assert Grade.objects.filter(forecast__question=second, version=2, is_current=True).count() == 2


def test_unknown_question_is_an_error() -> None:
    with pytest.raises(CommandError, match="No question with id or external id 'nope'"):
        run("nope")


def _overall(agent: Agent) -> Standing | None:
    return Standing.objects.filter(
        agent=agent, track="all", question_type="", domain="", origin="", horizon="", contamination_filter=False
    ).first()


def test_regrade_refreshes_the_standings_it_affects(agent: Agent, rival_agent: Agent) -> None:
    question = make_question("binary")
    add_forecast(agent, question, {"probability": 0.9})
    resolve(question, True)
    run()
    assert _overall(agent) is not None and _overall(rival_agent) is None
    # A forecast that reached the database without its grading announcement (a lost message).
    add_forecast(rival_agent, question, {"probability": 0.4})

    out = run()

    assert "1 grades written" in out and "Standings refreshed" in out
    row = _overall(rival_agent)
    assert row is not None and row.n == 1 and row.brier == pytest.approx(0.36)
    assert _overall(agent).brier == pytest.approx(0.01)  # type: ignore[union-attr]
    assert "Standings refreshed" not in run()  # nothing changed the second time
