"""Typed results: one dataclass per kind of API answer.

``from_json`` fills the declared fields from the API's JSON (ISO dates become aware datetimes and
dates, nested results their dataclasses), ignores fields it does not know, and keeps the whole JSON
in ``raw`` so that a newer server's extra fields stay reachable.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, TypeVar, Union, get_args, get_origin

from hindsight_client.errors import ApiError

T = TypeVar("T", bound="Result")


def _parse_datetime(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _convert(kind: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = get_origin(kind)
    if origin in (Union, types.UnionType):
        options = [k for k in get_args(kind) if k is not type(None)]
        return _convert(options[0], value) if len(options) == 1 else value
    if origin is list:
        (item,) = get_args(kind)
        return [_convert(item, v) for v in value]
    if kind is datetime:
        return _parse_datetime(value)
    if kind is date:
        return date.fromisoformat(value)
    if isinstance(kind, type) and issubclass(kind, Result):
        return kind.from_json(value)
    return value


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


@dataclass(frozen=True)
class Result:
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, kw_only=True)

    @classmethod
    def from_json(cls: type[T], data: dict[str, Any]) -> T:
        hints = _hints(cls)
        values = {
            f.name: _convert(hints[f.name], data[f.name])
            for f in dataclasses.fields(cls)
            if f.name != "raw" and f.name in data
        }
        return cls(**values, raw=data)


# ------------------------------------------------------------------------------------ questions


@dataclass(frozen=True)
class Resolution(Result):
    version: int
    kind: str
    outcome: Any
    resolved_at: datetime | None
    provisional: bool
    note: str = ""
    author: str = ""
    created_at: datetime | None = None


@dataclass(frozen=True)
class Question(Result):
    id: int
    title: str
    type: str
    status: str
    track: str
    open_at: datetime
    close_at: datetime
    external_id: str | None = None
    domain: str = ""
    origin: str = ""
    resolution_criteria: str = ""
    background: str = ""
    options: list[str] = field(default_factory=list)
    unit: str = ""
    lower_bound: float | None = None
    upper_bound: float | None = None
    granularity: str = ""
    subject: str = ""
    object: str = ""
    target_date: date | None = None
    horizon_days: int | None = None
    background_events: list[Any] = field(default_factory=list)
    provenance_url: str = ""
    resolve_by: datetime | None = None
    simulated_date_policy: str = ""
    outcome_published_at: datetime | None = None
    outcome_revealed: bool = False
    # Only in the detail (``Client.question``), and only once the outcome is public.
    outcome: Any = None
    resolutions: list[Resolution] = field(default_factory=list)

    @property
    def is_replay(self) -> bool:
        return self.track == "replay"


@dataclass(frozen=True)
class ReplaySession(Result):
    id: str
    question: int
    agent: str
    simulated_date: datetime
    created_at: datetime
    closed_at: datetime | None = None  # closed: it takes no more forecasts
    created: bool | None = None  # True when this call opened it

    @property
    def closed(self) -> bool:
        return self.closed_at is not None


# ------------------------------------------------------------------------------------ evidence


def _next_offset(offset: int, shown: int, count: int) -> int | None:
    following = offset + shown
    return following if shown and following < count else None


@dataclass(frozen=True)
class ArticleHit(Result):
    id: int
    title: str
    url: str
    published_at: datetime
    snippet: str = ""
    source: str | None = None
    score: float | None = None


@dataclass(frozen=True)
class SearchPage(Result):
    as_of: datetime
    count: int
    count_is_exact: bool
    limit: int
    offset: int
    results: list[ArticleHit]

    @property
    def next_offset(self) -> int | None:
        """The offset of the next page, or None after the last one."""
        return _next_offset(self.offset, len(self.results), self.count)


@dataclass(frozen=True)
class Article(Result):
    id: int
    title: str
    url: str
    published_at: datetime
    as_of: datetime
    summary: str = ""
    body: str = ""
    author: str = ""
    language: str = ""
    source: str | None = None


@dataclass(frozen=True)
class Event(Result):
    id: int
    date: date
    subject: str
    object: str
    relation: str
    relation_root: str
    article_urls: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EventPage(Result):
    as_of: datetime
    count: int
    events: list[Event]
    limit: int
    offset: int

    @property
    def next_offset(self) -> int | None:
        """The offset of the next page, or None after the last one."""
        return _next_offset(self.offset, len(self.events), self.count)


@dataclass(frozen=True)
class Market(Result):
    id: int
    platform: str
    title: str
    outcomes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PricePoint(Result):
    time: datetime
    outcome: str
    probability: float


@dataclass(frozen=True)
class PriceHistory(Result):
    as_of: datetime
    question: int
    market: Market | None
    prices: list[PricePoint]

    def latest(self) -> dict[str, float]:
        """Each outcome's last price before the as-of date."""
        last: dict[str, PricePoint] = {}
        for point in self.prices:
            if point.outcome not in last or point.time >= last[point.outcome].time:
                last[point.outcome] = point
        return {outcome: point.probability for outcome, point in last.items()}


@dataclass(frozen=True)
class EvidenceAccess(Result):
    id: int
    kind: str
    as_of: datetime
    created_at: datetime
    session: str | None = None
    question: int | None = None
    article: int | None = None
    query: dict[str, Any] = field(default_factory=dict)
    item_ids: list[int] = field(default_factory=list)


# ------------------------------------------------------------------------------------ forecasts


@dataclass(frozen=True)
class Grade(Result):
    version: int
    void: bool = False
    contaminated: bool = False
    cutoff_declared: bool = True
    grader_version: str = ""
    resolution_version: int | None = None
    reference_version: int | None = None
    counts: bool = True  # the forecast that counts for its agent and question
    correct: bool | None = None
    brier: float | None = None
    log_score: float | None = None
    market_edge: float | None = None
    pinball: float | None = None
    first_level_f1: float | None = None
    second_level_f1: float | None = None
    kl_binary: float | None = None
    kl_quad: float | None = None
    open_precision: float | None = None
    open_recall: float | None = None
    open_f1: float | None = None
    judge: str = ""
    source_precision: float | None = None
    source_recall: float | None = None
    leaks: int | None = None
    key_event_recall: float | None = None
    event_precision: float | None = None
    event_recall: float | None = None
    event_f1: float | None = None
    temporal_mae: float | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class Forecast(Result):
    id: int
    question: int
    agent: str
    received_at: datetime
    prediction: dict[str, Any]
    session: str | None = None
    sources: list[Any] = field(default_factory=list)
    rationale: str = ""
    graph: dict[str, Any] | None = None
    idempotency_key: str = ""
    channel: str = ""
    grade: Grade | None = None
    grade_status: str = ""
    created: bool | None = None  # after a submission: False when the idempotency key returned an earlier one


@dataclass(frozen=True)
class ForecastBody:
    """One forecast to submit: the body of ``POST /api/v1/forecasts/``."""

    question: int
    prediction: dict[str, Any]
    session: str | None = None
    sources: list[int | str] = field(default_factory=list)
    rationale: str = ""
    graph: dict[str, Any] | None = None
    idempotency_key: str = ""

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "question": self.question,
            "session": self.session,
            "prediction": self.prediction,
            "sources": list(self.sources),
            "rationale": self.rationale,
        }
        if self.graph is not None:
            body["graph"] = self.graph
        if self.idempotency_key:
            body["idempotency_key"] = self.idempotency_key
        return body


@dataclass(frozen=True)
class BatchItem:
    """One item of a batch: its index in the list given, its status, and the forecast or the error."""

    index: int
    status: int
    forecast: Forecast | None
    error: ApiError | None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class BatchResult:
    created: int
    replayed: int
    failed: int
    results: list[BatchItem]

    @classmethod
    def from_json(cls, data: dict[str, Any], first_index: int = 0) -> BatchResult:
        items = [
            BatchItem(
                index=first_index + int(row["index"]),
                status=int(row["status"]),
                forecast=None if row.get("forecast") is None else Forecast.from_json(row["forecast"]),
                error=None if row.get("error") is None else ApiError.from_json(int(row["status"]), row["error"]),
            )
            for row in data["results"]
        ]
        return cls(created=data["created"], replayed=data["replayed"], failed=data["failed"], results=items)

    def extended(self, other: BatchResult) -> BatchResult:
        return BatchResult(
            created=self.created + other.created,
            replayed=self.replayed + other.replayed,
            failed=self.failed + other.failed,
            results=[*self.results, *other.results],
        )
