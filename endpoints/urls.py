"""Pages of the endpoints app: actions of the endpoint section on an agent's page."""

from __future__ import annotations

from django.urls import path

from endpoints import views

app_name = "endpoints"

_AGENT = "teams/<slug:slug>/agents/<slug:agent_slug>/endpoint"

urlpatterns = [
    path(f"{_AGENT}/register/", views.endpoint_register_view, name="register"),
    path(f"{_AGENT}/update/", views.endpoint_update_view, name="update"),
    path(f"{_AGENT}/rotate/", views.endpoint_rotate_view, name="rotate"),
    path(f"{_AGENT}/pause/", views.endpoint_pause_view, name="pause"),
    path(f"{_AGENT}/remove/", views.endpoint_remove_view, name="remove"),
    path(f"{_AGENT}/deliver/", views.delivery_request_view, name="deliver"),
]
