"""Model fields that only the migration history still names."""

from __future__ import annotations

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper


class PayloadJSONField(models.JSONField):  # type: ignore[type-arg]
    """``Market.raw`` between migrations 0009 and 0012: a JSONField stored as ``json`` rather
    than ``jsonb`` on PostgreSQL. Migration 0012 turns the column back into ``jsonb``; this class
    stays so that the migrations before it keep their meaning."""

    def db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        if connection.vendor == "postgresql":
            return "json"
        return super().db_type(connection)
