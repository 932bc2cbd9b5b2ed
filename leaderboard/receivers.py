"""Subscriptions to the announcements of lower apps (DESIGN.md §1: ingestion <- grading <- leaderboard)."""

from __future__ import annotations

# The evidence access log flushes its buffer when a request finishes; importing the module at
# startup connects that receiver before the first request.
from leaderboard.services import evidence as _evidence_log  # noqa: F401
