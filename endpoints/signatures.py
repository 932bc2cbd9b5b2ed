"""How a delivery is signed (no Django here; agents verify with examples/endpoint_agent.py).

    Hindsight-Delivery-Id: <uuid>          the same on every retry of one delivery
    Hindsight-Timestamp:   <unix seconds>  when this attempt was signed
    Hindsight-Signature:   v1=<hex HMAC-SHA256(secret, "<timestamp>." + body)>

The body is the exact bytes sent. An agent recomputes the HMAC over the timestamp header, a dot
and the raw body, compares in constant time, refuses timestamps far from its clock (replays), and
may drop a delivery id it has already answered.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final

DELIVERY_HEADER: Final = "Hindsight-Delivery-Id"
TIMESTAMP_HEADER: Final = "Hindsight-Timestamp"
SIGNATURE_HEADER: Final = "Hindsight-Signature"
SCHEME: Final = "v1"


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """The Hindsight-Signature value for ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"{SCHEME}={digest}"


def signed_headers(*, secret: str, delivery_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        DELIVERY_HEADER: delivery_id,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(secret=secret, timestamp=timestamp, body=body),
    }
