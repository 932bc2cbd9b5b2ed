"""``Client``: the Hindsight agent API (``/api/v1/``) over HTTP, with typed results and retries."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypedDict, TypeVar, Unpack
from uuid import UUID

import httpx

from hindsight_client.errors import ApiError, RateLimited, TransportError
from hindsight_client.models import (
    Article,
    BatchResult,
    EventPage,
    EvidenceAccess,
    Forecast,
    ForecastBody,
    PriceHistory,
    Question,
    ReplaySession,
    Result,
    SearchPage,
)

__version__ = "0.2.0"

R = TypeVar("R", bound=Result)

SessionRef = ReplaySession | str | UUID
QuestionRef = Question | int


class EventQuery(TypedDict, total=False):
    """Where an events query stands (``session`` or a live ``question``) and its filters: ISO
    alpha-3 ``subject`` / ``object``, a CAMEO ``relation`` (two digits include their children) and
    inclusive ``start`` / ``end`` days."""

    session: SessionRef | None
    question: QuestionRef | None
    subject: str
    object: str
    relation: str
    start: date | str
    end: date | str


# At most this many forecasts per batch request (the server's limit); longer lists are split.
BATCH_LIMIT = 1000
RETRY_STATUSES = (502, 503, 504)


def _session_id(session: SessionRef | None) -> str | None:
    if session is None:
        return None
    return session.id if isinstance(session, ReplaySession) else str(session)


def _question_id(question: QuestionRef) -> int:
    return question.id if isinstance(question, Question) else int(question)


def _retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds: a number of seconds or an HTTP date."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class Client:
    """The agent API for one agent token.

    ``base_url`` and ``token`` default to ``$HINDSIGHT_URL`` (else http://127.0.0.1:8000) and
    ``$HINDSIGHT_TOKEN``. A 429 is retried after its Retry-After; connection failures and
    502/503/504 are retried with exponential backoff (``backoff`` · 2^attempt seconds) when the
    request is safe to repeat; ``max_retries`` bounds both. ``sleep`` waits between attempts.
    """

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_retry_wait: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        base_url = base_url or os.environ.get("HINDSIGHT_URL") or "http://127.0.0.1:8000"
        token = token or os.environ.get("HINDSIGHT_TOKEN")
        if not token:
            raise ValueError("an agent token is needed: pass token= or set HINDSIGHT_TOKEN")
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_retry_wait = max_retry_wait
        self.sleep = sleep
        self.http = httpx.Client(
            base_url=f"{self.base_url}/api/v1",
            headers={"Authorization": f"Token {token}", "User-Agent": f"hindsight-client/{__version__}"},
            timeout=timeout,
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -------------------------------------------------------------------------------- transport

    def request(self, method: str, path: str, *, params: Any = None, json: Any = None, safe: bool = True) -> Any:
        """One API call (``path`` under /api/v1); returns the decoded JSON or raises its ``ApiError``.

        ``safe``: the request may be sent again after a failure that might have reached the server
        (a timeout, a 502/503/504). A 429 or a refused connection never reached it: always retried.
        """
        return self.send(method, path, params=params, json=json, safe=safe).json()

    def send(
        self, method: str, path: str, *, params: Any = None, json: Any = None, safe: bool = True
    ) -> httpx.Response:
        """As ``request``, returning the successful response itself (for its status and headers)."""
        attempt = 0
        while True:
            try:
                response = self.http.request(method, path, params=params, json=json)
            except httpx.TransportError as exc:
                if attempt < self.max_retries and (safe or isinstance(exc, httpx.ConnectError)):
                    self.sleep(self.backoff * 2**attempt)
                    attempt += 1
                    continue
                raise TransportError(f"{method} {self.base_url}/api/v1{path}: {exc}") from exc
            if response.status_code == 429 and attempt < self.max_retries:
                wait = _retry_after(response)
                wait = self.backoff * 2**attempt if wait is None else wait
                if wait <= self.max_retry_wait:
                    self.sleep(wait)
                    attempt += 1
                    continue
            elif response.status_code in RETRY_STATUSES and safe and attempt < self.max_retries:
                self.sleep(self.backoff * 2**attempt)
                attempt += 1
                continue
            if response.status_code >= 400:
                raise self._error(response)
            return response

    @staticmethod
    def _error(response: httpx.Response) -> ApiError:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text[:500]
        error = ApiError.from_json(response.status_code, body)
        if isinstance(error, RateLimited):
            error.retry_after = _retry_after(response)
        return error

    def _pages(self, path: str, params: Mapping[str, Any], page_size: int, kind: type[R]) -> Iterator[R]:
        offset = 0
        while True:
            page = self.request("GET", path, params={**params, "limit": page_size, "offset": offset})
            results = page["results"]
            for item in results:
                yield kind.from_json(item)
            offset += len(results)
            if not results or not page.get("next"):
                return

    @staticmethod
    def _scope(session: SessionRef | None, question: QuestionRef | None) -> dict[str, Any]:
        scope: dict[str, Any] = {}
        if session is not None:
            scope["session"] = _session_id(session)
        if question is not None:
            scope["question"] = _question_id(question)
        return scope

    @staticmethod
    def _given(**params: Any) -> dict[str, Any]:
        return {name: value for name, value in params.items() if value is not None}

    # -------------------------------------------------------------------------------- questions

    def questions(
        self,
        *,
        status: str | None = None,
        track: str | None = None,
        type: str | None = None,
        domain: str | None = None,
        origin: str | Sequence[str] | None = None,
        page_size: int = 100,
    ) -> Iterator[Question]:
        """Every question matching the filters (never drafts), earliest deadline first, page by page.

        ``origin`` takes one origin or several (e.g. ``["sample", "admin", "market"]``)."""
        origins = [origin] if isinstance(origin, str) else origin
        params = self._given(status=status, track=track, type=type, domain=domain, origin=origins)
        return self._pages("/questions/", params, page_size, Question)

    def question(self, question: QuestionRef) -> Question:
        """One question; ``outcome`` and ``resolutions`` are filled once the outcome is public."""
        return Question.from_json(self.request("GET", f"/questions/{_question_id(question)}/"))

    def open_replay(self, question: QuestionRef) -> ReplaySession:
        """Your replay session on a replay question (opened on the first call, the same one afterwards).

        Until you forecast in it or close it (``close_replay``), evidence as of now answers only for
        live questions you already forecast; other live ``question=`` queries raise ``Forbidden``."""
        response = self.send("POST", "/replays/", json={"question": _question_id(question)})
        return replace(ReplaySession.from_json(response.json()), created=response.status_code == 201)

    def close_replay(self, session: SessionRef) -> ReplaySession:
        """Close your replay session (closing again changes nothing): it takes no more forecasts, those
        made stand. Close a session you will not forecast in: until you forecast in it or close it,
        evidence as of now answers only for live questions you forecast (others raise ``Forbidden``)."""
        raw = str(_session_id(session))
        try:
            session_id = UUID(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not a replay session id") from None
        return ReplaySession.from_json(self.request("DELETE", f"/replays/{session_id}/"))

    # -------------------------------------------------------------------------------- evidence

    def search_articles(
        self,
        q: str,
        *,
        session: SessionRef | None = None,
        question: QuestionRef | None = None,
        limit: int = 10,
        offset: int = 0,
    ) -> SearchPage:
        """Ranked full-text search, as of the session's date (replay) or now (a live ``question``)."""
        params = {"q": q, **self._scope(session, question), "limit": limit, "offset": offset}
        return SearchPage.from_json(self.request("GET", "/evidence/articles/", params=params))

    def read_article(
        self, article: int, *, session: SessionRef | None = None, question: QuestionRef | None = None
    ) -> Article:
        """An article's full text; ``NotFound`` when it was published at or after the as-of date."""
        params = self._scope(session, question)
        return Article.from_json(self.request("GET", f"/evidence/articles/{int(article)}/", params=params))

    def _events(self, query: EventQuery, **extra: Any) -> Any:
        scope = self._scope(query.get("session"), query.get("question"))
        filters: dict[str, Any] = {k: v for k, v in query.items() if k not in ("session", "question")}
        for day in ("start", "end"):
            value = filters.get(day)
            if isinstance(value, date):
                filters[day] = value.isoformat()
        return self.request("GET", "/evidence/events/", params={**scope, **self._given(**filters, **extra)})

    def events(self, *, limit: int = 30, offset: int = 0, **query: Unpack[EventQuery]) -> EventPage:
        """Structured country-to-country events (CAMEO codes) as of the date, most recent first."""
        return EventPage.from_json(self._events(query, limit=limit, offset=offset))

    def event_count(self, **query: Unpack[EventQuery]) -> int:
        """How many events match, as of the date."""
        return int(self._events(query, aggregate="count")["count"])

    def event_distribution(self, by: str, *, role: str | None = None, **query: Unpack[EventQuery]) -> dict[str, int]:
        """Event counts per CAMEO code (``by="relation"``) or per country (``by="entity"``, with ``role``:
        head, tail or both)."""
        body = self._events(query, aggregate=by, role=role)
        return {str(key): int(value) for key, value in body["distribution"].items()}

    def prices(self, question: QuestionRef, *, session: SessionRef | None = None) -> PriceHistory:
        """The question's market price history before the date (replay questions need ``session``)."""
        params = self._given(session=_session_id(session))
        return PriceHistory.from_json(self.request("GET", f"/evidence/prices/{_question_id(question)}/", params=params))

    def evidence_log(self, *, page_size: int = 100) -> Iterator[EvidenceAccess]:
        """Your own searches and reads, newest first."""
        return self._pages("/evidence/log/", {}, page_size, EvidenceAccess)

    # -------------------------------------------------------------------------------- forecasts

    def submit_forecast(
        self,
        question: QuestionRef,
        prediction: Mapping[str, Any],
        *,
        session: SessionRef | None = None,
        sources: Iterable[int | str] = (),
        rationale: str = "",
        graph: Mapping[str, Any] | None = None,
        idempotency_key: str = "",
    ) -> Forecast:
        """Submit one forecast; ``created`` is False when the idempotency key returned an earlier one."""
        body = ForecastBody(
            question=_question_id(question),
            prediction=dict(prediction),
            session=_session_id(session),
            sources=list(sources),
            rationale=rationale,
            graph=None if graph is None else dict(graph),
            idempotency_key=idempotency_key,
        )
        return self.submit(body)

    def submit(self, body: ForecastBody) -> Forecast:
        """Submit a prepared ``ForecastBody``."""
        response = self.send("POST", "/forecasts/", json=body.to_json(), safe=bool(body.idempotency_key))
        # 201 created; 200 when the idempotency key returned the forecast it names.
        return replace(Forecast.from_json(response.json()), created=response.status_code == 201)

    def submit_forecasts(self, bodies: Iterable[ForecastBody | Mapping[str, Any]]) -> BatchResult:
        """Submit many forecasts (split into requests of at most 1000); each item succeeds or fails
        on its own, in ``results`` in the order given."""
        items = [b.to_json() if isinstance(b, ForecastBody) else dict(b) for b in bodies]
        merged: BatchResult | None = None
        for start in range(0, len(items), BATCH_LIMIT):
            chunk = items[start : start + BATCH_LIMIT]
            safe = all(item.get("idempotency_key") for item in chunk)
            part = BatchResult.from_json(self.request("POST", "/forecasts/batch/", json=chunk, safe=safe), start)
            merged = part if merged is None else merged.extended(part)
        return merged if merged is not None else BatchResult(created=0, replayed=0, failed=0, results=[])

    def forecasts(
        self,
        *,
        question: QuestionRef | None = None,
        session: SessionRef | None = None,
        track: str | None = None,
        page_size: int = 100,
    ) -> Iterator[Forecast]:
        """Your forecasts, newest first, each with its current grade once the outcome is public."""
        params = self._given(
            question=None if question is None else _question_id(question), session=_session_id(session), track=track
        )
        return self._pages("/forecasts/", params, page_size, Forecast)
