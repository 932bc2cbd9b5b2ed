"""Hindsight HTML pages: the review flow (staff and annotators) and the public hindsight page."""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.safestring import mark_safe

from grading.forms import EventAddForm, EventReviewForm
from grading.graph_view import graph_payload
from grading.models import EventReview, HindsightEvent, OutcomeImpact
from grading.pressure import render_svg
from grading.review_services import can_review, event_review, hindsight_event_add
from grading.selectors import (
    archive_items_to_add,
    current_graph,
    graphs_awaiting_review,
    graphs_reviewed,
    hindsight_view,
    latest_attempt,
    review_agreement,
    review_events,
)
from ingestion.models import Article, Question


def _auto_id(event_id: object) -> str:
    # One form per event card on the page: element ids must stay unique.
    return f"id_ev{str(event_id)[:20]}_%s"


def _require_reviewer(request: HttpRequest) -> None:
    if not can_review(request.user):
        raise PermissionDenied("Only staff and annotators review hindsight graphs.")


@login_required
def review_list(request: HttpRequest) -> HttpResponse:
    _require_reviewer(request)
    return render(
        request,
        "grading/review_list.html",
        {"awaiting": graphs_awaiting_review(), "reviewed": graphs_reviewed()[:50]},
    )


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _history_line(review: EventReview) -> str:
    parts = [f"{review.created_at:%Y-%m-%d %H:%M} — {review.reviewer.get_username()}: {review.get_decision_display()}"]
    if review.reason:
        parts.append(f" ({review.reason})")
    if review.revised_title:
        parts.append(f" → “{review.revised_title}”")
    if review.revised_date:
        parts.append(f" → {review.revised_date:%Y-%m-%d}")
    if review.note:
        parts.append(f" — {review.note}")
    return "".join(parts)


def _record_decision(request: HttpRequest, graph: Any) -> tuple[EventReviewForm, HindsightEvent | None]:
    """Validate and record one decision; the form carries the errors when it was refused."""
    form = EventReviewForm(request.POST, auto_id=_auto_id(request.POST.get("event", "x")))
    if not form.is_valid():
        return form, None
    event = HindsightEvent.objects.filter(pk=form.cleaned_data["event"], graph=graph).first()
    if event is None:
        form.add_error("event", "This event is not part of the current graph.")
        return form, None
    try:
        review = event_review(
            event=event,
            reviewer=request.user,  # type: ignore[arg-type]
            decision=form.cleaned_data["decision"],
            reason=form.cleaned_data["reason"] or "",
            revised_title=form.cleaned_data["revised_title"] or "",
            revised_date=form.cleaned_data["revised_date"],
            note=form.cleaned_data["note"] or "",
        )
    except ValidationError as exc:
        for field, errors in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)
        return form, None
    event.refresh_from_db()
    event.last_review = review  # type: ignore[attr-defined]
    return form, event


@login_required
def review_detail(request: HttpRequest, question_id: int) -> HttpResponse:
    """One graph's events as a compact table; each decision is posted inline (JSON) without a reload,
    or as a plain form post that redirects back when scripts are off."""
    _require_reviewer(request)
    question = get_object_or_404(Question, pk=question_id)
    graph = current_graph(question_id)
    if graph is None:
        raise Http404("This question has no hindsight graph yet.")
    failed_form: EventReviewForm | None = None
    if request.method == "POST":
        form, event = _record_decision(request, graph)
        if _wants_json(request):
            if event is None:
                return JsonResponse({"ok": False, "errors": form.errors.get_json_data()}, status=400)
            counts = Counter(graph.events.values_list("review_status", flat=True))
            return JsonResponse(
                {
                    "ok": True,
                    "event": event.pk,
                    "status": event.review_status,
                    "title": event.title,
                    "date": event.occurred_on.isoformat(),
                    "history": _history_line(event.last_review),  # type: ignore[attr-defined]
                    "pending": counts.get(HindsightEvent.ReviewStatus.PENDING, 0),
                }
            )
        if event is not None:
            messages.success(request, f"Recorded: {form.cleaned_data['decision']} — {event.title}")
            return HttpResponseRedirect(reverse("grading:review_detail", args=[question_id]) + f"#event-{event.pk}")
        failed_form = form
    events = list(review_events(graph))
    failed_event = failed_form.data.get("event") if failed_form is not None else None
    rows = [
        {
            "event": event,
            "errors": failed_form.errors if failed_form is not None and str(failed_event) == str(event.pk) else None,
            "history": [_history_line(r) for r in event.reviews.all()],
        }
        for event in events
    ]
    pending = sum(1 for e in events if e.review_status == HindsightEvent.ReviewStatus.PENDING)
    find = request.GET.get("find", "").strip()[:200]
    return render(
        request,
        "grading/review_detail.html",
        {
            "question": question,
            "resolution": question.current_resolution,
            "graph": graph,
            "rows": rows,
            "pending": pending,
            "agreements": review_agreement(graph),
            "reject_reasons": EventReview.RejectReason.choices,
            "attempt": latest_attempt(question_id),
            "form_error": failed_form is not None and str(failed_event) not in {str(e.pk) for e in events},
            "find": find,
            "candidates": list(archive_items_to_add(graph=graph, text=find)) if find else [],
            "directions": OutcomeImpact.Direction.choices,
        },
    )


@login_required
def review_add_item(request: HttpRequest, question_id: int) -> HttpResponse:
    """Add an archive item to the question's current graph (POST), then back to the review page."""
    _require_reviewer(request)
    graph = current_graph(question_id)
    if graph is None:
        raise Http404("This question has no hindsight graph yet.")
    back = reverse("grading:review_detail", args=[question_id])
    if request.method != "POST":
        return HttpResponseRedirect(back)
    form = EventAddForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Not added: " + " ".join(str(e) for errs in form.errors.values() for e in errs))
        return HttpResponseRedirect(back)
    article = Article.objects.filter(pk=form.cleaned_data["article"]).first()
    if article is None:
        messages.error(request, "Not added: no such article.")
        return HttpResponseRedirect(back)
    try:
        event = hindsight_event_add(
            graph=graph,
            article=article,
            reviewer=request.user,  # type: ignore[arg-type]
            direction=form.cleaned_data["direction"],
            note=form.cleaned_data["note"] or "",
        )
    except ValidationError as exc:
        messages.error(request, "Not added: " + " ".join(m for ms in exc.message_dict.values() for m in ms))
        find = form.cleaned_data.get("find") or ""
        return HttpResponseRedirect(back + (f"?{urlencode({'find': find})}" if find else ""))
    messages.success(request, f"Added: {event.title}")
    return HttpResponseRedirect(back + f"#event-{event.pk}")


def hindsight_page(request: HttpRequest, question_id: int) -> HttpResponse:
    question = get_object_or_404(Question, pk=question_id)
    return render(request, "grading/hindsight.html", hindsight_context(request, question))


def hindsight_context(request: HttpRequest, question: Question) -> dict[str, Any]:
    """The hindsight page's context (a forecast's page adds its overlay to ``graph_payload``)."""
    if not question.is_revealed and not getattr(request.user, "is_staff", False):
        raise Http404("The hindsight of this question is not public yet.")
    view = hindsight_view(question)
    if view is None:
        raise Http404("This question has no hindsight graph yet.")
    start = question.open_at.date()
    end = (view.question["resolved_at"] or question.close_at).date()
    svg = render_svg(
        view.pressure,
        view.prices,
        start=start,
        end=end,
        title=f"Cumulative causal pressure for: {question.title}",
        describedby="pressure-caption",
    )
    payload = graph_payload(
        events=view.events,
        links=view.links,
        outcome_text=view.question["outcome_text"],
        top_k=settings.HINDSIGHT_KEY_EVENTS_TOP_K,
        # The guarded matcher breaks key-event ties on relevance to the question: draw the same ones.
        about=question.title if settings.HINDSIGHT_MATCHER == "guarded" else None,
    )
    return {
        "question": question,
        "view": view,
        "chart_svg": mark_safe(svg),  # built by grading.pressure, every text escaped
        "preview": not question.is_revealed,
        "graph_payload": payload,
        "key_ids": {int(n["id"][1:]) for n in payload["nodes"] if n["key_event"]},
        "relations": list(payload["relations"].items()),
    }
