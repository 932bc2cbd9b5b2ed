"""The whole loop on a tiny sample world, PostgreSQL + Redis + a real Celery worker: the standings
must be what the hidden ground truth implies."""

from __future__ import annotations

from typing import Any

import pytest

from grading.models import HindsightEvent
from grading.scoring.text import near_duplicate
from leaderboard.models import Agent, Grade, Standing
from tests.celery_worker import running_worker
from tests.sampleworld.loop import run_loop


def _same_claim_verdicts(agent: Agent) -> list[str]:
    """The verdict on every pair of the agent's current grades whose two titles say the same thing
    (the reference agent restates reports' headlines; the hindsight graph titles them "Update: ...")."""
    verdicts: list[str] = []
    for grade in Grade.objects.filter(forecast__agent=agent, is_current=True).select_related("forecast"):
        titles = {str(e.get("id")): str(e.get("title")) for e in (grade.forecast.graph or {}).get("events", [])}
        pairs = (grade.details.get("reasoning") or {}).get("verdicts") or []
        reference = dict(HindsightEvent.objects.filter(pk__in=[int(p[1]) for p in pairs]).values_list("pk", "title"))
        verdicts += [v for f, r, _, v in pairs if near_duplicate(titles[f], reference[int(r)])]
    return verdicts


def _row(agent: Any) -> Standing:
    return Standing.objects.get(
        agent=agent, track="all", question_type="", domain="", origin="", horizon="", contamination_filter=True
    )


@pytest.mark.django_db(transaction=True)
def test_standings_follow_the_hidden_ground_truth(live_server: Any) -> None:
    with running_worker(queues="default,ingest,grade"):
        result = run_loop(live_server.url)
    rows = {name: _row(agent) for name, agent in result.agents.items()}
    assert {"oracle", "citer", "market-follower", "always-half", "reference-offline"} <= set(rows)
    oracle = rows["oracle"]
    # Handed the true outcome: perfect accuracy, the best Brier score and first on outcome.
    assert oracle.accuracy == pytest.approx(1.0)
    for name, row in rows.items():
        if name != "oracle" and row.brier is not None:
            assert oracle.brier < row.brier, name
    # Citing the reports of the true key events: the best source precision and key-event recall.
    citer = rows["citer"]
    assert citer.source_precision is not None and citer.key_event_recall is not None
    for name, row in rows.items():
        if name == "citer":
            continue
        assert row.source_precision is None or citer.source_precision >= row.source_precision, name
        assert row.key_event_recall is None or citer.key_event_recall >= row.key_event_recall, name
    assert citer.key_event_recall > rows["reference-offline"].key_event_recall * 0.99
    assert citer.source_precision > 0.5
    # The same claim is never refused: the reference agent's events restate the hindsight events'
    # headlines, their descriptions adding a sentence that names the actors again.
    same_claim = _same_claim_verdicts(result.agents["reference-offline"])
    assert same_claim and set(same_claim) <= {"matched", "duplicate"}, same_claim
