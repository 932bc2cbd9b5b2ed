"""Storing articles: ``article_store_many`` is the one way articles enter the database. It
canonicalises URLs, drops entries already stored (same canonical URL, or same content under
another URL) and inserts the rest in bulk.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import Q

from ingestion.canonical import InvalidURL, canonical_url, content_hash
from ingestion.models import Article, Source

# Rows per existence query, and per INSERT on SQLite: well under its parameter limit.
BATCH_SIZE = 500


@dataclass
class ArticleStoreResult:
    added: int = 0
    skipped: int = 0
    skip_reasons: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


def _aware_utc(value: Any) -> datetime | None:
    """Aware UTC, or None: a naive or unparsable time is as good as no time for evidence."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None:
        return None
    return value.astimezone(UTC)


@transaction.atomic
def article_store_many(
    *, source: Source | None, entries: Iterable[Mapping[str, Any]], fetched_at: datetime
) -> ArticleStoreResult:
    """Store article dicts (url, guid, title, summary, body as plain text, author, language,
    published_at) and report how many were added and why the others were skipped.

    The same story twice (same canonical URL, or the same normalised title and text under two
    URLs) is stored once, whether the copy is in this batch or already in the database.
    """
    result = ArticleStoreResult()
    candidates: list[_Candidate] = []
    # Canonical URL -> guid of the entries of this batch kept so far, and their content hashes.
    batch_guids: dict[str, str] = {}
    batch_hashes: set[str] = set()

    def skip(position: int, reason: str, detail: str = "") -> None:
        result.skip_reasons[reason] += 1
        result.problems.append(f"entry {position}: {detail or reason}")

    for index, entry in enumerate(entries, start=1):
        # Feeds number entries by their place in the document, before any were left out.
        position = int(entry.get("position") or index)
        title = str(entry.get("title") or "").strip()[:1000]
        if not title:
            skip(position, "missing title")
            continue
        raw_url = str(entry.get("url") or "")
        try:
            url = canonical_url(raw_url)
            anchored = canonical_url(raw_url, keep_fragment=True)
        except InvalidURL as exc:
            skip(position, "invalid URL", str(exc))
            continue
        if len(anchored) > 2000:
            skip(position, "URL too long", f"URL longer than 2000 characters: {url[:80]}…")
            continue
        candidate = _Candidate(
            url=url,
            anchored=anchored,
            guid=str(entry.get("guid") or "").strip()[:1000],
            title=title,
            summary=str(entry.get("summary") or ""),
            body=str(entry.get("body") or ""),
            entry=entry,
        )
        if candidate.digest in batch_hashes:
            result.skip_reasons["already stored"] += 1
            continue
        if candidate.url in batch_guids and not candidate.another_post(batch_guids[candidate.url], taken=batch_guids):
            result.skip_reasons["already stored"] += 1
            continue
        batch_guids[candidate.url] = candidate.guid
        batch_hashes.add(candidate.digest)
        candidates.append(candidate)

    known_guids, known_hashes = _stored_article_keys(
        urls=[u for c in candidates for u in {c.url, c.anchored}], hashes=[c.digest for c in candidates]
    )
    new: list[dict[str, Any]] = []
    for candidate in candidates:
        if candidate.url in known_guids and not candidate.another_post(known_guids[candidate.url], taken=known_guids):
            result.skip_reasons["already stored"] += 1
            continue
        if candidate.digest in known_hashes:
            result.skip_reasons["already stored"] += 1
            continue
        entry = candidate.entry
        new.append(
            {
                "source_id": source.pk if source is not None else None,
                "url": candidate.url,
                "guid": candidate.guid,
                "title": candidate.title,
                "summary": candidate.summary,
                "body": candidate.body,
                "author": str(entry.get("author") or "")[:300],
                "language": str(entry.get("language") or "")[:20],
                "published_at": _aware_utc(entry.get("published_at")),
                "fetched_at": fetched_at,
                "content_hash": candidate.digest,
            }
        )
    result.added = _insert_articles(new)
    if result.added < len(new):
        # Stored by another poll between the lookup and the insert.
        result.skip_reasons["already stored"] += len(new) - result.added
    result.skipped = sum(result.skip_reasons.values())
    return result


@dataclass
class _Candidate:
    """An entry on its way to becoming an article: ``url`` is its canonical URL, ``anchored`` the
    same with the link's fragment kept."""

    url: str
    anchored: str
    guid: str
    title: str
    summary: str
    body: str
    entry: Mapping[str, Any]

    @property
    def digest(self) -> str:
        return content_hash(self.title, self.body or self.summary, url=self.url)

    def another_post(self, stored_guid: str, *, taken: Mapping[str, str]) -> bool:
        """Whether this entry is a different post than the one stored under its canonical URL:
        its permalink differs only by a fragment and both have their own, different guids (live
        blogs, link posts). If so it moves to its URL with the fragment kept."""
        if self.anchored == self.url or not self.guid or stored_guid in ("", self.guid):
            return False
        if self.anchored in taken:
            return False
        self.url = self.anchored
        return True


def _stored_article_keys(*, urls: list[str], hashes: list[str]) -> tuple[dict[str, str], set[str]]:
    """Among those given, the canonical URLs of stored articles (with each one's guid) and the
    content hashes already stored."""
    known_urls: dict[str, str] = {}
    known_hashes: set[str] = set()
    for start in range(0, max(len(urls), len(hashes)), BATCH_SIZE):
        batch = slice(start, start + BATCH_SIZE)
        found = Article.objects.filter(Q(url__in=urls[batch]) | Q(content_hash__in=hashes[batch]))
        for url, digest, guid in found.values_list("url", "content_hash", "guid"):
            known_urls[url] = guid
            known_hashes.add(digest)
    # A hash found through another article's URL says nothing about this batch's hashes: keep
    # only those asked about.
    asked = set(hashes)
    return known_urls, known_hashes & asked


def _insert_articles(values: list[dict[str, Any]]) -> int:
    """Insert new articles (field values by attribute name, all of one source and fetch) and
    return how many were stored; one that another poll stored meanwhile (same URL or content
    hash) is left out and not counted."""
    if not values:
        return 0
    # ignore_conflicts: another poll storing the same story at this moment must not abort this
    # one's transaction; its copy wins and ours is dropped.
    Article.objects.bulk_create([Article(**v) for v in values], batch_size=BATCH_SIZE, ignore_conflicts=True)
    # Ours are the rows under our URLs from this source's fetch: a dropped one left its URL
    # empty (a clash on the content hash) or to another poll's row.
    urls = [v["url"] for v in values]
    mine = Article.objects.filter(source_id=values[0]["source_id"], fetched_at=values[0]["fetched_at"])
    return sum(
        mine.filter(url__in=urls[start : start + BATCH_SIZE]).count() for start in range(0, len(urls), BATCH_SIZE)
    )
