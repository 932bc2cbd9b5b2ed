"""ForecastBench questions get evidence where the imported news archive covers their window: an agent
in a replay session searches the archive as of its simulated date (the answer, reported later, stays
hidden), the question's page names the archive, and its hindsight graph is built from the archive's
items instead of failing for want of articles."""

from __future__ import annotations

from datetime import datetime
from io import StringIO
from pathlib import Path

import httpx
import pytest
import time_machine
from django.core.management import call_command

from grading.models import GraphBuildAttempt
from grading.services import hindsight_build
from ingestion.models import Question
from ingestion.selectors.archives import question_archives
from ingestion.services.questions import default_window_end
from tests.ingestion.test_import_archive import archive_days, write
from tests.ingestion.test_import_forecastbench import NOW, QUESTIONS, RESOLUTIONS

pytestmark = [
    pytest.mark.dual_db,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("isolated_evidence_log"),
]


@pytest.fixture
def trump_in_china(tmp_path: Path) -> Question:
    with time_machine.travel(NOW, tick=False):
        call_command("import_forecastbench", str(QUESTIONS), str(RESOLUTIONS), stdout=StringIO())
    path = write(tmp_path, archive_days("2026-04-20", "2026-05-16"))
    call_command("import_archive", str(path), "--attribution", "Wikipedia contributors", stdout=StringIO())
    return Question.objects.get(external_id="forecastbench:manifold:OU2hqNZPu0")


def test_a_forecastbench_question_is_searched_and_graphed_on_the_archive(
    trump_in_china: Question, agent_http: httpx.Client
) -> None:
    question = trump_in_china
    assert question.origin == Question.Origin.IMPORTED and question.track == Question.Track.REPLAY
    archives = question_archives(question, window_end=default_window_end(question))
    assert [a.name for a in archives] == ["Wikipedia Portal:Current events"]

    session = agent_http.post("/api/v1/replays/", json={"question": question.pk}).raise_for_status().json()
    t_sim = datetime.fromisoformat(session["simulated_date"])
    found = (
        agent_http.get("/api/v1/evidence/articles/", params={"q": "Beijing", "session": session["id"], "limit": 50})
        .raise_for_status()
        .json()
    )
    assert found["results"], "the archive answers as of the simulated date"
    assert all(datetime.fromisoformat(r["published_at"]) < t_sim for r in found["results"])
    assert not any("Great Hall of the People" in r["title"] for r in found["results"])

    hindsight_build(question_id=question.pk, builder="offline")
    attempt = GraphBuildAttempt.objects.filter(question=question).latest("pk")
    assert attempt.reason != GraphBuildAttempt.Reason.NO_ARTICLES, attempt.error
