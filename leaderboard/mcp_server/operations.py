"""What each MCP tool does: the REST API's work, done by the same services, selectors and serializers.

Every function takes the calling agent's principal and the tool's arguments as the caller sent them,
validates them with the matching REST endpoint's input serializer (so the same inputs are refused
with the same messages), calls the same service and returns the REST endpoint's JSON body. Errors
are raised as the REST API raises them; ``tools`` renders them through the API's exception handler,
so a tool error carries the code and message the REST endpoint would have answered with.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from django.utils import timezone
from rest_framework import exceptions, serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.settings import api_settings

from ingestion.selectors.evidence import SEARCH_MAX_LIMIT
from leaderboard.apis.common import api_exception
from leaderboard.apis.evidence import (
    EVENTS_MAX_LIMIT,
    ArticleReadApi,
    ArticleSearchApi,
    EventsApi,
    PricesApi,
    ScopeInput,
)
from leaderboard.apis.forecasts import ForecastInputSerializer, forecast_output
from leaderboard.apis.questions import QuestionDetailOutputSerializer, QuestionOutputSerializer
from leaderboard.apis.replays import ReplayInputSerializer, ReplayOutputSerializer
from leaderboard.authentication import AgentPrincipal
from leaderboard.models import Forecast
from leaderboard.selectors.questions import question_get, question_list
from leaderboard.services.errors import ServiceError
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
from leaderboard.services.forecasts import forecast_submit, replay_session_open


def _given(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments the caller gave: an omitted or null argument takes the REST endpoint's default."""
    return {name: value for name, value in arguments.items() if value is not None}


def _validated(serializer: serializers.Serializer) -> dict[str, Any]:
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _json(body: dict[str, Any]) -> dict[str, Any]:
    """The body exactly as the REST API renders it (dates in the API's format)."""
    loaded: dict[str, Any] = json.loads(JSONRenderer().render(body))
    return loaded


def _scope(principal: AgentPrincipal, params: dict[str, Any], question_id: int | None = None) -> EvidenceScope:
    try:
        return evidence_scope_resolve(
            agent=principal.agent,
            session_id=params.get("session"),
            question_id=question_id if question_id is not None else params.get("question"),
            now=timezone.now(),
        )
    except EvidenceNotFound as exc:
        raise exceptions.NotFound(str(exc)) from exc


# ------------------------------------------------------------------------------------ questions


class QuestionPageInput(serializers.Serializer):
    limit = serializers.IntegerField(required=False, min_value=1, default=api_settings.PAGE_SIZE)
    offset = serializers.IntegerField(required=False, min_value=0, default=0)


class QuestionInput(serializers.Serializer):
    question = serializers.IntegerField(min_value=1)


class ArticleInput(serializers.Serializer):
    article = serializers.IntegerField(min_value=1)


def list_questions(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    given = _given(arguments)
    page = _validated(QuestionPageInput(data={k: v for k, v in given.items() if k in ("limit", "offset")}))
    filters = {k: v for k, v in given.items() if k not in ("limit", "offset")}
    if isinstance(filters.get("origin"), str):
        filters["origin"] = [filters["origin"]]
    questions = question_list(filters=filters, user=principal)
    offset, limit = page["offset"], page["limit"]
    return _json(
        {
            "count": questions.count(),
            "limit": limit,
            "offset": offset,
            "results": QuestionOutputSerializer(questions[offset : offset + limit], many=True).data,
        }
    )


def get_question(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    question_id = _validated(QuestionInput(data=_given(arguments)))["question"]
    question = question_get(question_id=question_id, user=principal)
    if question is None:
        raise exceptions.NotFound(f"question {question_id} does not exist", code="not_found")
    context = {"request": SimpleNamespace(user=principal)}
    return _json(QuestionDetailOutputSerializer(question, context=context).data)


def open_replay_session(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    question_id = _validated(ReplayInputSerializer(data=_given(arguments)))["question"]
    try:
        session, created = replay_session_open(agent=principal.agent, question_id=question_id)
    except ServiceError as exc:
        raise api_exception(exc) from exc
    return _json({**ReplayOutputSerializer(session).data, "created": created})


# ------------------------------------------------------------------------------------ evidence


def search_articles(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    params = _validated(ArticleSearchApi.InputSerializer(data=_given(arguments)))
    scope = _scope(principal, params)
    limit = min(params["limit"], SEARCH_MAX_LIMIT)
    page = evidence_articles_search(
        agent=principal.agent, scope=scope, query=params["q"], limit=limit, offset=params["offset"], now=timezone.now()
    )
    return _json(
        {
            "as_of": scope.as_of,
            "count": page.total,
            "count_is_exact": page.total_is_exact,
            "limit": limit,
            "offset": params["offset"],
            "results": ArticleSearchApi.ResultSerializer(page.results, many=True).data,
        }
    )


def read_article(principal: AgentPrincipal, *, article: Any = None, **arguments: Any) -> dict[str, Any]:
    article_id = _validated(ArticleInput(data=_given({"article": article})))["article"]
    scope = _scope(principal, _validated(ScopeInput(data=_given(arguments))))
    try:
        found = evidence_article_read(agent=principal.agent, scope=scope, article_id=article_id, now=timezone.now())
    except EvidenceNotFound as exc:
        raise exceptions.NotFound(str(exc)) from exc
    return _json({"as_of": scope.as_of, **ArticleReadApi.EvidenceArticleSerializer(found).data})


def query_events(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    params = _validated(EventsApi.InputSerializer(data=_given(arguments)))
    scope = _scope(principal, params)
    limit = min(params["limit"], EVENTS_MAX_LIMIT)
    result = evidence_events(
        agent=principal.agent,
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
        body["events"] = EventsApi.EventSerializer(result["events"], many=True).data
    return _json(body)


def price_history(principal: AgentPrincipal, *, question: Any = None, **arguments: Any) -> dict[str, Any]:
    question_id = _validated(QuestionInput(data=_given({"question": question})))["question"]
    scope = _scope(principal, _validated(PricesApi.InputSerializer(data=_given(arguments))), question_id=question_id)
    market, points = evidence_prices(agent=principal.agent, scope=scope, now=timezone.now())
    return _json(
        {
            "as_of": scope.as_of,
            "question": question_id,
            # Identity only, as in the REST answer: a market's status and payload can reveal the outcome.
            "market": None
            if market is None
            else {"id": market.pk, "platform": market.platform, "title": market.title, "outcomes": market.outcomes},
            "prices": PricesApi.PointSerializer(points, many=True).data,
        }
    )


# ------------------------------------------------------------------------------------ forecasts


def submit_forecast(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    body = {name: value for name, value in arguments.items() if value is not None or name == "session"}
    item = ForecastInputSerializer().check(body)
    try:
        result = forecast_submit(
            agent=principal.agent,
            question_id=item.question_id,
            session_id=item.session_id,
            prediction=item.prediction,
            sources=item.sources,
            rationale=item.rationale,
            graph=item.graph,
            idempotency_key=item.idempotency_key,
            channel=Forecast.Channel.MCP,
        )
    except ServiceError as exc:
        raise api_exception(exc) from exc
    return _json({**forecast_output(result.forecast), "created": result.created})
