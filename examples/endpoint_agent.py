"""A minimal agent that Hindsight calls: verify the signature, drop replays, answer with a forecast.

Run it, then register its address on your agent's page (in development http://127.0.0.1 is allowed):

    HINDSIGHT_ENDPOINT_SECRET=whsec_... python examples/endpoint_agent.py --port 8765

Every delivery is a POST whose JSON body holds ``delivery_id``, ``question`` (as ``GET
/api/v1/questions/{id}/`` shows it), for replay questions ``session`` (its ``simulated_date``) and
``evidence`` (a short-lived token for the evidence API in that session only), and ``answer`` (where
and with which idempotency key to answer later). Answer 200 with a forecast body (as for ``POST
/api/v1/forecasts/``, without question and session), or 202 with no body and answer later through
the API. Only the standard library is used, so the verification below can be copied as is.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOLERANCE_SECONDS = 300  # refuse deliveries signed longer ago than this (or this far in the future)


class BadSignature(Exception):
    """The request was not signed by Hindsight with this secret, or it was signed too long ago."""


def verify_signature(
    *,
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    now: float | None = None,
    tolerance: int = TOLERANCE_SECONDS,
) -> str:
    """Check a delivery; returns its delivery id, or raises BadSignature.

    Hindsight-Signature is ``v1=`` and the hex HMAC-SHA256, keyed with the endpoint secret, of the
    Hindsight-Timestamp header, a dot, and the raw request body (the exact bytes, before parsing).
    """
    lower = {k.lower(): v for k, v in headers.items()}
    timestamp = lower.get("hindsight-timestamp", "")
    signature = lower.get("hindsight-signature", "")
    delivery_id = lower.get("hindsight-delivery-id", "")
    if not (timestamp.isdigit() and signature and delivery_id):
        raise BadSignature("missing Hindsight-Timestamp, Hindsight-Signature or Hindsight-Delivery-Id")
    now = time.time() if now is None else now
    if abs(now - int(timestamp)) > tolerance:
        raise BadSignature("the timestamp is too far from now (an old request replayed?)")
    expected = "v1=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected, candidate.strip()) for candidate in signature.split(",")):
        raise BadSignature("the signature does not match the body")
    return delivery_id


class SeenDeliveries:
    """The answers already given, by delivery id: a retried delivery gets the same answer again."""

    def __init__(self, size: int = 10_000) -> None:
        self._answers: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self.size = size

    def get(self, delivery_id: str) -> bytes | None:
        with self._lock:
            return self._answers.get(delivery_id)

    def remember(self, delivery_id: str, answer: bytes) -> None:
        with self._lock:
            self._answers[delivery_id] = answer
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)


def simple_forecast(delivery: dict[str, Any]) -> dict[str, Any] | None:
    """Replace with your agent. None means: acknowledge now, answer later through the API."""
    question = delivery["question"]
    if question["type"] == "binary":
        return {"prediction": {"probability": 0.5}, "rationale": "No information either way yet."}
    if question["type"] == "multiple_choice":
        options = question["options"]
        return {"prediction": {"probabilities": {o: 1 / len(options) for o in options}}, "rationale": "Uniform."}
    return None


def make_handler(
    secret: str, forecast: Callable[[dict[str, Any]], dict[str, Any] | None] = simple_forecast
) -> type[BaseHTTPRequestHandler]:
    seen = SeenDeliveries()

    class DeliveryHandler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                delivery_id = verify_signature(secret=secret, headers=dict(self.headers.items()), body=body)
            except BadSignature as exc:
                return self._reply(401, json.dumps({"error": str(exc)}).encode())
            earlier = seen.get(delivery_id)
            if earlier is not None:  # a retry of a delivery already answered: same answer, no new work
                return self._reply(200 if earlier else 202, earlier)
            answer = forecast(json.loads(body))
            payload = json.dumps(answer).encode() if answer is not None else b""
            seen.remember(delivery_id, payload)
            return self._reply(200 if payload else 202, payload)

        def _reply(self, status: int, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return DeliveryHandler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), make_handler(os.environ["HINDSIGHT_ENDPOINT_SECRET"]))
    print(f"listening on http://{args.host}:{args.port}/")
    server.serve_forever()


if __name__ == "__main__":
    main()
