"""Forecast submission (one or many); replay sessions are ``leaderboard.services.replay_sessions``.

Rules (docs/design.md, Forecasts and Replay sessions):

- Forecasts are append-only; ``received_at`` is the server clock at submission.
- A live question takes forecasts while ``status == open`` and ``open_at <= now < close_at``, with no session.
- A replay question takes forecasts through the agent's own replay session while it is offered on
  the replay track: ``track == replay``, status in ``REPLAY_OFFERED_STATUSES`` (``resolved``, or
  ``closed`` while staff have un-resolved it for review) and its outcome not yet published. Once
  staff publish the outcome, or annul the question (it reads "withdrawn from the replay track", and
  still shows as resolved until its outcome is published), it opens no new session and takes no
  forecast (409), and grading never counts a forecast received at or after the publication
  (``counting_forecasts``).
- Idempotency: an agent's ``idempotency_key`` names one forecast. The same key with the same body
  returns the original forecast (``created=False``); with a different body it is a conflict.
- Errors: ``NotFound`` (404), ``ForecastConflict`` (409), ``ValidationError`` (400, all fields at once).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from ingestion.models import Question
from leaderboard.models import Agent, Forecast, ReplaySession
from leaderboard.selectors.agent_access import agent_access_refusal
from leaderboard.services.errors import ForecastConflict, NotFound
from leaderboard.services.forecast_inserts import insert_forecast, insert_forecasts, link_cited_articles
from leaderboard.services.forecast_sources import ArticleResolver, url_variants
from leaderboard.services.predictions import forecast_body_clean
from leaderboard.services.replay_sessions import refuse_unless_offered

MAX_IDEMPOTENCY_KEY_CHARS: Final = 200

# The question columns a submission reads (acceptance, prediction checks, the response's grade
# status). Building the SQL for all ~30 columns costs more CPU than the rest of the request's ORM
# work; anything else a caller reads is loaded on access.
_SUBMIT_QUESTION_FIELDS: Final = (
    "type",
    "status",
    "track",
    "open_at",
    "close_at",
    "options",
    "lower_bound",
    "upper_bound",
    "granularity",
    "outcome_published_at",
)


@dataclass(frozen=True)
class ForecastInput:
    """One submitted forecast body, with the shapes of its top-level fields already checked."""

    question_id: int
    session_id: uuid.UUID | None = None
    prediction: Any = None
    sources: Any = None
    rationale: Any = ""
    graph: Any = None
    idempotency_key: str = ""

    def body_hash(self) -> str:
        body = {
            "question": self.question_id,
            "session": str(self.session_id) if self.session_id else None,
            "prediction": self.prediction,
            "sources": self.sources if self.sources is not None else [],
            "rationale": self.rationale or "",
            "graph": self.graph,
        }
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class SubmitResult:
    forecast: Forecast
    created: bool


@dataclass
class _Context:
    """Everything the checks need for one agent's items, loaded in a handful of queries."""

    agent: Agent
    questions: dict[int, Question]
    sessions: dict[uuid.UUID, ReplaySession]
    by_key: dict[str, Forecast]
    resolver: ArticleResolver = field(default_factory=ArticleResolver)

    @classmethod
    def load(cls, *, agent: Agent, items: Sequence[ForecastInput]) -> _Context:
        question_ids = {i.question_id for i in items}
        session_ids = {i.session_id for i in items if i.session_id is not None}
        keys = {i.idempotency_key for i in items if i.idempotency_key}
        ctx = cls(
            agent=agent,
            questions=Question.objects.in_bulk(question_ids) if question_ids else {},
            sessions=ReplaySession.objects.in_bulk(session_ids) if session_ids else {},
            by_key=(
                {f.idempotency_key: f for f in Forecast.objects.filter(agent=agent, idempotency_key__in=keys)}
                if keys
                else {}
            ),
        )
        ctx.resolver.prefetch(i.sources for i in items)
        return ctx


def _replayed(existing: Forecast, body_hash: str, key: str) -> SubmitResult:
    if existing.body_hash != body_hash and existing.pk is None:
        # Another item of the same batch took the key a moment ago; nothing is stored under it yet.
        raise ForecastConflict(
            f"idempotency_key {key!r} is used by an earlier item of this batch with a different body; "
            "each forecast needs its own key",
            field="idempotency_key",
        )
    if existing.body_hash != body_hash:
        raise ForecastConflict(
            f"idempotency_key {key!r} was already used for forecast {existing.pk} with a different body; "
            "use a new key for a new forecast",
            field="idempotency_key",
        )
    return SubmitResult(forecast=existing, created=False)


def _refuse_if_retired(agent: Agent) -> None:
    """A retired agent takes no forecast on any channel (its tokens are refused before this; the
    web form and a delivery's answer reach the service directly)."""
    refusal = agent_access_refusal(agent=agent)
    if refusal is not None:
        raise ForecastConflict(refusal.message, field="agent")


def _check_accepting(
    *, ctx: _Context, item: ForecastInput, question: Question, now: datetime
) -> tuple[ReplaySession | None, dict[str, list[str]]]:
    """The session to attach and any 400-type errors; raises NotFound / ForecastConflict."""
    errors: dict[str, list[str]] = {}
    if question.track == Question.Track.LIVE:
        if question.status != Question.Status.OPEN:
            raise ForecastConflict(
                f"question {question.pk} is {question.status}; live questions accept forecasts only while open",
                field="question",
            )
        if now < question.open_at:
            raise ForecastConflict(
                f"question {question.pk} opens for forecasts at {question.open_at.isoformat()}", field="question"
            )
        if now >= question.close_at:
            raise ForecastConflict(
                f"question {question.pk} stopped accepting forecasts at {question.close_at.isoformat()}",
                field="question",
            )
        if item.session_id is not None:
            errors["session"] = ["live questions take no replay session; send null or leave it out"]
        return None, errors
    refuse_unless_offered(question, what="forecasts")
    if item.session_id is None:
        errors["session"] = [
            f"replay question {question.pk} needs your replay session: POST /api/v1/replays/ "
            f'{{"question": {question.pk}}} and send its id as "session"'
        ]
        return None, errors
    session = ctx.sessions.get(item.session_id)
    if session is None or session.agent_id != ctx.agent.pk:
        raise NotFound(f"replay session {item.session_id} not found for this agent", field="session")
    if session.closed_at is not None:
        raise ForecastConflict(
            f"replay session {session.pk} was closed at {session.closed_at.isoformat()}; it takes no more forecasts",
            field="session",
        )
    if session.question_id != question.pk:
        errors["session"] = [f"replay session {session.pk} is for question {session.question_id}, not {question.pk}"]
    return session, errors


def _prepare(
    *,
    ctx: _Context,
    item: ForecastInput,
    channel: str,
    submitted_by: AbstractBaseUser | None,
    now: datetime,
) -> SubmitResult | tuple[Forecast, list[int]]:
    """An unsaved Forecast and its cited article ids, or the original forecast for a replayed key."""
    key = item.idempotency_key
    body_hash = item.body_hash()
    if key and key in ctx.by_key:
        return _replayed(ctx.by_key[key], body_hash, key)
    question = ctx.questions.get(item.question_id)
    if question is None:
        raise NotFound(f"question {item.question_id} does not exist", field="question")
    session, errors = _check_accepting(ctx=ctx, item=item, question=question, now=now)
    clean = forecast_body_clean(
        question=question,
        prediction=item.prediction,
        sources=item.sources,
        rationale=item.rationale,
        graph=item.graph,
        resolver=ctx.resolver,
        extra_errors=errors,
    )
    forecast = Forecast(
        agent=ctx.agent,
        question=question,
        session=session,
        received_at=now,
        prediction=clean.prediction,
        sources=clean.sources,
        rationale=clean.rationale,
        graph=clean.graph,
        idempotency_key=key,
        body_hash=body_hash,
        channel=channel,
        submitted_by=submitted_by,  # type: ignore[misc]
    )
    return forecast, clean.article_ids


def _embed_on_commit(forecast_ids: Sequence[int]) -> None:
    """Once committed, send these forecasts' graph events to be embedded ahead of grading
    (``leaderboard.tasks.embed_forecast_events``, grade queue), when the guarded matcher grades and
    HINDSIGHT_EMBED_ON_SUBMIT is on; a lost or failed task only means grading embeds them."""
    ids = [int(pk) for pk in forecast_ids]
    if not ids or not settings.HINDSIGHT_EMBED_ON_SUBMIT or settings.HINDSIGHT_MATCHER != "guarded":
        return
    # (The tasks module imports the services, so it is imported here, when needed.)
    from leaderboard.tasks import embed_forecast_events

    transaction.on_commit(lambda: embed_forecast_events.delay(ids))


def _by_key(*, agent: Agent, key: str) -> Forecast | None:
    existing = Forecast.objects.filter(agent=agent, idempotency_key=key).first()
    if existing is not None:
        existing.agent = agent
    return existing


def forecast_submit(
    *,
    agent: Agent,
    question_id: int,
    session_id: uuid.UUID | str | None = None,
    prediction: Any,
    sources: Any = None,
    rationale: Any = "",
    graph: Any = None,
    idempotency_key: str = "",
    channel: str = Forecast.Channel.API,
    submitted_by: AbstractBaseUser | None = None,
    now: datetime | None = None,
) -> SubmitResult:
    """Record one forecast for ``agent`` (see the module docstring for the rules).

    The writes (the forecast and its citations) are one transaction (``insert_forecast``). Reads:
    the question, the replay session if any, cited article ids if any; the idempotency key is
    looked up only when it turns out to be taken.
    """
    now = now or timezone.now()
    _refuse_if_retired(agent)
    item = forecast_input(
        question_id=question_id,
        session_id=session_id,
        prediction=prediction,
        sources=sources,
        rationale=rationale,
        graph=graph,
        idempotency_key=idempotency_key,
    )
    key = item.idempotency_key
    try:
        question = next(
            iter(Question.objects.filter(pk=item.question_id).order_by().only(*_SUBMIT_QUESTION_FIELDS)), None
        )
        sessions = (
            {s.pk: s for s in ReplaySession.objects.filter(pk=item.session_id)} if item.session_id is not None else {}
        )
        ctx = _Context(
            agent=agent,
            questions={question.pk: question} if question is not None else {},
            sessions=sessions,
            by_key={},
            resolver=ArticleResolver(defer_urls=True),
        )
        ctx.resolver.prefetch([item.sources])
        prepared = _prepare(ctx=ctx, item=item, channel=channel, submitted_by=submitted_by, now=now)
    except (NotFound, ForecastConflict, ValidationError):
        # A retry replays its original even when the body would no longer be accepted (closed question).
        existing = _by_key(agent=agent, key=key) if key else None
        if existing is None:
            raise
        return _replayed(existing, item.body_hash(), key)
    assert not isinstance(prepared, SubmitResult)
    forecast, article_ids = prepared
    urls = list(dict.fromkeys(v for s in forecast.sources if isinstance(s, str) for v in url_variants(s)))
    pk = insert_forecast(forecast=forecast, article_ids=article_ids, urls=urls)
    if pk is None:
        # The key was used before, or by a concurrent request that committed first.
        existing = _by_key(agent=agent, key=key)
        if existing is None:
            raise IntegrityError(f"forecast insert for idempotency_key {key!r} conflicted, but no forecast has it")
        return _replayed(existing, forecast.body_hash, key)
    if forecast.graph is not None:
        _embed_on_commit([pk])
    return SubmitResult(forecast=forecast, created=True)


def forecast_input(
    *,
    question_id: Any,
    session_id: Any = None,
    prediction: Any = None,
    sources: Any = None,
    rationale: Any = "",
    graph: Any = None,
    idempotency_key: Any = "",
) -> ForecastInput:
    """Check the top-level field types (the web form calls the service with raw values too)."""
    errors: dict[str, list[str]] = {}
    qid: int | None = None
    if isinstance(question_id, int) and not isinstance(question_id, bool):
        qid = question_id
    elif isinstance(question_id, str) and question_id.strip().isdigit():
        qid = int(question_id.strip())
    else:
        errors["question"] = [f"must be a question id (an integer), got {question_id!r}"]
    sid: uuid.UUID | None = None
    if isinstance(session_id, uuid.UUID):
        sid = session_id
    elif session_id not in (None, ""):
        try:
            sid = uuid.UUID(str(session_id))
        except ValueError:
            errors["session"] = [f"must be a replay session id (a UUID) or null, got {str(session_id)[:60]!r}"]
    key = idempotency_key or ""
    if not isinstance(key, str):
        errors["idempotency_key"] = ["must be text"]
        key = ""
    elif len(key) > MAX_IDEMPOTENCY_KEY_CHARS:
        errors["idempotency_key"] = [f"is too long (at most {MAX_IDEMPOTENCY_KEY_CHARS} characters)"]
    if errors:
        raise ValidationError(errors)
    assert qid is not None
    return ForecastInput(
        question_id=qid,
        session_id=sid,
        prediction=prediction,
        sources=sources,
        rationale=rationale,
        graph=graph,
        idempotency_key=key.strip(),
    )


@transaction.atomic
def forecast_submit_batch(
    *,
    agent: Agent,
    items: Sequence[ForecastInput],
    channel: str = Forecast.Channel.API,
    submitted_by: AbstractBaseUser | None = None,
    now: datetime | None = None,
) -> list[SubmitResult | NotFound | ForecastConflict | ValidationError]:
    """Record many forecasts; each item succeeds or fails on its own, with the same rules as one."""
    now = now or timezone.now()
    _refuse_if_retired(agent)
    ctx = _Context.load(agent=agent, items=items)
    results: list[SubmitResult | NotFound | ForecastConflict | ValidationError | None] = [None] * len(items)
    to_create: list[tuple[int, Forecast, list[int]]] = []
    for index, item in enumerate(items):
        try:
            prepared = _prepare(ctx=ctx, item=item, channel=channel, submitted_by=submitted_by, now=now)
        except (NotFound, ForecastConflict, ValidationError) as exc:
            results[index] = exc
            continue
        if isinstance(prepared, SubmitResult):
            results[index] = prepared
            continue
        forecast, article_ids = prepared
        if item.idempotency_key:
            # A later item of this batch with the same key replays this one.
            ctx.by_key[item.idempotency_key] = forecast
        to_create.append((index, forecast, article_ids))
        results[index] = SubmitResult(forecast=forecast, created=True)
    try:
        with transaction.atomic():
            insert_forecasts([f for _, f, _ in to_create])
            link_cited_articles([(f, ids) for _, f, ids in to_create])
            _embed_on_commit([f.pk for _, f, _ in to_create if f.graph is not None])
    except IntegrityError:
        # A concurrent request took one of these idempotency keys: fall back to one at a time,
        # redoing also the in-batch replays of forecasts that were never stored.
        redo = [i for i, r in enumerate(results) if isinstance(r, SubmitResult) and r.forecast.pk is None]
        for index in redo:
            try:
                results[index] = forecast_submit(
                    agent=agent,
                    question_id=items[index].question_id,
                    session_id=items[index].session_id,
                    prediction=items[index].prediction,
                    sources=items[index].sources,
                    rationale=items[index].rationale,
                    graph=items[index].graph,
                    idempotency_key=items[index].idempotency_key,
                    channel=channel,
                    submitted_by=submitted_by,
                    now=now,
                )
            except (NotFound, ForecastConflict, ValidationError) as exc:
                results[index] = exc
    return [r for r in results if r is not None]
