"""/api/v1/ routes. Each API module owns its own views; this file only wires them."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver

urlpatterns: list[URLPattern | URLResolver] = []
