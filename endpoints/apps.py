from __future__ import annotations

from django.apps import AppConfig


class EndpointsConfig(AppConfig):
    name = "endpoints"
    verbose_name = "Agent endpoints: questions the platform delivers to agents over HTTPS"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import receivers  # noqa: F401  (a live question that opens is offered to endpoints)
