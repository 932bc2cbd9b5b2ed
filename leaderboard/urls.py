"""HTML pages of the leaderboard app."""

from __future__ import annotations

from django.urls import path

from leaderboard.views import accounts, public

app_name = "leaderboard"

urlpatterns = [
    path("", public.home, name="home"),
    path("signup/", accounts.signup, name="signup"),
    path("dashboard/", accounts.dashboard, name="dashboard"),
]
