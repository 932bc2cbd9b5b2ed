"""A live question that opens is offered to agents' endpoints at once (the sweeper catches the rest:
questions whose open_at arrives later, or status changes made with a bulk UPDATE)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import timezone

from ingestion.models import Question


@receiver(post_save, sender=Question, dispatch_uid="endpoints.offer_opened_live_question")
def offer_opened_live_question(sender: Any, instance: Question, created: bool, **kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    if not created and update_fields is not None and "status" not in update_fields:
        return
    if instance.track != Question.Track.LIVE or instance.status != Question.Status.OPEN:
        return
    if not instance.open_at <= timezone.now() < instance.close_at:
        return
    from endpoints.tasks import offer_live_question

    question_id = instance.pk
    transaction.on_commit(lambda: offer_live_question.delay(question_id))
