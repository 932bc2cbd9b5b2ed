"""HTML pages of the leaderboard app."""

from __future__ import annotations

from django.urls import path

from leaderboard.views import accounts, calibration, data, forecast_form, forecasts, leaderboard, public, teams

app_name = "leaderboard"

urlpatterns = [
    path("", public.home, name="home"),
    path("favicon.ico", public.favicon, name="favicon"),
    path("leaderboard/", leaderboard.leaderboard, name="leaderboard"),
    path("leaderboard.csv", leaderboard.leaderboard_csv, name="leaderboard_csv"),
    path("leaderboard/calibration/", calibration.calibration, name="calibration"),
    path("agents/<slug:slug>/", public.agent_page, name="agent_public"),
    path("questions/", public.questions_list, name="questions"),
    path("questions/<int:question_id>/", public.question_page, name="question"),
    path("forecasts/<int:forecast_id>/", forecasts.forecast_page, name="forecast"),
    path("forecasts/<int:forecast_id>/graph/", forecasts.forecast_graph_page, name="forecast_graph"),
    path("methods/", public.methods, name="methods"),
    path("data/", data.data_page, name="data"),
    path("data/<slug:name>.<str:fmt>", data.data_download, name="data_download"),
    path("signup/", accounts.signup, name="signup"),
    path("dashboard/", accounts.dashboard, name="dashboard"),
    path("teams/new/", teams.team_new, name="team_new"),
    path("teams/<slug:slug>/", teams.team_detail, name="team_detail"),
    path("teams/<slug:slug>/members/add/", teams.team_member_add, name="team_member_add"),
    path("teams/<slug:slug>/agents/new/", teams.agent_new, name="agent_new"),
    path("teams/<slug:slug>/agents/<slug:agent_slug>/", teams.agent_detail, name="agent_detail"),
    path("teams/<slug:slug>/agents/<slug:agent_slug>/edit/", teams.agent_edit, name="agent_edit"),
    path("teams/<slug:slug>/agents/<slug:agent_slug>/retire/", teams.agent_retire_view, name="agent_retire"),
    path("teams/<slug:slug>/agents/<slug:agent_slug>/tokens/new/", teams.token_new, name="token_new"),
    path(
        "teams/<slug:slug>/agents/<slug:agent_slug>/tokens/<int:token_id>/revoke/",
        teams.token_revoke_view,
        name="token_revoke",
    ),
    path("forecast/", forecast_form.forecast_form, name="forecast_form"),
]
