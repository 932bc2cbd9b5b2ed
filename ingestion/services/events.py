"""MIRAI-style structured events: CSV import into StructuredEvent, and relation questions from them.

CSV columns (header row optional; without one the order below is assumed):
``date`` (YYYY-MM-DD), ``subject`` and ``object`` (ISO 3166-1 alpha-3), ``relation`` (a second-level
CAMEO code from the MIRAI table), ``articles`` (article ids or URLs separated by ``|`` or ``;``),
and optionally ``mentions`` (GDELT daily mention count).

Relation questions follow MIRAI's test-set construction (arXiv:2407.01231, section 2.3): an event
counts toward a query when it has at least ``min_mentions`` daily mentions (100 in the paper;
events whose file gave no count are not filtered on it) and at least ``min_articles`` linked news
articles (5); only international pairs (subject != object). Each (date, subject, object) with a
qualifying event becomes one query ``(t + l, s, ?, o)`` whose gold answer is every relation of the
qualifying events of that key.

Timing: MIRAI's "current date" is target - l days and the agent sees everything up to the end of
it, i.e. evidence strictly before ``as_of = target - (l - 1) days, 00:00 UTC``. The question's
replay window is [open_at, resolved_at) with resolved_at = end of the target day, and open_at is
placed so that the window's midpoint (the default simulated date) is exactly ``as_of``.
close_at is the start of the target day. Later simulated-date policies shorten the horizon.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_date

from ingestion.canonical import InvalidURL, canonical_url
from ingestion.models import Article, Question, StructuredEvent
from ingestion.reference_data import cameo_second_level, iso3_countries
from ingestion.services.questions import question_upsert

COLUMNS = ("date", "subject", "object", "relation", "articles", "mentions")
REQUIRED_COLUMNS = COLUMNS[:4]
ALIASES = {
    "event_date": "date",
    "head": "subject",
    "actor1": "subject",
    "subject_iso": "subject",
    "tail": "object",
    "actor2": "object",
    "object_iso": "object",
    "code": "relation",
    "cameo": "relation",
    "cameo_code": "relation",
    "relation_code": "relation",
    "article_ids": "articles",
    "urls": "articles",
    "sources": "articles",
    "num_mentions": "mentions",
}
SEPARATORS = re.compile(r"[|;]")

# MIRAI test-query defaults (section 2.3): >= 100 daily mentions, >= 5 downloaded articles, l = 1 day.
DEFAULT_MIN_MENTIONS = 100
DEFAULT_MIN_ARTICLES = 5
DEFAULT_HORIZON_DAYS = 1


@dataclass(frozen=True)
class EventRow:
    line: int
    date: date
    subject: str
    object: str
    relation: str
    article_ids: tuple[int, ...]
    urls: tuple[str, ...]
    mentions: int | None

    @property
    def dedupe_key(self) -> str:
        return event_dedupe_key(day=self.date, subject=self.subject, object=self.object, relation=self.relation)


@dataclass
class EventImportReport:
    rows: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    keys: set[tuple[date, str, str]] = field(default_factory=set)

    def summary(self) -> str:
        return f"{self.rows} rows: events {self.created} created, {self.updated} updated, {self.unchanged} unchanged"


@dataclass
class RelationQuestionReport:
    candidates: int = 0
    created: int = 0
    amended: int = 0
    unchanged: int = 0
    below_threshold: int = 0
    domestic: int = 0

    def summary(self) -> str:
        return (
            f"relation questions: {self.created} created, {self.amended} updated, {self.unchanged} unchanged "
            f"({self.candidates} (date, subject, object) keys; {self.below_threshold} without a qualifying event, "
            f"{self.domestic} domestic skipped)"
        )


def event_dedupe_key(*, day: date, subject: str, object: str, relation: str) -> str:
    return hashlib.sha256(f"{day.isoformat()}|{subject}|{relation}|{object}".encode()).hexdigest()


def _row_error(line: int, column: str, message: str) -> ValidationError:
    return ValidationError(f"row {line}, column '{column}': {message}")


def parse_events_csv(text: str) -> list[EventRow]:
    """Parse and validate every row; the first bad row raises naming its line and column."""
    reader = csv.reader(io.StringIO(text))
    rows = [(reader.line_num, r) for r in reader if any(cell.strip() for cell in r)]
    if not rows:
        raise ValidationError("The file has no rows.")
    first_line, first = rows[0]
    header = [ALIASES.get(c.strip().lower(), c.strip().lower()) for c in first]
    if set(REQUIRED_COLUMNS) <= set(header):
        unknown = [c for c in header if c not in COLUMNS]
        if unknown:
            raise _row_error(first_line, unknown[0], f"unknown column; expected {', '.join(COLUMNS)}.")
        columns = header
        body = rows[1:]
    elif first and _date_or_none(first[0].strip()) is not None:
        columns = list(COLUMNS[: len(first)])
        body = rows
    else:
        raise ValidationError(
            f"row {first_line}: not a structured-event CSV (expected a header with {', '.join(REQUIRED_COLUMNS)}"
            " [, articles, mentions] or rows starting with a YYYY-MM-DD date)."
        )
    countries = iso3_countries()
    codes = cameo_second_level()
    parsed: list[EventRow] = []
    for line, cells in body:
        if len(cells) != len(columns):
            raise ValidationError(f"row {line}: {len(cells)} columns, expected {len(columns)} ({', '.join(columns)}).")
        values = dict(zip(columns, (c.strip() for c in cells), strict=True))
        day = _date_or_none(values["date"])
        if day is None:
            raise _row_error(line, "date", f"{values['date']!r} is not a date (YYYY-MM-DD).")
        for column in ("subject", "object"):
            if values[column] not in countries:
                raise _row_error(line, column, f"{values[column]!r} is not an ISO 3166-1 alpha-3 country code.")
        relation = values["relation"]
        if relation not in codes:
            hint = " (events use second-level, three-digit codes)" if len(relation) == 2 else ""
            raise _row_error(line, "relation", f"{relation!r} is not a second-level CAMEO code{hint}.")
        ids: list[int] = []
        urls: list[str] = []
        for token in (t.strip() for t in SEPARATORS.split(values.get("articles", ""))):
            if not token:
                continue
            if token.isdigit():
                ids.append(int(token))
                continue
            try:
                urls.append(canonical_url(token))
            except InvalidURL as exc:
                raise _row_error(line, "articles", f"{token!r} is neither an article id nor an http(s) URL.") from exc
        mentions: int | None = None
        if values.get("mentions"):
            if not values["mentions"].isdigit():
                raise _row_error(line, "mentions", f"{values['mentions']!r} is not a non-negative integer.")
            mentions = int(values["mentions"])
        parsed.append(
            EventRow(
                line=line,
                date=day,
                subject=values["subject"],
                object=values["object"],
                relation=relation,
                article_ids=tuple(dict.fromkeys(ids)),
                urls=tuple(dict.fromkeys(urls)),
                mentions=mentions,
            )
        )
    return parsed


def _date_or_none(value: str) -> date | None:
    try:
        return parse_date(value) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) else None
    except ValueError:
        return None


@transaction.atomic
def events_import(*, rows: list[EventRow]) -> EventImportReport:
    """Store events keyed on (date, subject, relation, object); re-importing changes nothing."""
    report = EventImportReport(rows=len(rows))
    all_ids = {i for r in rows for i in r.article_ids}
    existing_ids = set(Article.objects.filter(pk__in=all_ids).values_list("pk", flat=True))
    for row in rows:
        missing = [i for i in row.article_ids if i not in existing_ids]
        if missing:
            raise _row_error(row.line, "articles", f"article id {missing[0]} does not exist.")
    all_urls = {u for r in rows for u in r.urls}
    by_url = dict(Article.objects.filter(url__in=all_urls).values_list("url", "pk"))

    merged: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = merged.setdefault(row.dedupe_key, {"row": row, "ids": set(), "urls": [], "mentions": None})
        entry["ids"].update(row.article_ids)
        entry["ids"].update(by_url[u] for u in row.urls if u in by_url)
        entry["urls"].extend(u for u in row.urls if u not in entry["urls"])
        if row.mentions is not None:
            entry["mentions"] = max(entry["mentions"] or 0, row.mentions)

    existing = {e.dedupe_key: e for e in StructuredEvent.objects.filter(dedupe_key__in=merged)}
    for key, entry in merged.items():
        row = entry["row"]
        report.keys.add((row.date, row.subject, row.object))
        event = existing.get(key)
        if event is None:
            event = StructuredEvent.objects.create(
                date=row.date,
                subject=row.subject,
                object=row.object,
                relation=row.relation,
                relation_root=row.relation[:2],
                article_urls=entry["urls"],
                mentions=entry["mentions"],
                dedupe_key=key,
            )
            if entry["ids"]:
                event.articles.add(*entry["ids"])
            report.created += 1
            continue
        changed = False
        # Another file may carry other articles of the same event: merge, never drop.
        urls = event.article_urls + [u for u in entry["urls"] if u not in event.article_urls]
        mentions = event.mentions
        if entry["mentions"] is not None and (mentions is None or entry["mentions"] > mentions):
            mentions = entry["mentions"]
        if urls != event.article_urls or mentions != event.mentions:
            event.article_urls, event.mentions = urls, mentions
            event.save(update_fields=["article_urls", "mentions"])
            changed = True
        new_ids = entry["ids"] - set(event.articles.values_list("pk", flat=True))
        if new_ids:
            event.articles.add(*new_ids)
            changed = True
        if changed:
            report.updated += 1
        else:
            report.unchanged += 1
    return report


def _article_count(event: StructuredEvent, linked: set[str]) -> int:
    """Distinct news articles of an event: linked Article rows plus URLs not matched to one."""
    return len(linked | set(event.article_urls))


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def relation_question_times(*, target_date: date, horizon_days: int) -> dict[str, datetime]:
    """open_at / close_at / resolved_at of a relation question (see the module docstring)."""
    as_of = _midnight(target_date) - timedelta(days=horizon_days - 1)
    resolved_at = _midnight(target_date) + timedelta(days=1)
    return {
        "open_at": as_of - (resolved_at - as_of),
        "close_at": _midnight(target_date),
        "resolved_at": resolved_at,
    }


def relation_question_external_id(*, target_date: date, subject: str, object: str, horizon_days: int) -> str:
    return f"relation:{target_date.isoformat()}:{subject}:{object}:h{horizon_days}"


@transaction.atomic
def relation_questions_generate(
    *,
    keys: set[tuple[date, str, str]] | None = None,
    min_mentions: int = DEFAULT_MIN_MENTIONS,
    min_articles: int = DEFAULT_MIN_ARTICLES,
    min_events: int = 1,
    horizon_days: int = DEFAULT_HORIZON_DAYS,
    start: date | None = None,
    end: date | None = None,
    source_label: str = "",
    now: datetime | None = None,
) -> RelationQuestionReport:
    """Create or amend one replay relation question per (date, subject, object) key.

    ``keys`` limits generation to those keys (e.g. the ones an import touched); the gold set is
    always built from every stored event of the key, so a later file that adds events amends it.
    """
    if min_mentions < 0 or min_articles < 0 or min_events < 1 or horizon_days < 1:
        raise ValidationError("Thresholds must be non-negative, min_events and horizon_days at least 1.")
    now = now or timezone.now()
    countries = iso3_countries()
    events = StructuredEvent.objects.all()
    if start is not None:
        events = events.filter(date__gte=start)
    if end is not None:
        events = events.filter(date__lte=end)
    if keys is not None:
        if not keys:
            return RelationQuestionReport()
        dates = {k[0] for k in keys}
        events = events.filter(date__in=dates)
    linked: dict[int, set[str]] = defaultdict(set)
    for event_id, url in StructuredEvent.articles.through.objects.filter(structuredevent__in=events).values_list(
        "structuredevent_id", "article__url"
    ):
        linked[event_id].add(url)

    grouped: dict[tuple[date, str, str], list[StructuredEvent]] = defaultdict(list)
    for event in events.order_by("date", "subject", "object", "relation"):
        key = (event.date, event.subject, event.object)
        if keys is None or key in keys:
            grouped[key].append(event)

    report = RelationQuestionReport(candidates=len(grouped))
    for (day, subject, obj), key_events in sorted(grouped.items()):
        if subject == obj:
            report.domestic += 1
            continue
        qualifying = [
            e
            for e in key_events
            if (e.mentions is None or e.mentions >= min_mentions)
            and _article_count(e, linked.get(e.pk, set())) >= min_articles
        ]
        if len(qualifying) < min_events:
            report.below_threshold += 1
            continue
        gold: dict[str, list[str]] = defaultdict(list)
        for e in qualifying:
            if e.relation not in gold[e.relation_root]:
                gold[e.relation_root].append(e.relation)
        outcome = {"relations": {root: sorted(codes) for root, codes in sorted(gold.items())}}
        times = relation_question_times(target_date=day, horizon_days=horizon_days)
        subject_name, object_name = countries.get(subject, subject), countries.get(obj, obj)
        data = {
            "external_id": relation_question_external_id(
                target_date=day, subject=subject, object=obj, horizon_days=horizon_days
            ),
            "title": f"Which relations will {subject_name} ({subject}) take towards {object_name} ({obj}) "
            f"on {day.isoformat()}?",
            "type": Question.Type.RELATION,
            "track": Question.Track.REPLAY,
            "subject": subject,
            "object": obj,
            "target_date": day.isoformat(),
            "horizon_days": horizon_days,
            "open_at": times["open_at"],
            "close_at": times["close_at"],
            "resolve_by": times["resolved_at"],
            "resolved_at": times["resolved_at"],
            "outcome": outcome,
            "domain": "international-relations",
            "resolution_criteria": (
                f"Resolves to every second-level CAMEO relation recorded from {subject} to {obj} dated "
                f"{day.isoformat()} in the structured event table, counting events with at least "
                f"{min_articles} linked news articles and at least {min_mentions} daily mentions (where "
                "known), grouped under their first-level codes (MIRAI relation forecasting)."
            ),
            "background": (
                f"Forecast the relations {subject_name} will take towards {object_name} on {day.isoformat()} "
                f"from information available up to {(day - timedelta(days=horizon_days)).isoformat()} "
                f"(temporal distance {horizon_days} day{'s' if horizon_days != 1 else ''})."
            ),
            "attribution": {
                "source": "MIRAI-style structured events",
                "file": source_label,
                "method": "MIRAI (Ye et al., 2024) test-query construction, arXiv:2407.01231",
                "thresholds": {"min_mentions": min_mentions, "min_articles": min_articles, "min_events": min_events},
            },
        }
        existed = Question.objects.filter(external_id=data["external_id"]).exists()
        _, changed = question_upsert(data=data, origin=Question.Origin.IMPORTED, now=now)
        if not existed:
            report.created += 1
        elif changed:
            report.amended += 1
        else:
            report.unchanged += 1
    return report


@dataclass
class EventFileReport:
    events: EventImportReport
    questions: list[tuple[int, RelationQuestionReport]] = field(default_factory=list)


@transaction.atomic
def events_import_file(
    *,
    text: str,
    source_label: str = "",
    generate_questions: bool = True,
    min_mentions: int = DEFAULT_MIN_MENTIONS,
    min_articles: int = DEFAULT_MIN_ARTICLES,
    min_events: int = 1,
    horizons: tuple[int, ...] = (DEFAULT_HORIZON_DAYS,),
    now: datetime | None = None,
) -> EventFileReport:
    """Parse, store and (optionally) turn into relation questions, all or nothing."""
    rows = parse_events_csv(text)
    report = EventFileReport(events=events_import(rows=rows))
    if generate_questions:
        for horizon in horizons:
            report.questions.append(
                (
                    horizon,
                    relation_questions_generate(
                        keys=report.events.keys,
                        min_mentions=min_mentions,
                        min_articles=min_articles,
                        min_events=min_events,
                        horizon_days=horizon,
                        source_label=source_label,
                        now=now,
                    ),
                )
            )
    return report
