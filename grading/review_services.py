"""Staff decisions on hindsight graphs: reviewing an event, adding an archive item the builder missed.

Each decision that changes which events count or what they say announces the changed reference, so
the question's forecasts are regraded.
"""

from __future__ import annotations

from datetime import date, datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from grading.builders import offline
from grading.builders.draft import NEUTRAL_MAX_MAGNITUDE
from grading.builders.window import lead_of
from grading.models import (
    EventReview,
    HindsightEvent,
    HindsightGraph,
    OutcomeImpact,
)
from grading.services import ANNOTATORS_GROUP, reference_announce
from ingestion.models import Article


def can_review(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Staff and members of the "annotators" group review hindsight events."""
    if not user.is_authenticated:
        return False
    return bool(getattr(user, "is_staff", False)) or getattr(user, "groups").filter(name=ANNOTATORS_GROUP).exists()  # noqa: B009


@transaction.atomic
def event_review(
    *,
    event: HindsightEvent,
    reviewer: AbstractBaseUser,
    decision: str,
    reason: str = "",
    revised_title: str = "",
    revised_date: date | None = None,
    note: str = "",
    now: datetime | None = None,
) -> EventReview:
    """Record one reviewer's decision on an event and apply it; every decision is kept.

    The event's status follows the latest decision by any reviewer: approve -> Approved, reject ->
    Rejected (it leaves the reference evidence set and the key-event set; the outcome event, being
    the resolution itself, is never rejected), revise -> Revised with
    the new title and/or date applied (the builder's originals are kept). A decision that changes
    which events count or what they say announces ``reference_changed``.
    """
    now = now or timezone.now()
    errors: dict[str, str] = {}
    if not can_review(reviewer):
        errors["reviewer"] = "Only staff or members of the annotators group can review hindsight events."
    if decision not in EventReview.Decision.values:
        errors["decision"] = f"{decision!r} is not one of {', '.join(EventReview.Decision.values)}."
    revised_title = revised_title.strip()
    if decision == EventReview.Decision.REJECT:
        if event.is_outcome:
            errors["decision"] = (
                "The outcome event cannot be rejected: it is the question's resolution itself. "
                "Approve it, or revise its title or date."
            )
        elif reason not in EventReview.RejectReason.values:
            errors["reason"] = f"A rejection needs one of the reasons {', '.join(EventReview.RejectReason.values)}."
    elif reason:
        errors["reason"] = "A reason is only given when rejecting."
    if decision == EventReview.Decision.REVISE:
        if not revised_title and revised_date is None:
            errors["revised_title"] = "A revision changes the title, the date, or both."
        if revised_title and len(revised_title) < 5:
            errors["revised_title"] = "A revised title has at least 5 characters."
        if len(revised_title) > 500:
            errors["revised_title"] = "A revised title has at most 500 characters."
        if revised_date is not None and not isinstance(revised_date, date):
            errors["revised_date"] = "The revised date must be a date."
    elif revised_title or revised_date is not None:
        errors["decision"] = "A revised title or date needs the decision 'revise'."
    if errors:
        raise ValidationError(errors)
    locked = HindsightEvent.objects.select_for_update().select_related("graph").get(pk=event.pk)
    before = (locked.review_status == HindsightEvent.ReviewStatus.REJECTED, locked.title, locked.occurred_on)
    review = EventReview.objects.create(
        event=locked,
        reviewer=reviewer,  # type: ignore[misc]  # AUTH_USER_MODEL, typed as the abstract base
        decision=decision,
        reason=reason,
        revised_title=revised_title,
        revised_date=revised_date,
        note=note.strip(),
        created_at=now,
    )
    fields = ["review_status"]
    if decision == EventReview.Decision.APPROVE:
        locked.review_status = HindsightEvent.ReviewStatus.APPROVED
    elif decision == EventReview.Decision.REJECT:
        locked.review_status = HindsightEvent.ReviewStatus.REJECTED
    else:
        locked.review_status = HindsightEvent.ReviewStatus.REVISED
        if not locked.original_title:
            locked.original_title = locked.title
            locked.original_occurred_on = locked.occurred_on
            fields += ["original_title", "original_occurred_on"]
        if revised_title:
            locked.title = revised_title
            fields.append("title")
        if revised_date is not None:
            locked.occurred_on = revised_date
            fields.append("occurred_on")
    locked.save(update_fields=fields)
    after = (locked.review_status == HindsightEvent.ReviewStatus.REJECTED, locked.title, locked.occurred_on)
    if before != after and locked.graph.is_current:
        reference_announce(locked.graph)
    event.refresh_from_db()
    return review


ADDED_MAGNITUDE = 0.5
ADDED_CONFIDENCE = 0.7


@transaction.atomic
def hindsight_event_add(
    *,
    graph: HindsightGraph,
    article: Article,
    reviewer: AbstractBaseUser,
    direction: str,
    note: str = "",
    now: datetime | None = None,
) -> HindsightEvent:
    """Add an archive item the builder missed to a graph as an approved event (a reviewer's
    decision, kept with its note), and announce the changed reference. The offline builder seeds
    every later version of the question's graph with the items staff added (they certainly belong).

    Refused, changing nothing: a caller who is not a reviewer, a direction that is not one of the
    impact directions, an article published after the question resolved or before the builder's
    window, and an article the graph already cites."""
    now = now or timezone.now()
    errors: dict[str, str] = {}
    if not can_review(reviewer):
        errors["reviewer"] = "Only staff or members of the annotators group can add items to a hindsight graph."
    if direction not in OutcomeImpact.Direction.values:
        errors["direction"] = f"{direction!r} is not one of {', '.join(OutcomeImpact.Direction.values)}."
    outcome = graph.events.filter(is_outcome=True).first()
    last_day = outcome.occurred_on if outcome is not None else None
    published = article.published_at
    if published is None:
        errors["article"] = "This article has no publication date."
    elif last_day is not None and published.date() > last_day:
        errors["article"] = (
            f"This article was published on {published.date().isoformat()}, after the question resolved "
            f"({last_day.isoformat()})."
        )
    if graph.events.filter(sources=article).exists():
        errors["article"] = "The graph already cites this article."
    if errors:
        raise ValidationError(errors)
    assert published is not None
    locked = HindsightGraph.objects.select_for_update().get(pk=graph.pk)
    taken = set(locked.events.values_list("key", flat=True))
    number = 1
    while f"s{number}" in taken:
        number += 1
    description = lead_of(article.summary, article.body)
    event = HindsightEvent.objects.create(
        graph=locked,
        key=f"s{number}",
        title=article.title[:500],
        description=description,
        occurred_on=published.date(),
        event_type=offline.event_type(f"{article.title}. {description}"),
        review_status=HindsightEvent.ReviewStatus.APPROVED,
        added_by=reviewer,  # type: ignore[misc]  # AUTH_USER_MODEL, typed as the abstract base
    )
    event.sources.add(article)
    OutcomeImpact.objects.create(
        event=event,
        direction=direction,
        magnitude=min(ADDED_MAGNITUDE, NEUTRAL_MAX_MAGNITUDE) if direction == "Neutral" else ADDED_MAGNITUDE,
        confidence=ADDED_CONFIDENCE,
    )
    EventReview.objects.create(
        event=event,
        reviewer=reviewer,  # type: ignore[misc]
        decision=EventReview.Decision.APPROVE,
        note=(f"Added from the archive. {note.strip()}").strip(),
        created_at=now,
    )
    if locked.is_current:
        reference_announce(locked)
    return event
