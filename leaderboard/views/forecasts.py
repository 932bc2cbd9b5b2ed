"""One forecast's page: what was submitted and every grade version with what changed and when."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from grading.graph_view import forecast_overlay, match_rows
from grading.views import hindsight_context
from ingestion.models import Question
from leaderboard.grade_display import grade_versions
from leaderboard.models import Forecast, Grade
from leaderboard.selectors.grades import grade_status
from leaderboard.selectors.questions import question_has_hindsight_graph, question_reveal


def _is_member(request: HttpRequest, forecast: Forecast) -> bool:
    user = request.user
    return bool(user.is_authenticated and forecast.agent.team.members.filter(pk=user.pk).exists())


def forecast_page(request: HttpRequest, forecast_id: int) -> HttpResponse:
    """Public once the question page shows the forecast (closed, and a replay's outcome published);
    the agent's team and staff see it at any time, its grades once they are not withheld."""
    forecast = get_object_or_404(
        Forecast.objects.select_related("agent", "agent__team", "question", "session").exclude(
            question__status=Question.Status.DRAFT
        ),
        pk=forecast_id,
    )
    question = forecast.question
    staff = bool(getattr(request.user, "is_staff", False))
    member = _is_member(request, forecast)
    reveal = question_reveal(question=question, user=request.user)
    public = question.status != Question.Status.OPEN and reveal.activity
    if not (public or member or staff):
        raise Http404("This forecast is not public yet.")
    grades = list(Grade.objects.filter(forecast=forecast).order_by("version"))
    current = next((g for g in grades if g.is_current), None)
    status = grade_status(forecast=forecast, grade=current)
    grades_visible = reveal.outcome
    graph_exists = grades_visible and question_has_hindsight_graph(question=question)
    overlay_url = f"{reverse('leaderboard:forecast_graph', args=[forecast.pk])}#graph" if graph_exists else ""
    versions = grade_versions(grades) if grades_visible else []
    return render(
        request,
        "leaderboard/forecast.html",
        {
            "forecast": forecast,
            "question": question,
            "status": status,
            "current": current if grades_visible else None,
            "versions": versions,
            "version_grades": [v.grade for v in versions],
            "show_private": member or staff,
            "overlay_url": overlay_url,
            "reasoning_error": _reasoning_error(current) if grades_visible else "",
        },
    )


def _reasoning_error(grade: Grade | None) -> str:
    """Why the grade has no reasoning score although the forecast carried a graph (the matcher
    could not read its text), or ""."""
    return str((grade.details or {}).get("reasoning_error") or "") if grade is not None else ""


def forecast_graph_page(request: HttpRequest, forecast_id: int) -> HttpResponse:
    """The question's hindsight graph with this forecast's events and its grade's matches overlaid,
    and the matcher's verdict on every pair it considered."""
    forecast = get_object_or_404(Forecast.objects.select_related("agent", "agent__team", "question"), pk=forecast_id)
    context = hindsight_context(request, forecast.question)  # 404 unless revealed (or staff) with a graph
    grade = Grade.objects.filter(forecast=forecast, is_current=True).first()
    context["graph_payload"]["overlay"] = forecast_overlay(
        forecast_graph=forecast.graph, grade_details=grade.details if grade else {}, agent=forecast.agent.name
    )
    context["overlay_forecast"] = forecast
    context["reasoning_error"] = _reasoning_error(grade)
    context["show_private"] = bool(getattr(request.user, "is_staff", False)) or _is_member(request, forecast)
    context["match_rows"] = match_rows(
        forecast_graph=forecast.graph, grade_details=grade.details if grade else {}, events=context["view"].events
    )
    return render(request, "grading/hindsight.html", context)
