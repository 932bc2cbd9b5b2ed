"""Hindsight HTML pages: the review flow (staff and annotators) and the public hindsight page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.safestring import mark_safe

from grading.forms import EventReviewForm
from grading.models import EventReview, HindsightEvent
from grading.pressure import render_svg
from grading.selectors import (
    current_graph,
    graphs_awaiting_review,
    graphs_reviewed,
    hindsight_view,
    latest_attempt,
    review_agreement,
    review_events,
)
from grading.services import can_review, event_review
from ingestion.models import Question


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


@login_required
def review_detail(request: HttpRequest, question_id: int) -> HttpResponse:
    _require_reviewer(request)
    question = get_object_or_404(Question, pk=question_id)
    graph = current_graph(question_id)
    if graph is None:
        raise Http404("This question has no hindsight graph yet.")
    failed_form: EventReviewForm | None = None
    if request.method == "POST":
        form = EventReviewForm(request.POST, auto_id=_auto_id(request.POST.get("event", "x")))
        if form.is_valid():
            event = HindsightEvent.objects.filter(pk=form.cleaned_data["event"], graph=graph).first()
            if event is None:
                form.add_error("event", "This event is not part of the current graph.")
            else:
                try:
                    event_review(
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
                else:
                    messages.success(request, f"Recorded: {form.cleaned_data['decision']} — {event.title}")
                    return HttpResponseRedirect(
                        reverse("grading:review_detail", args=[question_id]) + f"#event-{event.pk}"
                    )
        failed_form = form
    events = list(review_events(graph))
    failed_event = failed_form.data.get("event") if failed_form is not None else None
    cards = []
    for event in events:
        form = (
            failed_form
            if failed_form is not None and str(failed_event) == str(event.pk)
            else EventReviewForm(initial={"event": event.pk}, auto_id=_auto_id(event.pk))
        )
        cards.append({"event": event, "form": form})
    resolution = question.current_resolution
    return render(
        request,
        "grading/review_detail.html",
        {
            "question": question,
            "resolution": resolution,
            "graph": graph,
            "cards": cards,
            "agreements": review_agreement(graph),
            "reject_reasons": EventReview.RejectReason.choices,
            "attempt": latest_attempt(question_id),
            "form_error": failed_form is not None and str(failed_event) not in {str(e.pk) for e in events},
        },
    )


def hindsight_page(request: HttpRequest, question_id: int) -> HttpResponse:
    question = get_object_or_404(Question, pk=question_id)
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
    return render(
        request,
        "grading/hindsight.html",
        {
            "question": question,
            "view": view,
            "chart_svg": mark_safe(svg),  # built by grading.pressure, every text escaped
            "preview": not question.is_revealed,
        },
    )
