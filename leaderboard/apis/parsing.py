"""The API's only request body parser: JSON, refused whole when it could not be stored as text.

What the database cannot hold (``common.storable``: a NUL, a lone surrogate, nesting beyond
``MAX_JSON_DEPTH``) is a 400 naming where the problem sits, raised before any view sees the body,
so nothing is stored.
"""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser

from common.storable import MAX_JSON_DEPTH, unstorable_part


def check_json_value(data: Any) -> None:
    """Raise a 400 for text that cannot be stored, or for nesting deeper than ``MAX_JSON_DEPTH``."""
    found = unstorable_part(data)
    if found is None:
        return
    if found.too_deep:
        raise exceptions.ParseError(
            f"JSON parse error - {found.path or 'the body'} is nested more than {MAX_JSON_DEPTH} levels deep."
        )
    raise exceptions.ValidationError({found.path or "body": [found.problem]}, code="invalid_text")


class CheckedJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise exceptions.ParseError(
                f"JSON parse error - the body is nested more than {MAX_JSON_DEPTH} levels deep."
            ) from exc
        check_json_value(data)
        return data
