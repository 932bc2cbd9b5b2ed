"""Model fields of the ingestion app."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg.types.json import Json, Jsonb


class PayloadJSONField(models.JSONField):  # type: ignore[type-arg]
    """A JSON document kept as a record of what a platform sent and never searched inside.

    On PostgreSQL the column is ``json`` (the text, checked for syntax), not ``jsonb``: building
    jsonb's binary tree made the server's share of writing a market row twice as expensive
    (5,000 Polymarket rows: 0.11 s of server time as jsonb, 0.065 s as json), for the key and
    containment lookups that nothing runs on these payloads. Those lookups (``raw__key``,
    ``raw__contains``) are therefore not available on PostgreSQL. Reading and writing through
    the ORM behave as ``JSONField`` does; on other databases it is a ``JSONField``.
    """

    def db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        if connection.vendor == "postgresql":
            return "json"
        return super().db_type(connection)

    def get_db_prep_value(self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False) -> Any:
        adapted = super().get_db_prep_value(value, connection, prepared)
        if connection.vendor == "postgresql" and isinstance(adapted, Jsonb):
            # Sent as json, so the server does not build a jsonb value only to turn it back.
            return Json(adapted.obj, dumps=adapted.dumps)
        return adapted

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Any:
        if connection.vendor == "postgresql":
            # psycopg decodes the json type itself (Django reads only jsonb as text), so a JSON
            # string is already a str here and must not be decoded twice.
            return value
        return super().from_db_value(value, expression, connection)
