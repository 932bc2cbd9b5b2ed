"""Pieces shared by the agent API views: permission, service-error mapping, pagination, bounds."""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import inline_serializer
from rest_framework import exceptions, permissions, serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.api_errors import Conflict, _flatten
from leaderboard.authentication import request_agent
from leaderboard.schema import MAX_ID
from leaderboard.services.errors import ForecastConflict, NotFound, ServiceError


class IsAgent(permissions.BasePermission):
    message = "This endpoint needs an agent API token: send 'Authorization: Token <key>'."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return request_agent(request) is not None


def api_exception(exc: ServiceError) -> exceptions.APIException:
    """The DRF exception for a service error (404 / 409)."""
    if isinstance(exc, NotFound):
        return exceptions.NotFound(exc.message, code="not_found")
    if isinstance(exc, ForecastConflict):
        return Conflict(exc.message, code="conflict")
    return exceptions.APIException(exc.message)


def error_body(exc: Exception) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON error) in the same shape the exception handler gives whole requests."""
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    if isinstance(exc, exceptions.ValidationError):
        fields = _flatten(exc.detail)
        message = "; ".join(f"{e['field']}: {e['message']}" if e["field"] else e["message"] for e in fields)
        return status.HTTP_400_BAD_REQUEST, {"code": "invalid", "message": message, "errors": fields}
    if isinstance(exc, NotFound):
        return status.HTTP_404_NOT_FOUND, {"code": exc.code, "message": exc.message, "field": exc.field}
    if isinstance(exc, ForecastConflict):
        return status.HTTP_409_CONFLICT, {"code": exc.code, "message": exc.message, "field": exc.field}
    raise exc


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    errors = serializers.ListField(child=serializers.DictField(), required=False)  # type: ignore[assignment]


# Every list's page size and offset: a larger limit is refused (400), not silently cut down, so that
# what the schema says and what the server does agree.
LIST_DEFAULT_LIMIT = 50
LIST_MAX_LIMIT = 200
MAX_OFFSET = 1_000_000_000


class StrictIntegerField(serializers.IntegerField):
    """An integer as the schema's ``type: integer`` says: digits in a query string, or a JSON number
    with no fraction. DRF alone also takes ``"0.0"``, ``"7."`` or ``" 7 "`` and reads them as 0 or 7."""

    _DIGITS = re.compile(r"-?[0-9]+")

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or (isinstance(data, str) and not self._DIGITS.fullmatch(data)):
            self.fail("invalid")
        return super().to_internal_value(data)  # type: ignore[no-any-return]


class ClosedInputSerializer(serializers.Serializer):
    """A JSON body holding only the documented fields: an unknown field is refused (400, each one
    named), and the published schema says so (``additionalProperties: false``, see
    ``leaderboard.schema.ClosedInputSerializerExtension``)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                allowed = ", ".join(self.fields)
                raise exceptions.ValidationError({k: [f"unknown field; allowed: {allowed}"] for k in unknown})
        return super().to_internal_value(data)


def limit_field(*, default: int = LIST_DEFAULT_LIMIT, maximum: int = LIST_MAX_LIMIT) -> serializers.IntegerField:
    return StrictIntegerField(
        required=False,
        default=default,
        min_value=1,
        max_value=maximum,
        help_text=f"Items per page, 1 to {maximum} (default {default}); a larger value is refused.",
    )


def offset_field() -> serializers.IntegerField:
    return StrictIntegerField(required=False, default=0, min_value=0, max_value=MAX_OFFSET, help_text="Items to skip.")


def id_field(help_text: str, **kwargs: Any) -> serializers.IntegerField:
    return StrictIntegerField(min_value=1, max_value=MAX_ID, help_text=help_text, **kwargs)


_CANONICAL_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


class SessionIdField(serializers.UUIDField):
    """A replay session id written as the API writes it (8-4-4-4-12 hex digits), as the schema's
    ``format: uuid`` says; DRF alone would also take 32 bare digits, braces or a urn: prefix."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str) or not _CANONICAL_UUID.fullmatch(data):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


class PageQuery(serializers.Serializer):
    """The query parameters of every paginated list (also its OpenAPI description)."""

    limit = limit_field()
    offset = offset_field()


class ApiPagination(LimitOffsetPagination):
    """DRF's limit/offset pages, with out-of-range or non-numeric values refused rather than ignored."""

    default_limit = LIST_DEFAULT_LIMIT
    max_limit = LIST_MAX_LIMIT

    def _page(self, request: Request) -> dict[str, int]:
        params = PageQuery(data=request.query_params)
        params.is_valid(raise_exception=True)
        return params.validated_data  # type: ignore[return-value]

    def get_limit(self, request: Request) -> int:
        return self._page(request)["limit"]

    def get_offset(self, request: Request) -> int:
        return self._page(request)["offset"]


def page_of(item_serializer: Any, name: str) -> Any:
    """The OpenAPI description of a page of ``item_serializer`` items."""
    return inline_serializer(
        name=name,
        fields={
            "count": serializers.IntegerField(min_value=0),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item_serializer(many=True),
        },
    )


def paginated(
    *,
    queryset: Any,
    serializer_class: type[serializers.Serializer],
    request: Request,
    view: APIView,
    context: Any = None,
) -> Response:
    paginator = ApiPagination()
    page: list[Any] | None = paginator.paginate_queryset(queryset, request, view=view)
    assert page is not None
    ctx = {"request": request, **(context(page) if callable(context) else (context or {}))}
    return paginator.get_paginated_response(serializer_class(page, many=True, context=ctx).data)
