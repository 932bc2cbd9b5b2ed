"""Questions from prediction markets: a question for each newly selected market, and every
market question's resolution kept in line with its market.

Resolutions follow the market but never overwrite: every change goes through the versioned
question services (resolve, amend, un-resolve, annul), which announce it for regrading.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ingestion.markets import YES, MarketRecord
from ingestion.markets.selection import Selection
from ingestion.models import Market, Question, Resolution
from ingestion.question_data import question_data_clean
from ingestion.selectors.questions import question_current_resolutions
from ingestion.services.questions import question_annul, question_resolve, question_unresolve


def question_external_id(*, platform: str, external_id: str) -> str:
    return f"{platform}:{external_id}"[:300]


def _question_data(*, record: MarketRecord, selection: Selection, now: datetime) -> dict[str, Any]:
    label = Market.Platform(record.platform).label
    assert record.close_at is not None
    criteria = (
        f"Resolves as the {label} market resolves"
        + (f" ({record.url})" if record.url else f" (id {record.external_id})")
        + ". A market that is cancelled, resolved to MKT or settled 50/50 annuls the question."
    )
    data: dict[str, Any] = {
        "external_id": question_external_id(platform=record.platform, external_id=record.external_id),
        "title": record.title[:1000],
        "type": record.question_type,
        "track": Question.Track.LIVE,
        "open_at": now,
        "close_at": record.close_at,
        "resolution_criteria": criteria,
        "background": record.description[:20000],
        "origin": Question.Origin.MARKET,
        "attribution": {"source": label, "market_id": record.external_id, "url": record.url},
    }
    if record.url:
        data["provenance_url"] = record.url
    if record.question_type == "multiple_choice":
        data["options"] = list(record.outcomes)
    if not selection.open_questions:
        data["status"] = Question.Status.DRAFT
    return data


@dataclass
class QuestionSyncResult:
    questions_created: int = 0
    resolutions_added: int = 0
    problems: list[str] = field(default_factory=list)


def _author_label(platform: str) -> str:
    return f"market:{platform}"


def _new_question_values(
    *, record: MarketRecord, market_id: int, selection: Selection, now: datetime
) -> dict[str, Any]:
    """The field values of a question for a selected market, validated exactly as
    ``question_upsert`` validates (a ValidationError names the refused field), so that it can
    be inserted in bulk."""
    values, _, _ = question_data_clean(_question_data(record=record, selection=selection, now=now))
    values.setdefault("origin", Question.Origin.MARKET)
    if "status" not in values:
        # question_upsert's rule for a live question without an explicit status.
        values["status"] = Question.Status.OPEN if values["close_at"] > now else Question.Status.CLOSED
    values["market_id"] = market_id
    return values


# What the resolution pre-check reads; the few questions that need a change are loaded whole.
_SYNC_FIELDS = ("id", "external_id", "status", "type", "rejection_reason", "market_id")


def market_questions_sync(
    *, records: Iterable[MarketRecord], market_ids: Mapping[str, int], selection: Selection, now: datetime
) -> QuestionSyncResult:
    """Create questions for newly selected markets and bring every market question's
    resolution in line with its market. Call inside the poll's transaction."""
    result = QuestionSyncResult()
    qids = {question_external_id(platform=r.platform, external_id=r.external_id): r for r in records}
    questions = {q.external_id: q for q in Question.objects.filter(external_id__in=list(qids)).only(*_SYNC_FIELDS)}
    currents = question_current_resolutions(q.pk for q in questions.values())
    new_questions: list[dict[str, Any]] = []
    relink: list[tuple[int, int]] = []
    to_sync: list[tuple[int, MarketRecord]] = []
    for qid, record in qids.items():
        market_id = market_ids[record.external_id]
        question = questions.get(qid)
        if question is None:
            if not selection.accepts(record, now=now):
                continue
            try:
                new_questions.append(
                    _new_question_values(record=record, market_id=market_id, selection=selection, now=now)
                )
            except ValidationError as exc:
                # A market whose question data is refused is reported, not fatal.
                result.problems.append(f"{record.platform} market {record.external_id}: question refused: {exc}")
            continue
        if question.market_id != market_id:
            relink.append((question.pk, market_id))
        if _needs_change(question=question, record=record, current=currents.get(question.pk)):
            to_sync.append((question.pk, record))
    if new_questions:
        # A question created meanwhile by someone else fails the poll on the unique external id.
        Question.objects.bulk_create([Question(**values) for values in new_questions], batch_size=500)
        result.questions_created = len(new_questions)
    for question_id, market_id in relink:
        Question.objects.filter(pk=question_id).update(market_id=market_id, updated_at=timezone.now())
    if to_sync:
        full = Question.objects.in_bulk([question_id for question_id, _ in to_sync])
        for question_id, record in to_sync:
            try:
                with transaction.atomic():
                    if _sync_resolution(question=full[question_id], record=record, now=now):
                        result.resolutions_added += 1
            except ValidationError as exc:
                result.problems.append(f"{record.platform} market {record.external_id}: resolution refused: {exc}")
    return result


def _needs_change(*, question: Question, record: MarketRecord, current: Resolution | None) -> bool:
    """Whether the market's state could add a version (a cheap pre-check; the services decide)."""
    if question.status == Question.Status.DRAFT or question.rejection_reason:
        return False
    state = record.state
    if state.kind == "held":
        return False
    if state.kind == "open":
        return current is not None and current.kind != Resolution.Kind.UNRESOLVE
    if state.kind == "annulled":
        return current is None or current.kind != Resolution.Kind.ANNUL
    return not (
        current is not None
        and current.kind in (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)
        and current.provisional == state.provisional
        and current.outcome == (state.outcome == YES if question.type == Question.Type.BINARY else state.outcome)
    )


def _sync_resolution(*, question: Question, record: MarketRecord, now: datetime) -> bool:
    """Apply the market's state to its question; True when a resolution version was added."""
    # Drafts await curation and rejected drafts are a closed decision: neither follows the market.
    if question.status == Question.Status.DRAFT or question.rejection_reason:
        return False
    state = record.state
    label = _author_label(record.platform)
    evidence = {
        "platform": record.platform,
        "market_id": record.external_id,
        "status": record.status,
        "url": record.url,
    }
    platform_name = Market.Platform(record.platform).label
    if state.kind == "held":
        return False
    if state.kind == "open":
        current = question.current_resolution
        # Only withdraw what a market put there: a staff decision stands until staff change it.
        if current is None or current.kind == Resolution.Kind.UNRESOLVE or current.author_label != label:
            return False
        note = f"The {platform_name} market is no longer resolved (status {record.status or 'open'})."
        return question_unresolve(question=question, note=note, author_label=label, now=now) is not None
    if state.kind == "annulled":
        return (
            question_annul(question=question, reason=state.reason, author_label=label, evidence=evidence, now=now)
            is not None
        )
    outcome: Any = state.outcome
    if question.type == Question.Type.BINARY:
        outcome = state.outcome == YES
    stage = "provisional" if state.provisional else "final"
    note = f"{platform_name} market {record.status}: {state.outcome} ({stage})."
    resolution = question_resolve(
        question=question,
        outcome=outcome,
        resolved_at=state.resolved_at,
        provisional=state.provisional,
        note=note,
        evidence=evidence,
        author_label=label,
        now=now,
    )
    return resolution is not None
