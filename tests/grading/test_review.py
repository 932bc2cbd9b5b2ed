"""Reviewing hindsight events: decisions kept, rejected events leave the reference, agreement; the
review queue in words a reviewer reads, the outcome event kept out of rejection, and a 390 px phone
(the decision buttons on screen, the hindsight graph drawn at a readable size)."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.test import Client

from grading.agreement import cohen_agreement
from grading.models import EventReview, HindsightEvent, HindsightGraph
from grading.review_services import event_review, hindsight_event_add
from grading.selectors import reference_for_question, review_agreement
from grading.services import hindsight_build
from grading.signals import reference_changed
from tests.browser import login, screenshot
from tests.factories import ArticleFactory, UserFactory
from tests.grading.corpus import T0, T_RES, make_corpus, make_question, resolve

pytestmark = pytest.mark.django_db


@pytest.fixture
def graph() -> HindsightGraph:
    question = make_question()
    make_corpus()
    resolve(question)
    built = hindsight_build(question_id=question.pk, builder="offline")
    assert built is not None
    return built


@pytest.fixture
def annotator() -> Any:
    user = UserFactory(username="annie")
    user.groups.add(Group.objects.get_or_create(name="annotators")[0])
    return user


@pytest.fixture
def announcements() -> Any:
    seen: list[dict[str, Any]] = []

    def receiver(sender: Any, **kwargs: Any) -> None:
        seen.append(kwargs)

    reference_changed.connect(receiver, dispatch_uid="test-review-announcements")
    yield seen
    reference_changed.disconnect(dispatch_uid="test-review-announcements")


def first_event(graph: HindsightGraph) -> HindsightEvent:
    return graph.events.filter(is_outcome=False).order_by("occurred_on", "id").first()  # type: ignore[return-value]


def test_reject_removes_the_event_from_the_reference_and_announces(
    graph: HindsightGraph, staff: Any, announcements: Any, django_capture_on_commit_callbacks: Any
) -> None:
    event = first_event(graph)
    urls = {a.url for a in event.sources.all()}
    before = reference_for_question(graph.question_id)
    assert before is not None and urls <= before.source_urls
    with django_capture_on_commit_callbacks(execute=True):
        review = event_review(event=event, reviewer=staff, decision="reject", reason="Noise", note="off topic")
    assert review.reason == "Noise" and review.reviewer == staff and review.created_at is not None
    event.refresh_from_db()
    assert event.review_status == "Rejected"
    after = reference_for_question(graph.question_id)
    assert after is not None
    assert not urls & after.source_urls
    flagged = next(e for e in after.events if e.id == event.pk)
    assert flagged.rejected and flagged not in after.counted_events
    assert announcements == [
        {"signal": reference_changed, "question_id": graph.question_id, "graph_id": graph.pk, "version": graph.version}
    ]


def test_revise_applies_title_and_date_and_keeps_originals(graph: HindsightGraph, annotator: Any) -> None:
    event = first_event(graph)
    original = (event.title, event.occurred_on)
    event_review(
        event=event,
        reviewer=annotator,
        decision="revise",
        revised_title="Committee approves draft",
        revised_date=date(2026, 1, 5),
    )
    event.refresh_from_db()
    assert (event.title, event.occurred_on, event.review_status) == (
        "Committee approves draft",
        date(2026, 1, 5),
        "Revised",
    )
    assert (event.original_title, event.original_occurred_on) == original
    reference = reference_for_question(graph.question_id)
    assert reference is not None
    assert next(e for e in reference.events if e.id == event.pk).title == "Committee approves draft"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"decision": "reject"}, "reason"),
        ({"decision": "reject", "reason": "Boring"}, "reason"),
        ({"decision": "approve", "reason": "Noise"}, "reason"),
        ({"decision": "revise"}, "revised_title"),
        ({"decision": "approve", "revised_title": "New title"}, "decision"),
        ({"decision": "maybe"}, "decision"),
    ],
)
def test_bad_decisions_name_the_field_and_change_nothing(
    graph: HindsightGraph, staff: Any, kwargs: Any, field: str
) -> None:
    event = first_event(graph)
    with pytest.raises(ValidationError) as info:
        event_review(event=event, reviewer=staff, **kwargs)
    assert field in info.value.message_dict
    event.refresh_from_db()
    assert event.review_status == "Pending" and not EventReview.objects.exists()


def test_only_staff_or_annotators_review(graph: HindsightGraph) -> None:
    with pytest.raises(ValidationError) as info:
        event_review(event=first_event(graph), reviewer=UserFactory(username="mallory"), decision="approve")
    assert "reviewer" in info.value.message_dict


def test_every_decision_is_kept_and_latest_counts(
    graph: HindsightGraph, staff: Any, annotator: Any, announcements: Any, django_capture_on_commit_callbacks: Any
) -> None:
    event = first_event(graph)
    with django_capture_on_commit_callbacks(execute=True):
        event_review(event=event, reviewer=staff, decision="approve")
        event_review(event=event, reviewer=annotator, decision="reject", reason="Duplicate")
        event_review(event=event, reviewer=staff, decision="approve")
    assert list(event.reviews.values_list("decision", flat=True)) == ["approve", "reject", "approve"]
    event.refresh_from_db()
    assert event.review_status == "Approved"
    # Approving a pending event changes nothing that counts; the reject and the re-approve do.
    assert len(announcements) == 2


def test_agreement_of_two_reviewers(graph: HindsightGraph, staff: Any, annotator: Any) -> None:
    events = list(graph.events.filter(is_outcome=False).order_by("occurred_on", "id")[:4])
    for event, (a, b) in zip(
        events, [("approve", "approve"), ("approve", "approve"), ("Noise", "Noise"), ("approve", "Noise")], strict=True
    ):
        for reviewer, label in ((staff, a), (annotator, b)):
            if label == "approve":
                event_review(event=event, reviewer=reviewer, decision="approve")
            else:
                event_review(event=event, reviewer=reviewer, decision="reject", reason=label)
    [pair] = review_agreement(graph)
    assert (pair.reviewer_a, pair.reviewer_b) == ("annie", "staff")
    assert pair.agreement.items == 4 and pair.agreement.agreed == 3
    assert pair.agreement.percent == pytest.approx(75.0)
    # p_o = 0.75; p_e = 0.5*0.75 + 0.5*0.25 = 0.5; kappa = 0.5.
    assert pair.agreement.kappa == pytest.approx(0.5)


def test_cohen_agreement_edge_cases() -> None:
    assert cohen_agreement([]).percent is None
    assert cohen_agreement([("a", "a"), ("a", "a")]).kappa is None
    assert cohen_agreement([("a", "b"), ("b", "a")]).kappa == pytest.approx(-1.0)


def test_review_pages(graph: HindsightGraph, annotator: Any, client: Client) -> None:
    mallory = UserFactory(username="mallory")
    client.force_login(mallory)
    assert client.get("/hindsight/review/").status_code == 403
    client.force_login(annotator)
    listing = client.get("/hindsight/review/")
    assert listing.status_code == 200 and graph.question.title in listing.content.decode()
    event = first_event(graph)
    page = client.get(f"/hindsight/review/{graph.question_id}/")
    assert page.status_code == 200 and "offline-built" in page.content.decode()
    bad = client.post(f"/hindsight/review/{graph.question_id}/", {"event": event.pk, "decision": "reject"})
    assert bad.status_code == 200 and "A rejection needs one of the reasons" in bad.content.decode()
    ok = client.post(
        f"/hindsight/review/{graph.question_id}/", {"event": event.pk, "decision": "reject", "reason": "TooBroad"}
    )
    assert ok.status_code == 302
    assert EventReview.objects.get().reviewer == annotator


PHONE = {"width": 390, "height": 844}


@pytest.mark.django_db
def test_the_queue_speaks_words_and_the_outcome_cannot_be_rejected(staff: Any, graph: HindsightGraph) -> None:
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
def test_a_phone_reviews_on_screen_and_reads_the_graph(browser_page: Any, staff: Any, graph: HindsightGraph) -> None:
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


def test_staff_add_an_item_the_builder_missed_and_later_builds_start_from_it(graph: HindsightGraph, staff: Any) -> None:
    question = graph.question
    missed = ArticleFactory(
        url="https://herald.example.org/missed/1",
        title="Fishing union backs the Artemis lunar budget after a port deal",
        summary="The fishing union backed the budget.",
        published_at=T0 + timedelta(days=33),
    )
    client = Client()
    client.force_login(staff)
    page = client.get(f"/hindsight/review/{question.pk}/", {"find": "fishing union"})
    assert page.status_code == 200 and "Fishing union backs the Artemis lunar budget" in page.content.decode()
    response = client.post(
        f"/hindsight/review/{question.pk}/add/", {"article": missed.pk, "direction": "Positive", "note": "a vote"}
    )
    assert response.status_code == 302
    added = graph.events.get(sources=missed)
    assert added.added_by == staff and added.review_status == HindsightEvent.ReviewStatus.APPROVED
    assert added.impact.direction == "Positive" and added.reviews.get().note.startswith("Added from the archive")
    # Adding it twice is refused and changes nothing.
    client.post(f"/hindsight/review/{question.pk}/add/", {"article": missed.pk, "direction": "Positive"})
    assert graph.events.filter(sources=missed).count() == 1
    # An item the builder leaves out on its own (it names none of the question's names) ...
    quiet = ArticleFactory(
        url="https://herald.example.org/missed/2",
        title="Harbour pilots end their strike after a port deal",
        summary="The pilots went back to work.",
        published_at=T0 + timedelta(days=34),
    )
    unpinned = hindsight_build(question_id=question.pk, builder="offline")
    assert unpinned is not None and not unpinned.events.filter(sources=quiet).exists()
    # ... is in every later build once staff added it.
    hindsight_event_add(graph=unpinned, article=quiet, reviewer=staff, direction="Negative")
    rebuilt = hindsight_build(question_id=question.pk, builder="offline")
    assert rebuilt is not None and rebuilt.version > unpinned.version
    assert rebuilt.events.filter(sources=quiet).exists()


def test_only_reviewers_add_items_and_never_after_the_resolution(graph: HindsightGraph, annotator: Any) -> None:
    late = ArticleFactory(
        url="https://herald.example.org/late/1",
        title="Artemis lunar budget retrospective",
        summary="Looking back.",
        published_at=T_RES + timedelta(days=10),
    )
    with pytest.raises(ValidationError) as refused:
        hindsight_event_add(graph=graph, article=late, reviewer=annotator, direction="Positive")
    assert "after the question resolved" in str(refused.value)
    with pytest.raises(ValidationError):
        hindsight_event_add(graph=graph, article=late, reviewer=UserFactory(), direction="Sideways")
    assert not graph.events.filter(sources=late).exists()
