"""What each MCP tool does: the REST API's work, done by the same services, selectors and serializers.

Every function takes the calling agent's principal and the tool's arguments as the caller sent them,
validates them with the matching REST endpoint's input serializer (so the same inputs are refused
with the same messages), calls the same service and returns the REST endpoint's JSON body. Errors
are raised as the REST API raises them; ``calls`` renders them through the API's exception handler,
so a tool error carries the code and message the REST endpoint would have answered with.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from rest_framework import exceptions, serializers
from rest_framework.renderers import JSONRenderer

from leaderboard.apis.common import SessionIdField, api_exception, id_field
from leaderboard.apis.evidence import (
    ArticleSearchApi,
    EventsApi,
    ScopeInput,
    SessionInput,
    article_read_answer,
    articles_search_answer,
    events_answer,
    evidence_scope,
    prices_answer,
)
from leaderboard.apis.forecasts import ForecastInputSerializer, forecast_output
from leaderboard.apis.questions import QuestionDetailOutputSerializer, QuestionListQuery, QuestionOutputSerializer
from leaderboard.apis.replays import ReplayInputSerializer, ReplayOutputSerializer
from leaderboard.authentication import AgentPrincipal
from leaderboard.models import Forecast
from leaderboard.selectors.questions import question_get, question_list
from leaderboard.services.errors import ServiceError
from leaderboard.services.evidence import EvidenceScope
from leaderboard.services.forecasts import forecast_submit
from leaderboard.services.replay_sessions import replay_session_close, replay_session_open


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


# ------------------------------------------------------------------------------------ questions


class QuestionInput(serializers.Serializer):
    question = id_field("The question's id.")


class ReplayCloseInput(serializers.Serializer):
    session = SessionIdField(help_text="Your replay session's id.")


class ArticleReadInput(ScopeInput):
    article = id_field("The article's id.")


class PriceHistoryInput(SessionInput):
    question = id_field("The question's id.")


def list_questions(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    given = _given(arguments)
    if isinstance(given.get("origin"), str):
        given["origin"] = [given["origin"]]
    query = QuestionListQuery(data=given)
    query.is_valid(raise_exception=True)
    questions = question_list(filters=query.filters(), user=principal)
    offset, limit = query.validated_data["offset"], query.validated_data["limit"]
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


def close_replay_session(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    session_id = _validated(ReplayCloseInput(data=_given(arguments)))["session"]
    try:
        session = replay_session_close(agent=principal.agent, session_id=session_id)
    except ServiceError as exc:
        raise api_exception(exc) from exc
    return _json(ReplayOutputSerializer(session).data)


# ------------------------------------------------------------------------------------ evidence


def _scope(principal: AgentPrincipal, params: dict[str, Any]) -> EvidenceScope:
    return evidence_scope(agent=principal.agent, session=params.get("session"), question=params.get("question"))


def search_articles(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    params = _validated(ArticleSearchApi.InputSerializer(data=_given(arguments)))
    return _json(articles_search_answer(agent=principal.agent, scope=_scope(principal, params), params=params))


def read_article(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    params = _validated(ArticleReadInput(data=_given(arguments)))
    scope = _scope(principal, params)
    return _json(article_read_answer(agent=principal.agent, scope=scope, article_id=params["article"]))


def query_events(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    params = _validated(EventsApi.InputSerializer(data=_given(arguments)))
    return _json(events_answer(agent=principal.agent, scope=_scope(principal, params), params=params))


def price_history(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    params = _validated(PriceHistoryInput(data=_given(arguments)))
    scope = _scope(principal, params)
    return _json(prices_answer(agent=principal.agent, scope=scope, question_id=params["question"]))


# ------------------------------------------------------------------------------------ forecasts


def submit_forecast(principal: AgentPrincipal, **arguments: Any) -> dict[str, Any]:
    body = {name: value for name, value in arguments.items() if value is not None or name == "session"}
    item = ForecastInputSerializer().check(body)
    try:
        # ForecastInput's fields are forecast_submit's arguments, by name.
        result = forecast_submit(agent=principal.agent, channel=Forecast.Channel.MCP, **vars(item))
    except ServiceError as exc:
        raise api_exception(exc) from exc
    return _json({**forecast_output(result.forecast), "created": result.created})
