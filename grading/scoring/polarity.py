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
    Both sides state numbers (:func:`grading.scoring.numbers.read_numbers`, every common written
    form and English number words) and share none of them: "rises 18%" vs "rises 2%".

The word lists are English, with the plain negations of German, French and Spanish (*nicht*, *kein*,
*pas*, *jamais*, *no*, *nunca*); a sentence in another language carries no direction cue, so the
similarity decides the rest for it.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Final

from grading.scoring.numbers import read_numbers, same_number
from ingestion.text import STOPWORDS, tokenize

__all__ = [
    "UNITED_STATES",
    "VERDICTS",
    "Claims",
    "claims",
    "fold",
    "named",
    "shape",
    "shares_name",
    "tokens_of",
    "verdict",
]


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Verdicts a matched or refused pair can carry (the forecast graph page shows them).
VERDICTS: Final = (
    "matched",
    "negated",
    "opposite direction",
    "swapped roles",
    "different quantity",
    "other actor",
    "different event",
    "stuffed",
    "too vague",
    "duplicate",
)

# Negation cues: any of these says the event did not (or will not) happen, and flips the claim.
# Quoted text is left out ("the 'No to a 10 Million Switzerland' initiative" is a name).
_NEGATION: Final = _word_set(
    "not no never nor neither without cannot cant dont doesnt didnt wont isnt arent wasnt werent "
    "hasnt havent denies deny denied cancel cancels cancelled canceled postpone postpones postponed "
    "delay delays delayed halt halts halted suspend suspends suspended abandon abandons abandoned "
    # the plain negations of the other languages titles come in (Spanish "no" is above)
    "nicht kein keine keinen keiner nie niemals pas jamais nunca jamás"
)
# Two-word negation cues (tokens joined by a space): "refuses to sign" is a sign not done, while a
# bare "refuses the truce" is a rejection (the assent axis below).
_NEGATION_PAIRS: Final = frozenset(
    {"rules out", "ruled out", "falls short", "fell short", "no longer", "walks away", "break off", "breaks off",
     "calls off", "called off", "break down", "breaks down", "broke down", "refuses to", "refused to", "refuse to", "fails to", "failed to", "fail to",
     "declines to", "declined to"}
)  # fmt: skip
_QUOTED: Final = re.compile(r"'[^']*'|\"[^\"]*\"|«[^»]*»|\u201c[^\u201d]*\u201d|\u2018[^\u2019]*\u2019")
# Function words of the other languages titles come in, for the stuffing test only (a German
# sentence is not a list of key words because it has no English "the").
_FOREIGN_FUNCTION_WORDS: Final = _word_set(
    "der die das den dem des ein eine einen einem und mit von zu zur zum im für auf aus nach bei le "
    "la les l d de du un une et en au aux pour par sur avec dans el los las lo y del al por con una "
    "en para su sus se"
)

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
        "start starts started advance advances advanced deploy deploys deployed hold holds",
        "reject rejects rejected rejecting veto vetoes vetoed vetoing overturn overturns overturned block blocks "
        "blocked oppose opposes opposed withdraw withdraws withdrew withdrawal exit exits leave leaves pull pulls refuse "
        "refuses refused collapse collapses collapsed",
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
        "arrest arrests arrested detain detains detained",
        "lift lifts lifted lifting end ends ended terminate terminates terminated remove removes removed "
        "release releases released free frees freed scrap scraps scrapped",
    ),
}
_AXIS_SIGN: Final[dict[str, tuple[str, int]]] = {}
for _axis, _words in _AXES.items():
    for _sign, _text in zip((1, -1, 0), _words, strict=False):
        for _word in _text.split():
            _AXIS_SIGN.setdefault(_word, (_axis, _sign))

# Words that join two actors into one side ("Israel and Hamas sign").
_JOINERS: Final = frozenset({"and", "or", "the", "of", "s"})
# A capitalised word: a name, a title, or a sentence's first word (stop words are left out).
_WORD: Final = re.compile(r"[^\W\d_]{2,}")
# One name for the United States however it is written (the learned decision's parse reads it too).
UNITED_STATES: Final = re.compile(
    r"\b(?:U\.S\.A?\.?|USA|United States(?: of America)?|America|American|Americans)(?![A-Za-z])"
)
# A long title with hardly a function word is a list of key words, not a sentence.
_STUFFED_TOKENS: Final = 12
_STUFFED_FUNCTION_SHARE: Final = 0.05
# Capitalised in titles but naming no one.
_COMMON_CAPITALISED: Final = _word_set(
    "chapter inc corp co ltd plc president minister prime court parliament senate house government "
    "ministry company party city state states national international federal central bank january "
    "february march april may june july august september october november december"
)
# Same sentence, other actor or place: the words other than names overlap at least this much.
_SAME_FRAME: Final = 0.8


@functools.lru_cache(maxsize=65536)
def _axis_sign(token: str) -> tuple[str, int] | None:
    """The axis of ``token`` or of its base form (``imposing`` -> ``impose``, ``signed`` -> ``sign``);
    cached, as every text's words are looked up."""
    hit = _AXIS_SIGN.get(token)
    if hit is not None or len(token) < 5:
        return hit
    for suffix in ("ing", "ed", "es", "s"):
        if token.endswith(suffix):
            stem = token[: -len(suffix)]
            return _AXIS_SIGN.get(stem) or _AXIS_SIGN.get(stem + "e")
    return None


def _same_name(a: str, b: str) -> bool:
    """The same actor, allowing a demonym: Israel/Israeli, Canada/Canadian, China/Chinese."""
    if a == b:
        return True
    shorter = min(len(a), len(b))
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common >= 5 or (common >= 4 and common >= shorter - 1)


class Claims:
    """The cues of one sentence (computed once per distinct text)."""

    __slots__ = (
        "by_prefix",
        "content_length",
        "first",
        "last",
        "lowered",
        "names",
        "negated",
        "numbers",
        "other_words",
        "stuffed",
        "text",
    )

    names: tuple[tuple[str, int, int], ...]

    def __init__(self, text: str) -> None:
        text = UNITED_STATES.sub("US", text)
        tokens = tokenize(text, drop_stopwords=False)
        unquoted = tokenize(_QUOTED.sub(" ", text), drop_stopwords=False) if _QUOTED.search(text) else tokens
        pairs = {f"{a} {b}" for a, b in itertools.pairwise(unquoted)}
        flips = sum(1 for t in unquoted if t in _NEGATION) + len(pairs & _NEGATION_PAIRS)
        self.negated: bool = flips % 2 == 1
        # Each axis's first and last word in the sentence: "signs an order to withdraw" signs
        # (first) a withdrawal (last).
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        count: dict[str, int] = {}
        for token in tokens:
            hit = _axis_sign(token)
            if hit is not None:
                first.setdefault(hit[0], hit[1])
                last[hit[0]] = hit[1]
                count[hit[0]] = count.get(hit[0], 0) + 1
        self.first: dict[str, int] = first
        # The last word only where the axis has two: "approve leaving" is one approval.
        self.last: dict[str, int] = {axis: sign for axis, sign in last.items() if count[axis] > 1}
        self.content_length, self.stuffed = _shape(tokens)
        self.numbers: tuple[float, ...] = read_numbers(text, words=True)
        self.text = text
        # Capitalised words in order of appearance with their place in the text, accents folded
        # (Silina = Siliņa); ``start`` tells the sentence's first word, often not a name.
        self.names: tuple[tuple[str, int, int], ...] = tuple(
            (fold(word), m.start(), m.end())
            for m in _WORD.finditer(self.text)
            if (word := m.group(0))[0].isupper() and word.lower() not in STOPWORDS
        )
        lowered = {n for n, _, _ in self.names}
        # Every word as written, names included: the tokenizer drops apostrophes ("FBI's" is "fbis"),
        # and a name must be found in a sentence that names it.
        self.lowered: frozenset[str] = frozenset(fold(t) for t in tokens) | lowered
        # The words by their first four letters: another spelling of a name (a demonym) shares them.
        by_prefix: dict[str, list[str]] = {}
        for word in self.lowered:
            by_prefix.setdefault(word[:4], []).append(word)
        self.by_prefix: dict[str, list[str]] = by_prefix
        self.other_words: frozenset[str] = frozenset(
            fold(t) for t in tokens if t not in STOPWORDS and fold(t) not in lowered
        )


def _shape(tokens: Sequence[str]) -> tuple[int, bool]:
    """(words that carry content, in any of the languages above; whether the sentence is a list of
    key words rather than a sentence) of a sentence's tokens."""
    function = sum(1 for t in tokens if t in STOPWORDS or t in _FOREIGN_FUNCTION_WORDS)
    return len(tokens) - function, len(tokens) >= _STUFFED_TOKENS and function / len(tokens) < _STUFFED_FUNCTION_SHARE


@functools.lru_cache(maxsize=65536)
def shape(text: str) -> tuple[int, bool]:
    """:attr:`Claims.content_length` and :attr:`Claims.stuffed` of ``text``, without the rest of its
    claims (a matcher asks this of every text, and the claims only of texts in a candidate pair)."""
    return _shape(tokenize(UNITED_STATES.sub("US", text), drop_stopwords=False))


@functools.lru_cache(maxsize=65536)
def fold(word: str) -> str:
    """``word`` in lower case without accents (the same words recur in every text: cached)."""
    if word.isascii():
        return word.lower()
    return "".join(c for c in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(c))


@functools.lru_cache(maxsize=65536)
def claims(text: str) -> Claims:
    """The cues of ``text``, computed once per distinct text (a matcher reads each text against many)."""
    return Claims(text)


def _find(names: Sequence[tuple[str, int, int]], name: str) -> int | None:
    for i, (other, _, _) in enumerate(names):
        if _same_name(name, other):
            return i
    return None


def _swapped(a: Claims, b: Claims) -> bool:
    """Two actors both sentences name stand in the opposite order, with the same action between
    them ("Apple sues Samsung" / "Samsung sues Apple")."""
    # Each actor where it is first named: a sentence that names it again later ("... Solenne
    # Energy and Everin Aerospace boards agreed terms") says nothing new about who did what.
    firsts = [i for i, (name, _, _) in enumerate(a.names) if _find(a.names, name) == i]
    pairs = [(i, j) for i in firsts if (j := _find(b.names, a.names[i][0])) is not None]
    for k, (ia, ib) in enumerate(pairs):
        for ja, jb in pairs[k + 1 :]:
            if jb >= ib or _same_name(b.names[ib][0], b.names[jb][0]):
                continue
            x, y = _between(a, ia, ja), _between(b, jb, ib)
            if x and y and len(x & y) / min(len(x), len(y)) >= 0.5:
                return True
    return False


def _between(c: Claims, i: int, j: int) -> frozenset[str]:
    """The words other than names between the ``i``-th and ``j``-th capitalised words."""
    names = {n for n, _, _ in c.names}
    return frozenset(t for t in tokenize(c.text[c.names[i][2] : c.names[j][1]]) if fold(t) not in names)


def _writes(c: Claims, name: str) -> bool:
    """Whether the sentence writes ``name``, in any case or as a demonym (:func:`_same_name`, which
    needs the first four letters in common unless the words are equal)."""
    return name in c.lowered or any(_same_name(name, word) for word in c.by_prefix.get(name[:4], ()))


def _other_actor(a: Claims, b: Claims) -> bool:
    """The same sentence about someone else: both name someone the other does not, they share a
    name, and the shorter one's other words are nearly all in the longer ("Georgia's parliament
    approves" vs "Moldova's parliament approves")."""
    names_a = [n for n, _, _ in a.names]
    names_b = [n for n, _, _ in b.names]
    # Every word of the other sentence counts: a capitalised word it writes in lower case is a
    # title, and its first word may be the name.
    only_a = [n for n in names_a if not _writes(b, n)]
    only_b = [n for n in names_b if not _writes(a, n)]
    if not only_a or not only_b or len(only_a) == len(names_a):
        return False
    x, y = a.other_words, b.other_words
    return min(len(x), len(y)) >= 2 and len(x & y) / min(len(x), len(y)) >= _SAME_FRAME


def verdict(forecast: Claims, reference: Claims) -> str:
    """``"matched"`` when nothing disagrees, else the first disagreement (module docstring)."""
    if forecast.stuffed and not reference.stuffed:  # a headline written as a list matches its own style
        return "stuffed"
    # Opposite direction on a shared axis (its first or its last word), each side's negation applied.
    flip_f = -1 if forecast.negated else 1
    flip_r = -1 if reference.negated else 1
    for mine, theirs in ((forecast.first, reference.first), (forecast.last, reference.last)):
        for axis, sign in mine.items():
            other = theirs.get(axis)
            if other is not None and sign * flip_f != other * flip_r:
                return "opposite direction" if sign != other else "negated"
    if forecast.negated != reference.negated:
        return "negated"
    if _swapped(forecast, reference):
        return "swapped roles"
    if (
        forecast.numbers
        and reference.numbers
        and not any(same_number(x, y) for x in forecast.numbers for y in reference.numbers)
    ):
        return "different quantity"
    if _other_actor(forecast, reference):
        return "other actor"
    return "matched"


def named(text: str, *, first_word: bool = True) -> frozenset[str]:
    """The capitalised words of ``text`` (accents folded) but titles, months and common words: the
    people, places and firms it names. A sentence's first word is capitalised anyway, so it can be
    left out (``first_word=False``) to see whether the text names anyone for certain."""
    c = claims(text)
    return frozenset(n for n, start, _ in c.names if (start or first_word) and n not in _COMMON_CAPITALISED)


def shares_name(a: Iterable[str], b: Iterable[str]) -> bool:
    """Whether two sets of names (:func:`named`) share an actor, demonyms included (Drevia, Drevian)."""
    others = list(b)
    return any(_same_name(x, y) for x in a for y in others)


def tokens_of(text: str) -> list[str]:
    return tokenize(text)
