"""In a real browser: an annotator reviews event cards, then the public hindsight page with its chart."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from grading.models import EventReview, HindsightGraph
from grading.review_services import event_review
from grading.services import hindsight_build
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

    # Approve the first row with a click: saved inline, no reload.
    page.evaluate("window.__sameDocument = true")
    row = page.locator(f"#event-{events[0].pk}")
    row.get_by_role("button", name="Approve").click()
    expect(row.locator(".status")).to_have_text("Approved")

    # Rejecting without a reason shows the error in the row; with a reason (keyboard: r, pick, Enter) it sticks.
    row = page.locator(f"#event-{events[1].pk}")
    row.get_by_role("button", name="Reject").click()
    expect(row.locator(".row-errors")).to_contain_text("A rejection needs one of the reasons")
    row.click()
    page.keyboard.press("r")
    row.get_by_label("Reject reason", exact=True).select_option("Duplicate")
    row.get_by_label("Reject reason", exact=True).press("Enter")
    expect(row.locator(".status")).to_have_text("Rejected")

    # The next row is active: "a" approves it from the keyboard.
    page.keyboard.press("a")
    expect(page.locator(f"#event-{events[2].pk} .status")).to_have_text("Approved")

    # Revise the fourth row's title and date ("e" opens the fields).
    row = page.locator(f"#event-{events[3].pk}")
    row.click()
    page.keyboard.press("e")
    row.get_by_label("Revised title", exact=True).fill("Treasury confirms room for the lunar budget")
    row.get_by_label("Revised date", exact=True).fill("2026-01-15")
    row.get_by_role("button", name="Save revision").click()
    expect(row.locator(".status")).to_have_text("Revised")
    assert "Treasury confirms room for the lunar budget" in row.locator(".event-title").inner_text()
    assert page.evaluate("window.__sameDocument") is True  # every decision without a reload
    assert EventReview.objects.filter(reviewer=annie).count() == 4
    screenshot(page, "hindsight-review-inline")

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

    # The drawn graph: every event a node, every link an edge, key events marked; pan and zoom.
    page.locator("#graph canvas").first.wait_for()
    counts = page.evaluate(
        "({nodes: hindsightGraph.nodes('.event').length, edges: hindsightGraph.edges().length,"
        " key: hindsightGraph.nodes('.key').length, outcome: hindsightGraph.nodes('.outcome').length})"
    )
    assert counts["nodes"] == graph.events.count() and counts["edges"] == graph.links.count()
    assert counts["key"] >= 1 and counts["outcome"] == 1
    before = page.evaluate("hindsightGraph.zoom()")
    page.get_by_role("button", name="Zoom in").click()
    assert page.evaluate("hindsightGraph.zoom()") > before
    page.get_by_role("button", name="Fit").click()
    page.locator("#graph-section").screenshot(
        path=str(screenshot(page, "hindsight-public").with_name("hindsight-graph.png"))
    )


def test_staff_add_an_archive_item_the_builder_missed(browser_page: Any, live_server: Any, staff: Any) -> None:
    from tests.factories import ArticleFactory

    page = browser_page
    question = make_question()
    make_corpus()
    resolve(question)
    graph = hindsight_build(question_id=question.pk, builder="offline")
    assert graph is not None
    ArticleFactory(
        url="https://herald.example.org/missed/2",
        title="Fishing union backs the Artemis lunar budget after a port deal",
        summary="The fishing union backed the budget.",
        published_at=T0 + timedelta(days=33),
    )
    login(page, staff.username)
    page.goto(f"/hindsight/review/{question.pk}/")
    page.get_by_label("Find archive items").fill("fishing union")
    page.get_by_role("button", name="Find").click()
    table = page.get_by_role("table", name="Archive items to add")
    expect(table).to_contain_text("Fishing union backs the Artemis lunar budget")
    table.get_by_label("Direction").select_option("Positive")
    table.get_by_role("button", name="Add").click()
    expect(page.locator(".messages")).to_contain_text("Added: Fishing union backs the Artemis lunar budget")
    expect(page.locator("table[aria-labelledby=events-h]")).to_contain_text("Fishing union backs")
    screenshot(page, "review-add-item")
    assert graph.events.filter(title__startswith="Fishing union", added_by=staff).exists()
