"""HTML pages of the leaderboard app."""

from __future__ import annotations

from django.urls import path

from leaderboard import views

app_name = "leaderboard"

urlpatterns = [
    path("", views.home, name="home"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("signup/", views.signup, name="signup"),
]
