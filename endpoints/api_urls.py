"""/api/v1/ routes of the endpoints app."""

from __future__ import annotations

from django.urls import URLPattern, path

from endpoints import apis

urlpatterns: list[URLPattern] = [
    path("deliveries/", apis.DeliveryListRequestApi.as_view(), name="api-deliveries"),
]
