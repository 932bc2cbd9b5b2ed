"""Open-data exports over real HTTP: documented columns and licence in CSV and JSON, and only
public data (no draft, no unpublished replay outcome, nothing from open questions, nothing private)."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import httpx
import pytest

from ingestion.models import Question
from ingestion.services.questions import question_publish_outcome
from leaderboard.exports import DATASETS
from leaderboard.models import Agent, Forecast
from leaderboard.services.grade_runs import grade_question
from tests.factories import T0, QuestionFactory
from tests.leaderboard.api_support import replay_question
from tests.leaderboard.grading_support import add_forecast, make_question, resolve

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def no_llm(settings: Any) -> None:
    settings.LLM_MODEL = ""


def _csv(http: httpx.Client, name: str) -> list[dict[str, str]]:
    response = http.get(f"/data/{name}.csv")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert f"hindsight-{name}-" in response.headers["content-disposition"]
    return list(csv.DictReader(io.StringIO(response.text)))


def test_datasets_are_public_data_only(http: httpx.Client, agent: Agent) -> None:
    live = make_question("relation", title="Relations question")
    add_forecast(agent, live, {"relations": {"04": ["042"]}})
    resolve(live, {"relations": {"04": ["042"]}})
    grade_question(question_id=live.pk)
    open_q = make_question("binary", title="Still open question", close_at=T0 + timedelta(days=3650))
    Forecast.objects.create(
        agent=agent, question=open_q, received_at=T0, prediction={"probability": 0.3}, rationale="SECRET-RATIONALE"
    )
    draft = QuestionFactory(title="Draft question", status=Question.Status.DRAFT)
    hidden = replay_question("binary", outcome=True, title="Replay with a hidden outcome")
    add_forecast(agent, hidden, {"probability": 0.9})
    grade_question(question_id=hidden.pk)

    questions = _csv(http, "questions")
    titles = {row["title"] for row in questions}
    assert {"Relations question", "Still open question", "Replay with a hidden outcome"} <= titles
    assert draft.title not in titles
    assert [c.name for c in DATASETS["questions"].columns] == list(questions[0].keys())

    resolutions = _csv(http, "resolutions")
    assert {r["question_id"] for r in resolutions} == {str(live.pk)}
    assert resolutions[0]["outcome_text"] == "042 Make a visit"
    forecasts = _csv(http, "forecasts")
    assert {f["question_id"] for f in forecasts} == {str(live.pk)}
    grades = _csv(http, "grades")
    assert {g["question_id"] for g in grades} == {str(live.pk)} and grades[0]["first_level_f1"] == "1.0"
    for name in DATASETS:
        assert "SECRET-RATIONALE" not in http.get(f"/data/{name}.json").text

    question_publish_outcome(question=hidden)
    assert str(hidden.pk) in {r["question_id"] for r in _csv(http, "resolutions")}
    assert str(hidden.pk) in {g["question_id"] for g in _csv(http, "grades")}


def test_json_carries_licence_and_column_descriptions(http: httpx.Client, settings: Any) -> None:
    settings.HINDSIGHT_DATA_LICENCE = "CC BY 4.0"
    make_question("quantity", title="How many?")
    data = http.get("/data/questions.json").json()
    assert data["dataset"] == "questions" and data["licence"] == "CC BY 4.0" and data["generated_at"]
    assert data["columns"]["unit"].startswith("Quantity")
    assert [q["title"] for q in data["questions"]] == ["How many?"] and data["questions"][0]["unit"] == "USD"
    page = http.get("/data/").text
    assert "CC BY 4.0" in page and "source_licence" in page and "/data/grades.csv" in page
    assert http.get("/data/nothing.csv").status_code == 404
