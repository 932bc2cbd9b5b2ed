"""413 as a JSON error for API bodies larger than DATA_UPLOAD_MAX_MEMORY_SIZE."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse

API_PREFIX = "/api/"


def _too_large() -> JsonResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return JsonResponse(
        {"code": "request_too_large", "message": f"The request body is larger than the limit of {limit} bytes."},
        status=413,
    )


class ApiBodySizeLimitMiddleware:
    """Refuses an oversized API body from its Content-Length before anything reads it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and request.path.startswith(API_PREFIX):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit:
                return _too_large()
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        # Bodies without a Content-Length are only caught when Django reads them.
        if isinstance(exception, RequestDataTooBig) and request.path.startswith(API_PREFIX):
            return _too_large()
        return None
