"""Question page charts: a multiple-choice market draws one labelled line per option with a table of
every option's price, and the agents' forecast histogram lists only the bins forecast in."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from ingestion.models import Market, PricePoint, Question
from leaderboard.models import Forecast
from tests.factories import T0, AgentFactory, QuestionFactory

pytestmark = pytest.mark.django_db


def test_multiple_choice_market_has_a_line_per_option(client: Any) -> None:
    market = Market.objects.create(platform=Market.Platform.MANIFOLD, external_id="mc", title="Who wins?")
    options = ["Asha Rune", "Bo Lindqvist", "Carmen Ode"]
    for day in range(3):
        for k, option in enumerate(options):
            PricePoint.objects.create(
                market=market, outcome=option, time=T0 + timedelta(days=day), probability=round(0.2 + 0.1 * k, 2)
            )
    question = QuestionFactory(type="multiple_choice", options=options, market=market)
    html = client.get(f"/questions/{question.pk}/").content.decode()
    svg = re.search(r'<svg[^>]*aria-label="Market price of each option.*?</svg>', html, re.DOTALL)
    assert svg is not None
    assert svg.group(0).count("<polyline") == 3
    for option in options:
        assert f"<title>{option}</title>" in svg.group(0) and f">{option}</text>" in svg.group(0)
        assert f'<th class="num">{option}</th>' in html
    assert "0.400" in html  # Carmen Ode's price in the table


def test_histogram_lists_only_the_bins_forecast_in(client: Any) -> None:
    question = QuestionFactory(status=Question.Status.CLOSED, close_at=T0 + timedelta(days=5))
    for p in (0.72, 0.75):
        Forecast.objects.create(
            agent=AgentFactory(), question=question, received_at=T0 + timedelta(days=1), prediction={"probability": p}
        )
    html = client.get(f"/questions/{question.pk}/").content.decode()
    table = re.search(r'<table aria-describedby="dist-caption">(.*?)</table>', html, re.DOTALL)
    assert table is not None
    assert re.findall(r"<tr><td>([\d.-]+)</td><td class=\"num\">(\d+)</td></tr>", table.group(1)) == [("0.7-0.8", "2")]
    assert re.search(r'<svg width="520" height="76"', html)  # as tall as two agents need
