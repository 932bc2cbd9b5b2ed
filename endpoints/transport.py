"""One signed POST to an agent's endpoint, bounded in time and size; no database here.

The connection goes only to the addresses vetted just before (``endpoints.pinning``), redirects
are not followed (a signed question goes only where the team registered it), the whole
exchange has a wall-clock deadline (httpx's timeouts bound each read, a trickling server could
otherwise hold the worker), and the answer is read up to a size cap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from endpoints.pinning import pinned_client

USER_AGENT = "Hindsight-Delivery/1.0"


@dataclass(frozen=True)
class HttpExchange:
    """What one POST came to: a response (``status_code``) or a transport ``error``."""

    latency_ms: int
    status_code: int | None = None
    body: bytes = b""
    content_type: str = ""
    retry_after_seconds: float | None = None
    error: str = ""
    timed_out: bool = False


def _retry_after(value: str | None, *, now: datetime) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def post_signed(
    *,
    url: str,
    addresses: tuple[str, ...],
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    max_bytes: int,
    now: datetime,
) -> HttpExchange:
    """POST ``body`` to ``url``, connecting only to ``addresses`` (the vetted IPs of its host)."""
    started = time.monotonic()
    deadline = started + timeout

    def elapsed_ms() -> int:
        return int((time.monotonic() - started) * 1000)

    request_headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **headers}
    try:
        with (
            pinned_client(
                url=url, addresses=addresses, timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0))
            ) as client,
            client.stream("POST", url, content=body, headers=request_headers) as response,
        ):
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    return HttpExchange(
                        latency_ms=elapsed_ms(),
                        status_code=response.status_code,
                        error=f"the answer is larger than {max_bytes} bytes; answer with one forecast body",
                    )
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the answer did not finish in time")
                chunks.append(chunk)
            return HttpExchange(
                latency_ms=elapsed_ms(),
                status_code=response.status_code,
                body=b"".join(chunks),
                content_type=response.headers.get("content-type", ""),
                retry_after_seconds=_retry_after(response.headers.get("retry-after"), now=now),
            )
    except httpx.ConnectTimeout as exc:
        return HttpExchange(latency_ms=elapsed_ms(), error=f"connection timed out: {exc}", timed_out=True)
    except httpx.TimeoutException:
        return HttpExchange(
            latency_ms=elapsed_ms(), error=f"no complete answer within {timeout:g} s (timed out)", timed_out=True
        )
    except httpx.HTTPError as exc:
        return HttpExchange(latency_ms=elapsed_ms(), error=f"connection failed: {exc or type(exc).__name__}")
