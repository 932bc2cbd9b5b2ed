"""Rebuild every materialised leaderboard view from the current grades."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from leaderboard.services.standings import standings_rebuild


class Command(BaseCommand):
    help = (
        "Recompute all Standing rows (ranks, bootstrap intervals, baselines, difficulty-adjusted, peer and "
        "time-averaged scores) and the question difficulties from current grades."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-bootstrap", action="store_true", help="Skip the Brier intervals (faster; bounds left empty)."
        )
        parser.add_argument(
            "--no-difficulty",
            action="store_true",
            help="Skip the fixed-effects fit (no difficulty-adjusted Brier; views rank on Brier).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = standings_rebuild(bootstrap=not options["no_bootstrap"], difficulty=not options["no_difficulty"])
        except DatabaseError as exc:
            raise CommandError(f"could not rebuild standings: {exc}".splitlines()[0]) from exc
        self.stdout.write(
            f"Rebuilt standings: {result.views} views, {result.rows} rows from {result.grades} grades "
            f"in {result.seconds:.2f}s."
        )
