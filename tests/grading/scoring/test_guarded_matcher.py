"""The guarded matcher (the default): a pair matches only when both sentences claim the same thing,
a paraphrase or a title in another language still matches, stuffing and repetition earn nothing,
and key events are chosen by relevance to the question."""

from __future__ import annotations

import datetime as dt

import pytest

from grading.benchmarks import CATEGORIES, load_event_pairs
from grading.scoring.guarded import GUARDED_MATCHER_VERSION, guarded_matcher_settings
from grading.scoring.matchers import MATCHER_SETTINGS, build_reference_index
from grading.scoring.matching import Event, select_key_events
from tests.grading.scoring.storyline import GRAPHS, QUESTION, REFERENCE

D = dt.date(2026, 3, 1)
GUARDED = guarded_matcher_settings()


def verdict_of(reference: str, forecast: str) -> tuple[bool, list[str]]:
    index = build_reference_index([Event("r", reference, date=D, magnitude=1, confidence=1, has_impact=True)], GUARDED)
    result = index.score([Event("f", forecast, date=D)])
    return bool(result.matches), [v[3] for v in result.verdicts]


@pytest.mark.parametrize(
    ("reference", "forecast", "verdicts"),
    [
        ("Oil prices go up", "Oil prices go down", {"opposite direction", "different event"}),
        ("The union approves the contract", "The union rejects the contract", {"opposite direction", "different event"}),
        ("Brazil wins the World Cup final against France", "Brazil loses the World Cup final against France", {"opposite direction", "different event"}),
        ("The prime minister resigns", "The prime minister refuses to resign", {"negated", "different event"}),
        ("Israel and Hamas sign the ceasefire deal in Doha", "Israel and Hamas do not sign the ceasefire deal in Doha", {"negated"}),
        ("Apple sues Samsung over patents", "Samsung sues Apple over patents", {"swapped roles"}),
        ("South Korea's KOSPI index rises by 18%", "South Korea's KOSPI index rises by 2%", {"different quantity"}),
        ("Texaco files for Chapter 11 bankruptcy protection", "Continental Airlines files for Chapter 11 bankruptcy protection", {"other actor", "different event"}),
    ],
)  # fmt: skip
def test_a_similar_sentence_that_claims_otherwise_does_not_match(
    reference: str, forecast: str, verdicts: set[str]
) -> None:
    matched, given = verdict_of(reference, forecast)
    assert not matched
    assert len(given) == 1 and given[0] in verdicts


@pytest.mark.parametrize(
    "forecast",
    [
        "Texaco seeks court protection from its creditors",  # no shared word but the name
        "Texaco beantragt Gläubigerschutz nach Chapter 11",  # German
        "Texaco se declara en quiebra y se acoge al Capítulo 11",  # Spanish
    ],
)
def test_a_paraphrase_or_another_language_matches(forecast: str) -> None:
    matched, verdicts = verdict_of("Texaco files for Chapter 11 bankruptcy protection", forecast)
    assert matched and verdicts == ["matched"]


def test_a_negation_in_another_language_does_not_match() -> None:
    reference = "Trump signs an executive order directing the U.S. to withdraw from the World Health Organization."
    assert verdict_of(
        reference, "Trump unterzeichnet ein Dekret zum Austritt der USA aus der Weltgesundheitsorganisation"
    )[0]
    negated = "Trump unterzeichnet kein Dekret zum Austritt der USA aus der Weltgesundheitsorganisation"
    assert verdict_of(reference, negated) == (False, ["negated"])


def test_stuffed_titles_and_one_word_events_match_nothing() -> None:
    reference = "Drevia and Kastor sign the ceasefire agreement in Solbad"
    stuffed = (
        "Drevia Kastor ceasefire agreement sign draft parliament approves envoy talks Solbad monitors deploy river"
    )
    assert verdict_of(reference, stuffed) == (False, ["stuffed"])
    assert verdict_of(reference, "ceasefire")[0] is False


def test_a_title_repeated_on_several_dates_matches_once() -> None:
    reference = [
        Event("a", "Parliament approves the budget bill", date=D, magnitude=1, confidence=1, has_impact=True),
        Event("b", "Senate approves the budget bill", date=D + dt.timedelta(days=3), magnitude=1, confidence=1, has_impact=True),
    ]  # fmt: skip
    forecast = [Event(f"f{i}", "Parliament approves the budget bill", date=D + dt.timedelta(days=i)) for i in range(4)]
    result = build_reference_index(reference, GUARDED).score(forecast)
    assert [(m.forecast_id, m.reference_id) for m in result.matches] == [("f0", "a")]
    assert [v for v in result.verdicts if v[3] == "matched"] == [
        v for v in result.verdicts if v[0] == "f0" and v[1] == "a"
    ]
    assert result.ker == 0.5


def test_the_same_claim_is_never_refused_because_a_description_adds_a_sentence() -> None:
    """The demo's merger question: the reference agent's events are the hindsight events' titles word
    for word, each description repeating its title and adding a sentence that names both firms again
    (which read as "swapped roles" before). Each matches its own event, not another of the deal."""
    a, b = "Solenne Energy", "Everin Aerospace"
    day = dt.date(2026, 9, 7)
    hindsight = [
        ("1", f"Update: {a} agrees to buy {b} in all-share deal", 0),
        ("2", f"Galdria Competition Bureau opens review of {a} takeover of {b}", 4),
        ("3", f"{b} shareholders approve {a} takeover", 6),
        ("4", f"Unions oppose {a} plan to close {b} plants", 7),
        ("5", f"Update: {a} refuses to sell overlapping {b} brands", 8),
        ("6", f"Rival Pellucid Energy files complaint against {a} {b} merger", 15),
    ]
    reference = [
        Event(key, title, title.removeprefix("Update: ") + ".", day + dt.timedelta(days=days), 0.8, 0.8, True)
        for key, title, days in hindsight
    ]
    forecast = [
        (f"{a} agrees to buy {b} in all-share deal", f"{a} and {b} boards agreed terms.", 0),
        (f"Galdria Competition Bureau opens review of {a} takeover of {b}", "Galdria Competition Bureau began its merger review.", 4),
        (f"{b} shareholders approve {a} takeover", f"{b} investors voted on the offer from {a}.", 6),
        (f"{a} refuses to sell overlapping {b} brands", f"Remedies for the {a} {b} merger were discussed.", 8),
    ]  # fmt: skip
    events = [
        Event(f"e{i}", title, f"{title}. {extra}", day + dt.timedelta(days=days))
        for i, (title, extra, days) in enumerate(forecast, start=1)
    ]
    result = build_reference_index(
        reference, GUARDED, question=f"Will the bureau approve {a}'s takeover of {b}?"
    ).score(events)
    assert {m.forecast_id: m.reference_id for m in result.matches} == {"e1": "1", "e2": "2", "e3": "3", "e4": "5"}
    verdicts = {(f, r): v for f, r, _, v in result.verdicts}
    assert [verdicts[pair] for pair in (("e1", "1"), ("e2", "2"), ("e3", "3"), ("e4", "5"))] == ["matched"] * 4
    assert "swapped roles" not in verdicts.values()
    # The roles really swapped are still refused by the event they swap, with the same descriptions.
    swapped = Event("s", f"{b} agrees to buy {a} in all-share deal", f"{a} and {b} boards agreed terms.", day)
    assert build_reference_index(reference[:1], GUARDED).score([swapped]).verdicts[0][3] == "swapped roles"


def test_the_four_graphs_of_the_storyline() -> None:
    index = build_reference_index(REFERENCE, GUARDED, question=QUESTION)
    ker = {name: index.score(events).ker for name, events in GRAPHS.items()}
    assert ker["paraphrased"] is not None and ker["honest miss"] is not None
    assert ker["paraphrased"] >= 0.6 > ker["honest miss"]
    assert ker["negated"] == ker["stuffed"] == ker["one-word"] == 0.0
    # The previous default rewarded the negated and stuffed graphs.
    hybrid = build_reference_index(REFERENCE, MATCHER_SETTINGS["hybrid"]())
    assert hybrid.score(GRAPHS["negated"]).ker == hybrid.score(GRAPHS["stuffed"]).ker == 0.8


def test_key_events_tie_on_relevance_and_skip_another_firms_story() -> None:
    def ev(id_: str, title: str, days: int) -> Event:
        return Event(id_, title, date=D + dt.timedelta(days=days), magnitude=0.8, confidence=1.0, has_impact=True)

    events = [
        ev("oil", "Oil prices fall", -3),
        ev("judgment", "Texaco loses appeal on Pennzoil judgment", 0),
        ev("other", "Continental Airlines files for Chapter 11 bankruptcy protection", 0),
        ev("bond", "Court orders Texaco to post a bond", 1),
        Event("out", "Texaco files for Chapter 11", date=D + dt.timedelta(days=9), is_outcome=True),
    ]
    assert [e.id for e in select_key_events(events, 3)] == ["oil", "judgment", "other"]  # by date
    about = "Will Texaco file for bankruptcy? Texaco files for Chapter 11"
    assert [e.id for e in select_key_events(events, 3, about=about)] == ["judgment", "bond", "oil"]
    index = build_reference_index(events, GUARDED, question="Will Texaco file for bankruptcy?")
    assert "other" not in {e.id for e in index.key_events}


def test_settings_are_named_and_versioned() -> None:
    assert (GUARDED.matcher, GUARDED.version) == ("guarded", GUARDED_MATCHER_VERSION)
    assert MATCHER_SETTINGS["guarded"]() == GUARDED


def test_the_benchmark_is_labelled_and_covers_every_category() -> None:
    pairs = load_event_pairs()
    assert len(pairs) >= 400
    assert {p["category"] for p in pairs} == set(CATEGORIES)
    assert len({p["id"] for p in pairs}) == len(pairs)
    assert all(p["sources"] for p in pairs)


def test_the_same_title_matches_when_the_description_adds_a_sentence() -> None:
    title = "Solenne Energy agrees to buy Everin Aerospace in all-share deal"
    index = build_reference_index([Event("r", title, date=D, magnitude=1, confidence=1, has_impact=True)], GUARDED)
    result = index.score([Event("f", title, "Solenne Energy and Everin Aerospace boards agreed terms.", date=D)])
    assert [v[3] for v in result.verdicts] == ["matched"] and result.matches
