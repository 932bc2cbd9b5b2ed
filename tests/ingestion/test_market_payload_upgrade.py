"""Upgrading a database whose market payloads were stored before migration 0012 (a ``json``
column on PostgreSQL, ``jsonb`` again after it) keeps every payload as it was."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from ingestion.models import Market

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db(transaction=True)]

BEFORE = ("ingestion", "0011_news_cluster_llm_usage")
AFTER = ("ingestion", "0012_market_raw_jsonb")
PAYLOAD = {"id": "1", "nested": {"é": [1, 2.5, None, True]}, "big": 10**30, "text": '{"not": "decoded"}'}


def migrate(*targets: tuple[str, str]) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(list(targets))


def latest() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def test_payloads_stored_before_the_upgrade_read_back_equal_after_it() -> None:
    migrate(BEFORE)
    try:
        old_market = MigrationExecutor(connection).loader.project_state(BEFORE).apps.get_model("ingestion", "Market")
        old_market.objects.create(platform="polymarket", external_id="m", title="Will it?", raw=PAYLOAD)
        migrate(AFTER)
    finally:
        # Every later migration too, so the tests after this one meet the schema the code expects.
        migrate(*latest())
    market = Market.objects.get(external_id="m")
    assert market.raw == PAYLOAD
    assert Market.objects.filter(raw__nested__é__1=2.5).exists()
