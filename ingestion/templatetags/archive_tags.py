"""{% evidence_provenance question revealed %}: on a question's page, the news archives an agent
searches for it (source, licence, attribution, link) and, once its outcome is public, the archive
items that resolve it, each with where it came from and its licence."""

from __future__ import annotations

from datetime import date
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from ingestion.models import Article, Question
from ingestion.selectors.archives import question_archives, resolving_articles, source_provenance
from ingestion.services.questions import default_window_end

register = template.Library()


@register.inclusion_tag("ingestion/_evidence_provenance.html")
def evidence_provenance(question: Question, revealed: bool) -> dict[str, Any]:
    archives = [
        (source, source_provenance(source))
        for source in question_archives(question, window_end=default_window_end(question))
    ]
    # The resolving items give the answer away: listed only once the outcome is public.
    items = (
        [(a, source_provenance(a.source, url=a.url, licence=a.license)) for a in resolving_articles(question)]
        if revealed
        else []
    )
    # When the outcome was known before any of these items was reported (a No settled by the
    # deadline passing, say), the page says that they came later and confirm it.
    resolution = question.current_resolution if items else None
    known = resolution.resolved_at.date() if resolution is not None and resolution.resolved_at else None
    first = min((_item_day(a) for a, _ in items), default=None)
    return {"archives": archives, "items": items, "known": known, "reported_later": known and first and first > known}


def _item_day(article: Article) -> date:
    return article.reported_on or (article.published_at or article.fetched_at).date()


@register.simple_tag
def article_dates(article: Article, *, with_time: bool = True) -> SafeString:
    """An evidence item's dates in words: an archive entry filed under a news portal's day shows
    that day and when its text first became public (the date agents see it from); any other item
    its publication time."""
    public = article.published_at
    public_text = (f"{public:%Y-%m-%d %H:%M} UTC" if with_time else f"{public:%Y-%m-%d}") if public else "undated"
    reported = article.reported_on
    if reported is None:
        return format_html('<span class="item-dates">{}</span>', public_text)
    return format_html(
        '<span class="item-dates">reported on the portal {} · text first public {}</span>',
        reported.isoformat(),
        public_text,
    )
