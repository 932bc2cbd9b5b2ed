"""{% evidence_provenance question revealed %}: on a question's page, the news archives an agent
searches for it (source, licence, attribution, link) and, once its outcome is public, the archive
items that resolve it, each with where it came from and its licence."""

from __future__ import annotations

from typing import Any

from django import template

from ingestion.models import Question
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
    return {"archives": archives, "items": items}
