"""Text never stops a question's grading: prices written with thousands separators and decimals are
read on both sides of the match, and a forecast the matcher still cannot score is graded as
ungradable with the reason (shown to its team and staff) while every other forecast is graded."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from grading.scoring import guarded
from leaderboard.models import Agent, Forecast
from tests.factories import AgentFactory, UserFactory
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

PRICE = "Castmoor bonds fall as oil climbs to $1,234.56 a tonne"


def event(key: str, title: str, n: int, description: str = "") -> dict[str, Any]:
    return {"id": key, "title": title, "description": description, "date": day(n).isoformat()}


def world(agent: Agent) -> tuple[Any, list[Forecast]]:
    """A resolved question whose hindsight graph states prices, and three agents' forecasts of it."""
    question = make_question("binary", title="Will gold close above US$4,500 an ounce by June?")
    src = articles(3)
    make_reference(
        question,
        [
            RefEvent("e1", "Gold rises to a record US$4,644.56 per ounce", day(10), 0.9, 0.9, sources=[src[0]]),
            RefEvent("e2", "The central bank raises interest rates to 5.25%", day(14), 0.6, 0.8, sources=[src[1]]),
            RefEvent(
                "e3", PRICE, day(20), 0.5, 0.8, "Oil at $1,234.56 a tonne; a court orders €1.234,56 paid.", [src[2]]
            ),
        ],
    )
    graphs = [
        [event("a", "Gold rises to a record US$4,644.56 per ounce", 10), event("b", PRICE, 20)],
        [
            event(
                "a", "The central bank raises interest rates to 5.25%", 14, "Rates at 1,234.5 basis points? No: 5.25%."
            )
        ],
        [event("a", "Gold rises to a record 4.644,56 US dollars per ounce", 11)],
    ]
    agents = [agent, AgentFactory(), AgentFactory()]
    forecasts = [
        add_forecast(a, question, {"probability": 0.7}, graph={"events": g, "edges": []})
        for a, g in zip(agents, graphs, strict=True)
    ]
    resolve(question, True)
    return question, forecasts


def test_prices_in_forecasts_and_the_hindsight_graph_are_graded(agent: Agent) -> None:
    question, forecasts = world(agent)
    out = io.StringIO()
    call_command("regrade", str(question.pk), stdout=out)
    grades = [current(f) for f in forecasts]
    assert all(g.brier is not None and g.key_event_recall is not None for g in grades)
    verdicts = {v[0]: v[3] for v in grades[0].details["reasoning"]["verdicts"]}
    assert verdicts == {"a": "matched", "b": "matched"}
    assert grades[2].event_precision == 1.0  # the same price in European notation


def test_a_forecast_the_matcher_cannot_score_is_ungradable_and_the_others_are_graded(
    agent: Agent, owner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A defect injected into the matcher for one agent's text: that forecast keeps its outcome and
    evidence scores and says why it has no reasoning score; the other agents are graded in full."""
    question, forecasts = world(agent)
    assign = guarded.GuardedReferenceIndex._assign

    def defective(self: Any, events: Any, *args: Any) -> Any:
        if any("\u2063" in e.title for e in events):  # an invisible separator: this agent's text only
            raise ValueError("could not convert string to float: '1.234.56'")
        return assign(self, events, *args)

    monkeypatch.setattr(guarded.GuardedReferenceIndex, "_assign", defective)
    forecasts[0].graph["events"][1]["title"] = PRICE.replace(" ", " \u2063", 1)
    forecasts[0].save(update_fields=["graph"])
    call_command("regrade", str(question.pk), stdout=io.StringIO())

    broken, *others = (current(f) for f in forecasts)
    assert broken.brier is not None and broken.source_precision is not None
    assert broken.key_event_recall is None and broken.event_f1 is None
    assert "could not convert string to float" in broken.details["reasoning_error"]
    assert all(g.key_event_recall is not None and "reasoning_error" not in g.details for g in others)

    member = Client()
    member.force_login(owner)
    page = member.get(f"/forecasts/{forecasts[0].pk}/").content.decode()
    assert "ungradable" in page and "could not convert string to float" in page
    graph_page = member.get(f"/forecasts/{forecasts[0].pk}/graph/").content.decode()
    assert "could not convert string to float" in graph_page[graph_page.index('id="match-verdicts"') :]
    visitor = Client().get(f"/forecasts/{forecasts[0].pk}/").content.decode()
    assert "ungradable" in visitor and "could not convert string to float" not in visitor
    staff = Client()
    staff.force_login(UserFactory(username="staffer", is_staff=True))
    assert "could not convert string to float" in staff.get(f"/forecasts/{forecasts[0].pk}/").content.decode()


def test_a_hindsight_graph_the_matcher_cannot_read_leaves_outcome_and_evidence_graded(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A defect injected into reading the hindsight graph: no forecast can have a reasoning score,
    each says why, and every forecast is graded on outcome and evidence all the same."""
    question, forecasts = world(agent)

    def defective(self: Any, *args: Any, **kwargs: Any) -> None:
        raise ValueError("could not convert string to float: '4.644.56'")

    monkeypatch.setattr(guarded.GuardedReferenceIndex, "__init__", defective)
    call_command("regrade", str(question.pk), stdout=io.StringIO())
    grades = [current(f) for f in forecasts]
    assert all(g.brier is not None and g.source_precision is not None for g in grades)
    assert all(g.key_event_recall is None for g in grades)
    assert all("could not read the hindsight graph" in g.details["reasoning_error"] for g in grades)
