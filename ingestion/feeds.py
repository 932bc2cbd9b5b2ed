"""Feed parsing: RSS 0.9x, RSS 1.0 (RDF), RSS 2.0 and Atom through feedparser, and JSON Feed 1.0/1.1,
turned into plain article dicts ready for ``ingestion.services.articles.article_store_many``.

A feed is read the way feedparser reads it. When the document is not well-formed XML (a blank line
before ``<?xml``, a bare ``&``, an undefined entity), feedparser's loose parser still recovers its
entries: they are kept, and the problem is reported as a warning. Only a document that yields no
entry is refused, and a document cut short loses just its unfinished last entry.

No Django and no network here, so the benchmark can time parsing on its own.
"""

from __future__ import annotations

import calendar
import html.entities
import re
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import Any
from urllib.parse import urljoin

import feedparser

from ingestion.canonical import html_to_text
from ingestion.jsonfeed import JSONFeedError, looks_like_json_feed, parse_json_feed

# Harmless bozo reasons: the document parsed as XML, feedparser only disagrees with a header.
_BENIGN_BOZO = (feedparser.CharacterEncodingOverride, feedparser.NonXMLContentType)
TITLE_LIMIT = 200
UNFINISHED = "unfinished entry (document cut short)"


class FeedParseError(ValueError):
    """The document is not a feed, or no entry of it could be read; nothing of it is stored."""


@dataclass
class ParsedFeed:
    version: str  # feedparser's name for the format, e.g. "rss20", "rss10", "atom10"; "json11"
    title: str
    entries: list[dict[str, Any]]
    # Entries left out on purpose, by reason ("entry 3: missing link" is counted as "missing link").
    skipped: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    # What was read only with feedparser's loose parser, for the source's status.
    warnings: list[str] = field(default_factory=list)


def parse_feed_document(content: bytes, *, headers: Mapping[str, str] | None = None) -> Any:
    """feedparser's own parse with the options Hindsight uses. The HTTP response headers give the
    charset when the document does not (``Content-Type: text/xml; charset=windows-1251``).

    HTML sanitising and relative-URI rewriting are off because every HTML field is reduced to
    plain text by nh3 afterwards; doing the work twice would only slow ingestion down.
    """
    return feedparser.parse(
        content,
        response_headers={k.lower(): v for k, v in (headers or {}).items()},
        sanitize_html=False,
        resolve_relative_uris=False,
    )


def parse_feed(content: bytes, *, base_url: str = "", headers: Mapping[str, str] | None = None) -> ParsedFeed:
    """Parse a feed document; raises FeedParseError for a non-feed or a document with no readable entry."""
    if not content.strip():
        raise FeedParseError("empty response: not a feed")
    content_type = {k.lower(): v for k, v in (headers or {}).items()}.get("content-type", "")
    if looks_like_json_feed(content, content_type):
        try:
            parsed: Any = parse_json_feed(content, content_type=content_type)
        except JSONFeedError as exc:
            raise FeedParseError(str(exc)) from exc
        return _articles(parsed, entries=parsed["entries"], base_url=base_url)
    parsed = parse_feed_document(content, headers=headers)
    if _is_bad(parsed) and "undefined entity" in _describe(parsed.get("bozo_exception")):
        # RSS 0.91 feeds lean on the Netscape DTD for HTML entities (&eacute;), which feedparser
        # strips; spelled as character references the same document is well-formed.
        repaired = _HTML_ENTITY.sub(_entity_to_reference, content)
        if repaired != content:
            retried = parse_feed_document(repaired, headers=headers)
            if not _is_bad(retried):
                parsed = retried
    if not parsed.get("version"):
        raise FeedParseError("not an RSS, Atom or JSON feed (no <rss>, <rdf:RDF> or <feed> root element)")
    warning = ""
    if _is_bad(parsed):
        problem = parsed.get("bozo_exception")
        get_line = getattr(problem, "getLineNumber", None)
        where = f" at line {get_line()}" if callable(get_line) else ""
        warning = f"malformed XML{where}: {_describe(problem)}"
    entries = list(parsed.get("entries", []))
    unfinished = bool(warning and entries and _ends_inside_an_entry(content))
    if unfinished:
        # Cut short: the last entry's text may be missing its end.
        entries.pop()
    result = _articles(parsed, entries=entries, base_url=base_url)
    if unfinished:
        result.skipped[UNFINISHED] += 1
        result.problems.append(f"entry {len(entries) + 1}: {UNFINISHED}")
    if warning and not result.entries:
        raise FeedParseError(f"{warning}; no entry could be read")
    if warning:
        count = len(result.entries)
        result.warnings.append(
            f"{warning}; read with feedparser's loose parser ({count} entr{'y' if count == 1 else 'ies'} recovered)"
        )
    return result


def _articles(parsed: Any, *, entries: list[Any], base_url: str) -> ParsedFeed:
    feed = parsed.get("feed", {})
    feed_language = str(feed.get("language") or "")
    result = ParsedFeed(
        version=parsed.get("version") or "", title=html_to_text(str(feed.get("title") or "")), entries=[]
    )
    for position, entry in enumerate(entries, start=1):
        article, reason = _entry_to_article(entry, position=position, base_url=base_url, feed_language=feed_language)
        if article is None:
            result.skipped[reason] += 1
            result.problems.append(f"entry {position}: {reason}")
            continue
        result.entries.append(article)
    return result


_HTML_ENTITY = re.compile(rb"&([A-Za-z][A-Za-z0-9]{1,31});")
_XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot", "apos"})
_ENTRY_OPEN = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?(?:item|entry)[\s>/]")
_ENTRY_CLOSE = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?(?:item|entry)\s*>")


def _entity_to_reference(match: re.Match[bytes]) -> bytes:
    name = match.group(1).decode("ascii")
    codepoint = html.entities.name2codepoint.get(name)
    if codepoint is None or name in _XML_ENTITIES:
        return match.group(0)
    return b"&#%d;" % codepoint


def _ends_inside_an_entry(content: bytes) -> bool:
    """Whether the document stops after an entry opened and before it closed."""
    last_open = max((m.start() for m in _ENTRY_OPEN.finditer(content)), default=-1)
    last_close = max((m.start() for m in _ENTRY_CLOSE.finditer(content)), default=-1)
    return last_open > last_close


def _is_bad(parsed: Any) -> bool:
    return bool(parsed.get("bozo")) and not isinstance(parsed.get("bozo_exception"), _BENIGN_BOZO)


def _describe(exc: Any) -> str:
    if exc is None:
        return "unknown error"
    message = getattr(exc, "getMessage", None)
    text = message() if callable(message) else str(exc)
    return text or type(exc).__name__


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s|\n")


def first_sentence(text: str, *, limit: int = TITLE_LIMIT) -> str:
    """A title for an entry that has none (RSS 2.0 lets an item have only a description)."""
    sentence = _SENTENCE_END.split(text.strip(), maxsplit=1)[0].strip()
    if len(sentence) <= limit:
        return sentence
    cut = sentence[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


def _is_web_url(value: str) -> bool:
    return value.startswith(("http://", "https://"))


def entry_link(entry: Any) -> str:
    """The entry's own address: FeedBurner's original link, else the alternate link, else a
    permalink guid, else (a podcast episode, say) its enclosure."""
    origin = str(entry.get("feedburner_origlink") or "").strip()
    if _is_web_url(origin):
        return origin
    links = [link for link in entry.get("links") or [] if isinstance(link, Mapping)]
    for link in links:
        if link.get("rel", "alternate") == "alternate" and str(link.get("href") or "").strip():
            return str(link["href"]).strip()
    for candidate in (entry.get("link"), entry.get("id")):
        text = str(candidate or "").strip()
        if _is_web_url(text):
            return text
    for link in links:
        if str(link.get("href") or "").strip():
            return str(link["href"]).strip()
    return ""


def _entry_to_article(
    entry: Any, *, position: int, base_url: str, feed_language: str
) -> tuple[dict[str, Any] | None, str]:
    summary = html_to_text(str(entry.get("summary") or ""))
    body = ""
    contents = entry.get("content") or []
    if contents:
        body = html_to_text("\n".join(str(c.get("value") or "") for c in contents))
    title = html_to_text(str(entry.get("title") or "")) or first_sentence(summary or body)
    if not title:
        return None, "missing title"
    link = entry_link(entry)
    if not link:
        return None, "missing link"
    if base_url:
        link = urljoin(base_url, link)
    if body == summary:
        body = ""
    language = ""
    title_detail = entry.get("title_detail") or {}
    if title_detail.get("language"):
        language = str(title_detail["language"])
    language = (language or str(entry.get("language") or "") or feed_language)[:20]
    author = html_to_text(str(entry.get("author") or ""))[:300]
    return {
        "position": position,
        "url": link,
        "guid": str(entry.get("id") or "").strip()[:1000],
        "title": title,
        "summary": summary,
        "body": body,
        "author": author,
        "language": language,
        "published_at": entry_datetime(entry, language=language),
    }, ""


def entry_datetime(entry: Any, *, language: str = "") -> datetime | None:
    """Aware UTC, or None when the entry carries no date that can be read.

    feedparser reads RFC 822 and ISO 8601 dates; a date in another language ("Seg, 24 Set 2018
    10:30:00 -0300") is read by dateparser, hinted with the feed's language."""
    for key in ("published_parsed", "updated_parsed", "created_parsed"):
        # dict.get skips FeedParserDict's deprecated updated->published key aliasing.
        value = dict.get(entry, key)
        if isinstance(value, time.struct_time):
            try:
                return datetime.fromtimestamp(calendar.timegm(value), tz=UTC)
            except (OverflowError, OSError, ValueError):
                return None
    for key in ("published", "updated", "created"):
        text = dict.get(entry, key)
        if isinstance(text, str) and text.strip():
            parsed = _read_date(text.strip(), language.split("-", 1)[0].lower())
            if parsed is not None:
                return parsed
    return None


@cache
def _date_parser() -> Any:
    # Imported on first use: dateparser loads its language data, which a feed with ordinary
    # dates never needs.
    import dateparser

    return dateparser


# Absolute dates only: "yesterday" or "2 hours ago" in a feed is no publication time.
_DATE_SETTINGS = {
    "PARSERS": ["custom-formats", "absolute-time"],
    "STRICT_PARSING": True,
    "RETURN_AS_TIMEZONE_AWARE": True,
    "TIMEZONE": "UTC",
    "TO_TIMEZONE": "UTC",
}


def _read_date(text: str, language: str) -> datetime | None:
    if len(text) > 100:
        return None
    parser = _date_parser()
    value = None
    if language:
        try:
            value = parser.parse(text, languages=[language], settings=_DATE_SETTINGS)
        except (ValueError, TypeError, OverflowError):
            value = None
    if value is None:
        try:
            value = parser.parse(text, settings=_DATE_SETTINGS)
        except (ValueError, TypeError, OverflowError):
            value = None
    if value is None or value.tzinfo is None:
        return None
    return value.astimezone(UTC)
