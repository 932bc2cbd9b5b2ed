"""A forecasting agent's endpoint on 127.0.0.1 (real HTTP) for the delivery tests.

It verifies every request with the verification helper agents are given
(``examples/endpoint_agent.py``), records what arrived, and answers as the test says: a forecast,
an acknowledgement, an error, or nothing until it is too late.

    agent_server.secret = issued.secret
    agent_server.reply = lambda received: Reply(status=200, body={"prediction": {"probability": 0.6}})
    agent_server.reply = Reply(status=503)            # every request
    agent_server.reply = Reply(delay=3)               # slower than the platform's timeout

``AgentServer(tls=context, name="agent.example.org")`` serves https instead, its URL naming ``name``
(the test resolves that name to 127.0.0.1), and records the server names clients asked for (SNI).
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from examples.endpoint_agent import BadSignature, verify_signature


@dataclass
class Reply:
    status: int = 202
    body: Any = None  # a dict is sent as JSON, bytes as they are, None as an empty body
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    verified: bool
    refusal: str = ""

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def delivery_id(self) -> str:
        return self.headers.get("hindsight-delivery-id", "")


class AgentServer:
    def __init__(self, *, tls: ssl.SSLContext | None = None, name: str = "127.0.0.1") -> None:
        self.secret = ""
        self.reply: Reply | Callable[[Received], Reply] = Reply()
        self.received: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.server_names: list[str | None] = []
        if tls is not None:
            tls.sni_callback = self._record_server_name
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.url = f"{'https' if tls else 'http'}://{name}:{self.server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _record_server_name(self, _socket: ssl.SSLObject, name: str | None, _context: ssl.SSLContext) -> None:
        self.server_names.append(name)

    def verified(self) -> list[Received]:
        return [r for r in self.received if r.verified]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        agent = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    verify_signature(secret=agent.secret, headers=headers, body=body)
                    received = Received(headers=headers, body=body, verified=True)
                except BadSignature as exc:
                    received = Received(headers=headers, body=body, verified=False, refusal=str(exc))
                with agent._lock:
                    agent.received.append(received)
                    agent.in_flight += 1
                    agent.max_in_flight = max(agent.max_in_flight, agent.in_flight)
                try:
                    if not received.verified:
                        reply = Reply(status=401, body={"error": received.refusal})
                    else:
                        reply = agent.reply(received) if callable(agent.reply) else agent.reply
                    time.sleep(reply.delay)
                    payload = (
                        reply.body
                        if isinstance(reply.body, bytes)
                        else b""
                        if reply.body is None
                        else json.dumps(reply.body).encode()
                    )
                    self.send_response(reply.status)
                    for name, value in {"Content-Type": "application/json", **reply.headers}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the platform gave up waiting (the slow-agent tests)
                finally:
                    with agent._lock:
                        agent.in_flight -= 1

        return Handler

    def start(self) -> AgentServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
