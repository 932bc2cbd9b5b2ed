"""Staff pages of the ingestion app."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver

app_name = "ingestion"

urlpatterns: list[URLPattern | URLResolver] = []
