"""Full rebuild and incremental update of the materialised standings (database)."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from leaderboard.models import Grade, Standing
from leaderboard.services.standings import standings_rebuild, standings_update_for_questions
from tests.factories import QuestionFactory
from tests.leaderboard.standings_data import build_world, grade, resolve

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


def view_rows(**kw: object) -> dict[str, Standing]:
    base = {
        "track": "all",
        "question_type": "",
        "domain": "",
        "origin": "",
        "horizon": "",
        "contamination_filter": True,
    }
    base.update(kw)
    return {
        (s.agent.slug if s.agent else s.baseline): s for s in Standing.objects.filter(**base).select_related("agent")
    }


def test_rebuild_ranks_agents_and_adds_baselines(settings) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 3
    build_world()
    result = standings_rebuild()
    assert result.rows > 0 and result.grades == 18  # the unpublished replay grade is left out
    rows = view_rows()
    assert rows["sharp-falcon"].rank == 1
    assert rows["dull-falcon"].rank == 3  # after the agent without cutoff (live only counts for it)
    assert rows["sharp-falcon"].brier_lo <= rows["sharp-falcon"].brier <= rows["sharp-falcon"].brier_hi
    assert rows["sharp-falcon"].n == 6  # six live; the replay outcome is not published
    assert rows["always_half"].brier == pytest.approx(0.25) and rows["always_half"].rank is None
    assert rows["market"].brier_n == 1
    assert set(view_rows(track="replay")) == set()  # nothing until staff publish the outcome
    assert view_rows(domain="politics")["sharp-falcon"].n == 3  # three live questions


def test_rebuild_is_idempotent_and_command_reports(settings) -> None:
    build_world()
    out = StringIO()
    call_command("rebuild_standings", stdout=out)
    first = sorted(Standing.objects.values_list("track", "domain", "agent_id", "baseline", "rank", "brier_lo"), key=str)
    call_command("rebuild_standings", stdout=out)
    second = sorted(
        Standing.objects.values_list("track", "domain", "agent_id", "baseline", "rank", "brier_lo"), key=str
    )
    assert first == second
    assert "Rebuilt standings" in out.getvalue()


def test_contamination_toggle_and_min_n(settings) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 10
    world = build_world()
    Grade.objects.filter(forecast__agent=world.agents[1], forecast__question=world.live[0]).update(contaminated=True)
    standings_rebuild()
    on, off = view_rows(), view_rows(contamination_filter=False)
    assert on["dull-falcon"].n == 5 and off["dull-falcon"].n == 6
    assert on["sharp-falcon"].provisional and on["sharp-falcon"].rank is None


def test_incremental_update_matches_full_rebuild(settings) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 2
    world = build_world()
    standings_rebuild()
    q = QuestionFactory(title="late", open_at=world.live[-1].open_at + timedelta(days=5), domain="science")
    resolve(q, True, q.open_at + timedelta(days=3))
    grade(world.agents[1], q, 0.99, outcome=True)
    standings_update_for_questions(question_ids=[q.pk])
    fields = (
        "track",
        "question_type",
        "domain",
        "origin",
        "horizon",
        "contamination_filter",
        "agent_id",
        "baseline",
        "rank",
        "n",
        "brier",
    )
    incremental = sorted(Standing.objects.values_list(*fields), key=str)
    standings_rebuild()
    full = sorted(Standing.objects.values_list(*fields), key=str)
    assert incremental == full
    assert view_rows(domain="science")["dull-falcon"].n == 1
