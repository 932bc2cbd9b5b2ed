"""In a real browser: an annotator reviews event cards, then the public hindsight page with its chart."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group

from grading.models import EventReview, HindsightGraph
from grading.services import event_review, hindsight_build
from ingestion.models import Market, PricePoint
from tests.browser import login, screenshot
from tests.factories import UserFactory
from tests.grading.corpus import T0, make_corpus, make_question, resolve

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_review_flow_and_public_page(browser_page: Any, live_server: Any, staff: Any) -> None:
    page = browser_page
    market = Market.objects.create(platform=Market.Platform.SAMPLE, external_id="artemis", title="Artemis budget")
    for day, p in ((0, 0.35), (15, 0.5), (30, 0.62), (45, 0.78), (58, 0.95)):
        PricePoint.objects.create(market=market, outcome="Yes", time=T0 + timedelta(days=day), probability=p)
    question = make_question(market=market)
    make_corpus()
    resolve(question)
    graph = hindsight_build(question_id=question.pk, builder="offline")
    assert graph is not None
    annie = UserFactory(username="annie")
    annie.groups.add(Group.objects.get_or_create(name="annotators")[0])
    events = list(graph.events.filter(is_outcome=False).order_by("occurred_on", "id"))

    login(page, "annie")
    page.goto("/hindsight/review/")
    page.get_by_role("link", name=question.title).click()
    page.wait_for_url(f"**/hindsight/review/{question.pk}/")
    assert page.get_by_text("offline-built (deterministic, no LLM)").is_visible()

    # Approve the first card.
    card = page.locator(f"#event-{events[0].pk}")
    card.get_by_role("radio", name="Approve", exact=True).check()
    card.get_by_role("button", name="Save decision").click()
    page.wait_for_load_state()
    assert page.locator(f"#event-{events[0].pk} .status").inner_text() == "Approved"

    # Rejecting without a reason shows the error beside the card; with a reason it sticks.
    card = page.locator(f"#event-{events[1].pk}")
    card.get_by_role("radio", name="Reject", exact=True).check()
    card.get_by_role("button", name="Save decision").click()
    page.wait_for_load_state()
    card = page.locator(f"#event-{events[1].pk}")
    assert "A rejection needs one of the reasons" in card.inner_text()
    card.get_by_role("radio", name="Reject", exact=True).check()
    card.get_by_label("Reject reason", exact=True).select_option("Duplicate")
    card.get_by_role("button", name="Save decision").click()
    page.wait_for_load_state()
    assert page.locator(f"#event-{events[1].pk} .status").inner_text() == "Rejected"

    # Revise the third card's title and date.
    card = page.locator(f"#event-{events[2].pk}")
    card.get_by_role("radio", name="Revise", exact=True).check()
    card.get_by_label("Revised title", exact=True).fill("Treasury confirms room for the lunar budget")
    card.get_by_label("Revised date", exact=True).fill("2026-01-15")
    card.get_by_role("button", name="Save decision").click()
    page.wait_for_load_state()
    assert "Treasury confirms room for the lunar budget" in page.locator(f"#event-{events[2].pk} h3").inner_text()
    assert EventReview.objects.filter(reviewer=annie).count() == 3

    # A second reviewer on shared events: the page shows agreement.
    event_review(event=events[0], reviewer=staff, decision="approve")
    # Same decision, different reason: a disagreement, and the event stays rejected.
    event_review(event=events[1], reviewer=staff, decision="reject", reason="Noise")
    page.reload()
    agreement = page.locator("table.agreement")
    assert "annie & staff" in agreement.inner_text() and "50.0%" in agreement.inner_text()
    screenshot(page, "hindsight-review")

    # Public page: outcome, builder label, chart with price line and its text alternative.
    page.goto(f"/hindsight/questions/{question.pk}/")
    assert page.locator(".outcome").inner_text() == "Yes"
    assert page.get_by_text("Offline-built (deterministic, no LLM)").first.is_visible()
    chart = page.locator("svg.pressure-chart")
    assert chart.is_visible() and chart.get_attribute("role") == "img"
    assert page.locator("svg.pressure-chart polyline.price-line").count() == 1
    assert page.locator("svg.pressure-chart circle.event-dot").count() == len(events) - 1  # one rejected
    assert (
        "Cumulative causal pressure" in page.locator("figcaption#pressure-caption").inner_text()
        or "P" in page.locator("figcaption#pressure-caption").inner_text()
    )
    assert page.locator("table.pressure-table tbody tr").count() == len(events) - 1
    assert "rejected by review" in page.locator(".timeline").inner_text()
    screenshot(page, "hindsight-public")
    assert HindsightGraph.objects.get(pk=graph.pk).is_current
