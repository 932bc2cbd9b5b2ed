"""/api/v1/ routes. Each API module owns its own views; this file only wires them."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from grading import apis as grading_apis
from leaderboard.apis import evidence
from leaderboard.apis import forecasts as forecast_apis
from leaderboard.apis import public as public_apis
from leaderboard.apis import questions as question_apis
from leaderboard.apis import replays as replay_apis

urlpatterns: list[URLPattern | URLResolver] = []

urlpatterns += [
    path("evidence/articles/", evidence.ArticleSearchApi.as_view(), name="api-evidence-articles"),
    path("evidence/articles/<int:article_id>/", evidence.ArticleReadApi.as_view(), name="api-evidence-article"),
    path("evidence/events/", evidence.EventsApi.as_view(), name="api-evidence-events"),
    path("evidence/prices/<int:question_id>/", evidence.PricesApi.as_view(), name="api-evidence-prices"),
    path("evidence/log/", evidence.EvidenceLogApi.as_view(), name="api-evidence-log"),
]

urlpatterns += [
    path("questions/", question_apis.QuestionListApi.as_view(), name="api-questions"),
    path("questions/<int:question_id>/", question_apis.QuestionDetailApi.as_view(), name="api-question"),
    path("replays/", replay_apis.ReplayOpenApi.as_view(), name="api-replays"),
    path("replays/<uuid:session_id>/", replay_apis.ReplayCloseApi.as_view(), name="api-replay-close"),
    path("forecasts/", forecast_apis.ForecastListSubmitApi.as_view(), name="api-forecasts"),
    path("forecasts/batch/", forecast_apis.ForecastBatchApi.as_view(), name="api-forecasts-batch"),
]

urlpatterns += [
    path(
        "questions/<int:question_id>/hindsight/",
        grading_apis.QuestionHindsightApi.as_view(),
        name="api-question-hindsight",
    ),
]

urlpatterns += [
    path("leaderboard/", public_apis.LeaderboardApi.as_view(), name="api-leaderboard"),
    path("leaderboard/difficulty/", public_apis.QuestionDifficultyApi.as_view(), name="api-question-difficulty"),
    path("agents/<slug:slug>/", public_apis.AgentApi.as_view(), name="api-agent"),
]
