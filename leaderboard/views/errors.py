"""Error pages: the API's JSON envelope under /api/, the site's own pages everywhere else.

Django's stock handlers answer an unknown API path (a mistyped endpoint, a stale client) with an
HTML page; an agent's HTTP client expects the same ``{"code", "message"}`` object as every other
API error. Django only calls these with DEBUG off (production, tests).

A failure because the database or Redis is down answers 503 with Retry-After instead of 500: the
API's ``unavailable`` error, or a page saying so (standing alone: with the database down, the site's
base template could not even tell who is signed in)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.views import defaults

from leaderboard.middleware import API_PREFIX
from leaderboard.outage import UNAVAILABLE_RETRY_AFTER_SECONDS, handled_exception, outage_message

API_DOCS_PATH = "/api/docs/"


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX) and not request.path.startswith(API_DOCS_PATH)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(
            {
                "code": "not_found",
                "message": f"No API endpoint at {request.path} ({request.method}); "
                f"the endpoints are listed at {API_DOCS_PATH}.",
            },
            status=404,
        )
    return defaults.page_not_found(request, exception)


def _unavailable(request: HttpRequest, message: str) -> HttpResponse:
    response: HttpResponse
    if _is_api(request):
        response = JsonResponse({"code": "unavailable", "message": message}, status=503)
    else:
        page = loader.get_template("503.html").render(
            {"message": message, "retry_after": UNAVAILABLE_RETRY_AFTER_SECONDS}
        )
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER_SECONDS)
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    unavailable = outage_message(handled_exception())
    if unavailable is not None:
        return _unavailable(request, unavailable)
    if _is_api(request):
        return JsonResponse(
            {"code": "server_error", "message": "The server failed to handle this request; it has been logged."},
            status=500,
        )
    return defaults.server_error(request)
