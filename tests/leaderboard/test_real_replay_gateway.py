"""A real replay question over the real news archive, through the same gateway rules as any replay
question, over real HTTP: the session's simulated date hides every later archive item (the answer
among them), every search and read is logged, and staff publish the outcome with publish_outcome."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import httpx
import pytest
from django.core.management import call_command

from ingestion.models import Article, Question
from leaderboard.models import Agent, EvidenceAccess
from leaderboard.services.evidence import evidence_log_flush
from tests.ingestion.test_import_archive import archive_days, write

QUESTIONS = Path(__file__).resolve().parents[1] / "ingestion" / "fixtures" / "archive" / "real_questions.json"

pytestmark = [
    pytest.mark.dual_db,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("isolated_evidence_log"),
]


@pytest.fixture
def conclave(tmp_path: Path) -> Question:
    path = write(tmp_path, archive_days("2025-04-20", "2025-05-08"))
    call_command("import_archive", str(path), "--attribution", "Wikipedia contributors", stdout=StringIO())
    call_command("load_questions", str(QUESTIONS), stdout=StringIO())
    return Question.objects.get(external_id="test-real:conclave-fourth-ballot")


def test_a_replay_session_on_a_real_question_sees_the_archive_only_before_its_simulated_date(
    conclave: Question, agent: Agent, agent_http: httpx.Client, rival_http: httpx.Client
) -> None:
    assert conclave.origin == Question.Origin.ARCHIVE and conclave.track == Question.Track.REPLAY
    assert sorted(conclave.provenance_articles.values_list("external_id", flat=True)) == [
        "wcep-2025-05-08-004",
        "wcep-2025-05-08-007",
    ]
    session = agent_http.post("/api/v1/replays/", json={"question": conclave.pk}).raise_for_status().json()
    t_sim = datetime.fromisoformat(session["simulated_date"])
    assert datetime(2025, 4, 30, tzinfo=UTC) < t_sim < datetime(2025, 5, 1, tzinfo=UTC)

    found = (
        agent_http.get("/api/v1/evidence/articles/", params={"q": "conclave", "session": session["id"], "limit": 50})
        .raise_for_status()
        .json()
    )
    titles = [r["title"] for r in found["results"]]
    assert any("conclave will take place starting on May 7" in t for t in titles)
    assert all(datetime.fromisoformat(r["published_at"]) < t_sim for r in found["results"])
    assert all(r["source"] == "Wikipedia Portal:Current events" for r in found["results"])
    elected = Article.objects.get(external_id="wcep-2025-05-08-007")
    assert (
        agent_http.get(f"/api/v1/evidence/articles/{elected.pk}/", params={"session": session["id"]}).status_code == 404
    )
    announced = next(r for r in found["results"] if "May 7" in r["title"])
    read = agent_http.get(f"/api/v1/evidence/articles/{announced['id']}/", params={"session": session["id"]})
    article = read.raise_for_status().json()
    assert "Sistine Chapel" in article["body"]
    # What an agent needs to reuse the text: the item's licence and whom to credit.
    assert (article["license"], article["attribution"]) == ("CC-BY-SA-4.0", "Wikipedia contributors")
    # The archive's own story heading, kept on import: a thread an agent can follow.
    assert article["topic_path"] == Article.objects.get(pk=announced["id"]).extra["topic_path"]
    assert article["topic_path"] and all(isinstance(t, str) for t in article["topic_path"])

    evidence_log_flush()
    logged = EvidenceAccess.objects.filter(agent=agent, session_id=session["id"])
    # The search and the read it served; the refused read of the answer served nothing.
    assert sorted(logged.values_list("kind", flat=True)) == ["read", "search"]
    assert logged.get(kind="read").article_id == announced["id"]
    assert all(a.as_of == t_sim for a in logged)

    agent_http.post(
        "/api/v1/forecasts/",
        json={"question": conclave.pk, "session": session["id"], "prediction": {"probability": 0.8}},
    ).raise_for_status()
    out = StringIO()
    call_command("publish_outcome", "test-real:conclave-fourth-ballot", stdout=out)
    conclave.refresh_from_db()
    assert conclave.outcome_published_at is not None
    assert rival_http.post("/api/v1/replays/", json={"question": conclave.pk}).status_code == 409
    public = agent_http.get(f"/api/v1/questions/{conclave.pk}/").raise_for_status().json()
    assert public["outcome_revealed"] is True
