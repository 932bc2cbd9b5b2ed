"""The offline builder reads an event's direction from meaning: negation, targets, the question's frame."""

from __future__ import annotations

import datetime as dt

import pytest

from grading.builders.direction import Target, baseline_number, planned_month

BILL = Target.for_question(
    question_type="binary",
    title="Will the Assembly pass the Clean Rivers Bill by June?",
    background="",
    outcome=True,
    options=[],
)


@pytest.mark.parametrize(
    ("text", "direction"),
    [
        ("Court rejects a challenge to the water bill", "Positive"),  # a rejected challenge helps the bill
        ("Court throws out bid to block the bill", "Positive"),
        ("Industry federation loses court fight over the bill", "Positive"),
        ("Committee approves the bill", "Positive"),
        ("Committee rejects the bill", "Negative"),
        ("Committee does not approve the bill", "Negative"),  # negation
        ("Committee fails to approve the bill", "Negative"),
        ("Party threatens to withdraw support for the bill", "Negative"),  # withdrawn support
        ("Minister says bill on track despite delay", "Neutral"),  # the concession does not count
        ("Weather is mild in the capital", "Neutral"),
    ],
)
def test_support_frame_with_targets_and_negation(text: str, direction: str) -> None:
    assert BILL.direction(text) == direction


def test_an_adverse_question_flips_the_sense() -> None:
    delayed = Target.for_question(
        question_type="binary", title="Will the launch be delayed?", background="", outcome=True, options=[]
    )
    assert delayed.direction("Launch delayed by a week") == "Positive"
    assert delayed.direction("Engineers complete final checks") == "Negative"


def test_a_level_question_reads_rises_and_falls() -> None:
    river = Target.for_question(
        question_type="binary", title="Will the river rise above 5.2 metres?", background="", outcome=False, options=[]
    )
    assert river.direction("River rises to 4.6 metres") == "Positive"  # toward YES, whatever the outcome
    assert river.direction("River falls to 3.1 metres") == "Negative"


def test_quantity_direction_is_toward_the_resolved_value() -> None:
    assert baseline_number("The rate has stood at 4.25 percent; the target is 2.5 percent.", 3.75) == 4.25
    assert baseline_number("Kestrel planned about 53 000 Vela 3 deliveries in 2026.", 56721) == 53000
    lower = Target.for_question(
        question_type="quantity", title="What will the policy rate be?", background="The rate stands at 4.25 percent.",
        outcome=3.75, options=[],
    )  # fmt: skip
    assert lower.direction("Inflation falls to 2.1 percent") == "Positive"
    assert lower.direction("Oil prices jump 9 percent") == "Negative"


def test_timeframe_direction_is_toward_the_resolved_period() -> None:
    assert planned_month("It was due to ship in June 2025.") == dt.date(2025, 6, 1)
    later = Target.for_question(
        question_type="timeframe", title="When will it ship?", background="Shipments planned for June 2025.",
        outcome="2025-08", options=[], resolved_start=dt.date(2025, 8, 1),
    )  # fmt: skip
    assert later.direction("Maker delays shipments to the third quarter") == "Positive"
    assert later.direction("Foundry fixes yield problem ahead of schedule") == "Negative"


def test_relation_direction_follows_the_resolved_relations() -> None:
    cooperative = Target.for_question(
        question_type="relation", title="Which relations?", background="", outcome={"relations": {"05": ["057"]}},
        options=[],
    )  # fmt: skip
    assert cooperative.direction("The two sides agree to talks") == "Positive"
    assert cooperative.direction("Drone strike kills four soldiers") == "Negative"


def test_multiple_choice_direction_follows_the_resolved_option() -> None:
    options = ["A negotiated pay deal", "Binding arbitration imposed by the government"]
    target = Target.for_question(
        question_type="multiple_choice", title="How will the strike end?", background="", outcome=options[1],
        options=options,
    )  # fmt: skip
    assert target.direction("Government tables a bill for binding arbitration") == "Positive"
    assert target.direction("Union and employers near a negotiated pay deal") == "Negative"
    assert target.direction("Ships queue outside the harbour") == "Neutral"
