"""Text never stops the matcher: every common way of writing a number is read or ignored, and no
text, whether arbitrary Unicode or any item of the shipped news archive, makes it raise."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from grading.scoring.guarded import GuardedReferenceIndex, guarded_matcher_settings, pair_verdict
from grading.scoring.matching import Event
from grading.scoring.numbers import read_numbers
from grading.scoring.polarity import VERDICTS, Claims
from tests.grading.realworld import shipped_archive

D = dt.date(2026, 3, 1)


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Gold rises to US$4,644.56 per ounce", (4644.56,)),
        ("Oil climbs to $1,234.56 a tonne", (1234.56,)),
        ("Le prix atteint 1.234,56 euros", (1234.56,)),
        ("Inflation rises to 12.5%", (12.5,)),
        ("Inflation steigt auf 12,5 Prozent", (12.5,)),
        ("The deal is worth $1.2bn", (1.2,)),
        ("The deal is worth 1.2 billion dollars", (1.2,)),
        ("Between 10\u201312 people are injured", (10.0, 12.0)),  # an en dash
        ("Between 10-12 people are injured", (10.0, 12.0)),
        ("A fine of 1,234,567.89 francs", (1234567.89,)),
        ("1.234.567 Einwohner", (1234567.0,)),
        ("1\u202f234\u202f567 habitants", (1234567.0,)),
        ("About 53 000 deliveries", (53000.0,)),
        ("In 2024 100 people died", (100.0, 2024.0)),
        ("Markets close on 12.05.2024", ()),  # a date is no quantity
        ("Versions 3.14.15 and 1,2,3", ()),
        ("Sales reach 1,234 units in 2026.", (1234.0, 2026.0)),
        ("٤٥ قتيلا", (45.0,)),
        ("9" * 400, ()),  # too large for a float: no number, no error
    ],
)
def test_every_common_number_form_is_read_or_ignored(text: str, numbers: tuple[float, ...]) -> None:
    assert read_numbers(text) == numbers


def verdict(reference: str, forecast: str) -> str:
    index = GuardedReferenceIndex([Event("r", reference, date=D, magnitude=1, confidence=1, has_impact=True)])
    result = index.score([Event("f", forecast, date=D)])
    return result.verdicts[0][3] if result.verdicts else "no candidate"


def test_prices_with_thousands_and_decimals_are_compared() -> None:
    reference = "Gold rises to a record US$4,644.56 per ounce"
    assert verdict(reference, "Gold rises to a record US$4,644.56 per ounce") == "matched"
    assert verdict(reference, "Gold rises to a record 4.644,56 US dollars per ounce") == "matched"
    assert verdict(reference, "Gold rises to a record US$2,322.28 per ounce") == "different quantity"
    assert verdict("Oil climbs to $1,234.56 a tonne", "The oil price climbs to $1,234.56 per tonne") == "matched"


# Arbitrary Unicode (lone surrogates included: JSON can carry them) and the characters numbers are
# written with, so that runs of digits and separators come up often.
TEXT = st.text(
    st.one_of(
        st.characters(),
        st.sampled_from("0123456789.,%$€£-\u2013\u00a0\u202f\u2009 ٤٥"),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    ),
    max_size=120,
)
WORDS = st.lists(
    st.sampled_from(["Oil", "prices", "rise", "fall", "not", "$1,234.56", "4.644,56", "12.5%", "Senate", "approves"])
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forecast=st.one_of(TEXT, WORDS.map(" ".join)), reference=st.one_of(TEXT, WORDS.map(" ".join)))
def test_any_text_gets_a_verdict(forecast: str, reference: str) -> None:
    assert all(isinstance(n, float) for n in read_numbers(forecast))
    Claims(forecast)
    assert pair_verdict(forecast, reference, forecast_title=forecast, reference_title=reference) in VERDICTS
    assert pair_verdict(forecast, reference) in VERDICTS


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(  # a lone surrogate in a text the model reads
    reference=[("Oil prices rise sharply in Europe", "")],
    forecasts=[[("Crude costs climb steeply across the continent \ud800", "")]],
)
@given(
    reference=st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=3),
    forecasts=st.lists(st.lists(st.tuples(TEXT, TEXT), max_size=3), min_size=1, max_size=3),
)
def test_any_text_is_scored_by_the_default_matcher(
    reference: list[tuple[str, str]], forecasts: list[list[tuple[str, str]]]
) -> None:
    """Whole graphs of arbitrary text, embeddings included (every pair is inside the date window)."""
    index = GuardedReferenceIndex(
        [Event(f"r{i}", t, d, D, magnitude=1, confidence=1, has_impact=True) for i, (t, d) in enumerate(reference)],
        guarded_matcher_settings(),
        question="Will anything happen?",
    )
    results = index.score_many([[Event(f"f{i}", t, d, D) for i, (t, d) in enumerate(f)] for f in forecasts])
    assert [r.n_forecast_events for r in results] == [len(f) for f in forecasts]
    assert all(v[3] in VERDICTS for r in results for v in r.verdicts)


def test_every_item_of_the_shipped_archive_is_read_and_matches_itself_restated() -> None:
    """All 12,761 items: each one's numbers are read, and each item restated as outlets and agents
    restate an event (the hindsight event's headline marked "Update:", the forecast repeating its
    title in a description with one sentence more) is matched, never refused."""
    items = shipped_archive()
    assert len(items) > 12_000
    priced = [i for i in items if any(n >= 1000 and n != int(n) for n in read_numbers(i["text"]))]
    assert len(priced) >= 6  # the gold and stock-index records and court sums that used to raise
    refused = []
    for item in items:
        title, text = item["title"], item["text"]
        verdict = pair_verdict(
            f"{title} {text} The report was confirmed.",
            f"Update: {title} {text}",
            forecast_title=title,
            reference_title=f"Update: {title}",
        )
        if verdict != "matched":
            refused.append((item["id"], verdict))
    assert refused == []


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(range(12_000)), min_size=2, max_size=8, unique=True))
def test_real_archive_items_are_scored_against_each_other(picks: list[int]) -> None:
    items = [shipped_archive()[i] for i in picks]
    half = len(items) // 2
    index = GuardedReferenceIndex(
        [Event(i["id"], i["title"], i["text"], D, magnitude=1, confidence=1, has_impact=True) for i in items[:half]],
        question=items[0]["title"],
    )
    # Each forecast: another item, and a reference item restated (it matches, whatever its numbers).
    forecast = [Event("other", i["title"], i["text"], D) for i in items[half:]]
    result = index.score([*forecast, Event("same", items[0]["title"], items[0]["text"], D)])
    assert ("same", items[0]["id"]) in {(m.forecast_id, m.reference_id) for m in result.matches}
