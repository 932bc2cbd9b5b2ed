"""/api/v1/evidence/: the temporal evidence gateway for agents (docs/design.md, the temporal evidence gateway).

Only agent tokens get in. Nothing here serializes a question's status, resolution, outcome or
hindsight graph, or a market's status or raw payload: the gateway shows the world as of a date.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingestion.reference_data import cameo_first_level, cameo_second_level
from ingestion.selectors.archives import source_provenance
from ingestion.selectors.evidence import SEARCH_MAX_LIMIT
from leaderboard.apis.common import (
    ApiPagination,
    ErrorSerializer,
    PageQuery,
    SessionIdField,
    id_field,
    limit_field,
    offset_field,
    page_of,
)
from leaderboard.authentication import AgentTokenAuthentication, request_agent
from leaderboard.evidence_token_auth import EvidenceTokenAuthentication, request_evidence_grant
from leaderboard.models import Agent
from leaderboard.selectors.evidence import evidence_log_for_agent
from leaderboard.services.evidence import (
    EventFilters,
    EvidenceForbidden,
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
        return evidence_scope(agent=self.agent(request), session=session_id, question=question_id)


# A gateway query taking its parameters from the query string (``InputSerializer``), in the scope
# they name; ``answer`` gives the body. (A comment, not a docstring: it would show in the API schema.)
class EvidenceQueryApi(EvidenceApi):
    InputSerializer: type[serializers.Serializer]

    def answer(self, *, agent: Agent, scope: EvidenceScope, params: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def get(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        scope = self.scope(request, params)
        return Response(self.answer(agent=self.agent(request), scope=scope, params=params))


class SessionInput(serializers.Serializer):
    session = SessionIdField(required=False, help_text="Replay session id: evidence as of its simulated date.")


class ScopeInput(SessionInput):
    question = id_field("Live question id: evidence as of now.", required=False)


# A gateway call's possible errors besides 200 (401: no or bad token; 403: an evidence token outside
# its session; 404: unknown or not visible). What the schema cannot say is written beside 400 and 403.
ERRORS = {
    400: OpenApiResponse(
        ErrorSerializer,
        description="Invalid query; the message names the parameter. Besides what the schema says: a query needs "
        "its scope, `session` (your replay session: evidence as of its simulated date) or `question` (a live "
        "question: evidence as of now), and when both are given they must agree (a session of another question "
        "is refused); text may not hold a NUL character.",
    ),
    401: ErrorSerializer,
    403: OpenApiResponse(
        ErrorSerializer,
        description="Outside what this caller may read: an evidence token used beyond its one session; a live "
        "question read as of now while your agent holds an open replay session, unless it forecasts that "
        "question; or the agent's access has ended (code `agent_retired`, `owner_deleted`, `owner_deactivated`, "
        "`not_a_member`).",
    ),
    404: ErrorSerializer,
    429: ErrorSerializer,
}


class ArticleHitSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    url = serializers.CharField()
    source = serializers.CharField(allow_null=True)  # type: ignore[assignment]
    published_at = serializers.DateTimeField()
    snippet = serializers.CharField(help_text="HTML-escaped text with matches in <mark> tags.")
    score = serializers.FloatField()


class ArticleSearchOutputSerializer(serializers.Serializer):
    as_of = serializers.DateTimeField()
    count = serializers.IntegerField(min_value=0)
    count_is_exact = serializers.BooleanField(
        help_text="False when more articles matched than are ranked: count is then a lower bound."
    )
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
    results = ArticleHitSerializer(many=True)


class ArticleSearchInput(ScopeInput):
    q = serializers.CharField(
        max_length=500, trim_whitespace=True, help_text='Web-search syntax: words, "phrase", or, -word.'
    )
    limit = limit_field(default=10, maximum=SEARCH_MAX_LIMIT)
    offset = offset_field()


@extend_schema_view(
    get=extend_schema(
        operation_id="evidence_articles_search",
        parameters=[ArticleSearchInput],
        responses={200: ArticleSearchOutputSerializer, **ERRORS},
    )
)
class ArticleSearchApi(EvidenceQueryApi):
    InputSerializer = ArticleSearchInput

    def answer(self, *, agent: Agent, scope: EvidenceScope, params: dict[str, Any]) -> dict[str, Any]:
        return articles_search_answer(agent=agent, scope=scope, params=params)


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
        license = serializers.CharField(
            help_text="The item's licence as its archive states it (e.g. CC-BY-SA-4.0); empty for feed articles."
        )
        attribution = serializers.SerializerMethodField(
            help_text="Whom to credit when reusing the text (an archive's attribution); empty for feed articles."
        )
        topic_path = serializers.SerializerMethodField(
            help_text="The archive's story headings the item is filed under, outermost first (the Wikipedia "
            'Current events portal\'s linked story articles, e.g. "2025 Nepalese Gen Z protests"); empty when '
            "the archive has none."
        )

        def get_attribution(self, article: Any) -> str:
            return source_provenance(article.source).attribution

        def get_topic_path(self, article: Any) -> list[str]:
            extra = article.extra if isinstance(article.extra, dict) else {}
            path = extra.get("topic_path")
            return [str(t) for t in path if isinstance(t, str)] if isinstance(path, list) else []

    class OutputSerializer(EvidenceArticleSerializer):
        as_of = serializers.DateTimeField()

    @extend_schema(
        operation_id="evidence_article_read", parameters=[ScopeInput], responses={200: OutputSerializer, **ERRORS}
    )
    def get(self, request: Request, article_id: int) -> Response:
        data = ScopeInput(data=request.query_params)
        data.is_valid(raise_exception=True)
        scope = self.scope(request, data.validated_data)
        return Response(article_read_answer(agent=self.agent(request), scope=scope, article_id=article_id))


class EventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    date = serializers.DateField()
    subject = serializers.CharField()
    object = serializers.CharField()
    relation = serializers.CharField()
    relation_root = serializers.CharField()
    article_urls = serializers.ListField(child=serializers.CharField())


class EventsOutputSerializer(serializers.Serializer):
    as_of = serializers.DateTimeField()
    count = serializers.IntegerField(required=False, help_text="Matching events (a list or aggregate=count).")
    events = EventSerializer(many=True, required=False, help_text="Without aggregate: newest first.")
    limit = serializers.IntegerField(required=False)
    offset = serializers.IntegerField(required=False)
    distribution = serializers.DictField(
        child=serializers.IntegerField(), required=False, help_text="aggregate=relation or entity: code -> events."
    )


class EventsInput(ScopeInput):
    subject = serializers.RegexField(
        r"^[A-Za-z]{3}$", required=False, trim_whitespace=False, help_text="ISO 3166-1 alpha-3 head entity."
    )
    object = serializers.RegexField(
        r"^[A-Za-z]{3}$", required=False, trim_whitespace=False, help_text="ISO 3166-1 alpha-3 tail entity."
    )
    relation = serializers.ChoiceField(
        choices=sorted([*cameo_first_level(), *cameo_second_level()]),
        required=False,
        help_text="CAMEO code; a first-level (2-digit) code includes its children.",
        error_messages={
            "invalid_choice": "'{input}' is not a first-level (2-digit) or second-level (3-digit) CAMEO code."
        },
    )
    start = serializers.DateField(required=False)
    end = serializers.DateField(required=False)
    aggregate = serializers.ChoiceField(required=False, choices=["count", "relation", "entity"])
    role = serializers.ChoiceField(required=False, default="both", choices=["head", "tail", "both"])
    limit = limit_field(default=30, maximum=EVENTS_MAX_LIMIT)
    offset = offset_field()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("start") and attrs.get("end") and attrs["start"] > attrs["end"]:
            raise serializers.ValidationError({"end": "end must not be before start."})
        return attrs


@extend_schema_view(
    get=extend_schema(
        operation_id="evidence_events", parameters=[EventsInput], responses={200: EventsOutputSerializer, **ERRORS}
    )
)
class EventsApi(EvidenceQueryApi):
    InputSerializer = EventsInput

    def answer(self, *, agent: Agent, scope: EvidenceScope, params: dict[str, Any]) -> dict[str, Any]:
        return events_answer(agent=agent, scope=scope, params=params)


class PricePointSerializer(serializers.Serializer):
    time = serializers.DateTimeField()
    outcome = serializers.CharField()
    probability = serializers.FloatField()


class MarketIdentitySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    platform = serializers.CharField()
    title = serializers.CharField()
    outcomes = serializers.ListField(child=serializers.CharField())


class PricesOutputSerializer(serializers.Serializer):
    as_of = serializers.DateTimeField()
    question = serializers.IntegerField()
    market = MarketIdentitySerializer(
        allow_null=True, help_text="Identity only: status and payload could reveal the outcome."
    )
    prices = PricePointSerializer(many=True)


class PricesApi(EvidenceApi):
    @extend_schema(
        operation_id="evidence_prices",
        parameters=[SessionInput],
        responses={200: PricesOutputSerializer, **ERRORS},
    )
    def get(self, request: Request, question_id: int) -> Response:
        data = SessionInput(data=request.query_params)
        data.is_valid(raise_exception=True)
        scope = self.scope(request, data.validated_data, question_id=question_id)
        return Response(prices_answer(agent=self.agent(request), scope=scope, question_id=question_id))


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

    @extend_schema(
        operation_id="evidence_log",
        parameters=[PageQuery],
        responses={200: page_of(EvidenceAccessSerializer, "EvidenceAccessPage"), **ERRORS},
    )
    def get(self, request: Request) -> Response:
        paginator = ApiPagination()
        page = paginator.paginate_queryset(evidence_log_for_agent(self.agent(request)), request, view=self)
        return paginator.get_paginated_response(self.EvidenceAccessSerializer(page, many=True).data)


# ------------------------------------------------------------------------------------ answers
# The gateway's answers for validated parameters in a resolved scope, shared by these views and the
# MCP tools.


def evidence_scope(*, agent: Agent, session: Any = None, question: Any = None) -> EvidenceScope:
    """Where the query stands; an unknown (or someone else's) session or question is a 404, a scope the
    replay rule refuses (an open session elsewhere) a 403."""
    try:
        return evidence_scope_resolve(agent=agent, session_id=session, question_id=question, now=timezone.now())
    except EvidenceNotFound as exc:
        raise NotFound(str(exc)) from exc
    except EvidenceForbidden as exc:
        raise PermissionDenied(str(exc)) from exc


def articles_search_answer(*, agent: Agent, scope: EvidenceScope, params: dict[str, Any]) -> dict[str, Any]:
    limit = params["limit"]  # validated: 1..SEARCH_MAX_LIMIT
    page = evidence_articles_search(
        agent=agent, scope=scope, query=params["q"], limit=limit, offset=params["offset"], now=timezone.now()
    )
    return {
        "as_of": scope.as_of,
        "count": page.total,
        # False when more than SEARCH_CANDIDATES matched: count is then that lower bound.
        "count_is_exact": page.total_is_exact,
        "limit": limit,
        "offset": params["offset"],
        "results": ArticleHitSerializer(page.results, many=True).data,
    }


def article_read_answer(*, agent: Agent, scope: EvidenceScope, article_id: int) -> dict[str, Any]:
    try:
        article = evidence_article_read(agent=agent, scope=scope, article_id=article_id, now=timezone.now())
    except EvidenceNotFound as exc:
        raise NotFound(str(exc)) from exc
    return {"as_of": scope.as_of, **ArticleReadApi.EvidenceArticleSerializer(article).data}


def events_answer(*, agent: Agent, scope: EvidenceScope, params: dict[str, Any]) -> dict[str, Any]:
    limit = params["limit"]  # validated: 1..EVENTS_MAX_LIMIT
    result = evidence_events(
        agent=agent,
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
        body["events"] = EventSerializer(result["events"], many=True).data
    return body


def prices_answer(*, agent: Agent, scope: EvidenceScope, question_id: int) -> dict[str, Any]:
    market, points = evidence_prices(agent=agent, scope=scope, now=timezone.now())
    return {
        "as_of": scope.as_of,
        "question": question_id,
        # Identity only: a market's status, close time and raw payload can reveal the outcome.
        "market": None
        if market is None
        else {"id": market.pk, "platform": market.platform, "title": market.title, "outcomes": market.outcomes},
        "prices": PricePointSerializer(points, many=True).data,
    }
