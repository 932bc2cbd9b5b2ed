"""What two event sentences claim about direction, polarity, roles and quantities, so a matcher
can refuse a pair whose words agree but whose claims do not (pure; no Django).

Every rule reads the project's tokens (:func:`ingestion.text.tokenize` without dropping stop words)
and small word lists; none needs a model. :func:`verdict` compares two texts and answers
``"matched"`` (nothing disagrees) or the reason the pair is refused:

``negated``
    One side carries a negation cue (*not*, *never*, *no*, *fails to*, *refuses to*, *rules out*
    ...) and the other does not: "signs the ceasefire" vs "does not sign the ceasefire".
``opposite direction``
    Both sides use a word of the same axis with opposite signs (rise/fall, approve/reject,
    win/lose, sign/veto, resign/stay, impose/lift, join/leave ...), after each side's negation is
    applied: "prices go up" vs "prices go down"; "rejects" vs "approves".
``swapped roles``
    Both sides name the same two actors around an action, in the opposite order, with neither pair
    joined by *and*: "Apple sues Samsung" vs "Samsung sues Apple".
``different quantity``
    Both sides state numbers and share none of them: "rises 18%" vs "rises 2%".

The word lists are English; a sentence in another language carries none of these cues, so only
the similarity decides for it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ingestion.text import STOPWORDS, tokenize

__all__ = ["VERDICTS", "Claims", "claims", "verdict"]

# Verdicts a matched or refused pair can carry (the forecast graph page shows them).
VERDICTS: Final = (
    "matched",
    "negated",
    "opposite direction",
    "swapped roles",
    "different quantity",
    "stuffed",
    "too vague",
    "duplicate",
)

# Negation cues: any of these says the event did not (or will not) happen, and flips the claim.
_NEGATION: Final = frozenset(
    "not no never nor neither without cannot cant dont doesnt didnt wont isnt arent wasnt werent hasnt havent "
    "fails fail failed failing refuses refuse refused refusing denies deny denied cancel cancels cancelled "
    "canceled scrap scraps scrapped postpone postpones postponed delay delays delayed halt halts halted "
    "suspend suspends suspended abandon abandons abandoned collapse collapses collapsed".split()
)
# Two-word negation cues (tokens joined by a space).
_NEGATION_PAIRS: Final = frozenset(
    {"rules out", "ruled out", "falls short", "fell short", "no longer", "walks away", "break off", "breaks off",
     "break down", "breaks down", "calls off", "called off"}
)  # fmt: skip

# Axis -> (words with sign +1, words with sign -1[, words with sign 0]). Words are the tokenizer's
# (lower case, no apostrophes); every inflected form is listed, which keeps the rule exact and cheap.
# A sentence's sign on an axis is that of its last word on the axis ("signs an order to withdraw"
# is a withdrawal).
_AXES: Final[dict[str, tuple[str, ...]]] = {
    "level": (
        "rise rises rising rose risen up climb climbs climbed climbing increase increases increased increasing "
        "surge surges surged soar soars soared jump jumps jumped gain gains gained rally rallies rallied higher "
        "highest exceed exceeds exceeded top tops topped above raise raises raised raising hike hikes hiked "
        "accelerate accelerates accelerated grow grows grew growing hire hires hired",
        "fall falls fell falling fallen down drop drops dropped dropping decline declines declined declining "
        "plunge plunges plunged slump slumps slumped tumble tumbles tumbled sink sinks sank lower lowest below "
        "cut cuts cutting slash slashes slashed loss losses slow slows slowed ease eases eased shrink shrinks "
        "layoff layoffs lay",
        "unchanged steady",
    ),
    "assent": (
        "approve approves approved approving pass passes passed ratify ratifies ratified adopt adopts adopted "
        "confirm confirms confirmed endorse endorses endorsed accept accepts accepted uphold upholds upheld "
        "agree agrees agreed sign signs signed signing join joins joined rejoin rejoins rejoined enter enters "
        "entered resume resumes resumed reach reaches reached complete completes completed begin begins began "
        "start starts started",
        "reject rejects rejected rejecting veto vetoes vetoed vetoing overturn overturns overturned block blocks "
        "blocked oppose opposes opposed withdraw withdraws withdrew withdrawal leave leaves leaving exit exits "
        "pull pulls",
    ),
    "contest": (
        "win wins won winning beat beats defeat defeats defeated victory triumph triumphs retain retains keep "
        "keeps elected elect",
        "lose loses lost losing last",
    ),
    "office": (
        "resign resigns resigned resigning quit quits step steps stepped ousted",
        "stay stays stayed remain remains remained survive survives survived",
    ),
    "measure": (
        "impose imposes imposed introduce introduces introduced declare declares declared ban bans banned "
        "arrest arrests arrested detain detains detained deploy deploys deployed advance advances advanced",
        "lift lifts lifted lifting end ends ended terminate terminates terminated remove removes removed "
        "release releases released free frees freed",
    ),
}
_AXIS_SIGN: Final[dict[str, tuple[str, int]]] = {}
for _axis, _words in _AXES.items():
    for _sign, _text in zip((1, -1, 0), _words, strict=False):
        for _word in _text.split():
            _AXIS_SIGN.setdefault(_word, (_axis, _sign))

# Words that join two actors into one side ("Israel and Hamas sign").
_JOINERS: Final = frozenset({"and", "or", "the", "of"})
# A number; a comma before exactly three digits groups thousands, any other is a decimal comma.
_NUMBER: Final = re.compile(r"\d+(?:,\d{3}(?!\d))*(?:[.,]\d+)?")
_NUMBER_WORDS: Final = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "fifteen": "15",
    "twenty": "20", "thirty": "30", "fifty": "50", "hundred": "100",
}  # fmt: skip
# A capitalised word (a name, or a sentence's first word, which the stop-word filter mostly removes).
_NAME: Final = re.compile(r"\b[A-Z][A-Za-z]+\b")


class Claims:
    """The cues of one sentence (computed once per distinct text)."""

    __slots__ = ("axes", "contradictory", "names", "negated", "numbers", "tokens")

    def __init__(self, text: str) -> None:
        tokens = tokenize(text, drop_stopwords=False)
        self.tokens: tuple[str, ...] = tuple(tokens)
        pairs = {f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)}
        flips = sum(1 for t in tokens if t in _NEGATION) + len(pairs & _NEGATION_PAIRS)
        self.negated: bool = flips % 2 == 1
        axes: dict[str, int] = {}
        seen: set[tuple[str, int]] = set()
        for token in tokens:
            hit = _AXIS_SIGN.get(token)
            if hit is not None:
                axes[hit[0]] = hit[1]
                seen.add(hit)
        self.axes: dict[str, int] = axes
        # Both directions of one axis in a sentence of many words: a list of key words, not a claim.
        self.contradictory: bool = len(seen) > len(axes) and len(tokens) > 12
        numbers = {_plain_number(n) for n in _NUMBER.findall(text)}
        numbers |= {_NUMBER_WORDS[t] for t in tokens if t in _NUMBER_WORDS}
        self.numbers: frozenset[str] = frozenset(numbers)
        # Names in order of appearance, with the index of the token stream where each stands.
        self.names: tuple[str, ...] = tuple(
            name for m in _NAME.finditer(text) if (name := m.group(0).lower()) not in STOPWORDS
        )


def _plain_number(text: str) -> str:
    head, _, tail = text.rpartition(",")
    if head and len(tail) != 3:  # a decimal comma: "1,8" is 1.8
        text = f"{head}.{tail}"
    return text.replace(",", "")


def claims(text: str) -> Claims:
    return Claims(text)


def _order_flipped(a: Sequence[str], b: Sequence[str], tokens_a: Sequence[str], tokens_b: Sequence[str]) -> bool:
    shared = [n for n in dict.fromkeys(a) if n in b]
    if len(shared) < 2:
        return False
    first, second = shared[0], shared[-1]
    if b.index(first) < b.index(second):
        return False
    return not (_joined(tokens_a, first, second) or _joined(tokens_b, first, second))


def _joined(tokens: Sequence[str], x: str, y: str) -> bool:
    """True when ``x`` and ``y`` stand on the same side of the sentence ("x and y", "between x and y")."""
    try:
        i, j = tokens.index(x), tokens.index(y)
    except ValueError:
        return True  # a name split by the tokenizer: do not claim a swap
    between = tokens[min(i, j) + 1 : max(i, j)]
    return len(between) <= 2 and all(t in _JOINERS for t in between)


def verdict(forecast: Claims, reference: Claims) -> str:
    """``"matched"`` when nothing disagrees, else the first disagreement (module docstring)."""
    if forecast.contradictory:
        return "stuffed"
    # Opposite direction on a shared axis, each side's negation applied.
    flip_f = -1 if forecast.negated else 1
    flip_r = -1 if reference.negated else 1
    for axis, sign in forecast.axes.items():
        other = reference.axes.get(axis)
        if other is not None and sign * flip_f != other * flip_r:
            if sign != other:
                return "opposite direction"
            return "negated"
    if forecast.negated != reference.negated:
        return "negated"
    if _order_flipped(forecast.names, reference.names, forecast.tokens, reference.tokens):
        return "swapped roles"
    if forecast.numbers and reference.numbers and not (forecast.numbers & reference.numbers):
        return "different quantity"
    return "matched"
