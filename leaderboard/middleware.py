"""Refusals of API requests that no view should see: JSON errors rather than HTML pages or 500s.

- 413 for a body larger than ``DATA_UPLOAD_MAX_MEMORY_SIZE``, judged from its Content-Length before
  anything reads it (the servers answer such requests before Django, and close the connection:
  ``config/request_bodies.py``; this covers the site served any other way, such as in tests);
- 400 for a NUL character in the query string, which no text column can store or compare with.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse

from config.request_bodies import too_large_body

API_PREFIX = "/api/"


def _too_large() -> JsonResponse:
    return JsonResponse(too_large_body(settings.DATA_UPLOAD_MAX_MEMORY_SIZE), status=413)


def _nul_in_query(request: HttpRequest) -> JsonResponse | None:
    for name, values in request.GET.lists():
        if "\x00" in name or any("\x00" in value for value in values):
            field = name.replace("\x00", "\\u0000")
            message = "contains a NUL character (\\u0000), which text may not hold"
            return JsonResponse(
                {
                    "code": "invalid",
                    "message": f"{field}: {message}",
                    "errors": [{"field": field, "message": message, "code": "invalid_text"}],
                },
                status=400,
            )
    return None


class ApiRequestGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None:
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit:
                return _too_large()
        return _nul_in_query(request) or self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        # Bodies without a Content-Length are only caught when Django reads them.
        if isinstance(exception, RequestDataTooBig) and request.path.startswith(API_PREFIX):
            return _too_large()
        return None
