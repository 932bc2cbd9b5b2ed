"""The agent's side of the signature: the helper shipped in examples/endpoint_agent.py accepts a
real delivery and rejects a tampered body, another secret and an old timestamp; the example
agent's handler answers 401 to a forgery and the same answer again to a replayed delivery id."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from endpoints.delivering import delivery_run
from endpoints.models import Delivery
from endpoints.services.deliveries import delivery_request
from endpoints.services.registration import endpoint_rotate_secret
from examples.endpoint_agent import BadSignature, make_handler, verify_signature
from leaderboard.models import Agent
from tests.endpoints.agent_server import AgentServer, Received
from tests.leaderboard.api_support import live_question

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def real_delivery(agent: Agent, endpoint: Any, agent_server: AgentServer) -> Received:
    """A delivery exactly as the platform sent it (headers and raw body)."""
    delivery, _ = delivery_request(agent=agent, question_id=live_question().pk)
    delivery_run(delivery_id=str(delivery.pk))
    [received] = agent_server.received
    return received


def test_the_helper_accepts_a_real_delivery_and_rejects_a_tampered_one(real_delivery: Received, endpoint: Any) -> None:
    secret, headers, body = endpoint.secret, real_delivery.headers, real_delivery.body
    assert verify_signature(secret=secret, headers=headers, body=body) == real_delivery.delivery_id

    tampered = body.replace(b'"attempt":1', b'"attempt":2')
    assert tampered != body
    with pytest.raises(BadSignature, match="does not match"):
        verify_signature(secret=secret, headers=headers, body=tampered)
    with pytest.raises(BadSignature, match="does not match"):
        verify_signature(secret=secret + "x", headers=headers, body=body)
    signed_at = int(headers["hindsight-timestamp"])
    with pytest.raises(BadSignature, match="too far from now"):
        verify_signature(secret=secret, headers=headers, body=body, now=signed_at + 301)
    with pytest.raises(BadSignature, match="missing"):
        verify_signature(secret=secret, headers={"Hindsight-Timestamp": str(signed_at)}, body=body)


@pytest.fixture
def example_agent(endpoint: Any) -> Iterator[str]:
    """examples/endpoint_agent.py's own server, with the endpoint's secret."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(endpoint.secret))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_the_example_agent_refuses_forgeries_and_repeats_itself_for_a_replay(
    real_delivery: Received, example_agent: str
) -> None:
    headers = {k: v for k, v in real_delivery.headers.items() if k.startswith("hindsight-")}
    with httpx.Client(base_url=example_agent, headers={"Content-Type": "application/json"}) as client:
        first = client.post("/", content=real_delivery.body, headers=headers)
        assert first.status_code == 200 and first.json()["prediction"] == {"probability": 0.5}
        forged = client.post("/", content=real_delivery.body.replace(b"binary", b"BINARY"), headers=headers)
        assert forged.status_code == 401 and "does not match" in forged.json()["error"]
        replayed = client.post("/", content=real_delivery.body, headers=headers)
        assert replayed.status_code == 200 and replayed.content == first.content


def test_after_rotation_the_old_secret_no_longer_verifies(
    agent: Agent, endpoint: Any, agent_server: AgentServer
) -> None:
    rotated = endpoint_rotate_secret(endpoint=endpoint.endpoint)
    assert rotated.secret != endpoint.secret
    delivery, _ = delivery_request(agent=agent, question_id=live_question().pk)

    assert delivery_run(delivery_id=str(delivery.pk)).status == Delivery.Status.PENDING  # agent still has the old one
    [refused] = agent_server.received
    assert not refused.verified
    delivery.refresh_from_db()
    assert delivery.last_error.startswith("the endpoint answered HTTP 401")
    assert verify_signature(secret=rotated.secret, headers=refused.headers, body=refused.body)
