"""Subscriptions to the announcements of lower apps (DESIGN.md §1: ingestion <- grading <- leaderboard)."""

from __future__ import annotations
