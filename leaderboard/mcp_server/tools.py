"""The MCP server and its tools: names, JSON schemas and descriptions.

Each tool hands its arguments, unchanged, to an operation in ``operations`` (which validates them
with the REST API's serializers). The schemas below describe the arguments to the client; they are
published with ``WithJsonSchema`` over ``Any`` on purpose, so that a wrong value reaches the API's
own validation and is refused with the API's message rather than with a different one.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import WithJsonSchema

from ingestion.models import Question
from ingestion.selectors.evidence import SEARCH_MAX_LIMIT
from leaderboard.apis.common import LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT, MAX_OFFSET
from leaderboard.apis.evidence import EVENTS_MAX_LIMIT
from leaderboard.mcp_server import operations
from leaderboard.mcp_server.calls import call

INSTRUCTIONS = """\
Hindsight is a forecasting leaderboard. Forecasts are graded on outcome, evidence and reasoning.
Live questions (track "live", status "open") are forecast now, with evidence as of now: pass
question=<id> to the evidence tools. Replay questions (track "replay") are already resolved: call
open_replay_session first, then pass session=<id> to every evidence tool and to submit_forecast;
evidence is then answered strictly before the session's simulated date, which never changes.
Do replay questions first, in order of simulated date, each to its forecast, and close
(close_replay_session) any session you will not forecast in: while one is open without your
forecast, evidence as of now answers only for live questions you already forecast.
Articles you read with read_article count toward your evidence score; cite them in sources.
Errors are tool errors whose JSON carries the HTTP-equivalent status, a code and a message."""


def _schema(description: str, **schema: Any) -> WithJsonSchema:
    return WithJsonSchema({**schema, "description": description})


def _limit_schema(items: str, *, default: int, maximum: int) -> WithJsonSchema:
    """A page size as the REST endpoint bounds it (a larger value is refused, not cut down)."""
    return _schema(
        f"{items} per page (default {default}, at most {maximum}).", type="integer", minimum=1, maximum=maximum
    )


Session = Annotated[
    Any,
    _schema(
        "Your replay session id (from open_replay_session): answers as of its simulated date.",
        type="string",
        format="uuid",
    ),
]
LiveQuestion = Annotated[
    Any, _schema("A live question's id: answers as of now. Replay questions need session instead.", type="integer")
]
Offset = Annotated[Any, _schema("Items to skip (default 0).", type="integer", minimum=0, maximum=MAX_OFFSET)]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


async def list_questions(
    ctx: Context[Any, Any],
    status: Annotated[Any, _schema("Lifecycle status.", type="string", enum=Question.Status.values)] = None,
    track: Annotated[Any, _schema("live or replay.", type="string", enum=Question.Track.values)] = None,
    type: Annotated[Any, _schema("Question type.", type="string", enum=Question.Type.values)] = None,
    domain: Annotated[Any, _schema("Domain, case-insensitive.", type="string")] = None,
    origin: Annotated[
        Any,
        _schema(
            "Where questions come from; a list allows several. 'imported' questions have no evidence corpus.",
            anyOf=[
                {"type": "string", "enum": Question.Origin.values},
                {"type": "array", "items": {"type": "string", "enum": Question.Origin.values}},
            ],
        ),
    ] = None,
    limit: Annotated[Any, _limit_schema("Questions", default=LIST_DEFAULT_LIMIT, maximum=LIST_MAX_LIMIT)] = None,
    offset: Offset = None,
) -> CallToolResult:
    """List forecasting questions (never drafts), earliest deadline first: {count, limit, offset, results}.

    Open live questions (track=live, status=open) take forecasts now; replay questions
    (track=replay, status=resolved) are forecast inside a replay session. Page with offset.
    """
    return await call(
        ctx,
        operations.list_questions,
        status=status,
        track=track,
        type=type,
        domain=domain,
        origin=origin,
        limit=limit,
        offset=offset,
    )


async def get_question(
    ctx: Context[Any, Any], question: Annotated[Any, _schema("The question's id.", type="integer")]
) -> CallToolResult:
    """One question with every field (type-specific ones such as options, bounds, granularity or
    subject/object); its outcome and resolution history appear only once they are public."""
    return await call(ctx, operations.get_question, question=question)


async def open_replay_session(
    ctx: Context[Any, Any], question: Annotated[Any, _schema("A replay-track question's id.", type="integer")]
) -> CallToolResult:
    """Open your replay session on a replay question (or get the one you already have):
    {id, question, agent, simulated_date, created_at, closed_at, created}.

    Every evidence tool called with session=<id> answers strictly before simulated_date, and a
    forecast on the question must name the session. The date never changes.
    While the session is open and holds no forecast of yours, evidence as of now (question=<id>)
    answers only for live questions you already forecast; others are refused (permission_denied).
    Forecast in the session or close it (close_replay_session). Anything you are served dated at
    or after simulated_date before you forecast here counts as a leak: do replay questions first,
    in order of simulated date.
    """
    return await call(ctx, operations.open_replay_session, question=question)


async def close_replay_session(
    ctx: Context[Any, Any],
    session: Annotated[
        Any, _schema("Your replay session id (from open_replay_session).", type="string", format="uuid")
    ],
) -> CallToolResult:
    """Close your replay session: {id, question, agent, simulated_date, created_at, closed_at}.
    It takes no more forecasts (those made stand) and no longer limits your evidence as of now;
    closing again changes nothing. Close every session you will not forecast in."""
    return await call(ctx, operations.close_replay_session, session=session)


async def search_articles(
    ctx: Context[Any, Any],
    q: Annotated[
        Any, _schema('Web-search syntax: words (all must match), "a phrase", or, -word.', type="string", maxLength=500)
    ],
    session: Session = None,
    question: LiveQuestion = None,
    limit: Annotated[Any, _limit_schema("Results", default=10, maximum=SEARCH_MAX_LIMIT)] = None,
    offset: Offset = None,
) -> CallToolResult:
    """Ranked full-text search of the news archive as of a date: only articles published strictly
    before it (session: its simulated date; question: now). Returns {as_of, count, count_is_exact,
    limit, offset, results: [{id, title, url, source, published_at, snippet, score}]}, matches in
    <mark>. Logged in your evidence access log."""
    return await call(
        ctx, operations.search_articles, q=q, session=session, question=question, limit=limit, offset=offset
    )


async def read_article(
    ctx: Context[Any, Any],
    article: Annotated[Any, _schema("The article's id (from search_articles).", type="integer")],
    session: Session = None,
    question: LiveQuestion = None,
) -> CallToolResult:
    """The full text of an article visible as of the date (an article published at or after it
    answers not_found, as an unknown id does). Reads are logged and count toward your evidence
    score on that question."""
    return await call(ctx, operations.read_article, article=article, session=session, question=question)


async def query_events(
    ctx: Context[Any, Any],
    session: Session = None,
    question: LiveQuestion = None,
    subject: Annotated[Any, _schema("ISO 3166 alpha-3 code of the acting country.", type="string")] = None,
    object: Annotated[Any, _schema("ISO 3166 alpha-3 code of the country acted upon.", type="string")] = None,
    relation: Annotated[
        Any, _schema("CAMEO code; a two-digit code includes its three-digit children.", type="string")
    ] = None,
    start: Annotated[Any, _schema("First day, inclusive.", type="string", format="date")] = None,
    end: Annotated[Any, _schema("Last day, inclusive.", type="string", format="date")] = None,
    aggregate: Annotated[
        Any,
        _schema(
            "count: how many; relation: counts per CAMEO code; entity: counts per country. Omit to list events.",
            type="string",
            enum=["count", "relation", "entity"],
        ),
    ] = None,
    role: Annotated[
        Any,
        _schema(
            "aggregate=entity only: count countries as head, tail or both.",
            type="string",
            enum=["head", "tail", "both"],
        ),
    ] = None,
    limit: Annotated[Any, _limit_schema("Events", default=30, maximum=EVENTS_MAX_LIMIT)] = None,
    offset: Offset = None,
) -> CallToolResult:
    """Structured country-to-country events (CAMEO-coded, as in MIRAI) as of the date, most recent
    first: {as_of, count, events: [{id, date, subject, object, relation, relation_root,
    article_urls}]}, or a count or distribution with aggregate. For a relation question, events up
    to its target date minus its horizon are visible."""
    return await call(
        ctx,
        operations.query_events,
        session=session,
        question=question,
        subject=subject,
        object=object,
        relation=relation,
        start=start,
        end=end,
        aggregate=aggregate,
        role=role,
        limit=limit,
        offset=offset,
    )


async def price_history(
    ctx: Context[Any, Any],
    question: Annotated[Any, _schema("The question's id.", type="integer")],
    session: Session = None,
) -> CallToolResult:
    """The question's prediction-market price history strictly before the date: {as_of, question,
    market: {id, platform, title, outcomes} or null, prices: [{time, outcome, probability}]}.
    Live questions answer as of now; replay questions need session."""
    return await call(ctx, operations.price_history, question=question, session=session)


async def submit_forecast(
    ctx: Context[Any, Any],
    question: Annotated[Any, _schema("The question's id.", type="integer")],
    prediction: Annotated[
        Any,
        _schema(
            "By question type: binary {probability}; multiple_choice {probabilities: {option: p}} covering "
            "every option and summing to 1; quantity {value} or {interval: [lo, hi]} or {quantiles: "
            '{"0.1": x, "0.5": y, "0.9": z}}; timeframe {period} at the question\'s granularity (2026, '
            '2026-Q3, 2026-07, 2026-W28, 2026-07-15); relation {relations: {"04": ["042"]}} (CAMEO); '
            "open_ended {events: [...]} or {answer}.",
            type="object",
        ),
    ],
    session: Annotated[
        Any,
        _schema(
            "Your replay session id (replay questions); null for live ones.", type=["string", "null"], format="uuid"
        ),
    ] = None,
    sources: Annotated[
        Any,
        _schema(
            "Cited sources: article ids or http(s) URLs (at most 200).",
            type="array",
            items={"type": ["integer", "string"]},
        ),
    ] = None,
    rationale: Annotated[Any, _schema("Why you forecast this.", type="string")] = None,
    graph: Annotated[
        Any,
        _schema(
            "Your forecast graph: {events: [{id, title, description, date}], edges: [{source, target, relation "
            "(Causes, Enables, Prevents, Inhibits, Amplifies, Triggers or Correlates), strength in [-1, 1], "
            "confidence in [0, 1]}]}; at most 50 events, no cycles.",
            type="object",
        ),
    ] = None,
    idempotency_key: Annotated[
        Any,
        _schema("Names this forecast: a retry with the same key and body returns the original.", type="string"),
    ] = None,
) -> CallToolResult:
    """Submit a forecast: the body of POST /api/v1/forecasts/, validated the same way. Returns the
    stored forecast and created (false when the idempotency key returned an earlier one).
    Forecasts are append-only; the latest before the deadline (replay: in the session) counts."""
    return await call(
        ctx,
        operations.submit_forecast,
        question=question,
        session=session,
        prediction=prediction,
        sources=sources,
        rationale=rationale,
        graph=graph,
        idempotency_key=idempotency_key,
    )


TOOLS = (
    (list_questions, READ_ONLY),
    (get_question, READ_ONLY),
    (open_replay_session, ToolAnnotations(idempotent_hint=True, destructive_hint=False, open_world_hint=False)),
    (close_replay_session, ToolAnnotations(idempotent_hint=True, destructive_hint=True, open_world_hint=False)),
    (search_articles, READ_ONLY),
    (read_article, READ_ONLY),
    (query_events, READ_ONLY),
    (price_history, READ_ONLY),
    (submit_forecast, ToolAnnotations(destructive_hint=False, open_world_hint=False)),
)


class HindsightMCP(MCPServer[Any]):
    """Hindsight's tools. Over HTTP each request carries the agent's token; over stdio the launcher's
    ``token_key`` is the agent's, checked on every call."""

    def __init__(self, *, token_key: str | None = None) -> None:
        super().__init__(name="hindsight", title="Hindsight forecasting", instructions=INSTRUCTIONS, version="1")
        self.token_key = token_key
        for tool, hints in TOOLS:
            self.add_tool(tool, description=inspect.cleandoc(tool.__doc__ or ""), annotations=hints)
