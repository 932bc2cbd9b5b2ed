"""Evidence (SrcP, source recall, leaks) and reasoning (KER, event P/R/F1, MAE) against a constructed reference."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from ingestion.models import Question
from leaderboard.models import Agent, EvidenceAccess, ReplaySession
from leaderboard.services.grade_runs import grade_question
from tests.factories import T0, AgentFactory, ArticleFactory
from tests.leaderboard.grading_support import (
    RefEvent,
    add_forecast,
    articles,
    current,
    day,
    make_question,
    make_reference,
    resolve,
)

pytestmark = [pytest.mark.dual_db, pytest.mark.django_db]


@pytest.fixture
def world(agent: Agent) -> dict[str, Any]:
    question = make_question("binary")
    src = articles(6)
    make_reference(
        question,
        [
            RefEvent("e1", "Parliament passes budget bill", day(10), 0.9, 1.0, sources=[src[0]]),
            RefEvent("e2", "Central bank cuts interest rates", day(20), 0.8, 1.0, sources=[src[1]]),
            RefEvent("e3", "Unemployment falls to record low", day(30), 0.7, 1.0, sources=[src[2]]),
            RefEvent("e4", "Prime minister resigns", day(40), 0.6, 1.0, sources=[src[3]]),
            RefEvent("e5", "Snap election called", day(45), 0.5, 1.0, sources=[src[4]]),
            RefEvent("e6", "Trade deal signed with neighbours", day(50), 0.4, 1.0, sources=[src[5]]),
            RefEvent("e7", "Minor protest in capital", day(12)),
        ],
    )
    return {"question": question, "src": src}


GRAPH = {
    "events": [
        {"id": "a", "title": "Parliament passes the budget bill", "description": "", "date": day(11).isoformat()},
        {"id": "b", "title": "Central bank cuts rates", "description": "", "date": day(35).isoformat()},
        {"id": "c", "title": "Prime minister resigns suddenly", "description": "", "date": day(40).isoformat()},
        {"id": "d", "title": "Trade deal signed", "description": "", "date": day(50).isoformat()},
    ],
    "edges": [{"source": "a", "target": "c", "relation": "Causes", "strength": 0.5, "confidence": 0.7}],
}


def test_evidence_and_reasoning_scores(agent: Agent, world: dict[str, Any]) -> None:
    question, src = world["question"], world["src"]
    outside = ArticleFactory(published_at=T0 + timedelta(days=40))  # not in C^H, and published after the forecast
    received = T0 + timedelta(days=30)
    f = add_forecast(agent, question, {"probability": 0.7}, received_at=received, cited=[src[0], src[1], outside],
                     graph=GRAPH)  # fmt: skip
    for article, at in ((src[2], received - timedelta(hours=1)), (src[3], received + timedelta(hours=1))):
        EvidenceAccess.objects.create(
            agent=agent, question=question, kind=EvidenceAccess.Kind.READ, article=article, item_ids=[article.pk],
            as_of=at, created_at=at,
        )  # fmt: skip
    bare = add_forecast(AgentFactory(), question, {"probability": 0.4}, received_at=received)
    resolve(question, True)

    report = grade_question(question_id=question.pk)

    assert report.reference == "built"
    g = current(f)
    # C = {src0, src1, outside, src2 (read before the forecast)}; the read after it does not count.
    assert g.source_precision == pytest.approx(3 / 4)
    assert g.source_recall == pytest.approx(3 / 6)
    assert g.leaks == 1 and g.details["leaked_article_ids"] == [outside.pk]
    # Matches: a-e1 (1 day apart), c-e4, d-e6; b is 15 days from e2. Key events e1..e5.
    assert g.key_event_recall == pytest.approx(2 / 5)
    assert g.event_precision == pytest.approx(3 / 4)
    assert g.event_recall == pytest.approx(3 / 7)
    assert g.event_f1 == pytest.approx(2 * 0.75 * (3 / 7) / (0.75 + 3 / 7))
    assert g.temporal_mae == pytest.approx(1 / 3)
    assert g.reference_version == 1
    reasoning = g.details["reasoning"]
    assert len(reasoning["key_events"]) == 5 and len(reasoning["matched_key_events"]) == 2
    assert g.carried_graph is True
    # No graph, no reasoning score: null, not 0 (its evidence is still scored).
    b = current(bare)
    assert b.source_precision == 0.0 and b.carried_graph is False
    assert (b.key_event_recall, b.event_precision, b.event_recall, b.event_f1, b.temporal_mae) == (None,) * 5


def test_unbuilt_reference_leaves_evidence_and_reasoning_null(agent: Agent) -> None:
    question = make_question("binary")
    src = articles(2)
    make_reference(question, [RefEvent("e1", "Parliament passes budget bill", day(10), 0.9, sources=src)],
                   graph_built=False)  # fmt: skip
    late = ArticleFactory(published_at=T0 + timedelta(days=50))
    f = add_forecast(agent, question, {"probability": 0.7}, cited=[src[0], late], graph=GRAPH)
    resolve(question, True)
    report = grade_question(question_id=question.pk)
    assert report.reference == "not_built"
    g = current(f)
    assert g.correct is True
    assert g.source_precision is None and g.source_recall is None
    assert g.key_event_recall is None and g.event_f1 is None and g.temporal_mae is None
    assert g.leaks == 1  # leaks need no reference
    assert g.reference_version == 1


def test_replay_leaks_use_the_simulated_date_and_reads_the_session(agent: Agent, world: dict[str, Any]) -> None:
    question, src = world["question"], world["src"]
    Question.objects.filter(pk=question.pk).update(track=Question.Track.REPLAY)
    resolve(question, True)
    t_sim = T0 + timedelta(days=15)
    session = ReplaySession.objects.create(agent=agent, question=question, simulated_at=t_sim,
                                           created_at=T0 + timedelta(days=90))  # fmt: skip
    received = T0 + timedelta(days=91)
    EvidenceAccess.objects.create(agent=agent, question=question, session=session, kind=EvidenceAccess.Kind.READ,
                                  article=src[4], item_ids=[src[4].pk], as_of=t_sim,
                                  created_at=received - timedelta(minutes=5))  # fmt: skip
    # src[0] is published on day 1 (before t_sim), src[5] on day 6, an extra one on day 15 exactly: a leak.
    at_sim = ArticleFactory(published_at=t_sim)
    f = add_forecast(agent, question, {"probability": 0.9}, session=session, received_at=received,
                     cited=[src[0], at_sim])  # fmt: skip
    grade_question(question_id=question.pk)
    g = current(f)
    assert g.leaks == 1 and g.details["leaked_article_ids"] == [at_sim.pk]
    assert g.source_precision == pytest.approx(2 / 3)  # {src0, at_sim, src4 (read in the session)}
