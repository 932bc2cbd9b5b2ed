"""JSON Feed 1.0 and 1.1 (https://jsonfeed.org/version/1.1), read into the same entry shape as
feedparser's entries, so that ``ingestion.feeds`` turns both into articles alike.

No Django and no network here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

VERSION_PREFIX = "https://jsonfeed.org/version/1"


class JSONFeedError(ValueError):
    pass


def looks_like_json_feed(content: bytes, content_type: str = "") -> bool:
    """A JSON document served as JSON, or whose first character opens an object."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind in ("application/feed+json", "application/json"):
        return True
    return content.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{"


def _charset(content_type: str) -> str:
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'")
    return "utf-8"


def parse_json_feed(content: bytes, *, content_type: str = "") -> dict[str, Any]:
    """``{"version": "json11", "feed": {...}, "entries": [...]}`` with feedparser's key names
    (``title``, ``link``, ``id``, ``summary``, ``content``, ``author``, ``published``, ``updated``,
    ``language``); raises JSONFeedError when the document is not a JSON Feed."""
    try:
        text = content.decode(_charset(content_type), errors="strict")
    except (LookupError, UnicodeDecodeError):
        text = content.decode("utf-8", errors="replace")
    try:
        data = json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as exc:
        raise JSONFeedError(f"malformed JSON at line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(data, Mapping) or not str(data.get("version") or "").startswith(VERSION_PREFIX):
        raise JSONFeedError('not a JSON Feed (no "version": "https://jsonfeed.org/version/1…")')
    items = data.get("items")
    if not isinstance(items, list):
        raise JSONFeedError('JSON Feed without an "items" list')
    version = "json11" if data["version"].rstrip("/").endswith("1.1") else "json10"
    language = str(data.get("language") or "")
    entries = [_entry(item, language=language) for item in items if isinstance(item, Mapping)]
    return {
        "version": version,
        "feed": {"title": str(data.get("title") or ""), "language": language},
        "entries": entries,
    }


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _entry(item: Mapping[str, Any], *, language: str) -> dict[str, Any]:
    authors = item.get("authors")
    if not isinstance(authors, list):
        # JSON Feed 1.0 has a single ``author`` object.
        authors = [item.get("author")]
    names = [_text(a.get("name")) for a in authors if isinstance(a, Mapping) and _text(a.get("name"))]
    content = [
        {"value": _text(item.get(key)), "type": kind}
        for key, kind in (("content_html", "text/html"), ("content_text", "text/plain"))
        if _text(item.get(key))
    ][:1]
    links = []
    if _text(item.get("url")):
        links.append({"rel": "alternate", "href": item["url"]})
    if _text(item.get("external_url")):
        links.append({"rel": "related", "href": item["external_url"]})
    for attachment in item.get("attachments") or []:
        if isinstance(attachment, Mapping) and _text(attachment.get("url")):
            links.append({"rel": "enclosure", "href": attachment["url"]})
    identifier = item.get("id")
    return {
        "id": str(identifier) if isinstance(identifier, str | int) and not isinstance(identifier, bool) else "",
        "title": _text(item.get("title")),
        "link": _text(item.get("url")),
        "links": links,
        "summary": _text(item.get("summary")),
        "content": content,
        "author": ", ".join(names),
        "published": _text(item.get("date_published")),
        "updated": _text(item.get("date_modified")),
        "language": _text(item.get("language")) or language,
    }
