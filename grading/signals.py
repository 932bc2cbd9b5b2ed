"""Facts the grading app announces to the leaderboard app.

Receivers must be cheap: they enqueue work with ``transaction.on_commit``.
"""

from __future__ import annotations

from django.dispatch import Signal

# A hindsight reference (graph) became current for a question, or a review decision changed
# which events count. kwargs: question_id: int, graph_id: int | None, version: int | None.
reference_changed = Signal()
