"""As-of structured events (CAMEO-coded, MIRAI style): only days that ended before ``as_of`` are
visible; filters by entity, relation (a first-level code includes its children) and date range."""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime
from typing import Any

from django.db.models import Count, Q, QuerySet

from ingestion.models import StructuredEvent
from ingestion.reference_data import cameo_children, cameo_first_level, cameo_second_level
from ingestion.selectors.evidence import InvalidEvidenceQuery, last_visible_event_day


def _relation_filter(relation: str) -> Q:
    """A first-level CAMEO code stands for itself and all its second-level children (MIRAI)."""
    code = relation.strip()
    if len(code) == 2 and code in cameo_first_level():
        return Q(relation_root=code) | Q(relation__in=sorted(cameo_children()[code]))
    if len(code) == 3 and code in cameo_second_level():
        return Q(relation=code)
    raise InvalidEvidenceQuery(
        "relation", f"{relation!r} is not a first-level (2-digit) or second-level (3-digit) CAMEO code."
    )


def _country(code: str, name: str) -> str:
    value = code.strip().upper()
    if not (len(value) == 3 and value.isalpha()):
        raise InvalidEvidenceQuery(name, f"must be an ISO 3166-1 alpha-3 code, got {code!r}.")
    return value


def events_query(
    *,
    as_of: datetime,
    subject: str | None = None,
    object: str | None = None,  # the model's (and MIRAI's) name for the tail entity
    relation: str | None = None,
    start: date | None = None,
    end: date | None = None,
) -> QuerySet[StructuredEvent]:
    """Structured events dated on days that ended before as_of, most recent first.

    subject/object are ISO alpha-3 codes; relation a CAMEO code (2-digit includes its children);
    start/end an inclusive date range, clipped to what is visible.
    """
    qs = StructuredEvent.objects.filter(date__lte=last_visible_event_day(as_of))
    if subject:
        qs = qs.filter(subject=_country(subject, "subject"))
    if object:
        qs = qs.filter(object=_country(object, "object"))
    if relation:
        qs = qs.filter(_relation_filter(relation))
    if start is not None:
        qs = qs.filter(date__gte=start)
    if end is not None:
        qs = qs.filter(date__lte=end)
    return qs.order_by("-date", "-id")


def events_count(**filters: Any) -> int:
    """Number of events matching events_query(**filters)."""
    return events_query(**filters).count()


def events_distribution_by_relation(**filters: Any) -> dict[str, int]:
    """Second-level relation code -> number of matching events, most frequent first."""
    rows = events_query(**filters).order_by().values_list("relation").annotate(n=Count("id"))
    return dict(sorted(((code, n) for code, n in rows), key=lambda kv: (-kv[1], kv[0])))


def events_distribution_by_entity(*, role: str = "both", **filters: Any) -> dict[str, int]:
    """Country code -> number of matching events it takes part in (as subject, object or both)."""
    if role not in ("head", "tail", "both"):
        raise InvalidEvidenceQuery("role", "must be 'head', 'tail' or 'both'.")
    qs = events_query(**filters).order_by()
    counts: Counter[str] = Counter()
    if role in ("head", "both"):
        counts.update(dict(qs.values_list("subject").annotate(n=Count("id"))))
    if role in ("tail", "both"):
        counts.update(dict(qs.values_list("object").annotate(n=Count("id"))))
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
