"""Facts the grading app announces to the leaderboard app.

Receivers must be cheap: they enqueue work with ``transaction.on_commit``.
"""

from __future__ import annotations

from django.dispatch import Signal

# A hindsight reference (graph) became current for a question, or a review decision changed
# which events count. kwargs: question_id: int, graph_id: int | None, version: int | None.
reference_changed = Signal()

# New hindsight references for several questions at once (a batch of builds after a bulk
# resolution): one announcement for the batch, instead of a ``reference_changed`` per graph.
# kwargs: question_ids: list[int].
references_changed = Signal()
