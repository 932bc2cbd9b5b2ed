"""News archives as JSON Lines: the documented schema of one line, and reading it. Pure: no
database (``ingestion.services.archives`` stores what this reads).

One JSON object per line (docs/operations.md, "News archives")::

    {"id": "wcep-2025-05-08-003", "published_at": "2025-05-08T17:40:00Z",
     "title": "...", "text": "...", "url": "https://...", "source": "Wikipedia Portal:Current events",
     "license": "CC-BY-SA-4.0", ...any other fields...}

- ``id``: the archive's identifier of the item, unique within its source.
- ``published_at``: when the text was public, ISO 8601 with an offset (or ``Z``). The evidence
  gateway serves the item only to sessions dated strictly after it. A bare date (``2025-05-08``) is
  read as the end of that day in UTC, so the item is never served before its day is over.
- ``title``, ``text``, ``url``, ``source``: the headline, the full text, the item's page and the
  publisher's name (each source becomes one archive source on the site).
- ``license``: the item's licence (an SPDX identifier such as ``CC-BY-SA-4.0``, or any text).
- every other field is kept with the article (``Article.extra``).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ingestion.canonical import InvalidURL, canonical_url

REQUIRED_FIELDS = ("id", "published_at", "title", "url", "source")
# The fields the article's own columns hold; the rest of the line goes to Article.extra.
OWN_FIELDS = frozenset({*REQUIRED_FIELDS, "text", "license"})
MAX_ID = 300
MAX_TITLE = 1000
MAX_URL = 2000

# Licences the site can name and link; any other value is shown as written.
LICENCES: dict[str, tuple[str, str]] = {
    "CC-BY-SA-4.0": ("CC BY-SA 4.0", "https://creativecommons.org/licenses/by-sa/4.0/"),
    "CC-BY-4.0": ("CC BY 4.0", "https://creativecommons.org/licenses/by/4.0/"),
    "CC-BY-SA-3.0": ("CC BY-SA 3.0", "https://creativecommons.org/licenses/by-sa/3.0/"),
    "CC0-1.0": ("CC0 1.0", "https://creativecommons.org/publicdomain/zero/1.0/"),
}


def licence_label(identifier: str) -> tuple[str, str]:
    """(name, URL) of a licence identifier; an unknown one is its own name, with no URL."""
    return LICENCES.get(identifier, (identifier, ""))


class RejectedLine(ValueError):
    """A line the import leaves out; ``reason`` is the short category counted in the report."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason = reason


@dataclass(frozen=True)
class ArchiveItem:
    """One valid line, with the values its article is stored under."""

    external_id: str
    source: str
    published_at: datetime
    title: str
    body: str
    url: str
    license: str
    extra: dict[str, Any]


def parse_published_at(value: Any) -> datetime:
    """An aware UTC datetime; a bare date is the end of that day (UTC). Raises RejectedLine."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise RejectedLine("missing date", "no published_at")
    if not isinstance(value, str):
        raise RejectedLine("unparsable date", f"published_at {value!r} is not a string")
    text = value.strip()
    try:
        day = date.fromisoformat(text)
    except ValueError:
        day = None
    if day is not None and len(text) == 10:
        return datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise RejectedLine("unparsable date", f"published_at {value!r} is not an ISO 8601 date or time") from None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise RejectedLine("unparsable date", f"published_at {value!r} has no time zone (add Z or +00:00)")
    return parsed.astimezone(UTC)


def _text(line: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = line.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise RejectedLine(f"missing {key}", f"no {key}")
        return ""
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise RejectedLine(f"invalid {key}", f"{key} must be a string")
    return str(value).strip()


def article_url(url: str, external_id: str) -> str:
    """The URL an item is stored under: its page with ``#<id>``. Archive items may share a page (a
    day page lists a hundred of them), and the anchor keeps them apart from each other and from any
    feed article of the same page."""
    return f"{canonical_url(url)}#{quote(external_id, safe='')}"


def parse_line(
    raw: str | bytes, *, now: datetime, default_license: str = "", allow_unlicensed: bool = False
) -> ArchiveItem:
    """Read one line of an archive; raises RejectedLine naming the problem."""
    try:
        line = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RejectedLine("bad JSON", f"not valid JSON ({exc.msg if hasattr(exc, 'msg') else exc})") from None
    if not isinstance(line, dict):
        raise RejectedLine("bad JSON", "not a JSON object")
    external_id = _text(line, "id")
    if len(external_id) > MAX_ID:
        raise RejectedLine("invalid id", f"id longer than {MAX_ID} characters")
    published_at = parse_published_at(line.get("published_at"))
    if published_at > now:
        raise RejectedLine(
            "date in the future",
            f"published_at {published_at:%Y-%m-%dT%H:%M:%SZ} is after the import's now ({now:%Y-%m-%dT%H:%M:%SZ})",
        )
    title = " ".join(_text(line, "title").split())[:MAX_TITLE]
    source = _text(line, "source")[:200]
    licence = _text(line, "license", required=False) or default_license
    if not licence and not allow_unlicensed:
        raise RejectedLine("missing licence", "no license (give --license ID, or --allow-unlicensed to import it)")
    try:
        url = article_url(_text(line, "url"), external_id)
    except InvalidURL as exc:
        raise RejectedLine("invalid url", f"url: {exc}") from None
    if len(url) > MAX_URL:
        raise RejectedLine("invalid url", f"url longer than {MAX_URL} characters")
    return ArchiveItem(
        external_id=external_id,
        source=source,
        published_at=published_at,
        title=title,
        body=_text(line, "text", required=False),
        url=url,
        license=licence[:100],
        extra={k: v for k, v in line.items() if k not in OWN_FIELDS},
    )


def archive_lines(path: Path) -> Iterator[bytes]:
    """The file's lines, one at a time (a ``.gz`` file is decompressed as it is read)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        yield from handle
