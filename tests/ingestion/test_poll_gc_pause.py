"""A poll runs with Python's cyclic garbage collector paused (it allocates many short-lived
objects and makes no cycles worth collecting early) and always gives it back, whether the poll
succeeds or fails, so a long-lived worker never ends up without it."""

from __future__ import annotations

import gc
from datetime import timedelta

import pytest

from ingestion.services import articles as articles_service
from ingestion.services.sources import source_poll
from tests.ingestion.conftest import NOW
from tests.ingestion.fakeserver import Response
from tests.ingestion.test_poll_rollback import big_feed

pytestmark = pytest.mark.dual_db


def test_the_collector_is_paused_during_a_poll_and_resumes_after_success_and_failure(
    feed_source, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = feed_source("/gc", response=Response(body=big_feed(20)))
    real_insert = articles_service._insert_articles
    seen: list[bool] = []
    failing = True

    def insert(values):
        seen.append(gc.isenabled())
        if failing:
            raise RuntimeError("disk full")
        return real_insert(values)

    monkeypatch.setattr(articles_service, "_insert_articles", insert)
    assert gc.isenabled()
    assert source_poll(source_id=source.pk, now=NOW).error == "unexpected RuntimeError: disk full"
    assert gc.isenabled()

    failing = False
    report = source_poll(source_id=source.pk, now=NOW + timedelta(minutes=5))
    assert (report.error, report.added) == ("", 20)
    assert gc.isenabled()
    assert seen and not any(seen)
