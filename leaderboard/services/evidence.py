"""The temporal evidence gateway for agents: which date they stand at, and the access log.

The as-of date comes from the agent's replay session (its simulated date) or, for a live
question, from the clock. Relation questions follow MIRAI's rule on top of that: for a query
about day t with horizon l, evidence up to and including day t - l is visible.

The simulated date cannot be walked around through another scope:

- every query is scoped to one question (a replay session, or a live question);
- an agent *working on* a replay question (it opened the session and has neither forecast in it
  nor closed it, and the question still takes forecasts) gets as-of-now evidence only for live
  questions it is *forecasting*: open for forecasts now, with a forecast of its own. Anything else
  answers ``EvidenceForbidden`` (403);
- whatever the gateway served an agent, in any scope, before a replay forecast and dated at or
  after that forecast's as-of date counts as a leak of the forecast when it is graded
  (``leaderboard.services.leaks.ServedIndex``), so no reading order earns clean credit.

Every search, read, events and prices query is recorded in the evidence access log. Records are
buffered in-process and written with one bulk insert when the request has finished (or when the
buffer fills), so logging never adds a database round-trip to the agent's request.
"""

from __future__ import annotations

import atexit
import logging
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.signals import request_finished
from django.db import DatabaseError, close_old_connections, connection, transaction
from django.db.models import Exists, OuterRef, QuerySet

from ingestion.models import Article, Market, PricePoint, Question
from ingestion.selectors.evidence import (
    InvalidEvidenceQuery,
    SearchPage,
    article_get,
    articles_search,
    prices_history,
    require_aware,
)
from ingestion.selectors.structured_events import (
    events_count,
    events_distribution_by_entity,
    events_distribution_by_relation,
    events_query,
)
from leaderboard.models import Agent, EvidenceAccess, Forecast, ReplaySession
from leaderboard.selectors.questions import live_open_q, replay_offered_q

logger = logging.getLogger(__name__)


class EvidenceNotFound(Exception):
    """The thing asked for does not exist for this agent, or is not visible as of its date."""


class EvidenceForbidden(Exception):
    """The agent may not read this scope now: it is working on a replay question (see the module docstring)."""


@dataclass(frozen=True)
class EvidenceScope:
    """Where an agent stands: the instant before which evidence is visible, and why."""

    as_of: datetime
    session: ReplaySession | None
    question: Question | None


def relation_cutoff(question: Question) -> datetime | None:
    """MIRAI: for day t and horizon l, days up to t - l are visible, i.e. before day t - l + 1 starts."""
    if question.type != Question.Type.RELATION or question.target_date is None:
        return None
    horizon = question.horizon_days if question.horizon_days is not None else 1
    first_hidden_day = question.target_date - timedelta(days=horizon - 1)
    return datetime.combine(first_hidden_day, time.min, tzinfo=UTC)


def _with_relation_rule(as_of: datetime, question: Question) -> datetime:
    cutoff = relation_cutoff(question)
    return min(as_of, cutoff) if cutoff is not None else as_of


def evidence_scope_resolve(
    *,
    agent: Agent,
    session_id: uuid.UUID | str | None = None,
    question_id: int | None = None,
    now: datetime,
) -> EvidenceScope:
    """The as-of scope of a gateway query.

    With a session: the session's simulated date (the session must be the agent's own, else
    EvidenceNotFound exactly as for an unknown id). With a live question: now. A replay question
    needs a session (ValidationError). Relation questions are further limited by MIRAI's rule.
    """
    now = require_aware(now, "now")
    if session_id is not None:
        session = ReplaySession.objects.select_related("question").filter(pk=session_id, agent=agent).first()
        if session is None:
            raise EvidenceNotFound("Replay session not found.")
        if question_id is not None and session.question_id != question_id:
            raise ValidationError({"question": "This session belongs to another question."})
        # The simulated date is in the past by construction; min() keeps a bad row from reaching ahead.
        as_of = min(require_aware(session.simulated_at, "simulated_at"), now)
        return EvidenceScope(
            as_of=_with_relation_rule(as_of, session.question), session=session, question=session.question
        )
    if question_id is None:
        raise ValidationError({"session": "Give session (replay) or question (live)."})
    question = Question.objects.exclude(status=Question.Status.DRAFT).filter(pk=question_id).first()
    if question is None:
        raise EvidenceNotFound("Question not found.")
    if question.track == Question.Track.REPLAY:
        raise ValidationError({"session": "Replay questions are answered as of a replay session: give session."})
    _refuse_as_of_now_while_replaying(agent=agent, question=question, now=now)
    return EvidenceScope(as_of=_with_relation_rule(now, question), session=None, question=question)


def replay_sessions_in_progress(*, agent: Agent) -> QuerySet[ReplaySession]:
    """The agent's replay sessions it is working on: not closed, the question still takes forecasts
    and the agent has not forecast in the session yet (earliest simulated date first)."""
    return (
        ReplaySession.objects.filter(agent=agent, closed_at__isnull=True)
        .filter(replay_offered_q("question__"))
        .exclude(Exists(Forecast.objects.filter(session=OuterRef("pk"))))
        .order_by("simulated_at", "pk")
    )


def _refuse_as_of_now_while_replaying(*, agent: Agent, question: Question, now: datetime) -> None:
    """EvidenceForbidden unless the agent may read as of now through this live question."""
    working = replay_sessions_in_progress(agent=agent).select_related("question").first()
    if working is None:
        return
    forecasting = (
        Question.objects.filter(live_open_q(now=now), pk=question.pk).exists()
        and Forecast.objects.filter(agent=agent, question=question).exists()
    )
    if forecasting:
        return
    raise EvidenceForbidden(
        f"you are working on replay question {working.question_id} (session {working.pk}, simulated date "
        f"{working.simulated_at.isoformat()}): until you forecast in that session, evidence as of now is "
        f"only for live questions you are forecasting (open, with a forecast of yours), and question "
        f"{question.pk} is not one. Forecast in the session or close it first (DELETE /api/v1/replays/"
        f"{working.pk}/), or submit a forecast on question {question.pk} while it is open (you can "
        f"update it until it closes)."
    )


# ------------------------------------------------------------------------------------ access log

_buffer: list[EvidenceAccess] = []
_buffer_lock = threading.Lock()
_flush_lock = threading.Lock()


def _batch_size() -> int:
    return int(getattr(settings, "HINDSIGHT_EVIDENCE_LOG_BATCH", 500))


def evidence_access_record(
    *,
    agent: Agent,
    scope: EvidenceScope,
    kind: str,
    query: dict[str, Any],
    item_ids: list[int],
    article: Article | None = None,
    now: datetime,
) -> None:
    """Queue one access-log row; it reaches the database when the request ends or the batch fills."""
    if kind not in EvidenceAccess.Kind.values:
        raise ValueError(f"Unknown evidence access kind {kind!r}.")
    entry = EvidenceAccess(
        agent=agent,
        session=scope.session,
        question=scope.question,
        kind=kind,
        query=query,
        item_ids=list(item_ids),
        article=article,
        as_of=scope.as_of,
        created_at=require_aware(now, "now"),
    )
    with _buffer_lock:
        _buffer.append(entry)
        full = len(_buffer) >= _batch_size()
    if full:
        evidence_log_flush()


def evidence_log_flush() -> int:
    """Write every queued access-log row in one bulk insert; returns how many were written.

    If the batch fails (e.g. a row's agent was deleted meanwhile), rows are retried one by one so
    a single bad row never costs the others.
    """
    # Flushes are serialised so that a reader who flushes first also waits for a batch another
    # thread took a moment ago: once this returns, every row recorded before the call is stored.
    with _flush_lock:
        with _buffer_lock:
            if not _buffer:
                return 0
            batch = _buffer[:]
            _buffer.clear()
        return _write(batch)


def _write(batch: list[EvidenceAccess]) -> int:
    try:
        with transaction.atomic():
            EvidenceAccess.objects.bulk_create(batch)
        return len(batch)
    except DatabaseError:
        logger.warning("Bulk write of %d evidence log rows failed; writing them one by one.", len(batch))
    written = 0
    for entry in batch:
        entry.pk = None
        try:
            with transaction.atomic():
                entry.save(force_insert=True)
            written += 1
        except DatabaseError:
            logger.exception("Dropping an evidence log row that cannot be written (agent %s).", entry.agent_id)
    return written


def evidence_log_discard() -> None:
    """Forget queued rows without writing them (test isolation between databases)."""
    with _buffer_lock:
        _buffer.clear()


def _flush_after_request(**_: Any) -> None:
    if not _buffer:
        return
    try:
        evidence_log_flush()
    finally:
        # Django closed the request's connection before this receiver ran; do not leave the
        # one the flush reopened lingering (unless a test holds it inside a transaction).
        if not connection.in_atomic_block:
            close_old_connections()


def _flush_at_exit() -> None:
    try:
        evidence_log_flush()
    except Exception:  # at interpreter exit there is nobody left to raise to
        logger.exception("Could not write the evidence log buffer at exit.")


request_finished.connect(_flush_after_request, dispatch_uid="leaderboard.evidence_log_flush")
atexit.register(_flush_at_exit)


# ------------------------------------------------------------------------------------ gateway


def evidence_articles_search(
    *, agent: Agent, scope: EvidenceScope, query: str, limit: int, offset: int, now: datetime
) -> SearchPage:
    """Ranked full-text search as of the scope's date; logs the query and the ids it returned."""
    try:
        page = articles_search(query=query, as_of=scope.as_of, limit=limit, offset=offset)
    except InvalidEvidenceQuery as exc:
        raise ValidationError({exc.field: str(exc)}) from exc
    evidence_access_record(
        agent=agent,
        scope=scope,
        kind=EvidenceAccess.Kind.SEARCH,
        query={"q": query, "limit": limit, "offset": offset},
        item_ids=[r.id for r in page.results],
        now=now,
    )
    return page


def evidence_article_read(*, agent: Agent, scope: EvidenceScope, article_id: int, now: datetime) -> Article:
    """The full article if visible as of the scope's date; logs the read."""
    article = article_get(article_id=article_id, as_of=scope.as_of)
    if article is None:
        raise EvidenceNotFound("Article not found.")
    evidence_access_record(
        agent=agent,
        scope=scope,
        kind=EvidenceAccess.Kind.READ,
        query={"article": article_id},
        item_ids=[article.pk],
        article=article,
        now=now,
    )
    return article


@dataclass(frozen=True)
class EventFilters:
    subject: str | None = None
    object: str | None = None
    relation: str | None = None
    start: date | None = None
    end: date | None = None

    def as_kwargs(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


def evidence_events(
    *,
    agent: Agent,
    scope: EvidenceScope,
    filters: EventFilters,
    aggregate: str | None = None,
    role: str = "both",
    limit: int = 30,
    offset: int = 0,
    now: datetime,
) -> dict[str, Any]:
    """MIRAI-style structured-event queries as of the scope's date.

    aggregate None lists events (most recent first, paginated); "count" counts them; "relation"
    and "entity" give distributions. A bad filter raises ValidationError naming the field.
    """
    kwargs = filters.as_kwargs()
    try:
        if aggregate is None:
            qs = events_query(as_of=scope.as_of, **kwargs)
            total = qs.count()
            events = list(qs[offset : offset + limit])
            result: dict[str, Any] = {"count": total, "events": events}
            item_ids = [e.pk for e in events]
        elif aggregate == "count":
            result = {"count": events_count(as_of=scope.as_of, **kwargs)}
            item_ids = []
        elif aggregate == "relation":
            result = {"distribution": events_distribution_by_relation(as_of=scope.as_of, **kwargs)}
            item_ids = []
        elif aggregate == "entity":
            result = {"distribution": events_distribution_by_entity(as_of=scope.as_of, role=role, **kwargs)}
            item_ids = []
        else:
            raise ValidationError({"aggregate": "Use count, relation or entity."})
    except InvalidEvidenceQuery as exc:
        raise ValidationError({exc.field: str(exc)}) from exc
    query = {k: v.isoformat() if isinstance(v, date) else v for k, v in kwargs.items()}
    if aggregate:
        query["aggregate"] = aggregate
        if aggregate == "entity":
            query["role"] = role
    evidence_access_record(
        agent=agent, scope=scope, kind=EvidenceAccess.Kind.EVENTS, query=query, item_ids=item_ids, now=now
    )
    return result


def evidence_prices(*, agent: Agent, scope: EvidenceScope, now: datetime) -> tuple[Market | None, list[PricePoint]]:
    """The scope question's market price history strictly before the as-of date; logs the query."""
    question = scope.question
    market = question.market if question is not None else None
    points = list(prices_history(market=market, as_of=scope.as_of)) if market is not None else []
    evidence_access_record(
        agent=agent,
        scope=scope,
        kind=EvidenceAccess.Kind.PRICES,
        query={"question": question.pk if question else None},
        item_ids=[p.pk for p in points],
        now=now,
    )
    return market, points
