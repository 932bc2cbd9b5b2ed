"""Questions: creation from the documented JSON shape (checked by ``ingestion.question_data``),
lifecycle and versioned resolutions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from ingestion.models import Article, Question, Resolution
from ingestion.question_data import question_data_clean, validate_outcome
from ingestion.selectors.archives import archive_articles_by_id
from ingestion.signals import ResolutionChange, outcome_published, resolution_changed, resolutions_changed


@transaction.atomic
def question_upsert(
    *, data: Mapping[str, Any], origin: str = Question.Origin.ADMIN, now: datetime | None = None
) -> tuple[Question, bool]:
    """Create or update a question keyed on external_id. Returns (question, changed)."""
    now = now or timezone.now()
    values, outcome, resolved_at = question_data_clean(data)
    resolved_by = data.get("resolved_by") or []
    if resolved_by:
        # Written from an imported news archive, which is then its evidence corpus.
        values.setdefault("origin", Question.Origin.ARCHIVE)
    values.setdefault("origin", origin)
    resolving = _resolving_items(values, resolved_by, resolved_at=resolved_at)
    if "status" not in values:
        values["status"] = (
            Question.Status.RESOLVED if values["track"] == Question.Track.REPLAY else Question.Status.OPEN
        )
        if values["status"] == Question.Status.OPEN and values["close_at"] <= now:
            values["status"] = Question.Status.CLOSED
    question = Question.objects.filter(external_id=values["external_id"]).first()
    changed = False
    if question is None:
        question = Question.objects.create(**values)
        changed = True
    else:
        updates = {k: v for k, v in values.items() if k != "status" and getattr(question, k) != v}
        if updates:
            for k, v in updates.items():
                setattr(question, k, v)
            question.save(update_fields=[*updates, "updated_at"])
            changed = True
    if resolving is not None and set(question.provenance_articles.values_list("pk", flat=True)) != {
        a.pk for a in resolving
    }:
        question.provenance_articles.set(resolving)
        changed = True
    if outcome is not None:
        resolution = question_resolve(
            question=question, outcome=outcome, resolved_at=resolved_at, author_label="import", now=now
        )
        changed = changed or resolution is not None
    return question, changed


# Where in the window [open_at, t_res) a replay session places the agent, by question policy.
SIMULATED_DATE_FRACTIONS = {
    Question.SimulatedDatePolicy.EARLY: 0.25,
    Question.SimulatedDatePolicy.MID: 0.50,
    Question.SimulatedDatePolicy.LATE: 0.75,
    Question.SimulatedDatePolicy.NEAR_RESOLUTION: 0.95,
}


def simulated_date(*, open_at: datetime, window_end: datetime, policy: str) -> datetime:
    """t_sim: the policy's fraction of the window [open_at, window_end)."""
    return open_at + (window_end - open_at) * SIMULATED_DATE_FRACTIONS.get(policy, 0.5)  # type: ignore[call-overload]


def _resolving_items(
    values: Mapping[str, Any], resolved_by: Sequence[str], *, resolved_at: datetime | None
) -> list[Article] | None:
    """The imported archive items an entry's ``resolved_by`` names (None when it names none). An
    unknown id, or an item a replay session would already be served (dated before the simulated
    date), is refused by name: the question would give its answer away."""
    if not resolved_by:
        return None
    found = archive_articles_by_id(resolved_by)
    unknown = [i for i in resolved_by if i not in found]
    if unknown:
        raise ValidationError(
            {
                "resolved_by": f"unknown archive id(s) {', '.join(map(repr, unknown))}: no imported archive item "
                "has it (import the archive first: manage.py import_archive)."
            }
        )
    items = [article for i in dict.fromkeys(resolved_by) for article in found[i]]
    if values.get("track") == Question.Track.REPLAY and resolved_at is not None:
        t_sim = simulated_date(
            open_at=values["open_at"],
            window_end=resolved_at,
            policy=values.get("simulated_date_policy") or Question.SimulatedDatePolicy.MID,
        )
        early = [a for a in items if a.published_at is not None and a.published_at < t_sim]
        if early:
            first = min(early, key=lambda a: a.published_at or t_sim)
            raise ValidationError(
                {
                    "resolved_by": f"archive item {first.external_id!r} (published {first.published_at:%Y-%m-%d %H:%M} "
                    f"UTC) is before the simulated date {t_sim:%Y-%m-%d %H:%M} UTC, so a replay session would be "
                    "served it: choose an earlier open_at or simulated_date_policy."
                }
            )
    return items


@dataclass(frozen=True)
class LoadReport:
    created: int
    updated: int
    unchanged: int


@transaction.atomic
def questions_load(*, entries: Sequence[Any], now: datetime | None = None) -> LoadReport:
    """Load a list of question objects; one invalid entry rejects the whole list."""
    if not isinstance(entries, list):
        raise ValidationError("The file must contain a JSON list of question objects.")
    seen: set[str] = set()
    created = updated = unchanged = 0
    for index, entry in enumerate(entries):
        label = f"entry {index}"
        if isinstance(entry, Mapping) and entry.get("external_id"):
            label += f" ({entry['external_id']})"
            if str(entry["external_id"]) in seen:
                raise ValidationError(f"{label}: external_id appears twice in the file.")
            seen.add(str(entry["external_id"]))
        existed = isinstance(entry, Mapping) and Question.objects.filter(external_id=entry.get("external_id")).exists()
        try:
            _, changed = question_upsert(data=entry, now=now)
        except ValidationError as exc:
            details = (
                "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
                if hasattr(exc, "error_dict")
                else " ".join(exc.messages)
            )
            raise ValidationError(f"{label}: {details}") from exc
        if not existed:
            created += 1
        elif changed:
            updated += 1
        else:
            unchanged += 1
    return LoadReport(created=created, updated=updated, unchanged=unchanged)


def _current(question: Question) -> Resolution | None:
    return question.resolutions.order_by("-version").first()


def _add_resolution(
    *,
    question: Question,
    kind: str,
    outcome: Any = None,
    resolved_at: datetime | None = None,
    provisional: bool = False,
    note: str = "",
    evidence: dict[str, Any] | None = None,
    author: User | None = None,
    author_label: str = "",
    now: datetime,
) -> Resolution:
    # Lock the question so two concurrent resolutions get consecutive versions.
    Question.objects.select_for_update().filter(pk=question.pk).first()
    version = (question.resolutions.aggregate(v=Max("version"))["v"] or 0) + 1
    resolution = Resolution.objects.create(
        question=question,
        version=version,
        kind=kind,
        outcome=outcome,
        resolved_at=resolved_at,
        provisional=provisional,
        note=note,
        evidence=evidence or {},
        author=author,
        author_label=author_label,
        created_at=now,
    )

    _announce_on_commit(resolution)
    return resolution


def _announce_on_commit(resolution: Resolution) -> None:
    def announce() -> None:
        resolution_changed.send(
            sender=Question,
            question_id=resolution.question_id,
            resolution_id=resolution.pk,
            version=resolution.version,
            kind=resolution.kind,
        )

    transaction.on_commit(announce)


@dataclass(frozen=True)
class NewResolution:
    """A resolution to add after the question's current one (``current``, None for the first)."""

    question: Question
    outcome: Any
    resolved_at: datetime
    current: Resolution | None = None


@transaction.atomic
def questions_resolve_many(
    *, items: Sequence[NewResolution], note: str = "", author_label: str = "", now: datetime
) -> list[Resolution]:
    """``question_resolve`` for many questions at once (bulk imports): each gets a resolve (or
    an amend after a resolve) as the next version and its status set to resolved; the whole
    batch is announced once (``resolutions_changed``) when the transaction commits. The caller
    has checked that each outcome changes something; outcomes are validated here as
    ``question_resolve`` validates them."""
    if not items:
        return []
    ids = [item.question.pk for item in items]
    # Lock the questions, as a single resolution does, so concurrent versions stay consecutive.
    list(Question.objects.select_for_update().filter(pk__in=ids).values_list("pk", flat=True))
    rows = []
    for item in items:
        current = item.current
        kind = (
            Resolution.Kind.AMEND
            if current is not None and current.kind in (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)
            else Resolution.Kind.RESOLVE
        )
        rows.append(
            Resolution(
                question=item.question,
                version=(current.version if current is not None else 0) + 1,
                kind=kind,
                outcome=validate_outcome(question=item.question, outcome=item.outcome),
                resolved_at=item.resolved_at,
                note=note,
                author_label=author_label,
                created_at=now,
            )
        )
    created = Resolution.objects.bulk_create(rows, batch_size=500)
    Question.objects.filter(pk__in=ids).exclude(status=Question.Status.RESOLVED).update(
        status=Question.Status.RESOLVED, updated_at=timezone.now()
    )
    for item in items:
        item.question.status = Question.Status.RESOLVED
    for resolution in created:
        if resolution.pk is None:
            # Backends that do not return keys from a bulk insert (SQLite before 3.35).
            resolution.pk = Resolution.objects.get(question=resolution.question, version=resolution.version).pk
    changes = [
        ResolutionChange(question_id=r.question_id, resolution_id=r.pk, version=r.version, kind=r.kind) for r in created
    ]
    # One announcement for the batch: the follow-up work (hindsight builds, regrades) is enqueued
    # per batch of questions rather than once per question.
    transaction.on_commit(lambda: resolutions_changed.send(sender=Question, changes=changes))
    return created


@transaction.atomic
def question_resolve(
    *,
    question: Question,
    outcome: Any,
    resolved_at: datetime | None = None,
    provisional: bool = False,
    note: str = "",
    evidence: dict[str, Any] | None = None,
    author: User | None = None,
    author_label: str = "",
    now: datetime | None = None,
) -> Resolution | None:
    """Resolve (or amend) a question. Returns None when nothing changes, so re-running is safe."""
    now = now or timezone.now()
    if question.status == Question.Status.DRAFT:
        raise ValidationError({"status": "A draft question cannot be resolved; open it first."})
    outcome = validate_outcome(question=question, outcome=outcome)
    if resolved_at is not None and timezone.is_naive(resolved_at):
        raise ValidationError({"resolved_at": "resolved_at must be timezone-aware."})
    current = _current(question)
    if (
        current is not None
        and current.kind in (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)
        and current.outcome == outcome
        and current.provisional == provisional
    ):
        return None
    kind = (
        Resolution.Kind.AMEND
        if current is not None and current.kind in (Resolution.Kind.RESOLVE, Resolution.Kind.AMEND)
        else Resolution.Kind.RESOLVE
    )
    resolution = _add_resolution(
        question=question,
        kind=kind,
        outcome=outcome,
        resolved_at=resolved_at or (current.resolved_at if current and current.resolved_at else now),
        provisional=provisional,
        note=note,
        evidence=evidence,
        author=author,
        author_label=author_label,
        now=now,
    )
    if question.status != Question.Status.RESOLVED:
        question.status = Question.Status.RESOLVED
        question.save(update_fields=["status", "updated_at"])
    return resolution


@transaction.atomic
def question_unresolve(
    *,
    question: Question,
    note: str = "",
    author: User | None = None,
    author_label: str = "",
    now: datetime | None = None,
) -> Resolution | None:
    """Withdraw the current resolution; the question returns to open or closed by its deadline."""
    now = now or timezone.now()
    current = _current(question)
    if current is None or current.kind == Resolution.Kind.UNRESOLVE:
        return None
    resolution = _add_resolution(
        question=question,
        kind=Resolution.Kind.UNRESOLVE,
        note=note,
        author=author,
        author_label=author_label,
        now=now,
    )
    question.status = Question.Status.OPEN if question.close_at > now else Question.Status.CLOSED
    question.save(update_fields=["status", "updated_at"])
    return resolution


@transaction.atomic
def question_annul(
    *,
    question: Question,
    reason: str,
    author: User | None = None,
    author_label: str = "",
    evidence: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> Resolution | None:
    """Annul a question (cancelled, 50-50, unresolvable); its grades are voided by the leaderboard."""
    now = now or timezone.now()
    if not reason.strip():
        raise ValidationError({"reason": "Give the reason for annulling."})
    current = _current(question)
    if current is not None and current.kind == Resolution.Kind.ANNUL:
        return None
    resolution = _add_resolution(
        question=question,
        kind=Resolution.Kind.ANNUL,
        note=reason.strip(),
        evidence=evidence,
        author=author,
        author_label=author_label,
        now=now,
    )
    question.status = Question.Status.ANNULLED
    question.save(update_fields=["status", "updated_at"])
    return resolution


@transaction.atomic
def question_open(*, question: Question, now: datetime | None = None) -> Question:
    """Open a draft (curation approval)."""
    now = now or timezone.now()
    if question.status != Question.Status.DRAFT:
        raise ValidationError({"status": f"Only a draft can be opened; this question is {question.status}."})
    if question.close_at <= now:
        raise ValidationError({"close_at": "The deadline has passed; move close_at into the future first."})
    question.status = Question.Status.OPEN
    question.save(update_fields=["status", "updated_at"])
    return question


@transaction.atomic
def question_reject_draft(*, question: Question, reason: str, now: datetime | None = None) -> Question:
    """Reject a generated draft with a reason; it stays as an annulled record of the decision."""
    if question.status != Question.Status.DRAFT:
        raise ValidationError({"status": f"Only a draft can be rejected; this question is {question.status}."})
    if not reason.strip():
        raise ValidationError({"rejection_reason": "Give a reason for rejecting."})
    question.rejection_reason = reason.strip()
    question.status = Question.Status.ANNULLED
    question.save(update_fields=["rejection_reason", "status", "updated_at"])
    return question


@transaction.atomic
def question_publish_outcome(*, question: Question, now: datetime | None = None) -> Question:
    """Reveal a replay question's outcome to everyone."""
    if question.track != Question.Track.REPLAY:
        raise ValidationError({"track": "Only replay questions have their outcome published by staff."})
    if question.status not in (Question.Status.RESOLVED, Question.Status.ANNULLED):
        raise ValidationError({"status": "Only a resolved or annulled question can have its outcome published."})
    if question.outcome_published_at is None:
        question.outcome_published_at = now or timezone.now()
        question.save(update_fields=["outcome_published_at", "updated_at"])
        question_id = question.pk
        transaction.on_commit(lambda: outcome_published.send(sender=Question, question_id=question_id))
    return question


def questions_close_due(*, now: datetime | None = None) -> int:
    """Close live questions whose deadline has passed; returns how many were closed."""
    now = now or timezone.now()
    return Question.objects.filter(status=Question.Status.OPEN, track=Question.Track.LIVE, close_at__lte=now).update(
        status=Question.Status.CLOSED, updated_at=now
    )


def question_lookup(identifier: str) -> Question:
    """A question by numeric id or external id (for operator commands)."""
    query = Question.objects.filter(external_id=identifier)
    if identifier.isdigit():
        query = query | Question.objects.filter(pk=int(identifier))
    question = query.first()
    if question is None:
        raise Question.DoesNotExist(f"No question with id or external id {identifier!r}.")
    return question


def default_window_end(question: Question) -> datetime:
    """t_res for replay windows: the current resolution's time, else resolve_by or close_at."""
    current = _current(question)
    if current is not None and current.resolved_at is not None:
        return current.resolved_at
    return question.resolve_by or question.close_at or question.open_at + timedelta(days=1)
