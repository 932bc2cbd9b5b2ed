"""HTML views of the leaderboard app."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ingestion.models import Question


def home(request: HttpRequest) -> HttpResponse:
    open_questions = Question.objects.filter(status=Question.Status.OPEN).order_by("close_at")[:10]
    return render(request, "leaderboard/home.html", {"open_questions": open_questions})


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    return render(request, "leaderboard/dashboard.html", {"teams": request.user.teams.all()})  # type: ignore[union-attr]


def signup(request: HttpRequest) -> HttpResponse:
    from django.contrib.auth import login
    from django.contrib.auth.forms import UserCreationForm
    from django.shortcuts import redirect

    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        return redirect("leaderboard:dashboard")
    return render(request, "registration/signup.html", {"form": form})
