"""Each question type's own scores and its outcome in words on the question, agent, dashboard and
forecast pages; annulled and un-resolved questions; the grade history of a forecast."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from ingestion.models import Question
from ingestion.services.questions import question_annul, question_unresolve
from leaderboard.models import Agent, Forecast, Grade
from leaderboard.services.grade_runs import grade_question
from tests.factories import T0, MembershipFactory
from tests.leaderboard.api_support import VALID_PREDICTIONS
from tests.leaderboard.grading_support import (
    RESOLVED_AT,
    RefEvent,
    add_forecast,
    articles,
    make_question,
    make_reference,
    resolve,
)

pytestmark = [pytest.mark.django_db]

CASES: list[tuple[str, dict[str, Any], Any, list[str], str]] = [
    ("binary", {"probability": 0.7}, False, ["Call", "wrong", "Brier", "0.490", "Log"], "No"),
    ("binary", {"probability": 0.5}, True, ["Call", "none at 50%", "Brier", "0.250"], "Yes"),
    (
        "multiple_choice",
        {"probabilities": {"Yes": 0.5, "No": 0.3, "Maybe": 0.2}},
        "No",
        ["Brier (multiple choice)", "0.390", "Call", "wrong"],
        "No",
    ),
    (
        "multiple_choice",
        {"probabilities": {"Yes": 0.4, "No": 0.4, "Maybe": 0.2}},
        "No",
        ["Call", "none: Yes and No tie", "0.280"],
        "No",
    ),
    ("quantity", {"interval": [10, 20]}, 15.0, ["Interval holds", "yes", "Width", "10"], "15 USD"),
    ("quantity", {"quantiles": {"0.1": 5, "0.5": 14, "0.9": 30}}, 15.0, ["Pinball", "10-90% holds"], "15 USD"),
    (
        "timeframe",
        {"period": "2026-Q3"},
        "2026-Q4",
        ["Exact period", "no", "Off by", "1 period early"],
        "2026-Q4 (1 Oct",
    ),
    (
        "relation",
        {"relations": {"04": ["042", "043"], "05": []}},
        {"relations": {"04": ["042"], "16": ["163"]}},
        ["1st P", "1st F1", "2nd R", "KL bin", "KL quad"],
        "163 Impose embargo",
    ),
    (
        "open_ended",
        {"events": ["Ceasefire signed"]},
        ["Ceasefire signed", "Talks fail"],
        ["F1", "lexical judge"],
        "Talks fail",
    ),
]


@pytest.fixture(autouse=True)
def no_llm(settings: Any) -> None:
    settings.LLM_MODEL = ""


@pytest.mark.parametrize(("qtype", "prediction", "outcome", "labels", "outcome_words"), CASES)
def test_question_agent_and_dashboard_show_the_types_own_scores(
    client: Client,
    owner: Any,
    agent: Agent,
    qtype: str,
    prediction: dict[str, Any],
    outcome: Any,
    labels: list[str],
    outcome_words: str,
) -> None:
    question = make_question(qtype)
    add_forecast(agent, question, prediction)
    resolve(question, outcome)
    grade_question(question_id=question.pk)
    question.refresh_from_db()

    page = client.get(f"/questions/{question.pk}/").content.decode()
    assert "{&#x27;" not in page and "{'" not in page  # no raw Python structures
    assert outcome_words in page
    for label in labels:
        assert label in page, (qtype, label)
    agent_page = client.get(f"/agents/{agent.slug}/").content.decode()
    for label in labels:
        assert label in agent_page, (qtype, label)
    assert outcome_words in agent_page
    client.force_login(owner)
    dashboard = client.get("/dashboard/").content.decode()
    for label in labels:
        assert label in dashboard, (qtype, label)


def test_annulled_question_says_annulled_with_its_reason(client: Client, agent: Agent) -> None:
    question = make_question("binary")
    add_forecast(agent, question, {"probability": 0.2})
    resolve(question, True)
    question_annul(question=question, reason="The market was voided by its operator.", now=RESOLVED_AT)
    grade_question(question_id=question.pk)
    page = client.get(f"/questions/{question.pk}/").content.decode()
    assert "Annulled" in page and "The market was voided by its operator." in page
    assert "Outcome:</strong> No" not in page and "Outcome:</strong> Yes" not in page
    assert "question annulled" in page  # the forecast's grade is void, said in words


def test_unresolved_question_still_lists_earlier_resolutions(client: Client) -> None:
    question = make_question("binary", close_at=T0 + timedelta(days=1))
    resolve(question, True)
    question.refresh_from_db()
    question_unresolve(question=question, note="Source retracted", now=RESOLVED_AT + timedelta(days=1))
    page = client.get(f"/questions/{question.pk}/").content.decode()
    assert question.status != Question.Status.RESOLVED
    assert "Resolution history" in page and "Un-resolved" in page and ">Yes<" in page
    assert "earlier versions are listed below" in page


def test_hindsight_link_only_when_a_graph_exists(client: Client) -> None:
    question = make_question("binary")
    resolve(question, True)
    assert "hindsight-link" not in client.get(f"/questions/{question.pk}/").content.decode()
    make_reference(question, [RefEvent("e1", "Budget passed", (T0 + timedelta(days=3)).date())])
    page = client.get(f"/questions/{question.pk}/").content.decode()
    assert "hindsight-link" in page
    assert client.get(f"/hindsight/questions/{question.pk}/").status_code == 200


def test_forecast_page_lists_every_grade_version_with_what_changed(client: Client, agent: Agent) -> None:
    question = make_question("binary")
    forecast = add_forecast(agent, question, {"probability": 0.7}, cited=articles(1))
    resolve(question, True)
    grade_question(question_id=question.pk)
    make_reference(question, [RefEvent("e1", "Budget passed", (T0 + timedelta(days=3)).date(), magnitude=0.5)])
    grade_question(question_id=question.pk)
    resolve(question, False, at=RESOLVED_AT + timedelta(days=2))
    grade_question(question_id=question.pk)
    assert Grade.objects.filter(forecast=forecast).count() == 3

    page = client.get(f"/forecasts/{forecast.pk}/").content.decode()
    assert "Grade history" in page
    assert "first grade" in page
    assert "hindsight graph v— → v1" in page
    assert "resolution v1 → v2" in page
    assert page.index("v3") < page.index("v2</td>") < page.index("v1</td>")  # newest first
    assert "Rationale" not in page  # what was submitted is for the team and staff


def test_grade_history_shows_grader_1_versions_on_their_own_scale(client: Client, agent: Agent) -> None:
    # Grade versions written before grader 2.0 summed the multiple-choice Brier and kept relation F1 x100:
    # the history labels the one and reads the other as the share it is, never 10000%.
    choice = make_question("multiple_choice")
    relation = make_question("relation")
    pages = []
    for question, brier, f1 in ((choice, 0.78, None), (relation, None, 100.0)):
        forecast = add_forecast(agent, question, VALID_PREDICTIONS[question.type])
        Grade.objects.create(
            forecast=forecast, version=1, grader_version="1.0", resolution_version=1, brier=brier,
            correct=False if brier else None, first_level_f1=f1, second_level_f1=f1, created_at=RESOLVED_AT,
        )  # fmt: skip
        resolve(question, "No" if question is choice else {"relations": {"04": ["042"]}})
        pages.append(client.get(f"/forecasts/{forecast.pk}/").content.decode())
    assert "Brier summed (grader 1.0)" in pages[0] and "0.780" in pages[0]
    assert "100.0%" in pages[1] and "10000" not in pages[1]


def test_forecast_on_open_question_is_private_to_its_team(client: Client, owner: Any, agent: Agent) -> None:
    question = make_question("binary", close_at=T0 + timedelta(days=3650))
    forecast: Forecast = add_forecast(agent, question, {"probability": 0.4})
    assert client.get(f"/forecasts/{forecast.pk}/").status_code == 404
    client.force_login(owner)
    page = client.get(f"/forecasts/{forecast.pk}/").content.decode()
    assert "Yes 40%" in page and "unresolved" in page


def test_team_member_sees_what_was_submitted(client: Client, agent: Agent) -> None:
    question = make_question("binary")
    forecast = Forecast.objects.create(
        agent=agent, question=question, received_at=T0, prediction={"probability": 0.5}, rationale="Base rates."
    )
    member = MembershipFactory(team=agent.team).user
    client.force_login(member)
    assert "Base rates." in client.get(f"/forecasts/{forecast.pk}/").content.decode()
