"""A ForecastBench round that resolves hundreds of questions starts its follow-up work in batches:
a bounded number of hindsight build tasks and regrade runs (not one of each per question), shown
as progress by the import command, in-process and with a real Celery worker alike."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import time_machine
from celery.signals import before_task_publish
from django.core.management import call_command

import ingestion
from grading.models import GraphBuildAttempt, HindsightBuildRequest
from ingestion.models import Question
from leaderboard.models import Forecast, Grade
from tests.celery_worker import running_worker, wait_until
from tests.factories import AgentFactory

DATA = Path(ingestion.__file__).resolve().parent / "data" / "forecastbench"
QUESTIONS = DATA / "2026-05-10-llm.json"
RESOLUTIONS = DATA / "2026-05-10_resolution_set.json"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
RESOLVED = 756  # resolved rows of the real round that match a question


def run(*paths: Path) -> str:
    out = StringIO()
    with time_machine.travel(NOW, tick=False):
        call_command("import_forecastbench", *[str(p) for p in paths], stdout=out)
    return out.getvalue()


@pytest.mark.dual_db
@pytest.mark.django_db(transaction=True)  # commits, so the follow-up runs inside the command
def test_first_import_builds_in_a_few_tasks_and_regrades_nothing_without_forecasts(
    settings: Any, tasks_run: list[str]
) -> None:
    settings.LLM_MODEL = ""
    output = run(QUESTIONS, RESOLUTIONS)

    chunks = math.ceil(RESOLVED / settings.HINDSIGHT_BUILD_QUESTIONS_PER_TASK)
    assert tasks_run.count("grading.tasks.build_hindsight_batch") == chunks < RESOLVED / 10
    assert "grading.tasks.build_hindsight" not in tasks_run
    assert not [name for name in tasks_run if name.startswith("leaderboard.tasks.regrade")]
    # Every resolved question has its build recorded: nothing was published in these windows.
    assert GraphBuildAttempt.objects.filter(reason="no_articles").count() == RESOLVED
    assert HindsightBuildRequest.objects.exclude(finished_at=None).count() == RESOLVED
    # Progress: questions, resolutions, then the follow-up work, then the report.
    lines = output.splitlines()
    assert lines[-1].endswith("resolutions: 756 added; markets: 176 created, 0 updated; price points: 236 created")
    assert any("resolutions: 756 added" in line for line in lines[:-1])
    # One line for the whole run of batches, their counts added up (not one line per batch).
    built = [line for line in lines if "hindsight graphs for" in line]
    assert built == [
        f"  hindsight graphs for {RESOLVED} resolved questions: 0 built, {RESOLVED} with no article in their window, "
        "0 without a graph"
    ]
    assert "grading: none of the 756 questions (resolved together) has forecasts to regrade" in output


@pytest.mark.dual_db
@pytest.mark.django_db(transaction=True)  # commits, so the follow-up runs inside the command
def test_questions_with_forecasts_are_regraded_in_runs(settings: Any, tasks_run: list[str]) -> None:
    settings.LLM_MODEL = ""
    run(QUESTIONS)  # the question set alone: every question live
    # An agent forecasts on 45 questions that the resolution set resolves.
    targets = list(Question.objects.filter(external_id__in=_resolved_external_ids()).order_by("pk")[:45])
    agent = AgentFactory()
    Forecast.objects.bulk_create(
        Forecast(agent=agent, question=q, received_at=q.open_at + timedelta(days=1), prediction={"probability": 0.6})
        for q in targets
    )
    output = run(QUESTIONS, RESOLUTIONS)

    runs = math.ceil(45 / settings.HINDSIGHT_GRADING_QUESTIONS_PER_RUN)
    assert tasks_run.count("leaderboard.tasks.regrade_questions") == runs
    assert "leaderboard.tasks.regrade_question" not in tasks_run
    assert Grade.objects.filter(is_current=True, forecast__question__in=targets).count() == 45
    assert "grading: regrade sent for 45 of the 45 questions with forecasts (resolved together)" in output


def _resolved_external_ids() -> set[str]:
    rows = json.loads(RESOLUTIONS.read_text(encoding="utf-8"))["resolutions"]
    markets = ("polymarket", "manifold", "infer")
    return {
        f"forecastbench:{r['source']}:{r['id']}" + ("" if r["source"] in markets else f":{r['resolution_date']}")
        for r in rows
        if r["resolved"]
    }


@pytest.mark.celery_worker
def test_a_real_worker_gets_one_build_task_per_chunk(transactional_db: Any, settings: Any) -> None:
    settings.LLM_MODEL = ""
    sent: list[str] = []

    def count(sender: Any = None, **kwargs: Any) -> None:
        sent.append(str(sender))

    before_task_publish.connect(count, weak=False)
    try:
        with running_worker(queues="grade,default"):
            output = run(QUESTIONS, RESOLUTIONS)
            assert wait_until(
                lambda: HindsightBuildRequest.objects.exclude(finished_at=None).count() == RESOLVED, timeout=120
            )
    finally:
        before_task_publish.disconnect(count)
    chunks = math.ceil(RESOLVED / settings.HINDSIGHT_BUILD_QUESTIONS_PER_TASK)
    assert sent.count("grading.tasks.build_hindsight_batch") == chunks
    assert "grading.tasks.build_hindsight" not in sent
    assert not [name for name in sent if name.startswith("leaderboard.tasks.regrade")]
    assert GraphBuildAttempt.objects.filter(reason="no_articles").count() == RESOLVED
    # The worker did the builds: the command only announced them.
    assert "hindsight graphs for" not in output
