"""Fixtures for the ingestion tests: ``fake_server`` (see tests/ingestion/fakeserver.py) and
helpers to point a feed source at it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ingestion.models import Source
from tests.factories import SourceFactory
from tests.ingestion.fakeserver import FakeServer, Response, fake_server

__all__ = ["NOW", "fake_server", "feed_source"]

NOW = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)


@pytest.fixture
def feed_source(db: Any, fake_server: FakeServer) -> Callable[..., Source]:
    """feed_source("/path", fixture="feeds/x.xml" | response=Response(...) | responses=[...]) -> an
    enabled RSS Source polling that path on the fake server."""

    def make(
        path: str = "/feed.xml",
        *,
        fixture: str | None = None,
        response: Response | None = None,
        responses: list[Any] | None = None,
        content_type: str = "application/rss+xml; charset=utf-8",
        **source_fields: Any,
    ) -> Source:
        if fixture is not None:
            fake_server.add_fixture(path, fixture, content_type=content_type)
        elif response is not None:
            fake_server.add(path, response)
        elif responses:
            fake_server.add(path, *responses)
        source_fields.setdefault("poll_interval", timedelta(minutes=15))
        return SourceFactory(kind=Source.Kind.RSS, url=fake_server.url(path), **source_fields)

    return make
