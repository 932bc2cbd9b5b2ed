"""The review queue in words a reviewer reads, the outcome event kept out of rejection, and a
390 px phone: the decision buttons on screen, and the hindsight graph drawn at a readable size."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from grading.models import EventReview, HindsightEvent, HindsightGraph
from grading.services import event_review, hindsight_build
from tests.browser import login, screenshot
from tests.grading.corpus import make_corpus, make_question, resolve

PHONE = {"width": 390, "height": 844}


def _graph() -> HindsightGraph:
    question = make_question()
    make_corpus()
    resolve(question)
    built = hindsight_build(question_id=question.pk, builder="offline")
    assert built is not None
    return built


@pytest.mark.django_db
def test_the_queue_speaks_words_and_the_outcome_cannot_be_rejected(staff: Any) -> None:
    graph = _graph()
    HindsightGraph.objects.filter(pk=graph.pk).update(graph_built=False)
    client = Client()
    client.force_login(staff)
    queue = client.get("/hindsight/review/").content.decode()
    detail = client.get(f"/hindsight/review/{graph.question_id}/").content.decode()
    for html in (queue, detail):
        assert "graph_built" not in html and "quality thresholds not met" in html

    outcome = graph.events.get(is_outcome=True)
    row = detail.split(f'id="event-{outcome.pk}"', 1)[1].split("</tr>", 1)[0]
    assert 'value="reject"' not in row and "never reject it" in row
    assert 'value="approve"' in row and 'value="revise"' in row
    with pytest.raises(ValidationError) as refused:
        event_review(event=outcome, reviewer=staff, decision="reject", reason=EventReview.RejectReason.values[0])
    assert "The outcome event cannot be rejected" in refused.value.message_dict["decision"][0]
    outcome.refresh_from_db()
    assert outcome.review_status == HindsightEvent.ReviewStatus.PENDING
    posted = client.post(
        f"/hindsight/review/{graph.question_id}/",
        {"event": outcome.pk, "decision": "reject", "reason": EventReview.RejectReason.values[0]},
        headers={"Accept": "application/json"},
    )
    assert posted.status_code == 400 and "cannot be rejected" in posted.content.decode()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_phone_reviews_on_screen_and_reads_the_graph(browser_page: Any, staff: Any) -> None:
    graph = _graph()
    page = browser_page
    page.set_viewport_size(PHONE)
    login(page, staff.username)
    page.goto(f"/hindsight/review/{graph.question_id}/")
    screenshot(page, "review-phone")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    first = page.locator("table.review tbody tr").first
    for name in ("Approve", "Reject"):
        box = first.get_by_role("button", name=name, exact=True).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (name, box)

    page.goto(f"/hindsight/questions/{graph.question_id}/")
    page.wait_for_function("() => window.hindsightGraph !== undefined")
    heights = page.evaluate("() => window.hindsightGraph.nodes('node.event').map(n => n.renderedBoundingBox().h)")
    screenshot(page, "hindsight-graph-phone")
    assert heights and min(heights) >= 20, heights
