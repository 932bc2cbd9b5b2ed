"""The inputs key of a question's grades, and the sweeper's finds: questions whose grades are stale.

The *inputs key* names everything a question's grades are computed from: grader version, the
current resolution version (and whether it resolves, annuls or withdraws), the current hindsight
reference with its review state, the matcher settings and, for open-ended questions, the judge.
A current grade whose ``inputs_key`` equals the question's key is up to date; a regrade skips it.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef

from grading.models import HindsightEvent, HindsightGraph
from grading.scoring import GRADER_VERSION
from grading.scoring.guarded import guarded_matcher_settings
from grading.scoring.matching import MatcherSettings
from grading.scoring.semantic import semantic_matcher_settings
from grading.scoring.worldreasoner import worldreasoner_matcher_settings
from grading.selectors import Reference
from ingestion.models import Question, Resolution
from leaderboard.models import Forecast, Grade, QuestionGradingState

# ------------------------------------------------------------------------------------ settings


def matcher_settings() -> MatcherSettings:
    """The event matcher's parameters from settings (stored on every grade)."""
    if settings.HINDSIGHT_MATCHER == "semantic":
        return semantic_matcher_settings(
            threshold=settings.HINDSIGHT_SEMANTIC_MATCHER_THRESHOLD,
            date_window_days=settings.HINDSIGHT_MATCHER_DATE_WINDOW_DAYS,
            top_k=settings.HINDSIGHT_KEY_EVENTS_TOP_K,
        )
    if settings.HINDSIGHT_MATCHER == "guarded":
        return guarded_matcher_settings(
            bm25_weight=settings.HINDSIGHT_MATCHER_BM25_WEIGHT,
            token_f1_weight=settings.HINDSIGHT_MATCHER_TOKEN_F1_WEIGHT,
            threshold=settings.HINDSIGHT_MATCHER_THRESHOLD,
            date_window_days=settings.HINDSIGHT_MATCHER_DATE_WINDOW_DAYS,
            top_k=settings.HINDSIGHT_KEY_EVENTS_TOP_K,
        )
    if settings.HINDSIGHT_MATCHER == "worldreasoner":
        return worldreasoner_matcher_settings(
            threshold=settings.HINDSIGHT_MATCHER_THRESHOLD,
            date_window_days=settings.HINDSIGHT_MATCHER_DATE_WINDOW_DAYS,
            top_k=settings.HINDSIGHT_KEY_EVENTS_TOP_K,
        )
    return MatcherSettings(
        matcher=settings.HINDSIGHT_MATCHER,
        bm25_weight=settings.HINDSIGHT_MATCHER_BM25_WEIGHT,
        token_f1_weight=settings.HINDSIGHT_MATCHER_TOKEN_F1_WEIGHT,
        threshold=settings.HINDSIGHT_MATCHER_THRESHOLD,
        date_window_days=settings.HINDSIGHT_MATCHER_DATE_WINDOW_DAYS,
        top_k=settings.HINDSIGHT_KEY_EVENTS_TOP_K,
    )


def judge_label() -> str:
    """``llm`` when a model is configured, else ``lexical`` (the two are never mixed)."""
    return "llm" if settings.LLM_MODEL else "lexical"


def _digest(payload: Any, n: int = 12) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:n]


def matcher_digest(matcher: MatcherSettings) -> str:
    return _digest(matcher.as_dict(), 8)


# ------------------------------------------------------------------------------------ inputs key


def reference_key(
    *, graph_id: int, version: int, graph_built: bool, events: Iterable[tuple[int, bool, str, str, date]]
) -> str:
    """Key of a reference and its review state: events are (id, rejected, title, description, date).

    Reviews can reject an event or revise its title or date; all of these change the key.
    """
    rows = sorted((e[0], bool(e[1]), e[2], e[3], e[4].isoformat()) for e in events)
    return f"g{graph_id}.{version}.{int(graph_built)}.{_digest(rows, 10)}"


def reference_key_of(reference: Reference | None) -> str:
    if reference is None:
        return "g-"
    return reference_key(
        graph_id=reference.graph_id,
        version=reference.version,
        graph_built=reference.graph_built,
        events=((e.id, e.rejected, e.title, e.description, e.date) for e in reference.events),
    )


def inputs_key(
    *,
    question_type: str,
    resolution_version: int | None,
    resolution_kind: str | None,
    reference: str,
    matcher: str,
    judge: str,
) -> str:
    """The key current grades must carry (see the module docstring); ``""`` when there is nothing to grade."""
    if resolution_version is None:
        return ""
    if resolution_kind == Resolution.Kind.UNRESOLVE:
        return ""
    if resolution_kind == Resolution.Kind.ANNUL:
        return f"{GRADER_VERSION}|void|r{resolution_version}"
    judge_part = judge if question_type == Question.Type.OPEN_ENDED else "-"
    return f"{GRADER_VERSION}|r{resolution_version}|{reference}|m{matcher}|j{judge_part}"


# ------------------------------------------------------------------------------------ sweeper


def _question_keys(question_ids: Sequence[int]) -> dict[int, str]:
    """The current inputs key of each question, computed in a few bulk queries."""
    if not question_ids:
        return {}
    types = dict(Question.objects.filter(pk__in=question_ids).values_list("id", "type"))
    latest: dict[int, tuple[int, str]] = {}
    for qid, res_version, res_kind in Resolution.objects.filter(question_id__in=question_ids).values_list(
        "question_id", "version", "kind"
    ):
        if qid not in latest or res_version > latest[qid][0]:
            latest[qid] = (res_version, res_kind)
    graphs = {
        row[1]: row
        for row in HindsightGraph.objects.filter(question_id__in=question_ids, is_current=True).values_list(
            "id", "question_id", "version", "graph_built"
        )
    }
    events: dict[int, list[tuple[int, bool, str, str, date]]] = defaultdict(list)
    for graph_id, event_id, status, title, description, day in HindsightEvent.objects.filter(
        graph_id__in=[g[0] for g in graphs.values()]
    ).values_list("graph_id", "id", "review_status", "title", "description", "occurred_on"):
        events[graph_id].append((event_id, status == HindsightEvent.ReviewStatus.REJECTED, title, description, day))
    matcher = matcher_digest(matcher_settings())
    judge = judge_label()
    keys: dict[int, str] = {}
    for qid in question_ids:
        version: int | None = None
        kind: str | None = None
        if qid in latest:
            version, kind = latest[qid]
        graph = graphs.get(qid)
        ref = (
            reference_key(graph_id=graph[0], version=graph[2], graph_built=graph[3], events=events.get(graph[0], []))
            if graph
            else "g-"
        )
        keys[qid] = inputs_key(
            question_type=types.get(qid, ""),
            resolution_version=version,
            resolution_kind=kind,
            reference=ref,
            matcher=matcher,
            judge=judge,
        )
    return keys


def questions_needing_grading(*, limit: int = 500) -> list[int]:
    """Questions whose grades are missing or stale, oldest id first (what the sweeper re-drives).

    - resolved/annulled questions with a forecast that has no current grade;
    - resolved/annulled questions whose last completed run used another inputs key than now;
    - questions no longer resolved (un-resolved) that still have current grades.
    """
    graded_statuses = (Question.Status.RESOLVED, Question.Status.ANNULLED)
    ungraded = Forecast.objects.filter(question=OuterRef("pk")).exclude(
        Exists(Grade.objects.filter(forecast=OuterRef("pk"), is_current=True))
    )
    missing = list(
        Question.objects.filter(status__in=graded_statuses)
        .filter(Exists(ungraded))
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    withdrawn = list(
        Question.objects.exclude(status__in=graded_statuses)
        .filter(Exists(Grade.objects.filter(forecast__question=OuterRef("pk"), is_current=True)))
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    # Questions with forecasts whose state does not match the key computed now.
    with_forecasts = list(
        Question.objects.filter(status__in=graded_statuses)
        .filter(Exists(Forecast.objects.filter(question=OuterRef("pk"))))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    stale: list[int] = []
    states = dict(
        QuestionGradingState.objects.filter(question_id__in=with_forecasts).values_list("question_id", "inputs_key")
    )
    for start in range(0, len(with_forecasts), 1000):
        chunk = with_forecasts[start : start + 1000]
        for qid, key in _question_keys(chunk).items():
            if states.get(qid) != key:
                stale.append(qid)
        if len(stale) >= limit:
            break
    return sorted(set(missing) | set(withdrawn) | set(stale))[:limit]
