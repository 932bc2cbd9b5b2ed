"""Web submission of forecasts: the same service, validation and messages as the API."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from ingestion.models import Question
from leaderboard.forms import ForecastForm, ForecastTargetForm, error_sentence, new_idempotency_key
from leaderboard.models import Agent, Forecast, ReplaySession
from leaderboard.selectors.questions import forecastable_questions
from leaderboard.selectors.teams import agent_list_for_user
from leaderboard.services.errors import ForecastConflict, NotFound, ServiceError
from leaderboard.services.forecasts import forecast_submit
from leaderboard.services.replay_sessions import replay_session_open

PICKER_PAGE_SIZE = 20


def _picker(params: Any) -> dict[str, Any]:
    """The question search of step one: every forecastable question is reachable (no cap), a page
    at a time, the sample world's first."""
    search = params.get("find", "").strip()[:200]
    qtype = params.get("qtype", "")
    results = forecastable_questions(search=search, qtype=qtype)
    page = Paginator(results, PICKER_PAGE_SIZE).get_page(params.get("qpage"))
    return {"find": search, "qtype": qtype, "results": page, "types": Question.Type.choices}


def _is_id(text: str) -> bool:
    """Digits that fit a bigint primary key (a longer number would make PostgreSQL raise)."""
    return text.isdigit() and len(text) <= 18


def _form_url(agent: Agent, question_id: int, **extra: Any) -> str:
    query = {"agent": agent.slug, "question": question_id, **extra}
    return f"{reverse('leaderboard:forecast_form')}?{urlencode(query)}"


def _attach_service_error(form: ForecastForm, exc: ServiceError) -> None:
    """A 404/409-type refusal, shown beside the field it names (question/session) or on top."""
    field = form.field_for_path(exc.field) if exc.field else None
    form.add_error(
        field if field in form.fields else None, error_sentence(form.path_name(exc.field or ""), exc.message)
    )


@login_required
def forecast_form(request: HttpRequest) -> HttpResponse:
    # A retired agent takes no forecasts: it is not offered here (the service refuses it anyway),
    # and a link naming one says so.
    mine = list(agent_list_for_user(user=request.user))
    agents = [a for a in mine if a.retired_at is None]
    params = request.GET
    agent_slug = params.get("agent", "").strip()
    retired = next((a for a in mine if a.slug == agent_slug and a.retired_at is not None), None)
    context: dict[str, Any] = {"agents": agents, "retired_agent": retired, "any_agent": bool(mine)}
    if not agents or retired is not None:
        return render(request, "leaderboard/forecast_form.html", context)

    if not agent_slug and len(agents) == 1:
        # A link from a question row names no agent; with only one there is nothing to choose.
        agent_slug = agents[0].slug
    agent = next((a for a in agents if a.slug == agent_slug), None)
    if agent_slug and agent is None:
        # An agent of another team looks exactly like an agent that does not exist.
        raise Http404("No such agent among your teams.")
    target = ForecastTargetForm(agents=agents, initial={"agent": agent_slug or agents[0].slug})
    context["target_form"] = target
    question: Question | None = None
    raw_question = params.get("question", "").strip()
    if raw_question:
        question = (
            Question.objects.exclude(status=Question.Status.DRAFT).filter(pk=int(raw_question)).first()
            if _is_id(raw_question)
            else None
        )
        if question is None:
            context["question_error"] = (
                f"The question {raw_question!r} does not exist: search for a question by words of its title or its number."
            )
    if agent is None or question is None:
        context.update(_picker(params), question=question)
        return render(request, "leaderboard/forecast_form.html", context)

    session = ReplaySession.objects.filter(agent=agent, question=question).first()
    context.update({"agent": agent, "question": question, "session": session})

    submitted_id = params.get("submitted", "")
    if _is_id(submitted_id):
        context["submitted"] = (
            Forecast.objects.filter(pk=int(submitted_id), agent=agent).select_related("question", "session").first()
        )

    if request.method == "POST" and request.POST.get("action") == "open_session":
        try:
            session, _ = replay_session_open(agent=agent, question_id=question.pk)
        except (NotFound, ForecastConflict) as exc:
            messages.error(request, error_sentence("The replay session", exc.message))
        else:
            messages.success(
                request, f"Replay session open: you forecast as of {session.simulated_at:%Y-%m-%d %H:%M} UTC."
            )
        return redirect(_form_url(agent, question.pk))

    if request.method == "POST" and question.track == Question.Track.REPLAY and session is None:
        # The form is shown only once the session exists (it fixes the date the forecast is made at).
        messages.error(request, "Open the replay session first: it fixes the simulated date your forecast is made at.")
        return redirect(_form_url(agent, question.pk))

    if request.method == "POST":
        form = ForecastForm(request.POST, question=question)
        if form.is_valid():
            try:
                submission = form.build_submission()
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
                    submitted_by=request.user,  # type: ignore[arg-type]
                )
            except ValidationError as exc:
                form.attach_service_errors(exc)
            except (NotFound, ForecastConflict) as exc:
                _attach_service_error(form, exc)
                if exc.field == "idempotency_key":
                    # This form's key already stored another forecast (e.g. resubmitted after going
                    # back): give the form a fresh key so that submitting again adds a new one.
                    data = request.POST.copy()
                    data["idempotency_key"] = new_idempotency_key()
                    form.data = data
            else:
                forecast = result.forecast
                if result.created:
                    messages.success(request, f"Forecast #{forecast.pk} stored for {agent.name}.")
                else:
                    messages.info(request, f"This form was already submitted: forecast #{forecast.pk} is unchanged.")
                return redirect(_form_url(agent, question.pk, submitted=forecast.pk))
    else:
        form = ForecastForm(question=question, initial={"session": str(session.pk) if session else ""})
    context["form"] = form
    return render(request, "leaderboard/forecast_form.html", context)
