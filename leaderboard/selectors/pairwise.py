"""Pairwise confidence for an agent page: how often the agent beats each nearby agent when their
shared questions are resampled (:func:`leaderboard.stats.pairwise.win_share`).

The comparison uses the Brier scores of the questions both agents answered in the default view (all
tracks, contamination filter on). On shared questions the difficulty of each question cancels out
of the difference, so this is also the comparison of their difficulty-adjusted Briers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from leaderboard.models import Agent, Standing
from leaderboard.selectors.grade_tables import load_grade_table
from leaderboard.selectors.standings import view_filter
from leaderboard.stats.pairwise import PAIRWISE_RESAMPLES, win_share
from leaderboard.stats.views import View

NEIGHBOURS: Final = 4  # agents compared above and below the agent in the ranking


# Within this distance of an even split of the resamples, neither agent is called the better one.
INDISTINGUISHABLE_MARGIN = 0.05


@dataclass(frozen=True)
class Pair:
    other: Agent
    other_rank: int | None
    shared: int  # questions both answered
    share: float  # of resamples in which the agent's mean Brier beats the other's (ties count half)
    mean_difference: float  # agent's mean Brier minus the other's on the shared questions

    @property
    def wins(self) -> bool:
        return self.share >= 0.5

    @property
    def indistinguishable(self) -> bool:
        """A tie as a reader sees it: the resamples split about evenly, or the Brier gap rounds to 0.000."""
        return abs(self.share - 0.5) < INDISTINGUISHABLE_MARGIN or round(self.gap, 3) == 0

    @property
    def shown_percent(self) -> int:
        """The share as a reader says it: of resamples won when it wins, lost when it loses."""
        return round(100 * (self.share if self.wins else 1.0 - self.share))

    @property
    def share_percent(self) -> int:
        return round(100 * self.share)

    @property
    def gap(self) -> float:
        return abs(self.mean_difference)

    def as_dict(self) -> dict[str, object]:
        return {
            "agent": self.other.slug,
            "name": self.other.name,
            "rank": self.other_rank,
            "shared_questions": self.shared,
            "win_share": self.share,
            "brier_difference": self.mean_difference,
            "resamples": PAIRWISE_RESAMPLES,
        }


def _neighbours(agent: Agent, view: View, limit: int) -> list[tuple[int, int | None]]:
    """(agent id, rank) of the agents listed near ``agent`` in the view: ranked ones around its rank
    (the top of the table for an unranked agent)."""
    rows = list(
        Standing.objects.filter(view_filter(view), agent__isnull=False, rank__isnull=False)
        .order_by("rank", "agent__name")
        .values_list("agent_id", "rank")
    )
    ids = [a for a, _ in rows]
    at = ids.index(agent.pk) if agent.pk in ids else 0
    lo = max(0, at - limit)
    return [(a, r) for a, r in rows[lo : at + limit + 1] if a != agent.pk]


def pairwise_confidence(*, agent: Agent, others: list[Agent] | None = None, view: View | None = None) -> list[Pair]:
    """The agent against its ranked neighbours (or ``others``), on their shared questions."""
    view = view or View()
    if others is None:
        near = _neighbours(agent, view, NEIGHBOURS)
        ranks = dict(near)
        others = list(Agent.objects.filter(pk__in=list(ranks)))
    else:
        ranks = dict(Standing.objects.filter(view_filter(view), agent__in=others).values_list("agent_id", "rank"))
    if not others:
        return []
    table = load_grade_table(agent_ids=[agent.pk, *(o.pk for o in others)], metrics=("brier",))
    keep = table.mask(view) & ~np.isnan(table.metrics["brier"])
    scores: dict[int, dict[int, float]] = {}
    for a, q, b in zip(
        table.agent[keep].tolist(), table.question[keep].tolist(), table.metrics["brier"][keep].tolist(), strict=True
    ):
        scores.setdefault(a, {})[q] = b
    mine = scores.get(agent.pk, {})
    pairs: list[Pair] = []
    for other in others:
        theirs = scores.get(other.pk, {})
        shared = sorted(set(mine) & set(theirs))
        if not shared:
            continue
        a = np.asarray([mine[q] for q in shared])
        b = np.asarray([theirs[q] for q in shared])
        pairs.append(
            Pair(
                other=other,
                other_rank=ranks.get(other.pk),
                shared=len(shared),
                share=win_share(a, b),
                mean_difference=float(a.mean() - b.mean()),
            )
        )
    pairs.sort(key=lambda p: (p.other_rank is None, p.other_rank or 0, p.other.name))
    return pairs
