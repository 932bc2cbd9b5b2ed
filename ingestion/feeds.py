"""Feed parsing: RSS 0.9x, RSS 1.0 (RDF), RSS 2.0 and Atom through feedparser, turned into
plain article dicts ready for ``ingestion.services.articles.article_store_many``.

No Django and no network here, so the benchmark can time parsing on its own.
"""

from __future__ import annotations

import calendar
import html.entities
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

import feedparser

from ingestion.canonical import html_to_text

# Harmless bozo reasons: the document parsed as XML, feedparser only disagrees with a header.
_BENIGN_BOZO = (feedparser.CharacterEncodingOverride, feedparser.NonXMLContentType)


class FeedParseError(ValueError):
    """The document is not a well-formed RSS or Atom feed; nothing of it is stored."""


@dataclass
class ParsedFeed:
    version: str  # feedparser's name for the format, e.g. "rss20", "rss10", "rss091u", "atom10"
    title: str
    entries: list[dict[str, Any]]
    # Entries left out on purpose, by reason ("entry 3: missing title" is counted as "missing title").
    skipped: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


def parse_feed_document(content: bytes) -> Any:
    """feedparser's own parse with the options Hindsight uses.

    HTML sanitising and relative-URI rewriting are off because every HTML field is reduced to
    plain text by nh3 afterwards; doing the work twice would only slow ingestion down.
    """
    return feedparser.parse(content, sanitize_html=False, resolve_relative_uris=False)


def parse_feed(content: bytes, *, base_url: str = "") -> ParsedFeed:
    """Parse a feed document; raises FeedParseError for malformed XML or a non-feed document."""
    if not content.strip():
        raise FeedParseError("empty response: not a feed")
    parsed = parse_feed_document(content)
    if _is_bad(parsed) and "undefined entity" in _describe(parsed.get("bozo_exception")):
        # RSS 0.91 feeds lean on the Netscape DTD for HTML entities (&eacute;), which feedparser
        # strips; spelled as character references the same document is well-formed.
        repaired = _HTML_ENTITY.sub(_entity_to_reference, content)
        if repaired != content:
            parsed = parse_feed_document(repaired)
    version = parsed.get("version") or ""
    if not version:
        raise FeedParseError("not an RSS or Atom feed (no <rss>, <rdf:RDF> or <feed> root element)")
    if _is_bad(parsed):
        exc = parsed.get("bozo_exception")
        line = ""
        get_line = getattr(exc, "getLineNumber", None)
        if callable(get_line):
            line = f" at line {get_line()}"
        raise FeedParseError(f"malformed XML{line}: {_describe(exc)}")
    feed = parsed.get("feed", {})
    feed_language = str(feed.get("language") or "")
    result = ParsedFeed(version=version, title=html_to_text(str(feed.get("title") or "")), entries=[])
    for position, entry in enumerate(parsed.get("entries", []), start=1):
        article, reason = _entry_to_article(entry, position=position, base_url=base_url, feed_language=feed_language)
        if article is None:
            result.skipped[reason] += 1
            result.problems.append(f"entry {position}: {reason}")
            continue
        result.entries.append(article)
    return result


_HTML_ENTITY = re.compile(rb"&([A-Za-z][A-Za-z0-9]{1,31});")
_XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot", "apos"})


def _entity_to_reference(match: re.Match[bytes]) -> bytes:
    name = match.group(1).decode("ascii")
    codepoint = html.entities.name2codepoint.get(name)
    if codepoint is None or name in _XML_ENTITIES:
        return match.group(0)
    return b"&#%d;" % codepoint


def _is_bad(parsed: Any) -> bool:
    return bool(parsed.get("bozo")) and not isinstance(parsed.get("bozo_exception"), _BENIGN_BOZO)


def _describe(exc: Any) -> str:
    if exc is None:
        return "unknown error"
    message = getattr(exc, "getMessage", None)
    text = message() if callable(message) else str(exc)
    return text or type(exc).__name__


def _entry_to_article(
    entry: Any, *, position: int, base_url: str, feed_language: str
) -> tuple[dict[str, Any] | None, str]:
    title = html_to_text(str(entry.get("title") or ""))
    if not title:
        return None, "missing title"
    link = str(entry.get("link") or "").strip()
    if not link:
        guid = str(entry.get("id") or "").strip()
        if guid.startswith(("http://", "https://")):
            link = guid
    if not link:
        return None, "missing link"
    if base_url:
        link = urljoin(base_url, link)
    summary = html_to_text(str(entry.get("summary") or ""))
    body = ""
    contents = entry.get("content") or []
    if contents:
        body = html_to_text("\n".join(str(c.get("value") or "") for c in contents))
    if body == summary:
        body = ""
    language = ""
    title_detail = entry.get("title_detail") or {}
    if title_detail.get("language"):
        language = str(title_detail["language"])
    language = (language or feed_language)[:20]
    author = html_to_text(str(entry.get("author") or ""))[:300]
    return {
        "position": position,
        "url": link,
        "title": title,
        "summary": summary,
        "body": body,
        "author": author,
        "language": language,
        "published_at": _entry_datetime(entry),
    }, ""


def _entry_datetime(entry: Any) -> datetime | None:
    """Aware UTC, or None when the entry carries no date feedparser could read."""
    for key in ("published_parsed", "updated_parsed", "created_parsed"):
        # dict.get skips FeedParserDict's deprecated updated->published key aliasing.
        value = dict.get(entry, key)
        if isinstance(value, time.struct_time):
            try:
                return datetime.fromtimestamp(calendar.timegm(value), tz=UTC)
            except (OverflowError, OSError, ValueError):
                return None
    return None
