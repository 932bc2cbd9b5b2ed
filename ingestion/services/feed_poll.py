"""The poller of feed sources (RSS, Atom, RDF and JSON Feed): a conditional GET, feedparser's
parse, and the articles stored through ``article_store_many``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ingestion.feeds import parse_feed
from ingestion.fetching import fetch
from ingestion.models import Source
from ingestion.polls import PollReport
from ingestion.services.articles import article_store_many

FEED_ACCEPT = (
    "application/rss+xml, application/rdf+xml, application/atom+xml, application/feed+json, "
    "application/xml;q=0.9, text/xml;q=0.9, application/json;q=0.8, */*;q=0.1"
)
# The source options a feed poller reads.
FEED_OPTIONS = frozenset({"max_bytes"})


@dataclass
class FeedPayload:
    """What ``feed_fetch`` hands to ``feed_store``: parsed entries, or a 304."""

    not_modified: bool
    etag: str
    last_modified: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    skip_reasons: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def item_count(self) -> int:
        return len(self.entries)


def feed_fetch(*, source: Source, now: datetime) -> FeedPayload:
    """Conditional GET of the feed and parse; raises FetchError / FeedParseError."""
    max_bytes = source.options.get("max_bytes") if isinstance(source.options, dict) else None
    response = fetch(
        source.url,
        etag=source.etag,
        last_modified=source.last_modified,
        accept=FEED_ACCEPT,
        max_bytes=int(max_bytes) if isinstance(max_bytes, int | float) and max_bytes > 0 else None,
        now=now,
    )
    if response.not_modified:
        # A 304 may refresh the validators; without them keep the ones we sent.
        return FeedPayload(
            not_modified=True,
            etag=response.etag or source.etag,
            last_modified=response.last_modified or source.last_modified,
        )
    parsed = parse_feed(response.content, base_url=response.url, headers=response.headers)
    return FeedPayload(
        not_modified=False,
        etag=response.etag,
        last_modified=response.last_modified,
        entries=parsed.entries,
        skip_reasons=parsed.skipped,
        problems=parsed.problems,
        warnings=parsed.warnings,
    )


def feed_store(*, source: Source, payload: FeedPayload, now: datetime) -> PollReport:
    source.etag, source.last_modified = payload.etag, payload.last_modified
    if payload.not_modified:
        return PollReport(source_id=source.pk, not_modified=True)
    stored = article_store_many(source=source, entries=payload.entries, fetched_at=now)
    reasons = payload.skip_reasons + stored.skip_reasons
    return PollReport(
        source_id=source.pk,
        added=stored.added,
        skipped=sum(reasons.values()),
        skip_reasons=dict(reasons),
        problems=payload.problems + stored.problems,
        warnings=payload.warnings,
    )


def feed_options_problem(kind: str, url: str, options: Mapping[str, Any]) -> str:
    """What a feed poll would refuse in a source's options ("" when nothing)."""
    max_bytes = options.get("max_bytes")
    if max_bytes is not None and (
        isinstance(max_bytes, bool) or not isinstance(max_bytes, int | float) or max_bytes <= 0
    ):
        return f"source option 'max_bytes' should be a positive number of bytes, got {max_bytes!r}"
    return ""
