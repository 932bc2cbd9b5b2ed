from __future__ import annotations

from django.apps import AppConfig


class IngestionConfig(AppConfig):
    name = "ingestion"
    verbose_name = "Ingestion: sources, evidence and questions"
    default_auto_field = "django.db.models.BigAutoField"
