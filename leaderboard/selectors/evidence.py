"""Reads of the evidence access log: an agent's own log, what it read for a forecast, and everything
the gateway served it (the input of leak counting)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from django.db.models import QuerySet

from ingestion.models import Article, PricePoint, Question, StructuredEvent
from leaderboard.models import Agent, EvidenceAccess, ReplaySession
from leaderboard.services.evidence import evidence_log_flush


def evidence_log_for_agent(agent: Agent) -> QuerySet[EvidenceAccess]:
    """The agent's own access log, newest first (queued rows of this process are written first)."""
    evidence_log_flush()
    return EvidenceAccess.objects.filter(agent=agent).order_by("-created_at", "-id")


def articles_read_for(
    agent: Agent,
    question: Question,
    session: ReplaySession | None = None,
    *,
    include_search_results: bool = False,
) -> set[int]:
    """Ids of the articles the agent read through the gateway for this question (for SrcP).

    With a session, only that session's accesses count; without one, every access the agent made
    for the question. include_search_results adds the ids that searches returned without a read.
    """
    evidence_log_flush()
    qs = EvidenceAccess.objects.filter(agent=agent, question=question)
    if session is not None:
        qs = qs.filter(session=session)
    kinds = [EvidenceAccess.Kind.READ]
    if include_search_results:
        kinds.append(EvidenceAccess.Kind.SEARCH)
    ids: set[int] = set()
    for kind, article_id, item_ids in qs.filter(kind__in=kinds).values_list("kind", "article_id", "item_ids"):
        if kind == EvidenceAccess.Kind.READ:
            if article_id is not None:
                ids.add(article_id)
            else:
                # The article row was deleted after the read; the logged id still stands.
                ids.update(int(i) for i in item_ids)
        else:
            ids.update(int(i) for i in item_ids)
    return ids


@dataclass(frozen=True, slots=True)
class ServedItem:
    """One item the gateway served an agent, in any scope, and the latest instant of the world it shows.

    ``latest`` is an article's publication time, a price point's time, the last instant of a
    structured event's day (a day is shown once it has ended), or, for an aggregate query (counts
    and distributions, which list no items) and an item whose row is gone, the last instant before
    the query's as-of date. An item leaks for a forecast made as of ``t`` exactly when
    ``latest >= t``: the gateway would not have shown it as of ``t``.
    """

    at: datetime  # when it was served (the access log's created_at)
    key: int | str  # an article id; "event:<id>", "price:<id>" or "query:<access log id>" otherwise
    latest: datetime


_INSTANT = timedelta(microseconds=1)


def served_items(*, agent_ids: Collection[int], after: datetime, until: datetime) -> dict[int, list[ServedItem]]:
    """agent id -> every item the gateway served the agent up to ``until`` (inclusive) in a query
    answered as of a date later than ``after`` (earlier queries cannot have shown anything dated
    at or after it), ordered by when it was served."""
    if not agent_ids:
        return {}
    evidence_log_flush()
    accesses = list(
        EvidenceAccess.objects.filter(agent_id__in=list(agent_ids), as_of__gt=after, created_at__lte=until)
        .order_by("created_at", "id")
        .values_list("id", "agent_id", "kind", "query", "item_ids", "article_id", "as_of", "created_at")
    )
    articles: set[int] = set()
    events: set[int] = set()
    prices: set[int] = set()
    for _, _, kind, _, item_ids, article_id, _, _ in accesses:
        ids = {int(i) for i in item_ids or ()}
        if kind == EvidenceAccess.Kind.READ and article_id is not None:
            articles.add(article_id)
        elif kind in (EvidenceAccess.Kind.SEARCH, EvidenceAccess.Kind.READ):
            articles.update(ids)
        elif kind == EvidenceAccess.Kind.EVENTS:
            events.update(ids)
        elif kind == EvidenceAccess.Kind.PRICES:
            prices.update(ids)
    published: dict[int, datetime | None] = dict(
        Article.objects.filter(pk__in=articles).values_list("pk", "published_at")
    )
    latest: dict[str, dict[int, datetime]] = {
        EvidenceAccess.Kind.EVENTS: {
            pk: datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC) - _INSTANT
            for pk, day in StructuredEvent.objects.filter(pk__in=events).values_list("pk", "date")
        },
        EvidenceAccess.Kind.PRICES: dict(PricePoint.objects.filter(pk__in=prices).values_list("pk", "time")),
    }
    prefixes: dict[str, str] = {EvidenceAccess.Kind.EVENTS: "event", EvidenceAccess.Kind.PRICES: "price"}
    served: dict[int, list[ServedItem]] = defaultdict(list)
    for access_id, agent_id, kind, query, item_ids, article_id, as_of, created_at in accesses:
        unknown = as_of - _INSTANT  # the latest instant the answer could show
        if kind in (EvidenceAccess.Kind.SEARCH, EvidenceAccess.Kind.READ):
            read = [article_id] if article_id is not None else [int(i) for i in item_ids or ()]
            served[agent_id].extend(ServedItem(created_at, i, published.get(i) or unknown) for i in read)
        elif kind == EvidenceAccess.Kind.EVENTS and isinstance(query, dict) and query.get("aggregate"):
            served[agent_id].append(ServedItem(created_at, f"query:{access_id}", unknown))
        elif kind in prefixes:
            dates = latest[kind]
            served[agent_id].extend(
                ServedItem(created_at, f"{prefixes[kind]}:{i}", dates.get(int(i)) or unknown) for i in item_ids or ()
            )
    return dict(served)
