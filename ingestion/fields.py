"""Model fields of the ingestion app."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.expressions import Func
from django.db.models.lookups import Lookup
from psycopg.types.json import Json, Jsonb


class AsJsonb(Func):
    """A payload column read as ``jsonb`` on PostgreSQL, where it is stored as ``json`` (which
    has no containment, key-existence or equality operators); the column as it is elsewhere."""

    template = "%(expressions)s"

    def __init__(self, expression: Any) -> None:
        super().__init__(expression, output_field=models.JSONField())

    def as_postgresql(self, compiler: Any, connection: BaseDatabaseWrapper, **extra_context: Any) -> Any:
        return self.as_sql(compiler, connection, template="(%(expressions)s)::jsonb", **extra_context)


# JSONField's lookup class -> the same lookup applied to the payload read as jsonb.
_jsonb_lookups: dict[type[Lookup[Any]], type[Lookup[Any]]] = {}


def _lookup_on_jsonb(lookup_class: type[Lookup[Any]]) -> type[Lookup[Any]]:
    on_jsonb = _jsonb_lookups.get(lookup_class)
    if on_jsonb is None:

        def __init__(self: Lookup[Any], lhs: Any, rhs: Any) -> None:
            lookup_class.__init__(self, AsJsonb(lhs), rhs)

        on_jsonb = _jsonb_lookups[lookup_class] = type(lookup_class.__name__, (lookup_class,), {"__init__": __init__})
    return on_jsonb


class PayloadJSONField(models.JSONField):  # type: ignore[type-arg]
    """A JSON document kept as a record of what a platform sent, written every poll, searched rarely.

    On PostgreSQL the column is ``json`` (the text, checked for syntax), not ``jsonb``: building
    jsonb's binary tree made the server's share of writing a market row twice as expensive, a
    price every poll pays for lookups that only people exploring the data run. Those lookups (``raw__key``,
    ``raw__contains``, ``raw__has_key`` and the rest of ``JSONField``'s) convert the stored
    text to jsonb as the query reads it: they work as on ``JSONField`` but use no index, which
    the column does not have anyway. Reading and writing through the ORM behave as
    ``JSONField`` does; on other databases it is a ``JSONField``.
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

    def get_lookup(self, lookup_name: str) -> Any:
        lookup = super().get_lookup(lookup_name)
        # json has IS NULL like any type; every other lookup needs jsonb's operators.
        if lookup is None or lookup_name == "isnull":
            return lookup
        return _lookup_on_jsonb(lookup)

    def get_transform(self, name: str) -> Any:
        transform = super().get_transform(name)
        if transform is None:
            return None
        # The transforms of the jsonb value are JSONField's own, so a chain (raw__a__b) casts once.
        return lambda lhs, *args, **kwargs: transform(AsJsonb(lhs), *args, **kwargs)

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Any:
        if connection.vendor == "postgresql":
            # psycopg decodes the json type itself (Django reads only jsonb as text), so a JSON
            # string is already a str here and must not be decoded twice.
            return value
        return super().from_db_value(value, expression, connection)
