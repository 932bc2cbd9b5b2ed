"""Questions: creation from the documented JSON shape, lifecycle and versioned resolutions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Choices, Max
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from ingestion.models import Question, Resolution
from ingestion.signals import outcome_published, resolution_changed

REQUIRED_KEYS = ("external_id", "title", "type", "track", "open_at", "close_at", "resolution_criteria")
KNOWN_KEYS = {
    *REQUIRED_KEYS,
    "resolve_by",
    "background",
    "domain",
    "options",
    "unit",
    "lower_bound",
    "upper_bound",
    "granularity",
    "subject",
    "object",
    "target_date",
    "horizon_days",
    "background_events",
    "outcome",
    "resolved_at",
    "simulated_date_policy",
    "status",
    "origin",
    "provenance_url",
    "attribution",
}


def parse_aware_datetime(value: Any, *, field_name: str) -> datetime:
    """An ISO 8601 date or datetime with an offset (a bare date means midnight UTC)."""
    if isinstance(value, datetime):
        parsed: datetime | None = value
    elif isinstance(value, str):
        # A bare date first: parse_datetime would read it as a naive midnight and refuse it.
        day = _parse_iso_date(value.strip())
        if day is not None:
            parsed = datetime(day.year, day.month, day.day, tzinfo=UTC)
        else:
            try:
                parsed = parse_datetime(value)
            except ValueError:
                parsed = None
    else:
        parsed = None
    if parsed is None:
        raise ValidationError({field_name: f"{value!r} is not an ISO 8601 date or datetime."})
    if timezone.is_naive(parsed):
        raise ValidationError({field_name: f"{value!r} has no time zone; give an offset such as +00:00 or Z."})
    return parsed.astimezone(UTC)


def _parse_iso_date(value: str) -> date | None:
    try:
        return parse_date(value)
    except ValueError:
        return None


def _probability_ok(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def validate_outcome(*, question: Question, outcome: Any) -> Any:
    """The outcome in its stored shape for the question's type, or a ValidationError naming it."""
    qtype = question.type
    if qtype == Question.Type.BINARY:
        if isinstance(outcome, bool):
            return outcome
        if isinstance(outcome, int | float) and outcome in (0, 1):
            return bool(outcome)
        raise ValidationError({"outcome": "A binary outcome is true or false."})
    if qtype == Question.Type.MULTIPLE_CHOICE:
        if outcome not in question.options:
            raise ValidationError({"outcome": f"{outcome!r} is not one of the options {question.options}."})
        return outcome
    if qtype == Question.Type.QUANTITY:
        if not _probability_ok(outcome):
            raise ValidationError({"outcome": "A quantity outcome is a finite number."})
        return float(outcome)
    if qtype == Question.Type.TIMEFRAME:
        if not isinstance(outcome, str):
            raise ValidationError({"outcome": "A timeframe outcome is a period string such as 2026-Q3."})
        from ingestion.periods import parse_period

        try:
            return parse_period(question.granularity, outcome).label
        except ValueError as exc:
            raise ValidationError({"outcome": str(exc)}) from exc
    if qtype == Question.Type.RELATION:
        return _validate_relation_outcome(outcome)
    if qtype == Question.Type.OPEN_ENDED:
        if isinstance(outcome, str) and outcome.strip():
            return outcome.strip()
        if isinstance(outcome, list) and outcome and all(isinstance(e, str) and e.strip() for e in outcome):
            return [e.strip() for e in outcome]
        raise ValidationError({"outcome": "An open-ended outcome is a list of gold events or an answer string."})
    raise ValidationError({"type": f"Unknown question type {qtype!r}."})


def _validate_relation_outcome(outcome: Any) -> dict[str, dict[str, list[str]]]:
    from ingestion.reference_data import cameo_children

    relations = outcome.get("relations") if isinstance(outcome, dict) else None
    if not isinstance(relations, dict):
        raise ValidationError({"outcome": 'A relation outcome is {"relations": {"04": ["042", ...], ...}}.'})
    children = cameo_children()
    clean: dict[str, list[str]] = {}
    for root, codes in relations.items():
        if root not in children:
            raise ValidationError({f"outcome.relations.{root}": f"{root!r} is not a first-level CAMEO code."})
        if not isinstance(codes, list):
            raise ValidationError({f"outcome.relations.{root}": "must be a list of second-level codes."})
        for code in codes:
            if code not in children[root]:
                raise ValidationError(
                    {f"outcome.relations.{root}": f"{code!r} is not a second-level CAMEO code under {root}."}
                )
        clean[root] = sorted(set(codes))
    return {"relations": clean}


@cache
def _choice_values(choices: type[Choices]) -> tuple[Any, ...]:
    # Django rebuilds ``Choices.values`` on every access; a bulk import validates each
    # question against several of them. A tuple, not a set: a malformed entry may hold a list
    # or an object where a choice belongs, and must be refused by name, not raise TypeError.
    return tuple(choices.values)


@dataclass
class _Fields:
    values: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)

    def error(self, name: str, message: str) -> None:
        self.errors.setdefault(name, []).append(message)


def question_data_clean(data: Mapping[str, Any]) -> tuple[dict[str, Any], Any, datetime | None]:
    """Validate one load_questions entry; returns model fields, the raw outcome and resolved_at."""
    out = _Fields()
    if not isinstance(data, Mapping):
        raise ValidationError({"entry": "Each entry is a JSON object."})
    for key in sorted(set(data) - KNOWN_KEYS):
        out.error(key, "Unknown key.")
    for key in REQUIRED_KEYS:
        if data.get(key) in (None, ""):
            out.error(key, "This key is required.")
    qtype = data.get("type")
    if qtype is not None and qtype not in _choice_values(Question.Type):
        out.error("type", f"{qtype!r} is not one of {', '.join(Question.Type.values)}.")
    track = data.get("track")
    if track is not None and track not in _choice_values(Question.Track):
        out.error("track", f"{track!r} is not one of {', '.join(Question.Track.values)}.")
    for key in ("open_at", "close_at", "resolve_by", "resolved_at"):
        if data.get(key) not in (None, ""):
            try:
                out.values[key] = parse_aware_datetime(data[key], field_name=key)
            except ValidationError as exc:
                for msgs in exc.message_dict.values():
                    for m in msgs:
                        out.error(key, m)
    if "open_at" in out.values and "close_at" in out.values and out.values["open_at"] >= out.values["close_at"]:
        out.error("close_at", "close_at must be after open_at.")
    for key in ("title", "resolution_criteria", "background", "domain", "unit", "provenance_url"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            out.error(key, "must be a string.")
        elif value is not None:
            out.values[key] = value.strip()
    if qtype == Question.Type.MULTIPLE_CHOICE:
        options = data.get("options")
        if (
            not isinstance(options, list)
            or len(options) < 2
            or not all(isinstance(o, str) and o.strip() for o in options)
        ):
            out.error("options", "A multiple-choice question needs a list of at least two option strings.")
        elif len(set(options)) != len(options):
            out.error("options", "Options must be distinct.")
        else:
            out.values["options"] = options
    if qtype == Question.Type.QUANTITY:
        for key in ("lower_bound", "upper_bound"):
            if data.get(key) is not None:
                if not _probability_ok(data[key]):
                    out.error(key, "must be a number.")
                else:
                    out.values[key] = float(data[key])
    if qtype == Question.Type.TIMEFRAME:
        granularity = data.get("granularity")
        if granularity not in _choice_values(Question.Granularity):
            out.error(
                "granularity", f"A timeframe question needs granularity: {', '.join(Question.Granularity.values)}."
            )
        else:
            out.values["granularity"] = granularity
    if qtype == Question.Type.RELATION:
        from ingestion.reference_data import iso3_countries

        countries = iso3_countries()
        for key in ("subject", "object"):
            if data.get(key) not in countries:
                out.error(key, f"{data.get(key)!r} is not an ISO 3166-1 alpha-3 country code.")
            else:
                out.values[key] = data[key]
        target = data.get("target_date")
        day = _parse_iso_date(target) if isinstance(target, str) else None
        if day is None:
            out.error("target_date", "A relation question needs target_date as YYYY-MM-DD.")
        else:
            out.values["target_date"] = day
        horizon = data.get("horizon_days", 1)
        if not isinstance(horizon, int) or isinstance(horizon, bool) or horizon < 1:
            out.error("horizon_days", "must be a positive integer.")
        else:
            out.values["horizon_days"] = horizon
    if qtype == Question.Type.OPEN_ENDED:
        events = data.get("background_events", [])
        if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
            out.error("background_events", "must be a list of strings.")
        else:
            out.values["background_events"] = events
    for key, choices in (("simulated_date_policy", Question.SimulatedDatePolicy), ("status", Question.Status)):
        if data.get(key) is not None:
            if data[key] not in _choice_values(choices):
                out.error(key, f"{data[key]!r} is not one of {', '.join(choices.values)}.")
            else:
                out.values[key] = data[key]
    if data.get("origin") is not None:
        if data["origin"] not in _choice_values(Question.Origin):
            out.error("origin", f"{data['origin']!r} is not one of {', '.join(Question.Origin.values)}.")
        else:
            out.values["origin"] = data["origin"]
    if data.get("attribution") is not None:
        if not isinstance(data["attribution"], dict):
            out.error("attribution", "must be an object.")
        else:
            out.values["attribution"] = data["attribution"]
    outcome = data.get("outcome")
    resolved_at = out.values.pop("resolved_at", None)
    if track == Question.Track.REPLAY:
        if outcome is None:
            out.error("outcome", "A replay question needs its outcome.")
        if data.get("resolved_at") in (None, ""):
            out.error("resolved_at", "A replay question needs resolved_at.")
        elif resolved_at is not None and "open_at" in out.values and resolved_at <= out.values["open_at"]:
            out.error("resolved_at", "resolved_at must be after open_at.")
    if out.errors:
        raise ValidationError(out.errors)
    out.values.update(external_id=str(data["external_id"]), type=qtype, track=track)
    if outcome is not None:
        probe = Question(**{k: v for k, v in out.values.items() if k != "outcome"})
        try:
            outcome = validate_outcome(question=probe, outcome=outcome)
        except ValidationError as exc:
            raise ValidationError(exc.message_dict) from exc
    return out.values, outcome, resolved_at


@transaction.atomic
def question_upsert(
    *, data: Mapping[str, Any], origin: str = Question.Origin.ADMIN, now: datetime | None = None
) -> tuple[Question, bool]:
    """Create or update a question keyed on external_id. Returns (question, changed)."""
    now = now or timezone.now()
    values, outcome, resolved_at = question_data_clean(data)
    values.setdefault("origin", origin)
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
    if outcome is not None:
        resolution = question_resolve(
            question=question, outcome=outcome, resolved_at=resolved_at, author_label="import", now=now
        )
        changed = changed or resolution is not None
    return question, changed


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
    an amend after a resolve) as the next version, its status set to resolved, and an
    announcement once the transaction commits. The caller has checked that each outcome
    changes something; outcomes are validated here as ``question_resolve`` validates them."""
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
        _announce_on_commit(resolution)
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
