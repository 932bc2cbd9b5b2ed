"""The questions list opens on what a newcomer can forecast: open questions, sample world first."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client

from ingestion.models import Question
from tests.factories import T0, QuestionFactory

pytestmark = [pytest.mark.django_db]


def test_default_view_is_open_questions_sample_world_first(client: Client) -> None:
    market = QuestionFactory(
        title="Market closes soonest", origin=Question.Origin.MARKET, close_at=T0 + timedelta(days=400)
    )
    sample = QuestionFactory(
        title="Fictional harbour", origin=Question.Origin.SAMPLE, close_at=T0 + timedelta(days=900)
    )
    QuestionFactory(title="Already resolved", status=Question.Status.RESOLVED)
    page = client.get("/questions/").content.decode()
    assert "Already resolved" not in page
    assert page.index(sample.title) < page.index(market.title)
    assert 'id="default-view"' in page and "Sample world, fictional (1)" in page
    everything = client.get("/questions/?status=any").content.decode()
    assert "Already resolved" in everything and 'id="default-view"' not in everything


def test_filters_and_search(client: Client) -> None:
    QuestionFactory(title="Will the bridge reopen?", type=Question.Type.BINARY)
    target = QuestionFactory(title="How many tonnes of grain?", type=Question.Type.QUANTITY, unit="t")
    page = client.get("/questions/", {"q": "tonnes grain", "type": "quantity"}).content.decode()
    assert target.title in page and "bridge" not in page
    assert target.title in client.get("/questions/", {"q": f"#{target.pk}"}).content.decode()
