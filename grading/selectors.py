"""Hindsight graph reads: the reference used by grading, review queues and the public view."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import combinations
from typing import Any

from django.db import connection
from django.db.models import Count, Prefetch, Q, QuerySet

from grading.agreement import Agreement, cohen_agreement
from grading.models import CausalLink, EventReview, GraphBuildAttempt, HindsightEvent, HindsightGraph, TextEmbedding
from grading.pressure import PressureInput, PressurePoint, pressure_points
from ingestion.models import Article, PricePoint, Question

OFFLINE_LABEL = "Offline-built (deterministic, no LLM)"


# ------------------------------------------------------------------------------- reference (C^H, V^H)


@dataclass(frozen=True)
class ReferenceSource:
    article_id: int
    url: str


@dataclass(frozen=True)
class ReferenceEvent:
    id: int
    key: str
    title: str
    description: str
    date: date
    event_type: str
    is_outcome: bool
    magnitude: float | None
    confidence: float | None
    direction: str | None
    has_impact: bool
    rejected: bool
    review_status: str
    source_article_ids: tuple[int, ...]

    @property
    def impact_score(self) -> float:
        return (self.magnitude or 0.0) * (self.confidence or 0.0)


@dataclass(frozen=True)
class Reference:
    """The current hindsight reference of a question (WorldReasoner, Section 3.1: C^H and G^H).

    ``events`` holds every event with ``rejected`` flagged; ``sources`` (C^H) is the union of the
    source articles of non-rejected events and the evidence articles of links between them. Only
    a graph with ``graph_built`` may be used for evidence and reasoning grading.
    """

    graph_id: int
    version: int
    graph_built: bool
    builder: str
    builder_version: str
    model_name: str
    question_id: int
    sources: tuple[ReferenceSource, ...]
    events: tuple[ReferenceEvent, ...]

    @property
    def source_article_ids(self) -> frozenset[int]:
        return frozenset(s.article_id for s in self.sources)

    @property
    def source_urls(self) -> frozenset[str]:
        return frozenset(s.url for s in self.sources)

    @property
    def counted_events(self) -> tuple[ReferenceEvent, ...]:
        return tuple(e for e in self.events if not e.rejected)


def current_graph(question_id: int) -> HindsightGraph | None:
    return HindsightGraph.objects.filter(question_id=question_id, is_current=True).first()


def _events_of(graph: HindsightGraph) -> QuerySet[HindsightEvent]:
    return (
        graph.events.select_related("impact")
        .prefetch_related(Prefetch("sources", queryset=Article.objects.order_by("published_at", "id")))
        .order_by("occurred_on", "id")
    )


def reference_for_question(question_id: int) -> Reference | None:
    return references_for_questions([question_id]).get(question_id)


def references_for_questions(question_ids: Sequence[int]) -> dict[int, Reference]:
    """question id -> current reference, for questions that have a current graph.

    Read as plain values in four queries whatever the number of questions (grading reads the
    references of a whole batch of questions at once): the graphs, their events with impacts, the
    events' source articles (oldest first) and the evidence of links between events.
    """
    graphs = {
        row[0]: row
        for row in HindsightGraph.objects.filter(question_id__in=question_ids, is_current=True).values_list(
            "id", "question_id", "version", "graph_built", "builder", "builder_version", "model_name"
        )
    }
    if not graphs:
        return {}
    sources_of: dict[int, list[tuple[int, str]]] = {}
    for event_id, article_id, url in (
        HindsightEvent.sources.through.objects.filter(hindsightevent__graph_id__in=graphs)
        .order_by("article__published_at", "article_id")
        .values_list("hindsightevent_id", "article_id", "article__url")
    ):
        sources_of.setdefault(event_id, []).append((article_id, url))
    events: dict[int, list[ReferenceEvent]] = {graph_id: [] for graph_id in graphs}
    kept: set[int] = set()
    articles: dict[int, dict[int, str]] = {graph_id: {} for graph_id in graphs}
    rejected_status = HindsightEvent.ReviewStatus.REJECTED
    for (
        event_id,
        graph_id,
        key,
        title,
        description,
        occurred_on,
        event_type,
        is_outcome,
        review_status,
        impact_id,
        magnitude,
        confidence,
        direction,
    ) in (
        HindsightEvent.objects.filter(graph_id__in=graphs)
        .order_by("occurred_on", "id")
        .values_list(
            "id",
            "graph_id",
            "key",
            "title",
            "description",
            "occurred_on",
            "event_type",
            "is_outcome",
            "review_status",
            "impact__id",
            "impact__magnitude",
            "impact__confidence",
            "impact__direction",
        )
    ):
        rejected = review_status == rejected_status
        sources = sources_of.get(event_id, [])
        if not rejected:
            kept.add(event_id)
            articles[graph_id].update(sources)
        has_impact = impact_id is not None
        events[graph_id].append(
            ReferenceEvent(
                id=event_id,
                key=key,
                title=title,
                description=description,
                date=occurred_on,
                event_type=event_type,
                is_outcome=is_outcome,
                magnitude=magnitude if has_impact else None,
                confidence=confidence if has_impact else None,
                direction=direction if has_impact else None,
                has_impact=has_impact,
                rejected=rejected,
                review_status=review_status,
                source_article_ids=tuple(a for a, _ in sources),
            )
        )
    for graph_id, source_id, target_id, article_id, url in CausalLink.evidence.through.objects.filter(
        causallink__graph_id__in=graphs
    ).values_list(
        "causallink__graph_id", "causallink__source_id", "causallink__target_id", "article_id", "article__url"
    ):
        if source_id in kept and target_id in kept:
            articles[graph_id][article_id] = url
    return {
        question_id: Reference(
            graph_id=graph_id,
            version=version,
            graph_built=graph_built,
            builder=builder,
            builder_version=builder_version,
            model_name=model_name,
            question_id=question_id,
            sources=tuple(ReferenceSource(article_id=k, url=v) for k, v in sorted(articles[graph_id].items())),
            events=tuple(events[graph_id]),
        )
        for graph_id, question_id, version, graph_built, builder, builder_version, model_name in graphs.values()
    }


# ------------------------------------------------------------------------------------------ review


def graphs_awaiting_review() -> QuerySet[HindsightGraph]:
    """Current graphs with at least one event not yet reviewed, oldest first."""
    return (
        HindsightGraph.objects.filter(is_current=True)
        .annotate(
            pending=Count("events", filter=Q(events__review_status=HindsightEvent.ReviewStatus.PENDING)),
            total=Count("events"),
        )
        .filter(pending__gt=0)
        .select_related("question")
        .order_by("created_at", "id")
    )


def graphs_reviewed() -> QuerySet[HindsightGraph]:
    return (
        HindsightGraph.objects.filter(is_current=True)
        .annotate(
            pending=Count("events", filter=Q(events__review_status=HindsightEvent.ReviewStatus.PENDING)),
            total=Count("events"),
        )
        .filter(pending=0)
        .select_related("question")
        .order_by("-created_at", "id")
    )


def review_events(graph: HindsightGraph) -> QuerySet[HindsightEvent]:
    return _events_of(graph).prefetch_related(
        Prefetch("reviews", queryset=EventReview.objects.select_related("reviewer").order_by("created_at", "id"))
    )


@dataclass(frozen=True)
class ReviewerAgreement:
    reviewer_a: str
    reviewer_b: str
    agreement: Agreement


def review_agreement(graph: HindsightGraph) -> list[ReviewerAgreement]:
    """For each pair of reviewers of the graph: agreement of their latest decisions on shared events.

    Labels are the decision, with the reject reason for rejections (``reject:Noise``), so two
    reviewers agree on a rejection only when they give the same reason.
    """
    latest: dict[str, dict[int, str]] = {}
    for review in (
        EventReview.objects.filter(event__graph=graph).select_related("reviewer").order_by("created_at", "id")
    ):
        label = f"reject:{review.reason}" if review.decision == EventReview.Decision.REJECT else review.decision
        latest.setdefault(review.reviewer.get_username(), {})[review.event_id] = label
    out = []
    for a, b in combinations(sorted(latest), 2):
        shared = sorted(set(latest[a]) & set(latest[b]))
        if shared:
            out.append(
                ReviewerAgreement(
                    reviewer_a=a,
                    reviewer_b=b,
                    agreement=cohen_agreement([(latest[a][e], latest[b][e]) for e in shared]),
                )
            )
    return out


def latest_attempt(question_id: int) -> GraphBuildAttempt | None:
    return GraphBuildAttempt.objects.filter(question_id=question_id).order_by("-started_at", "-id").first()


# ------------------------------------------------------------------------------------ public view


@dataclass
class HindsightView:
    """Everything the public page and the JSON endpoint show for a revealed question."""

    question: dict[str, Any]
    graph: dict[str, Any]
    explanation: str
    events: list[dict[str, Any]]
    links: list[dict[str, Any]]
    review: dict[str, Any]
    pressure: list[PressurePoint]
    prices: list[tuple[datetime, float]] = field(default_factory=list)
    price_outcome: str = ""


def market_prices(question: Question) -> tuple[str, list[tuple[datetime, float]]]:
    """The market's price history for its "Yes" outcome (or its first outcome) within the question window."""
    if question.market_id is None:
        return "", []
    outcomes = list(
        PricePoint.objects.filter(market_id=question.market_id).values_list("outcome", flat=True).distinct()
    )
    if not outcomes:
        return "", []
    chosen = next((o for o in outcomes if o.strip().lower() == "yes"), sorted(outcomes)[0])
    rows = PricePoint.objects.filter(market_id=question.market_id, outcome=chosen).order_by("time")
    return chosen, [(p.time, p.probability) for p in rows]


def hindsight_view(question: Question) -> HindsightView | None:
    graph = current_graph(question.pk)
    if graph is None:
        return None
    resolution = question.current_resolution
    events = list(_events_of(graph))
    keys = {e.pk: e.key for e in events}
    titles = {e.pk: e.title for e in events}
    event_rows = []
    inputs = []
    for event in events:
        impact = getattr(event, "impact", None)
        rejected = event.review_status == HindsightEvent.ReviewStatus.REJECTED
        event_rows.append(
            {
                "id": event.pk,
                "key": event.key,
                "title": event.title,
                "description": event.description,
                "date": event.occurred_on,
                "type": event.event_type,
                "is_outcome": event.is_outcome,
                "review_status": event.review_status,
                "rejected": rejected,
                "impact": None
                if impact is None
                else {
                    "direction": impact.direction,
                    "magnitude": impact.magnitude,
                    "confidence": impact.confidence,
                    "score": round(impact.magnitude * impact.confidence, 4),
                },
                "sources": [
                    {"id": a.pk, "title": a.title, "url": a.url, "published_at": a.published_at}
                    for a in event.sources.all()
                ],
            }
        )
        if impact is not None and not rejected and not event.is_outcome:
            inputs.append(
                PressureInput(
                    key=event.key,
                    title=event.title,
                    day=event.occurred_on,
                    direction=impact.direction,
                    magnitude=impact.magnitude,
                    confidence=impact.confidence,
                )
            )
    links = [
        {
            "source": keys.get(link.source_id, ""),
            "target": keys.get(link.target_id, ""),
            "source_title": titles.get(link.source_id, ""),
            "target_title": titles.get(link.target_id, ""),
            "relation": link.relation,
            "strength": link.strength,
            "confidence": link.confidence,
            "reasoning": link.reasoning,
            "evidence": [a.pk for a in link.evidence.all()],
        }
        for link in graph.links.prefetch_related("evidence").order_by("id")
    ]
    statuses = Counter(e.review_status for e in events)
    price_outcome, prices = market_prices(question)
    return HindsightView(
        question={
            "id": question.pk,
            "title": question.title,
            "type": question.type,
            "track": question.track,
            "resolution_criteria": question.resolution_criteria,
            "open_at": question.open_at,
            "resolved_at": resolution.resolved_at if resolution else None,
            "outcome": resolution.outcome if resolution else None,
            "outcome_text": resolution.outcome_display if resolution else "",
        },
        graph={
            "id": graph.pk,
            "version": graph.version,
            "builder": graph.builder,
            "builder_label": (
                (f"{OFFLINE_LABEL}, standing in for a failed LLM build" if graph.fallback_reason else OFFLINE_LABEL)
                if graph.builder == HindsightGraph.Builder.OFFLINE
                else "LLM-built"
            ),
            "fallback_reason": graph.fallback_reason,
            "offline": graph.builder == HindsightGraph.Builder.OFFLINE,
            "builder_version": graph.builder_version,
            "model_name": graph.model_name,
            "graph_built": graph.graph_built,
            "created_at": graph.created_at,
            "quality": graph.quality,
        },
        explanation=graph.explanation,
        events=event_rows,
        links=links,
        review={s: statuses.get(s, 0) for s in HindsightEvent.ReviewStatus.values},
        pressure=pressure_points(inputs),
        prices=prices,
        price_outcome=price_outcome,
    )


def revealed_question(question_id: int) -> Question | None:
    question = Question.objects.filter(pk=question_id).first()
    return question if question is not None and question.is_revealed else None


__all__ = [
    "Reference",
    "ReferenceEvent",
    "ReferenceSource",
    "current_graph",
    "graphs_awaiting_review",
    "hindsight_view",
    "reference_for_question",
    "references_for_questions",
    "review_agreement",
]


def text_embeddings(*, model: str, digests: Sequence[str]) -> dict[str, bytes]:
    """Stored vectors of ``model`` by text digest, for the digests that have one (one query).

    On PostgreSQL the digests travel as one array parameter (``= ANY``) and the vectors come back
    as binary: grading reads thousands of vectors at a time."""
    if connection.vendor == "postgresql":
        # Binary results (a psycopg cursor of its own: Django's client-side cursors read text, in
        # which a vector travels as twice its size in hexadecimal).
        import psycopg

        connection.ensure_connection()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(
                f"SELECT digest, vector FROM {TextEmbedding._meta.db_table} WHERE model = %s AND digest = ANY(%s)",
                [model, list(digests)],
                binary=True,
            )
            return {digest: bytes(vector) for digest, vector in cursor.fetchall()}
    rows = TextEmbedding.objects.filter(model=model, digest__in=list(digests)).values_list("digest", "vector")
    return {digest: bytes(vector) for digest, vector in rows}


def archive_items_to_add(*, graph: HindsightGraph, text: str, limit: int = 20) -> QuerySet[Article]:
    """Articles a reviewer may add to ``graph``: published up to the question's resolution, not
    cited by the graph yet, whose title or text holds ``text`` (case-insensitive), newest first."""
    outcome = graph.events.filter(is_outcome=True).first()
    articles = Article.objects.filter(published_at__isnull=False).exclude(hindsight_events__graph=graph)
    if outcome is not None:
        articles = articles.filter(published_at__date__lte=outcome.occurred_on)
    words = text.strip()
    if not words:
        return articles.none()
    return articles.filter(Q(title__icontains=words) | Q(summary__icontains=words)).order_by("-published_at", "-id")[
        :limit
    ]
