"""Celery tasks of the endpoints app: deliveries to agents' endpoints and their sweeper.

``deliver_*`` tasks run on the ``deliver`` queue (CELERY_TASK_ROUTES), apart from ingestion and
grading, because they wait on other people's servers. A delivery task makes one attempt; a retry
is a new task sent with a countdown, and the sweeper re-drives anything a lost message missed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from celery import current_app, current_task, shared_task
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from endpoints.delivering import delivery_run
from endpoints.models import Delivery
from endpoints.selectors import deliveries_due, delivery_next_due_for_agent
from endpoints.services.deliveries import deliveries_offer_live, deliveries_reclaim_stale

DELIVER_TASK = "endpoints.tasks.deliver_question"


def _in_process() -> bool:
    """No broker to send to: tasks run in-process (the embedded default, and the test suite).

    A worker consuming a broker counts as having one even where its settings say tasks run
    in-process (the test settings do): the task it is running was not run eagerly.
    """
    if not current_app.conf.task_always_eager:
        return False
    running = current_task
    return not (running and running.request and not running.request.is_eager)


def _send(delivery_id: str, *, countdown: float | None = None) -> None:
    # By name through the broker (routed to the deliver queue), never run inline.
    current_app.send_task(DELIVER_TASK, args=[delivery_id], countdown=countdown)


def dispatch_deliveries(delivery_ids: Iterable[uuid.UUID | str]) -> None:
    """Start these deliveries once the current transaction commits.

    In-process (no broker) nothing is started here: an HTTP call with a long timeout must not run
    inside the web request or command that created the delivery, and the in-process sweeper
    starts due deliveries within its next tick.
    """
    ids = [str(i) for i in delivery_ids]
    if not ids or _in_process():
        return

    def send_all() -> None:
        for delivery_id in ids:
            _send(delivery_id)

    transaction.on_commit(send_all)


@shared_task(name=DELIVER_TASK, acks_late=True)
def deliver_question(delivery_id: str) -> dict[str, Any]:
    """One attempt of one delivery; a duplicate message finds it claimed or not due and does nothing."""
    report = delivery_run(delivery_id=delivery_id)
    if report.agent_id is not None and not _in_process():
        now = timezone.now()
        delivery = Delivery.objects.filter(pk=delivery_id).values("status", "next_attempt_at").first()
        if delivery and delivery["status"] == Delivery.Status.PENDING and delivery["next_attempt_at"]:
            # The retry, at its backoff; if this message is lost the sweeper sends it when due.
            wait = max(0.0, (delivery["next_attempt_at"] - now).total_seconds())
            _send(delivery_id, countdown=wait)
        # This attempt freed one of the agent's slots: start its next waiting delivery.
        waiting = delivery_next_due_for_agent(agent_id=report.agent_id, now=now)
        if waiting is not None and str(waiting) != delivery_id:
            _send(str(waiting))
    return report.as_dict()


@shared_task(name="endpoints.tasks.offer_live_question", acks_late=True)
def offer_live_question(question_id: int) -> int:
    """A live question opened: deliver it to every endpoint that wants live questions."""
    ids = deliveries_offer_live(question_ids=[question_id])
    dispatch_deliveries(ids)
    return len(ids)


@shared_task(name="endpoints.tasks.sweep_deliveries", acks_late=True)
def sweep_deliveries() -> dict[str, int]:
    """Periodic: offer newly open live questions, recover lost attempts, start due deliveries."""
    now = timezone.now()
    limit = settings.HINDSIGHT_DELIVERY_SWEEP_LIMIT
    offered = deliveries_offer_live(now=now, limit=limit)
    reclaimed = deliveries_reclaim_stale(now=now)
    due = deliveries_due(now=now, limit=limit)
    if _in_process():
        # No worker pool: attempt them here, one after the other (each bounded by its timeout).
        for delivery_id in due:
            delivery_run(delivery_id=str(delivery_id))
    else:
        for delivery_id in due:
            _send(str(delivery_id))
    return {"offered": len(offered), "reclaimed": reclaimed, "started": len(due)}
