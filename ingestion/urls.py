"""Staff pages of the ingestion app."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from ingestion import views, views_curation

app_name = "ingestion"

urlpatterns: list[URLPattern | URLResolver] = [
    path("sources/", views.sources_status, name="sources_status"),
    path("curation/", views_curation.curation_queue, name="curation_queue"),
    path("curation/<int:pk>/edit/", views_curation.curation_edit, name="curation_edit"),
    path("curation/<int:pk>/approve/", views_curation.curation_approve, name="curation_approve"),
    path("curation/<int:pk>/reject/", views_curation.curation_reject, name="curation_reject"),
]
