"""Errors raised by leaderboard services; the API maps them to HTTP statuses, the web form to messages.

- ``NotFound`` -> 404 (unknown question, unknown or someone else's replay session)
- ``ForecastConflict`` -> 409 (question not accepting forecasts, idempotency key reused with another body)
- ``django.core.exceptions.ValidationError`` -> 400 (bad body; ``message_dict`` maps field -> messages)
"""

from __future__ import annotations


class ServiceError(Exception):
    code = "error"

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotFound(ServiceError):
    code = "not_found"


class ForecastConflict(ServiceError):
    code = "conflict"
