"""HTTP fetching for feeds and market APIs: one place that knows about timeouts, size caps,
redirect limits, conditional GET and rate limits, and turns every failure into a FetchError
whose message is fit to show on the sources status page.

Pollers call :func:`fetch` (or :func:`fetch_json`); they never talk to httpx directly, so every
source gets the same protection against slow, huge or misbehaving servers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from django.conf import settings

USER_AGENT = "Hindsight/1.0 (+forecasting leaderboard)"


class FetchError(Exception):
    """A fetch failed; ``str(error)`` is a one-line message naming the URL and the problem."""

    # Minimum wait the server asked for (Retry-After), honoured by the source backoff.
    retry_after: timedelta | None = None

    def __init__(self, message: str, *, url: str = "") -> None:
        super().__init__(message)
        self.url = url


class FetchTimeout(FetchError):
    pass


class FetchConnectionError(FetchError):
    pass


class TooManyRedirects(FetchError):
    pass


class ResponseTooLarge(FetchError):
    def __init__(self, message: str, *, url: str = "", bytes_read: int = 0, limit: int = 0) -> None:
        super().__init__(message, url=url)
        # How much was read before giving up: at most one chunk beyond the limit.
        self.bytes_read = bytes_read
        self.limit = limit


class HTTPStatusError(FetchError):
    def __init__(self, message: str, *, url: str = "", status_code: int = 0) -> None:
        super().__init__(message, url=url)
        self.status_code = status_code


class RateLimited(HTTPStatusError):
    """429, or 503 with Retry-After: the server told us when to come back."""

    def __init__(self, message: str, *, url: str = "", status_code: int = 0, retry_after: timedelta | None) -> None:
        super().__init__(message, url=url, status_code=status_code)
        self.retry_after = retry_after


class MalformedPayload(FetchError):
    """The body arrived but is not what was expected (bad JSON, not a feed)."""


@dataclass(frozen=True)
class FetchResult:
    url: str  # final URL after redirects
    status_code: int
    content: bytes
    headers: dict[str, str] = field(default_factory=dict)
    etag: str = ""
    last_modified: str = ""

    @property
    def not_modified(self) -> bool:
        return self.status_code == 304

    def json(self) -> Any:
        try:
            return json.loads(self.content)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MalformedPayload(f"malformed JSON from {self.url}: {exc}", url=self.url) from exc


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> timedelta | None:
    """Retry-After is either delta-seconds or an HTTP-date (RFC 9110 §10.2.3); None if neither."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return timedelta(seconds=int(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    return max(when - now, timedelta(0))


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


def fetch(
    url: str,
    *,
    etag: str = "",
    last_modified: str = "",
    params: dict[str, Any] | None = None,
    accept: str = "*/*",
    timeout: float | None = None,
    max_bytes: int | None = None,
    max_redirects: int | None = None,
    now: datetime | None = None,
    client: httpx.Client | None = None,
) -> FetchResult:
    """GET ``url``; a 304 answer to the ETag/Last-Modified validators returns an empty result
    with ``not_modified`` set. Raises a FetchError subclass for anything but 2xx/304.

    The body is streamed and abandoned as soon as it exceeds ``max_bytes``, so a huge response
    costs at most the limit plus one chunk. ``client`` lets a poller reuse one connection pool
    across the pages of a listing.
    """
    timeout = float(timeout if timeout is not None else _setting("HINDSIGHT_FETCH_TIMEOUT_SECONDS", 20.0))
    max_bytes = int(max_bytes if max_bytes is not None else _setting("HINDSIGHT_FETCH_MAX_BYTES", 5 * 1024 * 1024))
    max_redirects = int(max_redirects if max_redirects is not None else _setting("HINDSIGHT_FETCH_MAX_REDIRECTS", 5))
    headers = {"User-Agent": USER_AGENT, "Accept": accept}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    own_client = client is None
    if client is None:
        client = httpx.Client(follow_redirects=True, max_redirects=max_redirects, timeout=timeout)
    try:
        return _fetch(client, url, headers=headers, params=params, timeout=timeout, max_bytes=max_bytes, now=now)
    finally:
        if own_client:
            client.close()


def _fetch(
    client: httpx.Client,
    url: str,
    *,
    headers: dict[str, str],
    params: dict[str, Any] | None,
    timeout: float,
    max_bytes: int,
    now: datetime | None,
) -> FetchResult:
    try:
        with client.stream("GET", url, headers=headers, params=params, timeout=timeout) as response:
            final_url = str(response.url)
            status = response.status_code
            if status == 304:
                return FetchResult(
                    url=final_url,
                    status_code=304,
                    content=b"",
                    headers=dict(response.headers),
                    etag=response.headers.get("etag", ""),
                    last_modified=response.headers.get("last-modified", ""),
                )
            if status == 429 or (status == 503 and response.headers.get("retry-after")):
                retry_after = parse_retry_after(response.headers.get("retry-after"), now=now)
                wait = f", retry after {int(retry_after.total_seconds())}s" if retry_after is not None else ""
                raise RateLimited(
                    f"HTTP {status} {response.reason_phrase} from {final_url}{wait}",
                    url=final_url,
                    status_code=status,
                    retry_after=retry_after,
                )
            if not 200 <= status < 300:
                raise HTTPStatusError(
                    f"HTTP {status} {response.reason_phrase} from {final_url}", url=final_url, status_code=status
                )
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise ResponseTooLarge(
                    f"response from {final_url} is {int(declared)} bytes, over the {max_bytes}-byte limit",
                    url=final_url,
                    bytes_read=0,
                    limit=max_bytes,
                )
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise ResponseTooLarge(
                        f"response from {final_url} exceeds the {max_bytes}-byte limit",
                        url=final_url,
                        bytes_read=size,
                        limit=max_bytes,
                    )
                chunks.append(chunk)
            return FetchResult(
                url=final_url,
                status_code=status,
                content=b"".join(chunks),
                headers=dict(response.headers),
                etag=response.headers.get("etag", ""),
                last_modified=response.headers.get("last-modified", ""),
            )
    except httpx.TooManyRedirects as exc:
        raise TooManyRedirects(f"too many redirects (redirect loop?) fetching {url}", url=url) from exc
    except httpx.TimeoutException as exc:
        raise FetchTimeout(f"timed out after {timeout:g}s fetching {url} ({type(exc).__name__})", url=url) from exc
    except httpx.InvalidURL as exc:
        raise FetchError(f"invalid URL {url!r}: {exc}", url=url) from exc
    except httpx.UnsupportedProtocol as exc:
        raise FetchError(f"unsupported URL scheme in {url!r}", url=url) from exc
    except httpx.DecodingError as exc:
        raise MalformedPayload(f"undecodable response body from {url}: {exc}", url=url) from exc
    except httpx.TransportError as exc:
        raise FetchConnectionError(f"could not fetch {url}: {exc or type(exc).__name__}", url=url) from exc


def fetch_json(url: str, **kwargs: Any) -> Any:
    """GET a JSON API endpoint and decode it; malformed JSON raises MalformedPayload."""
    kwargs.setdefault("accept", "application/json")
    return fetch(url, **kwargs).json()
