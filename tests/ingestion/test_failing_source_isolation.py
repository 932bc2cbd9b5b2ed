"""The periodic task polls each due source in its own task: one failing source neither stops
nor delays the others."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from ingestion.models import Article, Source
from ingestion.tasks import poll_due_sources
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response

pytestmark = pytest.mark.dual_db  # also run on SQLite by scripts/test.sh


def test_one_failing_source_does_not_stop_the_others(feed_source) -> None:
    good_first = feed_source("/rss20", fixture="feeds/rss2sample.xml", name="A good")
    broken = feed_source("/broken", response=Response(status=500), name="B broken")
    garbled = feed_source("/garbled", fixture="feeds/feedparser/aaa_illformed.xml", name="C garbled")
    good_last = feed_source("/atom", fixture="feeds/youtube_google_atom.xml", name="D good")
    with time_machine.travel(NOW, tick=False):
        assert poll_due_sources.delay().get() == 4  # eager in tests: each poll_source runs inline
    assert Article.objects.filter(source=good_first).count() == 4
    assert Article.objects.filter(source=good_last).count() == 3
    for source in (broken, garbled):
        source.refresh_from_db()
        assert source.consecutive_failures == 1 and source.last_error
        assert source.next_attempt_at > NOW
    for source in (good_first, good_last):
        source.refresh_from_db()
        assert source.last_success_at == NOW and source.next_attempt_at == NOW + timedelta(minutes=15)


def test_only_due_enabled_sources_are_polled(feed_source, fake_server) -> None:
    due = feed_source("/due", fixture="feeds/rss10_spec_example.rdf")
    feed_source("/later", fixture="feeds/rss10_spec_example.rdf", next_attempt_at=NOW + timedelta(minutes=5))
    feed_source("/off", fixture="feeds/rss10_spec_example.rdf", enabled=False)
    feed_source("/busy", fixture="feeds/rss10_spec_example.rdf", claimed_at=NOW - timedelta(minutes=1))
    with time_machine.travel(NOW, tick=False):
        assert poll_due_sources.delay().get() == 1
    assert [r.path for r in fake_server.requests] == ["/due"]
    assert set(Article.objects.values_list("source", flat=True)) == {due.pk}
    assert Source.objects.filter(claimed_at=None).count() == 3
