"""Direction of an event toward the resolved outcome, read from meaning (pure; no Django).

Text is split into clauses (at punctuation; a clause after *despite* is concessive and ignored),
clauses into Snowball stems. Within a clause:

* **Cues** carry a sign in the question's *frame* (below): in the default frame *approve*, *pass*,
  *agree* count +1 and *reject*, *delay*, *challenge* -1.
* **Targets.** A signed verb followed within four words by a signed object composes with it:
  "rejects the challenge" is (-1) x (-1) = +1, "withdraws support" (-1) x (+1) = -1, "throws out a
  bid to block the bill" +1. The object is then not counted again.
* **Negation.** *not*, *no*, *never*, *without*, *cannot* or *fails to* within two words before a
  cue flips it.

The **frame** is chosen from the question: *up/down* for questions about a level rising (or
falling, flipped), the same plus *support/oppose* and *early/late* for quantities, *late/early* for timeframes, *cooperation/conflict* for
relations, and *support/oppose* otherwise, flipped when the question itself asks about an adverse
event ("Will the launch be delayed?"). An event's score is the sum over its clauses; its sign,
turned toward the resolved outcome (``alignment``), gives Positive or Negative; cues of both signs
that cancel give Mixed; no cue gives Neutral.

Binary questions: Positive pushes toward YES (WorldReasoner's convention). Other types: Positive
pushes toward the resolved value: above the baseline named in the background (quantities), later or
earlier than the planned period (timeframes), cooperative or conflictual relations (by the first
CAMEO codes of the outcome), the resolved option (multiple choice: the event names its words, signed
by the event's own support/oppose sense), or the gold events (open-ended: naming their words).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from grading.builders.relevance import MONTH_NAMES, stem_word, stems
from grading.scoring.numbers import read_numbers
from ingestion.text import STOPWORDS

_CLAUSE = re.compile(r"[,;:.!?()\u2014\u2013]| - | and ")
_NEGATORS = frozenset({"not", "no", "never", "without", "cannot", "nor"})
_OBJECT_REACH = 4
_FAILS_TO = re.compile(r"\bfail(?:s|ed)? to\b", re.IGNORECASE)
# Words that say what follows is opposed: "in protest at water cuts", "relief from the bond", "to
# avert a strike". The cues after them in the clause count against what they name.
_OPPOSED, _RELIEVED = "opposedto", "relievedfrom"
_OPPOSING = re.compile(
    r"\b(?:in protest (?:at|against|over|of)|protests? (?:against|at|over)|protesting(?: against)?|opposing|"
    r"opposed to|against|an end to)\b",
    re.IGNORECASE,
)
# Relief from something: the subject helps itself ("petitions for relief from the bond").
_RELIEVING = re.compile(
    r"\b(?:relief from|reprieve from|protection from|exemption from|to (?:avoid|avert|prevent|stave off|ward off))\b",
    re.IGNORECASE,
)
_FALLBACK = {_OPPOSED: "oppos", _RELIEVED: "relief"}


def _set(text: str) -> frozenset[str]:
    return frozenset(stems(text))


# Support / oppose (the default frame). Stems of the words.
SUPPORT = _set(
    """approve approval pass passes agree agreed agreement back backs backing support supports sign signed
    secure secures win wins won clear clears accept accepts ratify adopt adopts restore restores hail hails
    endorse endorses recommend recommends grant grants lift lifts resume resumes release releases complete
    completes finish fix fixes welcome welcomes allow allows confirm confirms breakthrough deal compromise
    success succeed reach reaches progress boost survive survives favour majority exemption cleared relief
    reprieve rescue bailout"""
)
OPPOSE = _set(
    """reject rejects fail fails failure delay delays block blocks oppose opposes opposition threaten threatens
    threat challenge challenges withdraw withdraws stall stalls halt halts suspend suspends postpone collapse
    collapses veto deny denies dismiss dismisses refuse refuses cancel abandon lose loses lost warn warns
    attack attacks sue lawsuit strike strikes protest protests doubt doubts revolt filibuster balk balks
    obstacle setback problem problems shortage concern concerns risk crisis fight complaint boycott ban
    deadlock pause pauses questions"""
)
# Signed verbs that compose with a signed object ("rejects the challenge").
VERBS = _set(
    """reject rejects dismiss dismisses overturn overturns lose loses lost defeat defeats overcome end ends lift
    lifts resolve resolves settle settles survive survives win wins won beat beats block blocks drop drops
    withdraw withdraws clear clears face faces pull pulls cut cuts ease eases remove removes"""
) | frozenset({"throw_out"})
VERB_SIGN = {s: (1 if s in SUPPORT or s in _set("face faces") else -1) for s in VERBS}
PHRASES: dict[tuple[str, ...], str] = {
    ("throw", "out"): "throw_out",
    ("pull", "back"): "pull_back",
    ("push", "back"): "push_back",
    ("hold", "back"): "hold_back",
    ("on", "track"): "on_track",
    ("ahead", "of", "schedul"): "ahead_of_schedule",
    ("behind", "schedul"): "behind_schedule",
    ("call", "off"): "call_off",
    ("step", "in"): "step_in",
}
OPPOSE = OPPOSE | frozenset({"call_off", "push_back"})
SUPPORT = SUPPORT | frozenset({"step_in"})

UP = _set(
    """rise rises rose climb climbs surge surges jump jumps soar soars increase increases higher high record
    above exceed exceeds gain gains grow grows expand expands accelerate up hike hikes raise raises rain
    rains storm downpour flood floods warning strengthen strengthens"""
)
DOWN = _set(
    """fall falls fell drop drops decline declines slide slides slip slips lower low below cut cuts ease eases
    recede recedes shrink shrinks contract contracts contraction slow slows weaken weakens down plunge
    tumble spare spares spared escape escapes dry veer veers"""
) | frozenset({"hold_back"})
LATE = _set(
    """delay delays postpone postpones setback halt halts suspend suspends strike strikes shortage problem
    problems defect late later fail fails slip slips stall stalls"""
) | frozenset({"push_back", "behind_schedule"})
EARLY = _set(
    """early earlier fix fixes complete completes finish finishes secure secures pass passes begin begins
    start starts approve approves qualify qualification ready"""
) | frozenset({"on_track", "ahead_of_schedule"})
COOPERATE = _set(
    """talk talks negotiate negotiation negotiations mediate mediation agree agrees agreement ceasefire truce
    release releases aid visit visits host hosts sign signs welcome welcomes peace dialogue goodwill deal
    accord meet meets offer offers"""
) | frozenset({"pull_back", "step_in"})
CONFLICT = _set(
    """shell shelling strike strikes kill kills attack attacks accuse accuses recall recalls sanction sanctions
    threaten threatens clash clashes fire detain detains protest protests drone condemn condemns expel expels
    mobilise escalate escalates fight fighting wound wounded dead deadly"""
)
# A question that asks whether a court convicts: the prosecution's steps push toward Yes, the
# defence's wins toward No ("the trial opens", "house arrest" toward a conviction; "acquitted",
# "charges dropped" away from it). The same words read otherwise on other questions.
PROSECUTION_QUESTION = _set("convict convicted conviction guilty sentence sentenced prosecute indict imprison jail")
PROSECUTE = _set(
    """charge charged charges indict indicted indictment defendant defendants trial prosecutor prosecutors
    accuse accused arrest arrested custody detain detained convict convicts convicted conviction guilty
    sentence sentenced sentences verdict ankle bracelet monitor prison jailed imprisoned"""
)
DEFEND = _set(
    """acquit acquits acquitted acquittal dismiss dismisses dismissed overturn overturns overturned annul annuls
    annulled innocent pardon pardons pardoned release releases released drop drops dropped exonerate
    exonerated"""
)
# A question that asks whether something bad happens: what helps its subject pushes toward No.
ADVERSE_QUESTION = _set(
    """delay delayed cancel cancelled block blocked fail reject rejected collapse strike ban bankruptcy bankrupt
    insolvency insolvent default liquidation liquidate chapter resign resignation impeach oust ousted shutdown
    cease closure close closes layoffs recession lose defeat defeated"""
)


@dataclass(frozen=True)
class Frame:
    """Cue words read in one sense: ``plus`` pushes toward what the question asks, ``minus`` away."""

    name: str
    plus: frozenset[str]
    minus: frozenset[str]
    flip: bool = False


def _clauses(text: str) -> list[list[str]]:
    """Each clause's stems, with phrases joined, negators kept and stop words dropped."""
    clauses: list[list[str]] = []
    text = _RELIEVING.sub(f" {_RELIEVED} ", _OPPOSING.sub(f" {_OPPOSED} ", _FAILS_TO.sub(" not ", text)))
    for part in _CLAUSE.split(text):
        raw = re.findall(r"[a-z0-9']+", part.lower())
        if "despite" in raw:
            raw = raw[: raw.index("despite")]
        stemmed = [stem_word(w) for w in raw]
        words: list[str] = []
        i = 0
        while i < len(raw):
            for phrase, name in PHRASES.items():
                if tuple(stemmed[i : i + len(phrase)]) == phrase:
                    words.append(name)
                    i += len(phrase)
                    break
            else:
                if raw[i] in _NEGATORS or raw[i] in _FALLBACK:
                    words.append(raw[i])
                elif raw[i] not in STOPWORDS:
                    words.append(stemmed[i])
                i += 1
        if words:
            clauses.append(words)
    return clauses


def cue_score(text: str, frame: Frame) -> tuple[int, int]:
    """(plus cues, minus cues) of ``text`` in ``frame`` after targets and negation (module docstring)."""
    plus = minus = 0
    for words in _clauses(text):
        used: set[int] = set()
        turn = 1  # -1 after a word of opposition: the cues that follow name what is opposed
        for i, word in enumerate(words):
            if i in used:
                continue
            fallback = _FALLBACK.get(word)
            if fallback:
                cued = any(w in frame.plus or w in frame.minus for w in words[i + 1 :])
                turn = -1
                # Opposing, or seeking relief from, nothing the frame reads is opposition (or relief)
                # as such: "farmers protest", "petitions for relief from the bond".
                word = "" if cued else fallback
            sign = 1 if word in frame.plus else -1 if word in frame.minus else 0
            if frame.name == "support" and word in VERB_SIGN:
                for j in range(i + 1, min(len(words), i + 1 + _OBJECT_REACH)):
                    obj = 1 if words[j] in SUPPORT else -1 if words[j] in OPPOSE else 0
                    if obj:
                        sign = VERB_SIGN[word] * obj
                        used.add(j)
                        break
            if not sign:
                continue
            if any(w in _NEGATORS for w in words[max(0, i - 2) : i]):
                sign = -sign
            if word not in _FALLBACK.values():
                sign *= turn
            if sign > 0:
                plus += 1
            else:
                minus += 1
    return (minus, plus) if frame.flip else (plus, minus)


SUPPORT_FRAME = Frame("support", SUPPORT, OPPOSE)


def binary_frame(title: str) -> Frame:
    words = set(stems(title))
    if words & PROSECUTION_QUESTION:
        return Frame("prosecution", PROSECUTE, DEFEND)
    # "Will the Assembly pass the bill cutting water allocations?" asks about passing, not a level.
    if words & (SUPPORT | ADVERSE_QUESTION):
        return Frame("support", SUPPORT, OPPOSE, flip=bool(words & ADVERSE_QUESTION))
    if words & UP and not words & DOWN:
        return Frame("level", UP, DOWN)
    if words & DOWN and not words & UP:
        return Frame("level", UP, DOWN, flip=True)
    return Frame("support", SUPPORT, OPPOSE, flip=bool(words & ADVERSE_QUESTION))


def label(plus: int, minus: int, alignment: int = 1) -> str:
    """Positive / Negative / Mixed / Neutral from cue counts, turned by ``alignment`` (+1, -1 or 0)."""
    if plus == minus:
        return "Mixed" if plus else "Neutral"
    if alignment == 0:
        return "Neutral"
    return "Positive" if (plus > minus) == (alignment > 0) else "Negative"


def option_direction(text: str, resolved: Sequence[str], others: Sequence[str]) -> str:
    """Multiple choice and open-ended: naming the resolved option (or gold events) supports it."""
    words = set(stems(text))
    mine = set().union(*(set(stems(o)) for o in resolved)) if resolved else set()
    theirs = set().union(*(set(stems(o)) for o in others)) if others else set()
    mine, theirs = mine - theirs, theirs - mine
    plus, minus = cue_score(text, SUPPORT_FRAME)
    sense = -1 if minus > plus else 1
    hit_mine, hit_theirs = len(words & mine), len(words & theirs)
    if hit_mine > hit_theirs:
        return "Positive" if sense > 0 else "Negative"
    if hit_theirs > hit_mine:
        return "Negative" if sense > 0 else "Positive"
    return "Neutral"


_MONTH_YEAR = re.compile(rf"\b({'|'.join(MONTH_NAMES)})\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_NUMBER = {m: i for i, m in enumerate(MONTH_NAMES, start=1)}


def baseline_number(text: str, outcome: float) -> float | None:
    """The number in ``text`` closest (by ratio) to the resolved value: the level it is compared with."""
    values = [v for v in read_numbers(text) if v > 0 and not (1900 <= v <= 2100 and v == int(v))]
    if not values or outcome <= 0:
        return None
    return min(values, key=lambda v: max(v, outcome) / min(v, outcome))


def planned_month(text: str) -> date | None:
    """The first "Month YYYY" in ``text``, as the first day of that month (None when there is none,
    or its year is not a calendar year: "January 0000")."""
    match = _MONTH_YEAR.search(text)
    if match is None:
        return None
    try:
        return date(int(match.group(2)), _MONTH_NUMBER[match.group(1).lower()], 1)
    except ValueError:
        return None


AGAINST_MARGIN = 2


@dataclass(frozen=True)
class Target:
    """What Positive means for one question (module docstring)."""

    frame: Frame | None
    alignment: int
    resolved: tuple[str, ...] = ()
    others: tuple[str, ...] = ()

    @classmethod
    def for_question(
        cls,
        *,
        question_type: str,
        title: str,
        background: str,
        outcome: Any,
        options: Sequence[str],
        resolved_start: date | None = None,
    ) -> Target:
        if question_type == "binary":
            return cls(binary_frame(title), 1)
        if question_type == "quantity" and isinstance(outcome, int | float) and not isinstance(outcome, bool):
            base = baseline_number(background, float(outcome))
            sign = 0 if base is None or base == outcome else (1 if outcome > base else -1)
            # A quantity moves with what helps or hinders it as well as with words of level.
            return cls(Frame("quantity", UP | SUPPORT | EARLY, DOWN | OPPOSE | LATE), sign)
        if question_type == "timeframe":
            planned = planned_month(background)
            sign = 0
            if planned is not None and resolved_start is not None:
                sign = (resolved_start > planned) - (resolved_start < planned)
            return cls(Frame("schedule", LATE, EARLY), sign)
        if question_type == "relation":
            relations = outcome.get("relations", {}) if isinstance(outcome, dict) else {}
            cooperative = sum(1 for code in relations if str(code)[:2] <= "08")
            conflictual = len(relations) - cooperative
            return cls(
                Frame("relations", COOPERATE, CONFLICT), (cooperative > conflictual) - (cooperative < conflictual)
            )
        if question_type == "multiple_choice":
            return cls(None, 0, (str(outcome),), tuple(o for o in options if o != outcome))
        gold = tuple(str(g) for g in outcome) if isinstance(outcome, list) else (str(outcome),)
        return cls(None, 0, gold, ())

    def direction(self, text: str) -> str:
        if self.frame is None:
            return option_direction(text, self.resolved, self.others)
        plus, minus = cue_score(text, self.frame)
        return label(plus, minus, self.alignment)

    def in_hindsight(self, text: str, *, towards: str) -> str:
        """The direction of an event of the outcome's causal chain: ``towards`` (the label that
        pushes toward what happened) unless its cues clearly push the other way, by at least
        ``AGAINST_MARGIN`` cues more against than for: a development the story led through pushed
        toward where it ended, and one word ("protest", "rejects") does not turn it round."""
        against = "Negative" if towards == "Positive" else "Positive"
        if self.frame is None:
            # Naming a rival option is no push against the one that won: an event turns against
            # the resolved option only when it is about that option and its cues oppose it
            # ("the CDU loses ground", "Burnham is blocked from standing").
            if not self.resolved_named(text):
                return towards
            plus, minus = cue_score(text, SUPPORT_FRAME)
            return against if minus - plus >= AGAINST_MARGIN else towards
        plus, minus = cue_score(text, self.frame)
        if self.alignment == 0:
            return towards
        toward_yes = (plus - minus) * self.alignment
        pushes = "Positive" if toward_yes > 0 else "Negative"
        return against if abs(plus - minus) >= AGAINST_MARGIN and pushes == against else towards

    def resolved_named(self, text: str) -> bool:
        words = set(stems(text))
        return any(set(stems(o)) <= words for o in self.resolved if stems(o))
