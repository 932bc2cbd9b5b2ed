"""The per-agent limit: no more deliveries in flight to one agent than its endpoint allows, the
rest wait and go when a slot frees; within the limit, attempts run side by side (the claim holds
no lock or transaction while the agent thinks)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection

from endpoints.delivering import RunReport, delivery_run
from endpoints.models import Delivery
from endpoints.selectors import deliveries_due
from endpoints.services.deliveries import delivery_request
from leaderboard.models import Agent
from tests.endpoints.agent_server import AgentServer, Received, Reply
from tests.leaderboard.api_support import live_question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.dual_db]

FORECAST = {"prediction": {"probability": 0.6}}


def in_thread(delivery: Delivery, reports: list[RunReport]) -> threading.Thread:
    def run() -> None:
        try:
            reports.append(delivery_run(delivery_id=str(delivery.pk)))
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def wait_for(predicate: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_a_full_agent_waits_and_goes_when_a_slot_frees(agent: Agent, endpoint: Any, agent_server: AgentServer) -> None:
    endpoint.endpoint.max_concurrency = 1
    endpoint.endpoint.save()
    first, _ = delivery_request(agent=agent, question_id=live_question().pk)
    second, _ = delivery_request(agent=agent, question_id=live_question().pk)
    agent_server.reply = Reply(status=200, body=FORECAST, delay=0.5)

    reports: list[RunReport] = []
    thread = in_thread(first, reports)
    wait_for(lambda: len(agent_server.received) == 1)
    assert deliveries_due(now=second.created_at, limit=10) == []  # the sweeper would not start it either
    assert delivery_run(delivery_id=str(second.pk)).status == "skipped"
    second.refresh_from_db()
    assert second.status == Delivery.Status.PENDING and second.attempts == 0
    thread.join()

    assert reports[0].status == Delivery.Status.ANSWERED
    assert delivery_run(delivery_id=str(second.pk)).status == Delivery.Status.ANSWERED
    assert agent_server.max_in_flight == 1


def test_attempts_within_the_limit_run_side_by_side(agent: Agent, endpoint: Any, agent_server: AgentServer) -> None:
    assert endpoint.endpoint.max_concurrency == 2
    deliveries = [delivery_request(agent=agent, question_id=live_question().pk)[0] for _ in range(2)]
    both_arrived = threading.Barrier(2, timeout=5)

    def answer_when_both_are_waiting(received: Received) -> Reply:
        both_arrived.wait()  # fails unless the second claim went through while the first call was open
        return Reply(status=200, body=FORECAST)

    agent_server.reply = answer_when_both_are_waiting
    reports: list[RunReport] = []
    threads = [in_thread(d, reports) for d in deliveries]
    for thread in threads:
        thread.join()
    assert [r.status for r in reports] == [Delivery.Status.ANSWERED] * 2
    assert agent_server.max_in_flight == 2
