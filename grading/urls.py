"""Hindsight graph pages: public views and the staff review flow."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver

app_name = "grading"

urlpatterns: list[URLPattern | URLResolver] = []
