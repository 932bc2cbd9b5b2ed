from __future__ import annotations

from django.apps import AppConfig


class IngestionConfig(AppConfig):
    name = "ingestion"
    verbose_name = "Ingestion: sources, evidence and questions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Pollers register themselves with ingestion.services.sources.register_poller on import;
        # each source kind's module is imported here so workers and commands always see it.
        from ingestion.services import (
            articles,  # noqa: F401  (rss)
            markets,  # noqa: F401  (polymarket, manifold, kalshi)
        )
