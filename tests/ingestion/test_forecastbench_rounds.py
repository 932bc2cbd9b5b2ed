"""Several ForecastBench rounds in one database: rounds add up in any order, a later round never
undoes an earlier resolution, and a replay outcome stays hidden from agents.

Round A is the real 2026-05-10 round shipped in ingestion/data/forecastbench/, cut to its market
questions (the ones later rounds repeat under the same id); round B is an excerpt of the real
2026-05-24 round (tests/ingestion/fixtures/forecastbench/README.md). B's resolution set, like the
upstream 2026-03-15 one, does not mention ECdCgusP8y, which A resolved.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path
from typing import Any

import httpx
import pytest
import time_machine
from django.core.management import call_command

import ingestion
from ingestion.models import Market, PricePoint, Question, Resolution

DATA = Path(ingestion.__file__).resolve().parent / "data" / "forecastbench"
FIXTURES = Path(__file__).parent / "fixtures" / "forecastbench"
NOW = datetime(2026, 5, 25, 12, 0, tzinfo=UTC)
X_COM = "forecastbench:manifold:ECdCgusP8y"
NAVALNY = "forecastbench:manifold:0ro1dbilJ4pRABnZPNE3"


@pytest.fixture
def rounds(tmp_path: Path) -> dict[str, tuple[Path, Path]]:
    questions = json.loads((DATA / "2026-05-10-llm.json").read_text(encoding="utf-8"))
    resolutions = json.loads((DATA / "2026-05-10_resolution_set.json").read_text(encoding="utf-8"))
    questions["questions"] = [q for q in questions["questions"] if q["source"] == "manifold"]
    kept = {q["id"] for q in questions["questions"]}
    resolutions["resolutions"] = [r for r in resolutions["resolutions"] if r["id"] in kept]
    a_questions, a_resolutions = tmp_path / "2026-05-10-llm.json", tmp_path / "2026-05-10_resolution_set.json"
    a_questions.write_text(json.dumps(questions), encoding="utf-8")
    a_resolutions.write_text(json.dumps(resolutions), encoding="utf-8")
    return {
        "A": (a_questions, a_resolutions),
        "B": (FIXTURES / "2026-05-24-llm.excerpt.json", FIXTURES / "2026-05-24_resolution_set.excerpt.json"),
    }


def run(paths: tuple[Path, Path]) -> str:
    out = StringIO()
    with time_machine.travel(NOW, tick=False):
        call_command("import_forecastbench", *[str(p) for p in paths], stdout=out)
    return out.getvalue()


def state() -> dict[str, Any]:
    """Everything an import decides, without keys and clocks."""
    questions = {
        q.external_id: (
            q.title,
            q.track,
            q.status,
            q.open_at,
            q.close_at,
            q.resolve_by,
            q.background,
            json.dumps(q.attribution, sort_keys=True),
            q.market.external_id if q.market else None,
        )
        for q in Question.objects.select_related("market")
    }
    resolutions = sorted(
        (r.question.external_id, r.version, r.kind, r.outcome, r.resolved_at, r.author_label)
        for r in Resolution.objects.select_related("question")
    )
    markets = {
        m.external_id: (m.title, m.status, m.open_at, m.close_at, json.dumps(m.raw, sort_keys=True))
        for m in Market.objects.all()
    }
    prices = sorted(PricePoint.objects.values_list("market__external_id", "outcome", "time", "probability"))
    return {"questions": questions, "resolutions": resolutions, "markets": markets, "prices": prices}


def wipe() -> None:
    Resolution.objects.all().delete()
    Question.objects.all().delete()
    Market.objects.all().delete()


pytestmark = pytest.mark.dual_db


@pytest.mark.django_db
def test_a_later_round_never_undoes_a_resolution(rounds: dict[str, tuple[Path, Path]]) -> None:
    run(rounds["A"])
    x_com = Question.objects.get(external_id=X_COM)
    assert (x_com.track, x_com.status) == ("replay", "resolved")
    resolved_at = datetime(2026, 6, 29, tzinfo=UTC)
    assert x_com.current_resolution is not None and x_com.current_resolution.outcome is True
    output = run(rounds["B"])
    x_com.refresh_from_db()
    # B lists the question again (frozen later) but its resolution set does not mention it.
    assert (x_com.track, x_com.status, x_com.outcome_published_at) == ("replay", "resolved", None)
    assert x_com.open_at == datetime(2026, 4, 30, tzinfo=UTC) < resolved_at
    assert x_com.close_at == resolved_at
    assert list(x_com.resolutions.values_list("version", "outcome")) == [(1, True)]
    assert x_com.attribution["rounds"] == ["2026-05-10", "2026-05-24"]
    assert x_com.attribution["question_set"] == "2026-05-10-llm.json"
    # Each round's freeze value is its own price point.
    assert list(PricePoint.objects.filter(market=x_com.market).values_list("time", "probability")) == [
        (datetime(2026, 4, 30, tzinfo=UTC), pytest.approx(0.9728697305672981)),
        (datetime(2026, 5, 14, tzinfo=UTC), pytest.approx(0.9669188063983751)),
    ]
    # Metaculus rows are skipped and counted with the reason.
    assert "3 Metaculus questions (its terms forbid use for AI evaluation)" in output
    assert not Question.objects.filter(external_id__startswith="forecastbench:metaculus").exists()


@pytest.mark.django_db
def test_rounds_in_either_order_give_the_same_questions(rounds: dict[str, tuple[Path, Path]]) -> None:
    run(rounds["A"])
    run(rounds["B"])
    a_then_b = state()
    for name in ("A", "B", "A"):
        assert "Nothing changed (already imported)" in run(rounds[name])
    assert state() == a_then_b
    wipe()
    run(rounds["B"])
    navalny = Question.objects.get(external_id=NAVALNY)
    assert navalny.open_at == datetime(2026, 5, 14, tzinfo=UTC)
    assert navalny.title == "Was Alexei Navalny killed [see description]?"
    run(rounds["A"])
    assert state() == a_then_b
    navalny.refresh_from_db()
    # The earlier round opened the question: its freeze and its text are kept.
    assert navalny.open_at == datetime(2026, 4, 30, tzinfo=UTC)
    assert navalny.track == "live"
    assert navalny.attribution["rounds"] == ["2026-05-10", "2026-05-24"]
    assert "Nothing changed (already imported)" in run(rounds["B"])
    assert state() == a_then_b


@pytest.mark.django_db(transaction=True)
def test_a_replay_outcome_stays_hidden_from_agents(
    rounds: dict[str, tuple[Path, Path]], http: httpx.Client, agent_http: httpx.Client
) -> None:
    run(rounds["A"])
    run(rounds["B"])
    x_com = Question.objects.get(external_id=X_COM)
    for client in (http, agent_http):
        body = client.get(f"/api/v1/questions/{x_com.pk}/").raise_for_status().json()
        assert body["track"] == "replay"
        assert body.get("outcome") is None
        assert not body.get("resolutions")
        listed = client.get("/api/v1/questions/", params={"track": "live", "limit": 200}).json()["results"]
        assert x_com.pk not in {q["id"] for q in listed}
