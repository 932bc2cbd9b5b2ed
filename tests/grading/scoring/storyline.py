"""A hand-written ceasefire storyline (invented countries, so no model has read it) and four forecast
graphs on its question: the real chain in other words, the same key events negated on the same
dates, one stuffed title repeated on six dates, and one-word events on the right dates."""

from __future__ import annotations

import datetime as dt

from grading.scoring.matching import Event

QUESTION = "Will Drevia and Kastor sign a ceasefire agreement by 30 June 2026?"
START = dt.date(2026, 5, 1)


def day(n: int) -> dt.date:
    return START + dt.timedelta(days=n)


def _ref(id_: str, title: str, n: int, magnitude: float = 0.0, confidence: float = 0.9) -> Event:
    return Event(id=id_, title=title, date=day(n), magnitude=magnitude, confidence=confidence, has_impact=magnitude > 0)


REFERENCE = [
    _ref("r1", "Shelling along the Varna river front kills twelve civilians", 0, 0.4),
    _ref("r2", "The United Nations appoints Ilse Maren as special envoy to mediate between Drevia and Kastor", 3, 0.8),
    _ref("r3", "Drevia and Kastor agree to hold talks in Solbad", 8, 0.7),
    _ref("r4", "Negotiators in Solbad complete a draft ceasefire agreement", 15, 0.9),
    _ref("r5", "The Drevian parliament approves the draft ceasefire agreement", 21, 0.9),
    _ref("r6", "Kastor's defence council endorses the draft agreement", 23, 0.6),
    _ref("r7", "Drevia and Kastor sign the ceasefire agreement in Solbad", 27, 1.0),
    _ref("r8", "International monitors deploy along the Varna river line", 33, 0.5),
    _ref("r9", "Fuel prices in Drevia rise after the border closes", 5),
    _ref("r10", "Kastor's president meets party leaders in the capital", 12),
    Event(id="out", title="Drevia and Kastor sign a ceasefire agreement", date=day(27), is_outcome=True),
]

# The real chain in plain other words, on the right dates.
PARAPHRASED = [
    Event("p1", "UN names a mediator for the Drevia-Kastor conflict", date=day(4)),
    Event("p2", "The two governments say they will negotiate in Solbad", date=day(9)),
    Event("p3", "Mediators finish writing the truce text", date=day(16)),
    Event("p4", "Drevia's lawmakers vote in favour of the truce deal", date=day(21)),
    Event("p5", "Both sides put their signatures to the truce in Solbad", date=day(28)),
]
# An honest miss: plausible events that did not happen.
HONEST_MISS = [
    Event("m1", "Fighting escalates around the capital of Kastor", date=day(6)),
    Event("m2", "Drevia expels Kastor's ambassador", date=day(14)),
    Event("m3", "A regional summit condemns the shelling", date=day(22)),
]
# The same key events negated, same dates.
NEGATED = [
    Event("n1", "The Drevian parliament rejects the draft ceasefire agreement", date=day(21)),
    Event("n2", "Drevia and Kastor do not sign the ceasefire agreement in Solbad", date=day(27)),
    Event("n3", "Negotiators in Solbad fail to complete a draft ceasefire agreement", date=day(15)),
    Event("n4", "International monitors do not deploy along the Varna river line", date=day(33)),
    Event("n5", "The United Nations refuses to appoint an envoy between Drevia and Kastor", date=day(3)),
]
# One title stuffed with every key word, repeated on six dates.
STUFFED_TITLE = (
    "Drevia Kastor ceasefire agreement sign draft parliament approves envoy United Nations talks Solbad "
    "monitors deploy Varna river negotiators complete endorse defence council"
)
STUFFED = [Event(f"s{i}", STUFFED_TITLE, date=day(n)) for i, n in enumerate((3, 8, 15, 21, 23, 27))]
# One-word events on the right dates.
ONE_WORD = [
    Event("w1", "envoy", date=day(3)),
    Event("w2", "talks", date=day(8)),
    Event("w3", "draft", date=day(15)),
    Event("w4", "parliament", date=day(21)),
    Event("w5", "ceasefire", date=day(27)),
]

GRAPHS = {
    "paraphrased": PARAPHRASED,
    "honest miss": HONEST_MISS,
    "negated": NEGATED,
    "stuffed": STUFFED,
    "one-word": ONE_WORD,
}
