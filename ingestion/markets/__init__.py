"""Prediction-market clients: each platform module fetches its real API format and parses it into
the typed records below, which ``ingestion.services.market_store`` stores. Nothing here touches the
database, so a poll can fetch and validate everything before a single row is written.

Binary markets always name their outcomes ``Yes`` and ``No`` whatever the platform spells, so a
question's outcome maps the same way from every platform.
"""

from __future__ import annotations

import json
import math
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from typing import Any, Literal

import httpx

from ingestion.fetching import MalformedPayload, fetch_json

YES = "Yes"
NO = "No"

QuestionType = Literal["binary", "multiple_choice", ""]
StateKind = Literal["open", "held", "resolved", "annulled"]


class MarketFormatError(MalformedPayload):
    """A market payload lacks a field or has one of the wrong type; the message names both."""


@dataclass(frozen=True)
class PriceRecord:
    outcome: str
    time: datetime
    probability: float


@dataclass(frozen=True)
class MarketState:
    """Where the market stands on its answer.

    ``open``: no answer (a previously recorded answer is withdrawn). ``held``: the platform is
    between answers (disputed, awaiting settlement): keep whatever was recorded. ``resolved``:
    ``outcome`` is one of the market's outcomes. ``annulled``: no valid answer; ``reason`` says why.
    """

    kind: StateKind
    outcome: str | None = None
    provisional: bool = False
    resolved_at: datetime | None = None
    reason: str = ""

    @classmethod
    def open(cls) -> MarketState:
        return cls(kind="open")

    @classmethod
    def held(cls, reason: str) -> MarketState:
        return cls(kind="held", reason=reason)


@dataclass(frozen=True)
class MarketRecord:
    platform: str
    external_id: str
    title: str
    outcomes: list[str]
    question_type: QuestionType
    url: str
    open_at: datetime | None
    close_at: datetime | None
    status: str
    liquidity: float | None
    volume: float | None
    bettors: int | None
    description: str
    state: MarketState
    raw: dict[str, Any]
    # Prices known from the listing itself (a snapshot) or from a history endpoint.
    prices: list[PriceRecord] = field(default_factory=list)
    # Platform keys for fetching price history per outcome (Polymarket CLOB token ids).
    history_keys: dict[str, str] = field(default_factory=dict)
    # Snapshot prices are stored only when they differ from the latest stored point, so polling
    # an unchanged market twice adds nothing.
    prices_are_snapshot: bool = False


def with_price_path(record: MarketRecord, *, points: list[PriceRecord], empty: set[str], first: bool) -> MarketRecord:
    """The record with a price path from a history endpoint in place of its listing snapshot.

    An empty history (no trade yet, or none since the last poll) must not wipe the market's own
    price: with no point at all the snapshot stays, to be stored if it changed; an outcome
    without history keeps its snapshot point on the first fetch of the market's path."""
    if not points:
        return record
    if first and empty:
        points = [*points, *(p for p in record.prices if p.outcome in empty)]
    return replace(record, prices=points, prices_are_snapshot=False)


@dataclass
class Listing:
    """What one poll fetched: valid records, and one message per market that was skipped."""

    records: list[MarketRecord] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    pages: int = 0
    requests: int = 0


JsonGetter = Callable[[str, dict[str, Any] | None], Any]


class Fields:
    """Typed access to one market object; every failure names the market and the field."""

    def __init__(self, payload: Any, *, label: str) -> None:
        if not isinstance(payload, Mapping):
            raise MarketFormatError(f"{label}: expected a JSON object, got {type(payload).__name__}")
        self.payload = payload
        self.label = label

    def error(self, name: str, problem: str) -> MarketFormatError:
        return MarketFormatError(f"{self.label}: field '{name}' {problem}")

    def _get(self, name: str, required: bool) -> Any:
        value = self.payload.get(name)
        if value is None and required:
            raise self.error(name, "is missing")
        return value

    def string(self, name: str, *, required: bool = True, allow_empty: bool = False) -> str:
        value = self._get(name, required)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.error(name, f"should be a string, got {type(value).__name__}")
        if required and not allow_empty and not value.strip():
            raise self.error(name, "is empty")
        return value

    def boolean(self, name: str, *, required: bool = True, default: bool = False) -> bool:
        value = self._get(name, required)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(name, f"should be true or false, got {value!r}")
        return value

    def number(self, name: str, *, required: bool = False, allow_string: bool = False) -> float | None:
        """A finite number; ``allow_string`` accepts the decimal strings some APIs send."""
        value = self._get(name, required)
        if value is None or (allow_string and value == ""):
            return None
        if allow_string and isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise self.error(name, f"should be a number, got {value!r}") from None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.error(name, f"should be a number, got {value!r}")
        return float(value)

    def integer(self, name: str, *, required: bool = False) -> int | None:
        value = self.number(name, required=required)
        if value is None:
            return None
        if value != int(value):
            raise self.error(name, f"should be a whole number, got {value!r}")
        return int(value)

    def millis(self, name: str, *, required: bool = False) -> datetime | None:
        """Milliseconds since the epoch (Manifold)."""
        value = self.number(name, required=required)
        if value is None:
            return None
        try:
            return datetime.fromtimestamp(value / 1000, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise self.error(name, f"is not a valid millisecond timestamp: {value!r}") from None

    def iso_time(self, name: str, *, required: bool = False) -> datetime | None:
        value = self._get(name, required)
        if value is None or value == "":
            if required:
                raise self.error(name, "is missing")
            return None
        if not isinstance(value, str):
            raise self.error(name, f"should be an ISO 8601 time string, got {type(value).__name__}")
        parsed = parse_time(value)
        if parsed is None:
            raise self.error(name, f"is not an ISO 8601 time with a zone: {value!r}")
        return parsed

    def json_list(self, name: str, *, required: bool = True) -> list[Any]:
        """A list sent as a JSON-encoded string (Polymarket's outcomes, prices and token ids)."""
        value = self._get(name, required)
        if value is None:
            return []
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise self.error(name, f"is not a JSON-encoded list: {value[:80]!r}") from None
        if not isinstance(value, list):
            raise self.error(name, f"should be a list, got {type(value).__name__}")
        return value

    def list(self, name: str, *, required: bool = True) -> list[Any]:
        value = self._get(name, required)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(name, f"should be a list, got {type(value).__name__}")
        return value


def parse_time(value: str) -> datetime | None:
    """ISO 8601 with a zone; also the ``2024-11-06 12:00:00+00`` spelling Gamma uses."""
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    # Python's fromisoformat wants ``+00:00``; Gamma sometimes sends ``+00``.
    if len(text) >= 3 and text[-3] in "+-" and text[-2:].isdigit() and ":" not in text[-6:]:
        text += ":00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.astimezone(UTC)


def is_yes_no(outcomes: list[str]) -> bool:
    return len(outcomes) == 2 and {o.strip().lower() for o in outcomes} == {"yes", "no"}


def normalise_yes_no(outcome: str) -> str:
    return YES if outcome.strip().lower() == "yes" else NO


def probability(value: float, *, fields: Fields, name: str) -> float:
    if not 0.0 <= value <= 1.0:
        raise fields.error(name, f"holds a probability outside [0, 1]: {value!r}")
    return value


@cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default verification context, built once per process: loading the CA bundle
    takes tens of milliseconds, once per client otherwise (a context is safe to share)."""
    return httpx.create_ssl_context()


class JsonClient:
    """One connection pool for all the requests of a poll, through ``ingestion.fetching``."""

    def __init__(self, *, timeout: float | None = None, max_bytes: int | None = None) -> None:
        from django.conf import settings

        self.timeout = float(timeout if timeout is not None else settings.HINDSIGHT_FETCH_TIMEOUT_SECONDS)
        self.max_bytes = max_bytes
        self.requests = 0
        self._client = httpx.Client(
            follow_redirects=True,
            max_redirects=int(settings.HINDSIGHT_FETCH_MAX_REDIRECTS),
            timeout=self.timeout,
            verify=_tls_context(),
        )

    def get(self, url: str, params: dict[str, Any] | None = None) -> Any:
        self.requests += 1
        return fetch_json(url, params=params, timeout=self.timeout, max_bytes=self.max_bytes, client=self._client)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> JsonClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def option_int(options: Mapping[str, Any], name: str, default: int, *, minimum: int = 1) -> int:
    """Source options arrive as JSON or as ``KEY=VALUE`` strings from the command line."""
    value = options.get(name, default)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise MarketOptionError(f"source option {name!r} should be a whole number, got {value!r}") from None
    if isinstance(value, bool) or number < minimum:
        raise MarketOptionError(f"source option {name!r} should be a whole number >= {minimum}, got {value!r}")
    return number


def option_float(options: Mapping[str, Any], name: str) -> float | None:
    value = options.get(name)
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MarketOptionError(f"source option {name!r} should be a number, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        raise MarketOptionError(f"source option {name!r} should be a number >= 0, got {value!r}")
    return number


def option_bool(options: Mapping[str, Any], name: str, default: bool) -> bool:
    value = options.get(name, default)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0", "no", "off"):
        return False
    raise MarketOptionError(f"source option {name!r} should be true or false, got {value!r}")


def option_choice(options: Mapping[str, Any], name: str, choices: tuple[str, ...], default: str) -> str:
    value = options.get(name, default)
    if not isinstance(value, str) or value.strip().lower() not in choices:
        raise MarketOptionError(f"source option {name!r} should be one of {', '.join(choices)}, got {value!r}")
    return value.strip().lower()


class MarketOptionError(MarketFormatError):
    """A source option is invalid; the poll fails with this message until staff fix the source."""
