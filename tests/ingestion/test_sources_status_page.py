"""The sources status page: staff only, one row per source with health and counts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from ingestion.models import Source
from ingestion.services.sources import source_poll
from tests.factories import UserFactory
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response

URL = "/ingestion/sources/"


def test_url_name() -> None:
    assert reverse("ingestion:sources_status") == URL


def test_anonymous_is_sent_to_login(client, db) -> None:
    response = client.get(URL)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_non_staff_is_forbidden(client, db) -> None:
    client.force_login(UserFactory(username="member"))
    assert client.get(URL).status_code == 403


@pytest.mark.django_db
def test_staff_sees_every_source_with_health(client, staff, feed_source) -> None:
    good = feed_source("/good", fixture="feeds/rss2sample.xml", name="World news")
    bad = feed_source("/bad", response=Response(status=429, headers={"Retry-After": "600"}), name="Busy feed")
    feed_source("/off", name="Paused feed", enabled=False)
    Source.objects.create(
        name="Manifold",
        kind=Source.Kind.MANIFOLD,
        url="https://api.manifold.markets/v0",
        poll_interval=timedelta(hours=1),
    )
    source_poll(source_id=good.pk, now=NOW)
    source_poll(source_id=bad.pk, now=NOW)
    client.force_login(staff)
    response = client.get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    rows = {s.name: s for s in response.context["sources"]}
    assert set(rows) == {"World news", "Busy feed", "Paused feed", "Manifold"}
    assert (rows["World news"].article_count, rows["World news"].market_count) == (4, 0)
    assert rows["Busy feed"].consecutive_failures == 1
    assert f'data-source-id="{bad.pk}"' in html
    assert "HTTP 429" in html and "retry after 600s" in html
    assert "2026-03-05 12:00" in html  # last attempt / success
    assert "Feed (RSS, Atom or JSON Feed)" in html and "Manifold (API v0)" in html
    assert "1 failing" in html and "1 disabled" in html
    assert 'id="generation-status"' in html
