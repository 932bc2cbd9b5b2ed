"""Pieces shared by the agent API views: permission, service-error mapping, pagination."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions, permissions, serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.api_errors import Conflict, _flatten
from leaderboard.authentication import request_agent
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


def paginated(
    *,
    queryset: Any,
    serializer_class: type[serializers.Serializer],
    request: Request,
    view: APIView,
    context: Any = None,
) -> Response:
    paginator = LimitOffsetPagination()
    page: list[Any] | None = paginator.paginate_queryset(queryset, request, view=view)
    assert page is not None
    ctx = {"request": request, **(context(page) if callable(context) else (context or {}))}
    return paginator.get_paginated_response(serializer_class(page, many=True, context=ctx).data)
