"""Sign-up and the signed-in user's dashboard."""

from __future__ import annotations

from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from leaderboard.forms import SignupForm
from leaderboard.selectors.teams import agent_list_for_user, team_list_for_user


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("leaderboard:dashboard")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("leaderboard:dashboard")
    return render(request, "registration/signup.html", {"form": form})


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    teams = team_list_for_user(user=request.user)
    agents = agent_list_for_user(user=request.user)
    return render(request, "leaderboard/dashboard.html", {"teams": teams, "agents": agents})
