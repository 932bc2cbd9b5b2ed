"""Errors: the API's JSON error ({code, message, errors}) as exceptions, one class per HTTP status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class HindsightError(Exception):
    """Anything this client raises on purpose."""


class TransportError(HindsightError):
    """The server could not be reached (after the retries that were safe to make)."""


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str
    code: str


class ApiError(HindsightError):
    """An error answer from the API: its HTTP status, machine-readable code and message."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        errors: list[FieldError] | None = None,
        field: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors or []
        self.field = field
        self.body = body

    @classmethod
    def from_json(cls, status: int, body: Any) -> ApiError:
        """The exception for an error body (also a batch item's ``error``)."""
        data = body if isinstance(body, dict) else {}
        code = str(data.get("code") or "error")
        message = str(data.get("message") or body or f"HTTP {status}")
        errors = [
            FieldError(field=str(e.get("field", "")), message=str(e.get("message", "")), code=str(e.get("code", "")))
            for e in data.get("errors") or []
            if isinstance(e, dict)
        ]
        kind = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
        return kind(status, code, message, errors=errors, field=data.get("field") or None, body=body)


class InvalidRequest(ApiError):
    """400: the body or a parameter is invalid; ``errors`` names every invalid field."""


class Unauthorized(ApiError):
    """401: no token, or an unknown or revoked one."""


class Forbidden(ApiError):
    """403: the token is valid but may not do this now; e.g. evidence as of now while one of your
    replay sessions is open (the message names the session: forecast in it or close it first)."""


class NotFound(ApiError):
    """404: unknown, someone else's, or not visible as of the date (evidence)."""


class Conflict(ApiError):
    """409: e.g. the question takes no forecasts now, or an idempotency key reused with another body."""


class RequestTooLarge(ApiError):
    """413: the body is larger than the server accepts."""


class RateLimited(ApiError):
    """429 after the retries: ``retry_after`` is the server's Retry-After in seconds (None if absent)."""

    retry_after: float | None = None


class ServerError(ApiError):
    """5xx: the server failed (it logged the failure)."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: RequestTooLarge,
    429: RateLimited,
}
