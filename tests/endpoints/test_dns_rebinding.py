"""A delivery connects to exactly the addresses vetted just before it, never to what a second DNS
lookup answers, while the endpoint's name stays its Host header, TLS server name and certificate
name.

The only fake is the name server (a service on the internet): ``socket.getaddrinfo`` answers for
one made-up name, in turn, the way a hostile name server with a zero TTL does. The agent servers
are real HTTP and HTTPS servers on 127.0.0.1.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from endpoints.delivering import delivery_run
from endpoints.models import Delivery, DeliveryAttempt
from endpoints.services.deliveries import delivery_request
from endpoints.services.registration import endpoint_register
from leaderboard.models import Agent, Forecast
from tests.endpoints.agent_server import AgentServer, Reply
from tests.endpoints.certificates import server_certificate
from tests.leaderboard.api_support import live_question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dual_db]

FORECAST = {"prediction": {"probability": 0.6}, "rationale": "Base rate."}
NAME = "agent.rebinding.example"
# A public address; nothing of the test's listens there, so a call pinned to it cannot answer.
PUBLIC = "93.184.215.14"


class RebindingNameServer:
    """Answers for one name in turn (the last answer repeats); every other name resolves as usual."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str, answers: list[str]) -> None:
        self.name = name
        self.answers = answers
        self.asked = 0
        real = socket.getaddrinfo

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            if host != self.name:
                return real(host, port, *args, **kwargs)
            answer = self.answers[min(self.asked, len(self.answers) - 1)]
            self.asked += 1
            return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (answer, int(port)))]

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def tls_agent_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AgentServer]:
    """An https agent at ``https://agent.rebinding.example:PORT/hook`` with a certificate for that
    name, from an authority the platform is told to trust (as it would trust a public one)."""
    certificate = server_certificate(tmp_path, hosts=[NAME])
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate.authority_file))
    server = AgentServer(tls=certificate.server_context(), name=NAME).start()
    try:
        yield server
    finally:
        server.stop()


def _deliver(agent: Agent, owner: Any, server: AgentServer, url: str | None = None) -> Delivery:
    issued = endpoint_register(agent=agent, url=url or server.url, created_by=owner)
    server.secret = issued.secret
    server.reply = Reply(status=200, body=FORECAST)
    delivery, _ = delivery_request(agent=agent, question_id=live_question().pk)
    delivery_run(delivery_id=str(delivery.pk))
    delivery.refresh_from_db()
    return delivery


def test_a_name_rebound_to_loopback_after_the_check_is_never_called_there(
    agent: Agent, owner: Any, tls_agent_server: AgentServer, fast_deliveries: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_deliveries.HINDSIGHT_DELIVERY_ALLOW_LOOPBACK = False
    names = RebindingNameServer(monkeypatch, NAME, [PUBLIC, "127.0.0.1"])

    delivery = _deliver(agent, owner, tls_agent_server)

    assert tls_agent_server.received == [] and tls_agent_server.server_names == []
    assert names.asked == 1, "the name was resolved once, for the check, and not again to connect"
    [attempt] = delivery.attempt_log.all()
    assert attempt.outcome in (DeliveryAttempt.Outcome.CONNECTION, DeliveryAttempt.Outcome.TIMEOUT)
    assert f"cannot connect to {NAME} port" in attempt.error and PUBLIC in attempt.error
    assert delivery.status == Delivery.Status.PENDING and not Forecast.objects.exists()


@pytest.mark.parametrize(
    ("answers", "words"),
    [
        (["127.0.0.1"], "resolves to 127.0.0.1 is a loopback address"),
        (["169.254.169.254"], "resolves to 169.254.169.254 is not a public address"),
    ],
)
def test_a_name_answering_a_private_address_to_the_check_is_blocked(
    agent: Agent,
    owner: Any,
    tls_agent_server: AgentServer,
    fast_deliveries: Any,
    monkeypatch: pytest.MonkeyPatch,
    answers: list[str],
    words: str,
) -> None:
    fast_deliveries.HINDSIGHT_DELIVERY_ALLOW_LOOPBACK = False
    RebindingNameServer(monkeypatch, NAME, answers)

    delivery = _deliver(agent, owner, tls_agent_server)

    assert tls_agent_server.received == []
    [attempt] = delivery.attempt_log.all()
    assert attempt.outcome == DeliveryAttempt.Outcome.BLOCKED
    assert attempt.error == f"{NAME} {words}; the platform calls only public addresses"


def test_a_localhost_endpoint_is_called_at_the_address_it_was_checked_at(
    agent: Agent, owner: Any, agent_server: AgentServer, fast_deliveries: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Loopback is allowed (development and tests); a second lookup would answer an unroutable address.
    names = RebindingNameServer(monkeypatch, "localhost", ["127.0.0.1", "192.0.2.1"])
    port = agent_server.server.server_address[1]

    delivery = _deliver(agent, owner, agent_server, url=f"http://localhost:{port}/hook")

    assert delivery.status == Delivery.Status.ANSWERED and names.asked == 1
    [received] = agent_server.verified()
    assert received.headers["host"] == f"localhost:{port}"
    assert delivery.attempt_log.get().url == f"http://localhost:{port}/hook"


def test_an_https_endpoint_is_verified_and_named_as_its_host_not_its_address(
    agent: Agent, owner: Any, tls_agent_server: AgentServer, fast_deliveries: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    RebindingNameServer(monkeypatch, NAME, ["127.0.0.1", "192.0.2.1"])
    port = tls_agent_server.server.server_address[1]

    delivery = _deliver(agent, owner, tls_agent_server)

    assert delivery.status == Delivery.Status.ANSWERED, delivery.last_error
    assert tls_agent_server.server_names == [NAME]  # SNI: the name, though the socket went to 127.0.0.1
    [received] = tls_agent_server.verified()
    assert received.headers["host"] == f"{NAME}:{port}"


def test_a_certificate_for_another_name_is_refused(
    agent: Agent,
    owner: Any,
    fast_deliveries: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    RebindingNameServer(monkeypatch, NAME, ["127.0.0.1"])
    certificate = server_certificate(tmp_path, hosts=["someone-else.example"])
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate.authority_file))
    server = AgentServer(tls=certificate.server_context(), name=NAME).start()
    try:
        delivery = _deliver(agent, owner, server)
    finally:
        server.stop()

    assert server.received == []
    [attempt] = delivery.attempt_log.all()
    assert attempt.outcome == DeliveryAttempt.Outcome.CONNECTION
    assert "certificate verify failed" in attempt.error and NAME in attempt.error
