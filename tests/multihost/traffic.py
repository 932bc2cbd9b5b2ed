"""Agents submitting forecasts through the load balancer for as long as the test runs, the way a
careful agent does: each forecast carries its own ``idempotency_key`` and is sent again, with the
same key, until it is accepted (after ``Retry-After``, capped so the test keeps its pace). Every
attempt is recorded with its answer, so the test can say what the API answered during each fault
and that every accepted forecast is stored once."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import httpx

from tests.multihost.network import enter_namespace

DOCUMENTED_OUTAGE_CODE = "unavailable"


@dataclass(frozen=True)
class Attempt:
    key: str
    sent: float  # time.monotonic()
    answered: float
    status: int  # 0: no HTTP answer (the connection failed or timed out)
    code: str
    retry_after: str | None


@dataclass
class Agent:
    name: str
    token: str
    question: int
    base_url: str
    namespace: str
    attempts: list[Attempt] = field(default_factory=list)
    accepted: dict[str, int] = field(default_factory=dict)  # key -> forecast id
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name=f"agent-{self.name}", daemon=True)
        self.thread.start()

    def finish(self, *, timeout: float = 90) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout)
            assert not self.thread.is_alive(), f"agent {self.name} still waiting for an answer"

    def _run(self) -> None:
        enter_namespace(self.namespace)
        headers = {"Authorization": f"Token {self.token}"}
        with httpx.Client(base_url=self.base_url, headers=headers, timeout=90) as client:
            n = 0
            while not self.stop.is_set():
                n += 1
                self._submit(client, f"{self.name}-{n}", 0.05 + (n % 19) / 20)
                time.sleep(0.2)

    def _submit(self, client: httpx.Client, key: str, probability: float) -> None:
        body = {"question": self.question, "prediction": {"probability": probability}, "idempotency_key": key}
        while True:
            sent = time.monotonic()
            try:
                response = client.post("/api/v1/forecasts/", json=body)
            except httpx.TransportError:
                self.attempts.append(Attempt(key, sent, time.monotonic(), 0, "", None))
                time.sleep(1)
                continue
            code = ""
            if response.status_code >= 400 and response.headers.get("content-type", "").startswith("application/json"):
                code = str(response.json().get("code", ""))
            retry_after = response.headers.get("Retry-After")
            self.attempts.append(Attempt(key, sent, time.monotonic(), response.status_code, code, retry_after))
            if response.status_code in (200, 201):
                self.accepted[key] = int(response.json()["id"])
                return
            if self.stop.is_set() and response.status_code != 503:
                return
            time.sleep(min(float(retry_after or 1), 2.0))

    def answers_between(self, start: float, end: float) -> list[Attempt]:
        """Attempts sent at or after ``start`` and answered by ``end``."""
        return [a for a in self.attempts if a.sent >= start and a.answered <= end]
