"""One delivery attempt, end to end: claim, build and sign the body, POST it, read the answer.

This is the delivery task's body. It sits beside the API layer because it speaks the API's
language both ways: the question is the one ``GET /api/v1/questions/`` shows, and a forecast in
the answer goes through the same checks, service and error messages as ``POST /api/v1/forecasts/``.
The HTTP call runs outside any database transaction (claim and record are short ones of their own).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from rest_framework import exceptions

from endpoints.addresses import AddressRefused, endpoint_addresses_vetted
from endpoints.models import AgentEndpoint, Delivery, DeliveryAttempt
from endpoints.secret_box import SecretUnavailable, secret_decrypt
from endpoints.selectors import endpoint_access_refusal
from endpoints.services.deliveries import (
    AttemptResult,
    ClaimedDelivery,
    delivery_attempt_record,
    delivery_claim,
)
from endpoints.signatures import signed_headers
from endpoints.transport import HttpExchange, post_signed
from leaderboard.apis.common import error_body
from leaderboard.apis.forecasts import ForecastInputSerializer
from leaderboard.apis.questions import QuestionOutputSerializer
from leaderboard.models import Agent, Forecast
from leaderboard.services.errors import ForecastConflict, NotFound
from leaderboard.services.evidence_tokens import evidence_token_issue
from leaderboard.services.forecasts import forecast_submit

logger = logging.getLogger(__name__)

# The fields of an answer besides the forecast body's own (checked against the delivery).
_DELIVERY_FIELDS = ("question", "session")


@dataclass(frozen=True)
class RunReport:
    delivery_id: str
    status: str  # the delivery's status after this run, or "skipped" (not claimed)
    agent_id: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"delivery": self.delivery_id, "status": self.status}


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def delivery_payload(*, claimed: ClaimedDelivery, now: datetime) -> dict[str, Any]:
    """The JSON body of one attempt (see the README's "Agents the platform calls")."""
    delivery = claimed.delivery
    base = settings.HINDSIGHT_PUBLIC_URL
    payload: dict[str, Any] = {
        "delivery_id": str(delivery.pk),
        "attempt": claimed.attempt,
        "trigger": delivery.trigger,
        "sent_at": _iso(now),
        "question": QuestionOutputSerializer(delivery.question).data,
        "session": None,
        "evidence": None,
        "answer": {
            "within_seconds": settings.HINDSIGHT_DELIVERY_TIMEOUT_SECONDS,
            "forecast_url": f"{base}/api/v1/forecasts/",
            "idempotency_key": delivery.idempotency_key,
        },
    }
    session = delivery.session
    if session is not None:
        token = evidence_token_issue(
            session=session,
            now=now,
            lifetime=timedelta(seconds=settings.HINDSIGHT_DELIVERY_EVIDENCE_TOKEN_SECONDS),
            holder_id=claimed.holder_id,
        )
        payload["session"] = {"id": str(session.pk), "simulated_date": _iso(session.simulated_at)}
        payload["evidence"] = {
            "token": token.key,
            "expires_at": _iso(token.expires_at),
            "base_url": f"{base}/api/v1/evidence/",
        }
    return payload


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _refused(base: AttemptResult, message: str) -> AttemptResult:
    return replace(base, outcome=DeliveryAttempt.Outcome.REFUSED, error=message)


def _store_answer(*, delivery: Delivery, answer: dict[str, Any], base: AttemptResult, now: datetime) -> AttemptResult:
    """Validate and store the forecast in the answer exactly as ``POST /api/v1/forecasts/`` would."""
    expected = {"question": delivery.question_id, "session": str(delivery.session_id) if delivery.session_id else None}
    for name in _DELIVERY_FIELDS:
        if answer.get(name) is not None and str(answer[name]) != str(expected[name]):
            wanted = f"is for {name} {expected[name]}" if expected[name] is not None else f"takes no {name}"
            return _refused(base, f"the answer was refused: {name}: this delivery {wanted}")
    # Access may have ended while the endpoint was thinking: then its answer is not stored.
    agent = Agent.objects.filter(pk=delivery.agent_id).first()
    if agent is None:  # the agent's team was deleted, and the agent with it
        return _refused(base, f"the answer was refused: agent {delivery.agent.slug!r} no longer exists")
    endpoint = AgentEndpoint.objects.filter(agent_id=delivery.agent_id).first()
    refusal = endpoint_access_refusal(endpoint=endpoint, agent=agent) if endpoint is not None else None
    if refusal is not None:
        return _refused(base, f"the answer was refused (403 {refusal.code}): {refusal.message}")
    # The platform's key: one delivery stores at most one forecast, whatever the agent sends.
    body = {**answer, **expected, "idempotency_key": delivery.idempotency_key}
    try:
        item = ForecastInputSerializer().check(body)
        result = forecast_submit(
            agent=delivery.agent,
            question_id=item.question_id,
            session_id=item.session_id,
            prediction=item.prediction,
            sources=item.sources,
            rationale=item.rationale,
            graph=item.graph,
            idempotency_key=item.idempotency_key,
            channel=Forecast.Channel.API,
            now=now,
        )
    except ForecastConflict as exc:
        if exc.field == "idempotency_key":
            # An earlier attempt of this delivery stored a forecast (its record was lost): keep that one.
            first = Forecast.objects.filter(agent=delivery.agent, idempotency_key=delivery.idempotency_key).first()
            if first is not None:
                note = f"this delivery already stored forecast {first.pk}; the platform keeps one per delivery"
                return replace(base, forecast_id=first.pk, error=note)
        return _refused(base, _service_error_text(exc))
    except (exceptions.ValidationError, DjangoValidationError, NotFound) as exc:
        return _refused(base, _service_error_text(exc))
    return replace(base, forecast_id=result.forecast.pk)


def _service_error_text(exc: Exception) -> str:
    status, payload = error_body(exc)
    return f"the answer was refused ({status} {payload['code']}): {payload['message']}"


def _interpret(
    *, delivery: Delivery, exchange: HttpExchange, started_at: datetime, url: str, clock: Callable[[], datetime]
) -> AttemptResult:
    base = AttemptResult(
        outcome=DeliveryAttempt.Outcome.ANSWERED,
        started_at=started_at,
        url=url,
        latency_ms=exchange.latency_ms,
        status_code=exchange.status_code,
        retry_after_seconds=exchange.retry_after_seconds,
    )

    def failed(outcome: str, message: str) -> AttemptResult:
        return replace(base, outcome=outcome, error=message)

    code = exchange.status_code
    if code is None:
        outcome = DeliveryAttempt.Outcome.TIMEOUT if exchange.timed_out else DeliveryAttempt.Outcome.CONNECTION
        return failed(outcome, exchange.error)
    if not 200 <= code < 300:
        text = _clip(exchange.body.decode("utf-8", "replace"))
        if 300 <= code < 400:
            text = "redirects are not followed: register the final address"
        return failed(
            DeliveryAttempt.Outcome.HTTP_ERROR, f"the endpoint answered HTTP {code}" + (f": {text}" if text else "")
        )
    if exchange.error:
        return _refused(base, exchange.error)
    raw = exchange.body.strip()
    if not raw or code == 204:
        return replace(base, outcome=DeliveryAttempt.Outcome.ACKNOWLEDGED)
    try:
        answer = json.loads(raw)
    except ValueError as exc:
        return _refused(base, f"the answer is not JSON ({exc}): {_clip(raw.decode('utf-8', 'replace'), 120)}")
    if not isinstance(answer, dict):
        return _refused(base, "the answer must be a JSON object (a forecast body), or empty to answer later")
    return _store_answer(delivery=delivery, answer=answer, base=base, now=clock())


def delivery_run(*, delivery_id: str, now: datetime | None = None) -> RunReport:
    """Make one attempt of a due delivery; a delivery not due or already taken is left alone.

    ``now`` is when the attempt starts; later instants (the answer, the record) are ``now`` plus
    the time the attempt took.
    """
    now = now or timezone.now()
    ticks = time.monotonic()

    def clock() -> datetime:
        return now + timedelta(seconds=time.monotonic() - ticks)

    claimed = delivery_claim(delivery_id=delivery_id, now=now)
    if claimed is None:
        return RunReport(delivery_id=str(delivery_id), status="skipped")
    delivery = claimed.delivery
    allow_loopback = settings.HINDSIGHT_DELIVERY_ALLOW_LOOPBACK
    started_at = clock()
    secret, problem = "", ""
    addresses: tuple[str, ...] = ()
    try:
        secret = secret_decrypt(claimed.secret_ciphertext)
        addresses = endpoint_addresses_vetted(claimed.url, allow_loopback=allow_loopback)
    except (SecretUnavailable, AddressRefused) as exc:
        problem = str(exc)
    if problem:
        result = AttemptResult(
            outcome=DeliveryAttempt.Outcome.BLOCKED, started_at=started_at, url=claimed.url, error=problem
        )
    else:
        body = json.dumps(delivery_payload(claimed=claimed, now=started_at), separators=(",", ":")).encode()
        headers = signed_headers(
            secret=secret, delivery_id=str(delivery.pk), timestamp=int(started_at.timestamp()), body=body
        )
        exchange = post_signed(
            url=claimed.url,
            addresses=addresses,
            body=body,
            headers=headers,
            timeout=settings.HINDSIGHT_DELIVERY_TIMEOUT_SECONDS,
            max_bytes=settings.HINDSIGHT_DELIVERY_MAX_RESPONSE_BYTES,
            now=started_at,
        )
        result = _interpret(delivery=delivery, exchange=exchange, started_at=started_at, url=claimed.url, clock=clock)
    status = delivery_attempt_record(claimed=claimed, result=result, now=clock())
    if status is None:
        logger.warning(
            "delivery %s: the claim was taken over during the attempt; its result is not recorded", delivery.pk
        )
        return RunReport(delivery_id=str(delivery.pk), status="claim-lost", agent_id=delivery.agent_id)
    if result.error:
        logger.info("delivery %s attempt %d: %s", delivery.pk, claimed.attempt, result.error)
    return RunReport(delivery_id=str(delivery.pk), status=str(status), agent_id=delivery.agent_id)
