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

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import quote

from common.storable import MAX_JSON_DEPTH, unstorable_part
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
    if not isinstance(value, str):
        # A number is not taken for text: an id 7 and an id "7" would be one item, 1e3 and 1000 too.
        raise RejectedLine(f"invalid {key}", f"{key} must be a string, got {_kind(value)} ({_clip(value)})")
    return value.strip()


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a list" if isinstance(value, list) else "an object"


def _clip(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def article_url(url: str, external_id: str) -> str:
    """The URL an item is stored under: its page with ``#<id>``. Archive items may share a page (a
    day page lists a hundred of them), and the anchor keeps them apart from each other and from any
    feed article of the same page."""
    return f"{canonical_url(url)}#{quote(external_id, safe='')}"


def parse_line(
    raw: str | bytes, *, now: datetime, default_license: str = "", allow_unlicensed: bool = False
) -> ArchiveItem:
    """Read one line of an archive; raises RejectedLine naming the problem."""
    if not raw.strip():
        raise RejectedLine("empty line", "an empty line (each line holds one JSON object)")
    try:
        # NaN and Infinity are Python's, not JSON's: no database's JSON column takes them.
        line = json.loads(raw, parse_constant=_not_json)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RejectedLine("bad JSON", f"not valid JSON ({exc.msg if hasattr(exc, 'msg') else exc})") from None
    except ValueError as exc:
        raise RejectedLine("bad JSON", f"not valid JSON ({exc})") from None
    except RecursionError:
        raise RejectedLine("too deeply nested", f"nested more than {MAX_JSON_DEPTH} levels deep") from None
    if not isinstance(line, dict):
        raise RejectedLine("bad JSON", "not a JSON object")
    unstorable = unstorable_part(line)
    if unstorable is not None:
        # Rejected, not cleaned: the archive's text is evidence and is kept as written or not at all.
        where = unstorable.path or "the line"
        if unstorable.too_deep:
            raise RejectedLine("too deeply nested", f"{where} {unstorable.problem}")
        raise RejectedLine("unstorable text", f"{where} {unstorable.problem}; no database can store it")
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


class ArchiveReadError(Exception):
    """The file could not be read to its end; the lines before the damage were all yielded first.
    ``unread_bytes``: how much of the file (as stored, compressed or not) was left unread."""

    def __init__(self, message: str, *, unread_bytes: int) -> None:
        super().__init__(message)
        self.unread_bytes = unread_bytes


READ_CHUNK = 1 << 20


def archive_lines(path: Path) -> Iterator[bytes]:
    """The file's lines, one at a time (a ``.gz`` file is decompressed as it is read, and may hold
    several gzip members). A file that cannot be read to its end (a ``.gz`` cut short or damaged, a
    read error) yields every line before the damage, the last of them possibly cut off, then raises
    ArchiveReadError saying what happened and how many of the file's bytes were left unread."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        chunks = _chunks(handle, size)
        if path.suffix == ".gz":
            chunks = _gunzipped(chunks, size)
        pending = b""
        try:
            for chunk in chunks:
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()
                for line in lines:
                    yield line + b"\n"
        except ArchiveReadError:
            if pending:
                yield pending
            raise
        if pending:
            yield pending


def _chunks(handle: BinaryIO, size: int) -> Iterator[bytes]:
    while True:
        start = handle.tell()
        try:
            chunk = handle.read(READ_CHUNK)
        except OSError as exc:
            raise ArchiveReadError(f"the file could not be read on ({exc})", unread_bytes=size - start) from exc
        if not chunk:
            return
        yield chunk


def _gunzipped(chunks: Iterator[bytes], size: int) -> Iterator[bytes]:
    """The decompressed data of consecutive gzip members, as ``gzip`` reads them, checked to the end
    (each piece at most ``READ_CHUNK`` bytes, whatever the compression ratio)."""
    decompressor = zlib.decompressobj(wbits=31)
    read = 0
    started = False  # whether the current member has begun (a file may end between members)
    for chunk in chunks:
        read += len(chunk)
        while chunk:
            if not started and not chunk.startswith(b"\x1f\x8b"[: len(chunk)]):
                if not chunk.strip(b"\x00"):
                    break  # zero padding after the last member, as gzip allows
                unread = size - read + len(chunk)
                raise ArchiveReadError("data after the last gzip member is not gzip", unread_bytes=unread)
            started = True
            try:
                data = decompressor.decompress(chunk, READ_CHUNK)
            except zlib.error as exc:
                unread = size - read + len(chunk)
                raise ArchiveReadError(f"the gzip data is damaged ({exc})", unread_bytes=unread) from exc
            if data:
                yield data
            if decompressor.eof:
                chunk = decompressor.unused_data
                decompressor, started = zlib.decompressobj(wbits=31), False
            else:
                chunk = decompressor.unconsumed_tail
    if started:
        raise ArchiveReadError(
            "the gzip data ends before its end-of-stream marker: the file is cut short", unread_bytes=0
        )
