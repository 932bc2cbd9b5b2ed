"""The sources of a forecast body: cited article ids and http(s) URLs, resolved to archive articles."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Final

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from ingestion.canonical import InvalidURL, canonical_url
from ingestion.models import Article
from leaderboard.services.forecast_fields import FieldErrors, describe

MAX_SOURCES: Final = 200
MAX_URL_CHARS: Final = 2_000
_DIGITS = re.compile(r"\d{1,18}")
_url_validator = URLValidator(schemes=["http", "https"])


@lru_cache(maxsize=4096)
def url_variants(url: str) -> tuple[str, ...]:
    """The URL as given and the canonical form under which ingestion stores articles."""
    try:
        canonical = canonical_url(url)
    except InvalidURL:
        return (url,)
    return tuple(dict.fromkeys([url, canonical]))


class ArticleResolver:
    """Maps cited article ids and URLs to Article rows; batch callers prefetch all items in two queries.

    With ``defer_urls`` the resolver never looks URLs up (``article_for_url`` answers None): a caller
    that links URLs to articles inside its own INSERT saves that round trip. Cited ids are still
    checked, since an unknown id is an error.
    """

    def __init__(self, *, defer_urls: bool = False) -> None:
        self.defer_urls = defer_urls
        self._known_ids: set[int] = set()
        self._checked_ids: set[int] = set()
        self._url_to_id: dict[str, int] = {}
        self._checked_urls: set[str] = set()

    def prefetch(self, sources_lists: Iterable[Any]) -> None:
        ids: set[int] = set()
        urls: set[str] = set()
        for sources in sources_lists:
            if not isinstance(sources, list):
                continue
            for item in sources[:MAX_SOURCES]:
                if isinstance(item, int) and not isinstance(item, bool):
                    ids.add(item)
                elif isinstance(item, str):
                    text = item.strip()
                    if _DIGITS.fullmatch(text):
                        ids.add(int(text))
                    elif len(text) <= MAX_URL_CHARS and not self.defer_urls:
                        urls.update(url_variants(text))
        self._load(ids, urls)

    def _load(self, ids: set[int], urls: set[str]) -> None:
        ids = {i for i in ids if 0 < i < 2**63} - self._checked_ids
        urls -= self._checked_urls
        if ids:
            self._known_ids.update(Article.objects.filter(pk__in=ids).values_list("pk", flat=True))
            self._checked_ids |= ids
        if urls:
            self._url_to_id.update(Article.objects.filter(url__in=urls).values_list("url", "pk"))
            self._checked_urls |= urls

    def article_exists(self, article_id: int) -> bool:
        if article_id not in self._checked_ids:
            self._load({article_id}, set())
        return article_id in self._known_ids

    def article_for_url(self, url: str) -> int | None:
        if self.defer_urls:
            return None
        variants = url_variants(url)
        if not self._checked_urls.issuperset(variants):
            self._load(set(), set(variants))
        for variant in variants:
            if variant in self._url_to_id:
                return self._url_to_id[variant]
        return None


def validate_sources(
    *, sources: Any, resolver: ArticleResolver | None = None, errors: FieldErrors | None = None
) -> tuple[list[int | str], list[int]]:
    """(sources as stored, ids of the cited Article rows); URLs not in the archive are kept as URLs."""
    own = errors is None
    errs = errors if errors is not None else FieldErrors()
    prefetched = resolver is not None
    resolver = resolver or ArticleResolver()
    clean: list[int | str] = []
    article_ids: list[int] = []
    if sources is None:
        sources = []
    if not isinstance(sources, list):
        errs.add("sources", f"must be a list of article ids or http(s) URLs, got {describe(sources)}")
    elif len(sources) > MAX_SOURCES:
        errs.add("sources", f"has {len(sources)} sources; at most {MAX_SOURCES} are allowed")
    else:
        if not prefetched:
            resolver.prefetch([sources])
        for i, item in enumerate(sources):
            field = f"sources[{i}]"
            if isinstance(item, str) and _DIGITS.fullmatch(item.strip()):
                item = int(item.strip())
            if isinstance(item, int) and not isinstance(item, bool):
                if resolver.article_exists(item):
                    clean.append(item)
                    article_ids.append(item)
                else:
                    errs.add(field, f"names article {item}, which does not exist")
            elif isinstance(item, str):
                url = item.strip()
                try:
                    if len(url) > MAX_URL_CHARS:
                        raise ValidationError("too long")
                    _url_validator(url)
                except ValidationError:
                    errs.add(field, f"must be an article id or a valid http(s) URL, got {url[:80]!r}")
                    continue
                clean.append(url)
                found = resolver.article_for_url(url)
                if found is not None:
                    article_ids.append(found)
            else:
                errs.add(field, f"must be an article id or an http(s) URL, got {describe(item)}")
    if own:
        errs.raise_if_any()
    return clean, list(dict.fromkeys(article_ids))
