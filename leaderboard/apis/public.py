"""GET /api/v1/leaderboard/ and /api/v1/agents/{slug}/ (public, no token needed)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, permissions, serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingestion.models import Question
from leaderboard.apis.common import ErrorSerializer
from leaderboard.models import Agent, Grade
from leaderboard.selectors.difficulty import DIFFICULTY_ORDERS, difficulty_list
from leaderboard.selectors.leaderboard import agent_standings, leaderboard_page
from leaderboard.selectors.pairwise import pairwise_confidence
from leaderboard.selectors.standings import leaderboard_cache_key, normalise_sort, parse_view
from leaderboard.selectors.standings_cache import cached_for_version
from leaderboard.stats.columns import brier_index_of
from leaderboard.stats.metrics import METRIC_COLUMN, METRICS, STANDINGS_VERSION
from leaderboard.stats.views import HORIZON_BUCKETS, TRACKS

MAX_PAGE = 10**6
MAX_PAGE_SIZE = 1000


def _choice(name: str, values: Any, description: str) -> OpenApiParameter:
    # The empty value means "no filter" (what an HTML form sends).
    return OpenApiParameter(name, OpenApiTypes.STR, enum=["", *values], description=description)


def _bounded(name: str, lo: int, hi: int, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, {"type": "integer", "minimum": lo, "maximum": hi}, description=description)


_FILTERS = [
    _choice("track", TRACKS, "all (default), live or replay"),
    _choice("type", Question.Type.values, "question type"),
    OpenApiParameter("domain", OpenApiTypes.STR, description="domain (at most 100 characters are used)"),
    _choice("origin", Question.Origin.values, "where the question came from"),
    _choice("horizon", [b for b, _ in HORIZON_BUCKETS], "forecast horizon bucket"),
    _choice("contamination", ["on", "off"], "on (default) or off"),
    OpenApiParameter("from", OpenApiTypes.DATE, description="resolved on or after"),
    OpenApiParameter(
        "to", OpenApiTypes.DATE, description="resolved on or before; not before `from` (a reversed range is a 400)"
    ),
    OpenApiParameter("sort", OpenApiTypes.STR, description="rank (default), n, brier_index or a metric; '-' reverses"),
    _bounded("page", 1, MAX_PAGE, "page number (default 1)"),
    _bounded("page_size", 1, MAX_PAGE_SIZE, f"1..{MAX_PAGE_SIZE} (default 50)"),
]


class LeaderboardOutputSerializer(serializers.Serializer):
    view = serializers.DictField(help_text="The filters this table was computed for, normalised.")
    rank_metric = serializers.CharField(allow_null=True)
    standings_version = serializers.CharField(help_text="Version of the definitions the rows were computed under.")
    methods_version = serializers.CharField(help_text="Version of the definitions the site runs now.")
    columns = serializers.ListField(child=serializers.CharField(), help_text="The metrics the view holds.")
    count = serializers.IntegerField(min_value=0)
    page = serializers.IntegerField(min_value=1)
    pages = serializers.IntegerField(min_value=0)
    computed_at = serializers.DateTimeField(allow_null=True)
    results = serializers.ListField(child=serializers.DictField(), help_text="Ranked agents on this page.")
    baselines = serializers.ListField(
        child=serializers.DictField(),
        help_text="The platform's baselines on this page, each with its place among the ranked agents.",
    )


class AgentOutputSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    team = serializers.CharField()
    model = serializers.CharField(allow_blank=True)
    provider = serializers.CharField(allow_blank=True)
    cutoff = serializers.DateField(allow_null=True)
    cutoff_declared = serializers.BooleanField()
    tools = serializers.CharField(allow_blank=True)
    retired_at = serializers.DateTimeField(
        allow_null=True, help_text="When the agent was retired (it takes no more forecasts; its grades stay), or null."
    )
    standings = serializers.ListField(child=serializers.DictField(), help_text="One row per track and filter.")
    pairwise = serializers.ListField(
        child=serializers.DictField(),
        help_text="Against the agents ranked near it: the share of bootstrap resamples of shared questions it wins.",
    )
    recent_grades = serializers.ListField(
        child=serializers.DictField(), help_text="Up to 100 grades on questions whose outcome is public."
    )


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
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=_FILTERS, responses={200: LeaderboardOutputSerializer, 400: ErrorSerializer}, tags=["leaderboard"]
    )
    def get(self, request: Request) -> HttpResponse:
        try:
            view = parse_view(request.query_params)
        except DjangoValidationError as exc:
            raise exceptions.ValidationError(exc.message_dict) from exc
        sort = normalise_sort(request.query_params.get("sort"))
        number = _int(request, "page", 1, 1, MAX_PAGE)
        size = _int(request, "page_size", 50, 1, MAX_PAGE_SIZE)
        # Standings only change when they are written, which bumps the version: the answer is
        # cached per normalised request and version, as rendered JSON when JSON was asked for (the
        # usual case: no per-request encoding), else as data for the negotiated renderer.
        as_json = isinstance(getattr(request, "accepted_renderer", None), JSONRenderer)

        def build() -> Any:
            page = leaderboard_page(view=view, sort=sort, page=number, page_size=size)
            data = {
                "view": page.params,
                "rank_metric": page.rank_metric or None,
                "standings_version": page.standings_version,
                "methods_version": STANDINGS_VERSION,
                "columns": page.columns,
                "count": page.total,
                "page": page.page,
                "pages": page.pages,
                "computed_at": page.computed_at,
                "results": [e.as_dict() for e in page.agents],
                # The platform's baselines on this page, each with its place among the ranked agents.
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
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[OpenApiParameter("slug", {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"}, OpenApiParameter.PATH)],
        responses={200: AgentOutputSerializer, 404: ErrorSerializer},
        tags=["leaderboard"],
    )
    def get(self, request: Request, slug: str) -> Response:
        agent = Agent.objects.select_related("team").filter(slug=slug).first()
        if agent is None:
            raise exceptions.NotFound(f"No agent with slug {slug!r}.", code="not_found")
        standings = [
            {
                "track": s.track,
                "contamination_filter": s.contamination_filter,
                "rank": s.rank,
                "rank_metric": s.rank_metric or None,
                "provisional": s.provisional,
                "n": s.n,
                "brier_lo": s.brier_lo,
                "brier_hi": s.brier_hi,
                "brier_index": s.brier_index,
                "brier_adjusted_index": brier_index_of(s.brier_adjusted),
                "standings_version": s.standings_version,
                **{m: getattr(s, m) for m in METRICS},
                **{f"{m}_n": getattr(s, f"{m}_n") for m in METRICS},
            }
            for s in agent_standings(agent=agent)
        ]
        pairs = cached_for_version(f"agent-pairs:{agent.pk}", lambda: pairwise_confidence(agent=agent))
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
                # every per-grade score the standings read, named and scaled as they are there
                **{m: getattr(g, m) for m in METRIC_COLUMN if m != "accuracy"},
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
                "retired_at": agent.retired_at,
                "standings": standings,
                # Against its neighbours in the ranking: the share of bootstrap resamples of their
                # shared questions in which this agent's mean Brier is lower.
                "pairwise": [p.as_dict() for p in pairs],
                "recent_grades": grades,
            }
        )


class DifficultyOutputSerializer(serializers.Serializer):
    contamination_filter = serializers.BooleanField()
    order = serializers.CharField()
    count = serializers.IntegerField(min_value=0)
    page = serializers.IntegerField(min_value=1)
    pages = serializers.IntegerField(min_value=1)
    results = serializers.ListField(
        child=serializers.DictField(),
        help_text="question, title, type, track, difficulty (null outside the comparable group), agents, "
        "mean_brier, standings_version, computed_at",
    )


class QuestionDifficultyApi(APIView):
    """The question difficulties of the standings' fixed-effects fit (ForecastBench's question effects)."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[
            _choice("contamination", ["on", "off"], "on (default) or off"),
            _choice("order", list(DIFFICULTY_ORDERS), "hardest (default), easiest or question"),
            _bounded("page", 1, MAX_PAGE, "page number (default 1)"),
            _bounded("page_size", 1, MAX_PAGE_SIZE, f"1..{MAX_PAGE_SIZE} (default 100)"),
        ],
        responses={200: DifficultyOutputSerializer, 400: ErrorSerializer},
        tags=["leaderboard"],
    )
    def get(self, request: Request) -> Response:
        contamination = (request.query_params.get("contamination") or "on").strip() or "on"
        if contamination not in ("on", "off"):
            raise exceptions.ValidationError({"contamination": "contamination is 'on' (default) or 'off'."})
        order = (request.query_params.get("order") or "hardest").strip() or "hardest"
        if order not in DIFFICULTY_ORDERS:
            raise exceptions.ValidationError({"order": f"order is one of {', '.join(DIFFICULTY_ORDERS)}."})
        number = _int(request, "page", 1, 1, MAX_PAGE)
        size = _int(request, "page_size", 100, 1, MAX_PAGE_SIZE)

        def build() -> dict[str, Any]:
            rows = difficulty_list(contamination_filter=contamination == "on", order=order)
            total = rows.count()
            pages = max(1, -(-total // size))
            page = min(number, pages)
            return {
                "contamination_filter": contamination == "on",
                "order": order,
                "count": total,
                "page": page,
                "pages": pages,
                "results": [
                    {
                        "question": d.question_id,
                        "title": d.question.title,
                        "type": d.question.type,
                        "track": d.question.track,
                        "difficulty": d.effect,
                        "agents": d.agents,
                        "mean_brier": d.mean_brier,
                        "standings_version": d.standings_version,
                        "computed_at": d.computed_at,
                    }
                    for d in rows[(page - 1) * size : page * size]
                ],
            }

        key = f"difficulty-api:{contamination}:{order}:{number}:{size}"
        return Response(cached_for_version(key, build))
