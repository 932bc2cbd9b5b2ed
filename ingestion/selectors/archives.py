"""Imported news archives (``ingestion.services.archives``): which archive covers a question's
window, which items resolve it, and where an item came from (source, licence, attribution)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from ingestion.archives import licence_label
from ingestion.models import Article, Question, Source


@dataclass(frozen=True)
class Provenance:
    """Where an evidence item came from, as the site states it next to the item."""

    source: str
    licence: str
    licence_url: str
    attribution: str
    url: str

    @property
    def text(self) -> str:
        return ", ".join(part for part in (self.source, self.licence, self.attribution) if part)


def archive_sources() -> QuerySet[Source]:
    return Source.objects.filter(kind=Source.Kind.ARCHIVE).order_by("name", "pk")


def _span(source: Source) -> tuple[datetime | None, datetime | None]:
    options = source.options if isinstance(source.options, dict) else {}
    first, last = options.get("first_published_at"), options.get("last_published_at")
    return (
        datetime.fromisoformat(first) if isinstance(first, str) else None,
        datetime.fromisoformat(last) if isinstance(last, str) else None,
    )


def archives_covering(*, start: datetime, end: datetime) -> list[Source]:
    """The archive sources with items dated inside [start, end]: an agent placed in that window
    finds their earlier items through the gateway, and a hindsight graph can be built from them."""
    covering = []
    for source in archive_sources():
        first, last = _span(source)
        if first is not None and last is not None and first <= end and last >= start:
            covering.append(source)
    return covering


def question_archives(question: Question, *, window_end: datetime) -> list[Source]:
    """The archives that cover the question's window [open_at, window_end]."""
    return archives_covering(start=question.open_at, end=window_end)


def source_provenance(source: Source | None, *, url: str = "", licence: str = "") -> Provenance:
    """An item's provenance: its source's name, the licence (the item's own, else its archive's
    single licence) and the archive's attribution."""
    options = source.options if source is not None and isinstance(source.options, dict) else {}
    if not licence and len(options.get("licences") or []) == 1:
        licence = options["licences"][0]
    name, licence_url = licence_label(licence) if licence else ("", "")
    return Provenance(
        source=source.name if source is not None else "",
        licence=name,
        licence_url=licence_url,
        attribution=str(options.get("attribution") or ""),
        url=url,
    )


def archive_articles_by_id(ids: Iterable[str]) -> dict[str, list[Article]]:
    """The archive articles under each of these archive ids (an id absent from the result names no
    imported item)."""
    wanted = sorted(set(ids))
    found: dict[str, list[Article]] = {}
    for start in range(0, len(wanted), 500):
        rows = (
            Article.objects.filter(source__kind=Source.Kind.ARCHIVE, external_id__in=wanted[start : start + 500])
            .exclude(external_id="")  # the archive-id index's condition, so it is used
            .select_related("source")
        )
        for article in rows:
            found.setdefault(article.external_id, []).append(article)
    return found


def resolving_articles(question: Question) -> list[Article]:
    """The archive items that resolve the question (``resolved_by`` of its file), oldest first."""
    return list(
        question.provenance_articles.filter(source__kind=Source.Kind.ARCHIVE)
        .select_related("source")
        .order_by("published_at", "pk")
    )
