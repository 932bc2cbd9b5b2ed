"""GET /api/v1/leaderboard/ and /api/v1/agents/{slug}/ (public, no token needed)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, permissions
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingestion.models import Question
from leaderboard.apis.common import ErrorSerializer
from leaderboard.models import Agent, Grade
from leaderboard.selectors.standings import (
    agent_standings,
    leaderboard_cache_key,
    leaderboard_page,
    normalise_sort,
    parse_view,
)
from leaderboard.selectors.standings_cache import cached_for_version
from leaderboard.stats.metrics import METRICS

_FILTERS = [
    OpenApiParameter("track", OpenApiTypes.STR, description="all (default), live or replay"),
    OpenApiParameter("type", OpenApiTypes.STR, description="question type"),
    OpenApiParameter("domain", OpenApiTypes.STR),
    OpenApiParameter("origin", OpenApiTypes.STR),
    OpenApiParameter("horizon", OpenApiTypes.STR, description="week, month, quarter or long"),
    OpenApiParameter("contamination", OpenApiTypes.STR, description="on (default) or off"),
    OpenApiParameter("from", OpenApiTypes.DATE, description="resolved on or after"),
    OpenApiParameter("to", OpenApiTypes.DATE, description="resolved on or before"),
    OpenApiParameter("sort", OpenApiTypes.STR, description="rank (default), n, brier_index or a metric; '-' reverses"),
    OpenApiParameter("page", OpenApiTypes.INT),
    OpenApiParameter("page_size", OpenApiTypes.INT, description="1..1000 (default 50)"),
]


def _int(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise exceptions.ValidationError({name: f"{raw!r} is not an integer."}) from exc
    if not lo <= value <= hi:
        raise exceptions.ValidationError({name: f"must be between {lo} and {hi}."})
    return value


class LeaderboardApi(APIView):
    authentication_classes: list[Any] = []
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=_FILTERS, responses={200: OpenApiTypes.OBJECT, 400: ErrorSerializer}, tags=["leaderboard"]
    )
    def get(self, request: Request) -> HttpResponse:
        try:
            view = parse_view(request.query_params)
        except DjangoValidationError as exc:
            raise exceptions.ValidationError(exc.message_dict) from exc
        sort = normalise_sort(request.query_params.get("sort"))
        number = _int(request, "page", 1, 1, 10**6)
        size = _int(request, "page_size", 50, 1, 1000)
        # Standings only change when they are written, which bumps the version: the answer is
        # cached per normalised request and version, as rendered JSON when JSON was asked for (the
        # usual case: no per-request encoding), else as data for the negotiated renderer.
        as_json = isinstance(getattr(request, "accepted_renderer", None), JSONRenderer)

        def build() -> Any:
            page = leaderboard_page(view=view, sort=sort, page=number, page_size=size)
            data = {
                "view": page.params,
                "rank_metric": page.rank_metric or None,
                "columns": page.columns,
                "count": page.total,
                "page": page.page,
                "pages": page.pages,
                "computed_at": page.computed_at,
                "results": [e.as_dict() for e in page.entries],
                "baselines": [e.as_dict() for e in page.baselines],
            }
            if not as_json:
                return data
            return request.accepted_renderer.render(
                data, request.accepted_media_type, {"request": request, "view": self}
            )

        key = leaderboard_cache_key(
            "leaderboard-api-json" if as_json else "leaderboard-api",
            view=view,
            sort=sort,
            page=number,
            page_size=size,
            media_type=request.accepted_media_type if as_json else "",
        )
        result = cached_for_version(key, build)
        if as_json:
            return HttpResponse(result, content_type="application/json")
        return Response(result)


class AgentApi(APIView):
    authentication_classes: list[Any] = []
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: ErrorSerializer}, tags=["leaderboard"])
    def get(self, request: Request, slug: str) -> Response:
        agent = Agent.objects.select_related("team").filter(slug=slug).first()
        if agent is None:
            raise exceptions.NotFound(f"No agent with slug {slug!r}.", code="not_found")
        standings = [
            {
                "track": s.track,
                "contamination_filter": s.contamination_filter,
                "rank": s.rank,
                "provisional": s.provisional,
                "n": s.n,
                "brier_lo": s.brier_lo,
                "brier_hi": s.brier_hi,
                "brier_index": s.brier_index,
                **{m: getattr(s, m) for m in METRICS},
                **{f"{m}_n": getattr(s, f"{m}_n") for m in METRICS},
            }
            for s in agent_standings(agent=agent)
        ]
        revealed = (
            Grade.objects.filter(forecast__agent=agent, is_current=True, counts=True)
            .filter(forecast__question__status__in=[Question.Status.RESOLVED, Question.Status.ANNULLED])
            .exclude(forecast__question__track=Question.Track.REPLAY, forecast__question__outcome_published_at=None)
            .select_related("forecast")
            .order_by("-forecast__received_at")[:100]
        )
        grades = [
            {
                "question": g.forecast.question_id,
                "forecast": g.forecast_id,
                "void": g.void,
                "contaminated": g.contaminated,
                "correct": g.correct,
                **{m: getattr(g, m) for m in METRICS if m != "accuracy"},
            }
            for g in revealed
        ]
        return Response(
            {
                "slug": agent.slug,
                "name": agent.name,
                "team": agent.team.name,
                "model": agent.model_name,
                "provider": agent.provider,
                "cutoff": agent.knowledge_cutoff,
                "cutoff_declared": agent.knowledge_cutoff is not None,
                "tools": agent.tools_description,
                "standings": standings,
                "recent_grades": grades,
            }
        )
