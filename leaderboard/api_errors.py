"""JSON errors with a machine-readable code and a message naming the field."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from leaderboard.outage import outage_message
from leaderboard.throttling import ServiceUnavailable

logger = logging.getLogger(__name__)


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state."
    default_code = "conflict"


def _flatten(detail: Any, prefix: str = "") -> list[dict[str, str]]:
    errors: list[dict[str, str]] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if key == "non_field_errors":
                name = prefix or "non_field_errors"
            errors.extend(_flatten(value, name))
    elif isinstance(detail, list):
        if all(not isinstance(v, (dict, list)) for v in detail):
            for v in detail:
                errors.append({"field": prefix, "message": str(v), "code": getattr(v, "code", "invalid")})
        else:
            for i, v in enumerate(detail):
                errors.extend(_flatten(v, f"{prefix}[{i}]" if prefix else f"[{i}]"))
    else:
        errors.append({"field": prefix, "message": str(detail), "code": getattr(detail, "code", "invalid")})
    return errors


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    # Redis or the database unreachable: 503 with Retry-After, never a 500.
    unavailable = outage_message(exc)
    if unavailable is not None:
        request = context.get("request")
        logger.warning("%s (%s: %s)", unavailable, request.path if request is not None else "-", exc)
        exc = ServiceUnavailable(unavailable)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        fields = _flatten(exc.detail)
        response.data = {
            "code": "invalid",
            "message": "; ".join(f"{e['field']}: {e['message']}" if e["field"] else e["message"] for e in fields),
            "errors": fields,
        }
    else:
        detail = getattr(exc, "detail", str(exc))
        code = detail.code if hasattr(detail, "code") else getattr(exc, "default_code", "error")
        response.data = {"code": code, "message": str(detail)}
    return response
