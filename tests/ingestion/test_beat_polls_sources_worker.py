"""The beat-scheduled poll runs through a real Celery worker (with embedded beat) and articles
appear in the database."""

from __future__ import annotations

import pytest

from ingestion.models import Article, Source
from tests.celery_worker import running_worker, wait_until
from tests.factories import SourceFactory


@pytest.mark.celery_worker
def test_beat_polls_due_sources_on_a_real_worker(transactional_db, fake_server, monkeypatch) -> None:
    # Every periodic task becomes due within seconds inside the worker.
    monkeypatch.setenv("HINDSIGHT_FAST_BEAT", "1")
    fake_server.add_fixture("/world.xml", "feeds/rss2sample.xml", content_type="application/rss+xml")
    fake_server.add_json("/down", {"error": "boom"}, status=500)
    good = SourceFactory(kind=Source.Kind.RSS, url=fake_server.url("/world.xml"))
    broken = SourceFactory(kind=Source.Kind.RSS, url=fake_server.url("/down"))
    with running_worker(queues="ingest", beat=True):
        assert wait_until(lambda: Article.objects.filter(source=good).count() == 4, timeout=90)
        assert wait_until(lambda: Source.objects.get(pk=broken.pk).consecutive_failures >= 1, timeout=30)
    good.refresh_from_db()
    assert good.last_success_at is not None and good.claimed_at is None
    assert "HTTP 500" in Source.objects.get(pk=broken.pk).last_error
    # Polled once: the next attempt is a poll interval away, so later beats left it alone.
    assert len(fake_server.requests_to("/world.xml")) == 1
