"""Facts the ingestion app announces to higher apps (they subscribe; ingestion imports neither).

Receivers must be cheap: they enqueue work with ``transaction.on_commit``. A sweeper in the
leaderboard app re-drives anything a lost announcement missed.
"""

from __future__ import annotations

from django.dispatch import Signal

# A question's resolution changed (resolve, un-resolve, amend or annul): a new Resolution row
# exists. kwargs: question_id: int, resolution_id: int, version: int, kind: str.
resolution_changed = Signal()

# Staff published a replay question's outcome: it may now appear in public tables.
# kwargs: question_id: int.
outcome_published = Signal()
