"""Full rebuild and incremental update of the materialised standings (database)."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from ingestion.models import Question
from leaderboard.models import Grade, QuestionDifficulty, Standing
from leaderboard.services.standings import standings_rebuild, standings_update_for_questions
from tests.factories import QuestionFactory
from tests.leaderboard.standings_data import World, build_world, grade, resolve

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


VIEW = {"track": "all", "question_type": "", "domain": "", "origin": "", "horizon": "", "contamination_filter": True}


def view_rows(**kw: object) -> dict[str, Standing]:
    base = dict(VIEW)
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


FIELDS = (
    "track",
    "question_type",
    "domain",
    "origin",
    "horizon",
    "contamination_filter",
    "agent_id",
    "baseline",
    "rank",
    "rank_metric",
    "n",
    "brier",
    "brier_adjusted",
    "peer_score",
    "time_brier",
)


def rows_now() -> list[tuple[object, ...]]:
    # the fit converges to 1e-12; nine decimals compare what a reader could ever see
    return sorted(
        (
            tuple(round(v, 9) if isinstance(v, float) else v for v in row)
            for row in Standing.objects.values_list(*FIELDS)
        ),
        key=str,
    )


def test_incremental_update_matches_full_rebuild(settings) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 2
    world = build_world()
    standings_rebuild()
    q = QuestionFactory(title="late", open_at=world.live[-1].open_at + timedelta(days=5), domain="science")
    resolve(q, True, q.open_at + timedelta(days=3))
    grade(world.agents[1], q, 0.99, outcome=True)
    standings_update_for_questions(question_ids=[q.pk])
    incremental = rows_now()
    standings_rebuild()
    assert incremental == rows_now()
    assert view_rows(domain="science")["dull-falcon"].n == 1


def _late_shared_question() -> tuple[World, Question]:
    """The small world, rebuilt, then a new question two agents answered, refreshed incrementally."""
    world = build_world()
    standings_rebuild()
    q = QuestionFactory(title="late shared", open_at=world.live[-1].open_at + timedelta(days=5))
    resolve(q, True, q.open_at + timedelta(days=3))
    grade(world.agents[0], q, 0.7, outcome=True)
    grade(world.agents[1], q, 0.2, outcome=True)
    standings_update_for_questions(question_ids=[q.pk])
    return world, q


def test_incremental_difficulty_of_a_shared_question_is_close_to_the_refit(settings) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 2
    _, q = _late_shared_question()
    estimated = QuestionDifficulty.objects.get(question=q, contamination_filter=True).effect
    incremental = {s.agent_id: (s.rank, s.brier_adjusted) for s in view_rows().values() if s.agent_id}
    standings_rebuild()
    fitted = QuestionDifficulty.objects.get(question=q, contamination_filter=True).effect
    assert estimated == pytest.approx(fitted, abs=0.05)
    # One new question among seven moves every effect a little in the refit (its difficulty joins
    # the average that pins the scale); the ranking does not change.
    for agent_id, (rank, adjusted) in incremental.items():
        refit = Standing.objects.get(agent_id=agent_id, **VIEW)
        assert refit.rank == rank and refit.brier_adjusted == pytest.approx(adjusted, abs=0.05)


def test_incremental_scores_use_the_published_difficulties(settings) -> None:
    settings.HINDSIGHT_MIN_RANKED_N = 2
    world, q = _late_shared_question()
    effects = dict(QuestionDifficulty.objects.filter(contamination_filter=True).values_list("question_id", "effect"))
    sharp = world.agents[0]
    residuals = [
        g.brier - effects[g.forecast.question_id]
        for g in Grade.objects.filter(forecast__agent=sharp, forecast__question__in=[*world.live, q])
    ]
    assert view_rows()["sharp-falcon"].brier_adjusted == pytest.approx(sum(residuals) / len(residuals))
