from __future__ import annotations

from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard: teams, agents, forecasts and standings"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Announcement receivers; log-in failure counting; the OpenAPI token scheme.
        from . import account_throttle, receivers, schema  # noqa: F401
