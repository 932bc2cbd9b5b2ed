"""Hindsight's Django project package (lives in the plain folder ``platform/``)."""

from __future__ import annotations

from .celery_app import app as celery_app

__all__ = ("celery_app",)
