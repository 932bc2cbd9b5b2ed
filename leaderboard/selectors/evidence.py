"""Reads of the evidence access log: an agent's own log, and what it read for a forecast."""

from __future__ import annotations

from django.db.models import QuerySet

from ingestion.models import Question
from leaderboard.models import Agent, EvidenceAccess, ReplaySession
from leaderboard.services.evidence import evidence_log_flush


def evidence_log_for_agent(agent: Agent) -> QuerySet[EvidenceAccess]:
    """The agent's own access log, newest first (queued rows of this process are written first)."""
    evidence_log_flush()
    return EvidenceAccess.objects.filter(agent=agent).order_by("-created_at", "-id")


def articles_read_for(
    agent: Agent,
    question: Question,
    session: ReplaySession | None = None,
    *,
    include_search_results: bool = False,
) -> set[int]:
    """Ids of the articles the agent read through the gateway for this question (for SrcP).

    With a session, only that session's accesses count; without one, every access the agent made
    for the question. include_search_results adds the ids that searches returned without a read.
    """
    evidence_log_flush()
    qs = EvidenceAccess.objects.filter(agent=agent, question=question)
    if session is not None:
        qs = qs.filter(session=session)
    kinds = [EvidenceAccess.Kind.READ]
    if include_search_results:
        kinds.append(EvidenceAccess.Kind.SEARCH)
    ids: set[int] = set()
    for kind, article_id, item_ids in qs.filter(kind__in=kinds).values_list("kind", "article_id", "item_ids"):
        if kind == EvidenceAccess.Kind.READ:
            if article_id is not None:
                ids.add(article_id)
            else:
                # The article row was deleted after the read; the logged id still stands.
                ids.update(int(i) for i in item_ids)
        else:
            ids.update(int(i) for i in item_ids)
    return ids
