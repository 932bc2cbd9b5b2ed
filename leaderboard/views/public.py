"""Public pages: home, leaderboard, agent and question pages, methods."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ingestion.models import Question


def home(request: HttpRequest) -> HttpResponse:
    open_questions = Question.objects.filter(status=Question.Status.OPEN).order_by("close_at")[:10]
    return render(request, "leaderboard/home.html", {"open_questions": open_questions})
