"""The site's URLs plus views that fail on purpose, for the error-page tests."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import path

from config.urls import handler404, handler500
from config.urls import urlpatterns as site_urlpatterns


def _fail(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("deliberate failure for the error-page tests")


urlpatterns = [
    path("api/v1/failing/", _fail),
    path("failing/", _fail),
    *site_urlpatterns,
]

__all__ = ["handler404", "handler500", "urlpatterns"]
