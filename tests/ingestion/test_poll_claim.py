"""A source is claimed with a conditional UPDATE: a duplicate or concurrent poll does nothing,
a claim older than 10 minutes (dead worker) can be taken over, and the claim is released."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ingestion.models import Article, Source
from ingestion.services.sources import source_poll
from ingestion.tasks import poll_source
from tests.ingestion.conftest import NOW

pytestmark = pytest.mark.dual_db  # also run on SQLite by scripts/test.sh


def test_claimed_source_is_left_alone(feed_source, fake_server) -> None:
    source = feed_source("/f", fixture="feeds/rss10_spec_example.rdf", claimed_at=NOW - timedelta(minutes=3))
    report = source_poll(source_id=source.pk, now=NOW)
    assert report.busy and report.added == 0 and report.error == ""
    assert fake_server.requests == []
    source.refresh_from_db()
    assert source.claimed_at == NOW - timedelta(minutes=3)  # not released by someone else
    assert source.last_attempt_at is None


def test_stale_claim_is_taken_over(feed_source) -> None:
    source = feed_source("/f", fixture="feeds/rss10_spec_example.rdf", claimed_at=NOW - timedelta(minutes=11))
    report = source_poll(source_id=source.pk, now=NOW)
    assert (report.busy, report.added) == (False, 2)
    source.refresh_from_db()
    assert source.claimed_at is None


def test_claim_released_after_failure(feed_source) -> None:
    source = feed_source("/missing")  # 404
    assert source_poll(source_id=source.pk, now=NOW).error
    assert Source.objects.get(pk=source.pk).claimed_at is None


def test_duplicate_task_delivery_does_nothing(feed_source, fake_server) -> None:
    source = feed_source("/f", fixture="feeds/rss10_spec_example.rdf")
    poll_source.delay(source.pk)
    poll_source.delay(source.pk)  # same task delivered twice: the source is no longer due
    assert len(fake_server.requests_to("/f")) == 1
    assert Article.objects.count() == 2


def test_disabled_source_is_not_polled_unless_asked(feed_source, fake_server) -> None:
    source = feed_source("/f", fixture="feeds/rss10_spec_example.rdf", enabled=False)
    assert source_poll(source_id=source.pk, now=NOW).error == "source is disabled"
    assert source_poll(source_id=source.pk, now=NOW, include_disabled=True).added == 2


def test_unknown_source_id(db) -> None:
    assert source_poll(source_id=999_999, now=NOW).error == "no source with id 999999"
