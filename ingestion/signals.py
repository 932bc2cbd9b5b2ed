"""Facts the ingestion app announces to higher apps (they subscribe; ingestion imports neither).

Receivers must be cheap: they enqueue work with ``transaction.on_commit``. A sweeper in the
leaderboard app re-drives anything a lost announcement missed.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.dispatch import Signal

# A question's resolution changed (resolve, un-resolve, amend or annul): a new Resolution row
# exists. kwargs: question_id: int, resolution_id: int, version: int, kind: str.
resolution_changed = Signal()


@dataclass(frozen=True)
class ResolutionChange:
    """One new Resolution row, as ``resolution_changed`` describes it."""

    question_id: int
    resolution_id: int
    version: int
    kind: str


# Many resolutions changed in one transaction (a bulk import): one announcement for all of them,
# so that receivers enqueue their follow-up work per batch, not per question. Each change is
# announced here only, not also by ``resolution_changed``. kwargs: changes: list[ResolutionChange].
resolutions_changed = Signal()

# Staff published a replay question's outcome: it may now appear in public tables.
# kwargs: question_id: int.
outcome_published = Signal()
