"""/api/v1/evidence/: the temporal evidence gateway for agents (docs/design.md, the temporal evidence gateway).

Only agent tokens get in. Nothing here serializes a question's status, resolution, outcome or
hindsight graph, or a market's status or raw payload: the gateway shows the world as of a date.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingestion.selectors.evidence import SEARCH_MAX_LIMIT
from leaderboard.authentication import AgentTokenAuthentication, request_agent
from leaderboard.evidence_token_auth import EvidenceTokenAuthentication, request_evidence_grant
from leaderboard.models import Agent
from leaderboard.selectors.evidence import evidence_log_for_agent
from leaderboard.services.evidence import (
    EventFilters,
    EvidenceNotFound,
    EvidenceScope,
    evidence_article_read,
    evidence_articles_search,
    evidence_events,
    evidence_prices,
    evidence_scope_resolve,
)

EVENTS_MAX_LIMIT = 200


class IsAgent(BasePermission):
    message = "Evidence is for agents: authenticate with 'Authorization: Token <key>'."

    def has_permission(self, request: Request, view: Any) -> bool:
        if request_evidence_grant(request) is not None:
            if not getattr(view, "accepts_evidence_tokens", False):
                raise PermissionDenied(
                    "An evidence token reads evidence in its replay session only; use your API token."
                )
            return True
        return request_agent(request) is not None


class EvidenceApi(APIView):
    # A delivery's evidence token (hsev_…) is accepted too, inside its own replay session only.
    authentication_classes = [EvidenceTokenAuthentication, AgentTokenAuthentication]
    permission_classes = [IsAgent]
    accepts_evidence_tokens = True

    def agent(self, request: Request) -> Agent:
        grant = request_evidence_grant(request)
        agent = grant.agent if grant is not None else request_agent(request)
        if agent is None:  # the permission already refused; this keeps the type checker honest
            raise PermissionDenied(IsAgent.message)
        return agent

    def scope(self, request: Request, data: dict[str, Any], question_id: int | None = None) -> EvidenceScope:
        session_id = data.get("session")
        question_id = question_id if question_id is not None else data.get("question")
        grant = request_evidence_grant(request)
        if grant is not None:
            refusal = grant.refusal(session_id=session_id, question_id=question_id)
            if refusal:
                raise PermissionDenied(refusal)
            session_id = grant.session.pk
        try:
            return evidence_scope_resolve(
                agent=self.agent(request), session_id=session_id, question_id=question_id, now=timezone.now()
            )
        except EvidenceNotFound as exc:
            raise NotFound(str(exc)) from exc


class ScopeInput(serializers.Serializer):
    session = serializers.UUIDField(required=False, help_text="Replay session id: evidence as of its date.")
    question = serializers.IntegerField(required=False, min_value=1, help_text="Live question id: as of now.")


SCOPE_PARAMS = [
    OpenApiParameter("session", str, description="Replay session id (evidence as of its simulated date)."),
    OpenApiParameter("question", int, description="Live question id (evidence as of now)."),
]


class ArticleSearchApi(EvidenceApi):
    class InputSerializer(ScopeInput):
        q = serializers.CharField(max_length=500, trim_whitespace=True)
        limit = serializers.IntegerField(required=False, default=10, min_value=1)
        offset = serializers.IntegerField(required=False, default=0, min_value=0)

    class ResultSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        title = serializers.CharField()
        url = serializers.CharField()
        source = serializers.CharField(allow_null=True)  # type: ignore[assignment]
        published_at = serializers.DateTimeField()
        snippet = serializers.CharField(help_text="HTML-escaped text with matches in <mark> tags.")
        score = serializers.FloatField()

    @extend_schema(
        operation_id="evidence_articles_search",
        parameters=[
            OpenApiParameter("q", str, required=True, description='Web-search syntax: words, "phrase", or, -word.'),
            *SCOPE_PARAMS,
            OpenApiParameter("limit", int, description=f"At most {SEARCH_MAX_LIMIT} (larger values are capped)."),
            OpenApiParameter("offset", int),
        ],
        responses={200: None},
    )
    def get(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        scope = self.scope(request, params)
        limit = min(params["limit"], SEARCH_MAX_LIMIT)
        page = evidence_articles_search(
            agent=self.agent(request),
            scope=scope,
            query=params["q"],
            limit=limit,
            offset=params["offset"],
            now=timezone.now(),
        )
        return Response(
            {
                "as_of": scope.as_of,
                "count": page.total,
                # False when more than SEARCH_CANDIDATES matched: count is then that lower bound.
                "count_is_exact": page.total_is_exact,
                "limit": limit,
                "offset": params["offset"],
                "results": self.ResultSerializer(page.results, many=True).data,
            }
        )


class ArticleReadApi(EvidenceApi):
    class EvidenceArticleSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        title = serializers.CharField()
        url = serializers.CharField()
        source = serializers.CharField(source="source.name", allow_null=True, default=None)  # type: ignore[assignment]
        author = serializers.CharField()
        language = serializers.CharField()
        published_at = serializers.DateTimeField()
        summary = serializers.CharField()
        body = serializers.CharField()

    @extend_schema(
        operation_id="evidence_article_read", parameters=SCOPE_PARAMS, responses={200: EvidenceArticleSerializer}
    )
    def get(self, request: Request, article_id: int) -> Response:
        data = ScopeInput(data=request.query_params)
        data.is_valid(raise_exception=True)
        scope = self.scope(request, data.validated_data)
        try:
            article = evidence_article_read(
                agent=self.agent(request), scope=scope, article_id=article_id, now=timezone.now()
            )
        except EvidenceNotFound as exc:
            raise NotFound(str(exc)) from exc
        return Response({"as_of": scope.as_of, **self.EvidenceArticleSerializer(article).data})


class EventsApi(EvidenceApi):
    class InputSerializer(ScopeInput):
        subject = serializers.CharField(required=False, max_length=3, min_length=3)
        object = serializers.CharField(required=False, max_length=3, min_length=3)
        relation = serializers.CharField(required=False, max_length=3, min_length=2)
        start = serializers.DateField(required=False)
        end = serializers.DateField(required=False)
        aggregate = serializers.ChoiceField(required=False, choices=["count", "relation", "entity"])
        role = serializers.ChoiceField(required=False, default="both", choices=["head", "tail", "both"])
        limit = serializers.IntegerField(required=False, default=30, min_value=1)
        offset = serializers.IntegerField(required=False, default=0, min_value=0)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if attrs.get("start") and attrs.get("end") and attrs["start"] > attrs["end"]:
                raise serializers.ValidationError({"end": "end must not be before start."})
            return attrs

    class EventSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        date = serializers.DateField()
        subject = serializers.CharField()
        object = serializers.CharField()
        relation = serializers.CharField()
        relation_root = serializers.CharField()
        article_urls = serializers.ListField(child=serializers.CharField())

    @extend_schema(
        operation_id="evidence_events",
        parameters=[
            *SCOPE_PARAMS,
            OpenApiParameter("subject", str, description="ISO alpha-3 head entity."),
            OpenApiParameter("object", str, description="ISO alpha-3 tail entity."),
            OpenApiParameter("relation", str, description="CAMEO code; a 2-digit code includes its children."),
            OpenApiParameter("start", str, description="First day (YYYY-MM-DD), inclusive."),
            OpenApiParameter("end", str, description="Last day (YYYY-MM-DD), inclusive."),
            OpenApiParameter("aggregate", str, enum=["count", "relation", "entity"]),
            OpenApiParameter("role", str, enum=["head", "tail", "both"], description="aggregate=entity only."),
            OpenApiParameter("limit", int, description=f"At most {EVENTS_MAX_LIMIT} (capped)."),
            OpenApiParameter("offset", int),
        ],
        responses={200: None},
    )
    def get(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        scope = self.scope(request, params)
        limit = min(params["limit"], EVENTS_MAX_LIMIT)
        result = evidence_events(
            agent=self.agent(request),
            scope=scope,
            filters=EventFilters(
                subject=params.get("subject"),
                object=params.get("object"),
                relation=params.get("relation"),
                start=params.get("start"),
                end=params.get("end"),
            ),
            aggregate=params.get("aggregate"),
            role=params["role"],
            limit=limit,
            offset=params["offset"],
            now=timezone.now(),
        )
        body: dict[str, Any] = {"as_of": scope.as_of, **result}
        if "events" in result:
            body.update(limit=limit, offset=params["offset"])
            body["events"] = self.EventSerializer(result["events"], many=True).data
        return Response(body)


class PricesApi(EvidenceApi):
    class InputSerializer(serializers.Serializer):
        session = serializers.UUIDField(required=False)

    class PointSerializer(serializers.Serializer):
        time = serializers.DateTimeField()
        outcome = serializers.CharField()
        probability = serializers.FloatField()

    @extend_schema(operation_id="evidence_prices", parameters=SCOPE_PARAMS[:1], responses={200: None})
    def get(self, request: Request, question_id: int) -> Response:
        data = self.InputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        scope = self.scope(request, data.validated_data, question_id=question_id)
        market, points = evidence_prices(agent=self.agent(request), scope=scope, now=timezone.now())
        return Response(
            {
                "as_of": scope.as_of,
                "question": question_id,
                # Identity only: a market's status, close time and raw payload can reveal the outcome.
                "market": None
                if market is None
                else {"id": market.pk, "platform": market.platform, "title": market.title, "outcomes": market.outcomes},
                "prices": self.PointSerializer(points, many=True).data,
            }
        )


class LogPagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 200


class EvidenceLogApi(EvidenceApi):
    accepts_evidence_tokens = False

    class EvidenceAccessSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        kind = serializers.CharField()
        session = serializers.UUIDField(source="session_id", allow_null=True)
        question = serializers.IntegerField(source="question_id", allow_null=True)
        article = serializers.IntegerField(source="article_id", allow_null=True)
        query = serializers.JSONField()
        item_ids = serializers.JSONField()
        as_of = serializers.DateTimeField()
        created_at = serializers.DateTimeField()

    @extend_schema(operation_id="evidence_log", responses={200: EvidenceAccessSerializer(many=True)})
    def get(self, request: Request) -> Response:
        paginator = LogPagination()
        page = paginator.paginate_queryset(evidence_log_for_agent(self.agent(request)), request, view=self)
        return paginator.get_paginated_response(self.EvidenceAccessSerializer(page, many=True).data)
