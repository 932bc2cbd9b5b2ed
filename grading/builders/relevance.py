"""Which news is about the question: the offline builder's relevance step (pure; no Django).

The question's subject is read from its text: **entities** (runs of capitalised words such as
"Reserve Bank of Maravia" or "Clean Rivers Bill", from the title first, then the resolution
criteria and background) and **key terms** (the title's other content words, minus question
boilerplate such as *will*, *which* or *month*). Words are compared as Snowball stems of the
project's tokens; an entity stem of five letters or more also matches words it begins
(*Maravia* matches *Maravian*).

Which articles are about the question is decided in :mod:`grading.builders.story`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

import snowballstemmer

from ingestion.text import STOPWORDS, tokenize

PREFIX_MIN = 5
MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
               "october", "november", "december")  # fmt: skip
MONTHS = frozenset((*MONTH_NAMES, "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
# Words that make a question (its form, dates, resolution and direction), not its subject.
_QUESTION_TEXT = """will would which what who whom how many much when whether happen happens end ends take takes
    towards toward relation relations coded code codes cameo fictional question resolve resolves resolved
    yes report reports month months week weeks year years day days date dates quarter period number percent
    time utc calendar according first event events subject object after before until by above below up down
    over under more most not no win wins become becomes remain remains someone else another other"""
# Capitalised at the start of a sentence without naming anything.
_SENTENCE_STARTERS_TEXT = """after following despite amid because before since while although though as in on at for
    from two three four five six seven eight nine ten first second third last new more most some many several
    both all no not breaking update report analysis"""
SENTENCE_STARTERS = frozenset(_SENTENCE_STARTERS_TEXT.split())
_STEMMER = snowballstemmer.stemmer("english")
QUESTION_WORDS = frozenset(str(_STEMMER.stemWord(w)) for w in f"{_QUESTION_TEXT} {' '.join(MONTHS)}".split())
_WORD = re.compile(r"[^\W_][\w'\u2019\-]*")


@lru_cache(maxsize=65536)
def stem_word(word: str) -> str:
    """The Snowball stem of one lower-case word."""
    return str(_STEMMER.stemWord(word))


def stems(text: str) -> list[str]:
    """Snowball stems of the project's tokens of ``text`` (stop words dropped)."""
    return [stem_word(t) for t in tokenize(text)]


def _is_capitalised(word: str) -> bool:
    return word[:1].isupper() or (any(c.isdigit() for c in word) and any(c.isupper() for c in word))


def entity_phrases(text: str, *, skip_title_case: bool = False, context: str = "") -> list[tuple[str, ...]]:
    """Runs of capitalised words in ``text`` as stem tuples (*of* may join two runs).

    A sentence's first word counts only when the text (or ``context``) also capitalises it
    mid-sentence, or the next word is capitalised too; months and weekdays are never entities. With ``skip_title_case``, text whose words are nearly all
    capitalised (a Title Case headline) yields nothing.
    """
    words = _WORD.findall(text)
    if skip_title_case:
        long_words = [w for w in words if len(w) > 3]
        if long_words and sum(_is_capitalised(w) for w in long_words) >= 0.7 * len(long_words):
            return []
    matches = list(_WORD.finditer(text))
    starts: list[bool] = []
    last_end = 0
    for match in matches:
        gap = text[last_end : match.start()]
        starts.append(last_end == 0 or any(c in ".!?:\n" for c in gap))
        last_end = match.end()
    # A capitalised word that opens a sentence names something only when the text also capitalises
    # it mid-sentence, or the next word is capitalised too ("Reserve Bank of ...").
    mid_sentence = {
        m.group(0).lower()
        for m, start in zip(matches, starts, strict=True)
        if not start and _is_capitalised(m.group(0))
    }
    if context:
        mid_sentence |= {w.lower() for w in _WORD.findall(context) if _is_capitalised(w)}
    phrases: list[tuple[str, ...]] = []
    run: list[str] = []
    for k, match in enumerate(matches):
        word = match.group(0)
        lower = word.lower().replace("\u2019", "'")
        if lower.endswith("'s"):
            lower = lower[:-2]
        capitalised = _is_capitalised(word) and lower not in MONTHS
        if capitalised and starts[k] and not run:
            following = k + 1 < len(matches) and not starts[k + 1] and _is_capitalised(matches[k + 1].group(0))
            capitalised = lower not in SENTENCE_STARTERS and (word.lower() in mid_sentence or following)
        if capitalised:
            # "Vantor Telecom-Tamsin Systems" names two: a hyphen before a capital ends a name.
            cuts = [m.start() for m in re.finditer(r"-(?=[A-Z])", word)]
            for n, part in enumerate(lower[a:b] for a, b in zip([0, *cuts], [*cuts, len(lower)], strict=True)):
                if n and run:
                    phrases.append(tuple(run))
                    run = []
                run.extend(stem_word(p) for p in tokenize(part) if p not in STOPWORDS)
            continue
        if lower == "of" and run:
            continue  # "Reserve Bank of Maravia": keep the run open
        if run:
            phrases.append(tuple(run))
        run = []
    if run:
        phrases.append(tuple(run))
    return [p for p in phrases if p and not all(s in QUESTION_WORDS for s in p)]


@dataclass(frozen=True)
class SubjectTerms:
    """The question's subject: entity phrases and key stems, each with its weight."""

    phrases: dict[tuple[str, ...], float]
    keys: dict[str, float]
    title_entities: tuple[tuple[str, ...], ...]
    option_entities: tuple[tuple[str, ...], ...] = ()
    context_entities: tuple[tuple[str, ...], ...] = ()  # of the resolution criteria and background

    @classmethod
    def for_question(cls, *, title: str, criteria: str, background: str, options: Sequence[str] = ()) -> SubjectTerms:
        def clean(phrase: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(s for s in phrase if s not in QUESTION_WORDS and not s.isdigit() and len(s) > 1)

        everything = f"{title} {criteria} {background}"
        title_entities = tuple(
            p for p in dict.fromkeys(clean(p) for p in entity_phrases(title, context=everything)) if p
        )
        phrases: dict[tuple[str, ...], float] = dict.fromkeys(title_entities, 3.0)
        context = [*entity_phrases(criteria, context=everything), *entity_phrases(background, context=everything)]
        # An option that names something ("People's Party for Freedom and Democracy") is one name as a
        # whole, lower-case joining words and all; "Another party" names nothing.
        option_entities = tuple(
            p
            for p in dict.fromkeys(clean(tuple(stems(o))) for o in options if entity_phrases(o, context=everything))
            if p
        )
        context.extend(option_entities)
        in_title = {s for t in title_entities for s in t}
        for phrase in (clean(p) for p in context):
            # A context entity counts for what it adds to the title's ("Port Halden Dockworkers' Union"
            # adds the union to "Port Halden").
            extra = tuple(s for s in phrase if s not in in_title)
            if extra:
                phrases.setdefault(extra, 1.5)
        named = {s for phrase in phrases for s in phrase}
        keys: dict[str, float] = {}
        # Options are candidates, not the subject: their names are entities above, their words no keys.
        for text, weight in ((title, 2.0), (criteria, 1.0), (background, 0.5)):
            for stem in stems(text):
                if stem not in QUESTION_WORDS and stem not in named and not stem.isdigit() and len(stem) > 1:
                    keys.setdefault(stem, weight)
        context_entities = tuple(
            p for p in dict.fromkeys(clean(p) for p in context[: len(context) - len(option_entities)]) if p
        )
        return cls(
            phrases=phrases,
            keys=keys,
            title_entities=title_entities,
            option_entities=option_entities,
            context_entities=context_entities,
        )

    @property
    def weights(self) -> dict[str, float]:
        out = dict(self.keys)
        for phrase, weight in self.phrases.items():
            for stem in phrase:
                out[stem] = max(out.get(stem, 0.0), weight)
        return out


@dataclass
class Doc:
    """One article as the builder sees it."""

    id: int
    title: str
    lead: str
    host: str
    published_at: datetime
    body: str = ""
    stems: frozenset[str] = field(default_factory=frozenset)
    head: Counter[str] = field(default_factory=Counter)  # stems of the headline and lead
    entities: tuple[tuple[str, ...], ...] = ()
    lowercase: frozenset[str] = frozenset()  # stems of the words it writes in lower case
    relevance: float = 0.0
    topics: tuple[str, ...] = ()  # the archive's story headings (WCEP ``topic_path``), outermost first

    @classmethod
    def make(
        cls,
        *,
        id: int,
        title: str,
        lead: str,
        body: str,
        host: str,
        published_at: datetime,
        topics: Sequence[str] = (),
    ) -> Doc:
        all_stems, head, entities, lowercase = _analyse(title, lead, body)
        return cls(
            id=id,
            title=title,
            lead=lead,
            host=host,
            published_at=published_at,
            body=body,
            stems=all_stems,
            head=Counter(dict(head)),
            entities=entities,
            lowercase=lowercase,
            topics=tuple(t.strip() for t in topics if isinstance(t, str) and t.strip()),
        )


@lru_cache(maxsize=20_000)
def _analyse(
    title: str, lead: str, body: str
) -> tuple[frozenset[str], tuple[tuple[str, int], ...], tuple[tuple[str, ...], ...], frozenset[str]]:
    """Stems, headline-and-lead stem counts, entities and lower-case stems of one article. Cached: a
    batch of builds reads the same archive again and again."""
    text = f"{title}. {lead} {body}"
    entities = tuple(
        dict.fromkeys(
            [*entity_phrases(title, skip_title_case=True, context=f"{lead} {body}"), *entity_phrases(f"{lead} {body}")]
        )
    )
    lowercase = frozenset(stem_word(w.lower()) for w in _WORD.findall(f"{lead} {body}") if w[:1].islower())
    return frozenset(stems(text)), tuple(Counter(stems(f"{title}. {lead}")).items()), entities, lowercase


def idf_of(documents: Iterable[Iterable[str]]) -> dict[str, float]:
    """``ln(1 + N / df)`` of every stem over the documents (each counted once per document)."""
    docs = [set(d) for d in documents]
    df: Counter[str] = Counter(s for d in docs for s in d)
    n = len(docs)
    return {s: math.log(1 + n / c) for s, c in df.items()}


def matched_stems(stem: str, doc: Doc) -> frozenset[str]:
    """The stems of ``doc`` that write ``stem``: the stem itself, or (five letters or more) a word it
    begins or that is one letter shorter: *Bulgaria* and *Bulgarian*, *Bolivian* and *Bolivia* (not
    *freed* for *freedom*)."""
    if stem in doc.stems:
        return frozenset((stem,))
    if len(stem) < PREFIX_MIN:
        return frozenset()
    return frozenset(s for s in doc.stems if s.startswith(stem) or (len(stem) - len(s) <= 1 and stem.startswith(s)))


def present(stem: str, doc: Doc) -> bool:
    """Whether ``doc`` writes ``stem`` (:func:`matched_stems`)."""
    return stem in doc.stems or bool(matched_stems(stem, doc))


def cosine(a: Counter[str], b: Counter[str], idf: dict[str, float]) -> float:
    """Cosine of two stem bags weighted by ``idf``."""
    dot = sum(a[t] * b[t] * idf.get(t, 0.0) ** 2 for t in a.keys() & b.keys())
    if not dot:
        return 0.0
    na = math.sqrt(sum((c * idf.get(t, 0.0)) ** 2 for t, c in a.items()))
    nb = math.sqrt(sum((c * idf.get(t, 0.0)) ** 2 for t, c in b.items()))
    return dot / (na * nb) if na and nb else 0.0
