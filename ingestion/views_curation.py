"""Staff curation queue: drafts generated from news (or markets) are edited, approved or rejected."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from ingestion.forms_curation import DraftQuestionForm
from ingestion.models import Question
from ingestion.selectors.curation import curation_draft_list
from ingestion.services.curation import question_draft_update
from ingestion.services.question_generation import CRITERIA, generation_status
from ingestion.services.questions import question_open, question_reject_draft
from ingestion.views import staff_only


def _messages_of(exc: ValidationError) -> str:
    return " ".join(exc.messages)


@staff_only
def curation_queue(request: HttpRequest) -> HttpResponse:
    drafts = list(curation_draft_list())
    for draft in drafts:
        scores = (draft.generation or {}).get("scores") or {}
        reasons = (draft.generation or {}).get("reasons") or {}
        draft.score_rows = [  # type: ignore[attr-defined]
            (name.replace("_", " "), scores.get(name), reasons.get(name, "")) for name in CRITERIA if name in scores
        ]
    return render(
        request,
        "ingestion/curation_queue.html",
        {"drafts": drafts, "generation": generation_status()},
    )


@staff_only
def curation_edit(request: HttpRequest, pk: int) -> HttpResponse:
    question = get_object_or_404(Question, pk=pk, status=Question.Status.DRAFT)
    form = DraftQuestionForm(request.POST or None, instance=Question.objects.get(pk=pk))
    if request.method == "POST" and form.is_valid():
        fields = {name: form.cleaned_data[name] for name in form.Meta.fields}
        try:
            question_draft_update(question=question, fields=fields)
        except ValidationError as exc:
            messages.error(request, _messages_of(exc))
        else:
            messages.success(request, f"Saved “{fields['title']}”.")
            return redirect("ingestion:curation_queue")
    return render(request, "ingestion/curation_edit.html", {"form": form, "question": question})


@staff_only
@require_POST
def curation_approve(request: HttpRequest, pk: int) -> HttpResponse:
    question = get_object_or_404(Question, pk=pk)
    try:
        question_open(question=question)
    except ValidationError as exc:
        messages.error(request, f"Not approved: {_messages_of(exc)}")
    else:
        messages.success(request, f"Approved and opened “{question.title}”.")
    return redirect("ingestion:curation_queue")


@staff_only
@require_POST
def curation_reject(request: HttpRequest, pk: int) -> HttpResponse:
    question = get_object_or_404(Question, pk=pk)
    reason = request.POST.get("reason", "")
    try:
        question_reject_draft(question=question, reason=reason)
    except ValidationError as exc:
        messages.error(request, f"Not rejected: {_messages_of(exc)}")
    else:
        messages.success(request, f"Rejected “{question.title}”.")
    return redirect("ingestion:curation_queue")
