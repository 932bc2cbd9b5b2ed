"""Web submission of forecasts: the same service, validation and messages as the API."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from ingestion.models import Question
from leaderboard.forms import ForecastForm, ForecastTargetForm
from leaderboard.models import Agent, Forecast, ReplaySession
from leaderboard.selectors.teams import agent_list_for_user

QUESTION_CHOICES_LIMIT = 500


def _forecastable_questions() -> list[Question]:
    """Questions offered in the picker: live ones open now, and replay-track ones on offer.

    Any other question can still be targeted by id; the service then says why it refuses.
    """
    return list(
        Question.objects.filter(
            Q(track=Question.Track.LIVE, status=Question.Status.OPEN)
            | Q(track=Question.Track.REPLAY, status__in=[Question.Status.OPEN, Question.Status.CLOSED, Question.Status.RESOLVED])
        ).order_by("track", "close_at", "id")[:QUESTION_CHOICES_LIMIT]
    )


def _form_url(agent: Agent, question_id: int, **extra: Any) -> str:
    query = {"agent": agent.slug, "question": question_id, **extra}
    return f"{reverse('leaderboard:forecast_form')}?{urlencode(query)}"


def _submission_error_message(exc: Exception) -> str:
    return str(exc.args[0]) if exc.args else str(exc)


@login_required
def forecast_form(request: HttpRequest) -> HttpResponse:
    # TEMP lazy import until the forecast service lands (keeps the URLconf importable meanwhile).
    from leaderboard.services.errors import ForecastConflict, NotFound
    from leaderboard.services.forecasts import replay_session_open

    agents = list(agent_list_for_user(user=request.user))
    questions = _forecastable_questions()
    context: dict[str, Any] = {"agents": agents}
    if not agents:
        return render(request, "leaderboard/forecast_form.html", context)

    params = request.GET
    target = ForecastTargetForm(
        params if "agent" in params or "question" in params else None,
        agents=agents,
        questions=questions,
        initial={"agent": agents[0].slug},
    )
    context["target_form"] = target
    agent_slug = params.get("agent")
    agent = next((a for a in agents if a.slug == agent_slug), None)
    if agent_slug and agent is None:
        # An agent of another team looks exactly like an agent that does not exist.
        raise Http404("No such agent among your teams.")
    question: Question | None = None
    raw_question = params.get("question", "").strip()
    if raw_question:
        question = (
            Question.objects.exclude(status=Question.Status.DRAFT).filter(pk=int(raw_question)).first()
            if raw_question.isdigit()
            else None
        )
        if question is None:
            target.add_error("question", f"Unknown question {raw_question!r}.")
    if agent is None or question is None:
        return render(request, "leaderboard/forecast_form.html", context)

    session = ReplaySession.objects.filter(agent=agent, question=question).first()
    context.update({"agent": agent, "question": question, "session": session})
    if question.pk not in {q.pk for q in questions}:
        # Keep the picker consistent with a question reached by a direct link.
        target.fields["question"].widget.choices = [
            (question.pk, f"#{question.pk} · {question.title[:120]}"),
            *target.fields["question"].widget.choices,
        ]

    submitted_id = params.get("submitted", "")
    if submitted_id.isdigit():
        context["submitted"] = (
            Forecast.objects.filter(pk=int(submitted_id), agent=agent).select_related("question", "session").first()
        )

    if request.method == "POST" and request.POST.get("action") == "open_session":
        try:
            session = replay_session_open(agent=agent, question_id=question.pk)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        except (NotFound, ForecastConflict) as exc:
            messages.error(request, _submission_error_message(exc))
        else:
            messages.success(request, f"Replay session open: you forecast as of {session.simulated_at:%Y-%m-%d %H:%M} UTC.")
        return redirect(_form_url(agent, question.pk))

    if request.method == "POST":
        form = ForecastForm(request.POST, question=question)
        if form.is_valid():
            try:
                submission = form.build_submission()
                forecast = _submit(request, agent=agent, question=question, submission=submission)
            except ValidationError as exc:
                form.attach_service_errors(exc)
            except (NotFound, ForecastConflict) as exc:
                form.add_error(None, _submission_error_message(exc))
            else:
                messages.success(request, f"Forecast #{forecast.pk} stored for {agent.name}.")
                return redirect(_form_url(agent, question.pk, submitted=forecast.pk))
    else:
        form = ForecastForm(question=question, initial={"session": str(session.pk) if session else ""})
    context["form"] = form
    return render(request, "leaderboard/forecast_form.html", context)


def _submit(request: HttpRequest, *, agent: Agent, question: Question, submission: dict[str, Any]) -> Forecast:
    from leaderboard.services.forecasts import forecast_submit

    result = forecast_submit(
        agent=agent,
        question_id=question.pk,
        session_id=submission["session_id"],
        prediction=submission["prediction"],
        sources=submission["sources"],
        rationale=submission["rationale"],
        graph=submission["graph"],
        idempotency_key=submission["idempotency_key"],
        channel=Forecast.Channel.WEB,
        submitted_by=request.user,
    )
    return result
