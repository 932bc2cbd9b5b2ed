from __future__ import annotations

from django.apps import AppConfig


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "Grading: hindsight graphs and scoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from grading import receivers  # noqa: F401  (connects the signal receivers)
